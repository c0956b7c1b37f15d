/* dfgc devices: the backends this build knows, and whether each can run
 * here. Asking for "cuda" opens the CUDA module, so this is also how to
 * see why it cannot run (not installed, no driver, no device). */
#include <stdio.h>
#include <string.h>

#include "tools/cli.h"
#include "tools/commands.h"

static const char usage[] =
    "usage: dfgc devices\n"
    "\n"
    "Lists the backends this build knows, one per line: 'available' when\n"
    "sessions can be created on it here (with what they run on: the CPU's\n"
    "model and the ISA oneDNN uses), else 'not installed' (its module\n"
    "is missing) or 'unavailable', each with the reason.\n"
    "Use a name with 'dfgc run/bench --device NAME'.\n";

int dfgc_devices(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (dfgc_is_help(argv[i])) {
            fputs(usage, stdout);
            return 0;
        }
        return dfgc_usage_error("devices", "unexpected argument '%s'", argv[i]);
    }
    for (const char *const *name = dfg_backend_names(); *name; name++) {
        const dfg_backend *backend = NULL;
        dfg_status st = dfg_backend_find(*name, &backend);
        if (st == DFG_OK && dfg_backend_available(backend)) {
            const char *device = dfg_backend_device(backend);
            printf("%-6s available%s%s\n", *name, device ? ": " : "",
                   device ? device : "");
        }
        else
            printf("%-6s %s: %s\n", *name,
                   st == DFG_ERR_NOT_FOUND ? "not installed" : "unavailable",
                   dfg_last_error());
    }
    return 0;
}
