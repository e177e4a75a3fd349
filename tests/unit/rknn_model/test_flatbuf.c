/*
 * test_flatbuf.c: the FlatBuffer reader on buffers made by the builder, then broken on purpose: every
 * offset, length and alignment the reader follows must be refused with the byte offset named.
 */
#include "rd_test.h"
#include "rknn_diag/flatbuf.h"

#include <stdlib.h>
#include <string.h>

/* root: slot 0 u8 7, slot 1 i32 -3, slot 2 string "hi", slot 3 [int32] {1,2,3}, slot 4 table {slot 0 u64},
   slot 5 [table] of 2, slot 6 [string] {"a","bc"}, slot 7/8 union type 5 -> table, slot 9 f64, slot 10 [ubyte]
   holding a nested buffer */
static uint8_t *make(size_t *len)
{
    rd_fbb *b = rd_fbb_create();
    rd_fbb *nb = rd_fbb_create();
    rd_fbb_ref nroot = rd_fbb_table(nb);
    rd_fbb_add_scalar(nb, nroot, 0, &(int32_t){42}, 4);
    uint8_t *nested;
    size_t nested_len;
    CU_ASSERT_FATAL(rd_fbb_finish(nb, nroot, "NEST", &nested, &nested_len, NULL) == RD_OK);
    rd_fbb_destroy(nb);

    rd_fbb_ref sub = rd_fbb_table(b);
    rd_fbb_add_scalar(b, sub, 0, &(uint64_t){0x1122334455667788ull}, 8);
    rd_fbb_ref e[2];
    for (int i = 0; i < 2; i++) {
        e[i] = rd_fbb_table(b);
        rd_fbb_add_scalar(b, e[i], 1, &(int16_t){(int16_t)(10 + i)}, 2);
    }
    rd_fbb_ref strs[2] = {rd_fbb_string(b, "a"), rd_fbb_string(b, "bc")};
    rd_fbb_ref u = rd_fbb_table(b);
    rd_fbb_add_ref(b, u, 0, rd_fbb_string(b, "union"));
    rd_fbb_ref root = rd_fbb_table(b);
    rd_fbb_add_scalar(b, root, 0, &(uint8_t){7}, 1);
    rd_fbb_add_scalar(b, root, 1, &(int32_t){-3}, 4);
    rd_fbb_add_ref(b, root, 2, rd_fbb_string(b, "hi"));
    rd_fbb_add_ref(b, root, 3, rd_fbb_vector(b, (const int32_t[]){1, 2, 3}, 3, 4, 0));
    rd_fbb_add_ref(b, root, 4, sub);
    rd_fbb_add_ref(b, root, 5, rd_fbb_vector_refs(b, e, 2));
    rd_fbb_add_ref(b, root, 6, rd_fbb_vector_refs(b, strs, 2));
    rd_fbb_add_scalar(b, root, 7, &(uint8_t){5}, 1);
    rd_fbb_add_ref(b, root, 8, u);
    rd_fbb_add_scalar(b, root, 9, &(double){2.5}, 8);
    rd_fbb_add_ref(b, root, 10, rd_fbb_vector(b, nested, nested_len, 1, 8));
    free(nested);
    uint8_t *buf;
    CU_ASSERT_FATAL(rd_fbb_finish(b, root, "TEST", &buf, len, NULL) == RD_OK);
    rd_fbb_destroy(b);
    return buf;
}

