/* What the tests of the CPU backend's oneDNN steps share (test_cpu_dnnl.c,
 * test_cpu_weights.c, test_fuse*.c): the CPU backend,
 * programs mapped from a file, a conv graph, nodes, a session's output
 * (random data: tests/support/random_data.h). Every call fails the
 * running cmocka test on error. */
#ifndef DFG_TESTS_DNNL_CHECK_H
#define DFG_TESTS_DNNL_CHECK_H

#include <stdint.h>
#include "dfg/dfg.h"

const dfg_backend *cpu(void);
/* program saved and loaded back mapped, as a .dfgp is; program is
 * destroyed. */
dfg_program *mapped(dfg_program *program);
/* ||a - b|| / ||b|| */
double relative_error(const float *a, const float *b, int64_t n);

typedef struct conv_case {
    const char *what;
    int64_t n, c, h, w, m, kh, kw;
    dfg_conv2d_params params;
    int bias;
    const char *activation; /* an op applied to the conv's output, or NULL */
} conv_case;

/* x -> conv2d (w, b) -> activation -> y; w is a graph input (after x)
 * when w_as_input. */
dfg_graph *conv_graph(const conv_case *k, const float *weights,
                      const float *bias, int w_as_input, dfg_value *y);
/* The output of session run on input (malloc'd, n floats). */
float *run_session(dfg_session *session, const float *input, int64_t n);
/* One node of op on g: in (with attrs), or a and b; its output. */
dfg_value node1(dfg_graph *g, const char *op, dfg_value in,
                const dfg_attrs *attrs);
dfg_value node2(dfg_graph *g, const char *op, dfg_value a, dfg_value b);
/* p's number of steps, and of those whose op (label) is op. */
int32_t num_steps(const dfg_program *p);
int32_t steps_of_op(const dfg_program *p, const char *op);
/* One run of p in a CPU session of its own. */
void run_program(const dfg_program *p, const void *const *inputs,
                 void *const *outputs);

/* How the fusion tests compile a graph: unfused, fused on oneDNN (the
 * CPU's workspace rule), fused on the reference kernels (no rule). */
enum fuse_path { UNFUSED, FUSED_ONEDNN, FUSED_REFERENCE };
/* g compiled that way, with alignment (0: the default), then mapped(). */
dfg_program *compiled_for(const dfg_graph *g, enum fuse_path how,
                          uint64_t alignment);

#endif
