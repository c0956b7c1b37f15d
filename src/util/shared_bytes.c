#include "util/shared_bytes.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dfg/regular_file.h"
#include "util/error.h"
#include "util/memory.h"

struct dfg_shared_bytes {
    atomic_int references;
    dfg_allocator allocator;
    const uint8_t *data;
    size_t size;
    void *mapping; /* NULL for an allocated block */
    int anonymous; /* mapping is zero pages, not a file's */
};

static dfg_shared_bytes *make(const dfg_allocator *allocator)
{
    dfg_allocator a = dfg_allocator_or_default(allocator);
    dfg_shared_bytes *b = dfg_calloc(&a, 1, sizeof *b);
    if (!b)
        return NULL;
    atomic_init(&b->references, 1);
    b->allocator = a;
    return b;
}

dfg_shared_bytes *dfg_shared_bytes_alloc(const dfg_allocator *allocator,
                                         size_t size)
{
    dfg_shared_bytes *b = make(allocator);
    if (!b)
        return NULL;
    /* One spare byte keeps an empty block a valid, distinct pointer. */
    b->data = size + 1 > size ? dfg_alloc(&b->allocator, size + 1) : NULL;
    if (!b->data) {
        dfg_allocator a = b->allocator;
        dfg_free(&a, b);
        return NULL;
    }
    b->size = size;
    return b;
}

/* Blocks from which dfg_shared_bytes_zeros maps pages rather than fill. */
#define ZERO_MAPPING_MIN_BYTES ((size_t)1 << 16)

dfg_shared_bytes *dfg_shared_bytes_zeros(const dfg_allocator *allocator,
                                         size_t size)
{
    if (!dfg_allocator_is_default(allocator) || size < ZERO_MAPPING_MIN_BYTES) {
        dfg_shared_bytes *b = dfg_shared_bytes_alloc(allocator, size);
        if (b)
            memset(dfg_shared_bytes_fill(b), 0, size);
        return b;
    }
    void *mapping = mmap(NULL, size, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapping == MAP_FAILED)
        return NULL;
    dfg_shared_bytes *b = make(allocator);
    if (!b) {
        munmap(mapping, size);
        return NULL;
    }
    b->mapping = mapping;
    b->anonymous = 1;
    b->data = mapping;
    b->size = size;
    return b;
}

dfg_shared_bytes *dfg_shared_bytes_adopt(const dfg_allocator *allocator,
                                         void *block, size_t size)
{
    dfg_shared_bytes *b = make(allocator);
    if (!b) {
        dfg_allocator a = dfg_allocator_or_default(allocator);
        dfg_free(&a, block);
        return NULL;
    }
    b->data = block;
    b->size = size;
    return b;
}

uint8_t *dfg_shared_bytes_fill(dfg_shared_bytes *bytes)
{
    return bytes->mapping ? NULL : (uint8_t *)bytes->data;
}

dfg_status dfg_shared_bytes_map(const char *path, uint64_t max_bytes,
                                const dfg_allocator *allocator,
                                dfg_shared_bytes **out)
{
    *out = NULL;
    int fd;
    dfg_status status = dfg_open_regular_file(path, &fd);
    if (status != DFG_OK)
        return status;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return dfg_error(DFG_ERR_IO, "cannot read '%s'", path);
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > max_bytes ||
        (uint64_t)st.st_size > SIZE_MAX) {
        close(fd);
        return dfg_error(DFG_ERR_FORMAT, "'%s': %lld bytes, more than the "
                         "%llu allowed", path, (long long)st.st_size,
                         (unsigned long long)max_bytes);
    }
    size_t size = (size_t)st.st_size;
    if (size == 0) {
        close(fd);
        *out = dfg_shared_bytes_alloc(allocator, 0);
        return *out ? DFG_OK
                    : dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory");
    }
    void *mapping = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (mapping == MAP_FAILED)
        return dfg_error(DFG_ERR_IO, "cannot map the %zu bytes of '%s'", size,
                         path);
    dfg_shared_bytes *b = make(allocator);
    if (!b) {
        munmap(mapping, size);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory");
    }
    b->mapping = mapping;
    b->data = mapping;
    b->size = size;
    *out = b;
    return DFG_OK;
}

const uint8_t *dfg_shared_bytes_data(const dfg_shared_bytes *bytes)
{
    return bytes->data;
}

size_t dfg_shared_bytes_size(const dfg_shared_bytes *bytes)
{
    return bytes->size;
}

int dfg_shared_bytes_is_mapped(const dfg_shared_bytes *bytes)
{
    return bytes->mapping != NULL && !bytes->anonymous;
}

int dfg_shared_bytes_is_zero_pages(const dfg_shared_bytes *bytes)
{
    return bytes->mapping != NULL && bytes->anonymous;
}

int dfg_shared_bytes_is_heap(const dfg_shared_bytes *bytes)
{
    return bytes->mapping == NULL &&
           dfg_allocator_is_default(&bytes->allocator);
}

void dfg_drop_pages(const void *data, size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || size == 0)
        return;
    uintptr_t begin = (uintptr_t)data, end = begin + size;
    uintptr_t first = (begin + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t last = end & ~((uintptr_t)page - 1);
    if (first >= last)
        return;
    /* Advice only: on failure the pages simply stay. Unmapped, the pages
     * would still be in the page cache, and a read of a neighbour maps
     * every cached page around it back in (fault-around): evict them too
     * (MADV_PAGEOUT, where the kernel has it), and read no more than the
     * page asked for when a neighbour faults (MADV_RANDOM). */
    (void)madvise((void *)first, last - first, MADV_RANDOM);
    (void)madvise((void *)first, last - first, MADV_DONTNEED);
#ifdef MADV_PAGEOUT
    (void)madvise((void *)first, last - first, MADV_PAGEOUT);
#endif
}

void dfg_shared_bytes_drop_pages(const dfg_shared_bytes *bytes,
                                 const void *data, size_t size)
{
    uintptr_t begin = (uintptr_t)data, base = (uintptr_t)bytes->data;
    if (bytes->mapping && begin >= base && begin - base <= bytes->size &&
        size <= bytes->size - (begin - base))
        dfg_drop_pages(data, size);
}

int dfg_shared_bytes_held_once(const dfg_shared_bytes *bytes)
{
    return atomic_load_explicit(&((dfg_shared_bytes *)bytes)->references,
                                memory_order_acquire) == 1;
}

void dfg_shared_bytes_retain(dfg_shared_bytes *bytes)
{
    atomic_fetch_add_explicit(&bytes->references, 1, memory_order_relaxed);
}

void dfg_shared_bytes_release(dfg_shared_bytes *bytes)
{
    if (!bytes ||
        atomic_fetch_sub_explicit(&bytes->references, 1,
                                  memory_order_acq_rel) != 1)
        return;
    dfg_allocator a = bytes->allocator;
    if (bytes->mapping)
        munmap(bytes->mapping, bytes->size);
    else
        dfg_free(&a, (void *)bytes->data);
    dfg_free(&a, bytes);
}
