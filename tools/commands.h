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

/* MODEL is a bundled example ("example:cnn"), a program file (.dfgp) or,
 * once the ONNX front end is in, an .onnx file. */
dfg_status dfgc_load_graph(const char *model, dfg_graph **out);
/* 1 if MODEL names a compiled program file (.dfgp), which compile options
 * cannot change. */
int dfgc_model_is_program(const char *model);
/* A .dfgp is loaded; anything else is built and compiled with options. */
dfg_status dfgc_load_program(const char *model,
                             const dfg_compile_options *options,
                             dfg_program **out);

#endif
