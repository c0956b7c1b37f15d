/* The layout of the small persistent tensors that drive an optimizer,
 * shared by the training pass (passes/training/training.c), which creates
 * them, and the kernels (runtime/cpu/training/optimizer.c), which read and
 * write them.
 *
 * A training program holds, in its weights region (written in place by a
 * training session, see docs/training.md):
 *   counter  i64[DFG_COUNTER_SIZE]  micro-batches run, optimizer steps taken
 *   hyper    f32[DFG_HYPER_SIZE]    the hyper-parameters as compiled; a host
 *                                   may rewrite them (a learning-rate
 *                                   schedule) without recompiling
 * Each run, optimizer_tick(counter, hyper) advances the counter and writes
 * the control vector f32[DFG_CONTROL_SIZE] (an arena tensor) that every
 * update op of that run reads: whether this micro-batch completes an
 * optimizer step, the gradient scale 1/K and the bias corrections. */
#ifndef DFG_TRAINING_LAYOUT_H
#define DFG_TRAINING_LAYOUT_H

enum {
    DFG_COUNTER_MICRO_STEPS = 0,
    DFG_COUNTER_STEPS,
    DFG_COUNTER_SIZE
};

enum {
    DFG_HYPER_LR = 0,
    DFG_HYPER_MOMENTUM,     /* SGD momentum, or Adam's beta1 */
    DFG_HYPER_BETA2,
    DFG_HYPER_EPSILON,
    DFG_HYPER_WEIGHT_DECAY,
    DFG_HYPER_ACCUMULATE,   /* K micro-batches per optimizer step */
    DFG_HYPER_DECAY_STEPS,  /* T: cosine decay of the learning rate over T
                               optimizer steps, 0 for a constant one (a
                               whole number up to 2^24, exact in f32) */
    DFG_HYPER_STEP_SIZE,    /* S: the learning rate times GAMMA every S
                               optimizer steps (torch's StepLR), 0: never
                               (a whole number up to 2^24) */
    DFG_HYPER_GAMMA,
    DFG_HYPER_WARMUP,       /* W: a linear warm-up over the first W
                               optimizer steps, 0: none (up to 2^24) */
    DFG_HYPER_SIZE
};

enum {
    DFG_CONTROL_APPLY = 0,  /* 1: update the weights this run, 0: only
                               accumulate */
    DFG_CONTROL_GRAD_SCALE, /* 1/K: the accumulated sum becomes a mean */
    DFG_CONTROL_LR,         /* the learning rate of this step, decayed */
    DFG_CONTROL_MOMENTUM,
    DFG_CONTROL_BETA2,
    DFG_CONTROL_EPSILON,
    DFG_CONTROL_WEIGHT_DECAY,
    DFG_CONTROL_BIAS1,      /* Adam: 1 - beta1^t */
    DFG_CONTROL_BIAS2,      /* Adam: 1 - beta2^t */
    DFG_CONTROL_SIZE
};

#endif
