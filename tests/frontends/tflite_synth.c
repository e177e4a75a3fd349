/*
 * tflite_synth.c: the .tflite writer of tests and fuzz seeds (tflite_synth.h). Slots follow schema.fbs: Model
 * {version 0, operator_codes 1, subgraphs 2, description 3, buffers 4}, OperatorCode {deprecated_builtin_code 0,
 * custom_code 1, version 2, builtin_code 3}, SubGraph {tensors 0, inputs 1, outputs 2, operators 3, name 4},
 * Buffer {data 0}, Tensor {shape 0, type 1, buffer 2, name 3, quantization 4}, QuantizationParameters {scale 2,
 * zero_point 3, quantized_dimension 6}, Operator {opcode_index 0, inputs 1, outputs 2, builtin_options_type 3,
 * builtin_options 4}.
 */
#include "tflite_synth.h"

#include <stdlib.h>
#include <string.h>

#define TFS_MAX 256

typedef struct tfs_tdef {
    char name[128];
    int type, rank;
    int32_t dims[8];
    uint8_t *data;
    size_t len;
    int n_q, qdim;
    float scales[64];
    int64_t zps[64];
} tfs_tdef;

typedef struct tfs_opdef {
    int code;
    char custom[64];
    int in[32], out[8], n_in, n_out;
    int opt_type, n_fields;
    tfs_field fields[16];
} tfs_opdef;

struct tfs_model {
    tfs_tdef t[TFS_MAX];
    int n_t;
    tfs_opdef o[TFS_MAX];
    int n_o;
    int in[16], out[16], n_in, n_out;
};

tfs_model *tfs_create(void)
{
    return calloc(1, sizeof(tfs_model));
}

void tfs_destroy(tfs_model *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n_t; i++)
        free(m->t[i].data);
    free(m);
}

int tfs_tensor(tfs_model *m, const char *name, int type, int rank, const int32_t *dims, const void *data, size_t len)
{
    if (m->n_t == TFS_MAX || rank > 8)
        return -1;
    tfs_tdef *t = &m->t[m->n_t];
    memset(t, 0, sizeof *t);
    strncpy(t->name, name ? name : "", sizeof t->name - 1);
    t->type = type;
    t->rank = rank;
    if (rank > 0)
        memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
    if (data && len) {
        t->data = malloc(len);
        if (!t->data)
            return -1;
        memcpy(t->data, data, len);
        t->len = len;
    }
    return m->n_t++;
}

void tfs_quant(tfs_model *m, int t, const float *scales, const int64_t *zero_points, int n, int qdim)
{
    if (t < 0 || t >= m->n_t || n > 64)
        return;
    m->t[t].n_q = n;
    m->t[t].qdim = qdim;
    memcpy(m->t[t].scales, scales, (size_t)n * sizeof *scales);
    if (zero_points)
        memcpy(m->t[t].zps, zero_points, (size_t)n * sizeof *zero_points);
}

int tfs_op(tfs_model *m, int code, const int *in, int n_in, const int *out, int n_out, int opt_type,
           const tfs_field *fields, int n_fields)
{
    if (m->n_o == TFS_MAX || n_in > 32 || n_out > 8 || n_fields > 16)
        return -1;
    tfs_opdef *o = &m->o[m->n_o];
    memset(o, 0, sizeof *o);
    o->code = code;
    memcpy(o->in, in, (size_t)n_in * sizeof *in);
    memcpy(o->out, out, (size_t)n_out * sizeof *out);
    o->n_in = n_in;
    o->n_out = n_out;
    o->opt_type = opt_type;
    o->n_fields = n_fields;
    if (n_fields)
        memcpy(o->fields, fields, (size_t)n_fields * sizeof *fields);
    return m->n_o++;
}

int tfs_custom_op(tfs_model *m, const char *custom, const int *in, int n_in, const int *out, int n_out)
{
    int k = tfs_op(m, 32, in, n_in, out, n_out, 0, NULL, 0);
    if (k >= 0)
        strncpy(m->o[k].custom, custom, sizeof m->o[k].custom - 1);
    return k;
}

int64_t tfs_f32(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return bits;
}

void tfs_io(tfs_model *m, const int *in, int n_in, const int *out, int n_out)
{
    memcpy(m->in, in, (size_t)n_in * sizeof *in);
    memcpy(m->out, out, (size_t)n_out * sizeof *out);
    m->n_in = n_in;
    m->n_out = n_out;
}

static rd_fbb_ref ints(rd_fbb *b, const int *v, int n)
{
    int32_t w[32];
    for (int i = 0; i < n; i++)
        w[i] = v[i];
    return rd_fbb_vector(b, w, (size_t)n, 4, 4);
}

