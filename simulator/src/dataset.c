/* dataset.c: RKNN's dataset.txt, the list of calibration (or evaluation) samples.
 *
 * One sample per line; a multi-input model lists one path per input on the line, separated by spaces
 * or tabs (so paths cannot contain blanks, as in RKNN). Relative paths are resolved against the
 * list's folder. Empty lines are skipped (RKNN does the same) and so are lines whose first non-blank
 * character is '#' (our addition: RKNN would report such a line as a missing file). CRLF endings and
 * a UTF-8 byte order mark are accepted. Errors name the list, the line and the path. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

void rd_dataset_fini(rd_dataset *ds)
{
    if (!ds)
        return;
    if (ds->paths) {
        for (size_t i = 0; i < ds->n_samples * ds->n_inputs; i++)
            free(ds->paths[i]);
    }
    free(ds->paths);
    free(ds->lines);
    free(ds->path);
    memset(ds, 0, sizeof *ds);
}

const char *rd_dataset_path(const rd_dataset *ds, size_t sample, size_t input)
{
    if (sample >= ds->n_samples || input >= ds->n_inputs)
        return NULL;
    return ds->paths[sample * ds->n_inputs + input];
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Appends one sample's paths, growing the arrays at powers of two. */
static rd_status add_sample(rd_dataset *ds, char **paths, int line, rd_error *err)
{
    size_t n = ds->n_samples;
    if (n >= RD_MAX_DATASET_SAMPLES)
        return rd_errorf(err, RD_E_LIMIT, "%s:%d: more than %zu samples", ds->path, line, RD_MAX_DATASET_SAMPLES);
    if ((n & (n - 1)) == 0) {
        size_t cap = n ? n * 2 : 16;
        char **p = sim_malloc_array(cap, ds->n_inputs * sizeof *p);
        int *l = sim_malloc_array(cap, sizeof *l);
        if (!p || !l) {
            free(p);
            free(l);
            return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", ds->path);
        }
        if (n) {
            memcpy(p, ds->paths, n * ds->n_inputs * sizeof *p);
            memcpy(l, ds->lines, n * sizeof *l);
        }
        free(ds->paths);
        free(ds->lines);
        ds->paths = p;
        ds->lines = l;
    }
    memcpy(ds->paths + n * ds->n_inputs, paths, ds->n_inputs * sizeof *paths);
    ds->lines[n] = line;
    ds->n_samples++;
    return RD_OK;
}

rd_status rd_dataset_parse(const char *buf, size_t len, const char *name, const char *base_dir, size_t n_inputs,
                           bool check_files, rd_dataset *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    out->path = sim_strdup(name ? name : "dataset");
    if (!out->path)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (n_inputs > RD_MAX_MODEL_INPUTS)
        return rd_errorf(err, RD_E_INVAL, "%s: %zu inputs is above the limit of %d", out->path, n_inputs,
                         RD_MAX_MODEL_INPUTS);
    out->n_inputs = n_inputs;
    size_t pos = 0;
    if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
        pos = 3;
    int line = 0;
    rd_status st = RD_OK;
    char *paths[RD_MAX_MODEL_INPUTS];
    static const char marker[] = "# rknn-diag: layout=graph";
    size_t mlen = sizeof marker - 1;
    if (len - pos >= mlen && memcmp(buf + pos, marker, mlen) == 0) {
        size_t k = pos + mlen;
        while (k < len && (is_blank(buf[k]) || buf[k] == '\r'))
            k++;
        out->graph_layout = k == len || buf[k] == '\n';
    }
    while (pos < len && st == RD_OK) {
        line++;
        size_t end = pos;
        while (end < len && buf[end] != '\n')
            end++;
        size_t next = end + 1;
        size_t k = pos;
        while (k < end && is_blank(buf[k]))
            k++;
        if (k == end || buf[k] == '#') {
            pos = next;
            continue;
        }
        size_t n = 0;
        while (k < end && st == RD_OK) {
            size_t s = k;
            while (k < end && !is_blank(buf[k]))
                k++;
            size_t plen = k - s;
            if (memchr(buf + s, '\0', plen)) {
                st = rd_errorf(err, RD_E_PARSE, "%s:%d: a NUL byte inside a path", out->path, line);
                break;
            }
            if (n >= RD_MAX_MODEL_INPUTS || (out->n_inputs && n >= out->n_inputs)) {
                n++;
                while (k < end && is_blank(buf[k]))
                    k++;
                continue; /* counted for the message, not kept */
            }
            char *rel = malloc(plen + 1);
            if (!rel) {
                st = rd_errorf(err, RD_E_NOMEM, "%s: out of memory", out->path);
                break;
            }
            memcpy(rel, buf + s, plen);
            rel[plen] = '\0';
            paths[n] = base_dir ? sim_path_join(base_dir, rel) : rel;
            if (base_dir)
                free(rel);
            if (!paths[n]) {
                st = rd_errorf(err, RD_E_NOMEM, "%s: out of memory", out->path);
                break;
            }
            n++;
            while (k < end && is_blank(buf[k]))
                k++;
        }
        size_t kept = n < RD_MAX_MODEL_INPUTS ? n : RD_MAX_MODEL_INPUTS;
        if (out->n_inputs && kept > out->n_inputs)
            kept = out->n_inputs;
        if (st == RD_OK && out->n_inputs == 0) {
            if (n > RD_MAX_MODEL_INPUTS)
                st = rd_errorf(err, RD_E_LIMIT, "%s:%d: %zu paths on one line, more than %d inputs", out->path, line, n,
                               RD_MAX_MODEL_INPUTS);
            else
                out->n_inputs = n;
        }
        if (st == RD_OK && n != out->n_inputs)
            st = rd_errorf(err, RD_E_PARSE, "%s:%d: %zu path%s where %zu %s expected (one per model input)", out->path,
                           line, n, n == 1 ? "" : "s", out->n_inputs, out->n_inputs == 1 ? "is" : "are");
        for (size_t i = 0; st == RD_OK && check_files && i < kept; i++) {
            struct stat sb;
            if (stat(paths[i], &sb) != 0)
                st = rd_errorf(err, RD_E_NOTFOUND, "%s:%d: %s: %s", out->path, line, paths[i], strerror(errno));
            else if (!S_ISREG(sb.st_mode))
                st = rd_errorf(err, RD_E_PARSE, "%s:%d: %s is not a regular file", out->path, line, paths[i]);
        }
        if (st == RD_OK)
            st = add_sample(out, paths, line, err);
        if (st != RD_OK)
            for (size_t i = 0; i < kept; i++)
                free(paths[i]);
        pos = next;
    }
    if (st == RD_OK && out->n_samples == 0)
        st = rd_errorf(err, RD_E_PARSE, "%s: the dataset has no samples (%d line%s, all empty or comments)", out->path,
                       line, line == 1 ? "" : "s");
    if (st != RD_OK)
        rd_dataset_fini(out);
    return st;
}

rd_status rd_dataset_load(const char *path, size_t n_inputs, rd_dataset *out, rd_error *err)
{
    memset(out, 0, sizeof *out);
    sim_file_bytes f;
    rd_status st = sim_file_bytes_read(path, RD_MAX_DATASET_BYTES, &f, err);
    if (st == RD_OK)
        st = rd_dataset_parse(f.buf, f.len, path, f.dir, n_inputs, true, out, err);
    sim_file_bytes_free(&f);
    return st;
}
