/* A small streaming JSON writer for the reports: it tracks nesting and
 * commas so that the report code only says what to write. Numbers never go
 * through printf's %f, so the output does not depend on the C locale.
 * Keys are ASCII literals chosen by our code; string values are escaped
 * (see text_escape.h). The FILE is the caller's. */
#ifndef DFG_JSON_WRITER_H
#define DFG_JSON_WRITER_H

#include <stdint.h>
#include <stdio.h>

#define DFG_JSON_MAX_DEPTH 16

typedef struct dfg_json_writer {
    FILE *out;
    int depth;
    /* Per open container: something was written (a comma is due), and
     * whether its members stay on one line. */
    unsigned char has_members[DFG_JSON_MAX_DEPTH];
    unsigned char inline_members[DFG_JSON_MAX_DEPTH];
} dfg_json_writer;

void dfg_json_init(dfg_json_writer *w, FILE *out);

/* key is the member name inside an object and must be NULL inside an array
 * or at the top level. An inline container keeps its members on one line
 * (shapes, name lists). */
void dfg_json_begin_object(dfg_json_writer *w, const char *key, int is_inline);
void dfg_json_end_object(dfg_json_writer *w);
void dfg_json_begin_array(dfg_json_writer *w, const char *key, int is_inline);
void dfg_json_end_array(dfg_json_writer *w);

/* value NULL writes null. */
void dfg_json_string(dfg_json_writer *w, const char *key, const char *value);
void dfg_json_int(dfg_json_writer *w, const char *key, int64_t value);
void dfg_json_uint(dfg_json_writer *w, const char *key, uint64_t value);
void dfg_json_bool(dfg_json_writer *w, const char *key, int value);
void dfg_json_null(dfg_json_writer *w, const char *key);
/* numerator / denominator as a decimal with 4 digits after the point,
 * rounded; null when the denominator is 0. */
void dfg_json_ratio(dfg_json_writer *w, const char *key, uint64_t numerator,
                    uint64_t denominator);

#endif
