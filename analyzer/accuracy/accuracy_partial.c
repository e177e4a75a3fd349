/*
 * accuracy_partial.c: accuracy_partial.h: a shard's partial.json written and read back exactly, the parts of
 * one run checked against each other, and the rows hooks of a shard and of a merge.
 */
#include "accuracy_partial.h"
#include "json_out.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* one layer's samples per group */
typedef struct layer_parts {
    char *name;
    an_group_acc groups[RD_GROUP_COUNT];
    bool used;          /* a merge's analysis had this row */
    unsigned parsed_in; /* the an_acc_partial_parse call that last listed it (1, 2, ...; 0: none) */
} layer_parts;

struct an_acc_parts {
    layer_parts *layers; /* indexed by the layer's index in the result */
    size_t n_layers;
    int skip_sample; /* a merge: the sample analysed again */
    unsigned parses; /* an_acc_partial_parse calls on these parts (a file lists each layer once) */
};

void an_acc_header_fini(an_acc_header *h)
{
    for (int i = 0; h->argv && i < h->argc; i++)
        free(h->argv[i]);
    free(h->argv);
    free(h->model);
    memset(h, 0, sizeof *h);
}

bool an_acc_parse_shard(const char *text, int *k, int *n)
{
    char *end = NULL, *end2 = NULL;
    if (!isdigit((unsigned char)text[0])) /* strtol would take blanks and signs */
        return false;
    errno = 0;
    long kk = strtol(text, &end, 10);
    if (errno || *end != '/' || !isdigit((unsigned char)end[1]))
        return false;
    long nn = strtol(end + 1, &end2, 10);
    if (errno || *end2 || nn < 1 || nn > 1000000 || kk >= nn)
        return false;
    *k = (int)kk;
    *n = (int)nn;
    return true;
}

void an_acc_shard_range(size_t total, int k, int n, size_t *lo, size_t *hi)
{
    *lo = total * (size_t)k / (size_t)n;
    *hi = total * (size_t)(k + 1) / (size_t)n;
}

rd_status an_acc_parts_create(an_acc_parts **out, rd_error *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    (*out)->skip_sample = -1;
    return RD_OK;
}

void an_acc_parts_destroy(an_acc_parts *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_layers; i++) {
        free(p->layers[i].name);
        for (int g = 0; g < RD_GROUP_COUNT; g++)
            an_group_acc_fini(&p->layers[i].groups[g]);
    }
    free(p->layers);
    free(p);
}

/* The layer's slot (grown as needed), named name; RD_E_PARSE when it has another name already. */
static rd_status layer_slot(an_acc_parts *p, size_t layer, const char *name, layer_parts **out, rd_error *err)
{
    if (layer >= AN_ACC_MAX_LAYERS)
        return rd_errorf(err, RD_E_LIMIT, "layer %zu: more than %d layers", layer, AN_ACC_MAX_LAYERS);
    if (layer >= p->n_layers) {
        size_t n = layer + 1 > 2 * p->n_layers ? layer + 1 : 2 * p->n_layers;
        layer_parts *l = realloc(p->layers, n * sizeof *l);
        if (!l)
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        memset(l + p->n_layers, 0, (n - p->n_layers) * sizeof *l);
        p->layers = l;
        p->n_layers = n;
    }
    layer_parts *l = &p->layers[layer];
    if (!l->name && !(l->name = strdup(name)))
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (strcmp(l->name, name) != 0)
        return rd_errorf(err, RD_E_PARSE, "layer %zu is '%.200s' in one part and '%.200s' in another", layer, l->name,
                         name);
    *out = l;
    return RD_OK;
}

rd_status an_acc_parts_record(void *user, const rd_result *r, size_t layer, an_group_acc *groups, rd_error *err)
{
    layer_parts *l = NULL;
    rd_status st = layer_slot(user, layer, r->layers[layer].name, &l, err);
    for (int g = 0; g < RD_GROUP_COUNT && st == RD_OK; g++)
        for (size_t k = 0; k < groups[g].n && st == RD_OK; k++)
            st = an_metric_group_add(&l->groups[g], &groups[g].samples[k], groups[g].sample_ids[k], err);
    return st;
}

/* ---- rd_metrics as 20 numbers --------------------------------------------------------------------- */

#define N_FIELDS 20