static void test_round_trip(void)
{
    size_t len;
    uint8_t *buf = make(&len);
    rd_fb fb;
    rd_fb_table root, t;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_fb_init(&fb, buf, len, "t.bin", 100, &err), RD_OK);
    CU_ASSERT(rd_fb_has_identifier(&fb, "TEST"));
    CU_ASSERT_EQUAL_FATAL(rd_fb_root(&fb, "TEST", &root, &err), RD_OK);
    uint8_t u8;
    int32_t i32;
    double f64;
    CU_ASSERT(rd_fb_u8(&root, 0, 0, &u8, &err) == RD_OK && u8 == 7);
    CU_ASSERT(rd_fb_i32(&root, 1, 0, &i32, &err) == RD_OK && i32 == -3);
    CU_ASSERT(rd_fb_i32(&root, 40, 99, &i32, &err) == RD_OK && i32 == 99); /* absent: default */
    CU_ASSERT(rd_fb_f64(&root, 9, 0, &f64, &err) == RD_OK && f64 == 2.5);
    const char *s;
    size_t n;
    CU_ASSERT(rd_fb_string(&root, 2, &s, &n, &err) == RD_OK && n == 2 && strcmp(s, "hi") == 0);
    CU_ASSERT(rd_fb_string(&root, 33, &s, &n, &err) == RD_OK && s == NULL && n == 0);
    rd_fb_vec v;
    CU_ASSERT_EQUAL(rd_fb_vector(&root, 3, 4, &v, &err), RD_OK);
    CU_ASSERT(v.n == 3 && rd_fb_vec_i32(&v, 2) == 3 && rd_fb_vec_i32(&v, 3) == 0 && rd_fb_vec_u8(&v, 0) == 0);
    bool present;
    CU_ASSERT(rd_fb_table_field(&root, 4, &t, &present, &err) == RD_OK && present && t.depth == 1);
    uint64_t u64;
    CU_ASSERT(rd_fb_u64(&t, 0, 0, &u64, &err) == RD_OK && u64 == 0x1122334455667788ull);
    CU_ASSERT(rd_fb_vector(&root, 5, RD_FB_REF, &v, &err) == RD_OK && v.n == 2);
    int16_t i16;
    CU_ASSERT(rd_fb_vec_table(&v, 1, &t, &err) == RD_OK && rd_fb_i16(&t, 1, 0, &i16, &err) == RD_OK && i16 == 11);
    CU_ASSERT_EQUAL(rd_fb_vec_table(&v, 2, &t, &err), RD_E_INVAL);
    CU_ASSERT(rd_fb_vector(&root, 6, RD_FB_REF, &v, &err) == RD_OK && v.n == 2);
    CU_ASSERT(rd_fb_vec_string(&v, 1, &s, &n, &err) == RD_OK && strcmp(s, "bc") == 0);
    uint8_t type;
    CU_ASSERT(rd_fb_union(&root, 7, 8, &type, &t, &present, &err) == RD_OK && type == 5 && present);
    CU_ASSERT(rd_fb_string(&t, 0, &s, &n, &err) == RD_OK && strcmp(s, "union") == 0);
    CU_ASSERT(rd_fb_union(&root, 30, 31, &type, &t, &present, &err) == RD_OK && type == 0 && !present);
    CU_ASSERT(rd_fb_field_span(&root, 0) >= 1 && rd_fb_field_span(&root, 40) == 0);
    CU_ASSERT(rd_fb_vector(&root, 10, 1, &v, &err) == RD_OK);
    rd_fb nested;
    rd_fb_table nroot;
    CU_ASSERT_EQUAL_FATAL(rd_fb_nested(&v, &nested, &err), RD_OK);
    CU_ASSERT(nested.base == 100 + (size_t)(rd_fb_vec_data(&v) - buf));
    CU_ASSERT(rd_fb_root(&nested, "NEST", &nroot, &err) == RD_OK && rd_fb_i32(&nroot, 0, 0, &i32, &err) == RD_OK &&
              i32 == 42);
    free(buf);
}

/* The reader refuses a corrupt buffer with RD_E_PARSE and names a byte. */
static void expect_parse_at(rd_status st, const rd_error *err, int line)
{
    if (st != RD_E_PARSE)
        fprintf(stderr, "line %d: status %d: %s\n", line, st, st == RD_OK ? "" : err->msg);
    CU_ASSERT_EQUAL(st, RD_E_PARSE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->msg, "byte "));
}
#define expect_parse(st, err) expect_parse_at(st, err, __LINE__)

static uint32_t u32_at(const uint8_t *b, size_t p)
{
    uint32_t v;
    memcpy(&v, b + p, 4);
    return v;
}

static void put_u32(uint8_t *b, size_t p, uint32_t v)
{
    memcpy(b + p, &v, 4);
}

