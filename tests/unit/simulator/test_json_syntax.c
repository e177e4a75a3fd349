/* test_json_syntax.c: rd_json_well_formed tells good JSON from bad without allocating (json_syntax.c). */
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <stdlib.h>
#include <string.h>

#define WELL(lit) CU_ASSERT_TRUE(rd_json_well_formed(lit, sizeof lit - 1, 1000))
#define BAD(lit) CU_ASSERT_FALSE(rd_json_well_formed(lit, sizeof lit - 1, 1000))

static void test_values(void)
{
    WELL("{}");
    WELL(" [ ] ");
    WELL("{\"a\": [1, -2.5e+3, 0.0, 1E-2, true, false, null, \"x\\n\\u00e9\\ud83d\\ude00\"], \"b\": {}}");
    WELL("\"\xc3\xa9\"");      /* raw UTF-8 in a string */
    WELL("[1] trailing text"); /* only the value is checked; readers check what follows it */
    WELL("12345678901234567890123456789012345678901234567890123456789012"); /* 62 characters */
}

static void test_malformed(void)
{
    BAD("");
    BAD("   ");
    BAD("{");
    BAD("[1,]");
    BAD("[,1]");
    BAD("{\"a\" 1}");
    BAD("{\"a\": 1,}");
    BAD("{a: 1}");
    BAD("[01]");
    BAD("[1.]");
    BAD("[.5]");
    BAD("[1e]");
    BAD("[+1]");
    BAD("[-]");
    BAD("[tru]");
    BAD("[nul]");
    BAD("\"unterminated");
    BAD("\"bad escape \\q\"");
    BAD("\"control \x01 char\"");
    BAD("\"lone low \\udc00\"");
    BAD("\"lone high \\ud800\"");
    BAD("\"high then no low \\ud800\\u0041\"");
    BAD("\"short \\u12\"");
    BAD("\xef\xbb\xbf{}"); /* a byte order mark: cJSON does not take it */
    BAD("[1\x0b]");        /* only RFC 8259 blanks */
    BAD("1234567890123456789012345678901234567890123456789012345678901234"); /* 64 characters: cJSON's cut */
    CU_ASSERT_FALSE(rd_json_well_formed(NULL, 5, 1000));
    CU_ASSERT_FALSE(rd_json_well_formed("[1]", 2, 1000)); /* the length bounds the text, not a NUL */
}

static void test_depth(void)
{
    enum { DEEP = 1001 };
    char *s = malloc(2 * DEEP + 1);
    CU_ASSERT_FATAL(s != NULL);
    memset(s, '[', DEEP);
    memset(s + DEEP, ']', DEEP);
    s[2 * DEEP] = '\0';
    CU_ASSERT_FALSE(rd_json_well_formed(s, 2 * DEEP, 1000));        /* 1001 levels: past cJSON's limit */
    CU_ASSERT_TRUE(rd_json_well_formed(s + 1, 2 * DEEP - 2, 1000)); /* 1000 levels: cJSON's most */
    free(s);
}

RD_TEST_REGISTER(register_json_syntax)
{
    RD_SUITE("json_syntax", {"well-formed values", test_values}, {"malformed texts", test_malformed},
             {"nesting depth", test_depth});
}
