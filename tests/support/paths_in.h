/* paths_in.h: the paths of several files in one folder, written at once (tests only). */
#ifndef RD_TEST_PATHS_IN_H
#define RD_TEST_PATHS_IN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/**
 * rd_test_paths_in(dir, sizeof model, model, "model.onnx", snap, "snap", NULL): each buffer (of at least
 * size bytes) after size receives dir + "/" + the name that follows it, up to a NULL buffer.
 */
static inline void rd_test_paths_in(const char *dir, size_t size, ...)
{
    va_list ap;
    va_start(ap, size);
    for (char *dst = va_arg(ap, char *); dst; dst = va_arg(ap, char *))
        snprintf(dst, size, "%s/%s", dir, va_arg(ap, const char *));
    va_end(ap);
}

#endif
