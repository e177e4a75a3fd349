/*
 * test_config_keys.c: nothing in -c model_config.yml is silently ignored (issue 12 item 6), per key and
 * command: subgraphs (inputs/outputs) and input_size_list (also in the guide's "- 1,3,16,16" form) apply to
 * accuracy, quantize, eval and run as to convert; dynamic_input runs accuracy and eval once per shape set
 * and is refused with the reason by the others; model_pruning prunes first and prints the summary;
 * custom_string reaches report.json and report.html; keys without effect and unknown keys are warned once;
 * keys set to what is not simulated are refused (exit 3).
 */
#include "cli_capture.h"
#include "demo_model.h"
#include "rd_test.h"
#include "files_in.h"
#include "paths_in.h"
#include "text_check.h"
#include "tensor_dump.h"

#include "rknn_diag/reports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    char *dir;
    char model[4200], prunable[4200], dataset[4200], labels[4200], image[4200], cut_in[4200], cut_ds[4200];
} fixture;

/* A 24-bit BMP of w x h with a smooth pattern (images are resized to any input size). */
static void write_bmp(const char *path, int w, int h, int seed)
{
    int row = (3 * w + 3) & ~3;
    unsigned char hdr[54] = {'B', 'M'};
    uint32_t size = 54u + (uint32_t)(row * h);
    uint32_t fields[] = {size, 0, 54, 40, (uint32_t)w, (uint32_t)h};
    memcpy(hdr + 2, &fields[0], 4);
    memcpy(hdr + 10, &fields[2], 4);
    memcpy(hdr + 14, &fields[3], 4);
    memcpy(hdr + 18, &fields[4], 4);
    memcpy(hdr + 22, &fields[5], 4);
    hdr[26] = 1;  /* planes */
    hdr[28] = 24; /* bits per pixel */
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(hdr, 1, sizeof hdr, f);
    unsigned char line[512] = {0};
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++)
                line[3 * x + c] = (unsigned char)((x * 7 + y * 5 + c * 60 + seed * 37) % 256);
        fwrite(line, 1, (size_t)row, f);
    }
    fclose(f);
}

/* A float32 .npy of the given dims filled with a ramp. */
static void write_npy(const char *path, int rank, const int64_t *dims)
{
    rd_tensor t;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_F32, rank, dims, &err), RD_OK);
    for (int64_t i = 0; i < rd_tensor_numel(&t); i++)
        ((float *)t.data)[i] = (float)(i % 17) / 17.0f;
    CU_ASSERT_EQUAL_FATAL(rd_npy_save(path, &t, &err), RD_OK);
    rd_tensor_fini(&t);
}

/* x [1,3,8,8] -> Conv (4 out, channel 2 all zero) -> Relu -> Conv 1x1 (3) -> GlobalAveragePool -> Flatten: a
   classifier of 3 classes with one prunable channel. */
static void write_prunable(const char *path)
{
    rd_error err;
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 4, (const int64_t[]){1, 3, 8, 8}, NULL);
    float w[4 * 3 * 3 * 3], bias[4] = {0.1f, -0.1f, 0.0f, 0.2f}, w2[3 * 4], b2[3] = {0};
    for (int i = 0; i < 108; i++)
        w[i] = i / 27 == 2 ? 0.0f : (float)((i * 13) % 7 - 3) / 5.0f;
    for (int i = 0; i < 12; i++)
        w2[i] = (float)((i * 5) % 9 - 4) / 3.0f;
    rd_tensor wt = {.dtype = RD_DT_F32, .rank = 4, .dims = {4, 3, 3, 3}, .data = w},
              bt = {.dtype = RD_DT_F32, .rank = 1, .dims = {4}, .data = bias},
              w2t = {.dtype = RD_DT_F32, .rank = 4, .dims = {3, 4, 1, 1}, .data = w2},
              b2t = {.dtype = RD_DT_F32, .rank = 1, .dims = {3}, .data = b2};
    rd_onnx_add_initializer(b, "w", &wt, RD_ONNX_RAW);
    rd_onnx_add_initializer(b, "b", &bt, RD_ONNX_RAW);
    rd_onnx_add_initializer(b, "w2", &w2t, RD_ONNX_RAW);
    rd_onnx_add_initializer(b, "b2", &b2t, RD_ONNX_RAW);
    rd_onnx_node *c =
        rd_onnx_add_node(b, "Conv", "conv", (const char *const[]){"x", "w", "b"}, 3, (const char *const[]){"c"}, 1);
    rd_onnx_attr_ints(c, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"c"}, 1, (const char *const[]){"r"}, 1);
    rd_onnx_add_node(b, "Conv", "conv2", (const char *const[]){"r", "w2", "b2"}, 3, (const char *const[]){"c2"}, 1);
    rd_onnx_add_node(b, "GlobalAveragePool", "gap", (const char *const[]){"c2"}, 1, (const char *const[]){"g"}, 1);
    rd_onnx_add_node(b, "Flatten", "flat", (const char *const[]){"g"}, 1, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 2, (const int64_t[]){1, 3}, NULL);
    CU_ASSERT_EQUAL_FATAL(rd_onnx_builder_save(b, path, &err), RD_OK);
    rd_onnx_builder_destroy(b);
}

