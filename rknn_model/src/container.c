/*
 * container.c: the `.rknn` file as a whole: what its magic says, the header (section 1 of
 * ../shared/docs/rknn-model-format.md: "RKNN", u32 0, u64 format version, u64 model-data size D, 40 zero
 * bytes, the FlatBuffer, u64 JSON length J, the JSON), loading, and the model's accessors.
 *
 * Versions: the header is 64 bytes when (version & 0xff) > 1 and D > 0, else 24 (toolkit1 files), as
 * Netron and openrknn read it. Versions 2 and 6 were seen; others up to 0xff are read with a warning.
 */
#include "internal.h"

rd_rknn_file_kind rd_rknn_detect(const void *buf, size_t len)
{
    const uint8_t *b = buf;
    if (len >= 8 && memcmp(b, "CYPTRKNN", 8) == 0)
        return RD_RKNN_FILE_ENCRYPTED;
    if (len >= 4 && memcmp(b, "RKNX", 4) == 0)
        return RD_RKNN_FILE_RKNX;
    if (len >= 4 && memcmp(b, "RKNN", 4) == 0)
        return RD_RKNN_FILE_RKNN;
    if (len >= 4 && memcmp(b, "VPMN", 4) == 0)
        return RD_RKNN_FILE_OPENVX;
    if (len >= 8 && memcmp(b + 4, "RKNN", 4) == 0)
        return RD_RKNN_FILE_BARE_FB;
    size_t i = 0;
    while (i < len && i < 64 && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t'))
        i++;
    if (i < len && b[i] == '{') {
        static const char *const keys[] = {"\"network_platform\"", "\"nodes\""};
        size_t n = len < 4096 ? len : 4096;
        for (size_t k = 0; k < 2; k++)
            if (memmem(b, n, keys[k], strlen(keys[k])))
                return RD_RKNN_FILE_TOOLKIT1_JSON;
    }
    return RD_RKNN_FILE_UNKNOWN;
}

const char *rd_rknn_file_kind_name(rd_rknn_file_kind kind)
{
    switch (kind) {
    case RD_RKNN_FILE_RKNN:
        return "RKNN model";
    case RD_RKNN_FILE_ENCRYPTED:
        return "encrypted RKNN model (CYPTRKNN)";
    case RD_RKNN_FILE_RKNX:
        return "RKNN3 container (RKNX, rknn3-toolkit / RKLLM)";
    case RD_RKNN_FILE_OPENVX:
        return "OpenVX NBG binary (VPMN, RKNN-Toolkit1 pre-compiled model)";
    case RD_RKNN_FILE_BARE_FB:
        return "bare RKNN FlatBuffer without the file header (RKNN Lite, e.g. a .mini.rknn)";
    case RD_RKNN_FILE_TOOLKIT1_JSON:
        return "RKNN-Toolkit1 JSON model description";
    default:
        return "unknown file";
    }
}

void rd_rknn_limits_default(rd_rknn_limits *lim)
{
    *lim = (rd_rknn_limits){
        .max_file_bytes = RD_MAX_MODEL_BYTES,
        .max_graphs = 64,
        .max_tensors = (size_t)1 << 20,
        .max_nodes = (size_t)1 << 20,
        .max_node_io = 4096,
        .max_vector = (size_t)1 << 20,
        .max_text_bytes = (size_t)64 << 20,
        .max_depth = 64,
        .max_decoded_bytes = (size_t)256 << 20,
    };
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* The reason a file of another kind is refused, with what to do. */
static rd_status refuse_kind(const char *path, rd_rknn_file_kind kind, rd_error *err)
{
    switch (kind) {
    case RD_RKNN_FILE_ENCRYPTED:
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "%s: an %s: its graph and quantization cannot be read; give the "
                         "unencrypted .rknn the toolkit built (before rknn.export_encrypted_rknn)",
                         path, rd_rknn_file_kind_name(kind));
    case RD_RKNN_FILE_UNKNOWN:
        return rd_errorf(err, RD_E_PARSE,
                         "%s: not an RKNN model: it does not start with \"RKNN\" (nor with another "
                         "signature of the RKNN family)",
                         path);
    default:
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "%s: a %s, which this reader does not read (it reads the RKNN-Toolkit2 "
                         "\"RKNN\" container)",
                         path, rd_rknn_file_kind_name(kind));
    }
}

