/*
 * test_registry.c: the operator table (simulator/src/ops/ops.def, registry.c): sorted and unique, every
 * ops.def key the definition's own name, lookups by bsearch agreeing with a linear scan, and every
 * definition's traits consistent with one another (docs/internals/ops.md lists the rules checked here).
 */
#include "internal.h"
#include "rd_test.h"

#include <stdio.h>
#include <string.h>

/* Reports a failed rule with the operator's name, then fails the assertion. */
#define RULE(d, cond, what)                                 \
    do {                                                    \
        if (!(cond))                                        \
            fprintf(stderr, "\n%s: %s\n", (d)->name, what); \
        CU_ASSERT(cond);                                    \
    } while (0)

static void test_sorted_unique(void)
{
    size_t n = rd_op_count();
    CU_ASSERT_FATAL(n > 100);
    const char *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *key = NULL;
        const sim_op_def *d = sim_op_table_entry(i, &key);
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        CU_ASSERT_PTR_NOT_NULL_FATAL(key);
        RULE(d, strcmp(key, d->name) == 0, "the ops.def line names another operator");
        RULE(d, d->domain && (d->domain[0] == '\0' || strcmp(d->domain, "tflite") == 0),
             "not in the default domain or \"tflite\" (the bsearch key is the name)");
        if (prev) {
            if (strcmp(prev, key) >= 0)
                fprintf(stderr, "\nops.def: '%s' comes after '%s' (sorted, unique)\n", key, prev);
            CU_ASSERT(strcmp(prev, key) < 0);
        }
        prev = key;
    }
    CU_ASSERT_PTR_NULL(sim_op_table_entry(n, NULL));
}

/* bsearch finds every entry, the same one a linear scan finds; unknown names and domains are not found. */
static void test_lookup(void)
{
    size_t n = rd_op_count();
    for (size_t i = 0; i < n; i++) {
        const sim_op_def *d = sim_op_table_entry(i, NULL);
        bool onnx = d->domain[0] == '\0';
        CU_ASSERT_PTR_EQUAL(sim_op_find(d->domain, d->name), d);
        CU_ASSERT_PTR_EQUAL(sim_op_find("ai.onnx", d->name), onnx ? d : NULL);
        CU_ASSERT_PTR_EQUAL(sim_op_find(NULL, d->name), onnx ? d : NULL);
        CU_ASSERT_PTR_EQUAL(sim_op_find("tflite", d->name), onnx ? NULL : d);
        CU_ASSERT_PTR_NULL(sim_op_find("com.microsoft", d->name));
        rd_op_info a, b;
        rd_op_get(i, &a);
        CU_ASSERT(rd_op_find(d->domain, d->name, &b));
        CU_ASSERT_STRING_EQUAL(a.name, d->name);
        CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof a), 0);
    }
    static const char *const absent[] = {"", "conv", "Conv2D", "Aaa", "Zzz", "Shrink", "Scan", "ConvExSwish"};
    for (size_t k = 0; k < sizeof absent / sizeof absent[0]; k++) {
        CU_ASSERT_PTR_NULL(sim_op_find("", absent[k]));
        rd_op_info info;
        CU_ASSERT_FALSE(rd_op_find("", absent[k], &info));
        CU_ASSERT_PTR_NULL(info.name);
    }
    CU_ASSERT_PTR_NULL(sim_op_find("", NULL));
    rd_op_info out;
    rd_op_get(n, &out);
    CU_ASSERT_PTR_NULL(out.name);
    /* the facts the tools rely on, spot-checked */
    CU_ASSERT(rd_op_find("", "Gemm", &out) && out.int8_kernel && out.int16_kernel && out.weight_input == 1 &&
              out.weight == RD_OP_WEIGHT_GEMM && strcmp(out.npu_op, "Conv") == 0);
    CU_ASSERT(rd_op_find("", "Clip", &out) && out.prune == RD_OP_PRUNE_CHANNELWISE_BOUNDED);
    CU_ASSERT(rd_op_find("", "MaxPool", &out) && out.qrule == RD_OP_Q_PASS && !out.int8_kernel);
    CU_ASSERT(rd_op_find("", "Concat", &out) && out.qrule == RD_OP_Q_UNION && out.prune == RD_OP_PRUNE_CONCAT);
    CU_ASSERT(rd_op_find("", "Upsample", &out) && out.until == 10);
    CU_ASSERT(rd_op_find("", "Relu", &out) && out.until == 0 && strcmp(out.npu_op, "Relu") == 0);
}

/* Arity, kernels and opset range. */
static void check_basics(const sim_op_def *d)
{
    RULE(d, d->since >= 1, "since must be an opset version");
    RULE(d, d->until == 0 || d->until >= d->since, "until before since");
    RULE(d, d->min_in >= 0 && d->min_in <= d->max_in, "min_in > max_in");
    RULE(d, d->min_out >= 1 && d->min_out <= d->max_out, "outputs: 1 <= min_out <= max_out");
    RULE(d, d->infer && d->eval[SIM_PREC_F32], "no shape inference or float32 kernel");
    RULE(d, d->params_size == 0 || d->parse, "params but no parse");
}

