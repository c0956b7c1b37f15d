/* Einsum, composed at import time from transpose, reshape, matmul and
 * reduce_sum:
 *
 *   - each operand's subscripts are parsed ("..." expands to labels of
 *     its leading dims, aligned on the right across operands, as numpy
 *     broadcasts them); without "->" the output is the ellipsis, then
 *     the letters met once, in alphabetical order;
 *   - operands are contracted left to right, two at a time: a letter that
 *     only one of the pair has and nothing later needs is summed first;
 *     the letters both have and something later needs are batch dims,
 *     those nothing later needs are contracted, the rest are kept; each
 *     side is transposed to [batch, kept, contracted] ([batch, contracted,
 *     kept] for the right one), reshaped to [batch..., M, K] and [batch...,
 *     K, N], multiplied (matmul broadcasts the batch dims), and reshaped
 *     back to [batch..., kept of the left, kept of the right];
 *   - the last result sums the letters the output lacks and is
 *     transposed to the output's order.
 *
 * So "bij,bjk->bik" is one matmul, "bhid,bhjd->bhij" a transpose and a
 * matmul, "ij->ji" a transpose, "ij->i" a reduce_sum, "i,j->ij" a matmul
 * over K = 1. A letter repeated within one operand (a diagonal, "ii->i"),
 * a contracted letter whose sizes differ (broadcast 1 against n), empty
 * dims and non-float operands are refused with the equation in the
 * message. */
#include <stdio.h>
#include <string.h>

#include "onnx/onnx_ops.h"
#include "util/error.h"

#define EINSUM_MAX_OPERANDS 16
#define EQUATION_MAX 256

/* An operand (or an intermediate result): its entry and one label per
 * dim. Ellipsis dims get the labels '0' + position (right-aligned). */
typedef struct einsum_term {
    int32_t entry;
    int32_t rank;
    char labels[DFG_MAX_RANK + 1];
} einsum_term;

typedef struct einsum_parse {
    int32_t n_terms;
    einsum_term terms[EINSUM_MAX_OPERANDS];
    char output[DFG_MAX_RANK + 1];
} einsum_parse;

static int is_letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The subscripts text of one operand (between commas) into labels, given
 * its rank; *ellipsis gets how many dims "..." stands for (-1: none). */
static dfg_status parse_subscripts(const char *text, size_t len, int32_t rank,
                                   int32_t max_ellipsis, char *labels,
                                   int32_t *ellipsis)
{
    int32_t letters = 0;
    const char *dots = NULL;
    for (size_t i = 0; i < len; i++) {
        if (is_letter(text[i])) {
            letters++;
        } else if (!dots && i + 3 <= len && strncmp(text + i, "...", 3) == 0) {
            dots = text + i;
            i += 2;
        } else {
            return dfg_error(DFG_ERR_INVALID_ARGUMENT, "unexpected '%c' in "
                             "the subscripts '%.*s'", text[i], (int)len, text);
        }
    }
    *ellipsis = dots ? rank - letters : -1;
    if ((!dots && letters != rank) || (dots && letters > rank) ||
        *ellipsis > max_ellipsis)
        return dfg_error(DFG_ERR_SHAPE, "subscripts '%.*s' for an operand of "
                         "rank %d", (int)len, text, (int)rank);
    int32_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (text + i == dots) {
            for (int32_t e = 0; e < *ellipsis; e++)
                labels[n++] = (char)('0' + max_ellipsis - *ellipsis + e);
            i += 2;
        } else {
            labels[n++] = text[i];
        }
    }
    labels[n] = 0;
    for (int32_t i = 0; i < n; i++)
        if (strchr(labels + i + 1, labels[i]))
            return dfg_error(DFG_ERR_UNSUPPORTED, "letter '%c' repeated in the "
                             "subscripts '%.*s' (a diagonal)", labels[i],
                             (int)len, text);
    return DFG_OK;
}

/* The implicit output: the ellipsis labels, then the letters met exactly
 * once over all operands, alphabetically. */
