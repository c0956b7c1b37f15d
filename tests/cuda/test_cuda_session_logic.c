/* The CUDA session's host decisions, with fake CUDA calls (no device):
 * whether the backend can run on a platform (driver, device, kernel
 * image), the session's device made current for each call and given back,
 * a pending error of someone else dropped but a sticky one reported, the
 * warm-up before a graph capture clearing the status word it raised, and
 * the executor keeping a weight's staging copy until an asynchronous
 * upload has read it, and the registry's lookup of backend modules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "runtime/backend.h"
#include "runtime/cuda/plan/device_support.h"
#include "runtime/cuda/plan/thread_state.h"
#include "runtime/cuda/plan/warm_up.h"
#include "util/error.h"

/* ---- availability --------------------------------------------------- */

static const int sm[] = {80, 90};
static const dfg_cuda_build_targets targets = {sm, 2, 90};

static int supported(int driver, int runtime, int count, int major, int minor,
                     char *why)
{
    const dfg_cuda_platform p = {driver, runtime, count, major, minor};
    why[0] = '\0';
    return dfg_cuda_platform_supported(&p, &targets, why, 256);
}

static void test_platform_support(void **state)
{
    (void)state;
    char why[256];
    assert_true(supported(12040, 12040, 1, 9, 0, why));   /* H100 */
    assert_true(supported(12020, 12040, 1, 8, 0, why));   /* minor compat */
    assert_true(supported(12040, 12040, 2, 8, 6, why));   /* sm_80 cubin */
    assert_true(supported(12080, 12040, 1, 10, 0, why));  /* PTX, JIT */
    assert_false(supported(0, 12040, 0, 0, 0, why));
    assert_non_null(strstr(why, "no CUDA driver"));
    assert_false(supported(11080, 12040, 1, 9, 0, why));
    assert_non_null(strstr(why, "CUDA 11.8, older than the CUDA 12.4"));
    assert_false(supported(12040, 12040, 0, 0, 0, why));
    assert_non_null(strstr(why, "no CUDA device"));
    assert_false(supported(12040, 12040, 1, 7, 5, why));
    assert_non_null(strstr(why, "sm_75"));
    assert_non_null(strstr(why, "sm_80, sm_90, PTX compute_90"));
    /* A newer GPU needs the PTX compiled by a driver at least as new as
     * the toolkit. */
    assert_false(supported(12020, 12040, 1, 10, 0, why));
    assert_non_null(strstr(why, "PTX compute_90"));
    const dfg_cuda_build_targets cubins_only = {sm, 2, 0};
    const dfg_cuda_platform blackwell = {12080, 12040, 1, 10, 0};
    assert_false(dfg_cuda_platform_supported(&blackwell, &cubins_only, why,
                                             sizeof why));
    assert_non_null(strstr(why, "sm_100"));
}

/* ---- the thread's device and last error ------------------------------ */

static int current_device, set_calls;
static int errors[4], n_errors;

static int fake_get_device(int *device)
{
    *device = current_device;
    return 0;
}

static int fake_set_device(int device)
{
    current_device = device;
    set_calls++;
    return 0;
}

/* Pops the queued errors; the last one stays (a sticky error). */
static int fake_get_last_error(void)
{
    if (n_errors == 0)
        return 0;
    int e = errors[0];
    if (n_errors > 1) {
        memmove(errors, errors + 1, (size_t)(n_errors - 1) * sizeof errors[0]);
        n_errors--;
    } else if (e != 700) { /* 700: cudaErrorIllegalAddress, sticky */
        n_errors = 0;
    }
    return e;
}

static const dfg_cuda_thread_calls fake_calls = {
    fake_get_device, fake_set_device, fake_get_last_error};

static void test_device_per_call(void **state)
{
    (void)state;
    /* A session created on device 1, called from a thread on device 0. */
    current_device = 0;
    set_calls = 0;
    int previous = -1;
    assert_int_equal(dfg_cuda_device_enter(&fake_calls, 1, &previous), 0);
    assert_int_equal(current_device, 1);
    assert_int_equal(previous, 0);
    dfg_cuda_device_leave(&fake_calls, 1, previous);
    assert_int_equal(current_device, 0);
    assert_int_equal(set_calls, 2);
    /* Already current: no switch either way. */
    current_device = 1;
    set_calls = 0;
    assert_int_equal(dfg_cuda_device_enter(&fake_calls, 1, &previous), 0);
    dfg_cuda_device_leave(&fake_calls, 1, previous);
    assert_int_equal(set_calls, 0);
    assert_int_equal(current_device, 1);
}

