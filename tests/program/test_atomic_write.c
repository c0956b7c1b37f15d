/* Replacing files (include/dfg/atomic_file.h): `dfgc compile -o
 * existing.dfgp` killed (SIGKILL) at many moments leaves either the old file
 * byte for byte or the whole new one; a program served from the mapped old
 * file still reads its weights after a compile replaced the file; a
 * command that fails (a bad model, a full disk) leaves the old outputs and
 * no temporary file.
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "dfg/dfg.h"
#include "tests/support/onnx_builder.h"
#include "tests/support/file_bytes.h"
#include "tests/support/scratch_dir.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
/* The big model's weight: 8 MiB, so that writing its program takes a
 * while to kill the writer in. */
#define BIG_ROWS 1024
#define BIG_COLS 2048

static const char *dfgc;

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
    scratch_write(path, packed, size);
    free(packed);
    onnx_builder_free(&b);
}

/* dfgc with argv; a write past max_file_bytes (0: no limit) fails with
 * EFBIG, as on a full disk. */
static pid_t start_dfgc_limited(char *const argv[], rlim_t max_file_bytes)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* Quiet: only the files matter here. */
        freopen("/dev/null", "w", stdout);
        freopen("/dev/null", "w", stderr);
        if (max_file_bytes) {
            struct rlimit limit = {max_file_bytes, max_file_bytes};
            signal(SIGXFSZ, SIG_IGN);
            setrlimit(RLIMIT_FSIZE, &limit);
        }
        execv(dfgc, argv);
        _exit(127);
    }
    return pid;
}

static pid_t start_dfgc(char *const argv[])
{
    return start_dfgc_limited(argv, 0);
}

