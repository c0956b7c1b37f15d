#include "graphviz_render.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"

extern char **environ;

/* Starts dot with its stdin on a new pipe; *to_dot is the write end. */
static int spawn_dot(char *const argv[], pid_t *pid, int *to_dot)
{
    int fds[2];
    if (pipe(fds) != 0)
        return errno;
    posix_spawn_file_actions_t actions;
    int err = posix_spawn_file_actions_init(&actions);
    if (err == 0) {
        posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
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

int dfgc_render_dot(const dfg_program *program, const char *format,
                    const char *path)
{
    char type[32], output[4096];
    snprintf(type, sizeof type, "-T%s", format);
    /* "-o" and the name in one argument: a name starting with '-' stays a
     * file name. */
    if ((size_t)snprintf(output, sizeof output, "-o%s", path) >= sizeof output)
        return dfgc_error("file name too long: '%s'", path);
    char program_name[] = "dot";
    char *argv[] = {program_name, type,
                    strcmp(path, "-") == 0 ? NULL : output, NULL};
    pid_t pid = -1;
    int to_dot = -1;
    int err = spawn_dot(argv, &pid, &to_dot);
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
