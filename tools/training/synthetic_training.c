/* The synthetic training loop (synthetic_training.h). */
#include "tools/training/synthetic_training.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tools/memory_limit_cli.h"

#define MAX_TENSORS 16

/* xorshift64*: the same batch on every machine for a seed. */
static uint64_t next(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545F4914F6CDD1DULL;
}

/* f32 inputs uniform in [-1, 1), i64/i32 ones (labels) in [0, classes). */
static dfg_status fill_input(const dfg_tensor_info *info, int64_t classes,
                             uint64_t *state, void **out)
{
    int64_t n = 1;
    for (int32_t d = 0; d < info->rank; d++)
        n *= info->shape[d];
    size_t size = info->dtype == DFG_I32 ? 4 : 8;
    if (info->dtype == DFG_F32)
        size = 4;
    else if (info->dtype != DFG_I64 && info->dtype != DFG_I32)
        return DFG_ERR_UNSUPPORTED;
    *out = malloc((size_t)n * size + 1);
    if (!*out)
        return DFG_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = next(state);
        if (info->dtype == DFG_F32)
            ((float *)*out)[i] = (float)((double)(r >> 11) / 4503599627370496.0 - 1.0);
        else if (info->dtype == DFG_I64)
            ((int64_t *)*out)[i] = (int64_t)(r % (uint64_t)classes);
        else
            ((int32_t *)*out)[i] = (int32_t)(r % (uint64_t)classes);
    }
    return DFG_OK;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Runs the steps, reading the loss in the session's output buffer. */
static dfg_status run_steps(dfgc_synthetic_config *c, dfg_session *s,
                            const void *const *inputs, const float *loss_at,
                            dfgc_synthetic_result *out)
{
    /* A step whose loss or update is not finite ends the run, the
     * weights of the step before kept (dfg/finite_training.h). */
    dfg_finite_guard guard;
    int64_t done = 0;
    uint64_t rng_state = 0;
    dfg_status st = dfgc_keep_resume(&c->keep, s, c->seed, &done, &rng_state);
    if (st != DFG_OK)
        return st;
    st = dfg_finite_guard_init(&guard, s, NULL);
    for (int64_t step = done + 1; step <= c->steps && st == DFG_OK; step++) {
        double start = now_ms();
        st = dfg_finite_guard_run(&guard, s, inputs, NULL);
        if (st != DFG_OK)
            break;
        st = dfgc_keep_checkpoint(&c->keep, s, step, rng_state, c->seed);
        double loss = *loss_at;
        if (step == done + 1)
            out->first_loss = loss;
        out->last_loss = loss;
        if (c->log)
            fprintf(c->log, "step %d: loss %.6f, %.1f ms\n", (int)step, loss,
                    now_ms() - start);
    }
    dfg_finite_guard_free(&guard);
    return st;
}

static dfg_status compile(dfgc_synthetic_config *c, dfg_program **program)
{
    dfg_graph *graph;
    dfg_status st = dfgc_training_graph(c->model, &c->setup, &graph);
    if (st != DFG_OK)
        return st;
    c->options.training = &c->setup.training;
    st = dfgc_compile_limited(graph, &c->options, program);
    dfg_graph_destroy(graph);
    return st;
}

dfg_status dfgc_train_synthetic(dfgc_synthetic_config *c,
                                dfgc_synthetic_result *out)
{
    memset(out, 0, sizeof *out);
    dfg_program *program = NULL;
    dfg_session *session = NULL;
    void *inputs[MAX_TENSORS] = {0}, *loss = NULL;
    const dfg_backend *cpu;
    dfg_status st = dfg_backend_find("cpu", &cpu);
    if (st == DFG_OK)
        st = compile(c, &program);
    int32_t n_in = program ? dfg_program_num_inputs(program) : 0;
    if (st == DFG_OK && n_in > MAX_TENSORS)
        st = DFG_ERR_UNSUPPORTED;
    uint64_t state = c->seed * 0x9E3779B97F4A7C15ULL + 1;
    for (int32_t i = 0; st == DFG_OK && i < n_in; i++) {
        dfg_tensor_info info;
        st = dfg_program_input_info(program, i, &info);
        if (st == DFG_OK)
            st = fill_input(&info, c->setup.classes, &state, &inputs[i]);
    }
    if (st == DFG_OK)
        st = dfg_session_create(program, cpu, NULL, &session);
    /* Before the first step: the program and its session kept apart. */
    if (st == DFG_OK)
        st = dfg_session_memory_predict(session, 0, &out->predicted);
    if (st == DFG_OK) { /* run_steps keeps the last finite weights */
        dfg_plan_stats plan;
        dfg_program_stats(program, &plan);
        out->predicted.caller_bytes = plan.weights_bytes;
        dfg_memory_prediction_total(&out->predicted);
    }
    /* The loss is the training program's first output (training.h). */
    if (st == DFG_OK)
        st = dfg_session_output_buffer(session, 0, &loss);
    if (st == DFG_OK)
        st = run_steps(c, session, (const void *const *)inputs, loss, out);
    if (st == DFG_OK)
        st = dfgc_keep_save(&c->keep, c->model, session, c->log);
    if (st == DFG_OK) {
        dfg_program_stats(program, &out->plan);
        /* VmHWM: ru_maxrss includes the exec'ing parent's peak. */
        out->peak_rss_kib = (long)(dfg_process_peak_resident_bytes() / 1024u);
    }
    for (int32_t i = 0; i < n_in; i++)
        free(inputs[i]);
    dfg_session_destroy(session);
    dfg_program_destroy(program);
    return st;
}
