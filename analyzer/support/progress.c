/* progress.c: progress bars and plain progress lines on stderr, and library warnings. */
#include "term_text.h"
#include "progress.h"

#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void an_progress_init(an_progress *p, FILE *out, bool tty, const char *what)
{
    p->out = out;
    p->tty = tty;
    p->what = what;
    p->start = now_s();
    p->last_print = 0;
    p->last_done = 0;
}

void an_progress_update(void *user, size_t done, size_t total)
{
    an_progress *p = user;
    if (!p->out)
        return;
    double t = now_s();
    double elapsed = t - p->start;
    double rate = elapsed > 0 ? (double)done / elapsed : 0;
    double left = rate > 0 && total >= done ? (double)(total - done) / rate : 0;
    p->last_done = done;
    if (p->tty) {
        int width = 30, filled = total ? (int)((double)width * (double)done / (double)total) : 0;
        char bar[32];
        for (int i = 0; i < width; i++)
            bar[i] = i < filled ? '#' : '.';
        bar[width] = '\0';
        fprintf(p->out, "\r%s [%s] %zu/%zu  %.1f/s  %.0fs left ", p->what, bar, done, total, rate, left);
        fflush(p->out);
    } else if (t - p->last_print >= 5.0 || done == total) {
        fprintf(p->out, "%s: %zu/%zu (%.1f/s, %.0fs left)\n", p->what, done, total, rate, left);
        p->last_print = t;
    }
}

void an_progress_done(an_progress *p)
{
    if (!p->out)
        return;
    if (p->tty)
        fputc('\n', p->out);
    fprintf(p->out, "%s: done in %.2fs\n", p->what, now_s() - p->start);
}

void an_warn_print(void *user, const char *msg)
{
    an_warn_ctx *w = user;
    if (w && w->errs) {
        fputs("warning: ", w->errs);
        an_put_text(w->errs, msg); /* warnings quote the model's names */
        fputc('\n', w->errs);
    }
}
