/* Validation of a decoded program: every fact the executor and the
 * kernels rely on without checking, re-derived from the op table rather
 * than trusted from the file. A program that passes can be run without
 * out-of-bounds accesses: each operand's bytes match its type and lie
 * inside its region, and each step's operands satisfy its op's shape
 * rule, so kernels see the shapes they were written for. */
#include <string.h>
#include "util/error.h"
#include "util/memory.h"
#include "ir/layout_rule.h"
#include "program/program_format.h"
#include "program/program_dataflow.h"
#include "program/program_views.h"

#define INVALID(...) dfg_error(DFG_ERR_FORMAT, "program file: " __VA_ARGS__)

/* A name field: letters, digits and '_', then NULs. */
static int name_valid(const char field[DFG_PROGRAM_RULE_NAME_BYTES])
{
    size_t n = strnlen(field, DFG_PROGRAM_RULE_NAME_BYTES);
    int named = n < DFG_PROGRAM_RULE_NAME_BYTES;
    for (size_t i = 0; named && i < DFG_PROGRAM_RULE_NAME_BYTES; i++) {
        char c = field[i];
        named = i < n ? (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                            c == '_'
                      : c == 0;
    }
    return named;
}

static dfg_status validate_stats(const dfg_program *p)
{
    const dfg_plan_stats *s = &p->stats;
    if (s->n_steps != p->n_steps || s->n_tensors != p->n_tensors)
        return INVALID("the plan statistics count %d steps and %d tensors, "
                       "the program has %d and %d", (int)s->n_steps,
                       (int)s->n_tensors, (int)p->n_steps, (int)p->n_tensors);
    if (s->arena_bytes != (uint64_t)p->region_bytes[DFG_REGION_ARENA] ||
        s->weights_bytes != (uint64_t)p->region_bytes[DFG_REGION_WEIGHTS])
        return INVALID("the plan statistics' region sizes do not match the "
                       "regions");
    if ((unsigned)s->planner >= DFG_PLANNER_COUNT)
        return INVALID("unknown planner %d", (int)s->planner);
    if (s->alignment == 0 || (s->alignment & (s->alignment - 1)) != 0 ||
        (s->verified != 0 && s->verified != 1))
        return INVALID("alignment %llu or verified flag %d is invalid",
                       (unsigned long long)s->alignment, s->verified);
    if (!name_valid(p->workspace_rule))
        return INVALID("the workspace rule's backend name is malformed");
    if (!name_valid(p->layout_isa))
        return INVALID("the layouts' CPU features are malformed");
    if ((p->allow_tf32 != 0 && p->allow_tf32 != 1) ||
        (p->half_products != DFG_F32 && p->half_products != DFG_F16 &&
         p->half_products != DFG_BF16) ||
        (p->allow_tf32 && p->half_products != DFG_F32))
        return INVALID("the plan's math flags hold unknown bits");
    if (s->tiled_regions < 0 || s->tiled_regions > 64 || s->tiles < 0 ||
        s->tiles > 64 || s->tiling_extra_flops < 0 ||
        (s->tiled_regions == 0) != (s->tiles == 0))
        return INVALID("the plan's tiling (%d regions, %d bands, %lld extra "
                       "flops) is invalid", (int)s->tiled_regions,
                       (int)s->tiles, (long long)s->tiling_extra_flops);
    return DFG_OK;
}

/* Blocked tensors only between the CPU backend's steps, which know the
 * CPU features they were chosen for; nhwc ones only in a 16-bit program
 * (the CUDA backend's channels-last convolutions: a CPU session refuses
 * it); never both; the graph's inputs and outputs are plain (the caller's
 * bytes are NCHW). Each step's operands are checked against the layout
 * rule in validate_rules. */
static dfg_status validate_layouts(const dfg_program *p)
{
    int32_t blocked = -1, nhwc = -1;
    for (int32_t i = 0; i < p->n_tensors; i++) {
        int32_t layout = p->tensors[i].type.layout;
        if (layout == DFG_LAYOUT_NHWC && nhwc < 0)
            nhwc = i;
        else if (layout != DFG_LAYOUT_PLAIN && layout != DFG_LAYOUT_NHWC &&
                 blocked < 0)
            blocked = i;
    }
    if (blocked < 0 && nhwc < 0)
        return DFG_OK;
    if (blocked >= 0 && nhwc >= 0)
        return INVALID("tensor %d '%s' is nhwc and tensor %d '%s' blocked: "
                       "a program has one kind", (int)nhwc,
                       p->tensors[nhwc].name, (int)blocked,
                       p->tensors[blocked].name);
    if (blocked >= 0 &&
        (strcmp(p->workspace_rule, "cpu") != 0 || p->layout_isa[0] == 0))
        return INVALID("tensor %d '%s' is laid out %s, but the program "
                       "records no CPU backend rule and CPU features for it",
                       (int)blocked, p->tensors[blocked].name,
                       dfg_layout_name(p->tensors[blocked].type.layout));
    if (nhwc >= 0 && p->half_products == DFG_F32)
        return INVALID("tensor %d '%s' is nhwc, which only a 16-bit "
                       "program (f16 or bf16 products) holds", (int)nhwc,
                       p->tensors[nhwc].name);
    for (int32_t k = 0; k < p->n_inputs + p->n_outputs; k++) {
        int32_t i = k < p->n_inputs ? p->inputs[k]
                                    : p->outputs[k - p->n_inputs];
        if (p->tensors[i].type.layout != DFG_LAYOUT_PLAIN)
            return INVALID("graph %s tensor %d '%s' is not plain",
                           k < p->n_inputs ? "input" : "output", (int)i,
                           p->tensors[i].name);
    }
    return DFG_OK;
}

static dfg_status validate_tensor(const dfg_program *p, int32_t i)
{
    const dfg_program_tensor *t = &p->tensors[i];
    char type[128];
    int64_t bytes = dfg_type_bytes(&t->type);
    if (bytes < 0 || bytes != t->bytes)
        return INVALID("tensor %d '%s' of type %s: %lld bytes recorded, the "
                       "type needs %lld", (int)i, t->name,
                       dfg_type_format(&t->type, type, sizeof type),
                       (long long)t->bytes, (long long)bytes);
    int64_t region = p->region_bytes[t->region];
    if (t->offset < 0 || t->offset > region || t->bytes > region - t->offset)
        return INVALID("tensor %d '%s': [%lld, +%lld) lies outside its "
                       "region of %lld bytes", (int)i, t->name,
                       (long long)t->offset, (long long)t->bytes,
                       (long long)region);
    /* Kernels read elements with plain loads, from a mapped file too: each
     * tensor starts on a multiple of its element size (a compiled plan
     * aligns far more). */
    if (t->offset % (int64_t)dfg_dtype_size(t->type.dtype) != 0)
        return INVALID("tensor %d '%s': offset %lld is not a multiple of its "
                       "%zu-byte elements", (int)i, t->name,
                       (long long)t->offset, dfg_dtype_size(t->type.dtype));
    int is_data = t->kind == DFG_TENSOR_WEIGHT || t->kind == DFG_TENSOR_CONSTANT;
    if (is_data && t->region != DFG_REGION_WEIGHTS)
        return INVALID("tensor %d '%s': a %s outside the weights region",
                       (int)i, t->name, dfg_tensor_kind_name(t->kind));
    if (t->first_step < -1 || t->first_step > p->n_steps ||
        t->last_step < -1 || t->last_step > p->n_steps)
        return INVALID("tensor %d '%s': lifetime [%d, %d] outside the %d "
                       "steps", (int)i, t->name, (int)t->first_step,
                       (int)t->last_step, (int)p->n_steps);
    if (t->alias_of < -1 || t->alias_of >= p->n_tensors || t->alias_of == i)
        return INVALID("tensor %d '%s': alias_of %d is not another tensor",
                       (int)i, t->name, (int)t->alias_of);
    if (t->alias_of >= 0 && p->tensors[t->alias_of].region != t->region)
        return INVALID("tensor %d '%s' aliases tensor %d in another region",
                       (int)i, t->name, (int)t->alias_of);
    return DFG_OK;
}

/* alias_of links must end at a tensor that owns its bytes. Each tensor is
 * walked over once (marks: 0 unseen, 1 on the current path, 2 settled), so
 * a long hostile chain costs linear time. */
static dfg_status validate_alias_chains(const dfg_program *p)
{
    uint8_t *mark = dfg_calloc(&p->allocator, (size_t)p->n_tensors + 1, 1);
    if (!mark)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory checking aliases");
    dfg_status status = DFG_OK;
    for (int32_t i = 0; i < p->n_tensors && status == DFG_OK; i++) {
        int32_t t = i;
        while (t >= 0 && mark[t] == 0) {
            mark[t] = 1;
            t = p->tensors[t].alias_of;
        }
        if (t >= 0 && mark[t] == 1)
            status = INVALID("tensor %d '%s': its alias_of links form a cycle",
                             (int)i, p->tensors[i].name);
        for (t = i; t >= 0 && mark[t] == 1; t = p->tensors[t].alias_of)
            mark[t] = 2;
    }
    dfg_free(&p->allocator, mark);
    return status;
}

/* The runtime writes graph inputs, step outputs and workspaces: they must
 * be in the arena, never in the shared read-only weights (a skipped view
 * step's output may lie there: nothing writes it). */
static dfg_status validate_written(const dfg_program *p, int32_t tensor,
                                   const char *what, int32_t index)
{
    if (tensor < 0 || tensor >= p->n_tensors)
        return INVALID("%s %d refers to tensor %d of %d", what, (int)index,
                       (int)tensor, (int)p->n_tensors);
    if (p->tensors[tensor].region != DFG_REGION_ARENA)
        return INVALID("%s %d: tensor '%s' is written at run time but lies "
                       "in the weights region", what, (int)index,
                       p->tensors[tensor].name);
    return DFG_OK;
}

static dfg_status validate_io(const dfg_program *p)
{
    for (int32_t i = 0; i < p->n_inputs; i++) {
        dfg_status status = validate_written(p, p->inputs[i], "input", i);
        if (status != DFG_OK)
            return status;
    }
    for (int32_t i = 0; i < p->n_outputs; i++)
        if (p->outputs[i] < 0 || p->outputs[i] >= p->n_tensors)
            return INVALID("output %d refers to tensor %d of %d", (int)i,
                           (int)p->outputs[i], (int)p->n_tensors);
    return DFG_OK;
}

static dfg_status validate_operands(const dfg_program *p, int32_t s,
                                    dfg_type *in_types)
{
    const dfg_program_step *st = &p->steps[s];
    const dfg_op_info *info = dfg_op_get(st->op);
    if (st->n_inputs < info->min_inputs ||
        (info->max_inputs >= 0 && st->n_inputs > info->max_inputs))
        return INVALID("step %d '%s' (%s): %d inputs, the op takes %d to %d",
                       (int)s, st->name, info->name, (int)st->n_inputs,
                       (int)info->min_inputs, (int)info->max_inputs);
    if (info->outputs ? st->n_outputs != info->outputs : st->n_outputs < 1)
        return INVALID("step %d '%s' (%s): %d outputs", (int)s, st->name,
                       info->name, (int)st->n_outputs);
    for (int32_t j = 0; j < st->n_inputs; j++) {
        int32_t t = st->inputs[j];
        if (t == -1 && j >= info->min_inputs) {
            memset(&in_types[j], 0, sizeof in_types[j]);
            in_types[j].rank = -1;
            continue;
        }
        if (t < 0 || t >= p->n_tensors)
            return INVALID("step %d '%s' (%s): input %d refers to tensor %d "
                           "of %d", (int)s, st->name, info->name, (int)j,
                           (int)t, (int)p->n_tensors);
        in_types[j] = p->tensors[t].type;
    }
    if (!(info->input0_types & (1u << in_types[0].dtype)))
        return INVALID("step %d '%s' (%s): input 0 of dtype %s is not "
                       "accepted", (int)s, st->name, info->name,
                       dfg_dtype_name(in_types[0].dtype));
    for (int32_t j = 0; j < st->n_outputs; j++)
        if (st->outputs[j] < 0 || st->outputs[j] >= p->n_tensors)
            return INVALID("step %d '%s' (%s): output %d refers to tensor %d "
                           "of %d", (int)s, st->name, info->name, (int)j,
                           (int)st->outputs[j], (int)p->n_tensors);
    if (st->workspace != -1) {
        dfg_status status = validate_written(p, st->workspace, "workspace", 0);
        if (status != DFG_OK)
            return dfg_error_prefix(status, "step %d '%s' (%s)", (int)s,
                                    st->name, info->name);
    }
    if (st->flops < 0)
        return INVALID("step %d '%s': negative FLOP count", (int)s, st->name);
    return DFG_OK;
}

/* What every kernel assumes about its operands' bytes: outputs lie in
 * the arena and overlap no input, no other output and no workspace. Two
 * exceptions are planned on purpose: an in-place output over an input's
 * exact bytes (for ops that may run in place), and a view step's output
 * inside its input, which the executor skips. */
static dfg_status validate_step_memory(const dfg_program *p, int32_t s,
                                       const dfg_type *in_types,
                                       const dfg_type *out_types)
{
    const dfg_program_step *st = &p->steps[s];
    const dfg_op_info *info = dfg_op_get(st->op);
    if (dfg_program_step_is_view(p, st))
        return DFG_OK;
    const dfg_program_tensor *ws =
        st->workspace >= 0 ? &p->tensors[st->workspace] : NULL;
    for (int32_t k = 0; ws && k < st->n_inputs; k++)
        if (st->inputs[k] >= 0 &&
            dfg_program_tensors_overlap(ws, &p->tensors[st->inputs[k]]))
            return INVALID("step %d '%s' (%s): the workspace overlaps input "
                           "%d", (int)s, st->name, info->name, (int)k);
    /* The all-reduce steps read and hand on their bucket's own bytes by
     * design (passes/training/buckets.c); the plan verifier's bucket check, which
     * the loader runs too, checks that layout exactly. */
    int shares_bucket = st->op == DFG_OP_ALL_REDUCE_START ||
                        st->op == DFG_OP_ALL_REDUCE_WAIT;
    for (int32_t j = 0; j < st->n_outputs; j++) {
        const dfg_program_tensor *out = &p->tensors[st->outputs[j]];
        dfg_status status = validate_written(p, st->outputs[j], "output", j);
        if (status != DFG_OK)
            return dfg_error_prefix(status, "step %d '%s' (%s)", (int)s,
                                    st->name, info->name);
        for (int32_t k = 0; k < st->n_inputs; k++) {
            if (st->inputs[k] < 0)
                continue;
            const dfg_program_tensor *in = &p->tensors[st->inputs[k]];
            int in_place = in->region == out->region &&
                           in->offset == out->offset &&
                           in->bytes == out->bytes &&
                           dfg_op_may_write_over_input(
                               st->op, &st->attrs, in_types, st->n_inputs,
                               out_types, st->n_outputs, k);
            if (!in_place && !shares_bucket &&
                dfg_program_tensors_overlap(out, in))
                return INVALID("step %d '%s' (%s): output %d ('%s') overlaps "
                               "input %d ('%s')", (int)s, st->name, info->name,
                               (int)j, out->name, (int)k, in->name);
        }
        for (int32_t k = 0; k < j; k++)
            if (dfg_program_tensors_overlap(out, &p->tensors[st->outputs[k]]))
                return INVALID("step %d '%s' (%s): outputs %d and %d overlap",
                               (int)s, st->name, info->name, (int)k, (int)j);
        if (ws && dfg_program_tensors_overlap(out, ws))
            return INVALID("step %d '%s' (%s): output %d overlaps the "
                           "workspace", (int)s, st->name, info->name, (int)j);
    }
    return DFG_OK;
}

/* 1 if step's output 0 lies in exactly its input 0's bytes. */
static int writes_over_input0(const dfg_program *p, const dfg_program_step *st)
{
    if (st->n_inputs < 1 || st->n_outputs < 1 || st->inputs[0] < 0)
        return 0;
    const dfg_program_tensor *in = &p->tensors[st->inputs[0]];
    const dfg_program_tensor *out = &p->tensors[st->outputs[0]];
    return in->region == out->region && in->offset == out->offset &&
           in->bytes == out->bytes;
}

/* Re-runs the op's shape and workspace rules on the step's input types. */
static dfg_status validate_rules(const dfg_program *p, int32_t s,
                                 const dfg_type *in_types, dfg_type *out_types)
{
    const dfg_program_step *st = &p->steps[s];
    const dfg_op_info *info = dfg_op_get(st->op);
    memset(out_types, 0, (size_t)st->n_outputs * sizeof *out_types);
    dfg_status status = info->shape(&st->attrs, in_types, st->n_inputs,
                                    out_types, st->n_outputs);
    if (status != DFG_OK)
        return dfg_error_prefix(DFG_ERR_FORMAT,
                                "program file: step %d '%s' (%s)", (int)s,
                                st->name, info->name);
    char want[128], got[128];
    for (int32_t j = 0; j < st->n_outputs; j++) {
        const dfg_type *recorded = &p->tensors[st->outputs[j]].type;
        if (!dfg_type_equal(recorded, &out_types[j]))
            return INVALID("step %d '%s' (%s): output %d is %s, the shape "
                           "rule gives %s", (int)s, st->name, info->name,
                           (int)j, dfg_type_format(recorded, got, sizeof got),
                           dfg_type_format(&out_types[j], want, sizeof want));
        out_types[j] = *recorded; /* with its layout */
    }
    status = dfg_layout_check(st->op, &st->attrs, in_types, st->n_inputs,
                              out_types, st->n_outputs);
    if (status != DFG_OK)
        return dfg_error_prefix(DFG_ERR_FORMAT,
                                "program file: step %d '%s' (%s)", (int)s,
                                st->name, info->name);
    int64_t needed = info->workspace
                         ? info->workspace(&st->attrs, in_types, st->n_inputs,
                                           out_types, st->n_outputs)
                         : 0;
    int64_t planned = st->workspace >= 0 ? p->tensors[st->workspace].bytes : 0;
    /* Written over input 0 by a kernel with a workspace of its own for
     * that (dfg_op_in_place_workspace): exactly that one, no library's. */
    int64_t in_place = writes_over_input0(p, st)
                           ? dfg_op_in_place_workspace(
                                 st->op, &st->attrs, in_types, st->n_inputs,
                                 out_types, st->n_outputs, 0)
                           : -1;
    if (in_place >= 0 && planned != in_place)
        return INVALID("step %d '%s' (%s): writes over input 0 with a "
                       "workspace of %lld bytes, its kernel needs %lld",
                       (int)s, st->name, info->name, (long long)planned,
                       (long long)in_place);
    if (in_place >= 0)
        return DFG_OK;
    /* Planned bytes beyond the op's own (from a 256-byte boundary) are
     * BLAS scratch for a device backend (blas_workspace_bytes). */
    int64_t blas = needed >= 0 ? planned - dfg_align_up(needed, 256) : 0;
    if (blas > 0 && (uint64_t)blas <= DFG_MAX_BLAS_WORKSPACE &&
        planned == dfg_step_workspace_bytes(st->op, needed, blas))
        return DFG_OK;
    /* A conv's own scratch may be planned smaller, down to the least its
     * kernels chunk with (conv_geometry.h). */
    if (needed >= 0 && planned < needed &&
        planned >= dfg_op_least_workspace(st->op, &st->attrs, in_types,
                                          st->n_inputs, out_types,
                                          st->n_outputs))
        return DFG_OK;
    if (needed < 0 || needed != planned)
        return INVALID("step %d '%s' (%s): workspace of %lld bytes, the op "
                       "needs %lld", (int)s, st->name, info->name,
                       (long long)planned, (long long)needed);
    return DFG_OK;
}

static dfg_status validate_steps(const dfg_program *p)
{
    /* Scratch for one step's types: inputs are bounded by the loader, and
     * outputs by DFG_MAX_SPLIT. */
    int32_t max_inputs = 1;
    for (int32_t s = 0; s < p->n_steps; s++)
        if (p->steps[s].n_inputs > max_inputs)
            max_inputs = p->steps[s].n_inputs;
    dfg_type *types = dfg_calloc(&p->allocator,
                                 (size_t)max_inputs + DFG_MAX_SPLIT + 1,
                                 sizeof *types);
    if (!types)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory checking steps");
    dfg_status status = DFG_OK;
    for (int32_t s = 0; s < p->n_steps && status == DFG_OK; s++) {
        status = validate_operands(p, s, types);
        if (status == DFG_OK)
            status = validate_rules(p, s, types, types + max_inputs);
        if (status == DFG_OK)
            status = validate_step_memory(p, s, types, types + max_inputs);
    }
    dfg_free(&p->allocator, types);
    return status;
}

dfg_status dfg_program_validate(const dfg_program *p)
{
    dfg_status status = validate_stats(p);
    for (int32_t i = 0; i < p->n_tensors && status == DFG_OK; i++)
        status = validate_tensor(p, i);
    if (status == DFG_OK)
        status = validate_alias_chains(p);
    if (status == DFG_OK)
        status = validate_io(p);
    if (status == DFG_OK)
        status = validate_layouts(p);
    if (status == DFG_OK)
        status = validate_steps(p);
    if (status == DFG_OK)
        status = dfg_program_check_dataflow(p);
    return status;
}
