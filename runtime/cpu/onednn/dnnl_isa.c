/* The CPU features a program's blocked layouts were chosen for
 * (cpu_layout_rule.h): oneDNN's ISA, by name. The names are oneDNN's
 * (dnnl_cpu_isa_t); each ISA's value is a bit set that contains those of
 * the ISAs it extends, so a CPU has what a program needs when the
 * program's bits are all in this CPU's. */
#include <dnnl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "runtime/cpu_layout_rule.h"
#include "util/error.h"

static const struct {
    const char *name;
    dnnl_cpu_isa_t isa;
} isas[] = {
    {"sse41", dnnl_cpu_isa_sse41},
    {"avx", dnnl_cpu_isa_avx},
    {"avx2", dnnl_cpu_isa_avx2},
    {"avx2_vnni", dnnl_cpu_isa_avx2_vnni},
    {"avx512_mic", dnnl_cpu_isa_avx512_mic},
    {"avx512_mic_4ops", dnnl_cpu_isa_avx512_mic_4ops},
    {"avx512_core", dnnl_cpu_isa_avx512_core},
    {"avx512_core_vnni", dnnl_cpu_isa_avx512_core_vnni},
    {"avx512_core_bf16", dnnl_cpu_isa_avx512_core_bf16},
    {"avx512_core_amx", dnnl_cpu_isa_avx512_core_amx},
};

#define N_ISAS ((int)(sizeof isas / sizeof isas[0]))

const char *dfg_cpu_layout_isa(void)
{
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    for (int i = 0; i < N_ISAS; i++)
        if (isas[i].isa == isa)
            return isas[i].name;
    return "";
}

int32_t dfg_cpu_blocked_layouts(int32_t layouts[2])
{
    unsigned have = (unsigned)dnnl_get_effective_cpu_isa();
    unsigned avx512 = (unsigned)dnnl_cpu_isa_avx512_core,
             avx2 = (unsigned)dnnl_cpu_isa_avx2;
    int32_t n = 0;
    if ((have & avx512) == avx512)
        layouts[n++] = DFG_LAYOUT_NCHW16C;
    if ((have & avx2) == avx2)
        layouts[n++] = DFG_LAYOUT_NCHW8C;
    return n;
}

int32_t dfg_cpu_layout_runs(int32_t layout)
{
    int32_t blocked[2];
    int32_t n = dfg_cpu_blocked_layouts(blocked);
    for (int32_t i = 0; i < n; i++)
        if (blocked[i] == layout)
            return layout;
    return layout == DFG_LAYOUT_PLAIN ? layout : -1;
}

const char *dfg_cpu_layout_isa_needed(int32_t layout)
{
    return layout == DFG_LAYOUT_NCHW16C  ? "avx512_core"
           : layout == DFG_LAYOUT_NCHW8C ? "avx2"
                                         : "";
}

dfg_status dfg_cpu_layout_isa_check(const char *isa)
{
    if (!isa || !isa[0])
        return DFG_OK;
    const char *here = dfg_cpu_layout_isa();
    for (int i = 0; i < N_ISAS; i++) {
        if (strcmp(isas[i].name, isa) != 0)
            continue;
        unsigned need = (unsigned)isas[i].isa;
        if ((need & (unsigned)dnnl_get_effective_cpu_isa()) == need)
            return DFG_OK;
        break;
    }
    return dfg_error(DFG_ERR_UNSUPPORTED,
                     "the program's blocked layouts were chosen for a CPU "
                     "with %s; this CPU has %s (compile the model again "
                     "here)", isa, here[0] ? here : "no ISA oneDNN names");
}

static char device[160];
static pthread_once_t device_once = PTHREAD_ONCE_INIT;

/* The "model name" line of /proc/cpuinfo, else "x86-64 CPU". */
static void describe_device(void)
{
    char model[96] = "";
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    while (f && !model[0] && fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(model, sizeof model, "%s", colon + 1 + (colon[1] == ' '));
            model[strcspn(model, "\n")] = '\0';
        }
    }
    if (f)
        fclose(f);
    const char *isa = dfg_cpu_layout_isa();
    snprintf(device, sizeof device, "%s, oneDNN %s",
             model[0] ? model : "x86-64 CPU", isa[0] ? isa : "without an ISA");
}

const char *dfg_cpu_device(void)
{
    pthread_once(&device_once, describe_device);
    return device;
}
