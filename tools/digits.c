/* Loading the digits data set (digits.h). */
#include "digits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_EXAMPLES 4096

const char *dfgc_digits_default_path(void)
{
    static char path[4096];
    const char *dir = getenv("DFG_DATA_DIR");
    snprintf(path, sizeof path, "%s/digits/digits.csv.gz",
             dir ? dir : DFGC_SOURCE_DIR "/data");
    return path;
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
    gzFile file = gzopen(path, "rb");
    if (!file) {
        fprintf(stderr, "dfgc: error: cannot open the digits data '%s' (set "
                        "DFG_DATA_DIR to the data folder)\n", path);
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
