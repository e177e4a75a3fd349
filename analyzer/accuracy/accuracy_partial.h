/*
 * accuracy_partial.h: `accuracy --shard K/N` and its merge (docs/sharding.md, "accuracy"): the partial.json
 * of a shard (every analysed sample's metrics per layer and group, exactly), reading and checking the parts
 * of one run, and the rows hooks (accuracy.h) that record a shard and complete a merge.
 *
 *   {"format": "rknn-diag-accuracy-partial/1", "tool": "rknn-diag 0.1.0", "model": "m.onnx",
 *    "argv": ["accuracy", "m.onnx", "--dataset", "ds.txt", "--samples", "100"],
 *    "run_hash": "<sha256>", "shard_hash": "<sha256>", "shard": {"index": 1, "count": 4},
 *    "samples_total": 100, "sample_range": [25, 50], "dump_sample": 0,
 *    "layers": [{"layer": 3, "name": "conv1", "groups": [[[25, cos, euc, ...], ...], [...], [], []]}, ...],
 *    "complete": true}
 *
 * A metrics entry is the sample id then the 20 fields of rd_metrics in AN_ACC_FIELDS order; doubles as
 * %.17g (they read back bit for bit), "nan", "inf" and "-inf" as strings.
 */
#ifndef RD_AN_ACCURACY_PARTIAL_H
#define RD_AN_ACCURACY_PARTIAL_H

#include "metrics.h"
#include "content_hash.h"
#include "rknn_diag/result.h"
#include "rknn_diag/simulator.h"

#define AN_ACC_PARTIAL_FORMAT "rknn-diag-accuracy-partial/1"
#define AN_ACC_MAX_PARTIAL_BYTES ((uint64_t)512 << 20) /* one partial.json */
#define AN_ACC_MAX_LAYERS 100000                       /* rows of one model (real ones have a few thousand) */
#define AN_ACC_HASH_HEX AN_HASH_HEX                    /* SHA-256 in hex, with its NUL */

/** What a part says about itself. */
typedef struct an_acc_header {
    char run_hash[AN_ACC_HASH_HEX], shard_hash[AN_ACC_HASH_HEX];
    int shard_k, shard_n;
    size_t total, lo, hi; /* samples of the run; this part's [lo, hi) */
    int dump_sample;
    char *model;
    char **argv; /* the command line less -o and --shard */
    int argc;
} an_acc_header;

void an_acc_header_fini(an_acc_header *h);

/** --shard K/N of accuracy and eval: "K/N" with 0 <= K < N <= 1000000, digits only. */
bool an_acc_parse_shard(const char *text, int *k, int *n);
/** Shard k of n of `total` samples: [lo, hi), contiguous, sizes differing by one at most. */
void an_acc_shard_range(size_t total, int k, int n, size_t *lo, size_t *hi);

/** The metrics of some samples per layer and group: what shards recorded, or what a merge read. */
typedef struct an_acc_parts an_acc_parts;

rd_status an_acc_parts_create(an_acc_parts **out, rd_error *err);
void an_acc_parts_destroy(an_acc_parts *p);

/** an_acc_rows_fn of a shard: keeps a copy of each row's per-sample metrics (user: an_acc_parts). */
rd_status an_acc_parts_record(void *user, const rd_result *r, size_t layer, an_group_acc *groups, rd_error *err);

/**
 * an_acc_rows_fn of a merge (user: an_acc_parts read by an_acc_parts_load): adds every sample of the parts
 * but the dump sample, which the merge analysed again; its metrics must equal the shard's bit for bit
 * (RD_E_INVAL otherwise: the merge computes differently from the shard), and the rows' names must match.
 */
rd_status an_acc_parts_merge_rows(void *user, const rd_result *r, size_t layer, an_group_acc *groups, rd_error *err);
/** After a merge's analysis: RD_E_PARSE when the parts hold layers the analysis did not have. */
rd_status an_acc_parts_check_used(const an_acc_parts *p, rd_error *err);

/** The text of a partial.json with h's header and p's layers (*out malloc'ed). */
rd_status an_acc_partial_text(const an_acc_parts *p, const an_acc_header *h, char **out, size_t *out_len,
                              rd_error *err);
/** Writes path (atomically: complete or absent) with h's header and p's layers. */
rd_status an_acc_partial_save(const an_acc_parts *p, const an_acc_header *h, const char *path, rd_error *err);

/**
 * Parses one partial.json (len bytes, named name in messages) into h and, when p is non-NULL, adds its
 * layers to p. Everything is checked: types, counts, sample ids inside the part's range and increasing,
 * enum and integer fields in range.
 */
rd_status an_acc_partial_parse(const char *buf, size_t len, const char *name, an_acc_header *h, an_acc_parts *p,
                               rd_error *err);

/** Reads the partial.json at path (a file, or a folder holding one). */
rd_status an_acc_partial_load(const char *path, an_acc_header *h, an_acc_parts *p, rd_error *err);

/** True when path (a file or a folder's partial.json) starts as an accuracy partial (merge's dispatch). */
bool an_acc_partial_sniff(const char *path);

/**
 * The parts of one run: every shard 0..N-1 exactly once, the same run_hash, ranges covering the samples;
 * h gets the first part's header, p every part's layers. RD_E_PARSE (exit 3) naming the parts otherwise.
 */
rd_status an_acc_parts_load(const char *const *paths, size_t n, an_acc_header *h, an_acc_parts **p, rd_error *err);

#endif
