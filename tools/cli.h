/* What dfgc's subcommands share: error lines and option parsing.
 *
 * Every failure prints exactly one line on stderr, "dfgc: error: ...", and
 * the subcommand returns 1 (an operation failed) or 2 (a usage error). */
#ifndef DFGC_CLI_H
#define DFGC_CLI_H

#include "dfg/dfg.h"

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

/* dfg_compile_options_init, then the CPU backend's workspace rule: the
 * programs dfgc compiles and plans are for the CPU unless a command runs
 * them on another backend (run_setup.h). */
void dfgc_compile_options_for_cpu(dfg_compile_options *options);

/* Parses the compile options every compiling subcommand accepts:
 * --planner NAME and --align N (a power of two). Returns 1 if argv[*i] was
 * one of them (consumed as dfgc_option_value does), 0 if not, and -1 after
 * printing a usage error for a bad value. */
int dfgc_compile_option(const char *command, int argc, char **argv, int *i,
                        dfg_compile_options *options);

/* Handles "--shapes SPEC[,SPEC...]" (SPEC: INPUT:1x3x224x224 or DIM=8),
 * the values of an ONNX model's symbolic dims, kept for
 * dfgc_load_graph (tools/model_source.c).
 * Returns 1 if argv[*i] was it, 0 if not, -1 after a usage error. */
int dfgc_shapes_option(const char *command, int argc, char **argv, int *i);

/* Opens path for writing ("-" is stdout). NULL after printing an error. */
FILE *dfgc_open_output(const char *path);
/* Closes a stream from dfgc_open_output; returns 0, or 1 after printing an
 * error if writing failed. */
int dfgc_close_output(FILE *stream, const char *path);

#endif
