/* The arena as an SVG picture: x is the step, y the offset (0 at the
 * bottom), one rectangle per arena tensor spanning its lifetime and its
 * bytes, coloured by kind. Tensors that share another's bytes (views, in
 * place outputs) are drawn over their owner, translucent and dashed. The
 * live-bytes curve and the lower bound use the same y scale, so the gap
 * between the curve's peak and the arena's top is what the placement
 * wastes.
 *
 * To stay readable at a thousand tensors the strokes are thin and do not
 * scale with zoom, and names are written inside rectangles only for small
 * models; every rectangle carries a <title> (the hover text). Coordinates
 * are written with integer arithmetic, never printf's %f, so the output
 * does not depend on the C locale. */
#include "dfg/report.h"

#include <inttypes.h>
#include <math.h>
#include "report/report_svg.h"
#include "util/error.h"
#include "util/number_format.h"
#include "util/xml_text.h"

enum {
    MARGIN_LEFT = 84,
    MARGIN_RIGHT = 130,
    MARGIN_TOP = 44,
    MARGIN_BOTTOM = 52,
    PLOT_HEIGHT = 520,
    MIN_PLOT_WIDTH = 640,
    MAX_PLOT_WIDTH = 1800,
    PX_PER_STEP = 12,
    /* Names inside rectangles only up to this many arena tensors. */
    MAX_LABELLED_TENSORS = 80,
    /* Longest name written inside a rectangle (fused names run to
     * hundreds of characters; the hover text holds them whole). */
    MAX_LABEL_CHARS = 40,
    /* Thinner outlines beyond this many. */
    MANY_TENSORS = 300,
};

typedef struct geometry {
    double plot_width;
    double step_width;     /* pixels per step */
    double bytes_scale;    /* pixels per byte */
    int64_t extent;        /* bytes at the top of the plot */
    int32_t columns;       /* steps drawn, at least 1 */
} geometry;

/* Every selector is scoped to the picture's own element (svg.dfg-plan):
 * inline in an HTML page or a notebook, an SVG's <style> applies to the
 * whole document, and a bare `text` or `.title` would restyle the host. */
static const char style[] =
    "<style>\n"
    "svg.dfg-plan text { font: 11px sans-serif; fill: #222; }\n"
    "svg.dfg-plan .title { font-size: 13px; font-weight: bold; }\n"
    "svg.dfg-plan .tensor { stroke: #fff; "
    "vector-effect: non-scaling-stroke; }\n"
    "svg.dfg-plan .tensor.alias, svg.dfg-plan .swatch.alias { "
    "fill-opacity: 0.45; stroke: #333; "
    "stroke-dasharray: 3 2; }\n"
    "svg.dfg-plan .tensor:hover, svg.dfg-plan .tensor.hl { stroke: #000; "
    "stroke-width: 1.5; }\n"
    "svg.dfg-plan .k-input { fill: #4e79a7; } "
    "svg.dfg-plan .k-output { fill: #59a14f; }\n"
    "svg.dfg-plan .k-activation { fill: #f1ce63; } "
    "svg.dfg-plan .k-workspace { fill: #a0a0a0; }\n"
    "svg.dfg-plan .k-view { fill: #b07aa1; } "
    "svg.dfg-plan .k-other { fill: #e15759; }\n"
    "svg.dfg-plan .label { font-size: 9px; pointer-events: none; }\n"
    "svg.dfg-plan .level { paint-order: stroke; stroke: #fff; "
    "stroke-width: 3px; pointer-events: none; }\n"
    "svg.dfg-plan .live-bytes { fill: none; stroke: #1f1f1f; "
    "stroke-width: 1.5; vector-effect: non-scaling-stroke; }\n"
    "svg.dfg-plan .lower-bound { stroke: #d62728; stroke-width: 1.2; "
    "stroke-dasharray: 6 4; vector-effect: non-scaling-stroke; }\n"
    "svg.dfg-plan .arena-top { stroke: #555; stroke-dasharray: 2 3; "
    "vector-effect: non-scaling-stroke; }\n"
    "svg.dfg-plan .axis { stroke: #333; } "
    "svg.dfg-plan .grid { stroke: #e4e4e4; }\n"
    "</style>\n";

