/* Loading the digits data set (digits.h). */
#include "tools/training/digits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "dfg/regular_file.h"

#define MAX_EXAMPLES 4096

const char *dfgc_digits_default_path(void)
{
    static char path[4096];
    const char *dir = getenv("DFG_DATA_DIR");
    snprintf(path, sizeof path, "%s/digits/digits.csv.gz",
             dir ? dir : DFGC_SOURCE_DIR "/data");
    return path;
}

uint64_t dfgc_digits_seed(uint64_t seed)
{
    uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 1;
    return state ? state : 1;
}

uint64_t dfgc_digits_random(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545F4914F6CDD1DULL;
}

void dfgc_digits_shuffle(int32_t *order, int32_t n, uint64_t *state)
{
    for (int32_t i = n - 1; i > 0; i--) {
        int32_t j = (int32_t)(dfgc_digits_random(state) % (uint64_t)(i + 1));
        int32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* Reorders the examples by the fixed split shuffle (digits.h). */
static int shuffle_examples(dfgc_digits *d)
{
    int32_t *order = malloc((size_t)d->n * sizeof *order);
    float *pixels = malloc((size_t)d->n * DFGC_DIGITS_PIXELS * sizeof(float));
    int64_t *labels = malloc((size_t)d->n * sizeof(int64_t));
    int status = order && pixels && labels ? 0 : -1;
    if (status == 0) {
        for (int32_t i = 0; i < d->n; i++)
            order[i] = i;
        uint64_t state = dfgc_digits_seed(DFGC_DIGITS_SPLIT_SEED);
        dfgc_digits_shuffle(order, d->n, &state);
        for (int32_t i = 0; i < d->n; i++) {
            memcpy(pixels + (size_t)i * DFGC_DIGITS_PIXELS,
                   d->pixels + (size_t)order[i] * DFGC_DIGITS_PIXELS,
                   DFGC_DIGITS_PIXELS * sizeof(float));
            labels[i] = d->labels[order[i]];
        }
        free(d->pixels);
        free(d->labels);
        d->pixels = pixels;
        d->labels = labels;
        pixels = NULL;
        labels = NULL;
    } else {
        fprintf(stderr, "dfgc: error: out of memory shuffling the digits\n");
    }
    free(order);
    free(pixels);
    free(labels);
    return status;
}

static int parse_line(const char *line, float *pixels, int64_t *label)
{
    const char *p = line;
    for (int i = 0; i <= DFGC_DIGITS_PIXELS; i++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > 16 || (i == DFGC_DIGITS_PIXELS && v > 9))
            return -1;
        if (i < DFGC_DIGITS_PIXELS)
            pixels[i] = (float)v / 16.0f;
        else
            *label = v;
        p = end;
        if (i < DFGC_DIGITS_PIXELS && *p++ != ',')
            return -1;
    }
    return 0;
}

int dfgc_digits_load(const char *path, dfgc_digits *out)
{
    memset(out, 0, sizeof *out);
    int fd;
    if (dfg_open_regular_file(path, &fd) != DFG_OK) {
        fprintf(stderr, "dfgc: error: the digits data: %s (set DFG_DATA_DIR "
                        "to the data folder)\n", dfg_last_error());
        return -1;
    }
    gzFile file = gzdopen(fd, "rb");
    if (!file) {
        close(fd);
        fprintf(stderr, "dfgc: error: cannot read the digits data '%s'\n",
                path);
        return -1;
    }
    out->pixels = malloc((size_t)MAX_EXAMPLES * DFGC_DIGITS_PIXELS * sizeof(float));
    out->labels = malloc((size_t)MAX_EXAMPLES * sizeof(int64_t));
    char line[1024];
    int status = out->pixels && out->labels ? 0 : -1;
    while (status == 0 && gzgets(file, line, sizeof line)) {
        if (line[0] == '\n' || line[0] == '\0')
            continue;
        if (out->n >= MAX_EXAMPLES ||
            parse_line(line, out->pixels + (size_t)out->n * DFGC_DIGITS_PIXELS,
                       &out->labels[out->n]) != 0) {
            fprintf(stderr, "dfgc: error: %s: line %d is not 64 pixels 0..16 "
                            "and a label 0..9\n", path, (int)out->n + 1);
            status = -1;
        }
        out->n++;
    }
    gzclose(file);
    if (status == 0 && out->n <= DFGC_DIGITS_TRAIN) {
        fprintf(stderr, "dfgc: error: %s holds %d examples, expected more "
                        "than %d\n", path, (int)out->n, DFGC_DIGITS_TRAIN);
        status = -1;
    }
    if (status == 0)
        status = shuffle_examples(out);
    if (status != 0)
        dfgc_digits_free(out);
    return status;
}

void dfgc_digits_free(dfgc_digits *digits)
{
    free(digits->pixels);
    free(digits->labels);
    memset(digits, 0, sizeof *digits);
}
