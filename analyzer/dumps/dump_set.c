/*
 * dump_set.c: a folder of board dumps loaded and mapped to the simulation's optimised-graph values
 * (docs/dumps.md, "Mapping").
 *
 * Each file is parsed, then mapped: InputOperator / OutputOperator dumps to a graph input / output (by
 * name, else by their order), every other dump to the value its sanitised name names, trying the name
 * as is and then with compiler suffixes stripped, and following fused tensors to the last value of
 * their group (the one the NPU materialises). The shape in the name must agree with the value's. The
 * file is then read and dequantized with the value's parameters. When several dumps land on one value,
 * the one with the fewest suffixes stripped wins (then the later op, then .npy over .txt). Whatever
 * fails is kept as a reason for the mapping report; one bad file never stops the others.
 */
#include "dump_read.h"
#include "dumps.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_STRIPS 3
#define DEFAULT_DUMP_DIR "/userdata/dumps"

enum dump_kind { KIND_LAYER, KIND_INPUT, KIND_OUTPUT };

typedef struct dump_entry {
    char *file; /* base name */
    an_dump_name dn;
    bool parsed;
    enum dump_kind kind;
    int value;       /* mapped optimised-graph value (layers), -1 if none */
    int named_value; /* the value the name matched before following fusion */
    int tried_value; /* the value it resolved to, even when rejected (for the report) */
    int io;          /* graph input / output index, -1 if none */
    int strips;      /* compiler suffixes stripped to match */
    bool read;       /* the file was read */
    bool chosen;     /* holds the data for value / io */
    rd_tensor t;     /* float32 in the value's shape (raw dtype for inputs) */
    char *reason;    /* why it is not used, NULL when it is */
} dump_entry;

struct an_dump_set {
    char *dir;
    const rd_sim *s;
    const rd_model *m;
    dump_entry *e;
    size_t n;
    int *by_value; /* entry per value, -1 */
    int *by_input, *by_output;
    size_t n_read;
    bool nomem; /* memory ran out while recording or reading an entry: the load fails */
};

typedef struct name_key {
    char *name; /* sanitised */
    int value;
} name_key;

/* ---- small helpers --------------------------------------------------------------------------------- */