/* A coordinate with one decimal, locale-independent. */
static void num(FILE *out, double value)
{
    long long tenths = llround(value * 10.0);
    if (tenths < 0) {
        fputc('-', out);
        tenths = -tenths;
    }
    if (tenths % 10 == 0)
        fprintf(out, "%lld", tenths / 10);
    else
        fprintf(out, "%lld.%lld", tenths / 10, tenths % 10);
}

static double x_of(const geometry *g, int32_t step)
{
    return MARGIN_LEFT + step * g->step_width;
}

static double y_of(const geometry *g, int64_t bytes)
{
    return MARGIN_TOP + PLOT_HEIGHT - (double)bytes * g->bytes_scale;
}

static geometry layout(const dfg_plan_timeline *t)
{
    geometry g;
    g.columns = t->n_steps > 0 ? t->n_steps : 1;
    g.plot_width = (double)g.columns * PX_PER_STEP;
    if (g.plot_width < MIN_PLOT_WIDTH)
        g.plot_width = MIN_PLOT_WIDTH;
    if (g.plot_width > MAX_PLOT_WIDTH)
        g.plot_width = MAX_PLOT_WIDTH;
    g.step_width = g.plot_width / g.columns;
    g.extent = t->extent_bytes > 0 ? t->extent_bytes : 1;
    g.bytes_scale = (double)PLOT_HEIGHT / (double)g.extent;
    return g;
}

/* 1, 2 or 5 times a power of ten: the smallest such step that cuts
 * `range` into at most `max_ticks` parts. */
static int64_t nice_step(int64_t range, int64_t max_ticks)
{
    int64_t step = 1;
    for (;;) {
        static const int64_t factors[] = {1, 2, 5};
        for (int i = 0; i < 3; i++)
            if (range / (step * factors[i]) < max_ticks)
                return step * factors[i];
        if (step > INT64_MAX / 100)
            return step;
        step *= 10;
    }
}

static const char *kind_class(dfg_tensor_kind kind)
{
    switch (kind) {
    case DFG_TENSOR_INPUT: return "k-input";
    case DFG_TENSOR_OUTPUT: return "k-output";
    case DFG_TENSOR_ACTIVATION: return "k-activation";
    case DFG_TENSOR_WORKSPACE: return "k-workspace";
    case DFG_TENSOR_VIEW: return "k-view";
    default: return "k-other";
    }
}

/* Byte ticks in the largest binary unit that still gives two of them. */
static void write_y_axis(FILE *out, const geometry *g)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    int64_t unit = 1;
    while (u < 4 && g->extent / (unit * 1024) >= 2) {
        unit *= 1024;
        u++;
    }
    int64_t step = nice_step(g->extent / unit, 8) * unit;
    double right = MARGIN_LEFT + g->plot_width;
    for (int64_t bytes = 0; bytes <= g->extent; bytes += step) {
        double y = y_of(g, bytes);
        fputs("<line class=\"grid\" x1=\"", out);
        num(out, MARGIN_LEFT);
        fputs("\" x2=\"", out);
        num(out, right);
        fputs("\" y1=\"", out);
        num(out, y);
        fputs("\" y2=\"", out);
        num(out, y);
        fprintf(out, "\"/>\n<text x=\"%d\" y=\"", MARGIN_LEFT - 6);
        num(out, y + 4);
        fprintf(out, "\" text-anchor=\"end\">%" PRId64 " %s</text>\n",
                bytes / unit, units[u]);
        if (bytes > INT64_MAX - step)
            break;
    }
    fprintf(out, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" "
                 "text-anchor=\"middle\">arena offset (%s)</text>\n",
            MARGIN_TOP + PLOT_HEIGHT / 2, MARGIN_TOP + PLOT_HEIGHT / 2,
            units[u]);
}

