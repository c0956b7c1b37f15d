/* dfgc compile MODEL -o FILE.dfgp: compile once, run many times. */
#include <string.h>
#include "cli.h"
#include "commands.h"

static const char usage[] =
    "usage: dfgc compile MODEL -o FILE.dfgp [--planner NAME] [--align N]\n"
    "\n"
    "Compiles MODEL and writes the program (steps, memory plan and weights)\n"
    "to FILE.dfgp (docs/program-format.md), for 'dfgc run', 'dfgc bench'\n"
    "or a host program calling dfg_program_load().\n"
    "\n"
    "MODEL            example:NAME (a bundled model, see 'dfgc plan --list')\n"
    "-o, --output F   the program file to write\n"
    "--planner NAME   no_reuse, greedy_size (default) or greedy_breadth\n"
    "--align N        offset alignment in bytes, a power of two (256)\n"
    "--blas-workspace BYTES\n"
    "                 scratch planned into each matmul, gemm and conv2d step\n"
    "                 for cuBLAS (0; use 4194304 for programs run on cuda)\n";

int dfgc_compile(int argc, char **argv)
{
    const char *model = NULL, *output = NULL;
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (dfgc_is_help(arg)) {
            fputs(usage, stdout);
            return 0;
        }
        int found = dfgc_compile_option("compile", argc, argv, &i, &options);
        if (found == 0)
            found = dfgc_option_value("compile", argc, argv, &i, "--output",
                                      &output);
        if (found == 0)
            found = dfgc_option_value("compile", argc, argv, &i, "-o", &output);
        if (found < 0)
            return DFGC_EXIT_USAGE;
        if (found > 0)
            continue;
        if (arg[0] == '-' && arg[1] != '\0')
            return dfgc_usage_error("compile", "unknown option '%s'", arg);
        if (model)
            return dfgc_usage_error("compile", "more than one MODEL ('%s', '%s')",
                                    model, arg);
        model = arg;
    }
    if (!model)
        return dfgc_usage_error("compile", "no MODEL given");
    if (!output)
        return dfgc_usage_error("compile", "no output file given (-o FILE.dfgp)");

    dfg_program *program = NULL;
    if (dfgc_load_program(model, &options, &program) != DFG_OK)
        return dfgc_library_error(model);
    dfg_status status = dfg_program_save(program, output);
    dfg_plan_stats stats;
    dfg_program_stats(program, &stats);
    dfg_program_destroy(program);
    if (status != DFG_OK)
        return dfgc_library_error(NULL);
    printf("wrote %s: %d steps, arena %llu bytes, weights %llu bytes\n", output,
           (int)stats.n_steps, (unsigned long long)stats.arena_bytes,
           (unsigned long long)stats.weights_bytes);
    return 0;
}
