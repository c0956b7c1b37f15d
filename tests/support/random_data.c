/* Seeded random data for tests (random_data.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>

#include "tests/support/random_data.h"

static uint64_t state = 12345;

void random_seed(uint64_t seed)
{
    state = seed;
}

uint64_t random_next(void)
{
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545f4914f6cdd1du;
}

float random_uniform(void)
{
    float u = (float)((random_next() >> 40) * (1.0 / 16777216.0));
    return 2.0f * u - 1.0f;
}

double random_unit(void)
{
    return (double)(random_next() >> 11) / 9007199254740992.0;
}

void random_fill(float *x, int64_t n, float scale)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = scale * random_uniform();
}

float *random_floats(int64_t n, float scale)
{
    float *x = malloc((size_t)n * sizeof *x);
    assert_non_null(x);
    random_fill(x, n, scale);
    return x;
}
