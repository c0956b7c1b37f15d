/* The training loop over a user's data set (data_training.h). */
#include "data_training.h"
#include "cli.h"
#include "digits.h"
#include "model_source.h"

#include <stdlib.h>
#include <string.h>

/* The validation programs: the loss of a batch, and (cross entropy) the
 * prediction whose argmax is the class. Their sessions are made at the
 * first evaluation and given the trained weights at each
 * (dfg_session_copy_weights). */
typedef struct evaluator {
    const dfg_backend *backend;
    dfg_program *loss_program, *predict_program;
    dfg_session *loss_session, *predict_session;
    float *prediction;      /* [batch, classes] */
    int64_t classes;
} evaluator;

/* The training graph (the model and its loss), compiled with or without
 * the training options: without, it is the validation loss's program. */
static dfg_status compile_loss(dfgc_data_config *c, int training,
                               dfg_program **out)
{
    dfgc_training_setup setup = c->setup;
    dfg_graph *graph;
    dfg_status st = dfgc_training_graph(c->model, &setup, &graph);
    if (st != DFG_OK)
        return st;
    dfg_compile_options options = c->options;
    options.training = training ? &c->setup.training : NULL;
    /* An inference program takes the trained weights: ones equal at
     * first stay apart (include/dfg/session.h). */
    options.share_weights = training ? options.share_weights : 0;
    st = dfg_compile(graph, &options, out);
    dfg_graph_destroy(graph);
    return st;
}

static dfg_status compile_predict(const dfgc_data_config *c, dfg_program **out)
{
    dfg_graph *graph;
    dfg_status st = dfgc_load_graph(c->model, &graph);
    if (st != DFG_OK)
        return st;
    dfg_compile_options options = c->options;
    options.training = NULL;
    options.share_weights = 0;
    st = dfg_compile(graph, &options, out);
    dfg_graph_destroy(graph);
    return st;
}

/* *session (of program, made on first use) given trained's weights. */
static dfg_status session_with_weights(evaluator *e,
                                       const dfg_program *program,
                                       dfg_session **session,
                                       dfg_session *trained)
{
    dfg_status st = *session ? DFG_OK
                             : dfg_session_create(program, e->backend, NULL,
                                                  session);
    return st == DFG_OK ? dfg_session_copy_weights(*session, trained, NULL)
                        : st;
}

/* The validation sessions, made once, holding trained's weights now. */
static dfg_status sessions_take(evaluator *e, dfg_session *trained)
{
    dfg_status st = session_with_weights(e, e->loss_program,
                                         &e->loss_session, trained);
    if (st == DFG_OK && e->predict_program)
        st = session_with_weights(e, e->predict_program, &e->predict_session,
                                  trained);
    return st;
}

static void evaluator_free(evaluator *e)
{
    dfg_session_destroy(e->loss_session);
    dfg_session_destroy(e->predict_session);
    dfg_program_destroy(e->loss_program);
    dfg_program_destroy(e->predict_program);
    free(e->prediction);
    memset(e, 0, sizeof *e);
}

/* 0, or an exit status after printing why. */
static int evaluator_create(dfgc_data_config *c, const dfg_backend *cpu,
                            int32_t batch, evaluator *e)
{
    memset(e, 0, sizeof *e);
    e->backend = cpu;
    dfg_status st = compile_loss(c, 0, &e->loss_program);
    if (st == DFG_OK && c->setup.loss == DFG_LOSS_CROSS_ENTROPY)
        st = compile_predict(c, &e->predict_program);
    if (st != DFG_OK)
        return dfgc_library_error(c->model);
    if (!e->predict_program)
        return 0;
    dfg_tensor_info info;
    if (dfg_program_output_info(e->predict_program, 0, &info) != DFG_OK)
        return dfgc_library_error(c->model);
    if (info.rank != 2 || info.shape[0] != batch)
        return dfgc_error("%s: its first output '%s' is not a prediction "
                          "[%d, classes]", c->model, info.name, (int)batch);
    e->classes = info.shape[1];
    e->prediction = malloc((size_t)(batch * e->classes) * sizeof(float));
    return e->prediction ? 0 : dfgc_error("out of memory for a prediction");
}

/* Rows right of a batch's prediction: argmax against the class index. */
static int32_t count_correct(const evaluator *e, const int64_t *labels,
                             int32_t rows)
{
    int32_t correct = 0;
    for (int32_t i = 0; i < rows; i++) {
        const float *p = e->prediction + (size_t)i * (size_t)e->classes;
        int64_t best = 0;
        for (int64_t k = 1; k < e->classes; k++)
            best = p[k] > p[best] ? k : best;
        correct += best == labels[i];
    }
    return correct;
}