/* Reads the header and checks the sections' sizes; sets data_off and the info's header fields. */
static rd_status read_header(rd_rknn_model *m, rd_error *err)
{
    const char *path = m->info.path;
    const uint8_t *f = m->file;
    size_t len = m->file_len;
    rd_rknn_file_kind kind = rd_rknn_detect(f, len);
    if (kind != RD_RKNN_FILE_RKNN)
        return refuse_kind(path, kind, err);
    if (len < 24)
        return rd_errorf(err, RD_E_PARSE,
                         "%s: %zu bytes, expected at least the 24-byte header (magic, version, "
                         "model-data size): cut short?",
                         path, len);
    uint32_t pad;
    memcpy(&pad, f + 4, 4);
    uint64_t version = rd64(f + 8), data = rd64(f + 16);
    m->info.format_version = version;
    m->info.model_bytes = data;
    if (pad != 0)
        rk_warn(m, "byte 4: the u32 after the magic is %u, 0 in every file seen", pad);
    if ((version >> 8) != 0 && (version >> 8) != 0x10)
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "%s: byte 8: format version 0x%llx, this reader knows versions 1 to 6 "
                         "(0x1001 to 0x1006 for the variants Netron lists); is this a newer toolkit's model?",
                         path, (unsigned long long)version);
    unsigned v = (unsigned)(version & 0xff);
    if (v == 0 || v > 6)
        rk_warn(m, "byte 8: format version %u, the versions seen are 2 and 6: read as version 6", v);
    size_t header = v > 1 && data > 0 ? 64 : 24;
    m->info.header_bytes = header;
    if (data == 0)
        return rd_errorf(err, RD_E_PARSE, "%s: byte 16: model-data size 0: the file holds no model", path);
    if (header == 64) {
        if (len < 64)
            return rd_errorf(err, RD_E_PARSE,
                             "%s: %zu bytes, expected at least the 64-byte header of a version-%u "
                             "file: cut short?",
                             path, len, v);
        for (size_t i = 24; i < 64; i++)
            if (f[i]) {
                rk_warn(m, "byte %zu: the 40 reserved header bytes are not all zero (0x%02x)", i, f[i]);
                break;
            }
    }
    if (data > len - header)
        return rd_errorf(err, RD_E_PARSE,
                         "%s: byte 16: the header says %llu bytes of model data at byte %zu, the file "
                         "has %zu after the header: cut short?",
                         path, (unsigned long long)data, header, len - header);
    m->data_off = header;
    size_t jpos = header + (size_t)data;
    m->info.json_offset = jpos;
    if (len - jpos < 8)
        return rd_errorf(err, RD_E_PARSE,
                         "%s: byte %zu: %zu bytes where the u64 JSON length was expected (8 bytes): "
                         "cut short?",
                         path, jpos, len - jpos);
    uint64_t jlen = rd64(f + jpos);
    if (jlen > len - jpos - 8)
        return rd_errorf(err, RD_E_PARSE, "%s: byte %zu: JSON length %llu, the file has %zu bytes after it: cut short?",
                         path, jpos, (unsigned long long)jlen, len - jpos - 8);
    m->info.json_bytes = jlen;
    size_t trailing = len - jpos - 8 - (size_t)jlen;
    if (trailing)
        rk_warn(m, "byte %zu: %zu bytes after the JSON section (none in any file seen)", len - trailing, trailing);
    return RD_OK;
}

