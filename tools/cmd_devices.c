/* dfgc devices: the backends compiled into this build, and whether each
 * can run here (a device is present). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

static const char usage[] =
    "usage: dfgc devices\n"
    "\n"
    "Lists the backends compiled into this build, one per line, with\n"
    "'available' when sessions can be created on it here or 'no device'.\n"
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
        if (dfg_backend_find(*name, &backend) != DFG_OK)
            return dfgc_library_error(*name);
        printf("%-6s %s\n", *name,
               dfg_backend_available(backend) ? "available" : "no device");
    }
    return 0;
}