static void to_fields(const rd_metrics *m, double *f)
{
    const double v[N_FIELDS] = {m->cos,
                                m->euc,
                                m->euc_rel,
                                m->sqnr_db,
                                m->max_abs,
                                m->mean_abs,
                                m->gain,
                                m->offset,
                                m->sqnr_affine_db,
                                m->err_steps,
                                m->saturated_share,
                                m->zero_share,
                                (double)m->fp16_overflow,
                                m->fp16_max_abs,
                                (double)m->count,
                                (double)m->degenerate,
                                (double)m->nan,
                                (double)m->inf,
                                (double)m->ref_nan,
                                (double)m->ref_inf};
    memcpy(f, v, sizeof v);
}

/* the integer fields: an exact integer of the range (counts stay below 2^53 on any real tensor) */
static bool is_int_field(int i)
{
    return i == 12 || i == 14 || i == 15 || i >= 16;
}

static void from_fields(const double *f, rd_metrics *m)
{
    *m = (rd_metrics){.cos = f[0],
                      .euc = f[1],
                      .euc_rel = f[2],
                      .sqnr_db = f[3],
                      .max_abs = f[4],
                      .mean_abs = f[5],
                      .gain = f[6],
                      .offset = f[7],
                      .sqnr_affine_db = f[8],
                      .err_steps = f[9],
                      .saturated_share = f[10],
                      .zero_share = f[11],
                      .fp16_overflow = (int64_t)f[12],
                      .fp16_max_abs = f[13],
                      .count = (int64_t)f[14],
                      .degenerate = (rd_degenerate)(int)f[15],
                      .nan = (int64_t)f[16],
                      .inf = (int64_t)f[17],
                      .ref_nan = (int64_t)f[18],
                      .ref_inf = (int64_t)f[19]};
}

static void put_double(FILE *f, double v)
{
    if (isnan(v))
        fputs(",\"nan\"", f);
    else if (isinf(v))
        fputs(v > 0 ? ",\"inf\"" : ",\"-inf\"", f);
    else
        fprintf(f, ",%.17g", v);
}

/* A JSON string (escaped by cJSON) into f. */
static bool put_string(FILE *f, const char *s)
{
    cJSON *j = cJSON_CreateString(s ? s : "");
    char *text = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    if (!text)
        return false;
    fputs(text, f);
    free(text);
    return true;
}

rd_status an_acc_partial_text(const an_acc_parts *p, const an_acc_header *h, char **out, size_t *out_len, rd_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    *out = NULL;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    bool ok = true;
    fprintf(f, "{\"format\":\"%s\",\"tool\":", AN_ACC_PARTIAL_FORMAT);
    char tool[64];
    snprintf(tool, sizeof tool, "rknn-diag %s", rd_version());
    ok = put_string(f, tool);
    fputs(",\"model\":", f);
    ok = ok && put_string(f, h->model);
    fputs(",\"argv\":[", f);
    for (int i = 0; ok && i < h->argc; i++) {
        if (i)
            fputc(',', f);
        ok = put_string(f, h->argv[i]);
    }
    fprintf(f,
            "],\n\"run_hash\":\"%s\",\"shard_hash\":\"%s\",\"shard\":{\"index\":%d,\"count\":%d},"
            "\"samples_total\":%zu,\"sample_range\":[%zu,%zu],\"dump_sample\":%d,\n\"layers\":[",
            h->run_hash, h->shard_hash, h->shard_k, h->shard_n, h->total, h->lo, h->hi, h->dump_sample);
    bool first = true;
    for (size_t i = 0; ok && i < p->n_layers; i++) {
        const layer_parts *l = &p->layers[i];
        if (!l->name)
            continue;
        fprintf(f, "%s\n{\"layer\":%zu,\"name\":", first ? "" : ",", i);
        first = false;
        ok = put_string(f, l->name);
        fputs(",\"groups\":[", f);
        for (int g = 0; g < RD_GROUP_COUNT; g++) {
            fputs(g ? ",[" : "[", f);
            for (size_t k = 0; k < l->groups[g].n; k++) {
                double v[N_FIELDS];
                to_fields(&l->groups[g].samples[k], v);
                fprintf(f, "%s[%d", k ? "," : "", l->groups[g].sample_ids[k]);
                for (int j = 0; j < N_FIELDS; j++)
                    put_double(f, v[j]);
                fputc(']', f);
            }
            fputc(']', f);
        }
        fputs("]}", f);
    }
    fputs("],\n\"complete\":true}\n", f);
    ok = !ferror(f) && ok;
    fclose(f);
    if (!ok || !buf) {
        free(buf);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    *out = buf;
    *out_len = len;
    return RD_OK;
}

rd_status an_acc_partial_save(const an_acc_parts *p, const an_acc_header *h, const char *path, rd_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    rd_status st = an_acc_partial_text(p, h, &buf, &len, err);
    if (st == RD_OK)
        st = rd_file_write_atomic(path, buf, len, NULL, err);
    free(buf);
    return st;
}

/* ---- reading ---------------------------------------------------------------------------------------- */

static bool get_size(const cJSON *o, const char *key, double max, size_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= max) ||
        v->valuedouble != floor(v->valuedouble))
        return false;
    *out = (size_t)v->valuedouble;
    return true;
}

