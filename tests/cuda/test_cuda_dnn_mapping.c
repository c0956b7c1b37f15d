/* The CUDA backend's cuDNN mapping (runtime/cuda/plan/dnn_mapping.h) on the
 * host: which convolution steps cuDNN takes, the descriptors' shapes and
 * parameters, the algorithm choice among candidates, the switch, and the
 * refusal of a fused epilogue without cuDNN; plus the step plans that
 * carry a conv2d's fused epilogue to it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/cuda/plan/dnn_mapping.h"
#include "runtime/cuda/plan/step_plan.h"
#include "tests/cuda/cuda_op_check.h"
#include "util/error.h"

/* Operands the plans only point at, aligned as the arena's. */
static _Alignas(256) char memory[8][1 << 16];

typedef struct conv_case {
    dfg_attrs attrs;
    dfg_type in[4], out;
    const void *in_at[4];
    void *out_at[1];
    dfg_kernel_args args;
    dfg_cuda_step_plan plan;
} conv_case;

/* conv2d x [2, 4, 9, 9] * w [8, 4/group, 3, 3] (+ bias, + residual) with
 * pads (top, left, bottom, right), stride 2 where asked. */
static dfg_status plan_conv(conv_case *c, dfg_op op, int stride,
                            int64_t pad_end, int n_inputs)
{
    memset(c, 0, sizeof *c);
    dfg_attrs_init(&c->attrs);
    c->attrs.strides[0] = c->attrs.strides[1] = stride;
    c->attrs.pads[0] = c->attrs.pads[1] = 1;
    c->attrs.pads[2] = c->attrs.pads[3] = pad_end;
    int64_t out_hw = (9 + 1 + pad_end - 3) / stride + 1;
    dfg_type x = type_of(DFG_F32, 4, 2, 4, 9, 9);
    dfg_type w = type_of(DFG_F32, 4, 8, 4, 3, 3);
    dfg_type y = type_of(DFG_F32, 4, 2, 8, out_hw, out_hw);
    for (int i = 0; i < 4; i++)
        c->in_at[i] = memory[i];
    c->out_at[0] = memory[4];
    c->args.op = op;
    c->args.attrs = &c->attrs;
    c->args.n_inputs = n_inputs;
    c->args.in = c->in_at;
    c->args.in_types = c->in;
    c->args.n_outputs = 1;
    c->args.out = c->out_at;
    c->args.out_types = &c->out;
    c->args.workspace = memory[5];
    c->args.workspace_bytes = sizeof memory[5];
    if (op == DFG_OP_CONV2D) {
        c->in[0] = x, c->in[1] = w, c->out = y;
        c->in[2] = type_of(DFG_F32, 1, 8);
        c->in[3] = y;
    } else {
        /* The gradients know the forward operand they make from attrs. */
        int input = op == DFG_OP_CONV2D_GRAD_INPUT;
        c->in[0] = y, c->in[1] = input ? w : x, c->out = input ? x : w;
        c->attrs.n_shape = 4;
        memcpy(c->attrs.shape, c->out.shape, 4 * sizeof c->out.shape[0]);
    }
    return dfg_cuda_step_plan_make(&c->args, 0, &c->plan);
}

static void test_forward_descriptors(void **state)
{
    (void)state;
    conv_case c;
    assert_int_equal(plan_conv(&c, DFG_OP_CONV2D, 2, 1, 3), DFG_OK);
    dfg_cuda_dnn_conv d;
    const char *why = "unset";
    assert_true(dfg_cuda_dnn_conv_make(&c.plan, &d, &why));
    assert_null(why);
    assert_int_equal(d.direction, DFG_CUDA_DNN_FORWARD);
    const int32_t x[4] = {2, 4, 9, 9}, w[4] = {8, 4, 3, 3}, y[4] = {2, 8, 5, 5};
    assert_memory_equal(d.x, x, sizeof x);
    assert_memory_equal(d.w, w, sizeof w);
    assert_memory_equal(d.y, y, sizeof y);
    assert_int_equal(d.pad[0], 1);
    assert_int_equal(d.stride[1], 2);
    assert_int_equal(d.dilation[0], 1);
    assert_int_equal(d.groups, 1);
    assert_true(d.has_bias);
    assert_false(d.relu || d.residual || d.fused);
}

