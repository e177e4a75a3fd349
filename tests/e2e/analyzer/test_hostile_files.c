/*
 * test_hostile_files.c: hostile files and folders around the command line (issue 16, items 2, 3, 7, 11, 14):
 * a FIFO given as any input is refused at once with exit 3 and what it is; planted links in an output
 * folder are never followed; paths read from data (index.json, map_name_to_file.txt, external data) stay
 * inside their folder; tensors whose names clash as file names get distinct, listed snapshot files.
 */
#include "cli_capture.h"
#include "cli_expect.h"
#include "find_named.h"
#include "rd_test.h"
#include "free_all.h"
#include "text_check.h"
#include "rknn_diag/reports.h"
#include "rknn_diag/simulator.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROMPT_SECONDS 20.0 /* generous for a sanitized build on a busy machine; a FIFO wait is forever */

/* ---- FIFOs ------------------------------------------------------------------------------------- */

/* Runs rknn-diag with argv (NULL-terminated, at most 16) and expects a prompt exit 3 naming fifo as one. */
static void expect_fifo_refused(const char *what, const char *fifo, const char *const *argv)
{
    alarm(120); /* a regression that waits on the FIFO ends the binary instead of hanging CTest */
    double t0 = rd_test_seconds();
    const char *a[17] = {0};
    for (int i = 0; i < 16 && argv[i]; i++)
        a[i] = argv[i];
    rd_cli_result r = rd_test_cli(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12],
                                  a[13], a[14], a[15], NULL);
    double took = rd_test_seconds() - t0;
    alarm(0);
    bool ok = r.code == 3 && strstr(r.errs, fifo) && strstr(r.errs, "FIFO") && took < PROMPT_SECONDS;
    if (!ok)
        fprintf(stderr, "\n  %s: exit %d after %.1fs: %s\n", what, r.code, took, r.errs);
    CU_ASSERT_TRUE(ok);
    rd_test_cli_free(&r);
}