static void fx_init(fixture *f, const char *tag)
{
    rd_error err;
    f->dir = rd_test_tmpdir(tag);
    rd_test_paths_in(f->dir, sizeof f->cut_ds, f->model, "demo.onnx", f->prunable, "prunable.onnx", f->dataset,
                     "dataset.txt", f->labels, "labels.txt", f->image, "img0.bmp", f->cut_in, "relu1_nhwc.npy",
                     f->cut_ds, "cut_dataset.txt", NULL);
    CU_ASSERT_EQUAL_FATAL(an_demo_model_write(f->model, &err), RD_OK);
    write_prunable(f->prunable);
    char path[4300];
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/img%d.bmp", f->dir, k);
        write_bmp(path, 32, 32, k);
    }
    rd_test_write_text(f->dataset, "img0.bmp\nimg1.bmp\nimg2.bmp\nimg3.bmp\n");
    rd_test_write_text(f->labels, "0\n1\n2\n3\n");
    /* the cut model's input relu1_out [1,8,32,32] as RKNN reads a 4-D .npy: NHWC */
    write_npy(f->cut_in, 4, (const int64_t[]){1, 32, 32, 8});
    rd_test_write_text(f->cut_ds, "relu1_nhwc.npy\nrelu1_nhwc.npy\n");
}

static void fx_fini(fixture *f)
{
    free(f->dir);
}

/* Writes DIR/NAME.yml: models: with the lines given (already indented under models:). */
static const char *config(const fixture *f, const char *name, const char *body, char *path, size_t len)
{
    snprintf(path, len, "%s/%s.yml", f->dir, name);
    char text[2048];
    snprintf(text, sizeof text,
             "models:\n  name: demo\n  platform: onnx\n  model_file_path: demo.onnx\n  quantize: true\n%s", body);
    rd_test_write_text(path, text);
    return path;
}

/* config() into cfg, and DIR/snap-NAME for the snapshot into snap (both of len bytes). */
static void config_and_snap(const fixture *f, const char *name, const char *body, char *cfg, char *snap, size_t len)
{
    config(f, name, body, cfg, len);
    snprintf(snap, len, "%s/snap-%s", f->dir, name);
}

