/* Replacing files (include/dfg/atomic_file.h): `dfgc compile -o
 * existing.dfgp` killed (SIGKILL) at many moments leaves either the old file
 * byte for byte or the whole new one; a program served from the mapped old
 * file still reads its weights after a compile replaced the file; a
 * command that fails leaves the old outputs and no temporary file.
 * usage: test_atomic_write PATH/TO/dfgc */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "dfg/dfg.h"
#include "onnx_builder.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
/* The big model's weight: 32 MiB, so that writing its program takes a
 * while to kill the writer in. */
#define BIG_ROWS 1024
#define BIG_COLS 8192

static const char *dfgc;
static char work[256];

static char *path_in_work(const char *name)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, sizeof paths[0], "%s/%s", work, name);
    return p;
}

static uint8_t *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *bytes = malloc((size_t)n + 1);
    assert_non_null(bytes);
    *size = fread(bytes, 1, (size_t)n, f);
    fclose(f);
    return bytes;
}

static void write_all(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

/* x[1, BIG_ROWS] times a weight of BIG_ROWS x BIG_COLS. */
static void write_big_model(const char *path)
{
    onnx_builder b;
    onnx_builder_init(&b, 13);
    int64_t x_dims[2] = {1, BIG_ROWS}, w_dims[2] = {BIG_ROWS, BIG_COLS};
    size_t bytes = (size_t)BIG_ROWS * BIG_COLS * sizeof(float);
    float *w = malloc(bytes);
    assert_non_null(w);
    for (size_t i = 0; i < bytes / sizeof(float); i++)
        w[i] = (float)(i % 251) * 0.01f;
    onnx_builder_input(&b, "x", F32, 2, x_dims, NULL);
    onnx_builder_initializer(&b, "w", F32, 2, w_dims, w, bytes);
    free(w);
    onnx_builder_node(&b, "MatMul", "mm", (const char *[]){"x", "w", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "y");
    size_t size;
    uint8_t *packed = onnx_builder_pack(&b, &size);
    write_all(path, packed, size);
    free(packed);
    onnx_builder_free(&b);
}

static pid_t start_dfgc(char *const argv[])
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* Quiet: only the files matter here. */
        freopen("/dev/null", "w", stdout);
        freopen("/dev/null", "w", stderr);
        execv(dfgc, argv);
        _exit(127);
    }
    return pid;
}

/* Runs dfgc to its end; its exit status. */
static int run_dfgc(char *const argv[])
{
    int status;
    assert_int_equal(waitpid(start_dfgc(argv), &status, 0) > 0, 1);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The temporary files (".NAME.tmp-...") left in work; removes them. */
static int remove_temporaries(void)
{
    DIR *d = opendir(work);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp-")) {
            unlink(path_in_work(e->d_name));
            n++;
        }
    closedir(d);
    return n;
}

static int same_bytes(const char *path, const uint8_t *want, size_t size)
{
    size_t got_size = 0;
    uint8_t *got = read_all(path, &got_size);
    int same = got && got_size == size && memcmp(got, want, size) == 0;
    free(got);
    return same;
}

static void test_killed_compile_leaves_old_or_new(void **state)
{
    (void)state;
    char *model = path_in_work("big.onnx"), *target = path_in_work("t.dfgp");
    write_big_model(model);
    char *compile_big[] = {"dfgc", "compile", model, "-o", target, NULL};
    char *compile_old[] = {"dfgc", "compile", "example:mlp", "-o", target,
                           NULL};
    /* The whole new file, and how long writing it takes. */
    double start = now();
    assert_int_equal(run_dfgc(compile_big), 0);
    double took = now() - start;
    size_t new_size, old_size;
    uint8_t *new_bytes = read_all(target, &new_size);
    assert_int_equal(run_dfgc(compile_old), 0);
    uint8_t *old_bytes = read_all(target, &old_size);
    assert_non_null(new_bytes);
    assert_non_null(old_bytes);
    assert_true(old_size < new_size);
    int olds = 0, news = 0;
    for (int k = 0; k < 14; k++) {
        write_all(target, old_bytes, old_size);
        /* From the start to past the end of a normal run. */
        useconds_t delay = (useconds_t)(took * 1e6 * k / 12.0);
        pid_t pid = start_dfgc(compile_big);
        usleep(delay);
        kill(pid, SIGKILL);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        int is_old = same_bytes(target, old_bytes, old_size);
        int is_new = same_bytes(target, new_bytes, new_size);
        if (!is_old && !is_new)
            fail_msg("killed after %u us: '%s' is neither the old file nor "
                     "the new one", (unsigned)delay, target);
        olds += is_old;
        news += is_new;
        remove_temporaries();
    }
    /* Both outcomes were seen: the kills did land inside the write. */
    assert_true(olds > 0);
    assert_true(news > 0);
    dfg_program *program;
    assert_int_equal(dfg_program_load(target, NULL, &program), DFG_OK);
    assert_int_equal(dfg_program_verify(program), DFG_OK);
    dfg_program_destroy(program);
    free(new_bytes);
    free(old_bytes);
}

