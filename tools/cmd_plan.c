/* dfgc plan MODEL: compile and report the memory plan. */
#include "tools/cli.h"
#include "dfg/compile.h"
#include "tools/commands.h"
#include "tools/model_source.h"
#include "tools/compile_options.h"
#include "tools/memory_limit_cli.h"
#include "tools/plan_visuals.h"
#include "tools/training/training_setup.h"

#include <string.h>

static const char usage[] =
    "usage: dfgc plan MODEL [--planner NAME] [--align N] [--json FILE]\n"
    "                 [--dot FILE] [--svg FILE] [--html FILE] [--trace FILE]\n"
    "                 [--png FILE] [--svg-graph FILE] [--compare]\n"
    "       dfgc plan --list\n"
    "\n"
    "Compiles MODEL and prints a summary of its memory plan: the arena, the\n"
    "lower bound (peak live bytes), the no-reuse total and their ratios.\n"
    "\n"
    "MODEL            example:NAME (a bundled model, see --list) or a\n"
    "                 compiled program FILE.dfgp, or FILE.onnx\n"
    DFGC_PLAN_USAGE
    DFGC_KERNEL_USAGE
    DFGC_LIMITS_USAGE
    "--json FILE      also write the plan as JSON (docs/plan-json.md);\n"
    "                 '-' is stdout\n"
    "--predict        with --json: also write the predicted peak of the\n"
    "                 process (predicted_memory; measured parts vary from\n"
    "                 run to run, the plan does not)\n"
    "--dot FILE       also write the plan as a Graphviz digraph\n"
    "--training       plan one training step of MODEL (a classifier) with\n"
    "                 its loss appended (docs/training.md):\n"
    DFGC_TRAINING_USAGE
    DFGC_PLAN_VISUALS_USAGE
    "--list           list the bundled models\n";

static int list_models(void)
{
    for (const char *const *name = dfg_model_names(); *name; name++)
        printf("example:%-14s %s\n", *name, dfg_model_description(*name));
    return 0;
}

typedef struct plan_args {
    const char *model;
    int predict; /* --predict: predicted_memory in the JSON */
    const char *json_path;
    const char *dot_path;
    int list;
    int compile_options_given;
    int training;
    dfgc_training_setup setup;
    dfg_compile_options options;
    dfgc_plan_visuals visuals;
} plan_args;

/* Handles argv[*i] if it is one of plan's options (dfgc_option_parser). */
static int parse_option(int argc, char **argv, int *i, void *ctx)
{
    plan_args *a = ctx;
    if (strcmp(argv[*i], "--predict") == 0) {
        a->predict = 1;
        return 1;
    }
    if (strcmp(argv[*i], "--list") == 0) {
        a->list = 1;
        return 1;
    }
    if (strcmp(argv[*i], "--training") == 0) {
        a->training = 1;
        return 1;
    }
    int found = dfgc_compile_option("plan", argc, argv, i, &a->options);
    a->compile_options_given |= found > 0;
    if (found == 0)
        found = dfgc_training_option("plan", argc, argv, i, &a->setup);
    if (found == 0)
        found = dfgc_option_value("plan", argc, argv, i, "--json",
                                  &a->json_path);
    if (found == 0)
        found = dfgc_option_value("plan", argc, argv, i, "--dot",
                                  &a->dot_path);
    if (found == 0)
        found = dfgc_plan_visual_option(argc, argv, i, &a->visuals);
    return found < 0 ? -DFGC_EXIT_USAGE : found;
}

/* Returns -1 when the arguments are fine, else the exit status. */
static int parse_args(int argc, char **argv, plan_args *a)
{
    memset(a, 0, sizeof *a);
    dfg_compile_options_init(&a->options);
    dfgc_training_setup_init(&a->setup);
    int status = dfgc_parse_arguments("plan", usage, argc, argv, parse_option,
                                      a, &a->model);
    if (status >= 0)
        return status;
    if (!a->list && !a->model)
        return dfgc_usage_error("plan", "no MODEL given");
    if (a->model && a->training && dfgc_model_is_program(a->model))
        return dfgc_usage_error("plan", "--training needs a model, not the "
                                "compiled program '%s'", a->model);
    if (a->model && a->compile_options_given && dfgc_model_is_program(a->model))
        return dfgc_usage_error("plan", "--planner and --align do not apply "
                                "to '%s', which is compiled already", a->model);
    if (a->visuals.compare && (dfgc_plan_visuals_use_stdout(&a->visuals) ||
                               (a->json_path && !strcmp(a->json_path, "-")) ||
                               (a->dot_path && !strcmp(a->dot_path, "-"))))
        return dfgc_usage_error("plan", "--compare prints on stdout: write "
                                "the other outputs to files");
    return -1;
}

