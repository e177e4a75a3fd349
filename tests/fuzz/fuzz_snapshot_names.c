/*
 * fuzz_snapshot_names.c: libFuzzer target for the snapshot file stems of tensor names (rd_stem_set), with
 * the guarantees of docs/formats.md as the oracle.
 *
 * The input is a list of tensor names separated by '\n' (NUL bytes cut a name; at most 512 names of at
 * most 1 KiB each). Each distinct name is given a stem in order; every stem must be a single safe file
 * name (not empty, not "." or "..", no '/', no byte below 0x20, at most RD_SNAPSHOT_STEM_MAX bytes plus a
 * "~N" suffix), unique ignoring ASCII case, and equal to RKNN's own stem (rd_snapshot_file_stem, cut)
 * when that was still free. A second set fed the same names gives the same stems. Any violation traps.
 */
#include "rknn_diag/reports.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FUZZ_MAX_INPUT (512 * 1024)
#define FUZZ_MAX_NAMES 512
#define FUZZ_MAX_NAME 1024
#define STEM_CAP (RD_SNAPSHOT_STEM_MAX + 32)

static bool safe_stem(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > RD_SNAPSHOT_STEM_MAX + 12 || !strcmp(s, ".") || !strcmp(s, ".."))
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '/' || (unsigned char)s[i] < 0x20)
            return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT)
        return 0;
    char(*names)[FUZZ_MAX_NAME + 1] = calloc(FUZZ_MAX_NAMES, sizeof *names);
    char(*stems)[STEM_CAP] = calloc(FUZZ_MAX_NAMES, sizeof *stems);
    rd_stem_set *a = NULL, *b = NULL;
    rd_error err;
    if (!names || !stems || rd_stem_set_create(&a, &err) != RD_OK || rd_stem_set_create(&b, &err) != RD_OK)
        goto out;
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= size && n < FUZZ_MAX_NAMES; i++) {
        if (i < size && data[i] != '\n')
            continue;
        size_t len = i - start < FUZZ_MAX_NAME ? i - start : FUZZ_MAX_NAME;
        memcpy(names[n], data + start, len);
        names[n][len] = '\0'; /* a NUL inside cuts the name, as C strings do */
        start = i + 1;
        bool seen = false;
        for (size_t k = 0; k < n && !seen; k++)
            seen = strcmp(names[k], names[n]) == 0;
        if (!seen)
            n++;
    }
    for (size_t i = 0; i < n; i++) {
        char plain[STEM_CAP * 2], again[STEM_CAP];
        if (rd_stem_set_take(a, names[i], stems[i], STEM_CAP, &err) != RD_OK)
            goto out; /* out of memory is allowed */
        if (!safe_stem(stems[i]))
            __builtin_trap();
        rd_snapshot_file_stem(names[i], plain, sizeof plain);
        bool plain_free = true;
        for (size_t k = 0; k < i; k++) {
            if (strcasecmp(stems[k], stems[i]) == 0)
                __builtin_trap(); /* two tensors, one file */
            if (strcasecmp(stems[k], plain) == 0)
                plain_free = false;
        }
        if (plain_free && strlen(plain) <= RD_SNAPSHOT_STEM_MAX && strcmp(stems[i], plain) != 0)
            __builtin_trap(); /* RKNN's name, when free, is kept */
        if (rd_stem_set_take(b, names[i], again, sizeof again, &err) != RD_OK)
            goto out;
        if (strcmp(again, stems[i]) != 0)
            __builtin_trap(); /* the same names in the same order give the same files */
    }
out:
    rd_stem_set_destroy(a);
    rd_stem_set_destroy(b);
    free(names);
    free(stems);
    return 0;
}
