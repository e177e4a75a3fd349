/* file_io.c: path joins for files named relative to another (dataset lists, configs, external data).
 * Reading and writing files is fs_read.c's and fs_write.c's. */
#include "internal.h"

char *sim_path_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return sim_strdup(".");
    if (slash == path)
        return sim_strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

char *sim_path_join(const char *dir, const char *rel)
{
    if (rel[0] == '/' || !dir || !dir[0])
        return sim_strdup(rel);
    /* "./a.png" relative to "d" reads better as "d/a.png" in messages */
    while (rel[0] == '.' && rel[1] == '/')
        rel += 2;
    size_t a = strlen(dir), b = strlen(rel);
    char *p = malloc(a + b + 2);
    if (!p)
        return NULL;
    memcpy(p, dir, a);
    size_t k = a;
    if (k == 0 || p[k - 1] != '/')
        p[k++] = '/';
    memcpy(p + k, rel, b + 1);
    return p;
}