static size_t count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; p && (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void report(const char *tag, const rd_cli_result *o)
{
    fprintf(stderr, "%s: exit %d\n%s\n%s\n", tag, o->code, o->out, o->errs);
}

#define CHECK_EXIT(o, want, tag)         \
    do {                                 \
        CU_ASSERT_EQUAL((o).code, want); \
        if ((o).code != (want))          \
            report(tag, &(o));           \
    } while (0)

/* accuracy (float16) of the fixture's demo model with config cfg on input, then its report.json into r;
   extra: one more option and its value, or NULL. */
static void accuracy_report(const fixture *f, const char *cfg, const char *input, const char *snap, const char *tag,
                            const char *extra, const char *extra_value, rd_result *r)
{
    rd_cli_result o = rd_test_cli("accuracy", f->model, "-c", cfg, "-i", input, "--dtype", "float16", "-o", snap,
                                  "--quiet", extra, extra_value, NULL);
    CHECK_EXIT(o, 0, tag);
    rd_test_cli_free(&o);
    char path[4400];
    rd_error err;
    snprintf(path, sizeof path, "%s/report.json", snap);
    CU_ASSERT_EQUAL_FATAL(rd_report_json_load(path, r, &err), RD_OK);
}

/* subgraphs.inputs/outputs: accuracy, quantize, run and eval analyse the cut model. */
static void test_subgraphs_per_command(void)
{
    fixture f;
    fx_init(&f, "cfg-subgraphs");
    char cfg[4300], snap[4300], out[4300], err_cfg[4300];
    config_and_snap(&f, "cut", "  subgraphs:\n    inputs: [relu1_out]\n    outputs: [relu6_out]\n", cfg, snap,
                    sizeof cfg);
    rd_result r;
    accuracy_report(&f, cfg, f.cut_in, snap, "accuracy cut", NULL, NULL, &r);
    CU_ASSERT_STRING_EQUAL(r.layers[0].name, "relu1_out");
    CU_ASSERT_STRING_EQUAL(r.layers[r.n_layers - 1].name, "relu6_out");
    for (size_t i = 0; i < r.n_layers; i++)
        CU_ASSERT(strcmp(r.layers[i].name, "conv1_out") != 0 && strcmp(r.layers[i].name, "probs") != 0);
    rd_result_fini(&r);

    snprintf(out, sizeof out, "%s/cut.quantization.cfg", f.dir);
    rd_cli_result o = rd_test_cli("quantize", f.model, "-c", cfg, "--dataset", f.cut_ds, "-o", out, NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "config: cut at subgraphs (1 input, 1 output)"));
    CHECK_EXIT(o, 0, "quantize cut");
    rd_test_cli_free(&o);
    char *q = rd_test_read_in(f.dir, "cut.quantization.cfg", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT_PTR_NOT_NULL(strstr(q, "relu6_out:"));
    CU_ASSERT_PTR_NULL(strstr(q, "probs:"));
    CU_ASSERT_PTR_NULL(strstr(q, "conv1.w"));
    free(q);

    char nchw[4300];
    snprintf(nchw, sizeof nchw, "%s/relu1_nchw.npy", f.dir);
    write_npy(nchw, 4, (const int64_t[]){1, 8, 32, 32});
    char arg[4400];
    snprintf(arg, sizeof arg, "relu1_out=%s", nchw);
    o = rd_test_cli("run", f.model, "-c", cfg, "--input", arg, NULL);
    CHECK_EXIT(o, 0, "run cut");
    CU_ASSERT_PTR_NOT_NULL(strstr(o.out, "relu6_out"));
    CU_ASSERT_PTR_NULL(strstr(o.out, "probs"));
    rd_test_cli_free(&o);

    /* eval on a cut at the logits: still a classifier */
    config(&f, "logits", "  subgraphs:\n    outputs: [logits]\n", cfg, sizeof cfg);
    o = rd_test_cli("eval", f.model, "-c", cfg, "--dataset", f.dataset, "--labels", f.labels, "--calib", "4", NULL);
    CHECK_EXIT(o, 0, "eval cut");
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "config: cut at subgraphs (0 inputs, 1 output)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(o.out, "4 samples"));
    rd_test_cli_free(&o);

    /* a name the model does not have: exit 3, the file and the key named */
    config(&f, "badcut", "  subgraphs:\n    outputs: [no_such_tensor]\n", err_cfg, sizeof err_cfg);
    o = rd_test_cli("accuracy", f.model, "-c", err_cfg, "-i", f.image, "--dtype", "float16", "-o", snap, NULL);
    CHECK_EXIT(o, 3, "accuracy bad cut");
    RD_ASSERT_HAS_TEXTS(o.errs, "badcut.yml:6: subgraphs", "no_such_tensor");
    rd_test_cli_free(&o);
    fx_fini(&f);
}

/* input_size_list (as the guide writes it) fixes the input shape for every command; --input-shape wins. */
static void test_input_size_list_per_command(void)
{
    fixture f;
    fx_init(&f, "cfg-sizes");
    char cfg[4300], snap[4300], out[4300];
    config(&f, "sizes", "  subgraphs:\n    input_size_list:\n      - 1,3,16,16\n", cfg, sizeof cfg);
    snprintf(snap, sizeof snap, "%s/snap-16", f.dir);
    rd_result r;
    accuracy_report(&f, cfg, f.image, snap, "accuracy sizes", NULL, NULL, &r);
    CU_ASSERT_EQUAL(r.layers[0].rank, 4);
    CU_ASSERT_EQUAL(r.layers[0].dims[2], 16);
    CU_ASSERT_EQUAL(r.layers[0].dims[3], 16);
    rd_result_fini(&r);
    /* --input-shape wins, and says so */
    rd_cli_result o = rd_test_cli("accuracy", f.model, "-c", cfg, "-i", f.image, "--dtype", "float16", "-o", snap,
                                  "--quiet", "--input-shape", "image=1,3,24,24", NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "--input-shape image overrides subgraphs.input_size_list"));
    rd_test_cli_free(&o);
    accuracy_report(&f, cfg, f.image, snap, "accuracy sizes overridden", "--input-shape", "image=1,3,24,24", &r);
    CU_ASSERT_EQUAL(r.layers[0].dims[2], 24);
    rd_result_fini(&r);

    snprintf(out, sizeof out, "%s/16.quantization.cfg", f.dir);
    o = rd_test_cli("quantize", f.model, "-c", cfg, "--dataset", f.dataset, "-o", out, NULL);
    CHECK_EXIT(o, 0, "quantize sizes");
    rd_test_cli_free(&o);
    o = rd_test_cli("eval", f.model, "-c", cfg, "--dataset", f.dataset, "--labels", f.labels, NULL);
    CHECK_EXIT(o, 0, "eval sizes");
    rd_test_cli_free(&o);
    /* run takes graph tensors: a 16x16 one fits, the 32x32 one no longer does */
    char npy[4300], arg[4400];
    snprintf(npy, sizeof npy, "%s/x16.npy", f.dir);
    write_npy(npy, 4, (const int64_t[]){1, 3, 16, 16});
    snprintf(arg, sizeof arg, "image=%s", npy);
    o = rd_test_cli("run", f.model, "-c", cfg, "--input", arg, "--outputs-only", NULL);
    CHECK_EXIT(o, 0, "run sizes");
    rd_test_cli_free(&o);
    snprintf(npy, sizeof npy, "%s/x32.npy", f.dir);
    write_npy(npy, 4, (const int64_t[]){1, 3, 32, 32});
    snprintf(arg, sizeof arg, "image=%s", npy);
    o = rd_test_cli("run", f.model, "-c", cfg, "--input", arg, NULL);
    CU_ASSERT_NOT_EQUAL(o.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "1x3x16x16"));
    rd_test_cli_free(&o);
    /* a count that does not fit the model */
    config(&f, "two", "  subgraphs:\n    input_size_list:\n      - 1,3,16,16\n      - 1,3,8,8\n", cfg, sizeof cfg);
    o = rd_test_cli("quantize", f.model, "-c", cfg, "--dataset", f.dataset, "-o", out, NULL);
    CHECK_EXIT(o, 3, "quantize two shapes");
    CU_ASSERT_PTR_NOT_NULL(
        strstr(o.errs, "two.yml:8: subgraphs.input_size_list gives 2 shapes, the model has 1 input"));
    rd_test_cli_free(&o);
    fx_fini(&f);
}

