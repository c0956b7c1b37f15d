#include "util/text_escape.h"

#include <stdint.h>

size_t dfg_utf8_sequence_length(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    if (u[0] < 0x80)
        return 1;
    size_t length;
    uint32_t code, min;
    if ((u[0] & 0xE0) == 0xC0) {
        length = 2, code = u[0] & 0x1F, min = 0x80;
    } else if ((u[0] & 0xF0) == 0xE0) {
        length = 3, code = u[0] & 0x0F, min = 0x800;
    } else if ((u[0] & 0xF8) == 0xF0) {
        length = 4, code = u[0] & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < length; i++) {
        /* A NUL terminator fails this test too, so we never read past it. */
        if ((u[i] & 0xC0) != 0x80)
            return 0;
        code = (code << 6) | (u[i] & 0x3F);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
        return 0;
    return length;
}

void dfg_write_json_string(FILE *out, const char *s)
{
    if (!s) {
        fputs("null", out);
        return;
    }
    fputc('"', out);
    while (*s) {
        unsigned char c = (unsigned char)*s;
        size_t length = dfg_utf8_sequence_length(s);
        if (length == 0) {
            fputs("\\ufffd", out);
            s++;
        } else if (length > 1) {
            fwrite(s, 1, length, out);
            s += length;
        } else {
            switch (c) {
            case '"': fputs("\\\"", out); break;
            case '\\': fputs("\\\\", out); break;
            case '\n': fputs("\\n", out); break;
            case '\r': fputs("\\r", out); break;
            case '\t': fputs("\\t", out); break;
            default:
                if (c < 0x20 || c == 0x7F)
                    fprintf(out, "\\u%04x", c);
                else
                    fputc(c, out);
            }
            s++;
        }
    }
    fputc('"', out);
}

void dfg_write_quoted_text(FILE *out, const char *s)
{
    while (*s) {
        unsigned char c = (unsigned char)*s;
        size_t length = dfg_utf8_sequence_length(s);
        if (length == 0) {
            fputc('?', out);
            s++;
        } else if (length > 1) {
            fwrite(s, 1, length, out);
            s += length;
        } else {
            if (c == '"' || c == '\\')
                fputc('\\', out);
            if (c >= 0x20 && c != 0x7F)
                fputc(c, out);
            s++;
        }
    }
}
