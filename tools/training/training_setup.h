/* The training options 'dfgc plan --training' and 'dfgc train' share:
 * which loss is appended to the model (dfg_graph_add_loss), for how many
 * classes, and the optimizer. */
#ifndef DFGC_TRAINING_SETUP_H
#define DFGC_TRAINING_SETUP_H

#include "dfg/dfg.h"

typedef struct dfgc_training_setup {
    dfg_training_options training; /* loss is set to "loss" */
    dfg_loss_kind loss;            /* cross_entropy */
    int64_t classes;               /* 0: the model's */
    int lr_given;                  /* --lr seen: --optimizer keeps it */
    dfg_dtype precision;           /* --precision: f32 (default) or bf16 */
} dfgc_training_setup;

#define DFGC_TRAINING_USAGE                                                  \
    "--loss NAME       cross_entropy (default: labels i64 [N]) or mse\n"     \
    "                  (targets like the prediction)\n"                      \
    "--classes N       the classes of the labels; must match the model's\n"  \
    "                  prediction [N, classes] (default: the model's)\n"     \
    "--optimizer NAME  adam (default), adamw, or sgd (momentum 0.9)\n"       \
    "--lr X            learning rate (sgd 0.05, adam/adamw 0.003)\n"      \
    "--weight-decay X  L2 penalty added to the gradient (sgd, adam) or\n"   \
    "                  decoupled (adamw): 0\n"                              \
    "--momentum X      sgd's momentum, adam's beta1, in [0, 1): 0.9\n"       \
    "--memory-budget B arena budget: BYTES, NKiB, NMiB, NGiB (below 2^63\n" \
    "                  bytes) or N% of the arena without one; saved\n" \
    "                  activations are recomputed until it fits\n" \
    "--memory-limit B  keep the predicted peak of the whole process under\n" \
    "                  B (BYTES, NMiB, NGiB): recompute under a budget, or\n" \
    "                  fail saying by how much it does not fit\n" \
    "--precision P     f32 (default) or bf16: activations and gradients\n"  \
    "                  stored in bf16, weights and optimizer state f32\n"

/* Adam from lr 0.003, cross entropy, the model's classes. */
void dfgc_training_setup_init(dfgc_training_setup *setup);

/* Handles --loss, --classes, --optimizer, --lr, --weight-decay,
 * --momentum, --memory-budget, --memory-limit and
 * --precision: 1 if argv[*i] was one
 * of them, 0 if not, -1 after a usage error. */
int dfgc_training_option(const char *command, int argc, char **argv, int *i,
                         dfgc_training_setup *setup);

/* MODEL (dfgc_load_graph) with its loss appended; sets setup->classes
 * to the model's. */
dfg_status dfgc_training_graph(const char *model, dfgc_training_setup *setup,
                               dfg_graph **out);

#endif
