/* Gradient buckets in the reports (src/report/report_buckets.c). */
#ifndef DFG_REPORT_BUCKETS_H
#define DFG_REPORT_BUCKETS_H

#include <stdio.h>
#include "program/program.h"
#include "util/json_writer.h"

/* "buckets": [...] in the plan JSON; nothing for a program without. */
void dfg_report_json_buckets(dfg_json_writer *w, const dfg_program *p);
/* The summary's bucket lines; nothing for a program without. */
void dfg_report_summary_buckets(FILE *out, const dfg_program *p);

#endif
