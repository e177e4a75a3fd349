/*
 * cmd_quantize.c: `rknn-diag quantize MODEL [quant options] -o OUT.quantization.cfg [--rknn-cfg STEP1]`:
 * calibrates the INT8 simulation and writes its parameters in RKNN's .quantization.cfg layout, under
 * ONNX names, or under the toolkit's names where a step-1 cfg of the same model matches our tensors.
 */
#include "cmd_spec.h"
#include "qcfg_build.h"
#include "quant_setup.h"
#include "config_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_RKNN_CFG = 1 };

static const an_optspec quantize_opts[] = {
    {OPT_RKNN_CFG, "rknn-cfg", 0, "FILE",
     "a cfg RKNN-Toolkit2's hybrid_quantization_step1 wrote for this model: "
     "write under its tensor names"},
};

typedef struct quantize_args {
    const char *rknn_cfg;
} quantize_args;

static const an_optset quantize_sets[] = {AN_SET(OPT_RKNN_CFG, AN_SET_STR, quantize_args, rknn_cfg)};

static int quantize_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    const quantize_args *a = args;
    rd_error err = {0};
    rd_model *m = NULL;
    rd_sim *s = NULL;
    rd_qcfg ours, merged;
    rd_qcfg_init(&ours);
    rd_qcfg_init(&merged);
    int rc;
    static const rd_qdtype written[] = {RD_QDT_W8A8, RD_QDT_W16A16I, RD_QDT_W8A16, RD_QDT_W16A16I_DFP};
    rd_status st = an_cmd_quant_sim(ctx, cmd,
                                    "a .quantization.cfg holds one set of parameters per tensor for every "
                                    "shape, and how RKNN calibrates a dynamic model is not documented: "
                                    "quantize once per shape with --input-shape (or input_size_list)",
                                    "int8/int16", written, sizeof written / sizeof written[0], &m, &s, &err);
    if (st == RD_OK)
        st = an_quant_built_outputs(&cmd->q, s, NULL, ctx->errs, NULL, &err);
    if (st == RD_OK)
        st = an_qcfg_collect(s, &ours, ctx->errs, &err);
    const rd_qcfg *result = &ours;
    if (st == RD_OK && a->rknn_cfg) {
        st = an_qcfg_merge_rknn(s, &ours, a->rknn_cfg, &merged, ctx->errs, &err);
        result = &merged;
    }
    if (st == RD_OK)
        st = rd_qcfg_save(cmd->output, result, &err);
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    if (!a->rknn_cfg)
        fprintf(ctx->errs, "note: tensors are named as in the ONNX model after the compiler passes; RKNN-Toolkit2 may "
                           "name them differently (Conv__350:0, ..._before_conv): give --rknn-cfg STEP1.cfg to write "
                           "under the toolkit's names\n");
    fprintf(ctx->errs, "wrote %s\n", cmd->output);
    rc = AN_EXIT_OK;
out:
    rd_qcfg_fini(&ours);
    rd_qcfg_fini(&merged);
    rd_sim_destroy(s);
    rd_model_destroy(m);
    return rc;
}

const an_cmd_spec an_cmd_quantize = {
    .output = {0, "output", 'o', "FILE", "the .quantization.cfg to write (required)"},
    .output_missing = "missing -o OUT.quantization.cfg",
    .usage = "rknn-diag quantize MODEL.onnx --dataset FILE [quant options] -o OUT.quantization.cfg "
             "[--rknn-cfg STEP1.cfg]",
    .about = "Calibrates the INT8 (w8a8) or INT16 (--dtype w16a16i, w8a16, w16a16i_dfp) simulation\n"
             "and writes its parameters in RKNN's hybrid quantization file layout: every materialised\n"
             "activation (scale, zero point, range; dtype int8 or int16) and the weights of Conv,\n"
             "ConvTranspose, Gemm and MatMul (symmetric, per channel or per tensor), plus the float16\n"
             "and int16 tensors of a hybrid --cfg in custom_quantize_layers. Names are\n"
             "ONNX tensor names of the optimised graph unless --rknn-cfg gives the toolkit's. The file\n"
             "can be read back with --cfg by run, accuracy, eval and export-qdq.",
    AN_SPEC_OPTS(quantize_opts),
    AN_SPEC_SETS(quantize_sets),
    .groups = AN_OG_SHAPE | AN_OG_QUANT | AN_OG_BUILT,
    .model = "MODEL.onnx",
    AN_SPEC_ARGS(quantize_args, NULL),
    .main = quantize_main,
};