rd_status tfs_finish(tfs_model *m, uint8_t **buf, size_t *len, rd_error *err)
{
    rd_fbb *b = rd_fbb_create();
    /* buffers: 0 is the empty one, then one per constant tensor */
    rd_fbb_ref buffers[TFS_MAX + 1], tensors[TFS_MAX], ops[TFS_MAX], codes[TFS_MAX];
    int n_buf = 1, n_codes = 0, code_of[TFS_MAX];
    buffers[0] = rd_fbb_table(b);
    for (int i = 0; i < m->n_t; i++) {
        const tfs_tdef *t = &m->t[i];
        uint32_t bi = 0;
        if (t->data) {
            buffers[n_buf] = rd_fbb_table(b);
            rd_fbb_add_ref(b, buffers[n_buf], 0, rd_fbb_vector(b, t->data, t->len, 1, 16));
            bi = (uint32_t)n_buf++;
        }
        rd_fbb_ref tt = rd_fbb_table(b);
        rd_fbb_add_ref(b, tt, 0, rd_fbb_vector(b, t->dims, (size_t)t->rank, 4, 4));
        int8_t type = (int8_t)t->type;
        rd_fbb_add_scalar(b, tt, 1, &type, 1);
        rd_fbb_add_scalar(b, tt, 2, &bi, 4);
        rd_fbb_add_ref(b, tt, 3, rd_fbb_string(b, t->name));
        if (t->n_q) {
            rd_fbb_ref q = rd_fbb_table(b);
            rd_fbb_add_ref(b, q, 2, rd_fbb_vector(b, t->scales, (size_t)t->n_q, 4, 4));
            rd_fbb_add_ref(b, q, 3, rd_fbb_vector(b, t->zps, (size_t)t->n_q, 8, 8));
            int32_t qd = t->qdim;
            rd_fbb_add_scalar(b, q, 6, &qd, 4);
            rd_fbb_add_ref(b, tt, 4, q);
        }
        tensors[i] = tt;
    }
    for (int i = 0; i < m->n_o; i++) {
        const tfs_opdef *o = &m->o[i];
        int k = 0;
        while (k < n_codes && !(m->o[code_of[k]].code == o->code && strcmp(m->o[code_of[k]].custom, o->custom) == 0))
            k++;
        if (k == n_codes) {
            code_of[n_codes] = i;
            rd_fbb_ref c = rd_fbb_table(b);
            int8_t dep = o->code < 127 ? (int8_t)o->code : 127;
            int32_t code = o->code, version = 1;
            rd_fbb_add_scalar(b, c, 0, &dep, 1);
            if (o->custom[0])
                rd_fbb_add_ref(b, c, 1, rd_fbb_string(b, o->custom));
            rd_fbb_add_scalar(b, c, 2, &version, 4);
            rd_fbb_add_scalar(b, c, 3, &code, 4);
            codes[n_codes++] = c;
        }
        rd_fbb_ref ot = rd_fbb_table(b);
        uint32_t idx = (uint32_t)k;
        rd_fbb_add_scalar(b, ot, 0, &idx, 4);
        rd_fbb_add_ref(b, ot, 1, ints(b, o->in, o->n_in));
        rd_fbb_add_ref(b, ot, 2, ints(b, o->out, o->n_out));
        if (o->opt_type) {
            rd_fbb_ref opt = rd_fbb_table(b);
            for (int f = 0; f < o->n_fields; f++) {
                int64_t v = o->fields[f].value;
                if (o->fields[f].size == 1) {
                    int8_t v8 = (int8_t)v;
                    rd_fbb_add_scalar(b, opt, o->fields[f].slot, &v8, 1);
                } else {
                    int32_t v32 = (int32_t)v;
                    rd_fbb_add_scalar(b, opt, o->fields[f].slot, &v32, 4);
                }
            }
            uint8_t ty = (uint8_t)o->opt_type;
            rd_fbb_add_scalar(b, ot, 3, &ty, 1);
            rd_fbb_add_ref(b, ot, 4, opt);
        }
        ops[i] = ot;
    }
    rd_fbb_ref sg = rd_fbb_table(b);
    rd_fbb_add_ref(b, sg, 0, rd_fbb_vector_refs(b, tensors, (size_t)m->n_t));
    rd_fbb_add_ref(b, sg, 1, ints(b, m->in, m->n_in));
    rd_fbb_add_ref(b, sg, 2, ints(b, m->out, m->n_out));
    rd_fbb_add_ref(b, sg, 3, rd_fbb_vector_refs(b, ops, (size_t)m->n_o));
    rd_fbb_ref root = rd_fbb_table(b);
    uint32_t version = 3;
    rd_fbb_add_scalar(b, root, 0, &version, 4);
    rd_fbb_add_ref(b, root, 1, rd_fbb_vector_refs(b, codes, (size_t)n_codes));
    rd_fbb_add_ref(b, root, 2, rd_fbb_vector_refs(b, &sg, 1));
    rd_fbb_add_ref(b, root, 4, rd_fbb_vector_refs(b, buffers, (size_t)n_buf));
    rd_status st = rd_fbb_finish(b, root, "TFL3", buf, len, err);
    rd_fbb_destroy(b);
    return st;
}