static rd_status parse_owned(rd_rknn_model *m, rd_error *err)
{
    rd_status st = read_header(m, err);
    if (st != RD_OK)
        return st;
    const uint8_t *data = m->file + m->data_off;
    size_t dlen = (size_t)m->info.model_bytes;
    if (dlen >= 4 && memcmp(data, "VPMN", 4) == 0)
        return rd_errorf(err, RD_E_UNSUPPORTED,
                         "%s: byte %zu: the model data is an %s, which this reader does not "
                         "read",
                         m->info.path, m->data_off, rd_rknn_file_kind_name(RD_RKNN_FILE_OPENVX));
    if (m->info.json_bytes) {
        st = rk_read_json(m, (const char *)m->file + m->info.json_offset + 8, (size_t)m->info.json_bytes,
                          (size_t)m->info.json_offset + 8, err);
        if (st != RD_OK)
            return st;
    }
    return rk_read_model(m, err);
}

/* Parses a file image it takes ownership of (freed on failure too). */
static rd_status parse_taken(uint8_t *file, size_t len, const char *path, const rd_rknn_limits *l, rd_rknn_model **out,
                             rd_error *err)
{
    rd_rknn_model *m = calloc(1, sizeof *m);
    if (!m) {
        free(file);
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", path);
    }
    m->lim = *l;
    m->file = file;
    m->file_len = len;
    rk_arena_init(&m->arena, l->max_decoded_bytes);
    m->info.path = rk_strndup(&m->arena, path, strlen(path), err);
    m->info.file_bytes = len;
    rd_status st = m->info.path ? parse_owned(m, err) : RD_E_NOMEM;
    if (st != RD_OK) {
        rd_rknn_destroy(m);
        return st;
    }
    *out = m;
    return RD_OK;
}

static void limits_or_default(const rd_rknn_limits *lim, rd_rknn_limits *out)
{
    if (lim)
        *out = *lim;
    else
        rd_rknn_limits_default(out);
}

rd_status rd_rknn_parse(const void *buf, size_t len, const char *name, const rd_rknn_limits *lim, rd_rknn_model **out,
                        rd_error *err)
{
    rd_error local;
    err = rk_err(err, &local);
    *out = NULL;
    rd_rknn_limits l;
    limits_or_default(lim, &l);
    const char *path = name ? name : "model.rknn";
    if ((uint64_t)len > l.max_file_bytes)
        return rd_errorf(err, RD_E_LIMIT, "%s: %zu bytes, more than the %llu a model may have", path, len,
                         (unsigned long long)l.max_file_bytes);
    uint8_t *copy = malloc(len + 1);
    if (!copy)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory (%zu bytes)", path, len);
    if (len)
        memcpy(copy, buf, len);
    copy[len] = 0;
    return parse_taken(copy, len, path, &l, out, err);
}

rd_status rd_rknn_load(const char *path, const rd_rknn_limits *lim, rd_rknn_model **out, rd_error *err)
{
    rd_error local;
    err = rk_err(err, &local);
    *out = NULL;
    rd_rknn_limits l;
    limits_or_default(lim, &l);
    char *buf = NULL;
    size_t len = 0;
    rd_status st = rd_file_read_all(NULL, path, l.max_file_bytes, &buf, &len, err); /* FIFOs refused, size capped */
    return st != RD_OK ? st : parse_taken((uint8_t *)buf, len, path, &l, out, err);
}

void rd_rknn_destroy(rd_rknn_model *m)
{
    if (!m)
        return;
    rk_arena_fini(&m->arena);
    free(m->file);
    free(m);
}

const rd_rknn_info *rd_rknn_info_get(const rd_rknn_model *m)
{
    return &m->info;
}

size_t rd_rknn_graph_count(const rd_rknn_model *m)
{
    return m->n_graphs;
}

const rd_rknn_graph *rd_rknn_graph_at(const rd_rknn_model *m, size_t i)
{
    return i < m->n_graphs ? &m->graphs[i] : NULL;
}

size_t rd_rknn_warning_count(const rd_rknn_model *m)
{
    return m->n_warnings;
}

const char *rd_rknn_warning(const rd_rknn_model *m, size_t i)
{
    return i < m->n_warnings ? m->warnings[i] : "";
}
