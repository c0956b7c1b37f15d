/* The training pass: one training step appended to the forward graph.
 *
 *   forward ... loss | backward (passes/training/autodiff.c) | optimizer_tick |
 *   one update per trained weight | concat of the updates' norms
 *
 * Persistent state is made of graph weights, so that it is packed into the
 * weights region with the parameters, never reused by the planner, and
 * saved in program files: the step counter and hyper-parameters
 * (src/math/training_layout.h), and per trained weight its optimizer state
 * (SGD: velocity like the weight; Adam: [2, ...] first and second
 * moments) and, with accumulate > 1, a gradient accumulator. The update
 * ops read the weight's gradient directly and write the weight, its state
 * and its accumulator in place; their small outputs are gathered into
 * one graph output, which keeps them alive through dead-code elimination
 * and reports each update's size.
 *
 * The updates are recorded after every backward node, then each moves
 * to just after its gradient is final and its weight's last reader ran
 * (training_order.c), so that gradients die early. */
#include "passes/training/training.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "passes/training/autodiff.h"
#include "util/error.h"
#include "util/memory.h"
#include "math/training_layout.h"

static const char *const optimizer_names[DFG_OPTIMIZER_COUNT] = {
    [DFG_OPTIMIZER_SGD] = "sgd",
    [DFG_OPTIMIZER_ADAM] = "adam",
    [DFG_OPTIMIZER_ADAMW] = "adamw",
};

const char *dfg_optimizer_name(dfg_optimizer optimizer)
{
    return (unsigned)optimizer < DFG_OPTIMIZER_COUNT ? optimizer_names[optimizer]
                                                     : NULL;
}

int dfg_optimizer_from_name(const char *name, dfg_optimizer *out)
{
    for (int i = 0; name && out && i < DFG_OPTIMIZER_COUNT; i++)
        if (strcmp(optimizer_names[i], name) == 0) {
            *out = (dfg_optimizer)i;
            return 0;
        }
    return -1;
}

void dfg_training_options_init(dfg_training_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->optimizer = DFG_OPTIMIZER_SGD;
    o->learning_rate = 0.01f;
    o->momentum = 0.9f;
    o->beta2 = 0.999f;
    o->epsilon = 1e-8f;
    o->weight_decay = 0.0f;
    o->accumulate = 1;
    o->lr_gamma = 0.1f;
}

dfg_tensor_kind dfg_training_tensor_kind(dfg_training_role role)
{
    switch (role) {
    case DFG_ROLE_GRADIENT: return DFG_TENSOR_GRADIENT;
    case DFG_ROLE_GRADIENT_ACCUMULATOR: return DFG_TENSOR_GRADIENT_ACCUMULATOR;
    case DFG_ROLE_OPTIMIZER_STATE: return DFG_TENSOR_OPTIMIZER_STATE;
    case DFG_ROLE_SAVED_ACTIVATION: return DFG_TENSOR_SAVED_ACTIVATION;
    case DFG_ROLE_NONE: break;
    }
    return DFG_TENSOR_ACTIVATION;
}

