#include "tools/graphviz_render.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tools/cli.h"

extern char **environ;

/* Starts dot with its stdin on a new pipe (*to_dot is the write end) and
 * its stdout on the stream output. */
static int spawn_dot(char *const argv[], FILE *output, pid_t *pid,
                     int *to_dot)
{
    int fds[2];
    if (pipe(fds) != 0)
        return errno;
    posix_spawn_file_actions_t actions;
    int err = posix_spawn_file_actions_init(&actions);
    if (err == 0) {
        posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
        if (output != stdout)
            posix_spawn_file_actions_adddup2(&actions, fileno(output),
                                             STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&actions, fds[0]);
        posix_spawn_file_actions_addclose(&actions, fds[1]);
        err = posix_spawnp(pid, "dot", &actions, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&actions);
    }
    close(fds[0]);
    if (err != 0) {
        close(fds[1]);
        return err;
    }
    *to_dot = fds[1];
    return 0;
}

/* Writes the DOT into the pipe; SIGPIPE is ignored meanwhile so that a
 * dot dying early is an error here rather than the end of dfgc. */
static int feed_dot(const dfg_program *program, int to_dot)
{
    void (*previous)(int) = signal(SIGPIPE, SIG_IGN);
    FILE *stream = fdopen(to_dot, "w");
    int failed = !stream;
    if (stream) {
        failed = dfg_report_dot(program, stream) != DFG_OK;
        failed |= fclose(stream) != 0;
    } else {
        close(to_dot);
    }
    signal(SIGPIPE, previous);
    return failed;
}

/* Runs dot on the program's graph, its picture into output; 0 or an exit
 * status after printing an error. */
static int run_dot(const dfg_program *program, const char *format,
                   const char *path, FILE *output)
{
    char type[32];
    snprintf(type, sizeof type, "-T%s", format);
    char program_name[] = "dot";
    char *argv[] = {program_name, type, NULL};
    pid_t pid = -1;
    int to_dot = -1;
    /* What stdio holds must reach the file before dot writes after it. */
    fflush(output);
    int err = spawn_dot(argv, output, &pid, &to_dot);
    if (err == ENOENT)
        return dfgc_error("cannot render '%s': Graphviz's 'dot' program is "
                          "not installed (e.g. apt-get install graphviz); "
                          "--dot FILE writes the graph as text", path);
    if (err != 0)
        return dfgc_error("cannot run dot: %s", strerror(err));
    int write_failed = feed_dot(program, to_dot);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return dfgc_error("waiting for dot: %s", strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return dfgc_error("dot could not render '%s' as %s", path, format);
    if (write_failed)
        return dfgc_error("writing the graph to dot failed");
    return 0;
}

int dfgc_render_dot(const dfg_program *program, const char *format,
                    const char *path)
{
    /* dot writes on its stdout, which is the new file: the old one is
     * replaced only by a complete picture. */
    dfgc_output output;
    if (dfgc_open_output(path, &output) != 0)
        return DFGC_EXIT_ERROR;
    int status = run_dot(program, format, path, output.stream);
    int closed = dfgc_close_output(&output, status == 0);
    return status ? status : closed;
}
