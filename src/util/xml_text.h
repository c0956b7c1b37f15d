/* Writing untrusted text (tensor and node names) into SVG and HTML, as
 * element content or inside a double-quoted attribute. Markup characters
 * become entities, control characters are dropped (XML 1.0 forbids them)
 * and each byte that does not start valid UTF-8 becomes U+FFFD, so a
 * hostile name cannot break the document. */
#ifndef DFG_XML_TEXT_H
#define DFG_XML_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Writes at most max_chars characters of s (0: all of it), ending a
 * shortened text with an ellipsis; NULL writes nothing. */
void dfg_write_xml_text(FILE *out, const char *s, size_t max_chars);

#endif
