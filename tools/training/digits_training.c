/* The digits training loop (digits_training.h). */
#include "tools/training/digits_training.h"
#include "dfg/atomic_file.h"
#include "dfg/compile.h"

#include <stdlib.h>
#include <string.h>

typedef struct batch {
    int32_t size;
    float *pixels;    /* [size, 64] */
    int64_t *labels;  /* [size] */
} batch;

static void gather(const dfgc_digits *data, const int32_t *rows, batch *b)
{
    for (int32_t i = 0; i < b->size; i++) {
        memcpy(b->pixels + (size_t)i * DFGC_DIGITS_PIXELS,
               data->pixels + (size_t)rows[i] * DFGC_DIGITS_PIXELS,
               DFGC_DIGITS_PIXELS * sizeof(float));
        b->labels[i] = data->labels[rows[i]];
    }
}

/* Outputs of a training run: the loss, then one update norm per trained
 * weight (include/dfg/training.h). */
#define DFGC_MAX_TRAINED 1024

/* The batch size a model's input "x" was built for; checks the outputs. */
static dfg_status batch_size(const dfg_program *p, int32_t *size)
{
    dfg_tensor_info info, norms;
    dfg_status st = dfg_program_input_info(p, 0, &info);
    if (st == DFG_OK)
        st = dfg_program_output_info(p, 1, &norms);
    if (st == DFG_OK && (dfg_program_num_outputs(p) != 2 ||
                         norms.shape[0] > DFGC_MAX_TRAINED))
        st = DFG_ERR_UNSUPPORTED;
    if (st == DFG_OK)
        *size = (int32_t)info.shape[0];
    return st;
}

static dfg_status write_json(const dfg_program *p, const char *path)
{
    dfg_atomic_file *f;
    dfg_status st = dfg_atomic_file_open(path, &f);
    if (st != DFG_OK)
        return st;
    st = dfg_report_json(p, dfg_atomic_file_stream(f));
    if (st != DFG_OK) {
        dfg_atomic_file_discard(f);
        return st;
    }
    return dfg_atomic_file_commit(f);
}

/* Every run through a finite guard (dfg/finite_training.h): a step whose
 * loss or update is not finite ends the training with the weights of the
 * step before kept in the session. */
static dfg_status train(const dfgc_train_config *c, const dfgc_digits *data,
                        dfg_session *s, batch *b, dfgc_train_result *out)
{
    dfg_finite_guard guard;
    dfg_status st = dfg_finite_guard_init(&guard, s, NULL);
    if (st != DFG_OK)
        return st;
    int32_t *order = malloc(DFGC_DIGITS_TRAIN * sizeof *order);
    if (!order) {
        dfg_finite_guard_free(&guard);
        return DFG_ERR_OUT_OF_MEMORY;
    }
    for (int32_t i = 0; i < DFGC_DIGITS_TRAIN; i++)
        order[i] = i;
    uint64_t state = dfgc_digits_seed(c->seed), saved_state = 0;
    int32_t ranks = c->ranks > 1 ? c->ranks : 1, global = ranks * b->size;
    int64_t done = 0;
    int32_t last = c->stop_after > 0 && c->stop_after < c->epochs
                       ? c->stop_after : c->epochs;
    st = dfgc_keep_resume(&c->keep, s, c->seed, &done, &saved_state);
    /* The order each epoch shuffles is the one before it shuffled. */
    for (int64_t epoch = 0; epoch < done && st == DFG_OK; epoch++)
        dfgc_digits_shuffle(order, DFGC_DIGITS_TRAIN, &state);
    for (int32_t epoch = (int32_t)(done < last ? done : last);
         epoch < last && st == DFG_OK; epoch++) {
        dfgc_digits_shuffle(order, DFGC_DIGITS_TRAIN, &state);
        double total = 0.0;
        int32_t runs = 0;
        for (int32_t at = 0; at + global <= DFGC_DIGITS_TRAIN && st == DFG_OK;
             at += global, runs++) {
            gather(data, order + at + c->rank * b->size, b);
            float loss, norms[DFGC_MAX_TRAINED];
            const void *inputs[2] = {b->pixels, b->labels};
            void *outputs[2] = {&loss, norms};
            st = dfg_finite_guard_run(&guard, s, inputs, outputs);
            total += st == DFG_OK ? loss : 0.0f;
        }
        out->final_loss = runs ? total / runs : 0.0;
        if (c->log && st == DFG_OK)
            fprintf(c->log, "epoch %d: loss %.4f\n", (int)epoch + 1,
                    out->final_loss);
        if (st == DFG_OK)
            st = dfgc_keep_checkpoint(&c->keep, s, epoch + 1, state, c->seed);
    }
    free(order);
    dfg_finite_guard_free(&guard);
    return st;
}

