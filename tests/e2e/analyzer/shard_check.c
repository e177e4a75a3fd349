/* shard_check.c: shard_check.h. */
#include "shard_check.h"
#include "cli_capture.h"
#include "rd_test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* a and b hold the same files with the same bytes (one level of subfolders: golden/, simulator/) */
static void same_tree(const char *a, const char *b, int depth)
{
    DIR *d = opendir(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    size_t n_files = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "partial.json") == 0)
            continue;
        char pa[4400], pb[4400];
        snprintf(pa, sizeof pa, "%s/%s", a, e->d_name);
        snprintf(pb, sizeof pb, "%s/%s", b, e->d_name);
        if (e->d_type == DT_DIR) {
            if (depth < 1)
                same_tree(pa, pb, depth + 1);
            continue;
        }
        size_t la = 0, lb = 0;
        char *x = rd_test_read_file(pa, &la), *y = rd_test_read_file(pb, &lb);
        bool same = x && y && la == lb && memcmp(x, y, la) == 0;
        if (!same)
            fprintf(stderr, "\n%s and %s differ\n", pa, pb);
        CU_ASSERT(same);
        free(x);
        free(y);
        n_files++;
    }
    closedir(d);
    CU_ASSERT(n_files > 0);
}

static rd_cli_result run(int n_args, const char *const *args, const char *const *more, int n_more)
{
    const char *all[62];
    int n = 0;
    all[n++] = "accuracy";
    for (int i = 0; i < n_args && n < 56; i++)
        all[n++] = args[i];
    for (int i = 0; i < n_more && n < 62; i++)
        all[n++] = more[i];
    return rd_test_cli_argv(n, all);
}

void rd_check_accuracy_shards(const char *base, int n_args, const char *const *args, int n)
{
    char one[4300], merged[4300], shards[16][4300], spec[16][32];
    snprintf(one, sizeof one, "%s/one", base);
    int one_code = 0;
    rd_cli_result r = run(n_args, args, (const char *const[]){"-o", one}, 2);
    one_code = r.code;
    CU_ASSERT(r.code == 0 || r.code == 1);
    rd_test_cli_free(&r);
    const char *merge_args[24] = {"merge"};
    int n_merge = 1;
    for (int k = n - 1; k >= 0 && n <= 16; k--) { /* the last shard first: the order does not matter */
        snprintf(shards[k], sizeof shards[k], "%s/s%d/%d", base, n, k);
        snprintf(spec[k], sizeof spec[k], "%d/%d", k, n);
        r = run(n_args, args, (const char *const[]){"--shard", spec[k], "-o", shards[k]}, 4);
        CU_ASSERT_EQUAL(r.code, 0);
        if (r.code)
            fprintf(stderr, "%s\n", r.errs);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "analysed into"));
        rd_test_cli_free(&r);
        merge_args[n_merge++] = shards[k];
    }
    snprintf(merged, sizeof merged, "%s/m%d", base, n);
    merge_args[n_merge++] = "-o";
    merge_args[n_merge++] = merged;
    r = rd_test_cli_argv(n_merge, merge_args);
    CU_ASSERT_EQUAL(r.code, one_code);
    if (r.code != one_code)
        fprintf(stderr, "%s\n", r.errs);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "snapshot: "));
    rd_test_cli_free(&r);
    same_tree(one, merged, 0);
}