static void write_x_axis(FILE *out, const geometry *g)
{
    int y = MARGIN_TOP + PLOT_HEIGHT;
    int64_t step = nice_step(g->columns, 16);
    for (int32_t s = 0; s < g->columns; s += (int32_t)step) {
        double x = x_of(g, s) + g->step_width / 2;
        fputs("<line class=\"axis\" x1=\"", out);
        num(out, x);
        fputs("\" x2=\"", out);
        num(out, x);
        fprintf(out, "\" y1=\"%d\" y2=\"%d\"/>\n<text x=\"", y, y + 5);
        num(out, x);
        fprintf(out, "\" y=\"%d\" text-anchor=\"middle\">%" PRId32 "</text>\n",
                y + 18, s);
    }
    fprintf(out, "<line class=\"axis\" x1=\"%d\" x2=\"", MARGIN_LEFT);
    num(out, MARGIN_LEFT + g->plot_width);
    fprintf(out, "\" y1=\"%d\" y2=\"%d\"/>\n", y, y);
    fprintf(out, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" "
                 "y2=\"%d\"/>\n", MARGIN_LEFT, MARGIN_LEFT, MARGIN_TOP, y);
    fputs("<text x=\"", out);
    num(out, MARGIN_LEFT + g->plot_width / 2);
    fprintf(out, "\" y=\"%d\" text-anchor=\"middle\">step</text>\n", y + 38);
}

static void write_title_text(FILE *out, const dfg_program *p,
                             const dfg_plan_timeline *t, int32_t index)
{
    const dfg_program_tensor *tensor = &p->tensors[index];
    char bytes[32], type[160];
    fputs("<title>", out);
    dfg_write_xml_text(out, tensor->name, 0);
    fprintf(out, "\n%s", dfg_plan_timeline_op(p, t, index));
    if (t->producer[index] >= 0) {
        fprintf(out, " (step %" PRId32 " ", t->producer[index]);
        dfg_write_xml_text(out, p->steps[t->producer[index]].name, 0);
        fputc(')', out);
    }
    fprintf(out, "\n%s, %s, ",
            dfg_format_bytes((uint64_t)tensor->bytes, bytes, sizeof bytes),
            dfg_tensor_kind_name(tensor->kind));
    dfg_write_xml_text(out, dfg_type_format(&tensor->type, type, sizeof type),
                       0);
    fprintf(out, "\noffset %" PRId64 ", live steps %" PRId32 "-%" PRId32,
            tensor->offset, tensor->first_step, tensor->last_step);
    if (tensor->alias_of >= 0 && tensor->alias_of < p->n_tensors) {
        fputs("\nshares the bytes of ", out);
        dfg_write_xml_text(out, p->tensors[tensor->alias_of].name, 0);
    }
    fputs("</title>", out);
}

typedef struct box {
    double x, top, width, height;
} box;

/* A tensor's rectangle; lifetimes outside the steps are clamped. */
static box tensor_box(const dfg_program_tensor *tensor, const geometry *g)
{
    int32_t first = tensor->first_step < 0 ? 0 : tensor->first_step;
    if (first >= g->columns)
        first = g->columns - 1;
    int32_t last = tensor->last_step < first ? first : tensor->last_step;
    if (last >= g->columns)
        last = g->columns - 1;
    box b = {x_of(g, first), y_of(g, tensor->offset + tensor->bytes),
             (last - first + 1) * g->step_width,
             (double)tensor->bytes * g->bytes_scale};
    if (b.height < 0.5)
        b.height = 0.5;
    return b;
}

static void write_tensor(FILE *out, const dfg_program *p,
                         const dfg_plan_timeline *t, const geometry *g,
                         int32_t index)
{
    const dfg_program_tensor *tensor = &p->tensors[index];
    box b = tensor_box(tensor, g);
    fprintf(out, "<rect class=\"tensor %s%s\" data-tensor=\"%" PRId32 "\" "
                 "x=\"", kind_class(tensor->kind),
            tensor->alias_of >= 0 ? " alias" : "", index);
    num(out, b.x);
    fputs("\" y=\"", out);
    num(out, b.top);
    fputs("\" width=\"", out);
    num(out, b.width);
    fputs("\" height=\"", out);
    num(out, b.height);
    fputs("\">", out);
    write_title_text(out, p, t, index);
    fputs("</rect>\n", out);
}

