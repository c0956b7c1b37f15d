/* Where dfgc's MODEL argument comes from: a bundled example, a program
 * file or an ONNX file (tools/model_source.c), and the --shapes option
 * that binds an ONNX model's symbolic dimensions. */
#ifndef DFGC_MODEL_SOURCE_H
#define DFGC_MODEL_SOURCE_H

#include "dfg/dfg.h"

/* Handles "--shapes SPEC[,SPEC...]" (SPEC: INPUT:1x3x224x224 or DIM=8),
 * the values of an ONNX model's symbolic dims, kept for
 * dfgc_load_graph (tools/model_source.c).
 * Returns 1 if argv[*i] was it, 0 if not, -1 after a usage error. */
int dfgc_shapes_option(const char *command, int argc, char **argv, int *i);

/* Handles "--const NAME=FILE": ONNX input NAME becomes a constant of the
 * graph with FILE's value (a TensorProto .pb, or raw little-endian values
 * of the input's declared type), kept for dfgc_load_graph. Returns 1 if
 * argv[*i] was it, 0 if not, -1 after a usage error. */
int dfgc_const_option(const char *command, int argc, char **argv, int *i);

/* Handles "--max-weight-bytes N": the limit on an ONNX model's weights
 * (dfg_onnx_options.max_weight_bytes, 0: none), kept for dfgc_load_graph.
 * Returns 1 if argv[*i] was it, 0 if not, -1 after a usage error. */
int dfgc_max_weight_option(const char *command, int argc, char **argv,
                           int *i);

/* MODEL is a bundled example ("example:cnn"), a program file (.dfgp) or,
 * once the ONNX front end is in, an .onnx file. keep_transposed_copies:
 * dfg_onnx_options' (1 for training, and where weights are not shared). */
dfg_status dfgc_load_graph(const char *model, int keep_transposed_copies,
                           dfg_graph **out);
/* 1 if MODEL names a compiled program file (.dfgp), which compile options
 * cannot change. */
int dfgc_model_is_program(const char *model);
/* A .dfgp is loaded; anything else is built and compiled with options. */
dfg_status dfgc_load_program(const char *model,
                             const dfg_compile_options *options,
                             dfg_program **out);

#endif
