/* NAME=FILE arguments (`dfgc run --input/--output`, `dfgc bench --input`):
 * parsing them and reading input files into a run setup's buffers. The
 * strings point into argv. */
#ifndef DFGC_INPUT_FILES_H
#define DFGC_INPUT_FILES_H

#include <stddef.h>
#include "tools/run_setup.h"

#define DFGC_MAX_FILE_ARGS 64

typedef struct dfgc_file_arg {
    const char *name; /* tensor name: the text before '=' */
    size_t name_length;
    const char *path;
} dfgc_file_arg;

/* Splits text (NAME=FILE, given to `option` of `command`); returns 0 or
 * the usage exit status, after printing why. */
int dfgc_parse_file_arg(const char *command, const char *option,
                        const char *text, dfgc_file_arg *out);

/* Index of the input (is_input) or output arg names, or -1. */
int32_t dfgc_file_arg_find(const dfgc_run_setup *setup, int is_input,
                           const dfgc_file_arg *arg);

/* Reads each file of args[0..n) over its input's buffer: raw
 * little-endian values, exactly the input's size. Returns 0 or the exit
 * status, after printing why (a name no input has, a file of the wrong
 * size). */
int dfgc_read_input_files(const char *command, const dfgc_file_arg *args,
                          int n, dfgc_run_setup *setup);

#endif