static dfg_status check_options(const dfg_training_options *o)
{
    if (!dfg_optimizer_name(o->optimizer))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "training: invalid optimizer %d", (int)o->optimizer);
    if (!(o->learning_rate > 0.0f) || !isfinite(o->learning_rate))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "training: the learning rate must be positive and "
                         "finite, got %g", (double)o->learning_rate);
    if (!(o->momentum >= 0.0f && o->momentum < 1.0f) ||
        !(o->beta2 >= 0.0f && o->beta2 < 1.0f))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "training: momentum (beta1) %g and beta2 %g must lie "
                         "in [0, 1)", (double)o->momentum, (double)o->beta2);
    if (!(o->epsilon >= 0.0f) || !(o->weight_decay >= 0.0f) ||
        !isfinite(o->epsilon) || !isfinite(o->weight_decay))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "training: epsilon %g and weight decay %g must be "
                         "finite and not negative", (double)o->epsilon,
                         (double)o->weight_decay);
    if (o->decay_steps < 0 || o->decay_steps > (1 << 24))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "training: decay_steps must lie in [0, 2^24], got "
                         "%lld", (long long)o->decay_steps);
    if (o->lr_step_size < 0 || o->lr_step_size > (1 << 24) ||
        o->warmup_steps < 0 || o->warmup_steps > (1 << 24))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "training: lr_step_size %lld and warmup_steps %lld "
                         "must lie in [0, 2^24]", (long long)o->lr_step_size,
                         (long long)o->warmup_steps);
    if (o->lr_step_size && o->decay_steps)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "training: a step decay (lr_step_size) and a cosine "
                         "one (decay_steps) together");
    if (o->lr_step_size && !(o->lr_gamma > 0.0f && o->lr_gamma <= 1.0f))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "training: lr_gamma must lie in (0, 1], got %g",
                         (double)o->lr_gamma);
    if (o->memory_budget_bytes > (uint64_t)INT64_MAX)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "training: memory_budget_bytes %llu exceeds 2^63 - 1",
                         (unsigned long long)o->memory_budget_bytes);
    if (!(o->memory_budget_percent >= 0.0f && o->memory_budget_percent <= 100.0f))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "training: memory_budget_percent must lie in [0, "
                         "100], got %g", (double)o->memory_budget_percent);
    if (o->accumulate < 1 || o->accumulate > (1 << 20))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "training: accumulate must lie in [1, 2^20], got %d",
                         (int)o->accumulate);
    return DFG_OK;
}

dfg_status dfg_training_persistent(dfg_graph *g, const char *base,
                                   const char *suffix, const dfg_type *type,
                                   const void *data, dfg_training_role role,
                                   int32_t *out)
{
    char name[300];
    snprintf(name, sizeof name, "%.200s%s", base, suffix);
    int64_t bytes = dfg_type_bytes(type);
    dfg_status st;
    if (!data && dfg_name_table_find(&g->value_names, name) < 0) {
        /* Zero state (optimizer moments, accumulators) as pages that take
         * no memory until a session's own copy is written. */
        dfg_shared_bytes *zeros = dfg_shared_bytes_zeros(&g->allocator,
                                                         (size_t)bytes + 1);
        if (!zeros)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY, "training: out of memory");
        st = dfg_graph_shared_leaf(g, DFG_VALUE_WEIGHT, name, type, zeros,
                                   dfg_shared_bytes_data(zeros), out);
        dfg_shared_bytes_release(zeros);
    } else {
        void *zeros = data ? NULL
                           : dfg_calloc(&g->allocator, (size_t)bytes + 1, 1);
        if (!data && !zeros)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY, "training: out of memory");
        dfg_value handle;
        st = dfg_graph_weight(g, name, type->dtype, type->rank, type->shape,
                              data ? data : zeros, &handle);
        dfg_free(&g->allocator, zeros);
        if (st == DFG_OK)
            *out = dfg_graph_index(g, handle);
    }
    if (st != DFG_OK)
        return st;
    g->values[*out].role = role;
    return DFG_OK;
}

static dfg_status add_node(dfg_graph *g, dfg_op op, const char *name,
                           const int32_t *in, int32_t n_in, int32_t *out)
{
    return dfg_graph_add_node(g, op, name, in, n_in, NULL, 1, out);
}

/* optimizer_tick over the counter and the hyper-parameters: the control
 * vector every update reads. */