/* An end pad the output never reaches (stride 2: 1 or 2 give 5 rows) is
 * the symmetric pad's; one that adds an output row is not. */
static void test_padding(void **state)
{
    (void)state;
    conv_case c;
    dfg_cuda_dnn_conv d;
    const char *why;
    assert_int_equal(plan_conv(&c, DFG_OP_CONV2D, 2, 2, 2), DFG_OK);
    assert_true(dfg_cuda_dnn_conv_make(&c.plan, &d, &why));
    assert_int_equal(d.y[2], 5);
    assert_int_equal(plan_conv(&c, DFG_OP_CONV2D, 1, 2, 2), DFG_OK);
    assert_false(dfg_cuda_dnn_conv_make(&c.plan, &d, &why));
    assert_non_null(strstr(why, "symmetric"));
}

static void test_gradients(void **state)
{
    (void)state;
    conv_case c;
    dfg_cuda_dnn_conv d;
    const char *why;
    assert_int_equal(plan_conv(&c, DFG_OP_CONV2D_GRAD_INPUT, 1, 1, 2), DFG_OK);
    assert_true(dfg_cuda_dnn_conv_make(&c.plan, &d, &why));
    assert_int_equal(d.direction, DFG_CUDA_DNN_BACKWARD_DATA);
    assert_int_equal(d.x[1], 4);
    assert_int_equal(d.y[1], 8);
    /* dx planned over dy: cuDNN reads dy while it writes dx. */
    c.out_at[0] = (void *)c.in_at[0];
    assert_false(dfg_cuda_dnn_conv_make(&c.plan, &d, &why));
    assert_non_null(strstr(why, "dx"));
    assert_int_equal(plan_conv(&c, DFG_OP_CONV2D_GRAD_WEIGHT, 2, 1, 2), DFG_OK);
    assert_true(dfg_cuda_dnn_conv_make(&c.plan, &d, &why));
    assert_int_equal(d.direction, DFG_CUDA_DNN_BACKWARD_FILTER);
    assert_int_equal(d.w[0], 8);
    assert_int_equal(d.stride[0], 2);
}

static void test_dtypes(void **state)
{
    (void)state;
    conv_case c;
    dfg_cuda_dnn_conv d;
    const char *why;
    assert_int_equal(plan_conv(&c, DFG_OP_CONV2D, 1, 1, 3), DFG_OK);
    c.in[2].dtype = DFG_F16;
    assert_false(dfg_cuda_dnn_conv_make(&c.plan, &d, &why));
    assert_non_null(strstr(why, "bias"));
    c.in[2].dtype = DFG_F32;
    c.in[1].dtype = DFG_F16;
    assert_false(dfg_cuda_dnn_conv_make(&c.plan, &d, &why));
    assert_non_null(strstr(why, "dtypes"));
}