static dfg_status implicit_output(const einsum_parse *p,
                                  int32_t max_ellipsis, char *out)
{
    int32_t n = 0;
    for (int32_t e = 0; e < max_ellipsis; e++)
        out[n++] = (char)('0' + e);
    for (int c = 'A'; c <= 'z'; c++) {
        int count = 0;
        for (int32_t t = 0; t < p->n_terms; t++)
            count += strchr(p->terms[t].labels, c) != NULL && is_letter((char)c);
        if (count == 1 && n == DFG_MAX_RANK)
            return dfg_error(DFG_ERR_SHAPE, "an implicit output of rank above "
                             "%d", DFG_MAX_RANK);
        if (count == 1)
            out[n++] = (char)c;
    }
    out[n] = 0;
    return DFG_OK;
}

/* equation (spaces removed) -> labels of every operand and the output. */
static dfg_status parse_equation(dfg_onnx_importer *im, const char *equation,
                                 const int32_t *operands, int32_t n,
                                 einsum_parse *p)
{
    const char *arrow = strstr(equation, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - equation) : strlen(equation);
    /* the longest ellipsis: rank minus letters, over the operands */
    int32_t max_ellipsis = 0, t = 0;
    for (size_t start = 0; start <= lhs_len; t++) {
        size_t end = start;
        while (end < lhs_len && equation[end] != ',')
            end++;
        if (t >= n)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT, "more subscripts than "
                             "the %d operands", (int)n);
        p->terms[t].entry = operands[t];
        p->terms[t].rank = im->entries[operands[t]].type.rank;
        int32_t letters = 0;
        for (size_t i = start; i < end; i++)
            letters += is_letter(equation[i]);
        if (end - start >= 3 && strstr(equation + start, "...") &&
            strstr(equation + start, "...") + 3 <= equation + end) {
            int32_t e = p->terms[t].rank - letters;
            max_ellipsis = e > max_ellipsis ? e : max_ellipsis;
        }
        start = end + 1;
    }
    if (t != n)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "%d subscripts for %d "
                         "operands", (int)t, (int)n);
    p->n_terms = n;
    if (max_ellipsis > DFG_MAX_RANK)
        return dfg_error(DFG_ERR_SHAPE, "an operand of rank above %d",
                         DFG_MAX_RANK);
    size_t start = 0;
    for (t = 0; t < n; t++) {
        size_t end = start;
        while (end < lhs_len && equation[end] != ',')
            end++;
        int32_t ellipsis;
        dfg_status st = parse_subscripts(equation + start, end - start,
                                         p->terms[t].rank, max_ellipsis,
                                         p->terms[t].labels, &ellipsis);
        if (st != DFG_OK)
            return st;
        start = end + 1;
    }
    if (!arrow)
        return implicit_output(p, max_ellipsis, p->output);
    const char *rhs = arrow + 2;
    einsum_term out = {.rank = 0};
    int32_t out_ellipsis;
    /* the output's "..." stands for every ellipsis label */
    size_t letters = 0;
    for (const char *c = rhs; *c; c++)
        letters += is_letter(*c);
    int32_t rank = (int32_t)letters + (strstr(rhs, "...") ? max_ellipsis : 0);
    if (rank > DFG_MAX_RANK)
        return dfg_error(DFG_ERR_SHAPE, "an output of rank %d", (int)rank);
    dfg_status st = parse_subscripts(rhs, strlen(rhs), rank, max_ellipsis,
                                     out.labels, &out_ellipsis);
    if (st != DFG_OK)
        return st;
    for (const char *c = out.labels; *c; c++) {
        int found = 0;
        for (t = 0; t < n; t++)
            found |= strchr(p->terms[t].labels, *c) != NULL;
        if (!found)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT, "output label '%c' is "
                             "in no operand", *c);
    }
    memcpy(p->output, out.labels, sizeof p->output);
    return DFG_OK;
}

static int64_t dim_of(const dfg_onnx_importer *im, const einsum_term *t,
                      char label)
{
    const char *at = strchr(t->labels, label);
    return im->entries[t->entry].type.shape[at - t->labels];
}