/* Weights and integer kernels: a weight rule exactly on ops with a weight input, which have integer kernels
   at both widths; integer kernels without a weight only on an op computing a lowered NPU form. */
static void check_quant(const sim_op_def *d)
{
    const bool weighted = d->weight != RD_OP_WEIGHT_NONE;
    RULE(d, weighted == (d->weight_in > 0), "a weight rule without a weight input, or the reverse");
    RULE(d, !weighted || d->weight_in < d->min_in, "the weight is not a required input");
    RULE(d, !weighted || (d->eval_i8 && d->eval_i16), "a weight rule without int8 and int16 kernels");
    RULE(d, weighted || (!d->eval_i8 && !d->eval_i16) || (d->flags & SIM_OP_LOWERED_KERNELS),
         "integer kernels without a weight input (only for a lowered NPU form)");
    RULE(d, !(d->flags & SIM_OP_LOWERED_KERNELS) || (d->npu_op && (d->eval[SIM_PREC_F16] || d->eval_i8)),
         "lowered kernels without the NPU op they compute, or without a kernel");
    RULE(d, d->qrule != RD_OP_Q_NONE || (!d->eval_i8 && !d->eval_i16 && !d->fuse && !weighted),
         "no float output, yet integer kernels or a fusion role");
    RULE(d, d->qrule != RD_OP_Q_FLOAT16 || !d->eval_i8, "computed in float16, yet an int8 kernel");
    RULE(d, d->qrule != RD_OP_Q_PASS || d->min_in >= 1, "passes input 0's parameters but has no input");
    RULE(d, d->qrule != RD_OP_Q_UNION || d->max_in > 1, "a union of input ranges with one input");
}

static void check_prune(const sim_op_def *d)
{
    RULE(d, d->prune != RD_OP_PRUNE_WEIGHTS || d->weight == RD_OP_WEIGHT_CONV || d->weight == RD_OP_WEIGHT_GEMM,
         "pruned by its weights, but they are neither a Conv's nor a Gemm's");
    RULE(d, d->prune != RD_OP_PRUNE_CHANNELWISE || d->min_in >= 1, "channelwise without an input");
    RULE(d, d->prune != RD_OP_PRUNE_CHANNELWISE_BOUNDED || d->max_in >= 3 || d->min_in == 1,
         "bounded channelwise: bounds are attributes or inputs 1 and 2");
    RULE(d, d->prune != RD_OP_PRUNE_ADD || (d->min_in == 2 && d->max_in == 2), "pruned as an Add without two inputs");
    RULE(d, d->prune != RD_OP_PRUNE_CONCAT || d->max_in > 1, "concatenation of one input");
    RULE(d, d->prune != RD_OP_PRUNE_AFFINE || d->min_in == 5, "an affine op without its four parameters");
}

static void check_fuse(const sim_op_def *d)
{
    const unsigned acts = SIM_FUSE_ACTS | SIM_FUSE_SWISH_GATE;
    RULE(d, !(d->fuse & (SIM_FUSE_CONV | SIM_FUSE_DECONV)) || d->weight != RD_OP_WEIGHT_NONE,
         "a conv head without a weight");
    RULE(d, !(d->fuse & SIM_FUSE_DECONV) || d->weight == RD_OP_WEIGHT_CONV_T, "a ConvTranspose head of another layout");
    RULE(d, !(d->fuse & (SIM_FUSE_ADD | SIM_FUSE_SWISH_MUL)) || (d->min_in == 2 && d->max_in == 2),
         "an Add or Mul fusion role without two inputs");
    RULE(d, !(d->fuse & acts) || (d->min_in == 1 && d->max_out == 1), "an activation role: one data input, one output");
    RULE(d, !(d->fuse & acts) || d->weight == RD_OP_WEIGHT_NONE, "an activation with a weight");
    RULE(d, !(d->fuse & SIM_FUSE_HEADS) || !(d->fuse & acts), "both a group head and an activation");
    RULE(d, !(d->npu_op && d->npu_op_of), "both a fixed and a computed NPU op");
    RULE(d, !d->npu_op || strcmp(d->npu_op, d->name) != 0, "an NPU op equal to its own name (leave it NULL)");
}

static void check_history(const sim_op_def *d)
{
    RULE(d, d->same_from == 0 || d->same_from >= d->since, "same_from before since");
    RULE(d, !d->same_on_last_axis || d->same_from > 0, "same_on_last_axis without same_from");
    RULE(d, (d->attrs_to_inputs_at > 0) == (d->attrs_to_inputs[0] != NULL), "attrs_to_inputs without their opset");
    RULE(d, d->attrs_to_inputs_at == 0 || d->attrs_to_inputs_at > d->since, "attributes became inputs before since");
}

static void test_traits(void)
{
    for (size_t i = 0; i < rd_op_count(); i++) {
        const sim_op_def *d = sim_op_table_entry(i, NULL);
        check_basics(d);
        check_quant(d);
        check_prune(d);
        check_fuse(d);
        check_history(d);
    }
}

RD_TEST_REGISTER(register_registry)
{
    RD_SUITE("registry", {"sorted, unique, keys are names", test_sorted_unique},
             {"bsearch lookups, rd_op_find, rd_op_get", test_lookup}, {"every trait consistent", test_traits});
}
