/* dfgc run MODEL: one run on given or random inputs, printing a checksum
 * line per output (tools/tensor_data.h). */
#include <errno.h>
#include "dfg/compile.h"
#include <stdlib.h>
#include <string.h>
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/compile_options.h"
#include "tools/input_files.h"
#include "tools/run_setup.h"
#include "tools/tensor_data.h"

static const char usage[] =
    "usage: dfgc run MODEL [--input NAME=FILE]... [--output NAME=FILE]...\n"
    "                [--seed N] [--device cpu|cuda] [--planner NAME] [--align N]\n"
    "\n"
    "Runs MODEL once and prints, for each output, its name, shape, dtype,\n"
    "the sum and sum of squares of its elements and a 64-bit hash of its\n"
    "bytes.\n"
    "\n"
    "MODEL              a program FILE.dfgp, or example:NAME (compiled first)\n"
    "--input NAME=FILE  read input NAME from FILE: raw little-endian values\n"
    "                   of the input's dtype, exactly its size; inputs not\n"
    "                   given are random (floats in [-1,1), integers 0..3)\n"
    "--output NAME=FILE also write output NAME's raw bytes to FILE\n"
    "--seed N           seed of the random inputs (1)\n"
    "--device NAME      cpu (default) or cuda ('dfgc devices'); also\n"
    "                   --backend NAME\n"
    "--planner, --align, --const, --no-onednn, --no-fuse, --precision,\n"
    "--prefer,\n"
    "--max-arena-bytes, --max-weight-bytes as for 'dfgc compile', when\n"
    "                   MODEL is compiled\n";

static int write_output(const char *path, const dfg_tensor_info *info,
                        const void *data)
{
    size_t bytes = dfgc_tensor_bytes(info);
    if (dfg_write_file_atomically(path, data, bytes) != DFG_OK)
        return dfgc_library_error(NULL);
    return 0;
}

typedef struct run_args {
    const char *model, *backend;
    uint64_t seed;
    dfg_compile_options options;
    dfgc_file_arg inputs[DFGC_MAX_FILE_ARGS], outputs[DFGC_MAX_FILE_ARGS];
    int n_inputs, n_outputs;
} run_args;

static int add_file_arg(run_args *a, int is_input, const char *value)
{
    int *n = is_input ? &a->n_inputs : &a->n_outputs;
    if (*n == DFGC_MAX_FILE_ARGS)
        return dfgc_usage_error("run", "more than %d files",
                                DFGC_MAX_FILE_ARGS);
    dfgc_file_arg *slot = is_input ? &a->inputs[*n] : &a->outputs[*n];
    int status = dfgc_parse_file_arg("run", is_input ? "--input" : "--output",
                                     value, slot);
    *n += status == 0;
    return status;
}

/* Handles argv[*i] if it is one of run's options: 1 if it was, 0 if not,
 * or -(exit status) on a usage error. */
static int parse_option(int argc, char **argv, int *i, void *ctx)
{
    run_args *a = ctx;
    const char *value = NULL;
    int found, status = 0;
    if ((found = dfgc_compile_option("run", argc, argv, i, &a->options)) != 0)
        return found < 0 ? -DFGC_EXIT_USAGE : 1;
    if ((found = dfgc_option_value("run", argc, argv, i, "--input", &value)) > 0)
        status = add_file_arg(a, 1, value);
    else if (found == 0 &&
             (found = dfgc_option_value("run", argc, argv, i, "--output", &value)) > 0)
        status = add_file_arg(a, 0, value);
    else if (found == 0 &&
             (found = dfgc_option_value("run", argc, argv, i, "--seed", &value)) > 0)
        status = dfgc_parse_u64("run", "--seed", value, 0, UINT64_MAX, &a->seed);
    else if (found == 0 &&
             (found = dfgc_option_value("run", argc, argv, i, "--device", &a->backend)) == 0)
        found = dfgc_option_value("run", argc, argv, i, "--backend", &a->backend);
    if (found < 0)
        return -DFGC_EXIT_USAGE;
    return status ? -status : found;
}

/* Returns -1 when the arguments are fine, else the exit status. */
static int parse_args(int argc, char **argv, run_args *a)
{
    memset(a, 0, sizeof *a);
    a->backend = "cpu";
    a->seed = 1;
    dfg_compile_options_init(&a->options);
    int status = dfgc_parse_arguments("run", usage, argc, argv, parse_option,
                                      a, &a->model);
    if (status >= 0)
        return status;
    if (!a->model)
        return dfgc_usage_error("run", "no MODEL given");
    return -1;
}

/* Reads the --input files over the random inputs; checks the --output
 * names. */
static int read_inputs(const run_args *a, dfgc_run_setup *s)
{
    int status = dfgc_read_input_files("run", a->inputs, a->n_inputs, s);
    if (status)
        return status;
    for (int i = 0; i < a->n_outputs; i++)
        if (dfgc_file_arg_find(s, 0, &a->outputs[i]) < 0)
            return dfgc_usage_error("run", "the program has no output '%.*s'",
                                    (int)a->outputs[i].name_length,
                                    a->outputs[i].name);
    return 0;
}

int dfgc_run(int argc, char **argv)
{
    run_args *a = malloc(sizeof *a);
    if (!a)
        return dfgc_error("out of memory");
    int status = parse_args(argc, argv, a);
    if (status >= 0) {
        free(a);
        return status;
    }
    dfgc_run_setup s;
    status = dfgc_run_setup_create(a->model, &a->options, a->backend, a->seed, &s);
    if (status) {
        free(a);
        return status;
    }
    status = read_inputs(a, &s);
    if (status == 0 &&
        dfg_session_run(s.session, (const void *const *)s.inputs, s.outputs) != DFG_OK)
        status = dfgc_library_error("run");
    for (int32_t i = 0; status == 0 && i < s.n_outputs; i++)
        dfgc_print_checksum(stdout, &s.output_info[i], s.outputs[i]);
    for (int i = 0; status == 0 && i < a->n_outputs; i++) {
        int32_t index = dfgc_file_arg_find(&s, 0, &a->outputs[i]);
        status = write_output(a->outputs[i].path, &s.output_info[index],
                              s.outputs[index]);
    }
    dfgc_run_setup_destroy(&s);
    free(a);
    return status;
}
