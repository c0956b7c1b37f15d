#include "util/xml_text.h"

#include "util/text_escape.h"

/* Writes the character starting at s (length n, valid UTF-8). */
static void write_char(FILE *out, const char *s, size_t n)
{
    switch (*s) {
    case '&': fputs("&amp;", out); return;
    case '<': fputs("&lt;", out); return;
    case '>': fputs("&gt;", out); return;
    case '"': fputs("&quot;", out); return;
    case '\'': fputs("&#39;", out); return;
    default: break;
    }
    if (n == 1 && ((unsigned char)*s < 0x20 || *s == 0x7f))
        return;
    fwrite(s, 1, n, out);
}

void dfg_write_xml_text(FILE *out, const char *s, size_t max_chars)
{
    if (!s)
        return;
    size_t written = 0;
    while (*s) {
        size_t n = dfg_utf8_sequence_length(s);
        /* The last character allowed becomes the ellipsis if more follow. */
        if (max_chars > 0 && written + 1 == max_chars && s[n ? n : 1] != '\0') {
            fputs("\xe2\x80\xa6", out);
            return;
        }
        if (n == 0) {
            fputs("\xef\xbf\xbd", out);
            s++;
        } else {
            write_char(out, s, n);
            s += n;
        }
        written++;
    }
}