/* The validation loss (mean over batches, the last padded with repeats
 * of the last example) and accuracy (over the examples). */
static dfg_status evaluate(evaluator *e, dfg_session *trained,
                           const dfgc_data_set *val, int32_t batch,
                           int32_t *rows, void *x, void *y, FILE *log)
{
    dfg_status st = sessions_take(e, trained);
    double total = 0.0;
    int32_t batches = 0, correct = 0;
    for (int32_t at = 0; at < val->rows && st == DFG_OK; at += batch) {
        int32_t real = val->rows - at < batch ? val->rows - at : batch;
        for (int32_t i = 0; i < batch; i++)
            rows[i] = at + (i < real ? i : real - 1);
        dfgc_data_set_gather(val, rows, batch, x, y);
        const void *inputs[2] = {x, y};
        float loss = 0.0f;
        void *outputs[1] = {&loss};
        st = dfg_session_run(e->loss_session, inputs, outputs);
        total += loss;
        batches++;
        void *predicted[1] = {e->prediction};
        if (st == DFG_OK && e->predict_session)
            st = dfg_session_run(e->predict_session, inputs, predicted);
        if (st == DFG_OK && e->predict_session)
            correct += count_correct(e, y, real);
    }
    if (st == DFG_OK && log && e->predict_session)
        fprintf(log, "val_loss=%.6f val_accuracy=%.4f\n", total / batches,
                (double)correct / val->rows);
    else if (st == DFG_OK && log)
        fprintf(log, "val_loss=%.6f\n", total / batches);
    return st;
}

/* The buffers of one batch of x and y. */
typedef struct batch_buffers {
    int32_t size;
    int32_t *rows;
    void *x, *y;
} batch_buffers;

/* One epoch over train in `order`; its mean loss in *mean. */
static dfg_status run_epoch(dfg_finite_guard *guard, dfg_session *s,
                            const dfgc_data_set *train, const int32_t *order,
                            batch_buffers *b, const float *loss_at,
                            double *mean)
{
    double total = 0.0;
    int32_t runs = 0;
    dfg_status st = DFG_OK;
    for (int32_t at = 0; at + b->size <= train->rows && st == DFG_OK;
         at += b->size, runs++) {
        dfgc_data_set_gather(train, order + at, b->size, b->x, b->y);
        const void *inputs[2] = {b->x, b->y};
        st = dfg_finite_guard_run(guard, s, inputs, NULL);
        total += st == DFG_OK ? *loss_at : 0.0;
    }
    *mean = runs ? total / runs : 0.0;
    return st;
}

/* The epochs, from a checkpoint's with --resume, each shuffled by the
 * generator that shuffled the one before (replayed on resume). */
static dfg_status train_epochs(dfgc_data_config *c, dfg_session *s,
                               const dfgc_data_set *train,
                               const dfgc_data_set *val, evaluator *e,
                               batch_buffers *b)
{
    float *loss_at;
    dfg_status st = dfg_session_output_buffer(s, 0, (void **)&loss_at);
    int32_t *order = malloc((size_t)train->rows * sizeof *order);
    if (st == DFG_OK && !order)
        st = DFG_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; st == DFG_OK && i < train->rows; i++)
        order[i] = i;
    uint64_t state = dfgc_digits_seed(c->seed), saved = 0;
    int64_t done = 0;
    if (st == DFG_OK)
        st = dfgc_keep_resume(&c->keep, s, c->seed, &done, &saved);
    for (int64_t epoch = 0; epoch < done && st == DFG_OK; epoch++)
        dfgc_digits_shuffle(order, train->rows, &state);
    dfg_finite_guard guard;
    if (st == DFG_OK)
        st = dfg_finite_guard_init(&guard, s, NULL);
    else
        memset(&guard, 0, sizeof guard);
    for (int64_t epoch = done; epoch < c->epochs && st == DFG_OK; epoch++) {
        dfgc_digits_shuffle(order, train->rows, &state);
        double mean = 0.0;
        st = run_epoch(&guard, s, train, order, b, loss_at, &mean);
        if (st == DFG_OK && c->log)
            fprintf(c->log, "epoch %d: loss %.6f\n", (int)epoch + 1, mean);
        if (st == DFG_OK && val)
            st = evaluate(e, s, val, b->size, b->rows, b->x, b->y, c->log);
        if (st == DFG_OK)
            st = dfgc_keep_checkpoint(&c->keep, s, epoch + 1, state, c->seed);
    }
    dfg_finite_guard_free(&guard);
    free(order);
    return st;
}

