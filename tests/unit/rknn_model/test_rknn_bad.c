/*
 * test_rknn_bad.c: bad input to the .rknn reader: other containers, every header field, every truncation,
 * every FlatBuffer offset overwritten, a dict and a JSON cut short, indices out of range, limits, and files
 * that are not regular files. Each is a clean, named error (exit code 3), never a crash or a hang.
 */
#include "rd_test.h"
#include "rknn_synth.h"
#include "rknn_diag/rknn_model.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint8_t *demo_file(size_t *len)
{
    rs_model sm;
    rs_demo(&sm);
    uint8_t *buf;
    CU_ASSERT_FATAL(rs_write(&sm, &buf, len, NULL) == RD_OK);
    return buf;
}

/* Parses buf and expects want with msg_part in the message; a clean failure leaves no model. */
static void expect(const void *buf, size_t len, rd_status want, const char *msg_part)
{
    rd_rknn_model *m = (rd_rknn_model *)1;
    rd_error err;
    rd_error_clear(&err);
    rd_status st = rd_rknn_parse(buf, len, "bad.rknn", NULL, &m, &err);
    CU_ASSERT_EQUAL(st, want);
    if (st != want || (msg_part && !strstr(err.msg, msg_part)))
        fprintf(stderr, "want %d '%s', got %d: %s\n", want, msg_part ? msg_part : "", st, err.msg);
    if (msg_part)
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, msg_part));
    if (st != RD_OK) {
        CU_ASSERT_PTR_NULL(m);
        CU_ASSERT(err.msg[0] != '\0');
        CU_ASSERT_EQUAL(rd_status_exit_code(st), 3);
    }
    rd_rknn_destroy(st == RD_OK ? m : NULL);
}

static void test_other_containers(void)
{
    uint8_t buf[64] = {0};
    memcpy(buf, "CYPTRKNN", 8);
    expect(buf, sizeof buf, RD_E_UNSUPPORTED, "encrypted RKNN model (CYPTRKNN)");
    memcpy(buf, "RKNX\0\0\0\0", 8);
    expect(buf, sizeof buf, RD_E_UNSUPPORTED, "RKNX");
    memcpy(buf, "VPMN", 4);
    expect(buf, sizeof buf, RD_E_UNSUPPORTED, "OpenVX");
    memcpy(buf, "\x10\0\0\0RKNN", 8);
    expect(buf, sizeof buf, RD_E_UNSUPPORTED, "bare RKNN FlatBuffer");
    const char *json = "{\"version\": \"1.7.5\", \"nodes\": [], \"network_platform\": \"caffe\"}";
    expect(json, strlen(json), RD_E_UNSUPPORTED, "Toolkit1 JSON");
    expect("PK\3\4zipzipzip", 12, RD_E_PARSE, "not an RKNN model");
    expect("", 0, RD_E_PARSE, "not an RKNN model");
    CU_ASSERT_EQUAL(rd_rknn_detect("CYPTRKNN", 8), RD_RKNN_FILE_ENCRYPTED);
    CU_ASSERT_EQUAL(rd_rknn_detect("RKN", 3), RD_RKNN_FILE_UNKNOWN);

    size_t len;
    uint8_t *f = demo_file(&len); /* model data that is an OpenVX graph */
    memcpy(f + 64, "VPMN", 4);
    expect(f, len, RD_E_UNSUPPORTED, "model data is an OpenVX");
    free(f);
}

static void put64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

static void test_header_fields(void)
{
    size_t len;
    uint8_t *f = demo_file(&len);
    uint64_t data;
    memcpy(&data, f + 16, 8);
    expect(f, 20, RD_E_PARSE, "24-byte header");
    expect(f, 40, RD_E_PARSE, "64-byte header");
    put64(f + 8, 0x20006);
    expect(f, len, RD_E_UNSUPPORTED, "format version 0x20006");
    put64(f + 8, 6);
    put64(f + 16, len);
    expect(f, len, RD_E_PARSE, "cut short");
    put64(f + 16, UINT64_MAX);
    expect(f, len, RD_E_PARSE, "bytes of model data");
    put64(f + 16, 0);
    expect(f, len, RD_E_PARSE, "holds no model");
    put64(f + 16, data);
    put64(f + 64 + data, len);
    expect(f, len, RD_E_PARSE, "JSON length");
    put64(f + 64 + data, len - 64 - data - 8);
    expect(f, len, RD_OK, NULL);
    /* warnings, not errors: padding, reserved bytes, a newer version, trailing bytes */
    f[4] = 1;
    f[30] = 9;
    put64(f + 8, 7);
    uint8_t *longer = calloc(1, len + 3);
    memcpy(longer, f, len);
    rd_rknn_model *m;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_rknn_parse(longer, len + 3, "w.rknn", NULL, &m, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_rknn_warning_count(m), 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(rd_rknn_warning(m, 3), "3 bytes after the JSON"));
    rd_rknn_destroy(m);
    free(longer);
    free(f);
}