/* Sums the labels of t for which keep(label) is false. */
static dfg_status sum_labels(dfg_onnx_importer *im, einsum_term *t,
                             const char *keep_a, const char *keep_b)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.keepdims = 0;
    char kept[DFG_MAX_RANK + 1];
    int32_t n_kept = 0;
    for (int32_t d = 0; d < t->rank; d++) {
        char c = t->labels[d];
        if (strchr(keep_a, c) || (keep_b && strchr(keep_b, c)))
            kept[n_kept++] = c;
        else
            a.axes[a.n_axes++] = d;
    }
    kept[n_kept] = 0;
    if (a.n_axes == 0)
        return DFG_OK;
    dfg_status st = dfg_onnx_emit1(im, "reduce_sum", t->entry, &a, &t->entry);
    t->rank = n_kept;
    memcpy(t->labels, kept, sizeof kept);
    return st;
}

/* Transposes t so that its labels read `order` (a permutation of them). */
static dfg_status arrange(dfg_onnx_importer *im, einsum_term *t,
                          const char *order)
{
    if ((size_t)t->rank != strlen(order))
        return dfg_error(DFG_ERR_INTERNAL, "labels '%s' arranged as '%s'",
                         t->labels, order);
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.n_shape = t->rank;
    int identity = 1;
    for (int32_t d = 0; d < t->rank; d++) {
        a.shape[d] = strchr(t->labels, order[d]) - t->labels;
        identity &= a.shape[d] == d;
    }
    memcpy(t->labels, order, (size_t)t->rank + 1);
    return identity ? DFG_OK
                    : dfg_onnx_emit1(im, "transpose", t->entry, &a, &t->entry);
}

/* x reshaped to [dims of x's first `batch` axes, then the products of the
 * next n1 and of the last n2 axes]. */
static dfg_status fold_to_matrix(dfg_onnx_importer *im, int32_t x,
                                 int32_t batch, int32_t n1, int32_t *out)
{
    const dfg_type *t = &im->entries[x].type;
    int64_t dims[DFG_MAX_RANK], rows = 1, cols = 1;
    for (int32_t d = 0; d < batch; d++)
        dims[d] = t->shape[d];
    for (int32_t d = batch; d < t->rank; d++) {
        if (d < batch + n1)
            rows *= t->shape[d];
        else
            cols *= t->shape[d];
    }
    dims[batch] = rows;
    dims[batch + 1] = cols;
    return dfg_onnx_emit_shaped(im, "reshape", x, batch + 2, dims, out);
}

/* a (x) b over their shared labels, keeping those in `keep` (and the ones
 * only one side has, which sum_labels left only if kept). */
static dfg_status contract(dfg_onnx_importer *im, einsum_term *a,
                           einsum_term *b, const char *keep)
{
    dfg_status st = sum_labels(im, a, keep, b->labels);
    if (st == DFG_OK)
        st = sum_labels(im, b, keep, a->labels);
    if (st != DFG_OK)
        return st;
    char batch[DFG_MAX_RANK + 1] = "", a_only[DFG_MAX_RANK + 1] = "";
    char b_only[DFG_MAX_RANK + 1] = "", summed[DFG_MAX_RANK + 1] = "";
    int32_t nb = 0, na = 0, nn = 0, ns = 0;
    for (const char *c = a->labels; *c; c++) {
        if (!strchr(b->labels, *c))
            a_only[na++] = *c;
        else if (strchr(keep, *c))
            batch[nb++] = *c;
        else if (dim_of(im, a, *c) != dim_of(im, b, *c))
            return dfg_error(DFG_ERR_SHAPE, "label '%c' sums over %lld and "
                             "%lld elements", *c, (long long)dim_of(im, a, *c),
                             (long long)dim_of(im, b, *c));
        else
            summed[ns++] = *c;
    }
    for (const char *c = b->labels; *c; c++)
        if (!strchr(a->labels, *c))
            b_only[nn++] = *c;
    if (nb + 2 > DFG_MAX_RANK)
        return dfg_error(DFG_ERR_SHAPE, "%d batch dims (matmul takes at "
                         "most %d)", (int)nb, DFG_MAX_RANK - 2);
    char order_a[DFG_MAX_RANK + 1], order_b[DFG_MAX_RANK + 1];
    snprintf(order_a, sizeof order_a, "%s%s%s", batch, a_only, summed);
    snprintf(order_b, sizeof order_b, "%s%s%s", batch, summed, b_only);
    int32_t ma, mb, product;
    st = arrange(im, a, order_a);
    if (st == DFG_OK)
        st = arrange(im, b, order_b);
    if (st == DFG_OK)
        st = fold_to_matrix(im, a->entry, nb, na, &ma);
    if (st == DFG_OK)
        st = fold_to_matrix(im, b->entry, nb, ns, &mb);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "matmul", ma, mb, NULL, &product);
    if (st != DFG_OK)
        return st;
    /* [batch..., M, N] back to one dim per label */
    int64_t dims[DFG_MAX_RANK];
    const dfg_type *pt = &im->entries[product].type;
    int32_t rank = nb + na + nn;
    if (rank > DFG_MAX_RANK)
        return dfg_error(DFG_ERR_SHAPE, "an intermediate of rank %d",
                         (int)rank);
    for (int32_t d = 0; d < nb; d++)
        dims[d] = pt->shape[d];
    for (int32_t d = 0; d < na; d++)
        dims[nb + d] = dim_of(im, a, a_only[d]);
    for (int32_t d = 0; d < nn; d++)
        dims[nb + na + d] = dim_of(im, b, b_only[d]);
    snprintf(a->labels, sizeof a->labels, "%s%s%s", batch, a_only, b_only);
    a->rank = rank;
    return dfg_onnx_emit_shaped(im, "reshape", product, rank, dims, &a->entry);
}