static bool get_hash(const cJSON *o, const char *key, char *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v) || strlen(v->valuestring) != AN_ACC_HASH_HEX - 1 ||
        strspn(v->valuestring, "0123456789abcdef") != AN_ACC_HASH_HEX - 1)
        return false;
    memcpy(out, v->valuestring, AN_ACC_HASH_HEX);
    return true;
}

static rd_status parse_header(const cJSON *root, const char *name, an_acc_header *h, rd_error *err)
{
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, AN_ACC_PARTIAL_FORMAT) != 0)
        return rd_errorf(err, RD_E_PARSE, "%s: \"format\" is not \"%s\"", name, AN_ACC_PARTIAL_FORMAT);
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "complete")))
        return rd_errorf(err, RD_E_PARSE, "%s: the shard did not finish (\"complete\" is not true): run it again",
                         name);
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(root, "shard"),
                *range = cJSON_GetObjectItemCaseSensitive(root, "sample_range"),
                *model = cJSON_GetObjectItemCaseSensitive(root, "model"),
                *argv = cJSON_GetObjectItemCaseSensitive(root, "argv");
    size_t k = 0, n = 0, dump = 0;
    if (!get_hash(root, "run_hash", h->run_hash) || !get_hash(root, "shard_hash", h->shard_hash))
        return rd_errorf(err, RD_E_PARSE, "%s: run_hash and shard_hash must be 64 lowercase hex digits", name);
    if (!cJSON_IsObject(sh) || !get_size(sh, "count", 1000000, &n) || n < 1 ||
        !get_size(sh, "index", (double)n - 1, &k))
        return rd_errorf(err, RD_E_PARSE, "%s: \"shard\" must be {\"index\": K, \"count\": N} with 0 <= K < N", name);
    if (!get_size(root, "samples_total", 100000, &h->total) || !get_size(root, "dump_sample", 100000, &dump) ||
        dump >= h->total)
        return rd_errorf(err, RD_E_PARSE, "%s: samples_total (1..100000) and dump_sample (below it) must be counts",
                         name);
    if (cJSON_GetArraySize(range) != 2 || !cJSON_IsNumber(range->child) || !cJSON_IsNumber(range->child->next) ||
        range->child->valuedouble != (double)(h->total * k / n) ||
        range->child->next->valuedouble != (double)(h->total * (k + 1) / n))
        return rd_errorf(err, RD_E_PARSE, "%s: sample_range is not shard %zu/%zu's of %zu samples", name, k, n,
                         h->total);
    if (!cJSON_IsString(model) || !cJSON_IsArray(argv) || cJSON_GetArraySize(argv) < 1 ||
        cJSON_GetArraySize(argv) > 4096)
        return rd_errorf(err, RD_E_PARSE, "%s: missing model or argv (1..4096 strings)", name);
    h->shard_k = (int)k;
    h->shard_n = (int)n;
    an_acc_shard_range(h->total, h->shard_k, h->shard_n, &h->lo, &h->hi);
    h->dump_sample = (int)dump;
    h->argc = cJSON_GetArraySize(argv);
    h->argv = calloc((size_t)h->argc + 1, sizeof *h->argv);
    h->model = strdup(model->valuestring);
    if (!h->argv || !h->model)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    int i = 0;
    for (const cJSON *a = argv->child; a; a = a->next, i++) {
        if (!cJSON_IsString(a))
            return rd_errorf(err, RD_E_PARSE, "%s: argv[%d] is not a string", name, i);
        if (!(h->argv[i] = strdup(a->valuestring)))
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    return RD_OK;
}

