/* test_hybrid_verify.c: `rknn-diag hybrid verify` on dumps of the emulated board (board-run): a layer the
 * cfg asks for in float16 and the board ran in float16 passes; the board ignoring the request (run with
 * the plain cfg) is flagged, from RKNN_DUMP_QUANT=1 dtypes and from the int8 grid of float32 dumps. */
#include "cli_capture.h"
#include "cli_expect.h"
#include "rd_test.h"
#include "paths_in.h"
#include "rknn_diag/analyzer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct vfx {
    char *dir;
    char model[4200], image[4200], plain[4200], hybrid[4200];
} vfx;

static bool vfx_init(vfx *f)
{
    f->dir = rd_test_tmpdir("hybrid_verify");
    if (!f->dir)
        return false;
    rd_test_paths_in(f->dir, sizeof f->hybrid, f->model, "demo.onnx", f->image, "image.npy", f->plain,
                     "plain.quantization.cfg", f->hybrid, "hybrid.quantization.cfg", NULL);
    char dataset[4200];
    snprintf(dataset, sizeof dataset, "%s/dataset.txt", f->dir);
    rd_cli_result r = rd_test_cli("demo", "-o", f->dir, "--quiet", NULL);
    bool ok = r.code == 0;
    rd_test_cli_free(&r);
    r = rd_test_cli("quantize", f->model, "--dataset", dataset, "--input-layout", "nchw", "-o", f->plain, NULL);
    ok = ok && r.code == 0;
    rd_test_cli_free(&r);
    rd_qcfg q;
    rd_error err = {0};
    ok = ok && rd_qcfg_load(f->plain, &q, &err) == RD_OK &&
         rd_qcfg_add_layer(&q, "relu6_out", RD_DT_F16, &err) == RD_OK && rd_qcfg_save(f->hybrid, &q, &err) == RD_OK;
    rd_qcfg_fini(&q);
    return ok;
}

/* board-run with cfg, dumping to DIR/<tag> (RKNN_DUMP_QUANT=1 when quant); returns the folder (static). */
static const char *board_dumps(const vfx *f, const char *cfg, const char *tag, bool quant, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", f->dir, tag);
    mkdir(buf, 0777);
    setenv("RKNN_LOG_LEVEL", "5", 1);
    if (quant)
        setenv("RKNN_DUMP_QUANT", "1", 1);
    rd_cli_result r = rd_test_cli("board-run", f->model, "--input", f->image, "--input-layout", "nchw", "--cfg", cfg,
                                  "--target", "rk3566", "--dump-dir", buf, NULL);
    unsetenv("RKNN_LOG_LEVEL");
    unsetenv("RKNN_DUMP_QUANT");
    CU_ASSERT_EQUAL(r.code, 0);
    rd_test_cli_free(&r);
    return buf;
}

static rd_cli_result verify(const vfx *f, const char *dumps, bool json)
{
    return rd_test_cli("hybrid", "verify", f->model, "--cfg", f->hybrid, "--runtime-dumps", dumps, "--input-layout",
                       "nchw", "--target", "rk3566", json ? "--json" : NULL, NULL);
}

static void test_verify(void)
{
    vfx f = {0};
    if (!vfx_init(&f)) {
        CU_FAIL("fixture");
        free(f.dir);
        return;
    }
    char d[4300];
    for (int quant = 1; quant >= 0; quant--) {
        /* (a) the board honoured the hybrid cfg */
        board_dumps(&f, f.hybrid, quant ? "q_hybrid" : "f_hybrid", quant, d, sizeof d);
        rd_cli_result r = verify(&f, d, false);
        CU_ASSERT_EQUAL(r.code, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "all 1 requested tensors ran in float16"));
        /* float32 dumps: a float16 tensor lands on the int8 grid by chance only (within 1e-3 of a code: ~0.2%) */
        const char *share = strstr(r.out, "float32 dump: ");
        const bool as_float16 = quant ? strstr(r.out, "dumped as float16") != NULL
                                      : share && strtod(share + strlen("float32 dump: "), NULL) < 1.0;
        CU_ASSERT(as_float16);
        if (r.code)
            fprintf(stderr, "%s%s", r.out, r.errs);
        rd_test_cli_free(&r);
        /* (b) the board ran the plain cfg: relu6_out stayed int8 */
        board_dumps(&f, f.plain, quant ? "q_plain" : "f_plain", quant, d, sizeof d);
        r = verify(&f, d, false);
        CU_ASSERT_EQUAL(r.code, 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "relu6_out (int8)"));
        CU_ASSERT_PTR_NOT_NULL(
            strstr(r.out, quant ? "dumped as int8" : "100.0% of the non-zero values on the int8 grid"));
        rd_test_cli_free(&r);
        r = verify(&f, d, true);
        CU_ASSERT_EQUAL(r.code, 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"not_float16\":\t1"));
        rd_test_cli_free(&r);
    }
    /* bad input: a cfg without float16 layers, a missing folder, a cfg naming an unknown tensor */
    rd_cli_result r = rd_test_cli("hybrid", "verify", f.model, "--cfg", f.plain, "--runtime-dumps", d, NULL);
    CU_ASSERT_EQUAL(r.code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.errs, "nothing to verify"));
    rd_test_cli_free(&r);
    char missing[4300];
    snprintf(missing, sizeof missing, "%s/no_such_dumps", f.dir);
    r = verify(&f, missing, false);
    CU_ASSERT_EQUAL(r.code, 3);
    rd_test_cli_free(&r);
    rd_qcfg q;
    rd_error err = {0};
    char ghost[4300];
    snprintf(ghost, sizeof ghost, "%s/ghost.quantization.cfg", f.dir);
    CU_ASSERT_EQUAL(rd_qcfg_load(f.plain, &q, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_qcfg_add_layer(&q, "no_such_tensor", RD_DT_F16, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_qcfg_save(ghost, &q, &err), RD_OK);
    rd_qcfg_fini(&q);
    RD_CLI_EXPECT(3, NULL, RD_TEXTS("no_such_tensor"), "hybrid", "verify", f.model, "--cfg", ghost, "--runtime-dumps",
                  d);
    RD_CLI_EXPECT(2, NULL, NULL, "hybrid", "verify", f.model, "--runtime-dumps", d);
    free(f.dir);
}

RD_TEST_REGISTER(hybrid_verify_tests)
{
    RD_SUITE("hybrid_verify", {"board dumps show what ran in float16", test_verify});
}