static void test_corrupt(void)
{
    size_t len;
    uint8_t *buf = make(&len);
    rd_fb fb;
    rd_fb_table root;
    rd_error err;
    CU_ASSERT_EQUAL(rd_fb_init(&fb, buf, 7, "t", 0, &err), RD_E_PARSE);
    CU_ASSERT_EQUAL_FATAL(rd_fb_init(&fb, buf, len, "t", 0, &err), RD_OK);
    expect_parse(rd_fb_root(&fb, "XXXX", &root, &err), &err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "identifier 'TEST'"));

    uint32_t rootpos = u32_at(buf, 0);
    put_u32(buf, 0, (uint32_t)len); /* root past the end */
    expect_parse(rd_fb_root(&fb, NULL, &root, &err), &err);
    put_u32(buf, 0, rootpos + 2); /* misaligned */
    expect_parse(rd_fb_root(&fb, NULL, &root, &err), &err);
    put_u32(buf, 0, rootpos);

    int32_t soff;
    memcpy(&soff, buf + rootpos, 4);
    put_u32(buf, rootpos, (uint32_t)(int32_t)(rootpos + 1000)); /* vtable before the buffer */
    expect_parse(rd_fb_root(&fb, NULL, &root, &err), &err);
    put_u32(buf, rootpos, (uint32_t)soff);
    size_t vt = rootpos - (size_t)soff;
    uint16_t vlen;
    memcpy(&vlen, buf + vt, 2);
    uint16_t bad = 3;
    memcpy(buf + vt, &bad, 2); /* odd vtable length */
    expect_parse(rd_fb_root(&fb, NULL, &root, &err), &err);
    memcpy(buf + vt, &vlen, 2);
    CU_ASSERT_EQUAL_FATAL(rd_fb_root(&fb, NULL, &root, &err), RD_OK);

    /* the string of slot 2: length past the end, then no terminator */
    size_t field = rd_fb_field_offset(&root, 2);
    size_t str = field + u32_at(buf, field);
    uint32_t slen = u32_at(buf, str);
    const char *s;
    put_u32(buf, str, 0x7fffffff);
    expect_parse(rd_fb_string(&root, 2, &s, NULL, &err), &err);
    put_u32(buf, str, slen);
    buf[str + 4 + slen] = 'x';
    expect_parse(rd_fb_string(&root, 2, &s, NULL, &err), &err);
    buf[str + 4 + slen] = 0;
    /* an offset of 0 and one that leads outside */
    uint32_t off = u32_at(buf, field);
    put_u32(buf, field, 0);
    expect_parse(rd_fb_string(&root, 2, &s, NULL, &err), &err);
    put_u32(buf, field, 0xfffffff0u);
    expect_parse(rd_fb_string(&root, 2, &s, NULL, &err), &err);
    put_u32(buf, field, off);

    /* the int vector of slot 3: count too large, and over the element limit */
    rd_fb_vec v;
    field = rd_fb_field_offset(&root, 3);
    size_t vec = field + u32_at(buf, field);
    put_u32(buf, vec, 1u << 24); /* within the element limit, past the buffer */
    expect_parse(rd_fb_vector(&root, 3, 4, &v, &err), &err);
    put_u32(buf, vec, 3);
    fb.max_elems = 2;
    CU_ASSERT_EQUAL(rd_fb_vector(&root, 3, 4, &v, &err), RD_E_LIMIT);
    fb.max_elems = RD_FB_DEFAULT_MAX_ELEMS;
    /* a field read wider than its table allows (the 1-byte field at the end of a table read as u64) */
    uint64_t u64;
    rd_status st = rd_fb_u64(&root, 0, 0, &u64, &err);
    CU_ASSERT(st == RD_E_PARSE || st == RD_OK); /* depends on the layout; never past the buffer */
    /* depth: a tiny bound refuses the sub-table */
    rd_fb_table t;
    bool present;
    fb.max_depth = 0;
    CU_ASSERT_EQUAL(rd_fb_table_field(&root, 4, &t, &present, &err), RD_E_LIMIT);
    CU_ASSERT(!present);
    free(buf);
}

/* Every truncation of a valid buffer: reading all fields never crashes and fails cleanly. */
static void test_truncations(void)
{
    size_t len;
    uint8_t *buf = make(&len);
    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, buf, cut);
        rd_fb fb;
        rd_fb_table root, t;
        rd_fb_vec v;
        rd_error err;
        const char *s;
        bool present;
        if (rd_fb_init(&fb, copy, cut, "cut", 0, &err) == RD_OK && rd_fb_root(&fb, "TEST", &root, &err) == RD_OK) {
            rd_fb_string(&root, 2, &s, NULL, &err);
            rd_fb_vector(&root, 3, 4, &v, &err);
            rd_fb_table_field(&root, 4, &t, &present, &err);
            if (rd_fb_vector(&root, 5, RD_FB_REF, &v, &err) == RD_OK)
                for (uint32_t i = 0; i < v.n; i++)
                    rd_fb_vec_table(&v, i, &t, &err);
        }
        free(copy);
    }
    free(buf);
}

static void test_builder_errors(void)
{
    rd_fbb *b = rd_fbb_create();
    rd_fbb_ref s = rd_fbb_string(b, "x");
    rd_fbb_add_scalar(b, s, 0, &(int32_t){1}, 4); /* not a table */
    uint8_t *out;
    size_t len;
    rd_error err;
    CU_ASSERT_EQUAL(rd_fbb_finish(b, s, NULL, &out, &len, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a table"));
    rd_fbb_destroy(b);
    b = rd_fbb_create();
    rd_fbb_ref t = rd_fbb_table(b);
    rd_fbb_add_ref(b, t, 0, t); /* a cycle */
    CU_ASSERT_EQUAL(rd_fbb_finish(b, t, NULL, &out, &len, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cycle"));
    rd_fbb_destroy(b);
}

RD_TEST_REGISTER(reg_flatbuf)
{
    RD_SUITE("flatbuf", {"builder output reads back", test_round_trip},
             {"corrupt offsets, lengths, alignment, limits", test_corrupt},
             {"every truncation fails cleanly", test_truncations}, {"builder errors", test_builder_errors});
}
