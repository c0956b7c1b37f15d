/* The training loop over a user's data set (data_training.h). */
#include "tools/training/data_training.h"
#include "tools/cli.h"
#include "tools/training/digits.h"
#include "tools/model_source.h"

#include <stdlib.h>
#include <string.h>

/* The training graph's model, loaded afresh (the trainer appends the
 * loss to it) and given to a trainer (include/dfg/trainer.h). */
static dfg_status trainer_create(dfgc_data_config *c, dfg_trainer **out)
{
    dfg_graph *graph;
    dfg_status st = dfgc_load_graph(c->model, 1, &graph);
    if (st != DFG_OK)
        return st;
    dfg_trainer_options o;
    dfg_trainer_options_init(&o);
    o.training = c->setup.training;
    o.loss = c->setup.loss;
    o.compile = c->options;
    st = dfg_trainer_create(graph, &o, out);
    dfg_graph_destroy(graph);
    return st;
}

/* Rows right of a batch's prediction: argmax against the class index. */
static int32_t count_correct(const float *prediction, int64_t classes,
                             const int64_t *labels, int32_t rows)
{
    int32_t correct = 0;
    for (int32_t i = 0; i < rows; i++) {
        const float *p = prediction + (size_t)i * (size_t)classes;
        int64_t best = 0;
        for (int64_t k = 1; k < classes; k++)
            best = p[k] > p[best] ? k : best;
        correct += best == labels[i];
    }
    return correct;
}

/* The validation loss (mean over batches, the last padded with repeats
 * of the last example) and, for cross entropy, the accuracy (over the
 * examples). */
static dfg_status evaluate(dfgc_data_config *c, dfg_trainer *t,
                           const dfgc_data_set *val, int32_t batch,
                           int32_t *rows, void *x, void *y,
                           float *prediction)
{
    int accuracy = c->setup.loss == DFG_LOSS_CROSS_ENTROPY;
    int64_t classes = dfg_trainer_prediction_size(t);
    double total = 0.0;
    int32_t batches = 0, correct = 0;
    dfg_status st = DFG_OK;
    for (int32_t at = 0; at < val->rows && st == DFG_OK; at += batch) {
        int32_t real = val->rows - at < batch ? val->rows - at : batch;
        for (int32_t i = 0; i < batch; i++)
            rows[i] = at + (i < real ? i : real - 1);
        dfgc_data_set_gather(val, rows, batch, x, y);
        float loss = 0.0f;
        st = dfg_trainer_evaluate(t, x, y, &loss,
                                  accuracy ? prediction : NULL);
        total += loss;
        batches++;
        if (st == DFG_OK && accuracy)
            correct += count_correct(prediction, classes, y, real);
    }
    if (st == DFG_OK && c->log && accuracy)
        fprintf(c->log, "val_loss=%.6f val_accuracy=%.4f\n", total / batches,
                (double)correct / val->rows);
    else if (st == DFG_OK && c->log)
        fprintf(c->log, "val_loss=%.6f\n", total / batches);
    return st;
}

/* The buffers of one batch of x and y. */
typedef struct batch_buffers {
    int32_t size;
    int32_t *rows;
    void *x, *y;
    float *prediction;
} batch_buffers;

/* One epoch over train in `order`; its mean loss in *mean. */
static dfg_status run_epoch(dfg_trainer *t, const dfgc_data_set *train,
                            const int32_t *order, batch_buffers *b,
                            double *mean)
{
    double total = 0.0;
    int32_t runs = 0;
    dfg_status st = DFG_OK;
    for (int32_t at = 0; at + b->size <= train->rows && st == DFG_OK;
         at += b->size, runs++) {
        dfgc_data_set_gather(train, order + at, b->size, b->x, b->y);
        float loss = 0.0f;
        st = dfg_trainer_step(t, b->x, b->y, &loss);
        total += st == DFG_OK ? loss : 0.0;
    }
    *mean = runs ? total / runs : 0.0;
    return st;
}

/* The epochs, from a checkpoint's with --resume, each shuffled by the
 * generator that shuffled the one before (replayed on resume). */
