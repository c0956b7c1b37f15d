/* dfgc plan MODEL: compile and report the memory plan. */
#include "cli.h"
#include "commands.h"

#include <string.h>

static const char usage[] =
    "usage: dfgc plan MODEL [--planner NAME] [--align N] [--json FILE]\n"
    "                 [--dot FILE]\n"
    "       dfgc plan --list\n"
    "\n"
    "Compiles MODEL and prints a summary of its memory plan: the arena, the\n"
    "lower bound (peak live bytes), the no-reuse total and their ratios.\n"
    "\n"
    "MODEL            example:NAME (a bundled model, see --list) or a\n"
    "                 compiled program FILE.dfgp\n"
    "--planner NAME   no_reuse, greedy_size (default) or greedy_breadth\n"
    "--align N        offset alignment in bytes, a power of two (256)\n"
    "--json FILE      also write the plan as JSON (docs/plan-json.md);\n"
    "                 '-' is stdout\n"
    "--dot FILE       also write the plan as a Graphviz digraph\n"
    "--list           list the bundled models\n";

static int list_models(void)
{
    for (const char *const *name = dfg_model_names(); *name; name++)
        printf("example:%-14s %s\n", *name, dfg_model_description(*name));
    return 0;
}

typedef struct plan_args {
    const char *model;
    const char *json_path;
    const char *dot_path;
    int list;
    dfg_compile_options options;
} plan_args;

/* Returns -1 when the arguments are fine, else the exit status. */
static int parse_args(int argc, char **argv, plan_args *a)
{
    memset(a, 0, sizeof *a);
    dfg_compile_options_init(&a->options);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int found;
        if (dfgc_is_help(arg)) {
            fputs(usage, stdout);
            return 0;
        }
        if (strcmp(arg, "--list") == 0) {
            a->list = 1;
            continue;
        }
        found = dfgc_compile_option("plan", argc, argv, &i, &a->options);
        if (found == 0)
            found = dfgc_option_value("plan", argc, argv, &i, "--json",
                                      &a->json_path);
        if (found == 0)
            found = dfgc_option_value("plan", argc, argv, &i, "--dot",
                                      &a->dot_path);
        if (found < 0)
            return DFGC_EXIT_USAGE;
        if (found > 0)
            continue;
        if (arg[0] == '-' && arg[1] != '\0')
            return dfgc_usage_error("plan", "unknown option '%s'", arg);
        if (a->model)
            return dfgc_usage_error("plan", "more than one MODEL ('%s', '%s')",
                                    a->model, arg);
        a->model = arg;
    }
    if (!a->list && !a->model)
        return dfgc_usage_error("plan", "no MODEL given");
    return -1;
}

typedef dfg_status (*report_fn)(const dfg_program *, FILE *);

static int write_report(const dfg_program *program, const char *path,
                        report_fn report, const char *what)
{
    FILE *stream = dfgc_open_output(path);
    if (!stream)
        return DFGC_EXIT_ERROR;
    dfg_status s = report(program, stream);
    int failed = dfgc_close_output(stream, path);
    if (s != DFG_OK)
        return dfgc_library_error(what);
    return failed;
}

int dfgc_plan(int argc, char **argv)
{
    plan_args a;
    int status = parse_args(argc, argv, &a);
    if (status >= 0)
        return status;
    if (a.list)
        return list_models();
    dfg_program *program;
    if (dfgc_load_program(a.model, &a.options, &program) != DFG_OK)
        return dfgc_library_error(a.model);
    status = 0;
    /* With the JSON or DOT on stdout the summary would corrupt them. */
    int quiet = (a.json_path && strcmp(a.json_path, "-") == 0) ||
                (a.dot_path && strcmp(a.dot_path, "-") == 0);
    if (!quiet && dfg_report_summary(program, stdout) != DFG_OK)
        status = dfgc_library_error("summary");
    if (status == 0 && a.json_path)
        status = write_report(program, a.json_path, dfg_report_json, "json");
    if (status == 0 && a.dot_path)
        status = write_report(program, a.dot_path, dfg_report_dot, "dot");
    dfg_program_destroy(program);
    return status;
}
