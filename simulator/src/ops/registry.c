/*
 * registry.c: the operator table, built from the X-macro list ops.def (sorted by name) and searched with
 * bsearch. Adding an operator: one RD_OP line in ops.def and the op_*.c file defining its sim_op_def, plus
 * one integer kernel file per quantized precision it has (docs/internals/ops.md).
 */
#include "../internal.h"

#define RD_OP(name, sym) extern const sim_op_def sym;
#include "ops.def"
#undef RD_OP

typedef struct op_entry {
    const char *name; /* the ops.def line's name: the search key (the registry test checks it is
                         the definition's own name) */
    const sim_op_def *def;
} op_entry;

#define RD_OP(name, sym) {name, &sym},
static const op_entry table[] = {
#include "ops.def"
};
#undef RD_OP

#define N_OPS (sizeof table / sizeof table[0])

/* Names are unique across domains (the test checks it), so the key is the name; the domain is checked after. */
static int cmp_entry(const void *key, const void *elem)
{
    return strcmp(key, ((const op_entry *)elem)->name);
}

const sim_op_def *sim_op_find(const char *domain, const char *op_type)
{
    if (!op_type)
        return NULL;
    if (!domain || strcmp(domain, "ai.onnx") == 0)
        domain = "";
    const op_entry *e = bsearch(op_type, table, N_OPS, sizeof table[0], cmp_entry);
    return e && strcmp(e->def->domain ? e->def->domain : "", domain) == 0 ? e->def : NULL;
}

const sim_op_def *sim_op_table_entry(size_t i, const char **key)
{
    if (i >= N_OPS)
        return NULL;
    if (key)
        *key = table[i].name;
    return table[i].def;
}

static void info_of(const sim_op_def *d, rd_op_info *out)
{
    memset(out, 0, sizeof *out);
    out->name = d->name;
    out->domain = d->domain ? d->domain : "";
    out->since = d->since;
    out->until = d->until;
    out->fp16_kernel = d->eval[SIM_PREC_F16] != NULL;
    out->int8_kernel = d->eval_i8 != NULL;
    out->int16_kernel = d->eval_i16 != NULL;
    out->has_macs = d->macs != NULL;
    out->weight_input = d->weight_in;
    out->weight = d->weight;
    out->qrule = d->qrule;
    out->prune = d->prune;
    out->npu_op = d->npu_op ? d->npu_op : d->name;
}

size_t rd_op_count(void)
{
    return N_OPS;
}

void rd_op_get(size_t i, rd_op_info *out)
{
    if (i >= N_OPS) {
        memset(out, 0, sizeof *out);
        return;
    }
    info_of(table[i].def, out);
}

bool rd_op_find(const char *domain, const char *op_type, rd_op_info *out)
{
    const sim_op_def *d = sim_op_find(domain, op_type);
    if (!d) {
        memset(out, 0, sizeof *out);
        return false;
    }
    info_of(d, out);
    return true;
}

bool rd_op_supported(const char *domain, const char *op_type)
{
    return sim_op_find(domain, op_type) != NULL;
}
