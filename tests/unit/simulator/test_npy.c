/*
 * test_npy.c: .npy reading and writing (simulator/src/npy.c).
 *
 * Reference files in fixtures/npy/ were written by numpy itself (fixtures/npy/make_fixtures.py):
 * the writer must reproduce them byte for byte, and the reader must load them with the values that
 * script puts in (ref_value below mirrors its value()). Malformed headers are built here byte by
 * byte.
 */
#include "rd_test.h"
#include "rknn_diag/simulator.h"
#include "tensor_check.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------------
 * Helpers
 */

static char *fixture(const char *name)
{
    static char path[4096]; /* test-only, single-threaded */
    snprintf(path, sizeof path, "%s/fixtures/npy/%s", rd_test_source_dir(), name);
    return path;
}

/* Element i of any numeric tensor as a double (the test's own reader, independent of the library).
 */
static double elem(const rd_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case RD_DT_F16:
        return rd_f16_to_f32(((const uint16_t *)t->data)[i]);
    case RD_DT_F32:
        return ((const float *)t->data)[i];
    case RD_DT_F64:
        return ((const double *)t->data)[i];
    case RD_DT_I8:
        return ((const int8_t *)t->data)[i];
    case RD_DT_U8:
        return ((const uint8_t *)t->data)[i];
    case RD_DT_I16:
        return ((const int16_t *)t->data)[i];
    case RD_DT_U16:
        return ((const uint16_t *)t->data)[i];
    case RD_DT_I32:
        return ((const int32_t *)t->data)[i];
    case RD_DT_U32:
        return ((const uint32_t *)t->data)[i];
    case RD_DT_I64:
        return (double)((const int64_t *)t->data)[i];
    case RD_DT_U64:
        return (double)((const uint64_t *)t->data)[i];
    case RD_DT_BOOL:
        return ((const uint8_t *)t->data)[i];
    default:
        return -1e300;
    }
}

/* make_fixtures.py's value(i, dtype). */
static double ref_value(rd_dtype dt, int64_t i)
{
    const rd_dtype_info *info = rd_dtype_get(dt);
    if (dt == RD_DT_BOOL)
        return i % 3 == 1;
    if (info->is_float)
        return ((double)i - 2.5) * 0.75;
    if (info->is_signed)
        return (double)((i * 37 + 5) % 251 - 125);
    return (double)((i * 37 + 5) % 251);
}

/* All elements follow ref_value in C order. */
static bool values_are_reference(const rd_tensor *t)
{
    int64_t n = rd_tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        if (elem(t, i) != ref_value(t->dtype, i))
            return false;
    return true;
}

static bool same_tensor(const rd_tensor *a, const rd_tensor *b)
{
    if (!rd_test_same_shape(a, b))
        return false;
    size_t n = rd_tensor_nbytes(a);
    return n == 0 || memcmp(a->data, b->data, n) == 0;
}

/* rd_npy_write(t) is byte-identical to the fixture file (what numpy.save wrote). */
static void assert_writes_like_numpy(const rd_tensor *t, const char *name)
{
    size_t ref_len = 0;
    void *ref = rd_test_read_file(fixture(name), &ref_len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
    void *img = NULL;
    size_t len = 0;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_npy_write(t, &img, &len, &err), RD_OK);
    CU_ASSERT_EQUAL(len, ref_len);
    bool same = len == ref_len && memcmp(img, ref, len) == 0;
    if (!same)
        fprintf(stderr, "\n%s: rd_npy_write differs from numpy's bytes\n", name);
    CU_ASSERT_TRUE(same);
    free(img);
    free(ref);
}

static rd_status load_fixture(const char *name, rd_tensor *t, rd_error *err)
{
    rd_status st = rd_npy_load(fixture(name), t, err);
    if (st != RD_OK)
        fprintf(stderr, "\n%s: %s\n", name, err->msg);
    return st;
}

