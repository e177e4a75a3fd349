/*
 * png_chart.c: line and bar charts for report.html on the canvas of png_canvas.c: a plot frame with
 * light grid lines, "nice" ticks (1, 2, 5 times a power of ten; powers of ten on a log axis), tick
 * labels, axis titles, a title, dashed reference lines and a legend in the top-right corner.
 */
#include "png_chart.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TEXT_SCALE 2
#define COL_BG 0xffffffu
#define COL_AXIS 0x333333u
#define COL_GRID 0xe6e6e6u
#define COL_TEXT 0x222222u
#define MAX_TICKS 16

typedef struct plot_area {
    int x0, y0, x1, y1;        /* pixel box of the plot, inclusive */
    double xlo, xhi, ylo, yhi; /* data range (log10 units on a log axis) */
    bool log_y;
} plot_area;

static double ty(const plot_area *a, double y)
{
    if (a->log_y)
        y = y > 0 ? log10(y) : -INFINITY;
    return y;
}

static int px_x(const plot_area *a, double x)
{
    return a->x0 + (int)lround((x - a->xlo) / (a->xhi - a->xlo) * (a->x1 - a->x0));
}

/* Pixel row of data value y (already transformed); infinities and outliers clamp to the frame. */
static int px_y(const plot_area *a, double y)
{
    if (isnan(y))
        return a->y1;
    if (y > a->yhi || y == INFINITY)
        return a->y0;
    if (y < a->ylo || y == -INFINITY)
        return a->y1;
    return a->y1 - (int)lround((y - a->ylo) / (a->yhi - a->ylo) * (a->y1 - a->y0));
}

/* Step between ticks for range span: 1, 2 or 5 times a power of ten giving about target ticks. */
static double nice_step(double span, int target)
{
    double raw = span / target;
    if (!(raw > 0) || !isfinite(raw))
        return 1;
    double p = pow(10, floor(log10(raw)));
    double f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

static void fmt_tick(double v, double step, char *buf, size_t len)
{
    if (fabs(v) < step * 1e-9)
        v = 0;
    int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (decimals > 6 || fabs(v) >= 1e6)
        snprintf(buf, len, "%.3g", v);
    else
        snprintf(buf, len, "%.*f", decimals, v);
}

/* Finite data range over all series (transformed for a log axis). */
static bool data_range(const rep_chart *ch, bool want_x, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t s = 0; s < ch->n_series; s++) {
        const rep_series *sr = &ch->series[s];
        for (size_t i = 0; i < sr->n; i++) {
            double v = want_x ? (sr->x ? sr->x[i] : (double)i) : sr->y[i];
            if (!want_x && ch->log_y)
                v = v > 0 ? log10(v) : NAN;
            if (!isfinite(v))
                continue;
            *lo = v < *lo ? v : *lo;
            *hi = v > *hi ? v : *hi;
        }
    }
    return *lo <= *hi;
}

static void draw_series(rep_canvas *c, const plot_area *a, const rep_series *s, double bar_width)
{
    const int thick = 3;
    bool have_prev = false;
    int px = 0, py = 0;
    for (size_t i = 0; i < s->n; i++) {
        double x = s->x ? s->x[i] : (double)i;
        double y = ty(a, s->y[i]);
        if (isnan(s->y[i]) || !isfinite(x))
            continue; /* a blank cell (fused layer, NaN): the line bridges it, the markers show it */
        int X = px_x(a, x), Y = px_y(a, y);
        if (s->style == REP_BARS) {
            int half = (int)((bar_width / (a->xhi - a->xlo)) * (a->x1 - a->x0) / 2);
            half = half < 1 ? 1 : half;
            rep_fill_rect(c, X - half, Y, 2 * half, a->y1 - Y + 1, s->rgb);
            continue;
        }
        if (s->n < 96)
            rep_fill_rect(c, X - 3, Y - 3, 7, 7, s->rgb);
        if (have_prev)
            rep_draw_line(c, px, py, X, Y, s->rgb, thick, 0);
        px = X;
        py = Y;
        have_prev = true;
    }
}

/* The legend: one row of entries (swatch and label) starting at (x, y), above the plot. */
static void draw_legend(rep_canvas *c, const rep_chart *ch, int x, int y)
{
    int th = rep_text_height(TEXT_SCALE);
    for (size_t s = 0; s < ch->n_series; s++) {
        const rep_series *sr = &ch->series[s];
        if (!sr->label)
            continue;
        if (sr->style == REP_BARS)
            rep_fill_rect(c, x, y + 1, 26, th - 2, sr->rgb);
        else
            rep_draw_line(c, x, y + th / 2, x + 26, y + th / 2, sr->rgb, 3, 0);
        rep_draw_text(c, x + 34, y, sr->label, COL_TEXT, TEXT_SCALE, false);
        x += 34 + rep_text_width(sr->label, TEXT_SCALE) + 28;
    }
    for (size_t h = 0; h < ch->n_hlines; h++) {
        if (!ch->hlines[h].label)
            continue;
        rep_draw_line(c, x, y + th / 2, x + 26, y + th / 2, ch->hlines[h].rgb, 2, 5);
        rep_draw_text(c, x + 34, y, ch->hlines[h].label, COL_TEXT, TEXT_SCALE, false);
        x += 34 + rep_text_width(ch->hlines[h].label, TEXT_SCALE) + 28;
    }
}

static bool has_legend(const rep_chart *ch)
{
    for (size_t s = 0; s < ch->n_series; s++)
        if (ch->series[s].label)
            return true;
    for (size_t h = 0; h < ch->n_hlines; h++)
        if (ch->hlines[h].label)
            return true;
    return false;
}

