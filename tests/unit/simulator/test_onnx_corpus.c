/*
 * test_onnx_corpus.c: every ONNX backend node test (Debian's libonnx-testdata) through the loader:
 * model.onnx with sim_onnx_parse and test_data_set_*\/\*.pb with rd_tensorproto_load. At least 95%
 * must load; the rest must fail as unsupported (dtype or control flow), never as a parse error.
 */
#include "onnx_test_util.h"

#include <dirent.h>
#include <glob.h>
#include <stdlib.h>

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"

/* Failures that are allowed: the dtypes and features the simulator does not hold. */
static bool acceptable_failure(const rd_error *err)
{
    return err->code == RD_E_UNSUPPORTED &&
           (strstr(err->msg, "unsupported dtype") || strstr(err->msg, "control flow") ||
            strstr(err->msg, "not supported") || strstr(err->msg, "only tensors are supported"));
}

/* The files of the node tests that match pattern (below NODE_DIR); false, after saying the test is skipped,
   when there are none. */
static bool node_glob(const char *pattern, glob_t *g)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", NODE_DIR, pattern);
    if (glob(path, 0, NULL, g) != 0) {
        fprintf(stderr, "\n  skipped: no %s (install libonnx-testdata)\n", path);
        return false;
    }
    return true;
}

static void test_node_models(void)
{
    glob_t g;
    if (!node_glob("*/model.onnx", &g))
        return;
    size_t ok = 0, dtype = 0, other = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        size_t len;
        void *buf = rd_test_read_file(g.gl_pathv[i], &len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
        rd_model m;
        rd_error err;
        const char *slash = strrchr(g.gl_pathv[i], '/');
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - g.gl_pathv[i]), g.gl_pathv[i]);
        rd_status st = ot_parse(buf, len, dir, &m, &err);
        if (st == RD_OK) {
            ok++;
        } else if (acceptable_failure(&err)) {
            dtype += strstr(err.msg, "dtype") != NULL;
            other += strstr(err.msg, "dtype") == NULL;
        } else {
            fprintf(stderr, "\n  %s: %s", g.gl_pathv[i], err.msg);
            CU_FAIL("a backend test model failed to load for a reason other than an unsupported feature");
        }
        sim_model_free_contents(&m);
        free(buf);
    }
    fprintf(stderr, "\n  node models: %zu of %zu loaded, %zu unsupported dtype, %zu other unsupported\n", ok,
            g.gl_pathc, dtype, other);
    CU_ASSERT(g.gl_pathc >= 900);
    CU_ASSERT(ok * 100 >= g.gl_pathc * 95);
    globfree(&g);
}

/* Sequence and optional tests store SequenceProto/OptionalProto files, which are not TensorProtos. */
static bool non_tensor_case(const char *path)
{
    const char *dir = strstr(path, "/node/");
    return dir && (strstr(dir, "sequence") || strstr(dir, "_seq") || strstr(dir, "optional") || strstr(dir, "_opt/"));
}

static void test_node_tensors(void)
{
    glob_t g;
    if (!node_glob("*/test_data_set_*/*.pb", &g))
        return;
    size_t ok = 0, dtype = 0, not_tensor = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        rd_tensor t;
        char *name = NULL;
        rd_error err;
        rd_status st = rd_tensorproto_load(g.gl_pathv[i], &t, &name, &err);
        if (st == RD_OK) {
            ok++;
            CU_ASSERT_PTR_NOT_NULL(name);
            rd_tensor_fini(&t);
        } else if (st == RD_E_UNSUPPORTED && strstr(err.msg, "unsupported dtype")) {
            dtype++;
        } else if (non_tensor_case(g.gl_pathv[i])) {
            not_tensor++; /* misread as a TensorProto, but refused cleanly */
        } else {
            fprintf(stderr, "\n  %s", err.msg);
            CU_FAIL("a backend test tensor failed to load for a reason other than its dtype");
        }
        free(name);
    }
    fprintf(stderr,
            "\n  test data: %zu of %zu TensorProto files loaded, %zu unsupported dtype, %zu sequence or "
            "optional protos refused\n",
            ok, g.gl_pathc, dtype, not_tensor);
    CU_ASSERT(ok * 100 >= g.gl_pathc * 95);
    globfree(&g);
}

RD_TEST_REGISTER(register_onnx_corpus)
{
    RD_SUITE("onnx_corpus", {"node test models", test_node_models}, {"node test tensors", test_node_tensors});
}
