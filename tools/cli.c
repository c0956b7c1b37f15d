#include "cli.h"
#include "cli_number.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_error(const char *fmt, va_list args)
{
    fputs("dfgc: error: ", stderr);
    vfprintf(stderr, fmt, args);
}

int dfgc_error(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    print_error(fmt, args);
    va_end(args);
    fputc('\n', stderr);
    return DFGC_EXIT_ERROR;
}

int dfgc_usage_error(const char *command, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    print_error(fmt, args);
    va_end(args);
    if (command)
        fprintf(stderr, " (see 'dfgc %s --help')\n", command);
    else
        fputs(" (see 'dfgc --help')\n", stderr);
    return DFGC_EXIT_USAGE;
}

int dfgc_library_error(const char *what)
{
    if (!what)
        return dfgc_error("%s", dfg_last_error());
    return dfgc_error("%s: %s", what, dfg_last_error());
}

int dfgc_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int dfgc_parse_arguments(const char *command, const char *usage, int argc,
                         char **argv, dfgc_option_parser parse_option,
                         void *ctx, const char **model)
{
    *model = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (dfgc_is_help(arg)) {
            fputs(usage, stdout);
            return 0;
        }
        int found = parse_option(argc, argv, &i, ctx);
        if (found < 0)
            return -found;
        if (found > 0)
            continue;
        if (arg[0] == '-' && arg[1] != '\0')
            return dfgc_usage_error(command, "unknown option '%s'", arg);
        if (*model)
            return dfgc_usage_error(command, "more than one MODEL ('%s', "
                                    "'%s')", *model, arg);
        *model = arg;
    }
    return -1;
}

int dfgc_option_value(const char *command, int argc, char **argv, int *i,
                      const char *name, const char **value)
{
    const char *arg = argv[*i];
    size_t length = strlen(name);
    if (strncmp(arg, name, length) != 0)
        return 0;
    if (arg[length] == '=') {
        *value = arg + length + 1;
        return 1;
    }
    if (arg[length] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        dfgc_usage_error(command, "%s needs a value", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

/* A decimal power of two in [1, 2^30]; 0 on anything else. */
static uint64_t parse_alignment(const char *text)
{
    if (!text[0] || text[0] < '0' || text[0] > '9')
        return 0;
    errno = 0;
    char *end;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno || *end || value == 0 || value > (1ull << 30) ||
        (value & (value - 1)))
        return 0;
    return (uint64_t)value;
}

void dfgc_compile_options_for_cpu(dfg_compile_options *options)
{
    dfg_compile_options_init(options);
    const dfg_backend *cpu = NULL;
    if (dfg_backend_find("cpu", &cpu) == DFG_OK)
        options->backend_workspace = dfg_backend_workspace_rule(cpu);
}

int dfgc_compile_option(const char *command, int argc, char **argv, int *i,
                        dfg_compile_options *options)
{
    const char *value;
    int found = dfgc_shapes_option(command, argc, argv, i);
    if (found != 0)
        return found;
    found = dfgc_option_value(command, argc, argv, i, "--planner", &value);
    if (found == 1) {
        dfg_planner planner;
        if (dfg_planner_from_name(value, &planner) != 0) {
            char known[256] = "";
            for (int p = 0; p < DFG_PLANNER_COUNT; p++)
                snprintf(known + strlen(known), sizeof known - strlen(known),
                         "%s%s", p ? ", " : "", dfg_planner_name(p));
            dfgc_usage_error(command, "unknown planner '%s' (planners: %s)",
                             value, known);
            return -1;
        }
        options->planner = planner;
        return 1;
    }
    if (found < 0)
        return -1;
    found = dfgc_option_value(command, argc, argv, i, "--blas-workspace",
                              &value);
    if (found == 1) {
        uint64_t bytes;
        if (dfgc_parse_u64(command, "--blas-workspace", value, 0,
                           DFG_MAX_BLAS_WORKSPACE, &bytes) != 0)
            return -1;
        options->blas_workspace_bytes = bytes;
        return 1;
    }
    if (found < 0)
        return -1;
    found = dfgc_option_value(command, argc, argv, i, "--align", &value);
    if (found == 1) {
        options->alignment = parse_alignment(value);
        if (options->alignment == 0) {
            dfgc_usage_error(command, "--align wants a power of two from 1 "
                             "to 1073741824, not '%s'", value);
            return -1;
        }
    }
    return found;
}

FILE *dfgc_open_output(const char *path)
{
    if (strcmp(path, "-") == 0)
        return stdout;
    FILE *stream = fopen(path, "w");
    if (!stream)
        dfgc_error("cannot write '%s': %s", path, strerror(errno));
    return stream;
}

int dfgc_close_output(FILE *stream, const char *path)
{
    int failed = fflush(stream) != 0 || ferror(stream);
    if (stream != stdout)
        failed |= fclose(stream) != 0;
    if (failed)
        return dfgc_error("writing '%s' failed", path);
    return 0;
}