rd_status rep_chart_png(const rep_chart *ch, unsigned char **out, size_t *out_len, rd_error *err)
{
    rep_canvas c;
    rd_status st = rep_canvas_init(&c, ch->width, ch->height, COL_BG, err);
    if (st != RD_OK)
        return st;
    int th = rep_text_height(TEXT_SCALE);
    plot_area a = {.log_y = ch->log_y};
    a.x0 = 24 + th + 8 * 6 * TEXT_SCALE; /* y title + up to 8 tick characters */
    a.x1 = ch->width - 24;
    int legend_y = ch->title ? 20 + th + 12 : 20;
    a.y0 = legend_y + (has_legend(ch) ? th + 16 : 0);
    a.y1 = ch->height - (20 + 2 * th + 24);

    bool have = data_range(ch, true, &a.xlo, &a.xhi);
    if (!have) {
        a.xlo = 0;
        a.xhi = 1;
    }
    if (ch->bar_width > 0) {
        a.xlo -= ch->bar_width / 2;
        a.xhi += ch->bar_width / 2;
    }
    if (a.xhi - a.xlo < 1e-12)
        a.xhi = a.xlo + 1;
    if (ch->has_y_range) {
        a.ylo = ch->log_y ? log10(ch->y_lo) : ch->y_lo;
        a.yhi = ch->log_y ? log10(ch->y_hi) : ch->y_hi;
    } else if (data_range(ch, false, &a.ylo, &a.yhi)) {
        double pad = (a.yhi - a.ylo) * 0.06;
        if (pad <= 0)
            pad = ch->log_y ? 0.5 : (fabs(a.yhi) > 0 ? fabs(a.yhi) * 0.1 : 1);
        a.ylo -= pad;
        a.yhi += pad;
        if (!ch->log_y && ch->series && ch->series[0].style == REP_BARS && a.ylo < 0)
            a.ylo = 0;
    } else {
        a.ylo = 0;
        a.yhi = 1;
    }
    if (!(a.yhi > a.ylo) || !isfinite(a.ylo) || !isfinite(a.yhi)) {
        a.ylo = 0;
        a.yhi = 1;
    }

    char buf[48];
    /* y ticks and horizontal grid */
    double ystep = ch->log_y ? fmax(1, ceil((a.yhi - a.ylo) / 6)) : nice_step(a.yhi - a.ylo, 5);
    double yt = ceil(a.ylo / ystep - 1e-9) * ystep;
    for (int k = 0; k < MAX_TICKS && yt <= a.yhi + ystep * 1e-9; k++, yt += ystep) {
        int Y = px_y(&a, yt);
        rep_draw_line(&c, a.x0, Y, a.x1, Y, COL_GRID, 1, 0);
        rep_draw_line(&c, a.x0 - 6, Y, a.x0, Y, COL_AXIS, 2, 0);
        if (ch->log_y)
            snprintf(buf, sizeof buf, "1e%d", (int)lround(yt));
        else
            fmt_tick(yt, ystep, buf, sizeof buf);
        rep_draw_text(&c, a.x0 - 10 - rep_text_width(buf, TEXT_SCALE), Y - th / 2, buf, COL_TEXT, TEXT_SCALE, false);
    }
    /* x ticks and vertical grid */
    double xstep = nice_step(a.xhi - a.xlo, 10);
    if (ch->x_integer && xstep < 1)
        xstep = 1;
    double xt = ceil(a.xlo / xstep - 1e-9) * xstep;
    for (int k = 0; k < MAX_TICKS * 2 && xt <= a.xhi + xstep * 1e-9; k++, xt += xstep) {
        int X = px_x(&a, xt);
        rep_draw_line(&c, X, a.y0, X, a.y1, COL_GRID, 1, 0);
        rep_draw_line(&c, X, a.y1, X, a.y1 + 6, COL_AXIS, 2, 0);
        fmt_tick(xt, xstep, buf, sizeof buf);
        rep_draw_text(&c, X - rep_text_width(buf, TEXT_SCALE) / 2, a.y1 + 12, buf, COL_TEXT, TEXT_SCALE, false);
    }
    for (size_t h = 0; h < ch->n_hlines; h++) {
        double y = ty(&a, ch->hlines[h].y);
        if (y >= a.ylo && y <= a.yhi)
            rep_draw_line(&c, a.x0, px_y(&a, y), a.x1, px_y(&a, y), ch->hlines[h].rgb, 2, 8);
    }
    for (size_t s = 0; s < ch->n_series; s++)
        draw_series(&c, &a, &ch->series[s], ch->bar_width);
    /* frame */
    rep_draw_line(&c, a.x0, a.y0, a.x0, a.y1, COL_AXIS, 2, 0);
    rep_draw_line(&c, a.x0, a.y1, a.x1, a.y1, COL_AXIS, 2, 0);
    rep_draw_line(&c, a.x0, a.y0, a.x1, a.y0, 0xbbbbbbu, 1, 0);
    rep_draw_line(&c, a.x1, a.y0, a.x1, a.y1, 0xbbbbbbu, 1, 0);
    if (ch->title)
        rep_draw_text(&c, a.x0, 20, ch->title, 0x111111u, TEXT_SCALE, false);
    if (ch->x_title)
        rep_draw_text(&c, (a.x0 + a.x1 - rep_text_width(ch->x_title, TEXT_SCALE)) / 2, ch->height - 20 - th,
                      ch->x_title, COL_TEXT, TEXT_SCALE, false);
    if (ch->y_title)
        rep_draw_text(&c, 16, (a.y0 + a.y1 + rep_text_width(ch->y_title, TEXT_SCALE)) / 2, ch->y_title, COL_TEXT,
                      TEXT_SCALE, true);
    draw_legend(&c, ch, a.x0, legend_y);
    st = rep_png_encode(&c, out, out_len, err);
    rep_canvas_fini(&c);
    return st;
}
