#include "util/json_writer.h"

#include <assert.h>
#include <inttypes.h>
#include "util/number_format.h"
#include "util/text_escape.h"

void dfg_json_init(dfg_json_writer *w, FILE *out)
{
    *w = (dfg_json_writer){.out = out};
}

static void indent(dfg_json_writer *w)
{
    fputc('\n', w->out);
    for (int i = 0; i < w->depth; i++)
        fputs("  ", w->out);
}

/* Separator, line break and key before a new member of the current
 * container (or nothing at the top level). */
static void begin_member(dfg_json_writer *w, const char *key)
{
    if (w->depth > 0) {
        int level = w->depth - 1;
        if (w->has_members[level])
            fputc(',', w->out);
        if (w->inline_members[level]) {
            if (w->has_members[level])
                fputc(' ', w->out);
        } else {
            indent(w);
        }
        w->has_members[level] = 1;
    }
    if (key) {
        dfg_write_json_string(w->out, key);
        fputs(": ", w->out);
    }
}

static void open_container(dfg_json_writer *w, const char *key, int is_inline,
                           char bracket)
{
    begin_member(w, key);
    fputc(bracket, w->out);
    assert(w->depth < DFG_JSON_MAX_DEPTH);
    w->has_members[w->depth] = 0;
    /* A container inside an inline one stays inline too. */
    w->inline_members[w->depth] =
        (unsigned char)(is_inline ||
                        (w->depth > 0 && w->inline_members[w->depth - 1]));
    w->depth++;
}

static void close_container(dfg_json_writer *w, char bracket)
{
    assert(w->depth > 0);
    w->depth--;
    if (w->has_members[w->depth] && !w->inline_members[w->depth])
        indent(w);
    fputc(bracket, w->out);
    if (w->depth == 0)
        fputc('\n', w->out);
}

void dfg_json_begin_object(dfg_json_writer *w, const char *key, int is_inline)
{
    open_container(w, key, is_inline, '{');
}

void dfg_json_end_object(dfg_json_writer *w) { close_container(w, '}'); }

void dfg_json_begin_array(dfg_json_writer *w, const char *key, int is_inline)
{
    open_container(w, key, is_inline, '[');
}

void dfg_json_end_array(dfg_json_writer *w) { close_container(w, ']'); }

void dfg_json_string(dfg_json_writer *w, const char *key, const char *value)
{
    begin_member(w, key);
    dfg_write_json_string(w->out, value);
}

void dfg_json_int(dfg_json_writer *w, const char *key, int64_t value)
{
    begin_member(w, key);
    fprintf(w->out, "%" PRId64, value);
}

void dfg_json_uint(dfg_json_writer *w, const char *key, uint64_t value)
{
    begin_member(w, key);
    fprintf(w->out, "%" PRIu64, value);
}

void dfg_json_bool(dfg_json_writer *w, const char *key, int value)
{
    begin_member(w, key);
    fputs(value ? "true" : "false", w->out);
}

void dfg_json_null(dfg_json_writer *w, const char *key)
{
    begin_member(w, key);
    fputs("null", w->out);
}

void dfg_json_ratio(dfg_json_writer *w, const char *key, uint64_t numerator,
                    uint64_t denominator)
{
    char text[48];
    if (denominator == 0) {
        dfg_json_null(w, key);
        return;
    }
    begin_member(w, key);
    fputs(dfg_format_ratio(numerator, denominator, 4, text, sizeof text),
          w->out);
}