typedef struct dtype_case {
    const char *file;
    rd_dtype dtype;
} dtype_case;

static const dtype_case dtype_cases[] = {
    {"f2", RD_DT_F16}, {"f4", RD_DT_F32}, {"f8", RD_DT_F64}, {"i1", RD_DT_I8},  {"u1", RD_DT_U8},  {"i2", RD_DT_I16},
    {"u2", RD_DT_U16}, {"i4", RD_DT_I32}, {"u4", RD_DT_U32}, {"i8", RD_DT_I64}, {"u8", RD_DT_U64}, {"b1", RD_DT_BOOL},
};
#define N_DTYPE_CASES (sizeof dtype_cases / sizeof dtype_cases[0])

/* ---------------------------------------------------------------------------------------------------
 * Files written by numpy
 */

static void test_every_dtype_matches_numpy(void)
{
    for (size_t k = 0; k < N_DTYPE_CASES; k++) {
        char name[64];
        snprintf(name, sizeof name, "dtype_%s.npy", dtype_cases[k].file);
        rd_tensor t;
        rd_error err;
        CU_ASSERT_EQUAL_FATAL(load_fixture(name, &t, &err), RD_OK);
        CU_ASSERT_EQUAL(t.dtype, dtype_cases[k].dtype);
        CU_ASSERT_EQUAL(t.rank, 2);
        CU_ASSERT_EQUAL(t.dims[0], 2);
        CU_ASSERT_EQUAL(t.dims[1], 3);
        CU_ASSERT_TRUE(values_are_reference(&t));
        assert_writes_like_numpy(&t, name);
        rd_tensor_fini(&t);
    }
}

static void test_ranks_0_to_8_match_numpy(void)
{
    static const int64_t dims[8] = {2, 3, 1, 2, 1, 2, 1, 2};
    for (int r = 0; r <= 8; r++) {
        char name[64];
        snprintf(name, sizeof name, "rank%d_f4.npy", r);
        rd_tensor t;
        rd_error err;
        CU_ASSERT_EQUAL_FATAL(load_fixture(name, &t, &err), RD_OK);
        CU_ASSERT_EQUAL(t.rank, r);
        for (int i = 0; i < r; i++)
            CU_ASSERT_EQUAL(t.dims[i], dims[i]);
        if (r == 0) {
            CU_ASSERT_EQUAL(((float *)t.data)[0], 1.5f);
        } else {
            CU_ASSERT_TRUE(values_are_reference(&t));
        }
        assert_writes_like_numpy(&t, name);
        rd_tensor_fini(&t);
    }
}