static dfg_status add_tick(dfg_graph *g, const dfg_training_options *o,
                           int32_t *control)
{
    float hyper[DFG_HYPER_SIZE] = {0};
    hyper[DFG_HYPER_LR] = o->learning_rate;
    hyper[DFG_HYPER_MOMENTUM] = o->momentum;
    hyper[DFG_HYPER_BETA2] = o->beta2;
    hyper[DFG_HYPER_EPSILON] = o->epsilon;
    hyper[DFG_HYPER_WEIGHT_DECAY] = o->weight_decay;
    hyper[DFG_HYPER_ACCUMULATE] = (float)o->accumulate;
    hyper[DFG_HYPER_DECAY_STEPS] = (float)o->decay_steps;
    hyper[DFG_HYPER_STEP_SIZE] = (float)o->lr_step_size;
    hyper[DFG_HYPER_GAMMA] = o->lr_gamma;
    hyper[DFG_HYPER_WARMUP] = (float)o->warmup_steps;
    const dfg_type counter_type = {DFG_I64, 1, {DFG_COUNTER_SIZE}, 0};
    const dfg_type hyper_type = {DFG_F32, 1, {DFG_HYPER_SIZE}, 0};
    int32_t in[2];
    dfg_status st = dfg_training_persistent(g, "training.step_counter", "",
                                            &counter_type, NULL,
                                            DFG_ROLE_OPTIMIZER_STATE, &in[0]);
    if (st == DFG_OK)
        st = dfg_training_persistent(g, "training.hyper_parameters", "",
                                     &hyper_type, hyper,
                                     DFG_ROLE_OPTIMIZER_STATE, &in[1]);
    if (st == DFG_OK)
        st = add_node(g, DFG_OP_OPTIMIZER_TICK, "training.tick", in, 2,
                      control);
    return st;
}

/* The update of weight w by its gradient grad; its norm output in *out. */
static dfg_status add_update(dfg_graph *g, const dfg_training_options *o,
                             int32_t w, int32_t grad, int32_t control,
                             int32_t *out)
{
    char base[208], name[300];
    snprintf(base, sizeof base, "%.200s", g->values[w].name);
    dfg_type state_type = g->values[w].type;
    dfg_op op = DFG_OP_SGD_UPDATE;
    const char *state_suffix = ".momentum";
    if (o->optimizer != DFG_OPTIMIZER_SGD) {
        op = o->optimizer == DFG_OPTIMIZER_ADAM ? DFG_OP_ADAM_UPDATE
                                                : DFG_OP_ADAMW_UPDATE;
        state_suffix = ".adam_moments";
        memmove(&state_type.shape[1], &state_type.shape[0],
                sizeof state_type.shape - sizeof state_type.shape[0]);
        state_type.shape[0] = 2;
        state_type.rank++;
    }
    int32_t in[5] = {w, grad, control, -1, -1};
    snprintf(name, sizeof name, "%s.grad", base);
    dfg_status st = dfg_graph_set_name(g, dfg_graph_handle(g, grad), name);
    if (st == DFG_OK)
        st = dfg_training_persistent(g, base, state_suffix, &state_type, NULL,
                                     DFG_ROLE_OPTIMIZER_STATE, &in[3]);
    if (st == DFG_OK && o->accumulate > 1)
        st = dfg_training_persistent(g, base, ".grad_accumulator",
                                     &g->values[w].type, NULL,
                                     DFG_ROLE_GRADIENT_ACCUMULATOR, &in[4]);
    snprintf(name, sizeof name, "%s.update", base);
    if (st == DFG_OK)
        st = add_node(g, op, name, in, o->accumulate > 1 ? 5 : 4, out);
    return st;
}

/* Roles of the forward and backward values, for the plan: backward node
 * outputs that are floats are gradients; forward node outputs a backward
 * node reads are saved activations. */
static void mark_roles(dfg_graph *g, int32_t n_forward, int32_t n_backward_end)
{
    for (int32_t n = n_forward; n < n_backward_end; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        if (node->dead)
            continue;
        for (int32_t i = 0; i < node->n_outputs; i++) {
            dfg_ir_value *v = &g->values[node->outputs[i]];
            if (dfg_dtype_is_float(v->type.dtype))
                v->role = DFG_ROLE_GRADIENT;
        }
        for (int32_t i = 0; i < node->n_inputs; i++) {
            int32_t in = node->inputs[i];
            if (in >= 0 && g->values[in].kind == DFG_VALUE_NODE_OUTPUT &&
                g->values[in].producer < n_forward)
                g->values[in].role = DFG_ROLE_SAVED_ACTIVATION;
        }
    }
}

/* The f32 weights the loss may train (autodiff leaves out the ones it
 * does not reach). */
