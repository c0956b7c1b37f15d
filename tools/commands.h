/* dfgc's subcommands: each is a thin layer over library calls, returning
 * the process exit status (0 success, 1 error with a one-line message on
 * stderr, 2 usage error). */
#ifndef DFGC_COMMANDS_H
#define DFGC_COMMANDS_H

#include "dfg/dfg.h"

int dfgc_plan(int argc, char **argv);
int dfgc_compile(int argc, char **argv);
int dfgc_run(int argc, char **argv);
int dfgc_bench(int argc, char **argv);
int dfgc_train(int argc, char **argv);
int dfgc_devices(int argc, char **argv);

#endif