static void test_fifo_inputs_cli(void)
{
    char *dir = rd_test_demo_dir("hostile-fifo");
    char *model = rd_test_join(dir, "demo.onnx"), *image = rd_test_join(dir, "image.npy"),
         *dataset = rd_test_join(dir, "dataset.txt");
    char *fifo = rd_test_join(dir, "pipe.in"), *snap = rd_test_join(dir, "snap"), *out = rd_test_join(dir, "out.cfg");
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    char input_opt[4400];
    snprintf(input_opt, sizeof input_opt, "image=%s", fifo);
    struct {
        const char *what;
        const char *argv[16];
    } cases[] = {
        {"model", {"inspect", fifo}},
        {".npy graph input", {"run", model, "--input", input_opt}},
        {"RKNN input (image or .npy)", {"accuracy", model, "--inputs", fifo, "--dtype", "float16", "-o", snap}},
        {"dataset list", {"quantize", model, "--dataset", fifo, "--input-layout", "nchw", "-o", out}},
        {"model config (YAML)", {"accuracy", "-c", fifo, "-o", snap}},
        {".quantization.cfg",
         {"accuracy", model, "--inputs", image, "--input-layout", "nchw", "--cfg", fifo, "-o", snap}},
        {"labels", {"eval", model, "--dataset", dataset, "--input-layout", "nchw", "--labels", fifo}},
        {"IDX images", {"eval", model, "--idx-images", fifo, "--idx-labels", fifo}},
        {"error_analysis.txt", {"compare", fifo, fifo}},
        {"latency table (perf log)",
         {"hybrid", "search", model, "--dataset", dataset, "--input-layout", "nchw", "--target-cos", "0.9",
          "--latency-table", fifo, "-o", out}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_fifo_refused(cases[i].what, fifo, cases[i].argv);

    /* files found inside folders: error_analysis.txt of report --from-rknn, index.json and report.json of compare */
    char *rk = rd_test_join(dir, "rknn"), *rk_txt = rd_test_join(dir, "rknn/error_analysis.txt");
    mkdir(rk, 0755);
    CU_ASSERT_EQUAL(mkfifo(rk_txt, 0600), 0);
    expect_fifo_refused("error_analysis.txt in a snapshot", rk_txt,
                        (const char *const[]){"report", "--from-rknn", rk, NULL});
    char *da = rd_test_join(dir, "dumps_a"), *index = rd_test_join(dir, "dumps_a/index.json");
    mkdir(da, 0755);
    CU_ASSERT_EQUAL(mkfifo(index, 0600), 0);
    expect_fifo_refused("index.json", index, (const char *const[]){"compare", da, da, NULL});
    char *json = rd_test_join(dir, "report.json");
    CU_ASSERT_EQUAL(mkfifo(json, 0600), 0);
    expect_fifo_refused("report.json", json, (const char *const[]){"compare", json, json, NULL});
    RD_FREE_ALL(json, index, da, rk_txt, rk, out, snap, fifo, dataset, image, model, dir);
}

/* Every loader of the libraries, given a FIFO: a prompt error naming it. */
static void test_fifo_inputs_library(void)
{
    char *dir = rd_test_tmpdir("hostile-fifo-lib");
    char *fifo = rd_test_join(dir, "pipe");
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    alarm(120);
    double t0 = rd_test_seconds();
    rd_error err;
    rd_tensor t;
    rd_model *m = NULL;
    rd_dataset ds;
    rd_rknn_config cfg;
    rd_qcfg q;
    rd_result r;
    rd_name_map map = {0};
    float *v = NULL;
    int64_t n = 0;
    char *buf = NULL;
    size_t len = 0;
    typedef struct {
        const char *what;
        rd_status st;
        bool named; /* the message says FIFO */
    } outcome;
    outcome got[14];
    int k = 0;
#define TRY(what, call)                                                   \
    do {                                                                  \
        rd_error_clear(&err);                                             \
        rd_status st_ = (call);                                           \
        got[k++] = (outcome){what, st_, strstr(err.msg, "FIFO") != NULL}; \
    } while (0)
    TRY("model", rd_model_load(fifo, NULL, &m, &err));
    TRY(".npy", rd_npy_load(fifo, &t, &err));
    TRY("TensorProto", rd_tensorproto_load(fifo, &t, NULL, &err));
    TRY("IDX", rd_idx_load(fifo, &t, &err));
    TRY("image", rd_image_load(fifo, &t, &err));
    TRY("dataset", rd_dataset_load(fifo, 0, &ds, &err));
    TRY("model config", rd_rknn_config_load(fifo, &cfg, &err));
    TRY("quantization cfg", rd_qcfg_load(fifo, &q, &err));
    rd_result_init(&r);
    TRY("error_analysis.txt", rd_rknn_txt_load(fifo, &r, NULL, &err));
    TRY("report.json", rd_report_json_load(fifo, &r, &err));
    rd_result_fini(&r);
    TRY("map_name_to_file.txt", rd_name_map_load(fifo, &map, &err));
    TRY("snapshot text", rd_snapshot_txt_load(fifo, &v, &n, &err));
    TRY("any text", rd_file_read_all(NULL, fifo, 1 << 20, &buf, &len, &err));
    TRY("inside a folder", rd_file_read_all(dir, "pipe", 1 << 20, &buf, &len, &err));
#undef TRY
    alarm(0);
    CU_ASSERT(rd_test_seconds() - t0 < PROMPT_SECONDS);
    for (int i = 0; i < k; i++) {
        if (got[i].st != RD_E_IO || !got[i].named)
            fprintf(stderr, "\n  %s: status %d%s\n", got[i].what, got[i].st, got[i].named ? "" : ", FIFO not named");
        CU_ASSERT_EQUAL(got[i].st, RD_E_IO);
        CU_ASSERT_TRUE(got[i].named);
    }
    rd_qcfg_fini(&q);
    rd_rknn_config_fini(&cfg);
    rd_dataset_fini(&ds);
    rd_name_map_fini(&map);
    free(fifo);
    free(dir);
}

/* A FIFO among a board's dumps is refused as that one file, at once; so is a link (which could point anywhere
   on this host). With no other dump the board's part is missing: exit 3 naming the first file and why. */
static void test_fifo_and_link_in_dump_folder(void)
{
    char *dir = rd_test_demo_dir("hostile-dumps");
    char *model = rd_test_join(dir, "demo.onnx"), *image = rd_test_join(dir, "image.npy"),
         *dumps = rd_test_join(dir, "dumps");
    char *snap = rd_test_join(dir, "snap");
    mkdir(dumps, 0755);
    char *fifo = rd_test_join(dumps, "004_Clip_relu6_out_shape_1_8_32_32_float.npy");
    char *link = rd_test_join(dumps, "002_ConvRelu_relu1_out_shape_1_8_32_32_float.npy");
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            unlink(fifo);
            CU_ASSERT_EQUAL_FATAL(symlink("/etc/passwd", link), 0);
        }
        alarm(120);
        double t0 = rd_test_seconds();
        rd_cli_result r = rd_test_cli("accuracy", model, "--inputs", image, "--input-layout", "nchw", "--target",
                                      "rk3566", "--runtime-dumps", dumps, "-o", snap, "--quiet", NULL);
        alarm(0);
        CU_ASSERT(rd_test_seconds() - t0 < PROMPT_SECONDS);
        CU_ASSERT_EQUAL(r.code, 3);
        const char *why = pass == 0 ? "004_Clip_relu6_out_shape_1_8_32_32_float.npy: is a FIFO"
                                    : "002_ConvRelu_relu1_out_shape_1_8_32_32_float.npy: is a symbolic link";
        if (!strstr(r.errs, why))
            fprintf(stderr, "\n  dump pass %d: %s\n", pass, r.errs);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, why));
        CU_ASSERT_PTR_NULL(strstr(r.errs, "root:"));
        rd_test_cli_free(&r);
    }
    RD_FREE_ALL(fifo, link, snap, dumps, image, model, dir);
}

