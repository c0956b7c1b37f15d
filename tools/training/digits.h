/* The UCI 8x8 handwritten digits shipped in data/digits (README there):
 * 1,797 images, 64 pixels 0..16 and a label each.
 *
 * The file is not in random order: its last examples come from other
 * writers than the first ones (the same MLP in PyTorch reaches 0.87-0.93
 * on the last 360 and 0.96-0.99 on a random 360), so a test set cut off
 * its end measures writer shift rather than learning. The loader applies
 * one fixed shuffle (DFGC_DIGITS_SPLIT_SEED, the same on every machine and
 * independent of the training seed) before the train/test cut. */
#ifndef DFGC_DIGITS_H
#define DFGC_DIGITS_H

#include <stdint.h>

#define DFGC_DIGITS_PIXELS 64
#define DFGC_DIGITS_TRAIN 1437 /* the first examples; the rest is the test set */
#define DFGC_DIGITS_SPLIT_SEED 20240601u

typedef struct dfgc_digits {
    int32_t n;
    float *pixels;  /* [n, 64], scaled to [0, 1] */
    int64_t *labels; /* [n] */
} dfgc_digits;

/* Reads path (digits.csv.gz) in the fixed shuffled order; 0, or -1 with a
 * message on stderr. */
int dfgc_digits_load(const char *path, dfgc_digits *out);
void dfgc_digits_free(dfgc_digits *digits);
/* data/digits/digits.csv.gz under $DFG_DATA_DIR, else next to the source
 * tree dfgc was built from. */
const char *dfgc_digits_default_path(void);

/* A seeded xorshift64* stream (state never 0; dfgc_digits_seed makes one)
 * and a Fisher-Yates shuffle drawn from it: the split and the per-epoch
 * batch order use the same generator, so both repeat across machines. */
uint64_t dfgc_digits_seed(uint64_t seed);
uint64_t dfgc_digits_random(uint64_t *state);
void dfgc_digits_shuffle(int32_t *order, int32_t n, uint64_t *state);

#endif
