/* A model's training step and evaluation, batch by batch
 * (include/dfg/trainer.h). */
#include "dfg/trainer.h"

#include <string.h>
#include "dfg/collective.h"
#include "dfg/finite_training.h"
#include "dfg/onnx_save.h"
#include "program/program.h"
#include "util/error.h"
#include "util/memory.h"

struct dfg_trainer {
    dfg_allocator allocator;
    dfg_program *train_program, *predict_program, *loss_program;
    dfg_session *train, *predict, *loss;
    dfg_finite_guard guard;
    int predict_stale;       /* the weights changed since the last copy */
    int64_t batch, prediction_size;
    int32_t n_weights;
    int32_t *weights;        /* tensor indices of the f32 weights */
};

void dfg_trainer_options_init(dfg_trainer_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    dfg_training_options_init(&o->training);
    o->loss = DFG_LOSS_CROSS_ENTROPY;
    dfg_compile_options_init(&o->compile);
}

void dfg_trainer_destroy(dfg_trainer *t)
{
    if (!t)
        return;
    dfg_finite_guard_free(&t->guard);
    dfg_session_destroy(t->train);
    dfg_session_destroy(t->predict);
    dfg_session_destroy(t->loss);
    dfg_program_destroy(t->train_program);
    dfg_program_destroy(t->predict_program);
    dfg_program_destroy(t->loss_program);
    dfg_allocator a = t->allocator;
    dfg_free(&a, t->weights);
    dfg_free(&a, t);
}

/* The training program's f32 weights (trained ones and batch norms'
 * running statistics), in program order. */
static dfg_status list_weights(dfg_trainer *t)
{
    const dfg_program *p = t->train_program;
    t->weights = dfg_calloc(&t->allocator, (size_t)p->n_tensors + 1,
                            sizeof *t->weights);
    if (!t->weights)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "trainer: out of memory");
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *w = &p->tensors[i];
        if (w->kind == DFG_TENSOR_WEIGHT && w->region == DFG_REGION_WEIGHTS &&
            w->type.dtype == DFG_F32 && w->alias_of < 0)
            t->weights[t->n_weights++] = i;
    }
    return DFG_OK;
}

/* Batch and prediction size from the inference program's input 0 and
 * output 0, which must be a prediction [batch, ...]. */
static dfg_status read_sizes(dfg_trainer *t)
{
    dfg_tensor_info in, out;
    dfg_status st = dfg_program_input_info(t->predict_program, 0, &in);
    if (st == DFG_OK)
        st = dfg_program_output_info(t->predict_program, 0, &out);
    if (st != DFG_OK)
        return st;
    if (in.rank < 1 || out.rank < 1 || out.shape[0] != in.shape[0] ||
        out.dtype != DFG_F32)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "trainer: the model's first output '%s' is not an "
                         "f32 prediction of its input '%s''s batch", out.name,
                         in.name);
    t->batch = in.shape[0];
    t->prediction_size = 1;
    for (int32_t d = 1; d < out.rank; d++)
        t->prediction_size *= out.shape[d];
    return DFG_OK;
}

static dfg_status compile_both(dfg_trainer *t, dfg_graph *model,
                               const dfg_trainer_options *o)
{
    dfg_compile_options c = o->compile;
    c.training = NULL;
    /* The inference program takes the trained weights: ones equal when
     * compiled stay apart (include/dfg/session.h). */
    c.share_weights = 0;
    dfg_status st = dfg_compile(model, &c, &t->predict_program);
    if (st == DFG_OK)
        st = read_sizes(t);
    if (st == DFG_OK)
        st = dfg_graph_add_loss(model, o->loss, NULL);
    if (st == DFG_OK)
        st = dfg_compile(model, &c, &t->loss_program);
    dfg_training_options training = o->training;
    training.loss = "loss";
    c = o->compile;
    c.training = &training;
    if (st == DFG_OK)
        st = dfg_compile(model, &c, &t->train_program);
    return st;
}

dfg_status dfg_trainer_create(dfg_graph *model, const dfg_trainer_options *o,
                              dfg_trainer **out)
{
    if (!out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "trainer: out is NULL");
    *out = NULL;
    if (!model || !o)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "trainer: model and options must not be NULL");
    dfg_allocator a = dfg_allocator_or_default(o->compile.allocator);
    dfg_trainer *t = dfg_calloc(&a, 1, sizeof *t);
    if (!t)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "trainer: out of memory");
    t->allocator = a;
    t->predict_stale = 1;
    const dfg_backend *cpu;
    dfg_status st = dfg_backend_find("cpu", &cpu);
    if (st == DFG_OK)
        st = compile_both(t, model, o);
    if (st == DFG_OK)
        st = dfg_session_create(t->train_program, cpu, NULL, &t->train);
    if (st == DFG_OK)
        st = dfg_session_create(t->predict_program, cpu, NULL, &t->predict);
    if (st == DFG_OK)
        st = dfg_session_create(t->loss_program, cpu, NULL, &t->loss);
    if (st == DFG_OK)
        st = dfg_finite_guard_init(&t->guard, t->train, NULL);
    if (st == DFG_OK)
        st = list_weights(t);
    if (st != DFG_OK) {
        dfg_trainer_destroy(t);
        return st;
    }
    *out = t;
    return DFG_OK;
}

const dfg_program *dfg_trainer_program(const dfg_trainer *t)
{
    return t ? t->train_program : NULL;
}

dfg_session *dfg_trainer_session(dfg_trainer *t)
{
    return t ? t->train : NULL;
}

const dfg_program *dfg_trainer_predict_program(const dfg_trainer *t)
{
    return t ? t->predict_program : NULL;
}