/* Classifies the test examples in batches (the last one padded with
 * repeats of the last example, which are not counted). */
static dfg_status evaluate(const dfgc_digits *data, dfg_session *s, batch *b,
                           double *accuracy)
{
    int32_t rows[1024], correct = 0, total = data->n - DFGC_DIGITS_TRAIN;
    float *probs = malloc((size_t)b->size * 10 * sizeof *probs);
    if (!probs || b->size > 1024) {
        free(probs);
        return DFG_ERR_OUT_OF_MEMORY;
    }
    dfg_status st = DFG_OK;
    for (int32_t at = DFGC_DIGITS_TRAIN; at < data->n && st == DFG_OK;
         at += b->size) {
        for (int32_t i = 0; i < b->size; i++)
            rows[i] = at + i < data->n ? at + i : data->n - 1;
        gather(data, rows, b);
        const void *inputs[1] = {b->pixels};
        void *outputs[1] = {probs};
        st = dfg_session_run(s, inputs, outputs);
        for (int32_t i = 0; i < b->size && at + i < data->n; i++) {
            int32_t best = 0;
            for (int32_t k = 1; k < 10; k++)
                if (probs[i * 10 + k] > probs[i * 10 + best])
                    best = k;
            correct += best == b->labels[i];
        }
    }
    free(probs);
    *accuracy = total > 0 ? (double)correct / total : 0.0;
    return st;
}

int32_t dfgc_default_epochs(const char *model)
{
    return strcmp(model, "mlp") == 0 ? 20 : 10;
}

int64_t dfgc_optimizer_steps(int32_t epochs, int32_t batch,
                             int32_t accumulate)
{
    return batch > 0 && accumulate > 0
               ? (int64_t)epochs * (DFGC_DIGITS_TRAIN / batch) / accumulate
               : 0;
}

dfg_status dfgc_train_digits(const dfgc_train_config *c,
                             const dfgc_digits *data, dfgc_train_result *out)
{
    memset(out, 0, sizeof *out);
    const dfg_backend *cpu;
    dfg_graph *train_graph = NULL, *eval_graph = NULL;
    dfg_program *train_program = NULL, *eval_program = NULL;
    dfg_session *train_session = NULL, *eval_session = NULL;
    batch b = {0, NULL, NULL};
    dfg_training_options training = c->training;
    training.loss = "loss";
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.training = &training;
    options.precision = c->precision;
    dfg_compile_options eval_options;
    dfg_compile_options_init(&eval_options);
    eval_options.precision = c->precision;
    /* It takes the trained weights: ones equal at first stay apart. */
    eval_options.share_weights = 0;
    dfg_status st = dfg_backend_find("cpu", &cpu);
    if (st == DFG_OK)
        st = dfg_model_build_training(c->model, NULL, &train_graph);
    if (st == DFG_OK)
        st = dfg_compile(train_graph, &options, &train_program);
    if (st == DFG_OK) {
        dfg_program_stats(train_program, &out->plan);
        out->plan_verified = dfg_program_verify(train_program) == DFG_OK;
        if (c->json_path)
            st = write_json(train_program, c->json_path);
        if (st == DFG_OK && c->log)
            st = dfg_report_summary(train_program, c->log);
    }
    if (st == DFG_OK)
        st = dfg_model_build(c->model, NULL, &eval_graph);
    if (st == DFG_OK)
        st = dfg_compile(eval_graph, &eval_options, &eval_program);
    if (st == DFG_OK)
        st = batch_size(train_program, &b.size);
    if (st == DFG_OK) {
        b.pixels = malloc((size_t)b.size * DFGC_DIGITS_PIXELS * sizeof(float));
        b.labels = malloc((size_t)b.size * sizeof(int64_t));
        if (!b.pixels || !b.labels)
            st = DFG_ERR_OUT_OF_MEMORY;
    }
    if (st == DFG_OK)
        st = dfg_session_create(train_program, cpu, NULL, &train_session);
    if (st == DFG_OK && c->attach)
        st = c->attach(c->attach_context, train_session, train_program);
    if (st == DFG_OK)
        st = train(c, data, train_session, &b, out);
    if (st == DFG_OK)
        st = dfg_session_create(eval_program, cpu, NULL, &eval_session);
    if (st == DFG_OK)
        st = dfg_session_copy_weights(eval_session, train_session, NULL);
    if (st == DFG_OK)
        st = evaluate(data, eval_session, &b, &out->test_accuracy);
    free(b.pixels);
    free(b.labels);
    if (c->detach)
        c->detach(c->attach_context);
    dfg_session_destroy(eval_session);
    dfg_session_destroy(train_session);
    dfg_program_destroy(eval_program);
    dfg_program_destroy(train_program);
    dfg_graph_destroy(eval_graph);
    dfg_graph_destroy(train_graph);
    return st;
}