static dfg_status check_operands(const dfg_onnx_importer *im,
                                 const int32_t *operands, int32_t n)
{
    dfg_dtype dtype = im->entries[operands[0]].type.dtype;
    for (int32_t i = 0; i < n; i++) {
        const dfg_type *t = &im->entries[operands[i]].type;
        if (!dfg_dtype_is_float(t->dtype) || t->dtype != dtype)
            return dfg_error(DFG_ERR_DTYPE, "operand %d of dtype %s (float "
                             "operands of one dtype only)", (int)i,
                             dfg_dtype_name(t->dtype));
        for (int32_t d = 0; d < t->rank; d++)
            if (t->shape[d] == 0)
                return dfg_error(DFG_ERR_UNSUPPORTED, "operand %d has an "
                                 "empty dim", (int)i);
    }
    return DFG_OK;
}

static dfg_status import_einsum(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    char text[EQUATION_MAX] = "", equation[EQUATION_MAX];
    int32_t operands[EINSUM_MAX_OPERANDS];
    int32_t n = dfg_onnx_n_inputs(im);
    if (n < 1 || n > EINSUM_MAX_OPERANDS)
        return dfg_error(DFG_ERR_UNSUPPORTED, "%d operands (1 to %d)", (int)n,
                         EINSUM_MAX_OPERANDS);
    dfg_status st = dfg_onnx_attr_string(im, "equation", text, sizeof text);
    for (int32_t i = 0; st == DFG_OK && i < n; i++)
        st = dfg_onnx_required_input(im, i, &operands[i]);
    if (st != DFG_OK)
        return st;
    size_t len = 0;
    for (const char *c = text; *c; c++)
        if (*c != ' ')
            equation[len++] = *c;
    equation[len] = 0;
    einsum_parse p;
    memset(&p, 0, sizeof p);
    st = parse_equation(im, equation, operands, n, &p);
    if (st == DFG_OK)
        st = check_operands(im, operands, n);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "equation '%s'", text);
    einsum_term acc = p.terms[0];
    for (int32_t t = 1; st == DFG_OK && t < n; t++) {
        char keep[EINSUM_MAX_OPERANDS * DFG_MAX_RANK + DFG_MAX_RANK + 1];
        size_t k = strlen(p.output);
        memcpy(keep, p.output, k);
        for (int32_t later = t + 1; later < n; later++)
            for (const char *c = p.terms[later].labels; *c; c++)
                keep[k++] = *c;
        keep[k] = 0;
        st = contract(im, &acc, &p.terms[t], keep);
    }
    if (st == DFG_OK)
        st = sum_labels(im, &acc, p.output, NULL);
    if (st == DFG_OK)
        st = arrange(im, &acc, p.output);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "equation '%s'", text);
    return dfg_onnx_bind_output(im, 0, acc.entry);
}

const dfg_onnx_op dfg_onnx_ops_einsum[] = {
    {"Einsum", import_einsum, NULL},
    {NULL, NULL, NULL},
};