/* ---- planted links in an output folder ----------------------------------------------------------- */

static void test_planted_links_in_snapshot(void)
{
    char *dir = rd_test_demo_dir("hostile-links");
    char *model = rd_test_join(dir, "demo.onnx"), *image = rd_test_join(dir, "image.npy"),
         *victim = rd_test_join(dir, "victim");
    char *snap = rd_test_join(dir, "snap"), *golden = rd_test_join(dir, "snap/golden");
    rd_test_write_text(victim, "precious");
    mkdir(snap, 0755);
    mkdir(golden, 0755);
    /* every fixed temporary name a writer of this project ever used */
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    const char *traps[] = {"error_analysis.txt.tmp", "map_name_to_file.txt.tmp", "report.json.tmp.",
                           "report.html.tmp.",       "golden/relu1_out.txt.tmp", "golden/relu1_out.npy.tmp"};
    for (size_t i = 0; i < sizeof traps / sizeof traps[0]; i++) {
        char name[256];
        snprintf(name, sizeof name, "%s%s", traps[i], traps[i][strlen(traps[i]) - 1] == '.' ? pid : "");
        char *p = rd_test_join(snap, name);
        CU_ASSERT_EQUAL(symlink(victim, p), 0);
        free(p);
    }
    rd_cli_result r = rd_test_cli("accuracy", model, "--inputs", image, "--input-layout", "nchw", "--dtype", "float16",
                                  "-o", snap, "--quiet", NULL);
    if (r.code != 0)
        fprintf(stderr, "%s", r.errs);
    CU_ASSERT_EQUAL(r.code, 0);
    rd_test_cli_free(&r);
    CU_ASSERT_TRUE(rd_test_file_is(victim, "precious"));
    char *table = rd_test_join(snap, "error_analysis.txt");
    struct stat sb;
    CU_ASSERT_EQUAL(lstat(table, &sb), 0);
    CU_ASSERT_TRUE(S_ISREG(sb.st_mode));
    /* a folder of ours replaced by a link: refused, nothing written through it */
    char *elsewhere = rd_test_join(dir, "elsewhere"), *sim = rd_test_join(snap, "simulator");
    mkdir(elsewhere, 0755);
    CU_ASSERT_EQUAL(rd_dir_remove_tree(sim, NULL), RD_OK);
    CU_ASSERT_EQUAL(symlink(elsewhere, sim), 0);
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("symbolic link"), "accuracy", model, "--inputs", image, "--input-layout", "nchw",
                  "--dtype", "float16", "-o", snap, "--quiet");
    char *probe = rd_test_join(elsewhere, "relu1_out.npy");
    CU_ASSERT_NOT_EQUAL(access(probe, F_OK), 0);
    RD_FREE_ALL(probe, sim, elsewhere, table, golden, snap, victim, image, model, dir);
}

