/* What the report tests (test_reports.c, test_viz.c) share: a bundled
 * model compiled and verified, a report written to a string, and JSON
 * members read with a test failure when they are missing or mistyped.
 * Every failure ends the running cmocka test. */
#ifndef DFG_TEST_REPORT_CHECK_H
#define DFG_TEST_REPORT_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "dfg/dfg.h"
#include "tests/support/json_tree.h"

typedef dfg_status (*report_fn)(const dfg_program *, FILE *);

/* The bundled model `name` compiled with planner, its plan verified
 * (caller destroys). */
dfg_program *compile_model(const char *name, dfg_planner planner);

/* relu over a [4, 8] f32 input named input, with output named output:
 * the program the hostile-name tests report on (caller destroys). */
dfg_program *compile_named_relu(const char *input, const char *output);

/* The report as a NUL-terminated string (caller frees). */
char *report_text(const dfg_program *program, report_fn report);

/* object's member key, which must exist and have the given type. */
const json_node *required_member(const json_node *object, const char *key,
                                 json_type type);
/* object's member key, which must be an integer. */
int64_t required_integer(const json_node *object, const char *key);
/* object's member key, which must be a string. */
const char *required_string(const json_node *object, const char *key);

#endif
