#include "tools/input_files.h"

#include <stdio.h>
#include <string.h>
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/tensor_data.h"

int dfgc_parse_file_arg(const char *command, const char *option,
                        const char *text, dfgc_file_arg *out)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text || !eq[1])
        return dfgc_usage_error(command, "%s wants NAME=FILE, not '%s'",
                                option, text);
    *out = (dfgc_file_arg){text, (size_t)(eq - text), eq + 1};
    return 0;
}

int32_t dfgc_file_arg_find(const dfgc_run_setup *s, int is_input,
                           const dfgc_file_arg *arg)
{
    char name[256];
    if (arg->name_length >= sizeof name)
        return -1;
    memcpy(name, arg->name, arg->name_length);
    name[arg->name_length] = '\0';
    return dfgc_run_setup_find(s, is_input, name);
}

static int read_input(const char *path, const dfg_tensor_info *info, void *data)
{
    size_t bytes = dfgc_tensor_bytes(info);
    FILE *f;
    if (dfg_fopen_regular_file(path, &f) != DFG_OK)
        return dfgc_library_error(NULL);
    size_t got = fread(data, 1, bytes, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != bytes || extra)
        return dfgc_error("'%s' does not hold exactly the %zu bytes of input "
                          "'%s' (%s, %d dims)", path, bytes, info->name,
                          dfg_dtype_name(info->dtype), (int)info->rank);
    return 0;
}

int dfgc_read_input_files(const char *command, const dfgc_file_arg *args,
                          int n, dfgc_run_setup *s)
{
    for (int i = 0; i < n; i++) {
        int32_t index = dfgc_file_arg_find(s, 1, &args[i]);
        if (index < 0)
            return dfgc_usage_error(command, "the program has no input '%.*s'",
                                    (int)args[i].name_length, args[i].name);
        int status = read_input(args[i].path, &s->input_info[index],
                                s->inputs[index]);
        if (status)
            return status;
    }
    return 0;
}