static void test_empty_arrays_match_numpy(void)
{
    static const struct {
        const char *file;
        rd_dtype dtype;
        int rank;
        int64_t dims[3];
    } cases[] = {
        {"empty_0_f4.npy", RD_DT_F32, 1, {0}},
        {"empty_2x0x3_i8.npy", RD_DT_I64, 3, {2, 0, 3}},
        {"empty_big_dims_u1.npy", RD_DT_U8, 2, {123456789012LL, 0}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rd_tensor t;
        rd_error err;
        CU_ASSERT_EQUAL_FATAL(load_fixture(cases[k].file, &t, &err), RD_OK);
        CU_ASSERT_EQUAL(t.dtype, cases[k].dtype);
        CU_ASSERT_EQUAL(t.rank, cases[k].rank);
        for (int i = 0; i < t.rank; i++)
            CU_ASSERT_EQUAL(t.dims[i], cases[k].dims[i]);
        CU_ASSERT_EQUAL(rd_tensor_numel(&t), 0);
        CU_ASSERT_PTR_NULL(t.data);
        assert_writes_like_numpy(&t, cases[k].file);
        rd_tensor_fini(&t);
    }
}

/* Big-endian files load as native values, and write back as numpy's little-endian file. */
static void test_big_endian_is_converted(void)
{
    static const char *const kinds[] = {"f2", "f4", "f8", "i2", "u2", "i4", "u4", "i8", "u8"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char be[64], le[64];
        snprintf(be, sizeof be, "be_%s.npy", kinds[k]);
        snprintf(le, sizeof le, "dtype_%s.npy", kinds[k]);
        rd_tensor t;
        rd_error err;
        CU_ASSERT_EQUAL_FATAL(load_fixture(be, &t, &err), RD_OK);
        CU_ASSERT_TRUE(values_are_reference(&t));
        assert_writes_like_numpy(&t, le);
        rd_tensor_fini(&t);
    }
}

/* Fortran-ordered files come out in C order with the values numpy had in the array. */
static void test_fortran_order_is_transposed(void)
{
    rd_tensor t;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(load_fixture("fortran_2x3x4_f4.npy", &t, &err), RD_OK);
    CU_ASSERT_EQUAL(t.rank, 3);
    CU_ASSERT_EQUAL(t.dims[0], 2);
    CU_ASSERT_EQUAL(t.dims[2], 4);
    CU_ASSERT_TRUE(values_are_reference(&t));
    rd_tensor_fini(&t);

    CU_ASSERT_EQUAL_FATAL(load_fixture("fortran_be_3x2_i2.npy", &t, &err), RD_OK);
    CU_ASSERT_EQUAL(t.dtype, RD_DT_I16);
    CU_ASSERT_EQUAL(t.dims[0], 3);
    CU_ASSERT_EQUAL(t.dims[1], 2);
    CU_ASSERT_TRUE(values_are_reference(&t));
    rd_tensor_fini(&t);

    CU_ASSERT_EQUAL_FATAL(load_fixture("fortran_1d_i4.npy", &t, &err), RD_OK);
    CU_ASSERT_TRUE(values_are_reference(&t));
    rd_tensor_fini(&t);
}

static void test_versions_2_and_3(void)
{
    static const char *const files[] = {"v2_f4.npy", "v3_f4.npy"};
    for (size_t k = 0; k < 2; k++) {
        rd_tensor t;
        rd_error err;
        CU_ASSERT_EQUAL_FATAL(load_fixture(files[k], &t, &err), RD_OK);
        CU_ASSERT_EQUAL(t.dtype, RD_DT_F32);
        CU_ASSERT_EQUAL(t.dims[1], 3);
        CU_ASSERT_TRUE(values_are_reference(&t));
        assert_writes_like_numpy(&t, "dtype_f4.npy"); /* we write 1.0, like numpy's default */
        rd_tensor_fini(&t);
    }
}

static void test_unsupported_dtypes_are_named(void)
{
    static const struct {
        const char *file;
        const char *what;
    } cases[] = {
        {"unsupported_c8.npy", "unsupported dtype '<c8'"},
        {"unsupported_U5.npy", "unsupported dtype '<U5'"},
        {"unsupported_O.npy", "unsupported dtype '|O'"},
        {"unsupported_datetime.npy", "unsupported dtype '<M8[ns]'"},
        {"unsupported_struct.npy", "unsupported structured dtype"},
        {"unsupported_struct_latin1.npy", "unsupported structured dtype"},
        {"unsupported_struct_v3_utf8.npy", "unsupported structured dtype"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rd_tensor t;
        rd_error err;
        CU_ASSERT_EQUAL(rd_npy_load(fixture(cases[k].file), &t, &err), RD_E_UNSUPPORTED);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[k].what));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, cases[k].file));
        CU_ASSERT_PTR_NULL(t.data);
    }
}

