/*
 * registry.c: the operator table, built from the X-macro lists ops_*.def (one per op family).
 * Adding an operator: one RD_OP(symbol) line in its family's .def and one op_*.c defining the symbol.
 */
#include "../internal.h"

#define RD_OP(sym) extern const sim_op_def sym;
#include "ops_nn.def"
#include "ops_elementwise.def"
#include "ops_tensor.def"
#include "ops_quant.def"
#undef RD_OP

#define RD_OP(sym) &sym,
static const sim_op_def *const all_ops[] = {
#include "ops_nn.def"
#include "ops_elementwise.def"
#include "ops_tensor.def"
#include "ops_quant.def"
    NULL};
#undef RD_OP


const sim_op_def *sim_op_find(const char *domain, const char *op_type)
{
    if (!domain || strcmp(domain, "ai.onnx") == 0)
        domain = "";
    for (size_t i = 0; all_ops[i]; i++)
        if (strcmp(all_ops[i]->name, op_type) == 0 && strcmp(all_ops[i]->domain ? all_ops[i]->domain : "", domain) == 0)
            return all_ops[i];
    return NULL;
}

size_t rd_op_count(void)
{
    return sizeof all_ops / sizeof all_ops[0] - 1; /* the table ends with NULL */
}

void rd_op_get(size_t i, rd_op_info *out)
{
    memset(out, 0, sizeof *out);
    if (i >= rd_op_count())
        return;
    out->name = all_ops[i]->name;
    out->domain = all_ops[i]->domain ? all_ops[i]->domain : "";
    out->since = all_ops[i]->since;
}

bool rd_op_supported(const char *domain, const char *op_type)
{
    return sim_op_find(domain, op_type) != NULL;
}
