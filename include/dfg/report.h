/* Reports on a program's memory plan: JSON (docs/plan-json.md), Graphviz
 * DOT and a one-screen text summary. The stream is the caller's; nothing is
 * closed. */
#ifndef DFG_REPORT_H
#define DFG_REPORT_H

#include <stdio.h>
#include "dfg/program.h"

#ifdef __cplusplus
extern "C" {
#endif

dfg_status dfg_report_json(const dfg_program *program, FILE *out);
dfg_status dfg_report_dot(const dfg_program *program, FILE *out);
dfg_status dfg_report_summary(const dfg_program *program, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
