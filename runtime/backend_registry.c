/* The backends this build knows, found by name. The CPU backend is
 * compiled into libdfg; the CUDA one is a module, libdfg-cuda.so, opened
 * the first time a caller asks for it, so that a process that never does
 * maps no CUDA library. The module is looked for in $DFG_BACKEND_DIR when
 * set (tests in a build tree), else beside the libdfg this code was loaded
 * from, then in the install libdir. A program that links libdfg
 * statically links the module's static archive instead and registers it
 * (dfg/cuda_backend.h). Once found, a backend stays for the process: a
 * module is never closed. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/backend.h"
#include "util/error.h"

/* Every backend, once: its name, its table when compiled in, else the
 * file name of its module. */
#define DFG_BACKENDS(X)                                  \
    X(DFG_CPU_BACKEND_NAME, &dfg_cpu_backend, NULL)      \
    X(DFG_CUDA_BACKEND_NAME, NULL, "libdfg-cuda.so")

typedef struct backend_entry {
    const char *name;
    const dfg_backend *compiled_in;
    const char *module;
} backend_entry;

#define AS_ENTRY(name, table, module) {name, table, module},
#define AS_NAME(name, table, module) name,
static const backend_entry entries[] = {DFG_BACKENDS(AS_ENTRY)};
static const char *const names[] = {DFG_BACKENDS(AS_NAME) NULL};

#define N_BACKENDS ((int)(sizeof entries / sizeof entries[0]))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const dfg_backend *found[N_BACKENDS]; /* registered or loaded */

static int entry_index(const char *name)
{
    for (int i = 0; i < N_BACKENDS; i++)
        if (strcmp(entries[i].name, name) == 0)
            return i;
    return -1;
}

/* The directory of the libdfg (or program) this code is part of. */
static int own_directory(char *out, size_t size)
{
    Dl_info info;
    if (!dladdr((const void *)&found, &info) || !info.dli_fname)
        return 0;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash)
        return 0;
    int n = snprintf(out, size, "%.*s", (int)(slash - info.dli_fname),
                     info.dli_fname);
    return n > 0 && (size_t)n < size;
}

/* Checks what the module exports; closes it and sets the message if it
 * cannot serve. */
static dfg_status adopt_module(const backend_entry *e, const char *path,
                               void *handle, const dfg_backend **out)
{
    const dfg_backend_module *m = dlsym(handle, DFG_BACKEND_MODULE_SYMBOL);
    dfg_status st = DFG_OK;
    if (!m || !m->backend || !m->version)
        st = dfg_error(DFG_ERR_FORMAT, "%s backend: %s is not a dfg backend "
                       "module (no %s)", e->name, path,
                       DFG_BACKEND_MODULE_SYMBOL);
    else if (strcmp(m->version, DFG_VERSION_STRING) != 0)
        st = dfg_error(DFG_ERR_FORMAT, "%s backend: %s is version %s, libdfg "
                       "is %s", e->name, path, m->version, DFG_VERSION_STRING);
    else if (strcmp(m->backend->name, e->name) != 0)
        st = dfg_error(DFG_ERR_FORMAT, "%s backend: %s holds the '%s' backend",
                       e->name, path, m->backend->name);
    else if (m->find != dfg_backend_find)
        st = dfg_error(DFG_ERR_UNSUPPORTED, "%s backend: %s uses a second copy "
                       "of libdfg (this program links libdfg statically): link "
                       "libdfg-%s.a and register it instead (README, "
                       "'Backends')", e->name, path, e->name);
    if (st != DFG_OK) {
        dlclose(handle);
        return st;
    }
    *out = m->backend;
    return DFG_OK;
}

static dfg_status open_module(const backend_entry *e, const dfg_backend **out)
{
    char own[4096];
    const char *dirs[2] = {"no directory", ""};
    int n_dirs = 0;
    const char *override = getenv(DFG_BACKEND_DIR_ENV);
    if (override && *override) {
        dirs[n_dirs++] = override;
    } else {
        if (own_directory(own, sizeof own))
            dirs[n_dirs++] = own;
#ifdef DFG_LIBDIR /* the install libdir (meson); absent from the fuzz builds */
        dirs[n_dirs++] = DFG_LIBDIR;
#endif
    }
    for (int d = 0; d < n_dirs; d++) {
        char path[4096 + 64];
        int n = snprintf(path, sizeof path, "%s/%s", dirs[d], e->module);
        if (n < 0 || (size_t)n >= sizeof path || access(path, F_OK) != 0)
            continue;
        void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!handle)
            return dfg_error(DFG_ERR_DEVICE, "%s backend: %s does not load "
                             "(its libraries missing?): %s", e->name, path,
                             dlerror());
        return adopt_module(e, path, handle, out);
    }
    return dfg_error(DFG_ERR_NOT_FOUND, "%s backend not installed: %s is not "
                     "in %s%s%s (%s names another directory)", e->name,
                     e->module, dirs[0], n_dirs > 1 ? " nor in " : "", dirs[1],
                     DFG_BACKEND_DIR_ENV);
}

dfg_status dfg_backend_find(const char *name, const dfg_backend **out)
{
    if (!name || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_backend_find: name and out must not be NULL");
    int i = entry_index(name);
    if (i < 0)
        return dfg_error(DFG_ERR_NOT_FOUND, "no backend named '%s' "
                         "(dfg_backend_names lists them)", name);
    if (entries[i].compiled_in) {
        *out = entries[i].compiled_in;
        return DFG_OK;
    }
    pthread_mutex_lock(&lock);
    dfg_status st = DFG_OK;
    if (!found[i])
        st = open_module(&entries[i], &found[i]);
    if (st == DFG_OK)
        *out = found[i];
    pthread_mutex_unlock(&lock);
    return st;
}

dfg_status dfg_backend_register(const dfg_backend *backend)
{
    int i = backend ? entry_index(backend->name) : -1;
    if (i < 0)
        return dfg_error(DFG_ERR_NOT_FOUND, "dfg_backend_register: '%s' is "
                         "not a backend this build knows",
                         backend ? backend->name : "(null)");
    pthread_mutex_lock(&lock);
    found[i] = backend;
    pthread_mutex_unlock(&lock);
    return DFG_OK;
}

const char *dfg_backend_name(const dfg_backend *backend)
{
    return backend ? backend->name : "?";
}

dfg_backend_workspace_fn dfg_backend_workspace_rule(const dfg_backend *backend)
{
    return backend ? backend->target->workspace_rule : NULL;
}

const dfg_target *dfg_backend_target(const dfg_backend *backend)
{
    return backend ? backend->target : NULL;
}

int dfg_backend_available(const dfg_backend *backend)
{
    return backend && backend->available();
}

const char *dfg_backend_device(const dfg_backend *backend)
{
    return backend && backend->device ? backend->device() : NULL;
}

int dfg_backend_threads(const dfg_backend *backend)
{
    return backend && backend->threads ? backend->threads() : 0;
}

int dfg_backend_host_memory(const dfg_backend *backend)
{
    return backend && backend->host_memory;
}

const char *const *dfg_backend_names(void)
{
    return names;
}
