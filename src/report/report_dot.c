/* The plan as a Graphviz digraph: steps are boxes, arena tensors ellipses
 * labelled with name, type, size, offset and lifetime, and the edges run
 * producer -> tensor -> consumer. Weights and constants would crowd the
 * picture, so each step lists how many it reads and their size instead.
 * Node identifiers are generated (s<step>, t<tensor>); names only ever
 * appear escaped inside labels. Tensors are coloured by kind and grouped
 * by lifetime: each step's cluster holds the step and the tensors whose
 * lifetime starts there. */
#include "dfg/report.h"

#include <inttypes.h>
#include "util/error.h"
#include "util/memory.h"
#include "program/plan_timeline.h"
#include "program/program.h"
#include "util/number_format.h"
#include "util/text_escape.h"

static const char *kind_color(dfg_tensor_kind kind)
{
    switch (kind) {
    case DFG_TENSOR_INPUT: return "lightblue";
    case DFG_TENSOR_OUTPUT: return "palegreen";
    case DFG_TENSOR_WORKSPACE: return "lightgrey";
    case DFG_TENSOR_VIEW: return "lavender";
    default: return "lightyellow";
    }
}

static void write_step(FILE *out, const dfg_program *p, int32_t index)
{
    const dfg_program_step *step = &p->steps[index];
    char label[DFG_OP_LABEL_BYTES];
    int32_t n_weights = 0;
    int64_t weight_bytes = 0;
    for (int32_t i = 0; i < step->n_inputs; i++) {
        int32_t t = step->inputs[i];
        if (t >= 0 && t < p->n_tensors && !dfg_tensor_in_arena(p, t)) {
            n_weights++;
            weight_bytes += p->tensors[t].bytes;
        }
    }
    fprintf(out, "  s%" PRId32 " [shape=box, style=filled, "
                 "fillcolor=white, label=\"%" PRId32 ": %s\\n",
            index, index,
            dfg_op_label(step->op, &step->attrs, label, sizeof label));
    dfg_write_quoted_text(out, step->name);
    char count[32], bytes[32];
    fprintf(out, "\\n%s flops",
            dfg_format_count((uint64_t)step->flops, count, sizeof count));
    if (n_weights > 0)
        fprintf(out, "\\nweights: %" PRId32 " (%s)", n_weights,
                dfg_format_bytes((uint64_t)weight_bytes, bytes, sizeof bytes));
    fputs("\"];\n", out);
}

static void write_tensor(FILE *out, const dfg_program *p, int32_t index)
{
    const dfg_program_tensor *t = &p->tensors[index];
    char type[160], bytes[32];
    fprintf(out, "  t%" PRId32 " [shape=ellipse, style=\"filled%s\", "
                 "fillcolor=%s, label=\"",
            index, t->kind == DFG_TENSOR_WORKSPACE ? ",dashed" : "",
            kind_color(t->kind));
    dfg_write_quoted_text(out, t->name);
    fprintf(out, "\\n%s %s\\n%s @ %" PRId64 "\\nlive [%" PRId32 ",%" PRId32 "]",
            dfg_tensor_kind_name(t->kind),
            dfg_type_format(&t->type, type, sizeof type),
            dfg_format_bytes((uint64_t)t->bytes, bytes, sizeof bytes),
            t->offset, t->first_step, t->last_step);
    if (t->alias_of >= 0 && t->alias_of < p->n_tensors) {
        fputs("\\nshares bytes of ", out);
        dfg_write_quoted_text(out, p->tensors[t->alias_of].name);
        fprintf(out, " at +%" PRId64, t->offset - p->tensors[t->alias_of].offset);
    }
    fputs("\"];\n", out);
}

static void write_edges(FILE *out, const dfg_program *p, int32_t index)
{
    const dfg_program_step *step = &p->steps[index];
    for (int32_t i = 0; i < step->n_inputs; i++)
        if (dfg_tensor_in_arena(p, step->inputs[i]))
            fprintf(out, "  t%" PRId32 " -> s%" PRId32 ";\n", step->inputs[i],
                    index);
    for (int32_t i = 0; i < step->n_outputs; i++)
        if (dfg_tensor_in_arena(p, step->outputs[i]))
            fprintf(out, "  s%" PRId32 " -> t%" PRId32 ";\n", index,
                    step->outputs[i]);
    if (dfg_tensor_in_arena(p, step->workspace))
        fprintf(out, "  s%" PRId32 " -> t%" PRId32 " [style=dashed, "
                     "arrowhead=none];\n", index, step->workspace);
}