/* One metrics entry: [sample, 20 fields]. */
static bool parse_entry(const cJSON *e, const an_acc_header *h, int *sample, rd_metrics *m)
{
    if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != N_FIELDS + 1 || !cJSON_IsNumber(e->child))
        return false;
    double s = e->child->valuedouble;
    if (!(s >= (double)h->lo && s < (double)h->hi) || s != floor(s))
        return false;
    *sample = (int)s;
    double f[N_FIELDS];
    int i = 0;
    for (const cJSON *v = e->child->next; v; v = v->next, i++) {
        if (cJSON_IsNumber(v))
            f[i] = v->valuedouble;
        else if (cJSON_IsString(v) && strcmp(v->valuestring, "nan") == 0)
            f[i] = NAN;
        else if (cJSON_IsString(v) && strcmp(v->valuestring, "inf") == 0)
            f[i] = INFINITY;
        else if (cJSON_IsString(v) && strcmp(v->valuestring, "-inf") == 0)
            f[i] = -INFINITY;
        else
            return false;
        if (is_int_field(i) && !(f[i] >= 0 && f[i] <= 9007199254740992.0 && f[i] == floor(f[i])))
            return false;
    }
    return f[15] <= (double)RD_DEG_SHAPE && (from_fields(f, m), true);
}

static rd_status parse_layers(const cJSON *root, const char *name, const an_acc_header *h, an_acc_parts *p,
                              rd_error *err)
{
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
    if (!cJSON_IsArray(layers))
        return rd_errorf(err, RD_E_PARSE, "%s: \"layers\" is not an array", name);
    const unsigned this_parse = ++p->parses;
    const cJSON *l;
    size_t i = 0;
    cJSON_ArrayForEach(l, layers)
    {
        size_t index = 0;
        const cJSON *lname = cJSON_GetObjectItemCaseSensitive(l, "name"),
                    *groups = cJSON_GetObjectItemCaseSensitive(l, "groups");
        if (!get_size(l, "layer", AN_ACC_MAX_LAYERS - 1, &index) || !cJSON_IsString(lname) ||
            cJSON_GetArraySize(groups) != RD_GROUP_COUNT)
            return rd_errorf(err, RD_E_PARSE, "layers[%zu]: needs layer, name and %d groups", i, RD_GROUP_COUNT);
        layer_parts *slot = NULL;
        rd_status st = layer_slot(p, index, lname->valuestring, &slot, err);
        if (st != RD_OK)
            return st;
        if (slot->parsed_in == this_parse) /* its samples would be added twice, out of order */
            return rd_errorf(err, RD_E_PARSE, "layers[%zu]: layer %zu (%.200s) is listed twice", i, index,
                             lname->valuestring);
        slot->parsed_in = this_parse;
        int g = 0;
        for (const cJSON *grp = groups->child; grp; grp = grp->next, g++) {
            if (!cJSON_IsArray(grp))
                return rd_errorf(err, RD_E_PARSE, "layers[%zu] (%.200s): group %d is not an array", i,
                                 lname->valuestring, g);
            int last = -1;
            size_t k = 0;
            for (const cJSON *e = grp->child; e; e = e->next, k++) {
                rd_metrics m;
                int sample = 0;
                if (!parse_entry(e, h, &sample, &m) || sample <= last)
                    return rd_errorf(
                        err, RD_E_PARSE,
                        "layers[%zu] (%.200s): group %d, entry %zu: expected [sample, %d numbers] with the "
                        "samples increasing inside %zu..%zu",
                        i, lname->valuestring, g, k, N_FIELDS, h->lo, h->hi);
                last = sample;
                if ((st = an_metric_group_add(&slot->groups[g], &m, sample, err)) != RD_OK)
                    return st;
            }
        }
        i++;
    }
    return RD_OK;
}

rd_status an_acc_partial_parse(const char *buf, size_t len, const char *name, an_acc_header *h, an_acc_parts *p,
                               rd_error *err)
{
    memset(h, 0, sizeof *h);
    cJSON *root = cJSON_ParseWithLength(buf, len);
    if (!root && rd_json_well_formed(buf, len, CJSON_NESTING_LIMIT)) /* cJSON says NULL for both */
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory reading it", name);
    if (!root)
        return rd_errorf(err, RD_E_PARSE,
                         "%s: not valid JSON (cut short? a partial.json of rknn-diag accuracy --shard is written "
                         "whole or not at all: run that shard again)",
                         name);
    rd_status st = parse_header(root, name, h, err);
    if (st == RD_OK && p)
        st = parse_layers(root, name, h, p, err);
    if (st != RD_OK && err && strncmp(err->msg, name, strlen(name)) != 0)
        rd_error_prefix(err, "%s", name); /* every message names the file */
    cJSON_Delete(root);
    if (st != RD_OK)
        an_acc_header_fini(h);
    return st;
}

