#include "tools/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dfg/atomic_file.h"

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

int dfgc_open_output(const char *path, dfgc_output *out)
{
    out->stream = NULL;
    out->file = NULL;
    out->path = path;
    if (strcmp(path, "-") == 0) {
        out->stream = stdout;
        return 0;
    }
    if (dfg_atomic_file_open(path, &out->file) != DFG_OK)
        return dfgc_library_error(NULL);
    out->stream = dfg_atomic_file_stream(out->file);
    return 0;
}

int dfgc_close_output(dfgc_output *out, int complete)
{
    struct dfg_atomic_file *file = out->file;
    FILE *stream = out->stream;
    out->stream = NULL;
    out->file = NULL;
    if (!stream)
        return 0;
    if (!file) {
        if (fflush(stream) != 0 || ferror(stream))
            return dfgc_error("writing '%s' failed", out->path);
        return 0;
    }
    if (!complete) {
        dfg_atomic_file_discard(file);
        return 0;
    }
    if (dfg_atomic_file_commit(file) != DFG_OK)
        return dfgc_library_error(NULL);
    return 0;
}

int dfgc_parse_u64(const char *command, const char *option, const char *text,
                   uint64_t min, uint64_t max, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    /* strtoull accepts "-1" as a huge value; only plain digits are wanted. */
    if (text[0] < '0' || text[0] > '9' || errno || *end || value < min ||
        value > max)
        return dfgc_usage_error(command, "%s wants an integer from %llu to "
                                "%llu, not '%s'", option,
                                (unsigned long long)min,
                                (unsigned long long)max, text);
    *out = value;
    return 0;
}