/* The arena tensors born at each step, in index order, as a CSR:
 * born[start[s] .. start[s + 1]) (a counting sort by first_step, so that
 * grouping costs O(steps + tensors), not a scan of the tensors per step).
 * NULL when out of memory; *start_out is then NULL too. */
static int32_t *tensors_by_birth(const dfg_program *p, int32_t **start_out)
{
    const dfg_allocator *a = &p->allocator;
    int32_t *start = dfg_calloc(a, (size_t)p->n_steps + 2, sizeof *start);
    int32_t *born = dfg_calloc(a, (size_t)p->n_tensors + 1, sizeof *born);
    *start_out = start;
    if (!start || !born) {
        dfg_free(a, start);
        dfg_free(a, born);
        *start_out = NULL;
        return NULL;
    }
    for (int32_t i = 0; i < p->n_tensors; i++) {
        int32_t s = p->tensors[i].first_step;
        if (dfg_tensor_in_arena(p, i) && s >= 0 && s < p->n_steps)
            start[s + 2]++;
    }
    for (int32_t s = 0; s < p->n_steps; s++)
        start[s + 2] += start[s + 1];
    /* Filling moves start[s + 1] from where s begins to where it ends. */
    for (int32_t i = 0; i < p->n_tensors; i++) {
        int32_t s = p->tensors[i].first_step;
        if (dfg_tensor_in_arena(p, i) && s >= 0 && s < p->n_steps)
            born[start[s + 1]++] = i;
    }
    return born;
}

/* Clusters name nodes declared above, so the node lines stay as they are;
 * a step that starts no tensor gets no cluster. */
static dfg_status write_lifetime_groups(FILE *out, const dfg_program *p)
{
    int32_t *start;
    int32_t *born = tensors_by_birth(p, &start);
    if (!born)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "dfg_report_dot: out of "
                         "memory for %d tensors", (int)p->n_tensors);
    for (int32_t s = 0; s < p->n_steps; s++) {
        if (start[s] == start[s + 1])
            continue;
        fprintf(out, "  subgraph cluster_born_%" PRId32 " {\n"
                     "    label=\"born at step %" PRId32 "\"; "
                     "style=\"rounded,dashed\"; color=gray70; "
                     "fontsize=9;\n    s%" PRId32 ";", s, s, s);
        for (int32_t k = start[s]; k < start[s + 1]; k++)
            fprintf(out, " t%" PRId32 ";", born[k]);
        fputs("\n  }\n", out);
    }
    dfg_free(&p->allocator, born);
    dfg_free(&p->allocator, start);
    return DFG_OK;
}

dfg_status dfg_report_dot(const dfg_program *program, FILE *out)
{
    if (!program || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_report_dot: program and stream are required");
    const dfg_plan_stats *s = &program->stats;
    char arena[32], bound[32];
    fprintf(out, "digraph plan {\n"
                 "  graph [rankdir=TB, fontname=\"Helvetica\", "
                 "labelloc=t, label=\"arena %s, lower bound %s\"];\n"
                 "  node [fontname=\"Helvetica\", fontsize=10];\n"
                 "  edge [color=gray40];\n",
            dfg_format_bytes(s->arena_bytes, arena, sizeof arena),
            dfg_format_bytes(s->lower_bound_bytes, bound, sizeof bound));
    for (int32_t i = 0; i < program->n_steps; i++)
        write_step(out, program, i);
    for (int32_t i = 0; i < program->n_tensors; i++)
        if (dfg_tensor_in_arena(program, i))
            write_tensor(out, program, i);
    dfg_status st = write_lifetime_groups(out, program);
    for (int32_t i = 0; st == DFG_OK && i < program->n_steps; i++)
        write_edges(out, program, i);
    if (st != DFG_OK)
        return st;
    fputs("}\n", out);
    if (fflush(out) != 0 || ferror(out))
        return dfg_error(DFG_ERR_IO, "dfg_report_dot: write failed");
    return DFG_OK;
}
