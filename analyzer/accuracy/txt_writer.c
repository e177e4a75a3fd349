/*
 * txt_writer.c: a single-producer queue of text files for one writer thread, bounded by the bytes of the
 * values it holds (the copies are freed as each file is written). The first failure stops the writing and
 * is handed to the producer at its next call.
 */
#include "txt_writer.h"

#include "rknn_diag/reports.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct txt_job {
    struct txt_job *next;
    char *path;
    float *v;
    int64_t n;
    size_t bytes;
} txt_job;

struct an_txt_writer {
    bool background; /* a thread runs writer_main */
    size_t cap;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work; /* a job was queued or closing was set */
    pthread_cond_t room; /* held bytes went down or the writer failed */
    txt_job *head, *tail;
    size_t held;  /* bytes of queued jobs and of the one being written */
    bool closing; /* no more jobs will come */
    rd_status st; /* first failure; guarded by mu */
    rd_error err;
};

static void job_free(txt_job *j)
{
    if (!j)
        return;
    free(j->path);
    free(j->v);
    free(j);
}

static void *writer_main(void *arg)
{
    an_txt_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->head && !w->closing)
            pthread_cond_wait(&w->work, &w->mu);
        txt_job *j = w->head;
        if (!j)
            break; /* closing and drained */
        w->head = j->next;
        if (!w->head)
            w->tail = NULL;
        bool failed = w->st != RD_OK;
        pthread_mutex_unlock(&w->mu);
        rd_error e = {.code = RD_OK};
        rd_status st = failed ? RD_OK : rd_snapshot_txt_save(j->path, j->v, j->n, &e);
        pthread_mutex_lock(&w->mu);
        if (st != RD_OK && w->st == RD_OK) {
            w->st = st;
            w->err = e;
        }
        w->held -= j->bytes;
        pthread_cond_signal(&w->room);
        pthread_mutex_unlock(&w->mu);
        job_free(j);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

rd_status an_txt_writer_create(bool background, size_t cap_bytes, an_txt_writer **out, rd_error *err)
{
    *out = NULL;
    an_txt_writer *w = calloc(1, sizeof *w);
    if (!w)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    w->cap = cap_bytes;
    w->st = RD_OK;
    if (background && pthread_mutex_init(&w->mu, NULL) == 0) {
        if (pthread_cond_init(&w->work, NULL) == 0) {
            if (pthread_cond_init(&w->room, NULL) == 0) {
                w->background = pthread_create(&w->thread, NULL, writer_main, w) == 0;
                if (!w->background)
                    pthread_cond_destroy(&w->room);
            }
            if (!w->background)
                pthread_cond_destroy(&w->work);
        }
        if (!w->background)
            pthread_mutex_destroy(&w->mu);
    }
    *out = w; /* without the thread, files are written in the caller */
    return RD_OK;
}

/* The writer's failure as the caller's (with mu held while the thread runs). */
static rd_status report(const an_txt_writer *w, rd_error *err)
{
    if (err)
        *err = w->err;
    return w->st;
}

rd_status an_txt_writer_add(an_txt_writer *w, const char *path, const float *v, int64_t n, rd_error *err)
{
    if (!w->background) {
        if (w->st == RD_OK)
            w->st = rd_snapshot_txt_save(path, v, n, &w->err);
        return w->st == RD_OK ? RD_OK : report(w, err);
    }
    if (n < 0 || (uint64_t)n > SIZE_MAX / sizeof *v)
        return rd_errorf(err, RD_E_INVAL, "%s: %lld values", path, (long long)n);
    size_t bytes = (size_t)n * sizeof *v;
    pthread_mutex_lock(&w->mu);
    while (w->st == RD_OK && w->held > 0 && w->held + bytes > w->cap)
        pthread_cond_wait(&w->room, &w->mu);
    if (w->st != RD_OK) {
        rd_status st = report(w, err);
        pthread_mutex_unlock(&w->mu);
        return st;
    }
    w->held += bytes; /* reserved before copying, so the copies never exceed the cap */
    pthread_mutex_unlock(&w->mu);
    txt_job *j = calloc(1, sizeof *j);
    if (j) {
        j->path = strdup(path);
        j->v = malloc(bytes ? bytes : 1);
        j->n = n;
        j->bytes = bytes;
    }
    bool ok = j && j->path && j->v;
    if (ok)
        memcpy(j->v, v, bytes);
    pthread_mutex_lock(&w->mu);
    if (!ok) {
        w->held -= bytes;
        pthread_mutex_unlock(&w->mu);
        job_free(j);
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory for %zu bytes of values", path, bytes);
    }
    if (w->tail)
        w->tail->next = j;
    else
        w->head = j;
    w->tail = j;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    return RD_OK;
}

/* Stops the thread: with drop, the queued jobs are discarded first. */
static void stop(an_txt_writer *w, bool drop)
{
    pthread_mutex_lock(&w->mu);
    if (drop) {
        while (w->head) {
            txt_job *j = w->head;
            w->head = j->next;
            w->held -= j->bytes;
            job_free(j);
        }
        w->tail = NULL;
    }
    w->closing = true;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->room);
    pthread_cond_destroy(&w->work);
    pthread_mutex_destroy(&w->mu);
    w->background = false;
}

rd_status an_txt_writer_finish(an_txt_writer *w, rd_error *err)
{
    if (w->background)
        stop(w, false);
    return w->st == RD_OK ? RD_OK : report(w, err);
}

void an_txt_writer_destroy(an_txt_writer *w)
{
    if (!w)
        return;
    if (w->background)
        stop(w, true);
    free(w);
}