/* Every cut of the file fails with a message (the JSON is needed to its last byte). */
static void test_every_truncation(void)
{
    size_t len;
    uint8_t *f = demo_file(&len);
    size_t failed = 0;
    for (size_t cut = 0; cut < len; cut++) {
        rd_rknn_model *m = NULL;
        rd_error err;
        rd_error_clear(&err);
        rd_status st = rd_rknn_parse(f, cut, "cut.rknn", NULL, &m, &err);
        failed += st != RD_OK && m == NULL && err.msg[0] && rd_status_exit_code(st) == 3;
        rd_rknn_destroy(m);
    }
    CU_ASSERT_EQUAL(failed, len);
    free(f);
}

/* Every 4-byte word of the FlatBuffer overwritten with values that break offsets and lengths: the reader
   either reads a model (the word was data) or refuses with a message; ASan/UBSan check the rest. */
static void test_every_offset(void)
{
    size_t len;
    uint8_t *f = demo_file(&len);
    uint64_t data;
    memcpy(&data, f + 16, 8);
    static const uint32_t evil[] = {0, 1, 2, 0x7fffffffu, 0xfffffff0u, 0xffffffffu, 0x10000u};
    size_t refused = 0, runs = 0;
    for (size_t pos = 64; pos + 4 <= 64 + data; pos += 4)
        for (size_t k = 0; k < sizeof evil / sizeof evil[0]; k++) {
            uint8_t *copy = malloc(len);
            memcpy(copy, f, len);
            memcpy(copy + pos, &evil[k], 4);
            rd_rknn_model *m = NULL;
            rd_error err;
            rd_error_clear(&err);
            rd_status st = rd_rknn_parse(copy, len, "evil.rknn", NULL, &m, &err);
            if (st != RD_OK) {
                CU_ASSERT(err.msg[0] != '\0' && m == NULL);
                refused++;
            }
            runs++;
            rd_rknn_destroy(m);
            free(copy);
        }
    CU_ASSERT(refused > runs / 4); /* most words are offsets, lengths or names */
    free(f);
}

static void test_sections_cut_short(void)
{
    rs_model sm;
    uint8_t *buf;
    size_t len;
    rs_demo(&sm);
    sm.dict = "{'attrs': {'x': {'idx': 0, 'shape': [1, 3";
    CU_ASSERT_FATAL(rs_write(&sm, &buf, &len, NULL) == RD_OK);
    expect(buf, len, RD_E_PARSE, "Model slot 3 (dict string): byte");
    free(buf);
    rs_demo(&sm);
    sm.dict = "{'attrs': {'x': 'unterminated}}";
    CU_ASSERT_FATAL(rs_write(&sm, &buf, &len, NULL) == RD_OK);
    expect(buf, len, RD_E_PARSE, "not closed");
    free(buf);
    rs_demo(&sm);
    sm.dict = "{1, 2}"; /* a set: not what repr() of the toolkit's dict gives */
    CU_ASSERT_FATAL(rs_write(&sm, &buf, &len, NULL) == RD_OK);
    expect(buf, len, RD_E_PARSE, "expected ':' after a dict key");
    free(buf);
    rs_demo(&sm);
    sm.json = "{\"version\": \"1.6.2\", \"norm_tensor\": [{\"url\": ";
    CU_ASSERT_FATAL(rs_write(&sm, &buf, &len, NULL) == RD_OK);
    expect(buf, len, RD_E_PARSE, "JSON section: byte");
    free(buf);
    rs_demo(&sm);
    sm.json = "{\"version\": \"1.6.2\"} {\"more\": 1}";
    CU_ASSERT_FATAL(rs_write(&sm, &buf, &len, NULL) == RD_OK);
    expect(buf, len, RD_E_PARSE, "text after the JSON value");
    free(buf);
    rs_demo(&sm);
    sm.input_json = "{\"x\": {\"dtype\": ";
    CU_ASSERT_FATAL(rs_write(&sm, &buf, &len, NULL) == RD_OK);
    expect(buf, len, RD_E_PARSE, "Model slot 12 (input_json)");
    free(buf);
    rs_demo(&sm); /* well formed, unexpected types: read, with warnings */
    sm.dict = "{'attrs': {'x': 3, 'y': {'mean': ['a']}}, 'quant_tab': []}";
    CU_ASSERT_FATAL(rs_write(&sm, &buf, &len, NULL) == RD_OK);
    rd_rknn_model *m;
    CU_ASSERT_EQUAL_FATAL(rd_rknn_parse(buf, len, "odd.rknn", NULL, &m, NULL), RD_OK);
    CU_ASSERT_EQUAL(rd_rknn_warning_count(m), 3);
    CU_ASSERT_EQUAL(rd_rknn_info_get(m)->io_attrs[1].n_mean, 0);
    rd_rknn_destroy(m);
    free(buf);
}

