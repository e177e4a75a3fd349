/* snapshot_compare.c: see snapshot_compare.h. */
#include "snapshot_compare.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The whole file, or NULL; *len is set. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *g = realloc(buf, cap * 2);
            if (!g) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = g;
            cap *= 2;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

static bool same_file(const char *pa, const char *pb)
{
    size_t la = 0, lb = 0;
    char *x = slurp(pa, &la), *y = slurp(pb, &lb);
    bool same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* Regular files of dir a/sub, each checked against b/sub; -1 on a difference. */
static long compare_one_way(const char *a, const char *b, const char *sub, bool check_content)
{
    char da[4400];
    snprintf(da, sizeof da, "%s/%s", a, sub);
    DIR *d = opendir(da);
    if (!d) {
        fprintf(stderr, "%s: cannot open\n", da);
        return -1;
    }
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char pa[4700], pb[4700];
        snprintf(pa, sizeof pa, "%s/%s", da, e->d_name);
        snprintf(pb, sizeof pb, "%s/%s/%s", b, sub, e->d_name);
        struct stat sa;
        if (stat(pa, &sa) != 0 || !S_ISREG(sa.st_mode))
            continue;
        size_t len = strlen(e->d_name);
        if (len >= 4 && strcmp(e->d_name + len - 4, ".tmp") == 0) {
            fprintf(stderr, "%s: temporary file left behind\n", pa);
            n = -1;
            break;
        }
        struct stat sb;
        if (stat(pb, &sb) != 0 || (check_content && !same_file(pa, pb))) {
            fprintf(stderr, "%s and %s differ\n", pa, pb);
            n = -1;
            break;
        }
        n++;
    }
    closedir(d);
    return n;
}

long rd_test_snapshots_compare(const char *a, const char *b, const char *const *subs)
{
    long total = 0;
    for (size_t i = 0; subs[i]; i++) {
        long n = compare_one_way(a, b, subs[i], true);
        long m = n < 0 ? -1 : compare_one_way(b, a, subs[i], false);
        if (n < 0 || m < 0)
            return -1;
        total += n;
    }
    return total;
}