/* dynamic_input: accuracy and eval once per shape set; the others refuse it, saying why. */
static void test_dynamic_input_per_command(void)
{
    fixture f;
    fx_init(&f, "cfg-dynamic");
    char cfg[4300], snap[4300], out[4300], path[4400];
    config_and_snap(&f, "dyn", "  configs:\n    dynamic_input:\n      - [[1,3,32,32]]\n      - ['1,3,16,16']\n", cfg,
                    snap, sizeof cfg);
    rd_cli_result o =
        rd_test_cli("accuracy", f.model, "-c", cfg, "-i", f.image, "--dtype", "float16", "-o", snap, "--quiet", NULL);
    CHECK_EXIT(o, 0, "accuracy dynamic");
    RD_ASSERT_HAS_TEXTS(o.out, "== dynamic_input set 1 of 2: 1x3x32x32", "== dynamic_input set 2 of 2: 1x3x16x16");
    rd_test_cli_free(&o);
    rd_result r;
    rd_error err;
    snprintf(path, sizeof path, "%s/dynamic_1_1x3x16x16/report.json", snap); /* the second set's own snapshot */
    CU_ASSERT_EQUAL_FATAL(rd_report_json_load(path, &r, &err), RD_OK);
    CU_ASSERT_EQUAL(r.layers[0].dims[2], 16);
    bool named = false;
    for (size_t i = 0; i < r.n_config; i++)
        named |= strcmp(r.config[i].key, "dynamic_input") == 0 && strcmp(r.config[i].value, "1x3x16x16") == 0;
    CU_ASSERT(named);
    rd_result_fini(&r);
    snprintf(path, sizeof path, "%s/dynamic_0_1x3x32x32/error_analysis.txt", snap);
    size_t len = 0;
    char *txt = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL(txt);
    free(txt);

    o = rd_test_cli("eval", f.model, "-c", cfg, "--dataset", f.dataset, "--labels", f.labels, "--json", NULL);
    CHECK_EXIT(o, 0, "eval dynamic");
    CU_ASSERT_EQUAL(o.out[0], '[');
    CU_ASSERT_EQUAL(count(o.out, "\"dynamic_input\":"), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(o.out, "\"1x3x16x16\""));
    rd_test_cli_free(&o);

    /* refused with the reason */
    snprintf(out, sizeof out, "%s/dyn.quantization.cfg", f.dir);
    o = rd_test_cli("quantize", f.model, "-c", cfg, "--dataset", f.dataset, "-o", out, NULL);
    CHECK_EXIT(o, 3, "quantize dynamic");
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "dyn.yml:8: dynamic_input (2 shape sets) is not supported by quantize: a "
                                          ".quantization.cfg holds one set of parameters"));
    rd_test_cli_free(&o);
    snprintf(out, sizeof out, "%s/dyn.qdq.onnx", f.dir);
    o = rd_test_cli("export-qdq", f.model, "-c", cfg, "--dataset", f.dataset, "-o", out, NULL);
    CHECK_EXIT(o, 3, "export-qdq dynamic");
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "not supported by export-qdq"));
    rd_test_cli_free(&o);
    o = rd_test_cli("accuracy", f.model, "-c", cfg, "-i", f.image, "--target", "rk3566", "--runtime-dumps", f.dir, "-o",
                    snap, NULL);
    CHECK_EXIT(o, 3, "accuracy dynamic board");
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "the board runs the application on one input shape"));
    rd_test_cli_free(&o);
    o = rd_test_cli("accuracy", f.model, "-c", cfg, "-i", f.image, "--input-shape", "image=1,3,8,8", "-o", snap, NULL);
    CHECK_EXIT(o, 2, "accuracy dynamic with --input-shape");
    rd_test_cli_free(&o);
    fx_fini(&f);
}

