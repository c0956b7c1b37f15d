/* dfg-conformance [--expected-failures FILE] [--verbose] [DATA_DIR]
 *
 * Walks the ONNX backend test data (Debian's libonnx-testdata: node,
 * pytorch-converted, pytorch-operator, simple), runs each test in a child
 * process (a crash or a hang is one failed test, not the end of the run)
 * and ends with "N passed, M failed, K skipped" and the op types skipped.
 * Exits 1 if a test of supported ops fails and is not listed, with a
 * reason, in the expected-failures file; 77 if the data is not installed. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conformance.h"

#define DETAIL_SIZE 2048
#define CASE_TIMEOUT_S 120

static const char *const suites[] = {"node", "pytorch-converted",
                                     "pytorch-operator", "simple"};
static const char *const default_roots[] = {
    "/usr/share/libonnx-testdata/data",
    "/usr/share/onnx/testdata",
};

typedef struct expected {
    int n;
    char **names;   /* "node/test_x" */
    char **reasons;
    int *seen;
} expected;

static void load_expected(const char *path, expected *x)
{
    FILE *f = path ? fopen(path, "r") : NULL;
    if (path && !f) {
        fprintf(stderr, "cannot read expected failures '%s'\n", path);
        exit(2);
    }
    char line[2048];
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *colon = strchr(line, ':');
        if (line[0] == '#' || line[0] == '\0')
            continue;
        if (!colon || !colon[1]) {
            fprintf(stderr, "expected failures: '%s' has no reason (NAME: "
                    "REASON)\n", line);
            exit(2);
        }
        *colon = '\0';
        x->names = realloc(x->names, (size_t)(x->n + 1) * sizeof *x->names);
        x->reasons = realloc(x->reasons, (size_t)(x->n + 1) * sizeof *x->reasons);
        x->seen = realloc(x->seen, (size_t)(x->n + 1) * sizeof *x->seen);
        x->names[x->n] = strdup(line);
        x->reasons[x->n] = strdup(colon + 1 + strspn(colon + 1, " "));
        x->seen[x->n] = 0;
        x->n++;
    }
    if (f)
        fclose(f);
}

static void free_expected(expected *x)
{
    for (int i = 0; i < x->n; i++) {
        free(x->names[i]);
        free(x->reasons[i]);
    }
    free(x->names);
    free(x->reasons);
    free(x->seen);
}

static int find_expected(const expected *x, const char *name)
{
    for (int i = 0; i < x->n; i++)
        if (strcmp(x->names[i], name) == 0)
            return i;
    return -1;
}

/* Op type -> number of tests skipped for it. */
typedef struct op_counts {
    int n;
    char names[512][64];
    int counts[512];
} op_counts;

static void count_ops(op_counts *c, char *list)
{
    for (char *tok = strtok(list, " "); tok; tok = strtok(NULL, " ")) {
        int i = 0;
        while (i < c->n && strcmp(c->names[i], tok) != 0)
            i++;
        if (i == c->n && c->n < 512)
            snprintf(c->names[c->n++], sizeof c->names[0], "%s", tok);
        if (i < c->n)
            c->counts[i]++;
    }
}

/* Runs one case in a child; the outcome comes back as the exit code and
 * the detail through a pipe. */
