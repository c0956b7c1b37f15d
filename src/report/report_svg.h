/* The arena timeline picture, shared by the SVG report and the HTML page
 * that embeds it. */
#ifndef DFG_REPORT_SVG_H
#define DFG_REPORT_SVG_H

#include <stdio.h>
#include "program/plan_timeline.h"

/* Writes the <svg> element (no XML declaration). Every arena tensor is one
 * <rect class="tensor ..." data-tensor="INDEX"> with a <title>; the live
 * bytes are <polyline class="live-bytes">, the lower bound
 * <line class="lower-bound">. */
void dfg_svg_write_timeline(FILE *out, const dfg_program *program,
                            const dfg_plan_timeline *timeline);

#endif