int64_t dfg_trainer_batch(const dfg_trainer *t)
{
    return t ? t->batch : 0;
}

int64_t dfg_trainer_prediction_size(const dfg_trainer *t)
{
    return t ? t->prediction_size : 0;
}

/* The training program's step counter in its session's region. */
static const int64_t *step_counter(dfg_trainer *t)
{
    void *region;
    size_t bytes;
    if (dfg_session_weights_region(t->train, &region, &bytes) != DFG_OK)
        return NULL;
    const dfg_program *p = t->train_program;
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (p->tensors[i].region == DFG_REGION_WEIGHTS &&
            strcmp(p->tensors[i].name, "training.step_counter") == 0)
            return (const int64_t *)((uint8_t *)region +
                                     p->tensors[i].offset);
    return NULL;
}

int64_t dfg_trainer_steps(const dfg_trainer *t)
{
    return t ? t->guard.steps : 0;
}

dfg_status dfg_trainer_step(dfg_trainer *t, const void *x, const void *y,
                            float *loss)
{
    if (!t || !x || !y)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "trainer step: trainer, x and y must not be NULL");
    const void *inputs[2] = {x, y};
    dfg_status st = dfg_finite_guard_run(&t->guard, t->train, inputs, NULL);
    t->predict_stale = 1;
    float *at;
    if (loss && dfg_session_output_buffer(t->train, 0, (void **)&at) == DFG_OK)
        *loss = *at;
    return st;
}

/* The inference sessions given the trained weights, if they changed. */
static dfg_status take_weights(dfg_trainer *t)
{
    if (!t->predict_stale)
        return DFG_OK;
    dfg_status st = dfg_session_copy_weights(t->predict, t->train, NULL);
    if (st == DFG_OK)
        st = dfg_session_copy_weights(t->loss, t->train, NULL);
    t->predict_stale = st != DFG_OK;
    return st;
}

dfg_status dfg_trainer_predict(dfg_trainer *t, const void *x,
                               float *prediction)
{
    if (!t || !x || !prediction)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "trainer predict: "
                         "trainer, x and prediction must not be NULL");
    dfg_status st = take_weights(t);
    const void *inputs[1] = {x};
    void *outputs[1] = {prediction};
    return st == DFG_OK ? dfg_session_run(t->predict, inputs, outputs) : st;
}

dfg_status dfg_trainer_evaluate(dfg_trainer *t, const void *x, const void *y,
                                float *loss, float *prediction)
{
    if (!t || !x || !y || !loss)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "trainer evaluate: "
                         "trainer, x, y and loss must not be NULL");
    dfg_status st = take_weights(t);
    const void *inputs[2] = {x, y};
    void *outputs[1] = {loss};
    if (st == DFG_OK)
        st = dfg_session_run(t->loss, inputs, outputs);
    return st == DFG_OK && prediction ? dfg_trainer_predict(t, x, prediction)
                                      : st;
}

int32_t dfg_trainer_num_weights(const dfg_trainer *t)
{
    return t ? t->n_weights : 0;
}

const char *dfg_trainer_weight_name(const dfg_trainer *t, int32_t i)
{
    return t && i >= 0 && i < t->n_weights
               ? t->train_program->tensors[t->weights[i]].name : NULL;
}

dfg_status dfg_trainer_weight(dfg_trainer *t, const char *name, float **data,
                              int64_t *count)
{
    if (!t || !name || !data || !count)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "trainer weight: no "
                         "argument may be NULL");
    void *region;
    size_t bytes;
    dfg_status st = dfg_session_weights_region(t->train, &region, &bytes);
    if (st != DFG_OK)
        return st;
    for (int32_t k = 0; k < t->n_weights; k++) {
        const dfg_program_tensor *w = &t->train_program->tensors[t->weights[k]];
        if (strcmp(w->name, name) != 0)
            continue;
        if (w->type.layout != 0)
            return dfg_error(DFG_ERR_UNSUPPORTED, "trainer weight '%s': "
                             "stored in a blocked layout", name);
        *data = (float *)((uint8_t *)region + w->offset);
        *count = w->bytes / (int64_t)sizeof(float);
        t->predict_stale = 1;
        return DFG_OK;
    }
    return dfg_error(DFG_ERR_NOT_FOUND, "trainer weight '%s': the training "
                     "program has no f32 weight of that name", name);
}

dfg_status dfg_trainer_save_onnx(dfg_trainer *t, const char *model_path,
                                 const char *out_path, int32_t *replaced)
{
    if (!t)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "trainer save: no trainer");
    void *weights;
    size_t bytes;
    dfg_status st = dfg_session_weights_region(t->train, &weights, &bytes);
    return st == DFG_OK ? dfg_onnx_save_trained(model_path, t->train_program,
                                                weights, out_path, replaced)
                        : st;
}

dfg_status dfg_trainer_checkpoint_save(dfg_trainer *t,
                                       const dfg_checkpoint_position *position,
                                       const char *path)
{
    if (!t)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "trainer checkpoint: no trainer");
    return dfg_checkpoint_save(t->train, position, path);
}

dfg_status dfg_trainer_checkpoint_load(dfg_trainer *t, const char *path,
                                       uint64_t seed,
                                       dfg_checkpoint_position *position)
{
    if (!t)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "trainer checkpoint: no trainer");
    dfg_status st = dfg_checkpoint_load(t->train, path, seed, position);
    if (st != DFG_OK)
        return st;
    t->predict_stale = 1;
    const int64_t *counter = step_counter(t);
    /* A non-finite step is then named by its count since the start. */
    t->guard.steps = counter ? counter[0] : 0;
    return DFG_OK;
}