static rd_status read_part(const char *path, char **buf, size_t *len, char *name, size_t name_len, rd_error *err)
{
    snprintf(name, name_len, "%s/partial.json", path);
    rd_status st = rd_file_read_all(path, "partial.json", AN_ACC_MAX_PARTIAL_BYTES, buf, len, err);
    if (st != RD_OK && err && (err->code == RD_E_IO || err->code == RD_E_NOTFOUND || err->code == RD_E_PARSE)) {
        rd_error_clear(err); /* not a folder holding partial.json: the file itself */
        snprintf(name, name_len, "%s", path);
        st = rd_file_read_all(NULL, path, AN_ACC_MAX_PARTIAL_BYTES, buf, len, err);
        if (st != RD_OK)
            rd_error_prefix(err, "%s is neither a partial.json nor a folder holding one", path);
    }
    return st;
}

rd_status an_acc_partial_load(const char *path, an_acc_header *h, an_acc_parts *p, rd_error *err)
{
    char *buf = NULL, name[4200];
    size_t len = 0;
    memset(h, 0, sizeof *h);
    rd_status st = read_part(path, &buf, &len, name, sizeof name, err);
    if (st == RD_OK)
        st = an_acc_partial_parse(buf, len, name, h, p, err);
    free(buf);
    return st;
}

/* The first bytes of a file (up to len - 1, NUL-terminated); 0 when it cannot be read. */
static size_t head_of(const char *path, char *buf, size_t len)
{
    int fd = -1;
    uint64_t size = 0;
    rd_error err = {0};
    if (rd_file_open_read(path, 0, UINT64_MAX, &fd, &size, &err) != RD_OK)
        return 0;
    ssize_t r = read(fd, buf, len - 1);
    close(fd);
    buf[r > 0 ? r : 0] = '\0';
    return r > 0 ? (size_t)r : 0;
}

bool an_acc_partial_sniff(const char *path)
{
    /* the header only: the part is read whole once, by the merge */
    char buf[4096], joined[4200];
    snprintf(joined, sizeof joined, "%s/partial.json", path);
    size_t n = head_of(joined, buf, sizeof buf);
    if (!n)
        n = head_of(path, buf, sizeof buf);
    static const char mark[] = "\"format\":\"" AN_ACC_PARTIAL_FORMAT "\"";
    return n && strstr(buf, mark) != NULL;
}

rd_status an_acc_parts_load(const char *const *paths, size_t n, an_acc_header *h, an_acc_parts **out, rd_error *err)
{
    *out = NULL;
    memset(h, 0, sizeof *h);
    an_acc_parts *p = NULL;
    rd_status st = an_acc_parts_create(&p, err);
    an_acc_header *hs = calloc(n + 1, sizeof *hs);
    if (st == RD_OK && !hs)
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    size_t *by_index = NULL; /* shard index -> position in paths + 1 */
    for (size_t i = 0; i < n && st == RD_OK; i++) {
        st = an_acc_partial_load(paths[i], &hs[i], NULL, err); /* the headers first: mixed runs fail fast */
        if (st == RD_OK && (strcmp(hs[i].run_hash, hs[0].run_hash) != 0 || hs[i].total != hs[0].total ||
                            hs[i].shard_n != hs[0].shard_n))
            st = rd_errorf(err, RD_E_PARSE,
                           "%s and %s are not shards of one run split one way (run_hash %.12s... and %.12s..., "
                           "%d and %d shards of %zu and %zu samples): merge the shards of one command line, model, "
                           "configuration and dataset",
                           paths[0], paths[i], hs[0].run_hash, hs[i].run_hash, hs[0].shard_n, hs[i].shard_n,
                           hs[0].total, hs[i].total);
        if (st == RD_OK && i == 0 && !(by_index = calloc((size_t)hs[0].shard_n + 1, sizeof *by_index)))
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
        if (st == RD_OK && by_index[hs[i].shard_k])
            st = rd_errorf(err, RD_E_PARSE, "shard %d/%d is given twice: %s and %s", hs[i].shard_k, hs[i].shard_n,
                           paths[by_index[hs[i].shard_k] - 1], paths[i]);
        if (st == RD_OK)
            by_index[hs[i].shard_k] = i + 1;
    }
    for (int k = 0; st == RD_OK && k < hs[0].shard_n; k++)
        if (!by_index[k])
            st = rd_errorf(err, RD_E_PARSE,
                           "shard %d/%d is missing (%zu of %d shards given): run it (or wait for it), then merge all "
                           "of them",
                           k, hs[0].shard_n, n, hs[0].shard_n);
    /* the layers, shard after shard: the merge's fold then only moves the dump sample */
    for (int k = 0; st == RD_OK && k < hs[0].shard_n; k++) {
        an_acc_header again;
        st = an_acc_partial_load(paths[by_index[k] - 1], &again, p, err);
        if (st == RD_OK && strcmp(again.shard_hash, hs[by_index[k] - 1].shard_hash) != 0)
            st = rd_errorf(err, RD_E_PARSE, "%s changed while it was read", paths[by_index[k] - 1]);
        an_acc_header_fini(&again);
    }
    if (st == RD_OK) {
        p->skip_sample = hs[0].dump_sample;
        *h = hs[0];
        memset(&hs[0], 0, sizeof hs[0]);
        *out = p;
        p = NULL;
    }
    for (size_t i = 0; hs && i < n; i++)
        an_acc_header_fini(&hs[i]);
    free(hs);
    free(by_index);
    an_acc_parts_destroy(p);
    return st;
}

