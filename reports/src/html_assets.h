/*
 * html_assets.h: the inline stylesheet and scripts of report.html (html_assets.c).
 */
#ifndef RD_HTML_ASSETS_H
#define RD_HTML_ASSETS_H

/** The page's <style> content. */
extern const char rep_html_css[];
/** Runs first (in <head>): records errors so the self-test can report them. */
extern const char rep_html_js_head[];
/** Table sorting, filtering and the #selftest self-test (end of <body>). */
extern const char rep_html_js_body[];

#endif
