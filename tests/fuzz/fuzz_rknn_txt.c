/*
 * fuzz_rknn_txt.c: libFuzzer target for RKNN's error_analysis.txt (rd_rknn_txt_parse_ex), both layouts, with
 * a write-then-read oracle: whatever parses is written back in the layout and width the parser saw; that text
 * must parse again, and writing the second result must give the same bytes (the writer's output is a fixed
 * point). Inputs are capped at 256 KiB. A violation traps.
 */
#include "fuzz_input.h"
#include "rknn_diag/reports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT ((size_t)256 << 10)

static char *write_text(const rd_result *r, const rd_rknn_txt_info *info, size_t *len)
{
    rd_rknn_txt_opts o = {.layout = info->layout, .no_comments = !info->has_comments, .label_width = info->label_width};
    char *s = NULL;
    FILE *f = open_memstream(&s, len);
    if (!f)
        return NULL;
    rd_error err;
    if (rd_rknn_txt_write(r, &o, f, &err) != RD_OK)
        __builtin_trap();
    fclose(f);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = fuzz_copy(data, size, FUZZ_MAX_INPUT);
    if (!buf)
        return 0;
    rd_result r1, r2;
    rd_rknn_txt_info i1, i2;
    rd_error err;
    if (rd_rknn_txt_parse_ex(buf, size, "fuzz.txt", &r1, &i1, &err) == RD_OK) {
        size_t n1 = 0, n2 = 0;
        char *t1 = write_text(&r1, &i1, &n1);
        if (t1) {
            if (rd_rknn_txt_parse_ex(t1, n1, "rewritten.txt", &r2, &i2, &err) != RD_OK) {
                fprintf(stderr, "written text does not parse: %s\n", err.msg);
                __builtin_trap();
            }
            if (r2.n_layers != r1.n_layers || i2.layout != i1.layout || i2.n_groups != i1.n_groups)
                __builtin_trap();
            char *t2 = write_text(&r2, &i2, &n2);
            if (t2 && (n1 != n2 || memcmp(t1, t2, n1) != 0)) {
                fprintf(stderr, "second write differs:\n%s\n---\n%s\n", t1, t2);
                __builtin_trap();
            }
            free(t2);
            rd_result_fini(&r2);
        }
        free(t1);
        rd_result_fini(&r1);
    } else if (err.code != RD_E_PARSE && err.code != RD_E_NOMEM) {
        __builtin_trap();
    }
    free(buf);
    return 0;
}
