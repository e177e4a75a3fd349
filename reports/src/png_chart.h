/*
 * png_chart.h: a small raster plotter of our own for report.html: line and bar charts with axes,
 * ticks, tick labels, axis titles and a legend, text in a 5x7 bitmap font, encoded as PNG by libpng.
 * No antialiasing; everything is drawn on an RGB canvas in memory.
 */
#ifndef RD_PNG_CHART_H
#define RD_PNG_CHART_H

#include "rknn_diag/reports.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern const unsigned char rep_font5x7[95][7];

typedef struct rep_canvas {
    int w, h;
    uint8_t *px; /* w*h RGB triplets, row-major */
} rep_canvas;

rd_status rep_canvas_init(rep_canvas *c, int w, int h, uint32_t rgb, rd_error *err);
void rep_canvas_fini(rep_canvas *c);
void rep_fill_rect(rep_canvas *c, int x, int y, int w, int h, uint32_t rgb);
/** A line of the given thickness; dash > 0 draws dash pixels on, dash off. */
void rep_draw_line(rep_canvas *c, int x0, int y0, int x1, int y1, uint32_t rgb, int thick, int dash);
/** Text with its top-left corner at (x, y), each font pixel scale x scale; vertical turns it 90 degrees
 *  counter-clockwise (reading bottom to top, (x, y) is then its bottom-left corner). */
void rep_draw_text(rep_canvas *c, int x, int y, const char *s, uint32_t rgb, int scale, bool vertical);
int rep_text_width(const char *s, int scale);
int rep_text_height(int scale);

/** Encodes the canvas as an RGB PNG into a new malloc'ed buffer. */
rd_status rep_png_encode(const rep_canvas *c, unsigned char **out, size_t *out_len, rd_error *err);

typedef enum rep_series_style { REP_LINE = 0, REP_BARS } rep_series_style;

typedef struct rep_series {
    const char *label;
    const double *x; /* NULL: x is the index 0..n-1 */
    const double *y; /* NaN: a gap; +-inf: drawn at the edge of the plot */
    size_t n;
    uint32_t rgb;
    rep_series_style style;
} rep_series;

typedef struct rep_hline {
    double y;
    uint32_t rgb;
    const char *label;
} rep_hline;

typedef struct rep_chart {
    int width, height;
    const char *title, *x_title, *y_title;
    const rep_series *series;
    size_t n_series;
    const rep_hline *hlines; /* dashed horizontal reference lines (thresholds) */
    size_t n_hlines;
    bool log_y;       /* log10 axis; values <= 0 drawn at the bottom */
    bool x_integer;   /* ticks on whole numbers (layer index) */
    bool has_y_range; /* use y_lo..y_hi instead of the data range */
    double y_lo, y_hi;
    double bar_width; /* REP_BARS: width of a bar in x units */
} rep_chart;

/** Draws the chart and encodes it as PNG (malloc'ed, caller frees). */
rd_status rep_chart_png(const rep_chart *ch, unsigned char **out, size_t *out_len, rd_error *err);

#endif