/* A served program maps its file: a compile replacing the file must not
 * change (or truncate) the pages it reads. */
static void test_mapped_program_survives_replacement(void **state)
{
    (void)state;
    char *model = path_in_work("big.onnx"), *target = path_in_work("m.dfgp");
    char *copy = path_in_work("copy.dfgp");
    write_big_model(model);
    char *compile_big[] = {"dfgc", "compile", model, "-o", target, NULL};
    char *compile_small[] = {"dfgc", "compile", "example:mlp", "-o", target,
                             NULL};
    assert_int_equal(run_dfgc(compile_big), 0);
    size_t size;
    uint8_t *before = read_all(target, &size);
    dfg_program *served;
    assert_int_equal(dfg_program_load(target, NULL, &served), DFG_OK);
    assert_int_equal(run_dfgc(compile_small), 0);
    /* Saving reads every weight byte of the mapping. */
    assert_int_equal(dfg_program_save(served, copy), DFG_OK);
    assert_true(same_bytes(copy, before, size));
    dfg_program_destroy(served);
    free(before);
}

/* A failing command leaves the old outputs and no temporary file. */
static void test_failed_command_keeps_old_files(void **state)
{
    (void)state;
    char *bad = path_in_work("bad.onnx"), *json = path_in_work("plan.json");
    char *svg = path_in_work("plan.svg"), *out = path_in_work("o.dfgp");
    const char junk[] = "not a model";
    write_all(bad, junk, sizeof junk);
    const char old[] = "the old file";
    write_all(json, old, sizeof old);
    write_all(svg, old, sizeof old);
    write_all(out, old, sizeof old);
    char *plan[] = {"dfgc", "plan", bad, "--json", json, "--svg", svg, NULL};
    char *compile[] = {"dfgc", "compile", bad, "-o", out, NULL};
    assert_int_equal(run_dfgc(plan), 1);
    assert_int_equal(run_dfgc(compile), 1);
    assert_true(same_bytes(json, (const uint8_t *)old, sizeof old));
    assert_true(same_bytes(svg, (const uint8_t *)old, sizeof old));
    assert_true(same_bytes(out, (const uint8_t *)old, sizeof old));
    assert_int_equal(remove_temporaries(), 0);
    /* A folder that does not exist: an error naming the file. */
    assert_int_equal(dfg_write_file_atomically(path_in_work("no/such"), old,
                                               sizeof old),
                     DFG_ERR_IO);
    assert_non_null(strstr(dfg_last_error(), "no/such"));
}

/* The library's own call: the new content, the old mode, a symbolic link
 * kept, a device written in place. */
static void test_write_file_atomically(void **state)
{
    (void)state;
    char *file = path_in_work("f.txt"), *link = path_in_work("l.txt");
    const char a[] = "first", b[] = "second version";
    assert_int_equal(dfg_write_file_atomically(file, a, sizeof a), DFG_OK);
    assert_int_equal(chmod(file, 0640), 0);
    assert_int_equal(symlink("f.txt", link), 0);
    assert_int_equal(dfg_write_file_atomically(link, b, sizeof b), DFG_OK);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(stat(file, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_true(same_bytes(file, (const uint8_t *)b, sizeof b));
    assert_int_equal(dfg_write_file_atomically("/dev/null", a, sizeof a),
                     DFG_OK);
    assert_int_equal(remove_temporaries(), 0);
}

static int remove_work(void)
{
    char command[300];
    snprintf(command, sizeof command, "rm -rf '%s'", work);
    return system(command);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/dfgc\n", argv[0]);
        return 2;
    }
    dfgc = argv[1];
    const char *tmp = getenv("TMPDIR");
    snprintf(work, sizeof work, "%s/dfg-atomic.XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(work)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_file_atomically),
        cmocka_unit_test(test_failed_command_keeps_old_files),
        cmocka_unit_test(test_mapped_program_survives_replacement),
        cmocka_unit_test(test_killed_compile_leaves_old_or_new),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    remove_work();
    return failed;
}