/* ---------------------------------------------------------------------------------------------------
 * Round trips
 */

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_round_trip_every_dtype_and_rank(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    for (size_t k = 0; k < N_DTYPE_CASES; k++) {
        for (int r = 0; r <= RD_MAX_RANK; r++) {
            int64_t dims[RD_MAX_RANK];
            for (int i = 0; i < r; i++)
                dims[i] = 1 + (int64_t)(next_rand(&seed) % 3);
            rd_tensor t, back;
            rd_error err;
            CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, dtype_cases[k].dtype, r, dims, &err), RD_OK);
            uint8_t *d = t.data;
            for (size_t i = 0; i < rd_tensor_nbytes(&t); i++)
                d[i] = (uint8_t)next_rand(&seed);
            if (t.dtype == RD_DT_BOOL)
                for (size_t i = 0; i < rd_tensor_nbytes(&t); i++)
                    d[i] &= 1;
            void *img;
            size_t len;
            CU_ASSERT_EQUAL_FATAL(rd_npy_write(&t, &img, &len, &err), RD_OK);
            CU_ASSERT_EQUAL((len - rd_tensor_nbytes(&t)) % 64, 0); /* data aligned like numpy's */
            CU_ASSERT_EQUAL(rd_npy_parse(img, len, "rt.npy", &back, &err), RD_OK);
            CU_ASSERT_TRUE(same_tensor(&t, &back));
            free(img);
            rd_tensor_fini(&back);
            rd_tensor_fini(&t);
        }
    }
}

