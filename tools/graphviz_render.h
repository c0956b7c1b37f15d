/* Rendering a program's DOT report with Graphviz's `dot` program. */
#ifndef DFGC_GRAPHVIZ_RENDER_H
#define DFGC_GRAPHVIZ_RENDER_H

#include "dfg/dfg.h"

/* Runs `dot -T<format> -o<path>` ("-" is stdout) with the DOT report on
 * its standard input. The command runs without a shell, so any file name
 * is passed through as it is. Returns 0, or DFGC_EXIT_ERROR after printing
 * an error (dot missing, dot failing, writing failing). */
int dfgc_render_dot(const dfg_program *program, const char *format,
                    const char *path);

#endif
