/* test_pylit.c: the Python-literal parser of the dict string (Model slot 3) and of log name lists. */
#include "rd_test.h"
#include "rknn_diag/rknn_model.h"

#include <math.h>
#include <string.h>

static rd_rknn_value *parse(const char *text, rd_status want, const char *msg_part)
{
    rd_rknn_value *v = NULL;
    rd_error err;
    rd_error_clear(&err);
    rd_status st = rd_rknn_pylit_parse(text, strlen(text), "dict", 16, &v, &err);
    CU_ASSERT_EQUAL(st, want);
    if (st != want)
        fprintf(stderr, "parse(%s): %s\n", text, err.msg);
    if (msg_part)
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, msg_part));
    return v;
}

static void test_toolkit_dict(void)
{
    rd_rknn_value *v = parse("{'attrs': {'x': {'idx': 0, 'shape': [1, 3, 4, 4], 'is_output': False, "
                             "'mean': [127.5, 0, -1e-05], 'std': (1,), 'reorder': None, 'rgb2bgr': True}}, "
                             "'quant_tab': {'8': {'min': [-612.123], 'max': [inf], 'x': nan, 'y': -inf}}, "
                             "'dynamic_shapes': {}, 'n': np.float32(0.5), 'big': 123456789012345678901234,}",
                             RD_OK, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_EQUAL(v->kind, RD_RKNN_V_MAP);
    const rd_rknn_value *x = rd_rknn_value_get(rd_rknn_value_get(v, "attrs"), "x");
    CU_ASSERT_PTR_NOT_NULL_FATAL(x);
    const rd_rknn_value *mean = rd_rknn_value_get(x, "mean");
    CU_ASSERT(mean->kind == RD_RKNN_V_LIST && mean->n == 3 && mean->items[0].f == 127.5 &&
              mean->items[1].kind == RD_RKNN_V_INT && mean->items[2].f == -1e-05);
    const rd_rknn_value *std = rd_rknn_value_get(x, "std");
    CU_ASSERT(std->kind == RD_RKNN_V_TUPLE && std->n == 1);
    CU_ASSERT(rd_rknn_value_get(x, "reorder")->kind == RD_RKNN_V_NONE);
    CU_ASSERT(rd_rknn_value_get(x, "rgb2bgr")->b);
    CU_ASSERT(rd_rknn_value_get(x, "is_output")->kind == RD_RKNN_V_BOOL && !rd_rknn_value_get(x, "is_output")->b);
    const rd_rknn_value *q = rd_rknn_value_get(rd_rknn_value_get(v, "quant_tab"), "8");
    CU_ASSERT(isinf(rd_rknn_value_get(q, "max")->items[0].f));
    CU_ASSERT(isnan(rd_rknn_value_get(q, "x")->f));
    CU_ASSERT(rd_rknn_value_get(q, "y")->f < 0 && isinf(rd_rknn_value_get(q, "y")->f));
    CU_ASSERT(rd_rknn_value_get(v, "n")->f == 0.5);
    CU_ASSERT(rd_rknn_value_get(v, "big")->kind == RD_RKNN_V_FLOAT && rd_rknn_value_get(v, "big")->f > 1e23);
    CU_ASSERT(rd_rknn_value_get(v, "dynamic_shapes")->kind == RD_RKNN_V_MAP);
    rd_rknn_value_free(v);
}

static void test_strings(void)
{
    rd_rknn_value *v = parse("[\"it's\", 'a\\'b', 'tab\\t', '\\x41\\u00e9\\U0001F600', r'\\n', b'\\x00\\xff', "
                             "'oct\\101', {1: 'int key'}, (), (3)]",
                             RD_OK, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_EQUAL_FATAL(v->n, 10);
    CU_ASSERT_STRING_EQUAL(v->items[0].s, "it's");
    CU_ASSERT_STRING_EQUAL(v->items[1].s, "a'b");
    CU_ASSERT_STRING_EQUAL(v->items[2].s, "tab\t");
    CU_ASSERT_STRING_EQUAL(v->items[3].s, "A\xc3\xa9\xf0\x9f\x98\x80");
    CU_ASSERT_STRING_EQUAL(v->items[4].s, "\\n");
    CU_ASSERT(v->items[5].kind == RD_RKNN_V_BYTES && v->items[5].len == 2 && (uint8_t)v->items[5].s[1] == 0xff);
    CU_ASSERT_STRING_EQUAL(v->items[6].s, "octA");
    CU_ASSERT_STRING_EQUAL(v->items[7].keys[0], "1");
    CU_ASSERT(v->items[8].kind == RD_RKNN_V_TUPLE && v->items[8].n == 0);
    CU_ASSERT(v->items[9].kind == RD_RKNN_V_INT && v->items[9].i == 3); /* (3) is 3 */
    rd_rknn_value_free(v);
}

static void test_malformed(void)
{
    parse("{'attrs': {'x': [1, 2", RD_E_PARSE, "ends"); /* cut short */
    parse("{'attrs': 'open", RD_E_PARSE, "not closed"); /* cut inside a string */
    parse("{'a' 1}", RD_E_PARSE, "expected ':'");
    parse("[1 2]", RD_E_PARSE, "expected ',' or ']'");
    parse("{'a': 1} x", RD_E_PARSE, "end of the text");
    parse("{'a': os.system('x')}", RD_E_PARSE, "Python literal");
    parse("'\\x4'", RD_E_PARSE, "hexadecimal");
    parse("'\\U00110000'", RD_E_PARSE, "U+10FFFF");
    parse("1e", RD_E_PARSE, "number");
    parse("", RD_E_PARSE, "ends");
    parse("[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]", RD_E_LIMIT, "nested");
    rd_rknn_value_free(parse("{'a': 1, 'b': {'c': [1, 2, (3, 4.5e+3)]}}", RD_OK, NULL));
}

RD_TEST_REGISTER(reg_pylit)
{
    RD_SUITE("pylit", {"the toolkit's dict", test_toolkit_dict}, {"strings and escapes", test_strings},
             {"malformed and truncated", test_malformed});
}
