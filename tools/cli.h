/* What dfgc's subcommands share: error lines and option parsing.
 *
 * Every failure prints exactly one line on stderr, "dfgc: error: ...", and
 * the subcommand returns 1 (an operation failed) or 2 (a usage error). */
#ifndef DFGC_CLI_H
#define DFGC_CLI_H

#include <stdint.h>
#include <stdio.h>
#include "dfg/status.h"

#define DFGC_EXIT_ERROR 1
#define DFGC_EXIT_USAGE 2

/* Prints "dfgc: error: <message>" and returns DFGC_EXIT_ERROR. */
int dfgc_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "dfgc: error: <message> (see 'dfgc <command> --help')" and
 * returns DFGC_EXIT_USAGE. */
int dfgc_usage_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prints "dfgc: error: <what>: <dfg_last_error()>" (without "<what>: "
 * when what is NULL) and returns DFGC_EXIT_ERROR. */
int dfgc_library_error(const char *what);

/* 1 if argv[i] is "--help" or "-h". */
int dfgc_is_help(const char *arg);

/* A subcommand's own options: handles argv[*i] if it is one of them
 * (moving *i past a value it consumes) and returns 1, returns 0 if it is
 * not, or -(exit status) after printing a usage error. */
typedef int (*dfgc_option_parser)(int argc, char **argv, int *i, void *ctx);

/* Walks a subcommand's arguments: --help prints usage and returns 0; each
 * option goes to parse_option(ctx); any other argument starting with '-'
 * (but "-") is an unknown option, and the one left is the MODEL, stored in
 * *model (NULL when there is none: the caller says whether it needs one).
 * Returns -1 when the arguments are fine, else the exit status. */
int dfgc_parse_arguments(const char *command, const char *usage, int argc,
                         char **argv, dfgc_option_parser parse_option,
                         void *ctx, const char **model);

/* Matches argv[*i] against "--name VALUE" and "--name=VALUE". On a match
 * sets *value, moves *i to the last argument consumed and returns 1; a
 * missing VALUE is a usage error (printed) and returns -1; no match
 * returns 0. */
int dfgc_option_value(const char *command, int argc, char **argv, int *i,
                      const char *name, const char **value);

/* A decimal integer in [min, max]. Returns 0, or prints a usage error
 * naming the command and option and returns DFGC_EXIT_USAGE. */
int dfgc_parse_u64(const char *command, const char *option, const char *text,
                   uint64_t min, uint64_t max, uint64_t *out);

/* An output file being written: stdout ("-") or a new file that replaces
 * the old one only when it is complete (include/dfg/atomic_file.h). */
typedef struct dfgc_output {
    FILE *stream;              /* NULL: not open */
    struct dfg_atomic_file *file; /* NULL for stdout */
    const char *path;          /* the caller's */
} dfgc_output;

/* Opens path for writing ("-" is stdout); 0, or 1 after printing an
 * error. */
int dfgc_open_output(const char *path, dfgc_output *out);
/* Finishes an output from dfgc_open_output: with complete set, the file
 * takes the place of the old one; else (an error happened while making
 * it) the old one stays. Returns 0, or 1 after printing an error if
 * writing failed. An output that is not open is ignored (0). */
int dfgc_close_output(dfgc_output *out, int complete);

#endif