static void test_pending_error(void **state)
{
    (void)state;
    n_errors = 0;
    assert_int_equal(dfg_cuda_take_pending_error(&fake_calls), 0);
    /* An out-of-memory another session handled (2: cudaErrorMemoryAllocation)
     * is dropped, and later launches see a clear state. */
    errors[0] = 2;
    n_errors = 1;
    assert_int_equal(dfg_cuda_take_pending_error(&fake_calls), 0);
    assert_int_equal(fake_get_last_error(), 0);
    /* A sticky error stays: reported. */
    errors[0] = 700;
    n_errors = 1;
    assert_int_equal(dfg_cuda_take_pending_error(&fake_calls), 700);
    n_errors = 0;
}

/* ---- the warm-up ----------------------------------------------------- */

typedef struct fake_session {
    unsigned status;      /* the device's status word */
    int saved, restored, waited;
    dfg_status enqueue_result;
    float weight, saved_weight;
} fake_session;

static dfg_status fake_save(void *ctx)
{
    fake_session *s = ctx;
    s->saved_weight = s->weight;
    s->saved = 1;
    return DFG_OK;
}

/* Zeroed inputs make an index out of range: the status word is raised;
 * the update writes the weight in place. */
static dfg_status fake_enqueue(void *ctx)
{
    fake_session *s = ctx;
    s->status = 3;
    s->weight -= 0.5f;
    return s->enqueue_result;
}

static dfg_status fake_wait(void *ctx)
{
    ((fake_session *)ctx)->waited++;
    return DFG_OK;
}

static dfg_status fake_clear_status(void *ctx)
{
    ((fake_session *)ctx)->status = 0;
    return DFG_OK;
}

static dfg_status fake_restore(void *ctx)
{
    fake_session *s = ctx;
    s->weight = s->saved_weight;
    s->restored = 1;
    return DFG_OK;
}

static void test_warm_up(void **state)
{
    (void)state;
    fake_session s = {.weight = 2.0f, .enqueue_result = DFG_OK};
    dfg_cuda_warm_up_calls calls = {&s, fake_save, fake_enqueue, fake_wait,
                                    fake_clear_status, fake_restore};
    /* The raised status word is not a failure of the session, and the
     * first real run starts with it clear. */
    assert_int_equal(dfg_cuda_warm_up(&calls), DFG_OK);
    assert_int_equal(s.status, 0);
    assert_true(s.weight == 2.0f);
    assert_true(s.saved && s.restored && s.waited == 1);
    /* A failed launch is reported, after the queue drained and the weights
     * went back. */
    s = (fake_session){.weight = 2.0f,
                       .enqueue_result = dfg_error(DFG_ERR_DEVICE, "launch")};
    assert_int_equal(dfg_cuda_warm_up(&calls), DFG_ERR_DEVICE);
    assert_true(s.restored && s.waited == 1);
    assert_true(s.weight == 2.0f);
}

/* ---- staging kept until an asynchronous upload read it --------------- */

/* A backend on host memory whose uploads, like cudaMemcpyAsync from
 * pinned memory, read their source only when the queue runs
 * (synchronize or a download). */
#define MAX_PENDING 64

struct dfg_backend_context {
    struct { void *dst; const void *src; size_t bytes; } pending[MAX_PENDING];
    int n_pending;
};

static int async_available(void) { return 1; }
static int async_supports(dfg_op op) { (void)op; return 1; }

static dfg_status async_create(const dfg_allocator *allocator,
                               dfg_backend_context **out)
{
    (void)allocator;
    *out = calloc(1, sizeof **out);
    return *out ? DFG_OK : DFG_ERR_OUT_OF_MEMORY;
}

/* Every region allocated, in order: a session's arena, then its weights. */
static void *regions[8];
static int n_regions;

static dfg_status async_alloc_region(dfg_backend_context *c, size_t bytes,
                                     void **out)
{
    (void)c;
    *out = calloc(1, bytes ? bytes : 1);
    if (*out && n_regions < 8)
        regions[n_regions++] = *out;
    return *out ? DFG_OK : DFG_ERR_OUT_OF_MEMORY;
}

static void async_free_region(dfg_backend_context *c, void *region)
{
    (void)c;
    free(region);
}

static dfg_status async_synchronize(dfg_backend_context *c)
{
    for (int i = 0; i < c->n_pending; i++)
        memcpy(c->pending[i].dst, c->pending[i].src, c->pending[i].bytes);
    c->n_pending = 0;
    return DFG_OK;
}