/* Runs dfgc to its end; its exit status. */
static int run_dfgc_limited(char *const argv[], rlim_t max_file_bytes)
{
    int status;
    pid_t pid = start_dfgc_limited(argv, max_file_bytes);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_dfgc(char *const argv[])
{
    return run_dfgc_limited(argv, 0);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The temporary files (".NAME.tmp-...") in the scratch folder; removed if
 * asked. */
static int temporaries(int remove)
{
    DIR *d = opendir(scratch_dir());
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp-")) {
            if (remove)
                unlink(scratch_path(e->d_name));
            n++;
        }
    closedir(d);
    return n;
}

static int remove_temporaries(void)
{
    return temporaries(1);
}

static int same_bytes(const char *path, const uint8_t *want, size_t size)
{
    size_t got_size = 0;
    uint8_t *got = file_bytes(path, &got_size);
    int same = got && got_size == size && memcmp(got, want, size) == 0;
    free(got);
    return same;
}

/* Waits until pid has begun writing the program (a temporary file
 * exists, or the target's size changed: written in place) or has ended. */
static void wait_for_writing(pid_t pid, const char *target, size_t old_size)
{
    for (;;) {
        struct stat st;
        siginfo_t ended = {0};
        /* WNOWAIT: an ended dfgc stays to be reaped by the caller. */
        if (temporaries(0) > 0 ||
            (stat(target, &st) == 0 && (size_t)st.st_size != old_size) ||
            (waitid(P_PID, (id_t)pid, &ended,
                    WEXITED | WNOHANG | WNOWAIT) == 0 && ended.si_pid == pid))
            return;
        usleep(100);
    }
}

/* Starts the compile over the old file, kills it, and checks the target.
 * delay_us after the start, or after writing began if after_start is 0.
 * Returns 1 for the old file, 2 for the new one. */
static int kill_compile(char *const argv[], const char *target,
                        const uint8_t *old_bytes, size_t old_size,
                        const uint8_t *new_bytes, size_t new_size,
                        int after_start, useconds_t delay_us)
{
    scratch_write(target, old_bytes, old_size);
    pid_t pid = start_dfgc(argv);
    if (!after_start)
        wait_for_writing(pid, target, old_size);
    usleep(delay_us);
    kill(pid, SIGKILL);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    int is_old = same_bytes(target, old_bytes, old_size);
    int is_new = same_bytes(target, new_bytes, new_size);
    if (!is_old && !is_new)
        fail_msg("killed %u us after %s: '%s' is neither the old file nor "
                 "the new one", (unsigned)delay_us,
                 after_start ? "the start" : "writing began", target);
    remove_temporaries();
    return is_old ? 1 : 2;
}

static void test_killed_compile_leaves_old_or_new(void **state)
{
    (void)state;
    char *model = scratch_path("big.onnx"), *target = scratch_path("t.dfgp");
    write_big_model(model);
    char *compile_big[] = {"dfgc", "compile", model, "-o", target, NULL};
    char *compile_old[] = {"dfgc", "compile", "example:mlp", "-o", target,
                           NULL};
    /* The whole new file, and how long making it takes. */
    double start = now();
    assert_int_equal(run_dfgc(compile_big), 0);
    double took = now() - start;
    size_t new_size, old_size;
    uint8_t *new_bytes = file_bytes(target, &new_size);
    assert_int_equal(run_dfgc(compile_old), 0);
    uint8_t *old_bytes = file_bytes(target, &old_size);
    assert_non_null(new_bytes);
    assert_non_null(old_bytes);
    assert_true(old_size < new_size);
    int seen[3] = {0};
    /* From the start to past the end of a normal run, */
    for (int k = 0; k < 8; k++)
        seen[kill_compile(compile_big, target, old_bytes, old_size,
                          new_bytes, new_size, 1,
                          (useconds_t)(took * 1e6 * k / 6.0))]++;
    /* and inside the write, where a file written in place is partial. */
    static const useconds_t into_write[] = {0, 300, 1000, 3000, 10000, 30000};
    for (size_t k = 0; k < sizeof into_write / sizeof *into_write; k++)
        seen[kill_compile(compile_big, target, old_bytes, old_size,
                          new_bytes, new_size, 0, into_write[k])]++;
    /* Some kills landed before the rename (how many depends on the
     * machine's speed, as does seeing the new file). */
    assert_true(seen[1] > 0);
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
    char *model = scratch_path("big.onnx"), *target = scratch_path("m.dfgp");
    char *copy = scratch_path("copy.dfgp");
    write_big_model(model);
    char *compile_big[] = {"dfgc", "compile", model, "-o", target, NULL};
    char *compile_small[] = {"dfgc", "compile", "example:mlp", "-o", target,
                             NULL};
    assert_int_equal(run_dfgc(compile_big), 0);
    size_t size;
    uint8_t *before = file_bytes(target, &size);
    assert_non_null(before);
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
    char *bad = scratch_path("bad.onnx"), *json = scratch_path("plan.json");
    char *svg = scratch_path("plan.svg"), *out = scratch_path("o.dfgp");
    const char junk[] = "not a model";
    scratch_write(bad, junk, sizeof junk);
    const char old[] = "the old file";
    scratch_write(json, old, sizeof old);
    scratch_write(svg, old, sizeof old);
    scratch_write(out, old, sizeof old);
    char *plan[] = {"dfgc", "plan", bad, "--json", json, "--svg", svg, NULL};
    char *compile[] = {"dfgc", "compile", bad, "-o", out, NULL};
    assert_int_equal(run_dfgc(plan), 1);
    assert_int_equal(run_dfgc(compile), 1);
    assert_true(same_bytes(json, (const uint8_t *)old, sizeof old));
    assert_true(same_bytes(svg, (const uint8_t *)old, sizeof old));
    assert_true(same_bytes(out, (const uint8_t *)old, sizeof old));
    assert_int_equal(remove_temporaries(), 0);
    /* The disk "full" after 1 MiB of the 8 MiB program. */
    char *model = scratch_path("big.onnx");
    write_big_model(model);
    char *compile_big[] = {"dfgc", "compile", model, "-o", out, NULL};
    assert_int_equal(run_dfgc_limited(compile_big, (rlim_t)1 << 20), 1);
    assert_true(same_bytes(out, (const uint8_t *)old, sizeof old));
    assert_int_equal(remove_temporaries(), 0);
    /* A folder that does not exist: an error naming the file. */
    assert_int_equal(dfg_write_file_atomically(scratch_path("no/such"), old,
                                               sizeof old),
                     DFG_ERR_IO);
    assert_non_null(strstr(dfg_last_error(), "no/such"));
}

/* The library's own call: the new content, the old mode, a symbolic link
 * kept, a device written in place. */
static void test_write_file_atomically(void **state)
{
    (void)state;
    char *file = scratch_path("f.txt"), *link = scratch_path("l.txt");
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
    /* 0666 is kept too, whatever the umask. */
    assert_int_equal(chmod(file, 0666), 0);
    assert_int_equal(dfg_write_file_atomically(file, a, sizeof a), DFG_OK);
    assert_int_equal(stat(file, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0666);
    assert_int_equal(dfg_write_file_atomically("/dev/null", a, sizeof a),
                     DFG_OK);
    assert_int_equal(remove_temporaries(), 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH/TO/dfgc\n", argv[0]);
        return 2;
    }
    dfgc = argv[1];
    if (scratch_dir_make("dfg-atomic") != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_file_atomically),
        cmocka_unit_test(test_failed_command_keeps_old_files),
        cmocka_unit_test(test_mapped_program_survives_replacement),
        cmocka_unit_test(test_killed_compile_leaves_old_or_new),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    scratch_dir_remove();
    return failed;
}
