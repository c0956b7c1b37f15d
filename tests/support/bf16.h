/* bf16 (the high half of an f32) for tests that build bf16 data without
 * the library's internals (math/elementwise.h clashes with the builder's
 * public names such as dfg_relu). */
#ifndef DFG_TEST_BF16_H
#define DFG_TEST_BF16_H

#include <stdint.h>
#include <string.h>

/* f rounded to the nearest bf16, ties to even (finite f). */
static inline uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static inline float from_bf16(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#endif
