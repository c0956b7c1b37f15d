/* The bundled example models, built with the typed builder and seeded
 * random weights (the same numbers on every machine):
 *   "mlp"          64-128-64-10 perceptron, input [32,64], output [32,10]
 *   "cnn"          small residual CNN, input [32,1,8,8], output [32,10]
 *   "transformer"  one pre-LN transformer block, input and output
 *                  [1,64,128]
 * The inputs are named "x"; the outputs "probs" (mlp, cnn) and "y". */
#ifndef DFG_MODELS_H
#define DFG_MODELS_H

#include "dfg/allocator.h"
#include "dfg/graph.h"
#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Builds the named model into a new graph (*out, freed with
 * dfg_graph_destroy). Unknown name: DFG_ERR_NOT_FOUND. */
dfg_status dfg_model_build(const char *name, const dfg_allocator *allocator,
                           dfg_graph **out);
/* A classifier (mlp, cnn) for training: inputs "x" and "labels" (i64, one
 * class per row), output "loss", the mean softmax cross-entropy of the
 * logits the inference model's softmax would read (the same weights and
 * names as dfg_model_build). DFG_ERR_UNSUPPORTED for a model that does
 * not end in a softmax. */
dfg_status dfg_model_build_training(const char *name,
                                    const dfg_allocator *allocator,
                                    dfg_graph **out);
/* The model names, NULL-terminated; static storage. */
const char *const *dfg_model_names(void);
/* A one-line description of a model, or NULL for an unknown name. */
const char *dfg_model_description(const char *name);

#ifdef __cplusplus
}
#endif
#endif