static void set_reason(an_dump_set *d, dump_entry *e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_reason(an_dump_set *d, dump_entry *e, const char *fmt, ...)
{
    char buf[RD_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free(e->reason);
    e->reason = strdup(buf);
    d->nomem |= e->reason == NULL;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(((const name_key *)a)->name, ((const name_key *)b)->name);
}

static int cmp_entry(const void *a, const void *b)
{
    const dump_entry *x = a, *y = b;
    if (x->parsed != y->parsed)
        return x->parsed ? -1 : 1;
    if (x->parsed && x->dn.index != y->dn.index)
        return x->dn.index < y->dn.index ? -1 : 1;
    return strcmp(x->file, y->file);
}

static void value_info(const an_dump_set *d, int v, rd_value_info *vi)
{
    rd_model_value(d->m, (size_t)v, vi);
}

static void dims_str(int rank, const int64_t *dims, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < rank && used < len; i++) {
        int w = snprintf(buf + used, len - used, i ? "x%lld" : "%lld", (long long)dims[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

static int64_t numel_of_dims(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    return n;
}

static int strip_trailing_ones(int rank, const int64_t *dims)
{
    while (rank > 1 && dims[rank - 1] == 1)
        rank--;
    return rank;
}

/* The name's dims agree with the value's: equal after dropping trailing 1s (a rank-2 tensor is dumped
   as N x C x 1 x 1). Unknown value dims (-1) match anything. */
static bool shape_agrees(const rd_value_info *vi, const an_dump_name *dn)
{
    if (vi->rank < 0)
        return true;
    int a = strip_trailing_ones(vi->rank, vi->dims), b = strip_trailing_ones(dn->rank, dn->dims);
    if (a != b)
        return false;
    for (int i = 0; i < a; i++)
        if (vi->dims[i] >= 0 && vi->dims[i] != dn->dims[i])
            return false;
    return true;
}

static bool dims_known(const rd_value_info *vi)
{
    if (vi->rank < 0)
        return false;
    for (int i = 0; i < vi->rank; i++)
        if (vi->dims[i] < 0)
            return false;
    return true;
}

/* ---- name lookup ----------------------------------------------------------------------------------- */

static const char *const suffixes[] = {"_gemm_conv", "__float16", "_conv", "_int8", "_mm", "-rs", "_sw"};

/* Length of name without one compiler suffix at its end, or 0 when it has none; "#N" counts too. */
static size_t strip_one(const char *name, size_t len, size_t which)
{
    size_t n_fixed = sizeof suffixes / sizeof suffixes[0];
    if (which < n_fixed) {
        size_t sl = strlen(suffixes[which]);
        return len > sl && memcmp(name + len - sl, suffixes[which], sl) == 0 ? len - sl : 0;
    }
    size_t i = len;
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
        i--;
    return i < len && i > 1 && name[i - 1] == '#' ? i - 1 : 0;
}

/* Every value whose sanitised name is name[0..len): calls back on each; returns the count. */
static size_t lookup(const name_key *keys, size_t n_keys, const char *name, size_t len, int *values, size_t max)
{
    char buf[sizeof(((an_dump_name *)0)->name)];
    memcpy(buf, name, len);
    buf[len] = '\0';
    name_key probe = {buf, 0};
    const name_key *hit = bsearch(&probe, keys, n_keys, sizeof *keys, cmp_key);
    if (!hit)
        return 0;
    while (hit > keys && strcmp(hit[-1].name, buf) == 0)
        hit--;
    size_t k = 0;
    for (; hit < keys + n_keys && strcmp(hit->name, buf) == 0; hit++)
        if (k < max)
            values[k++] = hit->value;
    return k;
}

/* Finds the values named by name with the fewest suffixes stripped (breadth first). */
static size_t find_named(const name_key *keys, size_t n_keys, const char *name, int *values, size_t max,
                         int *out_strips)
{
    size_t lens[64], n_lens = 1, first = 0;
    lens[0] = strlen(name);
    for (int depth = 0; depth <= MAX_STRIPS; depth++) {
        size_t level_end = n_lens;
        for (size_t i = first; i < level_end; i++) {
            size_t k = lookup(keys, n_keys, name, lens[i], values, max);
            if (k) {
                *out_strips = depth;
                return k;
            }
        }
        for (size_t i = first; i < level_end; i++)
            for (size_t w = 0; w <= sizeof suffixes / sizeof suffixes[0]; w++) {
                size_t l = strip_one(name, lens[i], w);
                if (l && n_lens < sizeof lens / sizeof lens[0])
                    lens[n_lens++] = l;
            }
        first = level_end;
    }
    return 0;
}

static rd_status build_keys(const an_dump_set *d, name_key **out, size_t *out_n, rd_error *err)
{
    size_t n = rd_model_value_count(d->m);
    name_key *keys = calloc(n ? n : 1, sizeof *keys);
    if (!keys)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t v = 0; v < n; v++) {
        rd_value_info vi;
        value_info(d, (int)v, &vi);
        size_t len = strlen(vi.name) + 1;
        keys[v].name = malloc(len);
        keys[v].value = (int)v;
        if (!keys[v].name) {
            for (size_t i = 0; i < v; i++)
                free(keys[i].name);
            free(keys);
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        }
        an_dump_sanitise(vi.name, keys[v].name, len);
    }
    qsort(keys, n, sizeof *keys, cmp_key);
    *out = keys;
    *out_n = n;
    return RD_OK;
}

/* The materialised value carrying v's data (following removal and fusion), or -1 with a reason. */
static int resolve_value(const an_dump_set *d, int v, char *why, size_t why_len)
{
    size_t n = rd_model_value_count(d->m);
    for (size_t step = 0; step <= n; step++) {
        rd_value_info vi;
        value_info(d, v, &vi);
        rd_sim_tensor info;
        rd_error e;
        if (rd_sim_tensor_get(d->s, vi.name, &info, &e) != RD_OK) {
            snprintf(why, why_len, "%s", e.msg);
            return -1;
        }
        if (info.value == v && info.materialized)
            return v;
        if (info.fused_into >= 0 && info.fused_into != v) {
            v = info.fused_into;
            continue;
        }
        snprintf(why, why_len, "tensor '%s' is %s", vi.name,
                 vi.is_constant ? "a constant" : "not a materialised float activation");
        return -1;
    }
    snprintf(why, why_len, "fusion chain loops");
    return -1;
}

/* ---- mapping ---------------------------------------------------------------------------------------- */

static void map_layer(an_dump_set *d, dump_entry *e, const name_key *keys, size_t n_keys)
{
    int hits[8];
    size_t k = find_named(keys, n_keys, e->dn.name, hits, 8, &e->strips);
    if (k == 0) {
        set_reason(d, e, "no tensor of the model is named '%s' (with '/' as '_'%s)", e->dn.name,
                   " and compiler suffixes stripped; dumps from a different model?");
        return;
    }
    int target = -1;
    char why[RD_ERROR_MSG_MAX] = "";
    for (size_t i = 0; i < k; i++) {
        int r = resolve_value(d, hits[i], why, sizeof why);
        if (r < 0)
            continue;
        if (target >= 0 && r != target) {
            set_reason(d, e, "'%s' names several tensors ('/' and '_' both become '_')", e->dn.name);
            return;
        }
        target = r;
        e->named_value = hits[i];
    }
    if (target < 0) {
        set_reason(d, e, "%s", why);
        return;
    }
    rd_value_info vi;
    value_info(d, target, &vi);
    e->tried_value = target;
    if (vi.producer < 0) {
        set_reason(d, e, "'%s' is a graph input: the board's input is its InputOperator dump", vi.name);
        return;
    }
    if (!shape_agrees(&vi, &e->dn)) {
        char a[128], b[128];
        dims_str(e->dn.rank, e->dn.dims, a, sizeof a);
        dims_str(vi.rank, vi.dims, b, sizeof b);
        set_reason(d, e, "shape %s in the name, but tensor '%s' is %s", a, vi.name, b);
        return;
    }
    e->value = target;
}

/* Graph input/output of an InputOperator/OutputOperator dump: by name, else the ordinal'th. */
static void map_io(an_dump_set *d, dump_entry *e, int ordinal)
{
    bool in = e->kind == KIND_INPUT;
    size_t n = in ? rd_model_input_count(d->m) : rd_model_output_count(d->m);
    for (size_t i = 0; i < n; i++) {
        rd_value_info vi;
        value_info(d, in ? rd_model_input(d->m, i) : rd_model_output(d->m, i), &vi);
        char san[sizeof e->dn.name];
        an_dump_sanitise(vi.name, san, sizeof san);
        if (strcmp(san, e->dn.name) == 0) {
            e->io = (int)i;
            break;
        }
    }
    if (e->io < 0 && ordinal < (int)n)
        e->io = ordinal;
    if (e->io >= 0) {
        rd_value_info vi;
        value_info(d, in ? rd_model_input(d->m, (size_t)e->io) : rd_model_output(d->m, (size_t)e->io), &vi);
        if (!in && !shape_agrees(&vi, &e->dn)) { /* input sizes are the input check's business */
            char a[128], b[128];
            dims_str(e->dn.rank, e->dn.dims, a, sizeof a);
            dims_str(vi.rank, vi.dims, b, sizeof b);
            set_reason(d, e, "shape %s in the name, but graph output %d '%s' is %s", a, e->io, vi.name, b);
            e->io = -1;
        }
        return;
    }
    set_reason(d, e, "%s dump %d but the model has %zu graph %s", e->dn.op_type, ordinal + 1, n,
               in ? "inputs" : "outputs");
}

/* C2 of a .txt dump: by its dtype, and for float dumps by the precision the tensor is held in. */
static int txt_c2(const an_dump_set *d, const rd_platform_info *plat, const dump_entry *e, int value)
{
    if (!plat)
        return 0;
    switch (e->dn.dtype) {
    case RD_DT_I8:
    case RD_DT_U8:
        return plat->c2_int8;
    case RD_DT_F16:
    case RD_DT_I16:
        return plat->c2_f16;
    default:
        break;
    }
    rd_sim_tensor info;
    rd_value_info vi;
    rd_error e2;
    if (value < 0)
        return plat->c2_f16;
    value_info(d, value, &vi);
    if (rd_sim_tensor_get(d->s, vi.name, &info, &e2) != RD_OK)
        return 0;
    return info.precision == RD_PREC_INT8 ? plat->c2_int8 : plat->c2_f16;
}

/* Reads e's file; layer and output dumps are dequantized into the value's shape. */
static void read_entry(an_dump_set *d, const rd_platform_info *plat, dump_entry *e)
{
    int value = e->value;
    if (e->kind == KIND_OUTPUT && e->io >= 0)
        value = rd_model_output(d->m, (size_t)e->io);
    if (e->dn.is_txt && !plat) {
        set_reason(d, e, "a .txt dump needs the target (its NC1HWC2 C2)");
        return;
    }
    size_t plen = strlen(d->dir) + strlen(e->file) + 2;
    char *path = malloc(plen);
    if (!path) {
        d->nomem = true;
        return;
    }
    snprintf(path, plen, "%s/%s", d->dir, e->file);
    struct stat lsb;
    if (lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode)) { /* a board's link could point anywhere on this host */
        set_reason(d, e, "%s: is a symbolic link; links in a dump folder are not followed", e->file);
        free(path);
        return;
    }
    rd_tensor raw;
    rd_error err;
    rd_error_clear(&err);
    int c2 = e->dn.is_txt ? txt_c2(d, plat, e, value) : 0;
    rd_status st = an_dump_read_raw(path, &e->dn, c2, &raw, &err);
    size_t dlen = strlen(d->dir);
    free(path);
    d->nomem |= st == RD_E_NOMEM;
    if (st != RD_OK) {
        if (e->dn.is_txt && c2 == 0 && plat)
            set_reason(d, e, "%s: the NC1HWC2 C2 of %s for %s dumps is not documented", e->file, plat->name,
                       rd_dtype_get(e->dn.dtype)->name);
        else /* messages name the file; the folder is in the report's header */
            set_reason(d, e, "%s",
                       strncmp(err.msg, d->dir, dlen) == 0 && err.msg[dlen] == '/' ? err.msg + dlen + 1 : err.msg);
        return;
    }
    e->read = true;
    d->n_read++;
    if (e->kind == KIND_INPUT || value < 0) { /* raw input, or read only to check the file */
        if (e->kind == KIND_INPUT)
            e->t = raw;
        else
            rd_tensor_fini(&raw);
        return;
    }
    rd_value_info vi;
    value_info(d, value, &vi);
    rd_sim_tensor info;
    bool have_info = rd_sim_tensor_get(d->s, vi.name, &info, &err) == RD_OK;
    st = an_dump_dequantize(&raw, have_info ? &info : NULL, vi.name, &e->t, &err);
    rd_tensor_fini(&raw);
    d->nomem |= st == RD_E_NOMEM;
    if (st != RD_OK) {
        set_reason(d, e, "%s: %s", e->file, err.msg);
        e->value = -1;
        e->io = -1;
        return;
    }
    if (dims_known(&vi) && rd_tensor_numel(&e->t) == numel_of_dims(vi.rank, vi.dims)) {
        e->t.rank = vi.rank;
        memcpy(e->t.dims, vi.dims, sizeof e->t.dims);
    }
}

/* true when a is a better dump of its value than b */
static bool better(const dump_entry *a, const dump_entry *b)
{
    if (a->strips != b->strips)
        return a->strips < b->strips;
    if (a->dn.index != b->dn.index)
        return a->dn.index > b->dn.index; /* the last op writing it: its final form */
    return !a->dn.is_txt && b->dn.is_txt;
}

static void choose(an_dump_set *d)
{
    for (size_t i = 0; i < d->n; i++) {
        dump_entry *e = &d->e[i];
        if (!e->read)
            continue;
        int *slot = NULL;
        if (e->kind == KIND_LAYER && e->value >= 0)
            slot = &d->by_value[e->value];
        else if (e->kind == KIND_INPUT && e->io >= 0)
            slot = &d->by_input[e->io];
        else if (e->kind == KIND_OUTPUT && e->io >= 0)
            slot = &d->by_output[e->io];
        if (!slot)
            continue;
        if (*slot < 0 || better(e, &d->e[*slot]))
            *slot = (int)i;
    }
    for (size_t i = 0; i < d->n; i++) {
        dump_entry *e = &d->e[i];
        int slot = -1;
        if (e->kind == KIND_LAYER && e->value >= 0)
            slot = d->by_value[e->value];
        else if (e->kind == KIND_INPUT && e->io >= 0)
            slot = d->by_input[e->io];
        else if (e->kind == KIND_OUTPUT && e->io >= 0)
            slot = d->by_output[e->io];
        if (slot == (int)i) {
            e->chosen = true;
        } else if (slot >= 0 && e->read) {
            set_reason(d, e, "another dump of the same tensor is used: %s", d->e[slot].file);
            rd_tensor_fini(&e->t);
        }
    }
}

/* ---- loading ---------------------------------------------------------------------------------------- */

static rd_status no_dumps(const char *dir, const rd_platform_info *plat, const char *what, rd_error *err)
{
    const char *board_dir = plat && plat->dump_dir ? plat->dump_dir : DEFAULT_DUMP_DIR;
    return rd_errorf(err, RD_E_NOTFOUND,
                     "%s: %s. Run the application on the board with RKNN_LOG_LEVEL=5 and RKNN_DUMP_DIR=%s (the folder "
                     "must exist and be writable: mkdir -p %s && chmod 777 %s), then pull that folder",
                     dir, what, board_dir, board_dir, board_dir);
}

static bool is_dump_file(const char *name)
{
    size_t len = strlen(name);
    return name[0] != '.' && len > 4 && (strcmp(name + len - 4, ".npy") == 0 || strcmp(name + len - 4, ".txt") == 0);
}

static rd_status list_files(an_dump_set *d, rd_error *err)
{
    DIR *dir = opendir(d->dir);
    if (!dir)
        return rd_errorf(err,
                         errno == ENOENT   ? RD_E_NOTFOUND
                         : errno == ENOMEM ? RD_E_NOMEM
                                           : RD_E_IO,
                         "%s: cannot open: %s", d->dir, strerror(errno));
    size_t cap = 0;
    rd_status st = RD_OK;
    struct dirent *de;
    while (st == RD_OK && (de = readdir(dir)) != NULL) {
        if (!is_dump_file(de->d_name))
            continue;
        if (d->n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            if (nc > ((size_t)1 << 24)) {
                st = rd_errorf(err, RD_E_LIMIT, "%s: too many files (more than %zu dumps)", d->dir, cap);
                break;
            }
            dump_entry *ne = realloc(d->e, nc * sizeof *ne);
            if (!ne) {
                st = rd_errorf(err, RD_E_NOMEM, "%s: out of memory listing the dumps", d->dir);
                break;
            }
            d->e = ne;
            cap = nc;
        }
        dump_entry *e = &d->e[d->n];
        memset(e, 0, sizeof *e);
        e->value = e->named_value = e->tried_value = e->io = -1;
        e->file = strdup(de->d_name);
        if (!e->file)
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
        else
            d->n++;
    }
    closedir(dir);
    return st;
}

static rd_status map_all(an_dump_set *d, rd_error *err)
{
    name_key *keys = NULL;
    size_t n_keys = 0;
    rd_status st = build_keys(d, &keys, &n_keys, err);
    if (st != RD_OK)
        return st;
    int ordinal[2] = {-1, -1}, last_index[2] = {-1, -1};
    for (size_t i = 0; i < d->n; i++) {
        dump_entry *e = &d->e[i];
        rd_error perr;
        if (an_dump_name_parse(e->file, &e->dn, &perr) != RD_OK) {
            set_reason(d, e, "%s", perr.msg);
            continue;
        }
        e->parsed = true;
    }
    qsort(d->e, d->n, sizeof *d->e, cmp_entry);
    for (size_t i = 0; i < d->n; i++) {
        dump_entry *e = &d->e[i];
        if (!e->parsed)
            continue;
        bool in = strcmp(e->dn.op_type, "InputOperator") == 0, out = strcmp(e->dn.op_type, "OutputOperator") == 0;
        if (in || out) {
            int k = in ? 0 : 1;
            if (e->dn.index != last_index[k]) { /* an .npy and a .txt of one op share their ordinal */
                ordinal[k]++;
                last_index[k] = e->dn.index;
            }
            e->kind = in ? KIND_INPUT : KIND_OUTPUT;
            map_io(d, e, ordinal[k]);
        } else {
            e->kind = KIND_LAYER;
            map_layer(d, e, keys, n_keys);
        }
    }
    for (size_t i = 0; i < n_keys; i++)
        free(keys[i].name);
    free(keys);
    return RD_OK;
}

rd_status an_dump_set_load(const char *dir, const rd_platform_info *plat, rd_sim *s, an_dump_set **out, rd_error *err)
{
    *out = NULL;
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return no_dumps(dir, plat, "no such folder", err);
    an_dump_set *d = calloc(1, sizeof *d);
    if (!d)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    d->s = s;
    d->m = rd_sim_model(s);
    d->dir = strdup(dir);
    size_t nv = rd_model_value_count(d->m), ni = rd_model_input_count(d->m), no = rd_model_output_count(d->m);
    d->by_value = malloc((nv + 1) * sizeof *d->by_value);
    d->by_input = malloc((ni + 1) * sizeof *d->by_input);
    d->by_output = malloc((no + 1) * sizeof *d->by_output);
    rd_status st = RD_OK;
    if (!d->dir || !d->by_value || !d->by_input || !d->by_output)
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    if (st == RD_OK) {
        for (size_t i = 0; i < nv; i++)
            d->by_value[i] = -1;
        for (size_t i = 0; i < ni; i++)
            d->by_input[i] = -1;
        for (size_t i = 0; i < no; i++)
            d->by_output[i] = -1;
        st = list_files(d, err);
    }
    if (st == RD_OK && d->n == 0)
        st = no_dumps(dir, plat, "no .npy or .txt dumps in the folder", err);
    if (st == RD_OK)
        st = map_all(d, err);
    if (st == RD_OK) {
        for (size_t i = 0; i < d->n; i++) {
            dump_entry *e = &d->e[i];
            bool mapped = (e->kind == KIND_LAYER && e->value >= 0) || (e->kind != KIND_LAYER && e->io >= 0);
            if (e->parsed && (mapped || !e->dn.is_txt)) /* unmapped .txt: no tensor to give its C2 */
                read_entry(d, plat, e);
        }
        choose(d);
        if (d->nomem)
            st = rd_errorf(err, RD_E_NOMEM, "%s: out of memory reading the dumps", dir);
        else if (d->n_read == 0) {
            const char *first = d->n && d->e[0].reason ? d->e[0].reason : "no reason recorded";
            st = rd_errorf(err, RD_E_PARSE, "%s: none of the %zu dump files could be read (first: %s)", dir, d->n,
                           first);
        }
    }
    if (st != RD_OK) {
        an_dump_set_destroy(d);
        return st;
    }
    *out = d;
    return RD_OK;
}

/* ---- queries ---------------------------------------------------------------------------------------- */

const rd_tensor *an_dump_set_tensor(void *dump_set, int value)
{
    const an_dump_set *d = dump_set;
    if (!d || value < 0 || (size_t)value >= rd_model_value_count(d->m) || d->by_value[value] < 0)
        return NULL;
    return &d->e[d->by_value[value]].t;
}

const an_dump_name *an_dump_set_name(const an_dump_set *d, int value, const char **file)
{
    if (!d || value < 0 || (size_t)value >= rd_model_value_count(d->m) || d->by_value[value] < 0)
        return NULL;
    const dump_entry *e = &d->e[d->by_value[value]];
    if (file)
        *file = e->file;
    return &e->dn;
}

const rd_tensor *an_dump_set_input(const an_dump_set *d, size_t graph_input)
{
    if (!d || graph_input >= rd_model_input_count(d->m) || d->by_input[graph_input] < 0)
        return NULL;
    return &d->e[d->by_input[graph_input]].t;
}

const rd_tensor *an_dump_set_output(const an_dump_set *d, size_t graph_output)
{
    if (!d || graph_output >= rd_model_output_count(d->m) || d->by_output[graph_output] < 0)
        return NULL;
    return &d->e[d->by_output[graph_output]].t;
}

size_t an_dump_set_count(const an_dump_set *d)
{
    return d ? d->n_read : 0;
}

size_t an_dump_set_mapped(const an_dump_set *d)
{
    size_t n = 0;
    for (size_t i = 0; d && i < d->n; i++)
        n += d->e[i].chosen && d->e[i].kind == KIND_LAYER;
    return n;
}

void an_dump_set_destroy(an_dump_set *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        free(d->e[i].file);
        free(d->e[i].reason);
        rd_tensor_fini(&d->e[i].t);
    }
    free(d->e);
    free(d->by_value);
    free(d->by_input);
    free(d->by_output);
    free(d->dir);
    free(d);
}

/* ---- the mapping report ----------------------------------------------------------------------------- */

static void report_entry(const an_dump_set *d, const dump_entry *e, FILE *f)
{
    rd_value_info vi;
    if (!e->chosen) {
        fprintf(f, "%s -> none: %s\n", RD_TEXT_SHOWN(e->file), e->reason ? RD_TEXT_SHOWN(e->reason) : "not used");
        return;
    }
    if (e->kind != KIND_LAYER) {
        bool in = e->kind == KIND_INPUT;
        value_info(d, in ? rd_model_input(d->m, (size_t)e->io) : rd_model_output(d->m, (size_t)e->io), &vi);
        fprintf(f, "%s -> graph %s %d '%s'%s\n", RD_TEXT_SHOWN(e->file), in ? "input" : "output", e->io,
                RD_TEXT_SHOWN(vi.name), in ? " (raw)" : "");
        return;
    }
    value_info(d, e->value, &vi);
    fprintf(f, "%s -> %s", RD_TEXT_SHOWN(e->file), RD_TEXT_SHOWN(vi.name)); /* the board names its files */
    if (e->named_value >= 0 && e->named_value != e->value) {
        rd_value_info nv;
        value_info(d, e->named_value, &nv);
        fprintf(f, " (named '%s', fused into the group's last tensor)", RD_TEXT_SHOWN(nv.name));
    }
    if (e->strips > 0)
        fprintf(f, " (compiler suffix stripped)");
    fputc('\n', f);
}

rd_status an_dump_set_report(const an_dump_set *d, FILE *f, rd_error *err)
{
    fprintf(f, "# rknn-diag board dump mapping: %s\n# %zu files, %zu read, %zu mapped to tensors\n", d->dir, d->n,
            d->n_read, an_dump_set_mapped(d));
    for (size_t i = 0; i < d->n; i++)
        report_entry(d, &d->e[i], f);
    fprintf(f, "# materialised tensors without a dump\n");
    size_t nv = rd_model_value_count(d->m);
    /* the first dump that was tried for each value and rejected: one pass, not one per value */
    size_t *rejected_of = malloc((nv + 1) * sizeof *rejected_of);
    if (!rejected_of)
        return rd_errorf(err, RD_E_NOMEM, "out of memory for the dump mapping report");
    for (size_t v = 0; v < nv; v++)
        rejected_of[v] = d->n;
    for (size_t i = d->n; i-- > 0;)
        if (d->e[i].tried_value >= 0 && (size_t)d->e[i].tried_value < nv)
            rejected_of[d->e[i].tried_value] = i;
    for (size_t v = 0; v < nv; v++) {
        rd_value_info vi;
        value_info(d, (int)v, &vi);
        rd_sim_tensor info;
        rd_error e2;
        if (d->by_value[v] >= 0 || vi.producer < 0 || rd_sim_tensor_get(d->s, vi.name, &info, &e2) != RD_OK ||
            !info.materialized || info.value != (int)v)
            continue;
        const dump_entry *rejected = rejected_of[v] < d->n ? &d->e[rejected_of[v]] : NULL;
        if (rejected)
            fprintf(f, "%s -> none: its dump %s was rejected: %s\n", RD_TEXT_SHOWN(vi.name),
                    RD_TEXT_SHOWN(rejected->file), rejected->reason ? RD_TEXT_SHOWN(rejected->reason) : "not used");
        else
            fprintf(f, "%s -> none: no dump names it\n", RD_TEXT_SHOWN(vi.name));
    }
    free(rejected_of);
    if (ferror(f))
        return rd_errorf(err, RD_E_IO, "writing the dump mapping report failed");
    return RD_OK;
}
