/* dfgc's compile options (--planner, --align, --blas-workspace, --shapes,
 * --const, --no-onednn, --no-fuse, --precision). */
#ifndef DFGC_COMPILE_OPTIONS_H
#define DFGC_COMPILE_OPTIONS_H

#include "dfg/dfg.h"

/* Parses the compile options every compiling subcommand accepts:
 * --planner NAME, --align N (a power of two), --no-onednn (no scratch
 * planned for the CPU backend's oneDNN convolutions: they run on the
 * reference kernels), --no-fuse (no fused conv post-ops, layer norms or
 * GELUs), ... Returns 1 if argv[*i] was
 * one of them (consumed as dfgc_option_value does), 0 if not, and -1 after
 * printing a usage error for a bad value. */
int dfgc_compile_option(const char *command, int argc, char **argv, int *i,
                        dfg_compile_options *options);

/* --precision f32|bf16 into *precision, returning as dfgc_compile_option
 * does. */
int dfgc_precision_option(const char *command, int argc, char **argv, int *i,
                          dfg_dtype *precision);

#endif
