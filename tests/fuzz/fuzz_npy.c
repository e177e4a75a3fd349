/*
 * fuzz_npy.c: libFuzzer target for .npy parsing (rd_npy_parse), with a write-then-read oracle and the
 * file reader as a second oracle.
 *
 * Whatever parses must serialise with rd_npy_write and parse back to the same dtype, shape and
 * bytes; whatever fails must fail with a real status and a message naming the file. The same bytes
 * as a file (a memfd) must give rd_npy_load, which reads the header first and then the data, the same
 * status and tensor. Any violation traps, so the fuzzer reports it like a crash. Inputs are capped at
 * 1 MiB: the reader never allocates more than the data present, so the cap bounds memory and time.
 */
#include "fuzz_input.h"
#include "rknn_diag/simulator.h"
#include "tensor_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_MAX_INPUT ((size_t)1 << 20)
#define FUZZ_NAME "fuzz.npy"

static bool same_tensor(const rd_tensor *a, const rd_tensor *b)
{
    if (!rd_test_same_shape(a, b))
        return false;
    size_t n = rd_tensor_nbytes(a);
    if (n == 0)
        return a->data == NULL && b->data == NULL;
    return a->data && b->data && memcmp(a->data, b->data, n) == 0;
}

/* Failures must say something: a known status, the file name first, no trailing newline. */
static void check_error(rd_status st, const rd_error *err, const rd_tensor *t)
{
    size_t len = strlen(err->msg);
    if (st == RD_OK || st != err->code || st >= RD_STATUS_COUNT)
        __builtin_trap();
    if (strncmp(err->msg, FUZZ_NAME ": ", sizeof FUZZ_NAME + 1) != 0 || err->msg[len - 1] == '\n')
        __builtin_trap();
    if (t->data != NULL)
        __builtin_trap();
}

/* rd_npy_load of the same bytes as a file agrees with rd_npy_parse (st and t). */
static void check_file_reader(const uint8_t *data, size_t size, rd_status st, const rd_tensor *t)
{
    int fd = memfd_create("fuzz_npy", MFD_CLOEXEC);
    if (fd < 0)
        return; /* no memfd here: nothing to compare */
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    rd_tensor f;
    rd_error err;
    rd_status fst = rd_npy_load(path, &f, &err);
    close(fd);
    if (fst != st)
        __builtin_trap();
    if (fst == RD_OK) {
        if (!same_tensor(t, &f))
            __builtin_trap();
        rd_tensor_fini(&f);
    }
}

/* rd_npy_parse, checked against the file reader on the same bytes and, when it refuses, by check_error. */
static rd_status parse_npy(const char *buf, size_t size, const char *name, void *out, rd_error *err)
{
    rd_status st = rd_npy_parse(buf, size, name, out, err);
    check_file_reader((const uint8_t *)buf, size, st, out);
    if (st != RD_OK)
        check_error(st, err, out);
    return st;
}

static void check_npy(void *parsed)
{
    rd_tensor *t = parsed;

    rd_error err;
    void *img = NULL;
    size_t len = 0;
    if (rd_npy_write(t, &img, &len, &err) != RD_OK)
        __builtin_trap(); /* everything we read, we can write */
    rd_tensor back;
    if (rd_npy_parse(img, len, "rewrite.npy", &back, &err) != RD_OK)
        __builtin_trap();
    if (!same_tensor(t, &back))
        __builtin_trap();
    /* writing is deterministic: the re-read tensor serialises to the same image */
    void *img2 = NULL;
    size_t len2 = 0;
    if (rd_npy_write(&back, &img2, &len2, &err) != RD_OK || len2 != len || memcmp(img, img2, len) != 0)
        __builtin_trap();
    free(img2);
    free(img);
    rd_tensor_fini(&back);
    rd_tensor_fini(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd_tensor t;
    return fuzz_parse_input(data, size, FUZZ_MAX_INPUT, FUZZ_NAME, parse_npy, check_npy, &t);
}