static void test_save_and_load(void)
{
    char *dir = rd_test_tmpdir("npy");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/out.npy", dir);
    int64_t dims[2] = {4, 5};
    rd_tensor t, back;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_F32, 2, dims, &err), RD_OK);
    for (int i = 0; i < 20; i++)
        ((float *)t.data)[i] = (float)i * 0.5f;
    CU_ASSERT_EQUAL(rd_npy_save(path, &t, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_npy_save(path, &t, &err), RD_OK); /* replaces an existing file */
    CU_ASSERT_EQUAL(rd_npy_load(path, &back, &err), RD_OK);
    CU_ASSERT_TRUE(same_tensor(&t, &back));
    rd_tensor_fini(&back);
    /* no temporary left beside it */
    DIR *dh = opendir(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dh);
    int entries = 0;
    struct dirent *de;
    while ((de = readdir(dh)) != NULL)
        if (de->d_name[0] != '.')
            entries++;
    closedir(dh);
    CU_ASSERT_EQUAL(entries, 1);
    /* saving into a folder that does not exist names the path */
    char bad[4300];
    snprintf(bad, sizeof bad, "%s/missing/out.npy", dir);
    CU_ASSERT_EQUAL(rd_npy_save(bad, &t, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing/out.npy"));
    rd_tensor_fini(&t);
    /* loading: a missing file, a folder */
    CU_ASSERT_EQUAL(rd_npy_load(bad, &back, &err), RD_E_NOTFOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing/out.npy"));
    CU_ASSERT_EQUAL(rd_npy_load(dir, &back, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a regular file"));
    free(dir);
}

static void test_write_refuses_bad_tensors(void)
{
    rd_tensor t;
    rd_error err;
    void *img;
    size_t len;
    int64_t dims[RD_MAX_RANK] = {2};
    CU_ASSERT_EQUAL_FATAL(rd_tensor_alloc(&t, RD_DT_BF16, 1, dims, &err), RD_OK);
    CU_ASSERT_EQUAL(rd_npy_write(&t, &img, &len, &err), RD_E_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bfloat16"));
    CU_ASSERT_PTR_NULL(img);
    rd_tensor_fini(&t);
    rd_tensor bad = {.dtype = RD_DT_F32, .rank = 1, .dims = {3}, .data = NULL};
    CU_ASSERT_EQUAL(rd_npy_write(&bad, &img, &len, &err), RD_E_INVAL);
    bad.rank = 9;
    CU_ASSERT_EQUAL(rd_npy_write(&bad, &img, &len, &err), RD_E_LIMIT);
    bad.rank = 1;
    bad.dims[0] = -1;
    CU_ASSERT_EQUAL(rd_npy_write(&bad, &img, &len, &err), RD_E_PARSE);
    CU_ASSERT_EQUAL(rd_npy_write(NULL, &img, &len, &err), RD_E_INVAL);
    CU_ASSERT_EQUAL(rd_npy_parse(NULL, 4, "x.npy", &t, &err), RD_E_INVAL);
}

/* An empty tensor's element count is 0 even when its other dims would overflow when multiplied. */
static void test_numel_of_empty_with_huge_dims(void)
{
    rd_tensor t = {.dtype = RD_DT_U8, .rank = 3, .dims = {INT64_MAX / 2, 4, 0}};
    CU_ASSERT_EQUAL(rd_tensor_numel(&t), 0);
    CU_ASSERT_EQUAL(rd_tensor_nbytes(&t), 0);
}

/* Bool bytes other than 0 and 1 are read as true and kept as 1. */
static void test_bool_is_normalised(void)
{
    size_t len;
    uint8_t *img = rd_test_read_file(fixture("dtype_b1.npy"), &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    img[len - 1] = 7;
    rd_tensor t;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_npy_parse(img, len, "b.npy", &t, &err), RD_OK);
    CU_ASSERT_EQUAL(((uint8_t *)t.data)[5], 1);
    rd_tensor_fini(&t);
    free(img);
}

/* ---------------------------------------------------------------------------------------------------
 * Headers built by hand
 */

/* An .npy image: magic, version, header length, the header text as given, then data_len bytes 0x11.
 */
static uint8_t *make_npy(int major, const char *header, size_t data_len, size_t *out_len)
{
    size_t hlen = strlen(header);
    size_t prefix = major == 1 ? 10 : 12;
    size_t len = prefix + hlen + data_len;
    uint8_t *b = malloc(len);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (uint8_t)major;
    b[7] = 0;
    for (size_t i = 0; i < prefix - 8; i++)
        b[8 + i] = (uint8_t)(hlen >> (8 * i));
    memcpy(b + prefix, header, hlen);
    memset(b + prefix + hlen, 0x11, data_len);
    *out_len = len;
    return b;
}

/* Parses a hand-made header; returns the status and leaves the message in err. */
static rd_status parse_header(int major, const char *header, size_t data_len, rd_tensor *t, rd_error *err)
{
    size_t len;
    uint8_t *b = make_npy(major, header, data_len, &len);
    rd_status st = rd_npy_parse(b, len, "x.npy", t, err);
    free(b);
    return st;
}

/* Spacing, quotes, key order and spellings numpy and other writers produce are all accepted. */
static void test_tolerant_headers(void)
{
    static const struct {
        const char *header;
        rd_dtype dtype;
        int rank;
        int64_t dim0;
    } cases[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", RD_DT_F32, 2, 2},
        {"{'descr':'<f4','fortran_order':False,'shape':(2,3)}", RD_DT_F32, 2, 2},
        {"{ \"shape\" : ( 2 , 3 , ) ,\n \"fortran_order\" : False , \"descr\" : \"<f4\" }   \n", RD_DT_F32, 2, 2},
        {"{'descr': '|f4', 'fortran_order': False, 'shape': (6,), }", RD_DT_F32, 1, 6},
        {"{'descr': 'f4', 'fortran_order': False, 'shape': (6,), }", RD_DT_F32, 1, 6},
        {"{'descr': '=f4', 'fortran_order': False, 'shape': (6,), }", RD_DT_F32, 1, 6},
        {"{'descr': '<b1', 'fortran_order': False, 'shape': (24,), }", RD_DT_BOOL, 1, 24},
        {"{'descr': 'b1', 'fortran_order': False, 'shape': (24,), }", RD_DT_BOOL, 1, 24},
        {"{'descr': 'u1', 'fortran_order': False, 'shape': (24,), }", RD_DT_U8, 1, 24},
        {"{'descr': '<i1', 'fortran_order': False, 'shape': (24,), }", RD_DT_I8, 1, 24},
        {"{'descr': '>u1', 'fortran_order': False, 'shape': (24,), }", RD_DT_U8, 1, 24},
        {"{'descr': '<i8', 'fortran_order': False, 'shape': (3L,), }", RD_DT_I64, 1, 3}, /* Python 2 */
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (6,), }", RD_DT_F32, 1, 6},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-0,), }", RD_DT_F32, 1, 0},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (), }", RD_DT_F32, 0, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        /* the data fills the rest exactly: 24 bytes for every shape above but (-0,) and () */
        size_t data_len = cases[k].rank == 0 ? 4 : cases[k].dim0 == 0 ? 0 : 24;
        for (int major = 1; major <= 3; major++) {
            rd_tensor t;
            rd_error err;
            rd_status st = parse_header(major, cases[k].header, data_len, &t, &err);
            if (st != RD_OK)
                fprintf(stderr, "\ncase %zu: %s\n", k, err.msg);
            CU_ASSERT_EQUAL(st, RD_OK);
            CU_ASSERT_EQUAL(t.dtype, cases[k].dtype);
            CU_ASSERT_EQUAL(t.rank, cases[k].rank);
            if (t.rank) {
                CU_ASSERT_EQUAL(t.dims[0], cases[k].dim0);
            }
            rd_tensor_fini(&t);
        }
    }
}

/* A hand-made Fortran 1-d file and a Fortran 2x3 u1 whose transposition is easy to see. */
static void test_fortran_by_hand(void)
{
    size_t len;
    uint8_t *b = make_npy(1, "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }", 6, &len);
    for (int i = 0; i < 6; i++)
        b[len - 6 + (size_t)i] = (uint8_t)i; /* column-major: a[0,0]=0 a[1,0]=1 a[0,1]=2 ... */
    rd_tensor t;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_npy_parse(b, len, "f.npy", &t, &err), RD_OK);
    static const uint8_t want[6] = {0, 2, 4, 1, 3, 5};
    CU_ASSERT_EQUAL(memcmp(t.data, want, 6), 0);
    rd_tensor_fini(&t);
    free(b);
}

typedef struct bad_case {
    const char *header;
    size_t data_len;
    rd_status code;
    const char *msg; /* substring of the message */
} bad_case;

static void test_malformed_headers(void)
{
    static const bad_case cases[] = {
        /* the example of the brief, to the byte: the dict starts at byte 10 */
        {"{'descr' '<f4', 'fortran_order': False, 'shape': (2,), }", 8, RD_E_PARSE,
         "x.npy: header byte 19: expected ':' after key 'descr', found '''"},
        {"{'descr': '<f4', 'fortran_order': False, }", 8, RD_E_PARSE,
         "x.npy: header byte 10: the header dict has no 'shape' key"},
        {"{'fortran_order': False, 'shape': (2,), }", 8, RD_E_PARSE, "no 'descr' key"},
        {"{'descr': '<f4', 'shape': (2,), }", 8, RD_E_PARSE, "no 'fortran_order' key"},
        {"{}", 8, RD_E_PARSE, "no 'descr' key"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'foo': 1}", 8, RD_E_PARSE,
         "header byte 66: unexpected key 'foo'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 8, RD_E_PARSE,
         "duplicate key 'descr'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 8, RD_E_PARSE,
         "expected ',' or '}' after a value, found the end of the header"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,", 8, RD_E_PARSE,
         "expected a dimension in 'shape', found the end of the header"},
        {"{'descr': '<f4", 8, RD_E_PARSE, "header byte 20: unterminated string"},
        {"", 8, RD_E_PARSE, "expected '{' to start the header dict, found the end of the header"},
        {"[1, 2]", 8, RD_E_PARSE, "expected '{'"},
        {"{'descr': '<f4', 'fortran_order': \xe9, 'shape': (2,)}", 8, RD_E_PARSE, "found non-ASCII byte 0xe9"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3), }", 8, RD_E_PARSE,
         "negative dimension -1 in 'shape'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4, -20), }", 8, RD_E_PARSE, "negative dimension -20"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }", 8, RD_E_LIMIT,
         "x.npy: header 'shape'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", 8, RD_E_PARSE,
         "does not fit in 64 bits"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 8, RD_E_LIMIT,
         "more than 8 dimensions"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", 8, RD_E_PARSE, "not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", 8, RD_E_PARSE,
         "expected '(' to start the 'shape' tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }", 8, RD_E_PARSE, "expected ',' or ')'"},
        {"{'descr': '<f4', 'fortran_order': 1, 'shape': (2,), }", 8, RD_E_PARSE,
         "'fortran_order' must be True or False"},
        {"{'descr': '<f4', 'fortran_order': Falsehood, 'shape': (2,), }", 8, RD_E_PARSE,
         "'fortran_order' must be True or False"},
        {"{'descr': 5, 'fortran_order': False, 'shape': (2,), }", 8, RD_E_PARSE, "'descr' must be a string"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x", 8, RD_E_PARSE,
         "unexpected 'x' after the header dict"},
        {"{'descr': [('a', '<f4'), 'fortran_order': False, 'shape': (2,), }", 8, RD_E_PARSE, "unbalanced '}'"},
        {"{'descr': [('a', '<f4')", 8, RD_E_PARSE, "unterminated bracket"},
        {"{'descr': "
         "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
         8, RD_E_PARSE, "nested deeper than 32"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }", 8, RD_E_PARSE,
         "x.npy: truncated data: float32 shape needs 40 bytes after the header at byte 68, the "
         "file has 8"},
        {"{'descr': '<f4\n', 'fortran_order': False, 'shape': (2,), }", 8, RD_E_PARSE, "unterminated string"},
        {"{'descr': '<f4\x01', 'fortran_order': False, 'shape': (2,), }", 8, RD_E_PARSE, "control byte 0x01"},
        {"{'descr': '<f3', 'fortran_order': False, 'shape': (2,), }", 8, RD_E_UNSUPPORTED, "unsupported dtype '<f3'"},
        {"{'descr': '<f16', 'fortran_order': False, 'shape': (2,), }", 8, RD_E_UNSUPPORTED, "unsupported dtype '<f16'"},
        {"{'descr': '', 'fortran_order': False, 'shape': (2,), }", 8, RD_E_UNSUPPORTED, "unsupported dtype ''"},
        /* found by fuzz_npy: empty, but the other dims multiply past int64 (numpy refuses it too)
         */
        {"{'descr': '>i8', 'fortran_order': True, 'shape': (6669999999999999990, 1, 2, 0, 2), }", 8, RD_E_LIMIT,
         "x.npy: header 'shape': empty tensor whose non-zero dims multiply past 2^63"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rd_tensor t;
        rd_error err;
        rd_error_clear(&err);
        rd_status st = parse_header(1, cases[k].header, cases[k].data_len, &t, &err);
        bool ok = st == cases[k].code && strstr(err.msg, cases[k].msg) && strncmp(err.msg, "x.npy: ", 7) == 0;
        if (!ok)
            fprintf(stderr, "\ncase %zu: got %s \"%s\", want %s \"%s\"\n", k, rd_status_str(st), err.msg,
                    rd_status_str(cases[k].code), cases[k].msg);
        CU_ASSERT_TRUE(ok);
        CU_ASSERT_PTR_NULL(t.data);
    }
}

