/* dfgc compile MODEL -o FILE.dfgp: compile once, run many times. */
#include <string.h>
#include "dfg/compile.h"
#include "dfg/session.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/model_source.h"
#include "tools/compile_options.h"

static const char usage[] =
    "usage: dfgc compile MODEL -o FILE.dfgp [--planner NAME] [--align N]\n"
    "\n"
    "Compiles MODEL and writes the program (steps, memory plan and weights)\n"
    "to FILE.dfgp (docs/program-format.md), for 'dfgc run', 'dfgc bench'\n"
    "or a host program calling dfg_program_load().\n"
    "\n"
    "MODEL            example:NAME (a bundled model, see 'dfgc plan --list')\n"
    "-o, --output F   the program file to write\n"
    DFGC_PLAN_USAGE
    DFGC_KERNEL_USAGE
    "--precision P    f32 (default: strict FP32 products), bf16: activations\n"
    "                 stored in bf16, weights in f32 (inputs and outputs keep\n"
    "                 their dtype), or tf32 (--device cuda: f32 products on\n"
    "                 TF32 tensor cores, accumulating in f32); with --device\n"
    "                 cuda, f16 or bf16: every tensor, weights included,\n"
    "                 16-bit, products on tensor cores accumulating in f32,\n"
    "                 other kernels computing in f32 (docs/precision.md)\n"
    "--blas-workspace BYTES\n"
    "                 scratch planned into each matmul, gemm and conv2d step\n"
    "                 for cuBLAS (0; --device cuda plans 4194304)\n"
    "--device NAME    the backend the program is for: cpu (default) or cuda\n"
    "                 (no blocked layouts: nhwc convolutions at f16 and\n"
    "                 bf16; cuBLAS's scratch planned, an alignment of at\n"
    "                 least 16)\n"
    DFGC_LIMITS_USAGE
    "\n"
    "For the CPU, the plan includes the scratch of oneDNN's convolutions and\n"
    "matmuls.\n";

typedef struct compile_args {
    const char *output;
    const char *device;
    dfg_compile_options options;
} compile_args;

/* Handles argv[*i] if it is one of compile's options (dfgc_option_parser). */
static int parse_option(int argc, char **argv, int *i, void *ctx)
{
    compile_args *a = ctx;
    int found = dfgc_compile_option("compile", argc, argv, i, &a->options);
    if (found == 0)
        found = dfgc_option_value("compile", argc, argv, i, "--output",
                                  &a->output);
    if (found == 0)
        found = dfgc_option_value("compile", argc, argv, i, "-o", &a->output);
    if (found == 0)
        found = dfgc_option_value("compile", argc, argv, i, "--device",
                                  &a->device);
    return found < 0 ? -DFGC_EXIT_USAGE : found;
}

int dfgc_compile(int argc, char **argv)
{
    const char *model;
    compile_args a = {0};
    dfg_compile_options_init(&a.options);
    int parsed = dfgc_parse_arguments("compile", usage, argc, argv,
                                      parse_option, &a, &model);
    if (parsed >= 0)
        return parsed;
    if (!model)
        return dfgc_usage_error("compile", "no MODEL given");
    if (!a.output)
        return dfgc_usage_error("compile", "no output file given (-o FILE.dfgp)");
    const dfg_backend *backend = NULL;
    if (dfg_backend_find(a.device ? a.device : "cpu", &backend) != DFG_OK ||
        dfg_compile_options_for(&a.options, dfg_backend_target(backend)) !=
            DFG_OK)
        return dfgc_library_error(NULL);

    dfg_program *program = NULL;
    if (dfgc_load_program(model, &a.options, &program) != DFG_OK)
        return dfgc_library_error(model);
    dfg_status status = dfg_program_save(program, a.output);
    dfg_plan_stats stats;
    dfg_program_stats(program, &stats);
    dfg_program_destroy(program);
    if (status != DFG_OK)
        return dfgc_library_error(NULL);
    printf("wrote %s: %d steps, arena %llu bytes, weights %llu bytes\n",
           a.output, (int)stats.n_steps, (unsigned long long)stats.arena_bytes,
           (unsigned long long)stats.weights_bytes);
    return 0;
}