/* The name inside the rectangle of a tensor owning its bytes, when the
 * rectangle is large enough, shortened to fit its width and to at most
 * MAX_LABEL_CHARS. */
static void write_label(FILE *out, const dfg_program_tensor *tensor,
                        const geometry *g)
{
    box b = tensor_box(tensor, g);
    if (tensor->alias_of >= 0 || b.width < 36 || b.height < 11)
        return;
    fputs("<text class=\"label\" x=\"", out);
    num(out, b.x + 2);
    fputs("\" y=\"", out);
    num(out, b.top + b.height / 2 + 3);
    fputs("\">", out);
    size_t fits = (size_t)((b.width - 4) / 5.5);
    dfg_write_xml_text(out, tensor->name,
                       fits < MAX_LABEL_CHARS ? fits : MAX_LABEL_CHARS);
    fputs("</text>\n", out);
}

/* Owners first so that the tensors sharing their bytes are drawn on top,
 * then the labels over all of them. */
static void write_tensors(FILE *out, const dfg_program *p,
                          const dfg_plan_timeline *t, const geometry *g)
{
    fprintf(out, "<g class=\"tensors\" stroke-width=\"%s\">\n",
            t->n_arena > MANY_TENSORS ? "0.25" : "0.6");
    for (int pass = 0; pass < 2; pass++)
        for (int32_t i = 0; i < p->n_tensors; i++)
            if (dfg_tensor_in_arena(p, i) &&
                (p->tensors[i].alias_of >= 0) == pass)
                write_tensor(out, p, t, g, i);
    fputs("</g>\n", out);
    if (t->n_arena > MAX_LABELLED_TENSORS)
        return;
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (dfg_tensor_in_arena(p, i))
            write_label(out, &p->tensors[i], g);
}

static void write_live_curve(FILE *out, const dfg_plan_timeline *t,
                             const geometry *g)
{
    fputs("<polyline class=\"live-bytes\" points=\"", out);
    for (int32_t s = 0; s < t->n_steps; s++) {
        double y = y_of(g, t->live_bytes[s]);
        for (int edge = 0; edge < 2; edge++) {
            num(out, x_of(g, s + edge));
            fputc(',', out);
            num(out, y);
            fputc(' ', out);
        }
    }
    fputs("\"><title>live bytes per step</title></polyline>\n", out);
}

/* A horizontal line across the plot, labelled inside the plot at its
 * right end, above or below the line (the arena and the bound may be
 * close). */
static void write_level(FILE *out, const geometry *g, const char *cls,
                        const char *what, uint64_t bytes, int label_below)
{
    char text[32];
    double y = y_of(g, (int64_t)bytes), right = MARGIN_LEFT + g->plot_width;
    fprintf(out, "<line class=\"%s\" x1=\"%d\" x2=\"", cls, MARGIN_LEFT);
    num(out, right);
    fputs("\" y1=\"", out);
    num(out, y);
    fputs("\" y2=\"", out);
    num(out, y);
    fprintf(out, "\"><title>%s %s</title></line>\n<text class=\"level\" "
                 "text-anchor=\"end\" x=\"", what,
            dfg_format_bytes(bytes, text, sizeof text));
    num(out, right - 4);
    fputs("\" y=\"", out);
    num(out, y + (label_below ? 12 : -3));
    fprintf(out, "\">%s %s</text>\n", what, text);
}

/* A legend line: a short stroke of class cls, then its meaning. */
static void write_legend_line(FILE *out, double x, int y, const char *cls,
                              const char *what)
{
    fprintf(out, "<line class=\"%s\" x1=\"", cls);
    num(out, x);
    fputs("\" x2=\"", out);
    num(out, x + 12);
    fprintf(out, "\" y1=\"%d\" y2=\"%d\"/>\n<text x=\"", y + 6, y + 6);
    num(out, x + 18);
    fprintf(out, "\" y=\"%d\">%s</text>\n", y + 10, what);
}