/* Damage before the dict: magic, version, header length. */
static void test_malformed_prefix(void)
{
    static const struct {
        const char *bytes;
        size_t len;
        rd_status code;
        const char *msg;
    } cases[] = {
        {"", 0, RD_E_PARSE, "x.npy: not an .npy file: bad magic at byte 0"},
        {"\x93NUM", 4, RD_E_PARSE, "bad magic"},
        {"\x93NUMPZ\x01\x00\x04\x00{}  ", 14, RD_E_PARSE, "bad magic"},
        {"PK\x03\x04\x14\x00\x00\x00", 8, RD_E_PARSE, "bad magic"},
        {"\x93NUMPY", 6, RD_E_PARSE, "no format version"},
        {"\x93NUMPY\x04\x00\x04\x00{}  ", 14, RD_E_UNSUPPORTED, "x.npy: byte 6: unsupported .npy format version 4.0"},
        {"\x93NUMPY\x01\x01\x04\x00{}  ", 14, RD_E_UNSUPPORTED, "version 1.1"},
        {"\x93NUMPY\x00\x00\x04\x00{}  ", 14, RD_E_UNSUPPORTED, "version 0.0"},
        {"\x93NUMPY\x01\x00\x04", 9, RD_E_PARSE, "the header length needs 2 bytes at byte 8"},
        {"\x93NUMPY\x02\x00\x04\x00\x00", 11, RD_E_PARSE, "the header length needs 4 bytes"},
        {"\x93NUMPY\x01\x00\x40\x00{}  ", 14, RD_E_PARSE,
         "x.npy: byte 8: header length 64 runs past the end of the file (4 bytes after byte 10)"},
        {"\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14, RD_E_PARSE, "header length 4294967295 runs past"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rd_tensor t;
        rd_error err;
        rd_error_clear(&err);
        rd_status st = rd_npy_parse(cases[k].bytes, cases[k].len, "x.npy", &t, &err);
        bool ok = st == cases[k].code && strstr(err.msg, cases[k].msg);
        if (!ok)
            fprintf(stderr, "\nprefix case %zu: got %s \"%s\", want %s \"%s\"\n", k, rd_status_str(st), err.msg,
                    rd_status_str(cases[k].code), cases[k].msg);
        CU_ASSERT_TRUE(ok);
    }
}

/* Every prefix of a valid file fails cleanly; the whole file loads. */
static void test_every_truncation_fails_cleanly(void)
{
    size_t len;
    uint8_t *img = rd_test_read_file(fixture("rank3_f4.npy"), &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(img);
    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *part = malloc(cut ? cut : 1); /* exact size so ASan sees any over-read */
        memcpy(part, img, cut);
        rd_tensor t;
        rd_error err;
        rd_status st = rd_npy_parse(part, cut, "cut.npy", &t, &err);
        CU_ASSERT_EQUAL(st, RD_E_PARSE);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cut.npy"));
        free(part);
    }
    free(img);
}

RD_TEST_REGISTER(register_npy)
{
    RD_SUITE("npy", {"every dtype matches numpy", test_every_dtype_matches_numpy},
             {"ranks 0..8 match numpy", test_ranks_0_to_8_match_numpy},
             {"empty arrays match numpy", test_empty_arrays_match_numpy},
             {"big-endian is converted", test_big_endian_is_converted},
             {"Fortran order is transposed", test_fortran_order_is_transposed},
             {"Fortran order by hand", test_fortran_by_hand}, {"versions 2.0 and 3.0", test_versions_2_and_3},
             {"unsupported dtypes are named", test_unsupported_dtypes_are_named},
             {"round trip every dtype and rank", test_round_trip_every_dtype_and_rank},
             {"save and load", test_save_and_load}, {"write refuses bad tensors", test_write_refuses_bad_tensors},
             {"bool is normalised", test_bool_is_normalised},
             {"numel of empty with huge dims", test_numel_of_empty_with_huge_dims},
             {"tolerant headers", test_tolerant_headers}, {"malformed headers", test_malformed_headers},
             {"malformed prefix", test_malformed_prefix},
             {"every truncation fails cleanly", test_every_truncation_fails_cleanly});
}