/* ---- the merge's hook ------------------------------------------------------------------------------ */

static bool same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static bool same_metrics(const rd_metrics *x, const rd_metrics *y)
{
    double a[N_FIELDS], b[N_FIELDS];
    to_fields(x, a);
    to_fields(y, b);
    for (int i = 0; i < N_FIELDS; i++)
        if (!same_double(a[i], b[i]))
            return false;
    return true;
}

rd_status an_acc_parts_merge_rows(void *user, const rd_result *r, size_t layer, an_group_acc *groups, rd_error *err)
{
    an_acc_parts *p = user;
    const char *name = r->layers[layer].name;
    if (layer >= p->n_layers || !p->layers[layer].name || strcmp(p->layers[layer].name, name) != 0)
        return rd_errorf(err, RD_E_PARSE,
                         "layer %zu is '%.200s' in this analysis but %s%.200s%s in the shards: the model or its "
                         "configuration is not the shards'",
                         layer, name, layer < p->n_layers && p->layers[layer].name ? "'" : "",
                         layer < p->n_layers && p->layers[layer].name ? p->layers[layer].name : "absent",
                         layer < p->n_layers && p->layers[layer].name ? "'" : "");
    layer_parts *l = &p->layers[layer];
    l->used = true;
    for (int g = 0; g < RD_GROUP_COUNT; g++) {
        const an_group_acc *from = &l->groups[g];
        size_t mine = groups[g].n; /* the dump sample's, analysed again here */
        bool found = false;
        for (size_t k = 0; k < from->n; k++) {
            if (from->sample_ids[k] == p->skip_sample) {
                found = true;
                bool same = mine == 1 && groups[g].sample_ids[0] == p->skip_sample &&
                            same_metrics(&groups[g].samples[0], &from->samples[k]);
                if (!same)
                    return rd_errorf(err, RD_E_INVAL,
                                     "layer '%.200s', sample %d: the merge computes cosine %.17g where its shard "
                                     "recorded %.17g: the shards ran another rknn-diag build or other inputs; run "
                                     "the merge with the shards' build",
                                     name, p->skip_sample, mine ? groups[g].samples[0].cos : NAN, from->samples[k].cos);
                continue;
            }
            rd_status st = an_metric_group_add(&groups[g], &from->samples[k], from->sample_ids[k], err);
            if (st != RD_OK)
                return st;
        }
        if (mine && !found)
            return rd_errorf(err, RD_E_INVAL,
                             "layer '%.200s', group %d: the merge measured sample %d, which its shard did not: the "
                             "shards ran another rknn-diag build",
                             name, g, p->skip_sample);
    }
    return RD_OK;
}

rd_status an_acc_parts_check_used(const an_acc_parts *p, rd_error *err)
{
    for (size_t i = 0; i < p->n_layers; i++)
        if (p->layers[i].name && !p->layers[i].used)
            return rd_errorf(err, RD_E_PARSE,
                             "the shards have layer %zu '%.200s', which this analysis has not: the model or its "
                             "configuration is not the shards'",
                             i, p->layers[i].name);
    return RD_OK;
}
