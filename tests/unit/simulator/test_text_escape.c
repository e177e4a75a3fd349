/* test_text_escape.c: names from outside shown safely (text_escape.c) and read back exactly. */
#include "rd_test.h"
#include "rknn_diag/simulator.h"

#include <stdlib.h>
#include <string.h>

static void expect_escape(const char *in, size_t len, rd_escape_style style, const char *want)
{
    char out[256];
    size_t n = rd_text_escape(in, len, style, out, sizeof out);
    if (strcmp(out, want) != 0)
        fprintf(stderr, "\n  escape: got '%s', want '%s'\n", out, want);
    CU_ASSERT_STRING_EQUAL(out, want);
    CU_ASSERT_EQUAL(n, strlen(want));
    CU_ASSERT_EQUAL(rd_text_needs_escape(in, len, style), strcmp(in, want) != 0 || len != strlen(in));
}

#define ESC(lit, style, want) expect_escape(lit, sizeof lit - 1, style, want)

static void test_display(void)
{
    ESC("conv1/Conv_output_0", RD_ESC_DISPLAY, "conv1/Conv_output_0");
    ESC("caf\xc3\xa9 \xe5\x90\x8d\xe5\x89\x8d \xf0\x9f\x98\x80", RD_ESC_DISPLAY,
        "caf\xc3\xa9 \xe5\x90\x8d\xe5\x89\x8d \xf0\x9f\x98\x80"); /* any language, emoji: kept */
    ESC("a\\b\"c", RD_ESC_DISPLAY, "a\\b\"c");                    /* display keeps backslashes and quotes */
    ESC("\x1b]0;owned\x07\x1b[2J", RD_ESC_DISPLAY, "\\x1b]0;owned\\x07\\x1b[2J");
    ESC("line1\nline2\r\tx\x7f", RD_ESC_DISPLAY, "line1\\nline2\\r\\tx\\x7f");
    ESC("\xc2\x9b"
        "31m",
        RD_ESC_DISPLAY, "\\u009b31m"); /* C1 CSI */
    ESC("abc\xe2\x80\xaeRLO\xe2\x81\xa6x\xe2\x80\xa8", RD_ESC_DISPLAY, "abc\\u202eRLO\\u2066x\\u2028");
    /* invalid UTF-8, byte by byte: stray continuation, 0xff, overlong '/', surrogate, above U+10FFFF, cut */
    ESC("\x80\xff", RD_ESC_DISPLAY, "\\x80\\xff");
    ESC("\xc0\xaf", RD_ESC_DISPLAY, "\\xc0\\xaf");
    ESC("\xed\xa0\x80", RD_ESC_DISPLAY, "\\xed\\xa0\\x80");
    ESC("\xf4\x90\x80\x80", RD_ESC_DISPLAY, "\\xf4\\x90\\x80\\x80");
    ESC("ok\xe5\x90", RD_ESC_DISPLAY, "ok\\xe5\\x90");
    ESC("", RD_ESC_DISPLAY, "");
}

static void roundtrip(const char *in, size_t len, const char *want)
{
    char quoted[512];
    rd_text_escape(in, len, RD_ESC_QUOTED, quoted, sizeof quoted);
    if (want)
        CU_ASSERT_STRING_EQUAL(quoted, want);
    char *back = NULL;
    size_t back_len = 0;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_text_unescape(quoted, strlen(quoted), &back, &back_len, &err), RD_OK);
    CU_ASSERT_EQUAL(back_len, len);
    CU_ASSERT(memcmp(back, in, len) == 0);
    free(back);
}

#define RT(lit, want) roundtrip(lit, sizeof lit - 1, want)

static void test_quoted_roundtrip(void)
{
    RT("a\\b\"c", "a\\\\b\\\"c");
    RT("x\ny\r\tz", "x\\ny\\r\\tz");
    RT("\x1b[31mred\xff\xc2\x9b\xe2\x80\xae", "\\x1b[31mred\\xff\\u009b\\u202e");
    RT("caf\xc3\xa9", "caf\xc3\xa9");
    /* every byte value but NUL, alone and after a lead byte */
    for (int b = 1; b < 256; b++) {
        char s[3] = {(char)b, 'x', '\0'};
        roundtrip(s, 2, NULL);
        char t[3] = {'\xe2', (char)b, '\0'};
        roundtrip(t, 2, NULL);
    }
}

static void test_unescape_errors(void)
{
    static const char *const bad[] = {"\\", "a\\q", "\\x", "\\x0", "\\xzz", "\\x00", "\\u12", "\\ud800", "\\u0000"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *out = (char *)1;
        rd_error err;
        CU_ASSERT_EQUAL(rd_text_unescape(bad[i], strlen(bad[i]), &out, NULL, &err), RD_E_PARSE);
        CU_ASSERT_PTR_NULL(out);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "of a quoted name"));
    }
}

static void test_cut(void)
{
    char buf[8];
    /* "ab\x1b" needs 6 bytes plus NUL: fits; one more escape does not fit whole and is left out */
    CU_ASSERT_EQUAL(rd_text_escape("ab\x1b\x1b", 4, RD_ESC_DISPLAY, buf, sizeof buf), 10);
    CU_ASSERT_STRING_EQUAL(buf, "ab\\x1b");
    char shown[12];
    CU_ASSERT_STRING_EQUAL(rd_text_shown("a very long tensor name", shown, sizeof shown), "a very l...");
    CU_ASSERT_STRING_EQUAL(rd_text_shown("\xe5\x90\x8d\xe5\x90\x8d\xe5\x90\x8d\xe5\x90\x8d", shown, sizeof shown),
                           "\xe5\x90\x8d\xe5\x90\x8d..."); /* cut on a character boundary */
    CU_ASSERT_STRING_EQUAL(rd_text_shown(NULL, shown, sizeof shown), "(null)");
}

RD_TEST_REGISTER(register_text_escape)
{
    RD_SUITE("text_escape", {"display form", test_display}, {"quoted form reads back", test_quoted_roundtrip},
             {"bad escapes", test_unescape_errors}, {"cut to the buffer", test_cut});
}
