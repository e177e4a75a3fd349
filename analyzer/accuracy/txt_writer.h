/*
 * txt_writer.h: the snapshot's per-tensor text files written on a thread of their own, so the analysis
 * goes on computing while its text is formatted (formatting is most of an accuracy run's time with text
 * files). Files are those of rd_snapshot_txt_save (a temporary name renamed into place), byte for byte,
 * whatever the timing: only the order in which they appear differs.
 */
#ifndef RD_AN_TXT_WRITER_H
#define RD_AN_TXT_WRITER_H

#include "rknn_diag/simulator.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct an_txt_writer an_txt_writer;

/** Values waiting for the writer the analysis may hold (beyond it, an_txt_writer_add waits). */
#define AN_TXT_WRITER_CAP ((size_t)8 << 20)

/**
 * Starts a writer with a thread (background) or one writing in the caller (!background, or when the
 * thread cannot start). cap_bytes bounds the copies of values queued, the file being written included;
 * one file larger than it is still taken, alone. *out is destroyed with an_txt_writer_destroy.
 * One thread adds files; RD_E_NOMEM when out of memory.
 */
rd_status an_txt_writer_create(bool background, size_t cap_bytes, an_txt_writer **out, rd_error *err);

/**
 * Writes n values to path as rd_snapshot_txt_save does, now or later: v is copied, the caller keeps it.
 * Returns the first failure of any file so far (its message names the file), after which no more files
 * are written.
 */
rd_status an_txt_writer_add(an_txt_writer *w, const char *path, const float *v, int64_t n, rd_error *err);

/** Waits until every file added is written; returns the first failure (naming the file). Then destroy. */
rd_status an_txt_writer_finish(an_txt_writer *w, rd_error *err);

/**
 * Frees w. Without an_txt_writer_finish (an analysis that failed), the files not started are dropped
 * (none appears under its final name) and the one being written is waited for. NULL does nothing.
 */
void an_txt_writer_destroy(an_txt_writer *w);

#endif