static dfg_status async_upload(dfg_backend_context *c, void *dst,
                               const void *src, size_t bytes)
{
    if (c->n_pending == MAX_PENDING)
        async_synchronize(c);
    c->pending[c->n_pending].dst = dst;
    c->pending[c->n_pending].src = src;
    c->pending[c->n_pending].bytes = bytes;
    c->n_pending++;
    return DFG_OK;
}

static dfg_status async_download(dfg_backend_context *c, void *dst,
                                 const void *src, size_t bytes)
{
    async_synchronize(c);
    memcpy(dst, src, bytes);
    return DFG_OK;
}

/* What a capturing backend (CUDA graphs) records of the steps: whether
 * the collective the first step points to was set at the last capture. */
static const dfg_step_args *prepared_steps;
static int captures, captured_collective, fail_capture;

static dfg_status async_prepare(dfg_backend_context *c,
                                const dfg_step_args *steps, int32_t n)
{
    (void)c, (void)n;
    prepared_steps = steps;
    return DFG_OK;
}

static dfg_status capture_again(dfg_backend_context *c)
{
    (void)c;
    if (fail_capture)
        return dfg_error(DFG_ERR_DEVICE, "capture failed");
    captures++;
    captured_collective = prepared_steps[0].collective->all_reduce_start != NULL;
    return DFG_OK;
}

static dfg_status async_run_all(dfg_backend_context *c, int32_t *failed)
{
    (void)c;
    *failed = 0;
    return DFG_OK;
}

static void async_destroy(dfg_backend_context *c) { free(c); }

static const dfg_backend async_backend = {
    .name = "async",
    .available = async_available,
    .supports_op = async_supports,
    .create = async_create,
    .alloc_region = async_alloc_region,
    .free_region = async_free_region,
    .upload = async_upload,
    .download = async_download,
    .prepare = async_prepare,
    .run_all = async_run_all,
    .synchronize = async_synchronize,
    .destroy = async_destroy,
};

/* Frees by poisoning and keeping the block (a quarantine), so that a read
 * after free sees garbage instead of the old bytes. */
#define MAX_BLOCKS 256

typedef struct poisoning_heap {
    void *blocks[MAX_BLOCKS];
    size_t sizes[MAX_BLOCKS];
    int n;
} poisoning_heap;

static void *poison_alloc(void *ctx, size_t size, size_t alignment)
{
    poisoning_heap *h = ctx;
    (void)alignment;
    if (h->n == MAX_BLOCKS)
        return NULL;
    void *p = aligned_alloc(64, (size + 63) / 64 * 64);
    h->blocks[h->n] = p;
    h->sizes[h->n++] = size;
    return p;
}

static void poison_free(void *ctx, void *ptr)
{
    poisoning_heap *h = ctx;
    for (int i = 0; ptr && i < h->n; i++)
        if (h->blocks[i] == ptr)
            memset(ptr, 0xA5, h->sizes[i]);
}

static void test_staging_outlives_upload(void **state)
{
    (void)state;
    float w_src[4] = {1, 2, 3, 4}, w_dst[4] = {0};
    const int64_t shape[1] = {4};
    dfg_program *programs[2];
    for (int k = 0; k < 2; k++) {
        dfg_graph *g = NULL;
        dfg_value x, w, y;
        assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
        assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 1, shape, &x), DFG_OK);
        assert_int_equal(dfg_graph_weight(g, "w", DFG_F32, 1, shape,
                                          k ? w_dst : w_src, &w), DFG_OK);
        const dfg_value in[2] = {x, w};
        dfg_attrs a;
        dfg_attrs_init(&a);
        assert_int_equal(dfg_graph_node(g, "add", NULL, in, 2, &a, &y, 1),
                         DFG_OK);
        assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
        assert_int_equal(dfg_compile(g, NULL, &programs[k]), DFG_OK);
        dfg_graph_destroy(g);
    }
    poisoning_heap heap = {0};
    const dfg_allocator poisoning = {&heap, poison_alloc, poison_free};
    dfg_session *src = NULL, *dst = NULL;
    n_regions = 0;
    assert_int_equal(dfg_session_create(programs[0], &async_backend, NULL,
                                        &src), DFG_OK);
    assert_int_equal(dfg_session_create(programs[1], &async_backend,
                                        &poisoning, &dst), DFG_OK);
    assert_int_equal(n_regions, 4);
    int32_t copied = 0;
    assert_int_equal(dfg_session_copy_weights(dst, src, &copied), DFG_OK);
    assert_int_equal(copied, 1);
    /* Whatever uploads are still queued run now: they must read w_src's
     * values, not a freed staging buffer. */
    assert_int_equal(dfg_session_run(dst, NULL, NULL), DFG_OK);
    assert_memory_equal(regions[3], w_src, sizeof w_src);
    dfg_session_destroy(dst);
    dfg_session_destroy(src);
    dfg_program_destroy(programs[0]);
    dfg_program_destroy(programs[1]);
    for (int i = 0; i < heap.n; i++)
        free(heap.blocks[i]);
}

