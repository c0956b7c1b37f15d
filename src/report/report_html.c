/* The plan as one self-contained HTML page: the SVG timeline inline, the
 * tables the script builds, and the plan JSON (docs/plan-json.md) in a
 * <script type="application/json"> block. Nothing is loaded from the
 * network.
 *
 * Inside a <script> element the HTML parser ends the block at the first
 * "</script" and reacts to "<!--", whatever the JSON means; names come
 * from model files and may contain both. '<', '>' and '&' only occur
 * inside JSON strings, so writing them as \u003c, \u003e and \u0026 keeps
 * the same JSON and leaves the parser nothing to find. */
#include "dfg/report.h"

#include <stdlib.h>
#include "report/report_html_assets.h"
#include "report/report_svg.h"
#include "util/error.h"
#include "util/number_format.h"

static void write_json_for_script(FILE *out, const char *json, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        switch (json[i]) {
        case '<': fputs("\\u003c", out); break;
        case '>': fputs("\\u003e", out); break;
        case '&': fputs("\\u0026", out); break;
        default: fputc(json[i], out); break;
        }
    }
}

/* The plan JSON, escaped for a script block. */
static dfg_status write_embedded_json(FILE *out, const dfg_program *program)
{
    char *json = NULL;
    size_t size = 0;
    FILE *memory = open_memstream(&json, &size);
    if (!memory)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "dfg_report_html: no memory for the plan JSON");
    dfg_status s = dfg_report_json(program, memory);
    if (fclose(memory) != 0 && s == DFG_OK)
        s = dfg_error(DFG_ERR_OUT_OF_MEMORY,
                      "dfg_report_html: no memory for the plan JSON");
    if (s == DFG_OK) {
        fputs("<script type=\"application/json\" id=\"dfg-plan\">\n", out);
        write_json_for_script(out, json, size);
        fputs("</script>\n", out);
    }
    free(json);
    return s;
}

static void write_summary(FILE *out, const dfg_program *program)
{
    const dfg_plan_stats *s = &program->stats;
    char arena[32], bound[32], none[32], ratio[32], weights[32];
    const char *planner = dfg_planner_name(s->planner);
    fprintf(out, "<p>Arena <b>%s</b> (planner %s), lower bound <b>%s</b> "
                 "(arena / bound %s), without reuse %s; weights %s.</p>\n",
            dfg_format_bytes(s->arena_bytes, arena, sizeof arena),
            planner ? planner : "?",
            dfg_format_bytes(s->lower_bound_bytes, bound, sizeof bound),
            dfg_format_ratio(s->arena_bytes, s->lower_bound_bytes, 3, ratio,
                             sizeof ratio),
            dfg_format_bytes(s->no_reuse_bytes, none, sizeof none),
            dfg_format_bytes(s->weights_bytes, weights, sizeof weights));
}

dfg_status dfg_report_html(const dfg_program *program, FILE *out)
{
    if (!program || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_report_html: program and stream are required");
    dfg_plan_timeline timeline;
    dfg_status s = dfg_plan_timeline_build(program, "dfg_report_html",
                                           &timeline);
    if (s != DFG_OK)
        return s;
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                 "<meta charset=\"utf-8\">\n<title>dfg memory plan</title>\n"
                 "<style>\n%s</style>\n</head>\n<body>\n"
                 "<h1>dfg memory plan</h1>\n", dfg_html_style);
    write_summary(out, program);
    fputs("<div id=\"view\" class=\"view\">\n", out);
    dfg_svg_write_timeline(out, program, &timeline);
    fputs("</div>\n<p class=\"hint\">Wheel: zoom, drag: pan, double-click: "
          "reset. Hover a rectangle for its tensor.</p>\n"
          "<h2>Largest tensors</h2>\n<table id=\"largest\"></table>\n"
          "<h2>Steps where memory peaks</h2>\n<table id=\"peaks\"></table>\n"
          "<div id=\"dfg-status\" data-state=\"loading\">loading</div>\n",
          out);
    dfg_plan_timeline_free(program, &timeline);
    s = write_embedded_json(out, program);
    if (s != DFG_OK)
        return s;
    fprintf(out, "<script>\n%s</script>\n</body>\n</html>\n", dfg_html_script);
    if (fflush(out) != 0 || ferror(out))
        return dfg_error(DFG_ERR_IO, "dfg_report_html: write failed");
    return DFG_OK;
}