/* ---- paths from data stay inside their folder ----------------------------------------------------- */

static void test_compare_index_confined(void)
{
    char *dir = rd_test_demo_dir("hostile-index");
    char *model = rd_test_join(dir, "demo.onnx"), *image = rd_test_join(dir, "image.npy"), *a = rd_test_join(dir, "a");
    char *b = rd_test_join(dir, "b"), *secret = rd_test_join(dir, "secret.npy");
    char input[4400], dump[4400];
    snprintf(input, sizeof input, "image=%s", image);
    snprintf(dump, sizeof dump, "--dump-dir=%s", a);
    rd_cli_result r = rd_test_cli("run", model, "-i", input, dump, "--outputs-only", "-q", NULL);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    rd_test_cli_free(&r);
    r = rd_test_cli("compare", a, a, NULL); /* the good case */
    CU_ASSERT_EQUAL(r.code, 0);
    rd_test_cli_free(&r);
    char *a0 = rd_test_join(a, "0.npy");
    size_t len;
    char *npy = rd_test_read_file(a0, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(npy);
    FILE *f = fopen(secret, "wb");
    fwrite(npy, 1, len, f);
    fclose(f);
    free(npy);
    mkdir(b, 0755);
    char *bindex = rd_test_join(b, "index.json"), *blink = rd_test_join(b, "0.npy");
    struct {
        const char *file;
        const char *says;
    } cases[] = {{"../secret.npy", "not a relative path inside"},
                 {"/etc/passwd", "absolute paths are refused"},
                 {"x/../../secret.npy", "not a relative path inside"},
                 {"0.npy", "symbolic link"}};
    CU_ASSERT_EQUAL(symlink(secret, blink), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "[{\"name\": \"probs\", \"file\": \"%s\", \"dtype\": \"float32\", \"shape\": [1, 10]}]",
                 cases[i].file);
        rd_test_write_text(bindex, text);
        r = rd_test_cli("compare", a, b, NULL);
        bool ok = r.code == 3 && strstr(r.errs, cases[i].says);
        if (!ok)
            fprintf(stderr, "\n  index entry '%s': exit %d: %s\n", cases[i].file, r.code, r.errs);
        CU_ASSERT_TRUE(ok);
        rd_test_cli_free(&r);
    }
    RD_FREE_ALL(bindex, blink, a0, secret, b, a, image, model, dir);
}

