/* The C example of README.md, compiled and run by the test suite so that
 * the README's code is known to work. Keep the two in step. */
#include <stdio.h>
#include <dfg/dfg.h>

int main(void)
{
    dfg_graph *graph;
    dfg_value x, w, h, y;
    static float weights[16 * 64];
    for (int i = 0; i < 16 * 64; i++)
        weights[i] = (float)(i % 7) / 7.0f - 0.5f;

    if (dfg_graph_create(NULL, &graph) != DFG_OK)
        return 1;
    /* y = softmax(relu(x @ w^T)), x [8, 64], w [16, 64]. */
    dfg_gemm_params transpose_w = {.alpha = 1, .beta = 1, .trans_b = 1};
    if (dfg_graph_input(graph, "x", DFG_F32, 2, (int64_t[]){8, 64}, &x) ||
        dfg_graph_weight(graph, "w", DFG_F32, 2, (int64_t[]){16, 64},
                         weights, &w) ||
        dfg_gemm(graph, x, w, DFG_NO_VALUE, &transpose_w, &h) ||
        dfg_relu(graph, h, &h) ||
        dfg_softmax(graph, h, 1, &y) ||
        dfg_graph_output(graph, y, "y")) {
        fprintf(stderr, "build: %s\n", dfg_last_error());
        dfg_graph_destroy(graph);
        return 1;
    }

    dfg_program *program;
    dfg_status status = dfg_compile(graph, NULL, &program);
    dfg_graph_destroy(graph);
    if (status != DFG_OK) {
        fprintf(stderr, "compile: %s\n", dfg_last_error());
        return 1;
    }
    dfg_report_summary(program, stdout);
    dfg_program_destroy(program);
    return 0;
}