static dfg_status no_start(void *ctx, int32_t bucket, float *data, int64_t n,
                           void *stream)
{
    (void)ctx, (void)bucket, (void)data, (void)n, (void)stream;
    return DFG_OK;
}

static dfg_status no_wait(void *ctx, int32_t bucket, void *stream)
{
    (void)ctx, (void)bucket, (void)stream;
    return DFG_OK;
}

/* A backend that records what its steps queue (CUDA graphs) records again
 * whenever the session's collective is set or cleared, and sees the new
 * one; a failure to do so is the setter's error. */
static void test_collective_recaptures(void **state)
{
    (void)state;
    const int64_t shape[1] = {4};
    dfg_graph *g = NULL;
    dfg_value x, y;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 1, shape, &x), DFG_OK);
    assert_int_equal(dfg_graph_node(g, "relu", NULL, &x, 1, NULL, &y, 1),
                     DFG_OK);
    assert_int_equal(dfg_graph_output(g, y, "y"), DFG_OK);
    dfg_program *p = NULL;
    assert_int_equal(dfg_compile(g, NULL, &p), DFG_OK);
    dfg_graph_destroy(g);
    dfg_backend capturing = async_backend;
    capturing.collective_changed = capture_again;
    dfg_session *s = NULL;
    assert_int_equal(dfg_session_create(p, &capturing, NULL, &s), DFG_OK);
    captures = 0;
    const dfg_collective collective = {.all_reduce_start = no_start,
                                       .all_reduce_wait = no_wait};
    assert_int_equal(dfg_session_set_collective(s, &collective), DFG_OK);
    assert_int_equal(captures, 1);
    assert_true(captured_collective);
    assert_int_equal(dfg_session_set_collective(s, NULL), DFG_OK);
    assert_int_equal(captures, 2);
    assert_false(captured_collective);
    fail_capture = 1;
    assert_int_equal(dfg_session_set_collective(s, &collective),
                     DFG_ERR_DEVICE);
    fail_capture = 0;
    assert_non_null(strstr(dfg_last_error(),
                           "dfg_session_set_collective: capture failed"));
    dfg_session_destroy(s);
    dfg_program_destroy(p);
}

/* ---- the registry ---------------------------------------------------- */

static void test_backend_module_lookup(void **state)
{
    (void)state;
    char dir[] = "/tmp/dfg-backend-dir-XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv(DFG_BACKEND_DIR_ENV, dir, 1);
    const dfg_backend *b = NULL;
    assert_int_equal(dfg_backend_find("cuda", &b), DFG_ERR_NOT_FOUND);
    assert_non_null(strstr(dfg_last_error(), "cuda backend not installed"));
    assert_non_null(strstr(dfg_last_error(), dir));
    /* A file of that name that is no shared library: an error naming it. */
    char path[128];
    snprintf(path, sizeof path, "%s/libdfg-cuda.so", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("not an ELF file", f);
    fclose(f);
    assert_int_equal(dfg_backend_find("cuda", &b), DFG_ERR_DEVICE);
    assert_non_null(strstr(dfg_last_error(), "does not load"));
    remove(path);
    rmdir(dir);
    unsetenv(DFG_BACKEND_DIR_ENV);
    /* A registered table wins without any module. */
    static dfg_backend fake_cuda; /* registered for the process */
    fake_cuda = async_backend;
    fake_cuda.name = DFG_CUDA_BACKEND_NAME;
    assert_int_equal(dfg_backend_register(&fake_cuda), DFG_OK);
    assert_int_equal(dfg_backend_find("cuda", &b), DFG_OK);
    assert_ptr_equal(b, &fake_cuda);
    assert_int_equal(dfg_backend_register(&async_backend), DFG_ERR_NOT_FOUND);
    assert_non_null(strstr(dfg_last_error(), "'async'"));
    /* Each name once, cpu first. */
    const char *const *names = dfg_backend_names();
    assert_string_equal(names[0], "cpu");
    assert_string_equal(names[1], "cuda");
    assert_null(names[2]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_platform_support),
        cmocka_unit_test(test_device_per_call),
        cmocka_unit_test(test_pending_error),
        cmocka_unit_test(test_warm_up),
        cmocka_unit_test(test_staging_outlives_upload),
        cmocka_unit_test(test_collective_recaptures),
        cmocka_unit_test(test_backend_module_lookup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
