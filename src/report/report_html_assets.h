/* The style sheet and script of the HTML plan page (report_html.c): plain
 * CSS and JavaScript, nothing loaded from the network. */
#ifndef DFG_REPORT_HTML_ASSETS_H
#define DFG_REPORT_HTML_ASSETS_H

extern const char dfg_html_style[];
extern const char dfg_html_script[];

#endif
