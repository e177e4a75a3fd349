/* test_cmd_report.c: `report --from-rknn` and `compare` driven in-process on hand-written snapshots. */
#include "rd_test.h"
#include "files_in.h"
#include "text_check.h"
#include "rknn_diag/analyzer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char table_a[] = "layer_name               simulator_error                    \n"
                              "                     entire              single             \n"
                              "                  cos      euc        cos      euc          \n"
                              "-----------------------------------------------------------\n"
                              "[Input] x            1.00000 | 0.0       1.00000 | 0.0           \n"
                              "[Conv] y/out:0       0.99000 | 2.5       0.99900 | 0.5           \n";
static const char table_b[] = "layer_name               simulator_error                    \n"
                              "                     entire              single             \n"
                              "                  cos      euc        cos      euc          \n"
                              "-----------------------------------------------------------\n"
                              "[Input] x            1.00000 | 0.0       1.00000 | 0.0           \n"
                              "[Conv] y/out:0       0.90000 | 9.5       0.99900 | 0.5           \n";

static int cli(char **out, char **errs, int argc, char **argv)
{
    size_t lo = 0, le = 0;
    FILE *fo = open_memstream(out, &lo), *fe = open_memstream(errs, &le);
    int code = rd_cli_run(argc, argv, fo, fe);
    fclose(fo);
    fclose(fe);
    return code;
}

static void test_report_from_rknn(void)
{
    char *dir = rd_test_tmpdir("from_rknn");
    char sub[1024], outdir[1024], p[1100];
    rd_test_write_in(dir, "error_analysis.txt", table_a);
    snprintf(sub, sizeof sub, "%s/golden", dir);
    mkdir(sub, 0755);
    rd_test_write_in(sub, "y_out_0.txt", "1\n2\n3\n");
    snprintf(sub, sizeof sub, "%s/simulator", dir);
    mkdir(sub, 0755);
    rd_test_write_in(sub, "y_out_0.txt", "1\n2\n3.5\n");
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    char *argv[] = {"rknn-diag", "report", "--from-rknn", dir, "-o", outdir, NULL};
    char *out = NULL, *errs = NULL;
    int code = cli(&out, &errs, 6, argv);
    CU_ASSERT_EQUAL(code, 0);
    if (code)
        fprintf(stderr, "%s", errs);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "1 simulator, 0 runtime"));
    free(out);
    free(errs);
    snprintf(p, sizeof p, "%s/report.json", outdir);
    size_t len;
    char *json = rd_test_read_file(p, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"sqnr_db\":\t17.48")); /* recomputed: 10 log10(14 / 0.25) */
    free(json);
    snprintf(p, sizeof p, "%s/report.html", outdir);
    CU_ASSERT_EQUAL(access(p, F_OK), 0);

    /* a mangled table: exit 3 naming the file and line */
    rd_test_write_in(dir, "error_analysis.txt",
                     "layer_name               simulator_error                    \n"
                     "                     entire              single             \n"
                     "                  cos      euc        cos      euc          \n"
                     "-----------------------------------------------------------\n"
                     "[Input] x            1.00000 | \n");
    code = cli(&out, &errs, 6, argv);
    CU_ASSERT_EQUAL(code, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(errs, "error_analysis.txt:5:"));
    free(out);
    free(errs);
    char *usage[] = {"rknn-diag", "report", NULL};
    CU_ASSERT_EQUAL(cli(&out, &errs, 2, usage), 2);
    free(out);
    free(errs);
    char *help[] = {"rknn-diag", "report", "--help", NULL};
    CU_ASSERT_EQUAL(cli(&out, &errs, 3, help), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "--from-rknn"));
    free(out);
    free(errs);
    free(dir);
}

static void test_compare(void)
{
    char *dir = rd_test_tmpdir("compare");
    rd_test_write_in(dir, "a.txt", table_a);
    rd_test_write_in(dir, "b.txt", table_b);
    char pa[1024], pb[1024];
    snprintf(pa, sizeof pa, "%s/a.txt", dir);
    snprintf(pb, sizeof pb, "%s/b.txt", dir);
    char *argv[] = {"rknn-diag", "compare", pa, pb, "--top", "1", NULL};
    char *out = NULL, *errs = NULL;
    CU_ASSERT_EQUAL(cli(&out, &errs, 6, argv), 0);
    char *most = strstr(out, "moved most");
    CU_ASSERT_PTR_NOT_NULL_FATAL(most);
    RD_ASSERT_HAS_TEXTS(most, "y/out:0", "-0.09000");
    free(out);
    free(errs);
    char *json[] = {"rknn-diag", "compare", "--json", pa, pb, NULL};
    CU_ASSERT_EQUAL(cli(&out, &errs, 5, json), 0);
    RD_ASSERT_HAS_TEXTS(out, "\"moved_most\"", "\"d_euc\":\t7");
    free(out);
    free(errs);
    char *missing[] = {"rknn-diag", "compare", pa, "/nonexistent/x.txt", NULL};
    CU_ASSERT_EQUAL(cli(&out, &errs, 4, missing), 3);
    free(out);
    free(errs);
    char *one[] = {"rknn-diag", "compare", pa, NULL};
    CU_ASSERT_EQUAL(cli(&out, &errs, 3, one), 2);
    free(out);
    free(errs);
    free(dir);
}

RD_TEST_REGISTER(register_cmd_report)
{
    RD_SUITE("cmd_report", {"report --from-rknn", test_report_from_rknn}, {"compare", test_compare});
}