static void test_indices_and_limits(void)
{
    rs_model sm;
    uint8_t *buf;
    size_t len;
    rs_demo(&sm);
    sm.nodes[2].in[3] = 6; /* the graph has 6 tensors */
    CU_ASSERT_FATAL(rs_write(&sm, &buf, &len, NULL) == RD_OK);
    expect(buf, len, RD_E_PARSE, "entry 3 is tensor 6, the graph has 6 tensors");
    free(buf);
    rs_demo(&sm);
    sm.outputs[0] = -1;
    CU_ASSERT_FATAL(rs_write(&sm, &buf, &len, NULL) == RD_OK);
    expect(buf, len, RD_E_PARSE, "outputs (slot 3)");
    free(buf);
    rs_demo(&sm);
    sm.tensors[2].blob = 9;
    CU_ASSERT_FATAL(rs_write(&sm, &buf, &len, NULL) == RD_OK);
    expect(buf, len, RD_E_PARSE, "weight-blob index 9, the model has 3 blobs");
    free(buf);
    rs_demo(&sm);
    sm.tensors[3].rank = 0;
    sm.tensors[3].native_rank = 0;
    sm.n_nodes = 0; /* no nodes, no inputs: still a model */
    sm.n_inputs = sm.n_outputs = 0;
    CU_ASSERT_FATAL(rs_write(&sm, &buf, &len, NULL) == RD_OK);
    expect(buf, len, RD_OK, NULL);
    rd_rknn_limits lim;
    rd_rknn_limits_default(&lim);
    lim.max_tensors = 2;
    rd_rknn_model *m;
    rd_error err;
    CU_ASSERT_EQUAL(rd_rknn_parse(buf, len, "lim.rknn", &lim, &m, &err), RD_E_LIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "6 tensors, more than the 2 allowed"));
    rd_rknn_limits_default(&lim);
    lim.max_decoded_bytes = 1000;
    CU_ASSERT_EQUAL(rd_rknn_parse(buf, len, "lim.rknn", &lim, &m, &err), RD_E_LIMIT);
    rd_rknn_limits_default(&lim);
    lim.max_file_bytes = 100;
    CU_ASSERT_EQUAL(rd_rknn_parse(buf, len, "lim.rknn", &lim, &m, &err), RD_E_LIMIT);
    free(buf);
}

static void test_not_regular_files(void)
{
    char *dir = rd_test_tmpdir("rknn_bad");
    char path[4200];
    rd_rknn_model *m;
    rd_error err;
    CU_ASSERT_EQUAL(rd_rknn_load(dir, NULL, &m, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "folder"));
    snprintf(path, sizeof path, "%s/fifo.rknn", dir);
    CU_ASSERT_EQUAL_FATAL(mkfifo(path, 0600), 0);
    CU_ASSERT_EQUAL(rd_rknn_load(path, NULL, &m, &err), RD_E_IO); /* no writer: must not wait */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "FIFO"));
    unlink(path);
    snprintf(path, sizeof path, "%s/missing.rknn", dir);
    CU_ASSERT_EQUAL(rd_rknn_load(path, NULL, &m, &err), RD_E_NOTFOUND);
    rd_rknn_log *log;
    CU_ASSERT_EQUAL(rd_rknn_log_load(path, &log, &err), RD_E_NOTFOUND);
    free(dir);
}

RD_TEST_REGISTER(reg_rknn_bad)
{
    RD_SUITE("rknn_bad", {"other containers are named and refused", test_other_containers},
             {"every header field", test_header_fields}, {"every truncation", test_every_truncation},
             {"every FlatBuffer word overwritten", test_every_offset},
             {"dict, JSON and runtime JSON cut short", test_sections_cut_short},
             {"indices out of range and limits", test_indices_and_limits},
             {"directories, FIFOs and missing files", test_not_regular_files});
}
