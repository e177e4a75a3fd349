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

/* How one file of the corpus went: loaded, refused for its dtype, refused for another reason that is allowed,
   or failed (a test failure, reported where it happened). */
typedef enum { NODE_LOADED, NODE_DTYPE, NODE_OTHER, NODE_FAILED, NODE_OUTCOMES } node_outcome;

/* Runs check on every file below NODE_DIR that matches pattern, prints the outcomes (what: the files, other:
   NODE_OTHER) and asserts that at least 95% loaded; n_files: how many there were. False, after saying the test
   is skipped, when there are none. */
static bool node_corpus(const char *pattern, node_outcome (*check)(const char *path), const char *what,
                        const char *other, size_t *n_files)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", NODE_DIR, pattern);
    glob_t g;
    if (glob(path, 0, NULL, &g) != 0) {
        fprintf(stderr, "\n  skipped: no %s (install libonnx-testdata)\n", path);
        return false;
    }
    size_t n[NODE_OUTCOMES] = {0};
    for (size_t i = 0; i < g.gl_pathc; i++)
        n[check(g.gl_pathv[i])]++;
    *n_files = g.gl_pathc;
    globfree(&g);
    fprintf(stderr, "\n  %s: %zu of %zu loaded, %zu unsupported dtype, %zu %s\n", what, n[NODE_LOADED], *n_files,
            n[NODE_DTYPE], n[NODE_OTHER], other);
    CU_ASSERT(n[NODE_LOADED] * 100 >= *n_files * 95);
    return true;
}

static node_outcome load_model(const char *path)
{
    size_t len;
    void *buf = rd_test_read_file(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    rd_model m;
    rd_error err;
    const char *slash = strrchr(path, '/');
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    rd_status st = ot_parse(buf, len, dir, &m, &err);
    node_outcome o = NODE_LOADED;
    if (st != RD_OK && acceptable_failure(&err)) {
        o = strstr(err.msg, "dtype") ? NODE_DTYPE : NODE_OTHER;
    } else if (st != RD_OK) {
        fprintf(stderr, "\n  %s: %s", path, err.msg);
        CU_FAIL("a backend test model failed to load for a reason other than an unsupported feature");
        o = NODE_FAILED;
    }
    sim_model_free_contents(&m);
    free(buf);
    return o;
}

static void test_node_models(void)
{
    size_t files = 0;
    if (node_corpus("*/model.onnx", load_model, "node models", "other unsupported", &files))
        CU_ASSERT(files >= 900);
}

/* Sequence and optional tests store SequenceProto/OptionalProto files, which are not TensorProtos. */
static bool non_tensor_case(const char *path)
{
    const char *dir = strstr(path, "/node/");
    return dir && (strstr(dir, "sequence") || strstr(dir, "_seq") || strstr(dir, "optional") || strstr(dir, "_opt/"));
}

/* NODE_OTHER: a sequence or optional proto, misread as a TensorProto but refused cleanly. */
static node_outcome load_tensor(const char *path)
{
    rd_tensor t;
    char *name = NULL;
    rd_error err;
    rd_status st = rd_tensorproto_load(path, &t, &name, &err);
    node_outcome o = NODE_OTHER;
    if (st == RD_OK) {
        o = NODE_LOADED;
        CU_ASSERT_PTR_NOT_NULL(name);
        rd_tensor_fini(&t);
    } else if (st == RD_E_UNSUPPORTED && strstr(err.msg, "unsupported dtype")) {
        o = NODE_DTYPE;
    } else if (!non_tensor_case(path)) {
        fprintf(stderr, "\n  %s", err.msg);
        CU_FAIL("a backend test tensor failed to load for a reason other than its dtype");
        o = NODE_FAILED;
    }
    free(name);
    return o;
}

static void test_node_tensors(void)
{
    size_t files = 0;
    node_corpus("*/test_data_set_*/*.pb", load_tensor, "TensorProto files of the test data",
                "sequence or optional protos refused", &files);
}

RD_TEST_REGISTER(register_onnx_corpus)
{
    RD_SUITE("onnx_corpus", {"node test models", test_node_models}, {"node test tensors", test_node_tensors});
}