static dfg_status train_epochs(dfgc_data_config *c, dfg_trainer *t,
                               const dfgc_data_set *train,
                               const dfgc_data_set *val, batch_buffers *b)
{
    dfg_status st = DFG_OK;
    int32_t *order = malloc((size_t)train->rows * sizeof *order);
    if (!order)
        st = DFG_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; st == DFG_OK && i < train->rows; i++)
        order[i] = i;
    uint64_t state = dfgc_digits_seed(c->seed);
    int64_t done = 0;
    dfg_checkpoint_position at;
    if (st == DFG_OK && c->keep.resume) {
        st = dfg_trainer_checkpoint_load(t, c->keep.resume, c->seed, &at);
        done = st == DFG_OK ? at.epoch : 0;
    }
    for (int64_t epoch = 0; epoch < done && st == DFG_OK; epoch++)
        dfgc_digits_shuffle(order, train->rows, &state);
    for (int64_t epoch = done; epoch < c->epochs && st == DFG_OK; epoch++) {
        dfgc_digits_shuffle(order, train->rows, &state);
        double mean = 0.0;
        st = run_epoch(t, train, order, b, &mean);
        if (st == DFG_OK && c->log)
            fprintf(c->log, "epoch %d: loss %.6f\n", (int)epoch + 1, mean);
        if (st == DFG_OK && val)
            st = evaluate(c, t, val, b->size, b->rows, b->x, b->y,
                          b->prediction);
        if (st == DFG_OK)
            st = dfgc_keep_checkpoint(&c->keep, dfg_trainer_session(t),
                                      epoch + 1, state, c->seed);
    }
    free(order);
    return st;
}

/* --schedule cosine: the learning rate decays to 0 over the run's
 * optimizer steps after the warm-up, which the batch size, known once
 * compiled, sets; the program is compiled again with them. */
static int compile_cosine(dfgc_data_config *c, int32_t batches_per_epoch,
                          dfg_trainer **trainer)
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
    dfg_trainer_destroy(*trainer);
    *trainer = NULL;
    return trainer_create(c, trainer) == DFG_OK
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

static int buffers_create(const dfgc_data_set *set, const dfg_trainer *t,
                          int32_t size, batch_buffers *b)
{
    b->size = size;
    b->rows = malloc((size_t)size * sizeof *b->rows);
    b->x = malloc((size_t)(set->x.count / set->rows) * 4 * (size_t)size);
    b->y = malloc((size_t)(set->y.count / set->rows) * 8 * (size_t)size + 1);
    b->prediction = malloc((size_t)dfg_trainer_prediction_size(t) *
                           sizeof(float) * (size_t)size);
    return b->rows && b->x && b->y && b->prediction
               ? 0 : dfgc_error("out of memory for a batch");
}

int dfgc_train_data(dfgc_data_config *c, const dfgc_data_set *train,
                    const dfgc_data_set *val)
{
    dfg_trainer *trainer = NULL;
    batch_buffers b = {0, NULL, NULL, NULL, NULL};
    dfg_status st = trainer_create(c, &trainer);
    int r = st == DFG_OK ? 0 : dfgc_library_error(c->model);
    const dfg_program *program = dfg_trainer_program(trainer);
    if (r == 0)
        r = dfgc_data_set_check(train, program);
    if (r == 0 && val)
        r = dfgc_data_set_check(val, program);
    if (r == 0)
        r = batch_size(c, program, train, &b.size);
    if (r == 0)
        r = buffers_create(train, trainer, b.size, &b);
    if (r == 0 && c->cosine)
        r = compile_cosine(c, train->rows / b.size, &trainer);
    if (r == 0 && c->log)
        fprintf(c->log, "batches of %d: %d an epoch (the last %d of the "
                "%d shuffled examples dropped)\n", (int)b.size,
                (int)(train->rows / b.size), (int)(train->rows % b.size),
                (int)train->rows);
    if (r == 0)
        st = train_epochs(c, trainer, train, val, &b);
    if (r == 0 && st == DFG_OK)
        st = dfgc_keep_save(&c->keep, c->model, dfg_trainer_session(trainer),
                            c->log);
    if (r == 0 && st != DFG_OK)
        r = dfgc_library_error(c->model);
    dfg_trainer_destroy(trainer);
    free(b.rows);
    free(b.x);
    free(b.y);
    free(b.prediction);
    return r;
}