/* MODEL's program, or its training step's with --training. */
static dfg_status load(plan_args *a, dfg_program **out)
{
    if (!a->training)
        return dfgc_load_program(a->model, &a->options, out);
    dfg_graph *graph;
    dfg_status st = dfgc_training_graph(a->model, &a->setup, &graph);
    if (st != DFG_OK)
        return st;
    a->options.training = &a->setup.training;
    st = dfgc_compile_limited(graph, &a->options, out);
    dfg_graph_destroy(graph);
    return st;
}

/* The predicted peak of running the program on the CPU (its session
 * made and dropped: nothing runs), for the summary and the JSON; none for
 * a program of 16-bit inference, which runs on the cuda backend only. */
static dfg_memory_prediction predicted;
static int have_prediction;

static int predict(const dfg_program *program)
{
    const dfg_backend *cpu = NULL;
    have_prediction = dfg_program_half_products(program) == DFG_F32;
    if (have_prediction &&
        (dfg_backend_find("cpu", &cpu) != DFG_OK ||
         dfg_memory_predict(program, cpu, &predicted) != DFG_OK))
        return dfgc_library_error("predicted peak");
    return 0;
}

static int print_prediction(void)
{
    char split[512];
    if (!have_prediction)
        printf("predicted peak rss of running it: none (a program of "
               "16-bit inference runs on the cuda backend only)\n");
    else
        printf("predicted peak rss of running it: %s\n",
               dfg_memory_prediction_format(&predicted, split, sizeof split));
    return 0;
}

static dfg_status report_json(const dfg_program *program, FILE *out)
{
    return dfg_report_json_memory(program, have_prediction ? &predicted : NULL,
                                  out);
}

/* Compiles, prints the summary and writes the reports; closes json and
 * dot (either may be unopened) in every case. */
static int plan(plan_args *a, dfgc_output *json, dfgc_output *dot)
{
    dfg_program *program;
    if (load(a, &program) != DFG_OK) {
        /* The library's message names the model or file already. */
        int status = dfgc_library_error(NULL);
        dfgc_close_output(json, 0);
        dfgc_close_output(dot, 0);
        dfgc_plan_visuals_close(&a->visuals);
        return status;
    }
    int status = predict(program);
    /* With the JSON or DOT on stdout the summary would corrupt them. */
    if (status == 0 && json->stream != stdout && dot->stream != stdout &&
        !dfgc_plan_visuals_use_stdout(&a->visuals) &&
        (dfg_report_summary(program, stdout) != DFG_OK ||
         print_prediction() != 0))
        status = dfgc_library_error("summary");
    int s = dfgc_write_report(program, json,
                              a->predict ? report_json : dfg_report_json,
                              "json");
    status = status ? status : s;
    s = dfgc_write_report(program, dot, dfg_report_dot, "dot");
    status = status ? status : s;
    s = dfgc_plan_visuals_write(program, &a->visuals);
    status = status ? status : s;
    dfg_program_destroy(program);
    return status;
}

int dfgc_plan(int argc, char **argv)
{
    plan_args a;
    int status = parse_args(argc, argv, &a);
    if (status >= 0)
        return status;
    if (a.list)
        return list_models();
    /* Open the outputs first: a bad path fails before any work or output. */
    dfgc_output json = {0}, dot = {0};
    if ((a.json_path && dfgc_open_output(a.json_path, &json) != 0) ||
        (a.dot_path && dfgc_open_output(a.dot_path, &dot) != 0) ||
        dfgc_plan_visuals_open(&a.visuals) != 0) {
        dfgc_close_output(&json, 0);
        dfgc_close_output(&dot, 0);
        return DFGC_EXIT_ERROR;
    }
    return plan(&a, &json, &dot);
}
