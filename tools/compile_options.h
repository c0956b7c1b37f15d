/* dfgc's compile options (--planner, --align, --blas-workspace, --shapes). */
#ifndef DFGC_COMPILE_OPTIONS_H
#define DFGC_COMPILE_OPTIONS_H

#include "dfg/dfg.h"

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

#endif