/* External data of an ONNX model: a link out of the model's folder is refused. */
static void test_external_data_link(void)
{
    char *dir = rd_test_tmpdir("hostile-external");
    char *mdir = rd_test_join(dir, "model"), *outside = rd_test_join(dir, "outside.bin"),
         *link = rd_test_join(dir, "model/w.bin");
    mkdir(mdir, 0755);
    float w[4] = {1, 2, 3, 4};
    FILE *f = fopen(outside, "wb");
    fwrite(w, sizeof w, 1, f);
    fclose(f);
    CU_ASSERT_EQUAL(symlink(outside, link), 0);
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    rd_onnx_add_input(b, "x", RD_DT_F32, 1, (const int64_t[]){4}, NULL);
    rd_onnx_add_initializer_external(b, "w", RD_DT_F32, 1, (const int64_t[]){4}, "w.bin", -1, -1);
    rd_onnx_add_node(b, "Add", "add", (const char *const[]){"x", "w"}, 2, (const char *const[]){"y"}, 1);
    rd_onnx_add_output(b, "y", RD_DT_F32, 1, (const int64_t[]){4}, NULL);
    char *model = rd_test_join(mdir, "m.onnx");
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_onnx_builder_save(b, model, &err), RD_OK);
    rd_onnx_builder_destroy(b);
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("symbolic link"), "inspect", model);
    /* the same data as a file inside the folder loads */
    unlink(link);
    f = fopen(link, "wb");
    fwrite(w, sizeof w, 1, f);
    fclose(f);
    RD_CLI_EXPECT(0, NULL, NULL, "inspect", model);
    RD_FREE_ALL(model, link, outside, mdir, dir);
}

/* ---- images claiming huge sizes ------------------------------------------------------------------ */

/* A 60-byte BMP claiming 9000 x 9000 pixels (243 MB decoded): refused from its header by default, exit 3
   with the way out; with --max-image-pixels raised it is read on and found truncated, still without
   allocating; a bad bound is a usage error. */
static void test_image_bound_cli(void)
{
    char *dir = rd_test_demo_dir("hostile-image");
    char *model = rd_test_join(dir, "demo.onnx"), *bmp = rd_test_join(dir, "big.bmp"),
         *snap = rd_test_join(dir, "snap");
    unsigned char b[60] = {'B', 'M'};
    const uint32_t fields[][2] = {{2, 60}, {10, 54}, {14, 40}, {18, 9000}, {22, 9000}};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        for (int k = 0; k < 4; k++)
            b[fields[i][0] + k] = (unsigned char)(fields[i][1] >> (8 * k));
    b[26] = 1;  /* planes */
    b[28] = 24; /* bits per pixel */
    FILE *f = fopen(bmp, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(b, 1, sizeof b, f);
    fclose(f);
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("9000x9000", "--max-image-pixels"), "accuracy", model, "--inputs", bmp, "--dtype",
                  "float16", "-o", snap);
    rd_cli_result r = rd_test_cli("accuracy", model, "--inputs", bmp, "--dtype", "float16", "-o", snap,
                                  "--max-image-pixels", "9000x9000", NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "BMP is truncated"));
    rd_test_cli_free(&r);
    static const char *const bad[] = {"0", "12x", "1e9", "300M", "-5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        RD_CLI_EXPECT(2, NULL, RD_TEXTS("--max-image-pixels expects a pixel count"), "accuracy", model, "--inputs", bmp,
                      "--dtype", "float16", "-o", snap, "--max-image-pixels", bad[i]);
    }
    RD_FREE_ALL(snap, bmp, model, dir);
}

/* ---- snapshot file names that clash ------------------------------------------------------------- */

/* in -> Relu -> "x/y" -> Sigmoid -> "x_y" -> Neg -> "X_Y": three tensors with one RKNN stem (ignoring case). */
static void write_clash_model(const char *path, const char *input)
{
    rd_onnx_builder *b = rd_onnx_builder_create(8, 13);
    const int64_t dims[2] = {1, 4};
    rd_onnx_add_input(b, "in", RD_DT_F32, 2, dims, NULL);
    rd_onnx_add_node(b, "Relu", "relu", (const char *const[]){"in"}, 1, (const char *const[]){"x/y"}, 1);
    rd_onnx_add_node(b, "Sigmoid", "sig", (const char *const[]){"x/y"}, 1, (const char *const[]){"x_y"}, 1);
    rd_onnx_add_node(b, "Neg", "neg", (const char *const[]){"x_y"}, 1, (const char *const[]){"X_Y"}, 1);
    rd_onnx_add_output(b, "X_Y", RD_DT_F32, 2, dims, NULL);
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_onnx_builder_save(b, path, &err), RD_OK);
    rd_onnx_builder_destroy(b);
    rd_tensor t;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_F32, 2, dims, &err), RD_OK);
    const float v[4] = {-1.0f, 0.5f, 2.0f, -3.0f};
    memcpy(t.data, v, sizeof v);
    CU_ASSERT_EQUAL_FATAL(rd_npy_save(input, &t, &err), RD_OK);
    rd_tensor_fini(&t);
}

