/*
 * alloc_fail.c: allocation-failure injection for the test build only (curl's torture tests, SQLite's
 * faultsim, ncnn's OOM tests). docs/internals/faultsim.md says why it is a linker wrapper and what it
 * covers.
 *
 * Linked into rknn-diag-faultsim (and nothing that ships) with `-Wl,--wrap=SYMBOL` for each function
 * below: every call our static libraries make to malloc, calloc, ... lands in __wrap_SYMBOL, which
 * counts it and either fails it or calls the real one (__real_SYMBOL, which is the sanitizer's when the
 * build has one). Libraries that let a program replace their allocator are pointed at the same counter
 * before main runs: cJSON (cJSON_InitHooks) and OpenSSL (CRYPTO_set_mem_functions); protobuf-c and
 * libpng already allocate through our own callbacks, which call malloc and so are counted.
 *
 * Environment:
 *   RD_FAULTSIM_FAIL=N   fail the Nth counted call (1-based) once; 0 or unset: fail nothing
 *   RD_FAULTSIM_COUNT=1  print "rknn-diag faultsim: N allocations" to stderr at exit
 *   RD_FAULTSIM_TRACE=1  print the failed call (function, size) and, with a sanitizer, its stack
 *   RD_FAULTSIM_TRACE=2  print "rknn-diag faultsim site N FUNCTION SITE" for every counted call, SITE
 *                        being the three return addresses above the wrapper: faultsim_loop.sh fails
 *                        the first call of each distinct site (addresses are valid within one run only)
 *
 * Its state is file-scope and mutable, which the product's code never is: this file exists only in
 * the test build. The counter is atomic because simulator workers allocate on their own threads.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <execinfo.h>
#include <netdb.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <dirent.h>
#include <zlib.h>

/* the sanitizers' runtime prints a stack from anywhere; absent (NULL) in a build without one */
void __sanitizer_print_stack_trace(void) __attribute__((weak));

static atomic_ulong calls;      /* counted calls so far */
static unsigned long fail_at;   /* the call to fail, 0: none (set before main, read-only after) */
static int report_count, trace; /* RD_FAULTSIM_COUNT, RD_FAULTSIM_TRACE */

/* One line naming the call by the three frames above its wrapper (frames 0 to 2 are this function,
   fail_now and the wrapper, kept apart by noinline; glibc's unwinder copes with libraries built
   without frame pointers). */
__attribute__((noinline)) static void print_site(unsigned long n, const char *fn)
{
    void *frames[6] = {0};
    int got = backtrace(frames, 6);
    fprintf(stderr, "rknn-diag faultsim site %lu %s", n, fn);
    for (int i = 3; i < 6; i++)
        fprintf(stderr, " %p", i < got ? frames[i] : NULL);
    fputc('\n', stderr);
}

/* Counts one call; true when this is the one to fail (then errno is ENOMEM). */
__attribute__((noinline)) static int fail_now(const char *fn, size_t size)
{
    unsigned long n = atomic_fetch_add(&calls, 1) + 1;
    if (trace == 2)
        print_site(n, fn);
    if (n != fail_at)
        return 0;
    if (trace) {
        fprintf(stderr, "rknn-diag faultsim: failing call %lu: %s(%zu)\n", n, fn, size);
        if (__sanitizer_print_stack_trace)
            __sanitizer_print_stack_trace();
    }
    errno = ENOMEM;
    return 1;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_posix_memalign(void **out, size_t align, size_t n);
char *__real_realpath(const char *path, char *resolved);
FILE *__real_open_memstream(char **buf, size_t *len);
FILE *__real_fdopen(int fd, const char *mode);
DIR *__real_fdopendir(int fd);
DIR *__real_opendir(const char *path);
int __real_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **res);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
gzFile __real_gzdopen(int fd, const char *mode);

void *__wrap_malloc(size_t n)
{
    return fail_now("malloc", n) ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now("calloc", n * size) ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now("realloc", n) ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    return fail_now("strdup", strlen(s) + 1) ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
    return fail_now("strndup", n) ? NULL : __real_strndup(s, n);
}

int __wrap_posix_memalign(void **out, size_t align, size_t n)
{
    return fail_now("posix_memalign", n) ? ENOMEM : __real_posix_memalign(out, align, n);
}

/* realpath allocates only when it is not given a buffer */
char *__wrap_realpath(const char *path, char *resolved)
{
    return !resolved && fail_now("realpath", 0) ? NULL : __real_realpath(path, resolved);
}

FILE *__wrap_open_memstream(char **buf, size_t *len)
{
    return fail_now("open_memstream", 0) ? NULL : __real_open_memstream(buf, len);
}

FILE *__wrap_fdopen(int fd, const char *mode)
{
    return fail_now("fdopen", 0) ? NULL : __real_fdopen(fd, mode);
}

DIR *__wrap_fdopendir(int fd)
{
    return fail_now("fdopendir", 0) ? NULL : __real_fdopendir(fd);
}

DIR *__wrap_opendir(const char *path)
{
    return fail_now("opendir", 0) ? NULL : __real_opendir(path);
}

int __wrap_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **res)
{
    return fail_now("getaddrinfo", 0) ? EAI_MEMORY : __real_getaddrinfo(node, service, hints, res);
}

/* a thread's stack is an allocation too: pthread_create reports EAGAIN when it cannot have one */
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    return fail_now("pthread_create", 0) ? EAGAIN : __real_pthread_create(t, attr, fn, arg);
}

gzFile __wrap_gzdopen(int fd, const char *mode)
{
    return fail_now("gzdopen", 0) ? NULL : __real_gzdopen(fd, mode);
}

/* OpenSSL's hooks carry the caller's file and line */
static void *crypto_malloc(size_t n, const char *file, int line)
{
    return fail_now("OPENSSL_malloc", n) ? NULL : __real_malloc(n);
}

static void *crypto_realloc(void *p, size_t n, const char *file, int line)
{
    return fail_now("OPENSSL_realloc", n) ? NULL : __real_realloc(p, n);
}

static void crypto_free(void *p, const char *file, int line)
{
    free(p);
}

static unsigned long env_ulong(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? strtoul(v, NULL, 10) : 0;
}

static void print_count(void)
{
    fprintf(stderr, "rknn-diag faultsim: %lu allocations\n", (unsigned long)atomic_load(&calls));
}

/* Before main (and before any allocation of ours): read the settings, hook the libraries. */
__attribute__((constructor)) static void faultsim_init(void)
{
    cJSON_InitHooks(&(cJSON_Hooks){.malloc_fn = __wrap_malloc, .free_fn = free});
    CRYPTO_set_mem_functions(crypto_malloc, crypto_realloc, crypto_free);
    /* libcrypto 3.0 crashes when an allocation fails inside its one-time start-up: the default context
       keeps a lock it could not make and EVP_MD_fetch then takes it (found by the eval loop; OpenSSL's
       defect, not ours). So the start-up and the SHA-256 fetch of the shard hashes run here, before
       anything is counted or failed; every later OpenSSL allocation is. */
    OPENSSL_init_crypto(0, NULL);
    EVP_MD_free(EVP_MD_fetch(NULL, "SHA2-256", NULL));
    atomic_store(&calls, 0);
    fail_at = env_ulong("RD_FAULTSIM_FAIL");
    report_count = env_ulong("RD_FAULTSIM_COUNT") != 0;
    trace = (int)env_ulong("RD_FAULTSIM_TRACE");
    if (report_count)
        atexit(print_count);
}
