/* Rendering a program's DOT report with Graphviz's `dot` program. */
#ifndef DFGC_GRAPHVIZ_RENDER_H
#define DFGC_GRAPHVIZ_RENDER_H

#include "dfg/dfg.h"

/* Runs `dot -T<format>` with the DOT report on its standard input and its
 * standard output on path ("-" is stdout), a new file that replaces the
 * old one only once dot has succeeded (include/dfg/atomic_file.h). The
 * command runs without a shell. Returns 0, or DFGC_EXIT_ERROR after
 * printing an error (dot missing, dot failing, writing failing). */
int dfgc_render_dot(const dfg_program *program, const char *format,
                    const char *path);

#endif
