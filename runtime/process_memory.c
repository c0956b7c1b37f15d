/* The process's resident memory as Linux reports it (/proc/self):
 * what the executor marks around a session's creation and the prediction
 * (memory_predict.c) reads (include/dfg/memory_predict.h,
 * session_state.h). */
#include "dfg/memory_predict.h"

#include <stdio.h>
#include <unistd.h>
#include <sys/mman.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include "runtime/backend.h"
#include "runtime/session_state.h"

/* The "KEY: N kB" line of a /proc/self file, in bytes; 0 if absent. */
static uint64_t proc_kib_line(const char *path, const char *format)
{
    FILE *f = fopen(path, "r");
    char line[256];
    unsigned long long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, format, &kib) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kib * 1024u;
}

/* Resident anonymous bytes of the process: statm's resident pages less
 * its file-backed and shared ones (kernel counters, so cheap enough for
 * every session's creation; smaps_rollup walks every mapping). */
static uint64_t anonymous_resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0, shared = 0;
    int got = f ? fscanf(f, "%llu %llu %llu", &size, &resident, &shared) : 0;
    if (f)
        fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    return got == 3 && page > 0 && resident >= shared
               ? (uint64_t)(resident - shared) * (uint64_t)page
               : 0;
}

/* Resident bytes of the pages [p, p + bytes) touches (mincore); 0 where
 * unknown. */
static uint64_t resident_in(const void *p, size_t bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    if (!p || !bytes || page <= 0)
        return 0;
    uintptr_t first = (uintptr_t)p & ~((uintptr_t)page - 1);
    uintptr_t end = ((uintptr_t)p + bytes + (uintptr_t)page - 1) &
                    ~((uintptr_t)page - 1);
    size_t pages = (end - first) / (size_t)page;
    unsigned char chunk[4096];
    uint64_t resident = 0;
    for (size_t at = 0; at < pages; at += sizeof chunk) {
        size_t n = pages - at < sizeof chunk ? pages - at : sizeof chunk;
        if (mincore((void *)(first + at * (size_t)page), n * (size_t)page,
                    chunk) != 0)
            return 0;
        for (size_t i = 0; i < n; i++)
            resident += chunk[i] & 1;
    }
    return resident * (uint64_t)page;
}

uint64_t dfg_runtime_resident_mark(const dfg_session *s, int plain_anonymous)
{
    const dfg_backend *backend = s->backend;
    int64_t copies = 0, plain = 0, overlap = 0;
    if (backend->weight_copies)
        backend->weight_copies(&copies, &plain, &overlap);
    uint64_t arena =
        backend->host_memory
            ? resident_in(s->regions[DFG_REGION_ARENA],
                          (size_t)s->program->region_bytes[DFG_REGION_ARENA])
            : 0;
    return anonymous_resident_bytes() - (uint64_t)copies - arena +
           (plain_anonymous ? (uint64_t)plain : 0);
}

uint64_t dfg_process_resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0;
    int got = f ? fscanf(f, "%llu %llu", &size, &resident) : 0;
    if (f)
        fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    return got == 2 && page > 0 ? (uint64_t)resident * (uint64_t)page : 0;
}

/* glibc's counts of its heap: in use in its arenas and in the chunks it
 * maps one by one; free in its arenas; 0 where unknown. */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
#define HEAP_COUNTS 1
#endif

uint64_t dfg_heap_in_use_bytes(void)
{
#ifdef HEAP_COUNTS
    struct mallinfo2 m = mallinfo2();
    return (uint64_t)(m.uordblks + m.hblkhd);
#else
    return 0;
#endif
}

uint64_t dfg_heap_free_bytes(void)
{
#ifdef HEAP_COUNTS
    return (uint64_t)mallinfo2().fordblks;
#else
    return 0;
#endif
}

uint64_t dfg_process_peak_resident_bytes(void)
{
    return proc_kib_line("/proc/self/status", "VmHWM: %llu kB");
}

