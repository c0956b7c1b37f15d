/* A data set for 'dfgc train MODEL --data FILE.npz': the arrays x (the
 * model's input, one row per example, batch first) and y (a class index
 * per row for cross entropy, or a target row for mse) of a .npz file
 * (npz.h), checked against a training program's inputs and gathered
 * into its batches. */
#ifndef DFGC_DATA_SET_H
#define DFGC_DATA_SET_H

#include <stdint.h>
#include "tools/training/npz.h"

typedef struct dfgc_data_set {
    const char *path;  /* borrowed: the caller's string, for errors */
    dfgc_array x, y;
    int32_t rows;      /* x's and y's first dim */
} dfgc_data_set;

/* Reads x and y from path. 0, or DFGC_EXIT_ERROR after printing why
 * (unreadable, not float32 x, row counts that differ, no rows); on
 * failure *out needs no free. */
int dfgc_data_set_load(const char *path, dfgc_data_set *out);
void dfgc_data_set_free(dfgc_data_set *set);

/* 0 if x fits program input 0 and y input 1 (dtype, rank and every dim
 * after the batch's), else DFGC_EXIT_ERROR after printing both shapes. */
int dfgc_data_set_check(const dfgc_data_set *set, const dfg_program *program);

/* Copies rows[0..n) of x and y into x_out and y_out, one after another. */
void dfgc_data_set_gather(const dfgc_data_set *set, const int32_t *rows,
                          int32_t n, void *x_out, void *y_out);

#endif