static int32_t *trainable_weights(dfg_graph *g, int32_t *n)
{
    int32_t *out = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                              sizeof *out);
    *n = 0;
    for (int32_t v = 0; out && v < g->n_values; v++)
        if (g->values[v].kind == DFG_VALUE_WEIGHT &&
            g->values[v].type.dtype == DFG_F32)
            out[(*n)++] = v;
    return out;
}

static dfg_status append_step(dfg_graph *g, const dfg_training_options *o,
                              int32_t loss, const int32_t *weights,
                              int32_t n_weights, int32_t *grads)
{
    int32_t n_forward = g->n_nodes;
    dfg_status st = dfg_autodiff(g, loss, weights, n_weights, grads);
    if (st == DFG_OK)
        st = dfg_training_merge_sliced_input_grads(g, n_forward, grads,
                                                   n_weights);
    if (st == DFG_OK)
        st = dfg_mixed_precision_backward(g, n_forward, grads, n_weights);
    if (st != DFG_OK)
        return st;
    int32_t n_backward_end = g->n_nodes, control, n_updates = 0;
    if ((st = add_tick(g, o, &control)) != DFG_OK)
        return st;
    int32_t *norms = dfg_calloc(&g->allocator, (size_t)n_weights + 1,
                                sizeof *norms);
    if (!norms)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "training: out of memory");
    for (int32_t i = 0; i < n_weights && st == DFG_OK; i++)
        if (grads[i] >= 0)
            st = add_update(g, o, weights[i], grads[i], control,
                            &norms[n_updates++]);
    if (st == DFG_OK && n_updates == 0)
        st = dfg_error(DFG_ERR_INVALID_ARGUMENT,
                       "training: the loss '%s' depends on no f32 weight",
                       g->values[loss].name);
    int32_t all;
    dfg_attrs concat;
    dfg_attrs_init(&concat);
    if (st == DFG_OK)
        st = dfg_graph_add_node(g, DFG_OP_CONCAT, "training.update_sq_norms",
                                norms, n_updates, &concat, 1, &all);
    dfg_free(&g->allocator, norms);
    if (st == DFG_OK)
        st = dfg_graph_output(g, dfg_graph_handle(g, all), NULL);
    if (st == DFG_OK && !g->values[loss].is_output)
        st = dfg_graph_output(g, dfg_graph_handle(g, loss), NULL);
    /* Gradients nobody needs (of inputs, of batch-norm statistics...) go
     * before roles are marked, so that only real readers count. */
    dfg_pass_report dce;
    if (st == DFG_OK)
        st = dfg_pass_dce(g, &dce);
    if (st == DFG_OK) {
        mark_roles(g, n_forward, n_backward_end);
        st = dfg_training_order_updates(g, n_backward_end);
    }
    return st;
}

dfg_status dfg_pass_training(dfg_graph *graph, const dfg_training_options *o,
                             dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "training";
    dfg_status st = check_options(o);
    if (st == DFG_OK)
        st = dfg_training_batch_norm_mode(graph);
    if (st == DFG_OK)
        st = dfg_training_dropout_mode(graph, o->seed);
    if (st != DFG_OK)
        return st;
    int32_t loss = -1;
    for (int32_t v = 0; o->loss && v < graph->n_values; v++)
        if (strcmp(graph->values[v].name, o->loss) == 0)
            loss = v;
    if (loss < 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "training: no value named '%s' to use as the loss",
                         o->loss ? o->loss : "(null)");
    int32_t n_weights;
    int32_t *weights = trainable_weights(graph, &n_weights);
    int32_t *grads = dfg_calloc(&graph->allocator, (size_t)n_weights + 1,
                                sizeof *grads);
    if (!weights || !grads)
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "training: out of memory");
    if (st == DFG_OK)
        st = append_step(graph, o, loss, weights, n_weights, grads);
    dfg_free(&graph->allocator, weights);
    dfg_free(&graph->allocator, grads);
    return st == DFG_OK ? st : dfg_error_prefix(st, "training step");
}
