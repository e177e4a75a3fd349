/*
 * darknet.h: Darknet models (.cfg text + .weights binary) read into ONNX (darknet_cfg.c, darknet_lower.c).
 *
 * The .cfg is read as Darknet's read_cfg reads it: every whitespace character of a line is removed, "[type]"
 * starts a section, '#' and ';' start comments, every other line is key=value. The .weights start with a
 * header (major, minor, revision: int32; seen: uint64 from version 0.2 on, int32 before) followed by each
 * layer's floats in layer order.
 */
#ifndef RD_FE_DARKNET_H
#define RD_FE_DARKNET_H

#include "fe_internal.h"

#define DN_MAX_SECTIONS 100000 /* layers of one .cfg */
#define DN_MAX_KEYS 1000000    /* key=value lines of one .cfg */
#define DN_MAX_CFG_BYTES ((size_t)16 << 20)

typedef struct dn_kv {
    const char *key, *val; /* into dn_cfg.text, whitespace removed */
    int line;
} dn_kv;

typedef struct dn_section {
    const char *type; /* "convolutional", "net", ... (without the brackets) */
    int line;
    size_t first_kv, n_kv; /* its keys: kv[first_kv .. first_kv + n_kv) */
} dn_section;

typedef struct dn_cfg {
    const char *path;
    char *text; /* owned copy of the file, lines cut in place */
    dn_section *sec;
    size_t n_sec;
    dn_kv *kv;
    size_t n_kv;
} dn_cfg;

/** Parses a .cfg (buf need not be NUL-terminated). RD_E_PARSE naming path:line. */
rd_status dn_cfg_parse(const char *buf, size_t len, const char *path, dn_cfg *out, rd_error *err);
void dn_cfg_fini(dn_cfg *c);

/** Option readers of section s: def when absent; RD_E_PARSE naming path:line:key for a malformed value. */
rd_status dn_int(const dn_cfg *c, const dn_section *s, const char *key, int64_t def, int64_t lo, int64_t hi,
                 int64_t *out, rd_error *err);
rd_status dn_float(const dn_cfg *c, const dn_section *s, const char *key, float def, float *out, rd_error *err);
/** The value string or def (may be NULL). */
const char *dn_str(const dn_cfg *c, const dn_section *s, const char *key, const char *def);
/** A comma-separated int list into out[0..*n) (at most max); *n = 0 when absent. */
rd_status dn_ints(const dn_cfg *c, const dn_section *s, const char *key, int64_t *out, int max, int *n, rd_error *err);
/** The line of key in s (the section's line when absent), for messages. */
int dn_line(const dn_section *s, const dn_cfg *c, const char *key);

/** True when buf looks like a .cfg: its first section line is [net] or [network]. */
bool dn_looks_like_cfg(const void *buf, size_t len);

/** Writes the model as ONNX (darknet_lower.c). weights/wlen: the .weights bytes; wname names them. */
rd_status dn_lower(const dn_cfg *c, const uint8_t *weights, size_t wlen, const char *wname, void **out_buf,
                   size_t *out_len, char *detail, size_t detail_len, rd_error *err);

#endif
