/* Running small ONNX models in tests (tests/support/onnx_run.h). */
#include "tests/support/onnx_run.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dfg/dfg.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

double onnx_run_uniform(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / (double)(1ull << 52) - 1.0;
}

float *onnx_run_random_floats(int64_t n)
{
    float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)onnx_run_uniform();
    return v;
}

int64_t onnx_run_numel(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    return n;
}

void *onnx_run_model(const onnx_builder *b, const void *const *inputs,
                     int32_t *rank, int64_t *dims)
{
    dfg_graph *graph;
    dfg_program *program;
    dfg_session *session;
    const dfg_backend *cpu;
    dfg_status st = onnx_builder_import(b, &graph);
    if (st != DFG_OK)
        fail_msg("import: %s", dfg_last_error());
    assert_int_equal(dfg_compile(graph, NULL, &program), DFG_OK);
    assert_int_equal(dfg_program_verify(program), DFG_OK);
    int32_t n_out = dfg_program_num_outputs(program);
    void *outputs[16];
    assert_true(n_out >= 1 && n_out <= 16);
    for (int32_t i = 0; i < n_out; i++) {
        dfg_tensor_info info;
        assert_int_equal(dfg_program_output_info(program, i, &info), DFG_OK);
        if (i == 0) {
            *rank = info.rank;
            memcpy(dims, info.shape, (size_t)info.rank * sizeof *dims);
        }
        outputs[i] = malloc((size_t)onnx_run_numel(info.rank, info.shape) *
                            dfg_dtype_size(info.dtype) + 1);
    }
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(program, cpu, NULL, &session), DFG_OK);
    assert_int_equal(dfg_session_run(session, (const void **)inputs, outputs),
                     DFG_OK);
    for (int32_t i = 1; i < n_out; i++)
        free(outputs[i]);
    void *out = outputs[0];
    dfg_session_destroy(session);
    dfg_program_destroy(program);
    dfg_graph_destroy(graph);
    return out;
}

void onnx_run_expect_close(const float *got, const double *ref, int64_t n)
{
    double err = 0, norm = 0;
    for (int64_t i = 0; i < n; i++) {
        err += (got[i] - ref[i]) * (got[i] - ref[i]);
        norm += ref[i] * ref[i];
    }
    assert_true(norm > 0);
    if (!(err <= 1e-10 * norm))
        fail_msg("relative error %g", sqrt(err / norm));
}
