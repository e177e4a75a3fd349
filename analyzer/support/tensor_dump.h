/*
 * tensor_dump.h: writes observed tensors as numbered .npy files plus index.json, the layout of
 * ../shared/models/<model>/golden/<set>/ (a list of {name, file, dtype, shape}).
 */
#ifndef RD_AN_TENSOR_DUMP_H
#define RD_AN_TENSOR_DUMP_H

#include "rknn_diag/simulator.h"

typedef struct an_dump_entry {
    char *name;
    char file[32];
    rd_dtype dtype;
    int rank;
    int64_t dims[RD_MAX_RANK];
} an_dump_entry;

typedef struct an_dump {
    char *dir;
    an_dump_entry *entries;
    size_t n, cap;
} an_dump;

/** Creates dir (and parents) and prepares an empty index. */
rd_status an_dump_open(an_dump *d, const char *dir, rd_error *err);
/** Writes one tensor as <n>.npy at once (rd_atomic_file). */
rd_status an_dump_add(an_dump *d, const char *name, const rd_tensor *t, rd_error *err);
/** Writes index.json (rd_atomic_file). */
rd_status an_dump_close(an_dump *d, rd_error *err);
void an_dump_fini(an_dump *d);

struct cJSON;

/** mkdir -p of a folder the user named: rd_dir_make(path, RD_DIR_PARENTS). */
rd_status an_mkdirs(const char *path, rd_error *err);

#endif
