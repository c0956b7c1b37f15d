/* Training: the options that make dfg_compile build a training step
 * (docs/training.md); the losses are builders (include/dfg/builder.h).
 *
 * With dfg_compile_options.training set, dfg_compile differentiates the
 * graph's loss with respect to every f32 weight the loss depends on and
 * appends, after the backward pass, an optimizer update of each weight.
 * One run of the program's session is one micro-batch: forward, backward,
 * and every `accumulate` runs an optimizer step. The weights, the
 * optimizer state and the gradient accumulators live in the program's
 * weights region, which a session owns a copy of (so sessions of one
 * program train independently) and which a training run updates in place.
 * The program's outputs are the graph's outputs (the loss among them) and
 * "training.update_sq_norms" (f32[weights]: each weight's squared update
 * norm at this run, 0 on runs that only accumulate). */
#ifndef DFG_TRAINING_H
#define DFG_TRAINING_H

#include <stdint.h>
#include "dfg/graph.h"
#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dfg_optimizer {
    DFG_OPTIMIZER_SGD = 0,  /* with momentum, as torch.optim.SGD */
    DFG_OPTIMIZER_ADAM,     /* weight decay added to the gradient */
    DFG_OPTIMIZER_ADAMW,    /* decoupled weight decay */
    DFG_OPTIMIZER_COUNT
} dfg_optimizer;

/* "sgd", "adam", "adamw"; NULL if invalid. */
const char *dfg_optimizer_name(dfg_optimizer optimizer);
int dfg_optimizer_from_name(const char *name, dfg_optimizer *out);

typedef struct dfg_training_options {
    const char *loss;        /* name of the loss value: one f32 element */
    dfg_optimizer optimizer; /* DFG_OPTIMIZER_SGD */
    float learning_rate;     /* 0.01 */
    float momentum;          /* SGD momentum, Adam's beta1: 0.9 */
    float beta2;             /* Adam: 0.999 */
    float epsilon;           /* Adam: 1e-8 */
    float weight_decay;      /* 0 */
    int32_t accumulate;      /* micro-batches per optimizer step: 1 */
    /* Cosine decay of the learning rate over this many optimizer steps
     * (torch's CosineAnnealingLR to 0, stepped once per optimizer step),
     * then 0; 0 (the default): a constant learning rate. At most 2^24. */
    int64_t decay_steps;
    /* Step decay (torch's StepLR, stepped once per optimizer step): the
     * learning rate times lr_gamma every lr_step_size optimizer steps;
     * 0 (the default): none. Not with decay_steps. At most 2^24;
     * lr_gamma in (0, 1] (0.1). */
    int64_t lr_step_size;
    float lr_gamma;
    /* A linear warm-up over the first warmup_steps optimizer steps (step
     * t of them at t / warmup_steps of the rate), the decay schedule then
     * counting its steps from the warm-up's end; 0 (the default): none.
     * At most 2^24. */
    int64_t warmup_steps;
    /* Data-parallel training (docs/data-parallel.md): 1 groups the weight
     * gradients into buckets of about bucket_bytes (0: 25 MiB), in the
     * order backward finishes them, each planned as one arena range and
     * averaged across the ranks by all-reduce steps that overlap the rest
     * of backward (include/dfg/collective.h). 0 (the default): none. */
    int32_t data_parallel;
    int64_t bucket_bytes;
    /* With data_parallel: shard the optimizer over this many ranks (ZeRO
     * stage 1, docs/data-parallel.md), the number that will run the
     * program. Each rank then keeps the optimizer state of 1/N of every
     * bucket and updates only that shard; gradients are reduce-scattered
     * and the updated weights all-gathered. training.update_sq_norms is
     * then one squared norm per bucket, of this rank's shard. 0 or 1 (the
     * default): every rank updates every weight. */
    int32_t shard_optimizer;
    /* A memory budget for the arena, in bytes, or in percent of the arena
     * the step needs without one (0: no budget; bytes win when both are
     * set). Saved activations are then recomputed in backward, cheapest
     * FLOPs per byte freed first, until the plan fits; dfg_compile fails
     * with DFG_ERR_PLAN (naming the smallest arena reached and what is
     * alive at its peak) when it cannot. Results are bit for bit the same
     * as without the budget. Bytes above 2^63 - 1 are refused. */
    uint64_t memory_budget_bytes;
    float memory_budget_percent;
    /* The seed of the dropout masks (include/dfg/builder.h dfg_dropout):
     * the same seed, the same masks run after run (0). */
    uint64_t seed;
} dfg_training_options;

void dfg_training_options_init(dfg_training_options *options);

/* The loss dfg_graph_add_loss appends. */
typedef enum dfg_loss_kind {
    DFG_LOSS_CROSS_ENTROPY = 0, /* labels: i64 [N], one class per row */
    DFG_LOSS_MSE,               /* targets: f32, the prediction's shape */
    DFG_LOSS_COUNT
} dfg_loss_kind;

/* "cross_entropy", "mse"; NULL if invalid. */
const char *dfg_loss_name(dfg_loss_kind kind);
int dfg_loss_from_name(const char *name, dfg_loss_kind *out);

/* Makes a classifier graph (an imported ONNX model, a bundled model)
 * trainable: its first output is the prediction, [N, classes] (when a
 * softmax makes it, the softmax's input, the logits, is used instead:
 * the same math, fused and stable). Appends the input "labels" (cross
 * entropy: i64 [N]) or "targets" (mse: f32 like the prediction) and the
 * loss, named "loss", which replaces every output of the graph.
 * *classes > 0 must equal the prediction's last dim; 0 takes it; on
 * success *classes is the prediction's (classes may be NULL). Errors name
 * the output and its shape. */
dfg_status dfg_graph_add_loss(dfg_graph *g, dfg_loss_kind kind,
                              int64_t *classes);

#ifdef __cplusplus
}
#endif
#endif