/* model_pruning: pruned first, the summary printed, in every command; nothing to prune is said too. */
static void test_model_pruning_per_command(void)
{
    fixture f;
    fx_init(&f, "cfg-prune");
    char cfg[4300], snap[4300], out[4300], ds[4300], npy[4300], arg[4400];
    config_and_snap(&f, "prune", "  configs:\n    model_pruning: true\n", cfg, snap, sizeof cfg);
    snprintf(ds, sizeof ds, "%s/prune_ds.txt", f.dir);
    rd_test_write_text(ds, "img0.bmp\nimg1.bmp\nimg2.bmp\n");
    const char *const expect = "config: model_pruning (";
    rd_cli_result o =
        rd_test_cli("accuracy", f.prunable, "-c", cfg, "-i", f.image, "--dataset", ds, "-o", snap, "--quiet", NULL);
    CHECK_EXIT(o, 0, "accuracy prune");
    RD_ASSERT_HAS_TEXTS(o.errs, expect, "1 all-zero channel pruned", "Weight: -");
    rd_test_cli_free(&o);
    snprintf(out, sizeof out, "%s/prune.quantization.cfg", f.dir);
    o = rd_test_cli("quantize", f.prunable, "-c", cfg, "--dataset", ds, "-o", out, NULL);
    CHECK_EXIT(o, 0, "quantize prune");
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "1 all-zero channel pruned"));
    rd_test_cli_free(&o);
    rd_qcfg qc;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_qcfg_load(out, &qc, &err), RD_OK);
    size_t w_channels = 0;
    for (size_t i = 0; i < qc.n_params; i++)
        if (strcmp(qc.params[i].name, "w") == 0)
            w_channels = qc.params[i].n;
    CU_ASSERT_EQUAL(w_channels, 3); /* the pruned conv: 3 output channels quantized, not 4 */
    rd_qcfg_fini(&qc);
    rd_test_write_text(f.labels, "0\n1\n2\n");
    o = rd_test_cli("eval", f.prunable, "-c", cfg, "--dataset", ds, "--labels", f.labels, NULL);
    CHECK_EXIT(o, 0, "eval prune");
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "1 all-zero channel pruned"));
    rd_test_cli_free(&o);
    snprintf(npy, sizeof npy, "%s/x8.npy", f.dir);
    write_npy(npy, 4, (const int64_t[]){1, 3, 8, 8});
    snprintf(arg, sizeof arg, "x=%s", npy);
    o = rd_test_cli("run", f.prunable, "-c", cfg, "--input", arg, NULL);
    CHECK_EXIT(o, 0, "run prune");
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "1 all-zero channel pruned"));
    CU_ASSERT_PTR_NOT_NULL(strstr(o.out, "1x3x8x8")); /* the pruned conv's output: 3 channels */
    rd_test_cli_free(&o);
    /* nothing to prune: said */
    o = rd_test_cli("accuracy", f.model, "-c", cfg, "-i", f.image, "--dtype", "float16", "-o", snap, "--quiet", NULL);
    CHECK_EXIT(o, 0, "accuracy nothing to prune");
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "nothing to prune"));
    rd_test_cli_free(&o);
    fx_fini(&f);
}