static conformance_outcome run_isolated(const char *dir, char *detail,
                                        size_t size)
{
    int fds[2];
    detail[0] = '\0';
    if (pipe(fds) != 0) {
        snprintf(detail, size, "pipe failed");
        return CONFORMANCE_FAIL;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        alarm(CASE_TIMEOUT_S);
        char text[DETAIL_SIZE] = "";
        conformance_outcome o = conformance_run_case(dir, text, sizeof text);
        size_t n = strlen(text);
        if (write(fds[1], text, n) != (ssize_t)n)
            o = CONFORMANCE_FAIL;
        _exit((int)o);
    }
    close(fds[1]);
    size_t used = 0;
    ssize_t got;
    while (used + 1 < size &&
           (got = read(fds[0], detail + used, size - 1 - used)) > 0)
        used += (size_t)got;
    detail[used] = '\0';
    close(fds[0]);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) {
        snprintf(detail, size, "fork failed");
        return CONFORMANCE_FAIL;
    }
    if (WIFSIGNALED(status)) {
        snprintf(detail, size, "crashed with signal %d%s", WTERMSIG(status),
                 WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
        return CONFORMANCE_FAIL;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    return code <= CONFORMANCE_SKIP_FEATURE ? (conformance_outcome)code
                                            : CONFORMANCE_FAIL;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    const char *root = NULL, *expected_path = NULL, *only = NULL;
    int verbose = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expected-failures") == 0 && i + 1 < argc)
            expected_path = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--verbose") == 0)
            verbose = 1;
        else
            root = argv[i];
    }
    struct stat info;
    for (size_t i = 0; !root && i < sizeof default_roots / sizeof *default_roots; i++)
        if (stat(default_roots[i], &info) == 0)
            root = default_roots[i];
    if (!root || stat(root, &info) != 0) {
        printf("ONNX test data not installed (apt-get install "
               "libonnx-testdata); skipping\n");
        return 77;
    }
    expected x = {0};
    load_expected(expected_path, &x);
    op_counts skipped_ops = {0};
    int passed = 0, failed = 0, skipped = 0, unexpected = 0, skipped_feature = 0;
    int passed_frozen = 0;
    for (size_t s = 0; s < sizeof suites / sizeof *suites; s++) {
        char suite_dir[4096];
        snprintf(suite_dir, sizeof suite_dir, "%s/%s", root, suites[s]);
        DIR *d = opendir(suite_dir);
        if (!d)
            continue;
        char **names = NULL;
        int n = 0;
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.')
                continue;
            names = realloc(names, (size_t)(n + 1) * sizeof *names);
            names[n++] = strdup(e->d_name);
        }
        closedir(d);
        qsort(names, (size_t)n, sizeof *names, by_name);
        for (int i = 0; i < n; i++) {
            char name[600], dir[4700], detail[DETAIL_SIZE];
            snprintf(name, sizeof name, "%s/%s", suites[s], names[i]);
            snprintf(dir, sizeof dir, "%s/%s", suite_dir, names[i]);
            free(names[i]);
            if (only && !strstr(name, only))
                continue;
            conformance_outcome o = run_isolated(dir, detail, sizeof detail);
            int xi = find_expected(&x, name);
            switch (o) {
            case CONFORMANCE_PASS:
                passed++;
                passed_frozen += detail[0] != '\0';
                if (xi >= 0)
                    printf("XPASS %s (listed as expected failure: %s)\n",
                           name, x.reasons[xi]);
                else if (verbose)
                    printf("PASS  %s\n", name);
                break;
            case CONFORMANCE_FAIL:
                failed++;
                if (xi >= 0) {
                    x.seen[xi] = 1;
                    printf("XFAIL %s: %s [expected: %s]\n", name, detail,
                           x.reasons[xi]);
                } else {
                    unexpected++;
                    printf("FAIL  %s: %s\n", name, detail);
                }
                break;
            case CONFORMANCE_SKIP_OP:
                skipped++;
                if (verbose)
                    printf("SKIP  %s: unsupported ops %s\n", name, detail);
                count_ops(&skipped_ops, detail);
                break;
            case CONFORMANCE_SKIP_FEATURE:
                skipped++;
                skipped_feature++;
                printf("SKIP  %s: %s\n", name, detail);
                break;
            }
            fflush(stdout);
        }
        free(names);
    }
    printf("\nSkipped for unsupported op types (op: tests):");
    for (int i = 0; i < skipped_ops.n; i++)
        printf("%s %s: %d", i ? "," : "", skipped_ops.names[i],
               skipped_ops.counts[i]);
    printf("\n%d of the skipped tests use supported ops with an unsupported "
           "dtype, attribute or opset (listed above as SKIP)\n",
           skipped_feature);
    printf("%d of the passed tests ran with attribute-like inputs (shapes, "
           "axes, pads, bounds) frozen to the test data's values\n",
           passed_frozen);
    printf("%d failed unexpectedly, %d as expected (tests/conformance/"
           "expected_failures.txt)\n", unexpected, failed - unexpected);
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    free_expected(&x);
    return unexpected ? 1 : 0;
}
