/* The UCI 8x8 handwritten digits shipped in data/digits (README there):
 * 1,797 images, 64 pixels 0..16 and a label each. */
#ifndef DFGC_DIGITS_H
#define DFGC_DIGITS_H

#include <stdint.h>

#define DFGC_DIGITS_PIXELS 64
#define DFGC_DIGITS_TRAIN 1437 /* the first examples; the rest is the test set */

typedef struct dfgc_digits {
    int32_t n;
    float *pixels;  /* [n, 64], scaled to [0, 1] */
    int64_t *labels; /* [n] */
} dfgc_digits;

/* Reads path (digits.csv.gz); 0, or -1 with a message on stderr. */
int dfgc_digits_load(const char *path, dfgc_digits *out);
void dfgc_digits_free(dfgc_digits *digits);
/* data/digits/digits.csv.gz under $DFG_DATA_DIR, else next to the source
 * tree dfgc was built from. */
const char *dfgc_digits_default_path(void);

#endif
