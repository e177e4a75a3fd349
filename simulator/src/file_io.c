/* file_io.c: whole-file reads with a size cap, atomic writes (temporary file + rename) and path joins
 * for the small text and image formats (configs, dataset lists, images, .quantization.cfg). */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

rd_status sim_file_read(const char *path, size_t max_bytes, char **out_buf, size_t *out_len, rd_error *err)
{
    *out_buf = NULL;
    *out_len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return rd_errorf(err, errno == ENOENT ? RD_E_NOTFOUND : RD_E_IO, "%s: cannot open: %s", path,
                         strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return rd_errorf(err, RD_E_IO, "%s: not a regular file", path);
    }
    if ((uint64_t)sb.st_size > max_bytes) {
        fclose(f);
        return rd_errorf(err, RD_E_LIMIT, "%s: %lld bytes is above the limit of %zu bytes for this kind of file",
                         path, (long long)sb.st_size, max_bytes);
    }
    size_t len = (size_t)sb.st_size;
    char *buf = malloc(len + 1);
    if (!buf) {
        fclose(f);
        return rd_errorf(err, RD_E_NOMEM, "%s: cannot allocate %zu bytes", path, len + 1);
    }
    size_t got = fread(buf, 1, len, f);
    fclose(f);
    if (got != len) {
        free(buf);
        return rd_errorf(err, RD_E_IO, "%s: short read (%zu of %zu bytes)", path, got, len);
    }
    buf[len] = '\0';
    *out_buf = buf;
    *out_len = len;
    return RD_OK;
}

rd_status sim_file_write_atomic(const char *path, const void *buf, size_t len, rd_error *err)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", path);
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        rd_errorf(err, RD_E_IO, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        return RD_E_IO;
    }
    bool ok = fwrite(buf, 1, len, f) == len;
    ok = (fflush(f) == 0) && ok;
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        rd_errorf(err, RD_E_IO, "%s: write failed: %s", tmp, strerror(errno));
        unlink(tmp);
        free(tmp);
        return RD_E_IO;
    }
    if (rename(tmp, path) != 0) {
        rd_errorf(err, RD_E_IO, "%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
        unlink(tmp);
        free(tmp);
        return RD_E_IO;
    }
    free(tmp);
    return RD_OK;
}

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
