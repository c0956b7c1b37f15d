/* dfgc: the command line over the library. Each subcommand lives in its
 * own cmd_*.c file and is listed once in the table below. */
#include <stdio.h>
#include <string.h>
#include "tools/cli.h"
#include "tools/commands.h"

typedef struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} subcommand;

static const subcommand subcommands[] = {
    {"plan", dfgc_plan, "compile a model and report its memory plan"},
    {"compile", dfgc_compile, "compile a model into a program file (.dfgp)"},
    {"run", dfgc_run, "run a model or program once and print output checksums"},
    {"bench", dfgc_bench, "time runs of a model or program; peak memory"},
    {"train", dfgc_train, "train example:mlp or example:cnn on the digits"},
    {"devices", dfgc_devices, "list the backends compiled in and their devices"},
};

#define N_SUBCOMMANDS ((int)(sizeof subcommands / sizeof subcommands[0]))

static void print_usage(FILE *out)
{
    fputs("usage: dfgc COMMAND [ARGS...]\n"
          "       dfgc --help | --version\n"
          "\n"
          "dfg compiles a dataflow graph ahead of time into one statically\n"
          "planned memory arena, and runs it.\n"
          "\n"
          "commands:\n", out);
    for (int i = 0; i < N_SUBCOMMANDS; i++)
        fprintf(out, "  %-10s %s\n", subcommands[i].name,
                subcommands[i].summary);
    fputs("\n'dfgc COMMAND --help' describes a command's arguments.\n"
          "MODEL arguments: example:NAME ('dfgc plan --list'), FILE.onnx or\n"
          "FILE.dfgp.\n",
          out);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return dfgc_usage_error(NULL, "no command given");
    const char *command = argv[1];
    if (dfgc_is_help(command)) {
        print_usage(stdout);
        return 0;
    }
    if (strcmp(command, "--version") == 0) {
        printf("dfgc %s\n", dfg_version());
        return 0;
    }
    for (int i = 0; i < N_SUBCOMMANDS; i++)
        if (strcmp(command, subcommands[i].name) == 0)
            return subcommands[i].run(argc - 1, argv + 1);
    return dfgc_usage_error(NULL, "unknown command '%s'", command);
}
