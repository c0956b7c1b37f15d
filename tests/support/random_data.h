/* Seeded random data for tests: one xorshift64* stream per test
 * executable, the same numbers on every machine, so that a failure
 * repeats. The stream starts at seed 12345; random_seed starts it again. */
#ifndef DFG_TEST_RANDOM_DATA_H
#define DFG_TEST_RANDOM_DATA_H

#include <stdint.h>

/* seed: nonzero (xorshift stays at zero). */
void random_seed(uint64_t seed);
/* The next 64 bits of the stream. */
uint64_t random_next(void);
/* Uniform in [-1, 1), from the next draw's top 24 bits. */
float random_uniform(void);
/* Uniform in [0, 1), from the next draw's top 53 bits. */
double random_unit(void);
/* x[i] = scale * random_uniform() for i < n. */
void random_fill(float *x, int64_t n, float scale);
/* n such floats in a malloc'd array the caller frees; fails the running
 * cmocka test when out of memory. */
float *random_floats(int64_t n, float scale);

#endif