/* The epilogues cuDNN fuses, and the step plans that carry them. */
static void test_epilogue(void **state)
{
    (void)state;
    dfg_attrs a;
    dfg_attrs_init(&a);
    int relu, residual;
    assert_false(dfg_cuda_conv_epilogue_make(&a, &relu, &residual));
    a.n_post_ops = 2;
    a.post_ops[0] = DFG_POST_SUM;
    a.post_ops[1] = DFG_POST_RELU;
    assert_true(dfg_cuda_conv_epilogue_make(&a, &relu, &residual));
    assert_true(relu && residual);
    a.post_ops[0] = DFG_POST_RELU;
    a.post_ops[1] = DFG_POST_SUM; /* the sum comes first or not at all */
    assert_false(dfg_cuda_conv_epilogue_make(&a, &relu, &residual));
    a.n_post_ops = 1;
    assert_true(dfg_cuda_conv_epilogue_make(&a, &relu, &residual));
    assert_true(relu && !residual);
    a.post_ops[0] = DFG_POST_CLIP;
    assert_false(dfg_cuda_conv_epilogue_make(&a, &relu, &residual));

    conv_case c;
    assert_int_equal(plan_conv(&c, DFG_OP_CONV2D, 1, 1, 4), DFG_OK);
    c.attrs.n_post_ops = 2;
    c.attrs.post_ops[0] = DFG_POST_SUM;
    c.attrs.post_ops[1] = DFG_POST_RELU;
    assert_int_equal(dfg_cuda_step_plan_make(&c.args, 0, &c.plan), DFG_OK);
    assert_true(c.plan.residual && c.plan.u.conv.relu);
    /* The backend's own path: the bias in the epilogue, after the
     * product accumulated onto the residual. */
    assert_true(c.plan.epilogue.bias);
    assert_int_equal(c.plan.epilogue.n_ops, 1);
    dfg_cuda_dnn_conv d;
    const char *why;
    assert_true(dfg_cuda_dnn_conv_make(&c.plan, &d, &why));
    assert_true(d.fused && d.relu && d.residual && d.has_bias);
    /* A residual partly over the output is refused by the plan. */
    c.in_at[3] = memory[4] + 64;
    assert_int_equal(dfg_cuda_step_plan_make(&c.args, 0, &c.plan),
                     DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "residual"));
    c.in_at[3] = memory[4];
    /* An epilogue cuDNN does not fuse: cuDNN adds the bias and the
     * residual, the epilogue kernel the clip. */
    c.attrs.post_ops[1] = DFG_POST_CLIP;
    assert_int_equal(dfg_cuda_step_plan_make(&c.args, 0, &c.plan), DFG_OK);
    assert_true(c.plan.residual && !c.plan.u.conv.relu);
    assert_true(dfg_cuda_dnn_conv_make(&c.plan, &d, &why));
    assert_true(d.residual && !d.relu && !d.fused);
    /* A sum after another post-op is refused by name. */
    c.attrs.post_ops[0] = DFG_POST_CLIP;
    c.attrs.post_ops[1] = DFG_POST_SUM;
    assert_int_equal(dfg_cuda_step_plan_make(&c.args, 0, &c.plan),
                     DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "a sum comes first"));
    /* The plain conv has no epilogue. */
    assert_int_equal(plan_conv(&c, DFG_OP_CONV2D, 1, 1, 3), DFG_OK);
    assert_false(c.plan.residual || c.plan.epilogue.n_ops ||
                 c.plan.epilogue.bias);
}

static void test_pick(void **state)
{
    (void)state;
    const dfg_cuda_dnn_candidate c[] = {
        {.algo = 6, .ok = 1, .deterministic = 0, .workspace_bytes = 0},
        {.algo = 1, .ok = 1, .deterministic = 1, .tensor_math = 1},
        {.algo = 5, .ok = 1, .deterministic = 1, .workspace_bytes = 1 << 20},
        {.algo = 7, .ok = 0, .deterministic = 1},
        {.algo = 0, .ok = 1, .deterministic = 1, .workspace_bytes = 4096},
    };
    assert_int_equal(dfg_cuda_dnn_pick(c, 5, 1 << 20, 0, -1), 2);
    assert_int_equal(dfg_cuda_dnn_pick(c, 5, 65536, 0, -1), 4);
    assert_int_equal(dfg_cuda_dnn_pick(c, 5, 65536, 1, -1), 1);
    assert_int_equal(dfg_cuda_dnn_pick(c, 5, 1 << 20, 0, 0), 4);
    assert_int_equal(dfg_cuda_dnn_pick(c, 5, 1024, 0, -1), -1);
    assert_int_equal(dfg_cuda_dnn_pick(c, 0, 1 << 20, 1, -1), -1);
}

static void test_switch(void **state)
{
    (void)state;
    assert_true(dfg_cuda_dnn_enabled(NULL));
    assert_true(dfg_cuda_dnn_enabled("1"));
    assert_false(dfg_cuda_dnn_enabled("0"));
    assert_false(dfg_cuda_dnn_enabled("off"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward_descriptors),
        cmocka_unit_test(test_padding),
        cmocka_unit_test(test_gradients),
        cmocka_unit_test(test_dtypes),
        cmocka_unit_test(test_epilogue),
        cmocka_unit_test(test_pick),
        cmocka_unit_test(test_switch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