/* --schedule cosine: the learning rate decays to 0 over the run's
 * optimizer steps after the warm-up, which the batch size, known once
 * compiled, sets; the program is compiled again with them. */
static int compile_cosine(dfgc_data_config *c, int32_t batches_per_epoch,
                          dfg_program **program)
{
    int32_t accumulate = c->setup.training.accumulate > 0
                             ? c->setup.training.accumulate : 1;
    int64_t steps = (int64_t)c->epochs * batches_per_epoch / accumulate -
                    c->setup.training.warmup_steps;
    if (steps < 1 || steps > (1 << 24))
        return dfgc_error("--schedule cosine: %lld optimizer steps in the "
                          "run after the warm-up (1 to 2^24)",
                          (long long)steps);
    c->setup.training.decay_steps = steps;
    dfg_program_destroy(*program);
    *program = NULL;
    return compile_loss(c, 1, program) == DFG_OK
               ? 0 : dfgc_library_error(c->model);
}

/* Input 0's batch dim, checked against --batch and the data. */
static int batch_size(const dfgc_data_config *c, const dfg_program *p,
                      const dfgc_data_set *train, int32_t *out)
{
    dfg_tensor_info info;
    if (dfg_program_input_info(p, 0, &info) != DFG_OK)
        return dfgc_library_error(c->model);
    if (c->batch && c->batch != info.shape[0])
        return dfgc_error("--batch %d: %s's input '%s' is built for batch %lld "
                          "(a symbolic batch dim is set with --shapes)",
                          (int)c->batch, c->model, info.name,
                          (long long)info.shape[0]);
    if (info.shape[0] < 1 || info.shape[0] > train->rows)
        return dfgc_error("%s: %d examples, fewer than one batch of %lld",
                          train->path, (int)train->rows,
                          (long long)info.shape[0]);
    *out = (int32_t)info.shape[0];
    return 0;
}

static int buffers_create(const dfgc_data_set *set, int32_t size,
                          batch_buffers *b)
{
    b->size = size;
    b->rows = malloc((size_t)size * sizeof *b->rows);
    b->x = malloc((size_t)(set->x.count / set->rows) * 4 * (size_t)size);
    b->y = malloc((size_t)(set->y.count / set->rows) * 8 * (size_t)size + 1);
    return b->rows && b->x && b->y ? 0 : dfgc_error("out of memory for a batch");
}

int dfgc_train_data(dfgc_data_config *c, const dfgc_data_set *train,
                    const dfgc_data_set *val)
{
    const dfg_backend *cpu;
    dfg_program *program = NULL;
    dfg_session *session = NULL;
    evaluator e;
    memset(&e, 0, sizeof e);
    batch_buffers b = {0, NULL, NULL, NULL};
    dfg_status st = dfg_backend_find("cpu", &cpu);
    if (st == DFG_OK)
        st = compile_loss(c, 1, &program);
    int r = st == DFG_OK ? 0 : dfgc_library_error(c->model);
    if (r == 0)
        r = dfgc_data_set_check(train, program);
    if (r == 0 && val)
        r = dfgc_data_set_check(val, program);
    if (r == 0)
        r = batch_size(c, program, train, &b.size);
    if (r == 0)
        r = buffers_create(train, b.size, &b);
    if (r == 0 && c->cosine)
        r = compile_cosine(c, train->rows / b.size, &program);
    if (r == 0 && c->log)
        fprintf(c->log, "batches of %d: %d an epoch (the last %d of the "
                "%d shuffled examples dropped)\n", (int)b.size,
                (int)(train->rows / b.size), (int)(train->rows % b.size),
                (int)train->rows);
    if (r == 0 && val)
        r = evaluator_create(c, cpu, b.size, &e);
    st = DFG_OK;
    if (r == 0)
        st = dfg_session_create(program, cpu, NULL, &session);
    if (r == 0 && st == DFG_OK)
        st = train_epochs(c, session, train, val, &e, &b);
    if (r == 0 && st == DFG_OK)
        st = dfgc_keep_save(&c->keep, c->model, session, c->log);
    if (r == 0 && st != DFG_OK)
        r = dfgc_library_error(c->model);
    evaluator_free(&e);
    dfg_session_destroy(session);
    dfg_program_destroy(program);
    free(b.rows);
    free(b.x);
    free(b.y);
    return r;
}
