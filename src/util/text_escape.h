/* Writing untrusted text (tensor and node names come from ONNX files) into
 * the report formats. Invalid UTF-8 never reaches the output: each byte
 * that does not start a valid sequence becomes U+FFFD in JSON and '?' in
 * DOT, so a hostile name cannot break the document's syntax. */
#ifndef DFG_TEXT_ESCAPE_H
#define DFG_TEXT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Length (1 to 4) of the valid UTF-8 sequence starting at s, or 0 if the
 * bytes there are not one (overlong forms and surrogates included). s is
 * NUL-terminated. */
size_t dfg_utf8_sequence_length(const char *s);

/* Writes s as a JSON string literal, quotes included; NULL writes null. */
void dfg_write_json_string(FILE *out, const char *s);

/* Writes s escaped for the inside of a double-quoted string (no quotes),
 * as DOT labels and the text summary show names: '"' and '\\' are
 * escaped, control characters dropped. */
void dfg_write_quoted_text(FILE *out, const char *s);

#endif
