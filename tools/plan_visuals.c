#include "tools/plan_visuals.h"

#include <string.h>
#include "tools/cli.h"
#include "tools/graphviz_render.h"

int dfgc_plan_visual_option(int argc, char **argv, int *i,
                            dfgc_plan_visuals *v)
{
    if (strcmp(argv[*i], "--compare") == 0) {
        v->compare = 1;
        return 1;
    }
    struct {
        const char *name;
        const char **path;
    } options[] = {
        {"--svg", &v->svg_path},
        {"--html", &v->html_path},
        {"--trace", &v->trace_path},
        {"--png", &v->png_path},
        {"--svg-graph", &v->svg_graph_path},
    };
    for (size_t k = 0; k < sizeof options / sizeof options[0]; k++) {
        int found = dfgc_option_value("plan", argc, argv, i, options[k].name,
                                      options[k].path);
        if (found != 0)
            return found;
    }
    return 0;
}

static int is_stdout(const char *path)
{
    return path && strcmp(path, "-") == 0;
}

int dfgc_plan_visuals_use_stdout(const dfgc_plan_visuals *v)
{
    return is_stdout(v->svg_path) || is_stdout(v->html_path) ||
           is_stdout(v->trace_path) || is_stdout(v->png_path) ||
           is_stdout(v->svg_graph_path);
}

int dfgc_plan_visuals_open(dfgc_plan_visuals *v)
{
    if ((v->svg_path && dfgc_open_output(v->svg_path, &v->svg) != 0) ||
        (v->html_path && dfgc_open_output(v->html_path, &v->html) != 0) ||
        (v->trace_path && dfgc_open_output(v->trace_path, &v->trace) != 0)) {
        dfgc_plan_visuals_close(v);
        return DFGC_EXIT_ERROR;
    }
    return 0;
}

void dfgc_plan_visuals_close(dfgc_plan_visuals *v)
{
    dfgc_close_output(&v->svg, 0);
    dfgc_close_output(&v->html, 0);
    dfgc_close_output(&v->trace, 0);
}

int dfgc_write_report(const dfg_program *program, dfgc_output *output,
                      dfg_status (*report)(const dfg_program *, FILE *),
                      const char *what)
{
    if (!output->stream)
        return 0;
    if (report(program, output->stream) != DFG_OK) {
        int status = dfgc_library_error(what);
        dfgc_close_output(output, 0);
        return status;
    }
    return dfgc_close_output(output, 1);
}

/* Every output is attempted; the first failure sets the exit status. */
int dfgc_plan_visuals_write(const dfg_program *program, dfgc_plan_visuals *v)
{
    int status = dfgc_write_report(program, &v->svg, dfg_report_svg, "svg");
    int s = dfgc_write_report(program, &v->html, dfg_report_html, "html");
    status = status ? status : s;
    s = dfgc_write_report(program, &v->trace, dfg_report_trace, "trace");
    status = status ? status : s;
    s = v->png_path ? dfgc_render_dot(program, "png", v->png_path) : 0;
    status = status ? status : s;
    s = v->svg_graph_path ? dfgc_render_dot(program, "svg", v->svg_graph_path)
                          : 0;
    status = status ? status : s;
    dfg_plan_comparison comparison;
    if (v->compare && (dfg_plan_compare(program, &comparison) != DFG_OK ||
                       dfg_report_compare(&comparison, stdout) != DFG_OK)) {
        s = dfgc_library_error("compare");
        status = status ? status : s;
    }
    return status;
}