/* Every mark of the picture: the kinds' colours, the dashed rectangles of
 * tensors sharing another's bytes, and the three lines. */
static void write_legend(FILE *out, const geometry *g)
{
    static const char *const kinds[] = {"activation", "workspace", "input",
                                        "output", "view"};
    double x = MARGIN_LEFT + g->plot_width + 14;
    int y = MARGIN_TOP + 60;
    for (int i = 0; i < 6; i++, y += 18) {
        fprintf(out, "<rect class=\"swatch %s%s\" x=\"",
                i < 5 ? "k-" : "alias k-activation",
                i < 5 ? kinds[i] : "");
        num(out, x);
        fprintf(out, "\" y=\"%d\" width=\"12\" height=\"12\"/>\n<text x=\"",
                y);
        num(out, x + 18);
        fprintf(out, "\" y=\"%d\">%s</text>\n", y + 10,
                i < 5 ? kinds[i] : "shares bytes");
    }
    write_legend_line(out, x, y, "live-bytes", "live bytes");
    write_legend_line(out, x, y + 18, "lower-bound", "lower bound");
    write_legend_line(out, x, y + 36, "arena-top", "arena size");
}

static void write_heading(FILE *out, const dfg_program *p,
                          const dfg_plan_timeline *t)
{
    const dfg_plan_stats *s = &p->stats;
    char arena[32], bound[32], ratio[32];
    const char *planner = dfg_planner_name(s->planner);
    fprintf(out, "<text class=\"title\" x=\"%d\" y=\"24\">memory plan: "
                 "%" PRId32 " steps, %" PRId32 " arena tensors, arena %s, "
                 "lower bound %s (x%s), planner %s</text>\n",
            MARGIN_LEFT, p->n_steps, t->n_arena,
            dfg_format_bytes(s->arena_bytes, arena, sizeof arena),
            dfg_format_bytes(s->lower_bound_bytes, bound, sizeof bound),
            dfg_format_ratio(s->arena_bytes, s->lower_bound_bytes, 3, ratio,
                             sizeof ratio),
            planner ? planner : "?");
}

void dfg_svg_write_timeline(FILE *out, const dfg_program *p,
                            const dfg_plan_timeline *t)
{
    geometry g = layout(t);
    double width = MARGIN_LEFT + g.plot_width + MARGIN_RIGHT;
    int height = MARGIN_TOP + PLOT_HEIGHT + MARGIN_BOTTOM;
    fputs("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"dfg-plan\" "
          "viewBox=\"0 0 ", out);
    num(out, width);
    fprintf(out, " %d\" width=\"", height);
    num(out, width);
    fprintf(out, "\" height=\"%d\">\n<title>dfg memory plan</title>\n%s",
            height, style);
    fputs("<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" "
          "fill=\"#fff\"/>\n", out);
    write_heading(out, p, t);
    write_y_axis(out, &g);
    write_x_axis(out, &g);
    write_tensors(out, p, t, &g);
    write_live_curve(out, t, &g);
    write_level(out, &g, "arena-top", "arena", p->stats.arena_bytes, 0);
    write_level(out, &g, "lower-bound", "lower bound",
                p->stats.lower_bound_bytes, 1);
    write_legend(out, &g);
    fputs("</svg>\n", out);
}

dfg_status dfg_report_svg(const dfg_program *program, FILE *out)
{
    if (!program || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_report_svg: program and stream are required");
    dfg_plan_timeline timeline;
    dfg_status s = dfg_plan_timeline_build(program, "dfg_report_svg",
                                           &timeline);
    if (s != DFG_OK)
        return s;
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
    dfg_svg_write_timeline(out, program, &timeline);
    dfg_plan_timeline_free(program, &timeline);
    if (fflush(out) != 0 || ferror(out))
        return dfg_error(DFG_ERR_IO, "dfg_report_svg: write failed");
    return DFG_OK;
}
