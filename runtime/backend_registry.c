/* The backends compiled into this build, found by name. */
#include <string.h>
#include "backend.h"
#include "error.h"

static const dfg_backend *const backends[] = {
    &dfg_cpu_backend,
#ifdef DFG_HAVE_CUDA
    &dfg_cuda_backend,
#endif
};

#define N_BACKENDS ((int)(sizeof backends / sizeof backends[0]))

dfg_status dfg_backend_find(const char *name, const dfg_backend **out)
{
    if (!name || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_backend_find: name and out must not be NULL");
    for (int i = 0; i < N_BACKENDS; i++) {
        if (strcmp(backends[i]->name, name) == 0) {
            *out = backends[i];
            return DFG_OK;
        }
    }
    return dfg_error(DFG_ERR_NOT_FOUND,
                     "backend '%s' is not compiled into this build", name);
}

const char *dfg_backend_name(const dfg_backend *backend)
{
    return backend ? backend->name : "?";
}

dfg_backend_workspace_fn dfg_backend_workspace_rule(const dfg_backend *backend)
{
    return backend ? backend->step_workspace : NULL;
}

int dfg_backend_available(const dfg_backend *backend)
{
    return backend && backend->available();
}

const char *const *dfg_backend_names(void)
{
    static const char *const names[] = {
        DFG_CPU_BACKEND_NAME,
#ifdef DFG_HAVE_CUDA
        DFG_CUDA_BACKEND_NAME,
#endif
        NULL,
    };
    return names;
}
