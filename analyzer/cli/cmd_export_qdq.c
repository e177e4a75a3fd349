/*
 * cmd_export_qdq.c: `rknn-diag export-qdq MODEL [--cfg FILE | quant options] -o OUT.onnx`: the optimised
 * graph with QuantizeLinear/DequantizeLinear pairs carrying the simulation's INT8 parameters, for any
 * ONNX runtime (docs/numerics.md, "QDQ export").
 */
#include "term_text.h"
#include "cmd_spec.h"
#include "config_model.h"
#include "tensor_dump.h"

#include <stdlib.h>
#include <string.h>

enum { OPT_INTEGER = 1 };

static const an_optspec export_opts[] = {
    {OPT_INTEGER, "integer", 0, NULL,
     "write int8 Conv/Gemm/MatMul as ConvInteger/MatMulInteger (exact in any runtime)"},
};

typedef struct export_args {
    bool integer;
} export_args;

static int take_option(an_cmd_ctx *ctx, void *user, int id, const char *v)
{
    ((export_args *)user)->integer = true; /* --integer, the only one */
    return AN_GO;
}

static int export_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    const export_args *a = args;
    rd_error err = {0};
    rd_model *m = NULL;
    rd_sim *s = NULL;
    void *buf = NULL;
    size_t len = 0;
    int rc;
    static const rd_qdtype int8[] = {RD_QDT_W8A8};
    rd_status st =
        an_cmd_quant_sim(ctx, cmd,
                         "an ONNX model written with fixed shapes "
                         "analyses one input shape: give it with --input-shape (or subgraphs.input_size_list)",
                         "int8", int8, 1, &m, &s, &err);
    rd_warn_sink notes = {.fn = an_note_print, .user = ctx->errs};
    if (st == RD_OK)
        st = rd_sim_export_qdq_form(s, a->integer ? RD_QDQ_FORM_INTEGER : RD_QDQ_FORM_QDQ, &buf, &len, &notes, &err);
    if (st == RD_OK)
        st = rd_file_write_atomic(cmd->output, buf, len, NULL, &err);
    if (st != RD_OK) {
        rc = an_fail(ctx, &err);
        goto out;
    }
    fprintf(ctx->errs, "wrote %s (%zu bytes)\n", cmd->output, len);
    rc = AN_EXIT_OK;
out:
    free(buf);
    rd_sim_destroy(s);
    rd_model_destroy(m);
    return rc;
}

const an_cmd_spec an_cmd_export_qdq = {
    .output = {0, "output", 'o', "FILE", "the .onnx model to write (required)"},
    .output_missing = "missing -o OUT.onnx",
    .usage = "rknn-diag export-qdq MODEL.onnx [--cfg FILE | --dataset FILE ...] [--integer] -o OUT.onnx",
    .about = "Writes the model after the compiler passes with QuantizeLinear/DequantizeLinear pairs\n"
             "carrying our INT8 parameters: after every materialised int8 tensor and graph input,\n"
             "int8 weights through DequantizeLinear (per channel needs opset 13: the opset is raised\n"
             "when no operator of the model changes meaning, otherwise the export is refused), Conv\n"
             "biases as int32, float16 tensors of a hybrid --cfg through Cast. Parameters come from\n"
             "--cfg or from calibration on --dataset.\n\n"
             "A runtime computes that Conv/Gemm/MatMul in float on the dequantized values, which\n"
             "can flip a code where we accumulate in int32. --integer writes them as\n"
             "ConvInteger/MatMulInteger on uint8 codes (opset 10), the int32 bias added, then\n"
             "our rescaling in double (Cast, Mul, Cast), so the runtime's result is ours bit for\n"
             "bit. Layers with no integer ONNX operator (ConvTranspose, Gemm with transA) stay\n"
             "in QDQ form, named in a note. docs/numerics.md has both forms against ONNX Runtime.",
    AN_SPEC_OPTS(export_opts),
    .groups = AN_OG_SHAPE | AN_OG_QUANT,
    .model = "MODEL.onnx",
    AN_SPEC_ARGS(export_args, NULL),
    .take = take_option,
    .main = export_main,
};