static const char *map_file(const rd_name_map *m, const char *tensor)
{
    const rd_name_map_entry *e = RD_FIND_NAMED(rd_name_map_entry, m->entries, m->n, name, tensor);
    return e ? e->golden : NULL;
}

static void test_snapshot_names_unique(void)
{
    char *dir = rd_test_tmpdir("hostile-names");
    char *model = rd_test_join(dir, "clash.onnx"), *input = rd_test_join(dir, "in.npy"),
         *snap = rd_test_join(dir, "snap");
    write_clash_model(model, input);
    rd_cli_result r =
        rd_test_cli("accuracy", model, "--inputs", input, "--dtype", "float16", "-o", snap, "--quiet", NULL);
    if (r.code != 0)
        fprintf(stderr, "%s", r.errs);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    rd_test_cli_free(&r);
    char *mpath = rd_test_join(snap, "map_name_to_file.txt");
    rd_name_map map = {0};
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_name_map_load(mpath, &map, &err), RD_OK);
    const char *f1 = map_file(&map, "x/y"), *f2 = map_file(&map, "x_y"), *f3 = map_file(&map, "X_Y");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f3);
    CU_ASSERT_STRING_EQUAL(f1, "golden/x_y.txt"); /* the first keeps RKNN's name */
    CU_ASSERT_STRING_EQUAL(f2, "golden/x_y~2.txt");
    CU_ASSERT_STRING_EQUAL(f3, "golden/X_Y~3.txt");
    /* each file holds its own tensor: relu, then sigmoid of it, then its negation */
    float *v = NULL;
    int64_t n = 0;
    CU_ASSERT_EQUAL_FATAL(rd_snapshot_txt_load_in(snap, f1, &v, &n, &err), RD_OK);
    CU_ASSERT_EQUAL(n, 4);
    CU_ASSERT_DOUBLE_EQUAL(v[2], 2.0, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(v[0], 0.0, 1e-3);
    free(v);
    CU_ASSERT_EQUAL_FATAL(rd_snapshot_txt_load_in(snap, f2, &v, &n, &err), RD_OK);
    CU_ASSERT_DOUBLE_EQUAL(v[0], 0.5, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(v[2], 0.8808, 1e-3);
    free(v);
    CU_ASSERT_EQUAL_FATAL(rd_snapshot_txt_load_in(snap, f3, &v, &n, &err), RD_OK);
    CU_ASSERT_DOUBLE_EQUAL(v[0], -0.5, 1e-3);
    free(v);
    rd_name_map_fini(&map);
    /* readers of the folder still work: report --from-rknn recomputes every layer from the right files */
    char *rep = rd_test_join(dir, "rep");
    r = rd_test_cli("report", "--from-rknn", snap, "-o", rep, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NULL(strstr(r.errs, "warning"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "recomputed from text files: 4 simulator"));
    rd_test_cli_free(&r);
    RD_CLI_EXPECT(0, NULL, NULL, "compare", snap, snap);
    /* a map naming a file outside the folder: a warning, and the file is not read */
    char *secret = rd_test_join(dir, "secret.txt");
    rd_test_write_text(secret, "root:x:0:0\n");
    rd_test_write_text(mpath, "# rknn-diag map_name_to_file v1\nx/y\t../secret.txt\t../secret.txt\t-\n");
    r = rd_test_cli("report", "--from-rknn", snap, "-o", rep, NULL);
    CU_ASSERT_EQUAL(r.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "not a relative path inside"));
    CU_ASSERT_PTR_NULL(strstr(r.errs, "root:"));
    rd_test_cli_free(&r);
    RD_FREE_ALL(secret, rep, mpath, snap, input, model, dir);
}

/* The stem set alone: first come keeps RKNN's stem, clashes get ~N, long names are cut on a character
   boundary, and many clashes of one stem stay fast (no rescan per name). */
static void test_stem_set(void)
{
    rd_stem_set *s;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_stem_set_create(&s, &err), RD_OK);
    char stem[RD_SNAPSHOT_STEM_MAX + 32];
    CU_ASSERT_EQUAL(rd_stem_set_take(s, "/FC/Gemm_output_0:0", stem, sizeof stem, &err), RD_OK);
    CU_ASSERT_STRING_EQUAL(stem, "_FC_Gemm_output_0_0");
    CU_ASSERT_EQUAL(rd_stem_set_take(s, "_FC_Gemm_output_0_0", stem, sizeof stem, &err), RD_OK);
    CU_ASSERT_STRING_EQUAL(stem, "_FC_Gemm_output_0_0~2");
    CU_ASSERT_EQUAL(rd_stem_set_take(s, "x~2", stem, sizeof stem, &err), RD_OK); /* '~' in a name is not a suffix */
    CU_ASSERT_STRING_EQUAL(stem, "x_2");
    char name[600];
    memset(name, 'a', 198);
    memcpy(name + 198, "\xc3\xa9\xc3\xa9", 4); /* 'é' across the 200-byte cut */
    name[202] = '\0';
    CU_ASSERT_EQUAL(rd_stem_set_take(s, name, stem, sizeof stem, &err), RD_OK);
    CU_ASSERT_EQUAL(strlen(stem), 200);
    name[201] = 'b'; /* differs after the cut only */
    CU_ASSERT_EQUAL(rd_stem_set_take(s, name, stem, sizeof stem, &err), RD_OK);
    CU_ASSERT_EQUAL(strlen(stem), 202);
    CU_ASSERT_STRING_EQUAL(stem + 200, "~2");
    /* continuation bytes only (no UTF-8 sequence to keep whole): cut at 200, not backed off to nothing
       (fuzz_snapshot_names: the name "/" then 300 bytes 0x97 had an empty stem) */
    name[0] = '/';
    memset(name + 1, 0x97, 300);
    name[301] = '\0';
    CU_ASSERT_EQUAL(rd_stem_set_take(s, name, stem, sizeof stem, &err), RD_OK);
    CU_ASSERT_EQUAL(strlen(stem), 200);
    /* 20000 names of one stem "c____": four unsafe characters each */
    static const char unsafe[] = ":;,!?@#$%^&*()+=[]{}|<> ";
    const int base = (int)sizeof unsafe - 1;
    double t0 = rd_test_seconds();
    for (int i = 0; i < 20000; i++) {
        name[0] = 'c';
        for (int d = 0, x = i; d < 4; d++, x /= base)
            name[1 + d] = unsafe[x % base];
        name[5] = '\0';
        CU_ASSERT_EQUAL_FATAL(rd_stem_set_take(s, name, stem, sizeof stem, &err), RD_OK);
        if (i == 19999)
            CU_ASSERT_STRING_EQUAL(stem, "c____~20000");
    }
    CU_ASSERT(rd_test_seconds() - t0 < 10.0);
    CU_ASSERT_EQUAL(rd_stem_set_take(s, "y", stem, 8, &err), RD_E_INVAL);
    rd_stem_set_destroy(s);
}

RD_TEST_REGISTER(register_hostile_files)
{
    RD_SUITE("hostile files", {"a FIFO as any input (command line)", test_fifo_inputs_cli},
             {"a FIFO as any input (libraries)", test_fifo_inputs_library},
             {"a FIFO and a link among dumps", test_fifo_and_link_in_dump_folder},
             {"planted links in a snapshot folder", test_planted_links_in_snapshot},
             {"index.json entries stay inside", test_compare_index_confined},
             {"external data links refused", test_external_data_link},
             {"huge image claims and --max-image-pixels", test_image_bound_cli},
             {"snapshot names unique", test_snapshot_names_unique}, {"stem set", test_stem_set});
}