/* custom_string reaches report.json and report.html; RKNN's error_analysis.txt keeps its fixed header. */
static void test_custom_string_in_reports(void)
{
    fixture f;
    fx_init(&f, "cfg-custom");
    char cfg[4300], snap[4300];
    config_and_snap(&f, "custom", "  configs:\n    custom_string: \"built by CI <42>\"\n", cfg, snap, sizeof cfg);
    rd_result r;
    accuracy_report(&f, cfg, f.image, snap, "accuracy custom_string", NULL, NULL, &r);
    CU_ASSERT_STRING_EQUAL(r.custom_string, "built by CI <42>");
    rd_result_fini(&r);
    char *json = rd_test_read_in(snap, "report.json", NULL), *html = rd_test_read_in(snap, "report.html", NULL),
         *txt = rd_test_read_in(snap, "error_analysis.txt", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    CU_ASSERT_PTR_NOT_NULL_FATAL(txt);
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"custom_string\":\t\"built by CI <42>\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(html, "built by CI &lt;42&gt;"));
    CU_ASSERT_PTR_NULL(strstr(txt, "built by CI"));
    free(json);
    free(html);
    free(txt);
    fx_fini(&f);
}

/* Keys without effect and unknown keys: warned once, the analysis runs; keys set to what is not simulated:
   refused, exit 3, saying why. */
static void test_noted_and_refused_keys(void)
{
    fixture f;
    fx_init(&f, "cfg-notes");
    char cfg[4300], snap[4300];
    config_and_snap(&f, "notes", "  configs:\n    remove_weight: true\n    mean_value: [1, 2, 3]\n", cfg, snap,
                    sizeof cfg);
    rd_cli_result o =
        rd_test_cli("accuracy", f.model, "-c", cfg, "-i", f.image, "--dtype", "float16", "-o", snap, "--quiet", NULL);
    CHECK_EXIT(o, 0, "accuracy notes");
    CU_ASSERT_EQUAL(count(o.errs, "warning: "), 2);
    CU_ASSERT_EQUAL(count(o.errs, "notes.yml:7: configs.remove_weight: accepted, no effect on the analysis"), 1);
    CU_ASSERT_EQUAL(count(o.errs, "notes.yml:8: unknown key 'mean_value' in configs: ignored; did you mean "
                                  "'mean_values'?"),
                    1);
    rd_test_cli_free(&o);
    config(&f, "refused", "  configs:\n    op_target: {conv1: cpu}\n", cfg, sizeof cfg);
    o = rd_test_cli("accuracy", f.model, "-c", cfg, "-i", f.image, "--dtype", "float16", "-o", snap, NULL);
    CHECK_EXIT(o, 3, "accuracy refused key");
    CU_ASSERT_PTR_NOT_NULL(strstr(o.errs, "refused.yml:7: configs.op_target: placing operators on the CPU or the NPU "
                                          "is not simulated"));
    rd_test_cli_free(&o);
    char out[4300];
    snprintf(out, sizeof out, "%s/q.cfg", f.dir);
    o = rd_test_cli("quantize", f.model, "-c", cfg, "--dataset", f.dataset, "-o", out, NULL);
    CHECK_EXIT(o, 3, "quantize refused key");
    rd_test_cli_free(&o);
    fx_fini(&f);
}

RD_TEST_REGISTER(register_config_keys)
{
    RD_SUITE("config_keys", {"subgraphs per command", test_subgraphs_per_command},
             {"input_size_list per command", test_input_size_list_per_command},
             {"dynamic_input per command", test_dynamic_input_per_command},
             {"model_pruning per command", test_model_pruning_per_command},
             {"custom_string in the reports", test_custom_string_in_reports},
             {"keys noted, unknown, refused", test_noted_and_refused_keys});
}
