/*
 * replay_main.c: runs a fuzz target without libFuzzer, so that every build (gcc included) exercises
 * it under its sanitizers as a CTest (after zstd's regression_driver.c and SQLite's fuzzcheck).
 *
 *     replay_<name> [-n MUTATIONS] [-s SEED] [-m INDEX [-o OUT]] [-v] PATH...
 *
 * Each PATH is a corpus folder (every regular file in it, in name order) or a single file. A
 * missing folder counts as one empty input. Every input runs as is, then as MUTATIONS (default 300)
 * mutated copies: bit flips, interesting bytes and integers, truncations, insertions, deletions and
 * duplicated spans, drawn from a PRNG seeded by SEED, the file name and the mutation index, so a
 * failing run is repeated exactly by the same command. -v prints each mutation index before running
 * it; -m INDEX runs only that mutation of each input and -o OUT also writes it to OUT (to hand it
 * to a debugger or add it to the corpus). A crash or sanitizer report ends the process with a
 * non-zero status.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FILE_BYTES ((size_t)64 << 20) /* corpus files larger than this are refused */
#define MUTATION_BYTES ((size_t)64 << 20) /* bytes mutated per input: bounds time on big seeds */
#define MAX_STEPS 4                       /* mutation steps applied to one copy */

typedef struct replay_opts {
    long mutations;
    uint64_t seed;
    long only;       /* -1: all mutations, else just this index */
    const char *out; /* where -m writes its input */
    bool verbose;
} replay_opts;

/* splitmix64: a good small PRNG whose whole state is one word held by the caller. */
static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ULL;
    return h;
}

/* Inserts n bytes at pos (buffer has room: len + n <= cap). */
static void insert_at(uint8_t *b, size_t *len, size_t pos, const uint8_t *src, size_t n)
{
    memmove(b + pos + n, b + pos, *len - pos);
    memcpy(b + pos, src, n);
    *len += n;
}

/* One mutation step on b[0..*len), growing at most to cap. */
static void mutate_step(uint8_t *b, size_t *len, size_t cap, uint64_t *s)
{
    static const uint8_t bytes[] = {0,   1,   0x7f, 0x80, 0xff, '0', '9',  '-', ',', '(', ')',
                                    '{', '}', '\'', '"',  ':',  ' ', '\n', '[', ']', 'L'};
    static const uint32_t ints[] = {0,      1,      0x7f,    0x80,       0xff,        0x100,      0x7fff,
                                    0x8000, 0xffff, 0x10000, 0x7fffffff, 0x80000000u, 0xffffffffu};
    size_t n = *len;
    size_t pos = n ? (size_t)(rnd(s) % n) : 0;
    switch (rnd(s) % 8) {
    case 0: /* flip a bit */
        if (n)
            b[pos] ^= (uint8_t)(1u << (rnd(s) % 8));
        break;
    case 1: /* an interesting byte */
        if (n)
            b[pos] = bytes[rnd(s) % sizeof bytes];
        break;
    case 2: /* an interesting little-endian integer */
        if (n >= 4) {
            uint32_t v = ints[rnd(s) % (sizeof ints / sizeof ints[0])];
            pos = (size_t)(rnd(s) % (n - 3));
            for (int i = 0; i < 4; i++)
                b[pos + (size_t)i] = (uint8_t)(v >> (8 * i));
        }
        break;
    case 3: /* truncate */
        *len = n ? (size_t)(rnd(s) % n) : 0;
        break;
    case 4: { /* insert a byte */
        if (n < cap) {
            uint8_t v = rnd(s) & 1 ? bytes[rnd(s) % sizeof bytes] : (uint8_t)rnd(s);
            insert_at(b, len, n ? (size_t)(rnd(s) % (n + 1)) : 0, &v, 1);
        }
        break;
    }
    case 5: { /* delete a span */
        if (n) {
            size_t k = 1 + (size_t)(rnd(s) % (n - pos < 16 ? n - pos : 16));
            memmove(b + pos, b + pos + k, n - pos - k);
            *len = n - k;
        }
        break;
    }
    case 6: { /* duplicate a span in place */
        if (n) {
            size_t k = 1 + (size_t)(rnd(s) % (n - pos < 32 ? n - pos : 32));
            if (n + k <= cap) {
                uint8_t tmp[32];
                memcpy(tmp, b + pos, k);
                insert_at(b, len, pos, tmp, k);
            }
        }
        break;
    }
    default: /* a random byte */
        if (n)
            b[pos] = (uint8_t)rnd(s);
        break;
    }
}

/* Runs the target on an exact-size copy, so that ASan sees any read past the end. */
static void run_one(const uint8_t *data, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) {
        fprintf(stderr, "replay: out of memory\n");
        exit(2);
    }
    memcpy(copy, data, len);
    LLVMFuzzerTestOneInput(copy, len);
    free(copy);
}

static int write_file(const char *path, const uint8_t *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        if (f)
            fclose(f);
        return -1;
    }
    return fclose(f);
}

/* The input as is, then its mutations. Returns the number of runs. */
static long replay_input(const char *label, const uint8_t *data, size_t len, const replay_opts *o)
{
    long runs = 0;
    if (o->only < 0) {
        run_one(data, len);
        runs++;
    }
    size_t cap = len * 2 + 64;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        fprintf(stderr, "replay: out of memory\n");
        exit(2);
    }
    long budget = (long)(MUTATION_BYTES / (len ? len : 1));
    long count = o->mutations < budget ? o->mutations : (budget > 10 ? budget : 10);
    uint64_t base = o->seed ^ hash_str(label);
    for (long j = 0; j < count; j++) {
        if (o->only >= 0 && j != o->only)
            continue;
        uint64_t s = base + (uint64_t)j * 0x2545f4914f6cdd1dULL;
        memcpy(buf, data, len);
        size_t n = len;
        int steps = 1 + (int)(rnd(&s) % MAX_STEPS);
        for (int k = 0; k < steps; k++)
            mutate_step(buf, &n, cap, &s);
        if (o->verbose)
            fprintf(stderr, "%s: mutation %ld (%zu bytes)\n", label, j, n);
        if (o->out && write_file(o->out, buf, n) != 0)
            fprintf(stderr, "replay: cannot write %s: %s\n", o->out, strerror(errno));
        run_one(buf, n);
        runs++;
    }
    free(buf);
    return runs;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || (uint64_t)st.st_size > MAX_FILE_BYTES) {
        fclose(f);
        return NULL;
    }
    *len = (size_t)st.st_size;
    uint8_t *b = malloc(*len ? *len : 1);
    if (b && fread(b, 1, *len, f) != *len) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

static long replay_file(const char *path, const replay_opts *o)
{
    size_t len = 0;
    uint8_t *data = read_file(path, &len);
    if (!data) {
        fprintf(stderr, "replay: cannot read %s (missing, unreadable or over %zu bytes)\n", path, MAX_FILE_BYTES);
        exit(2);
    }
    const char *base = strrchr(path, '/');
    long runs = replay_input(base ? base + 1 : path, data, len, o);
    free(data);
    return runs;
}

static int skip_dot(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

/* A folder: each regular file in name order. A missing folder: the empty input. */
static long replay_path(const char *path, long *inputs, const replay_opts *o)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno != ENOENT) {
            fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
            exit(2);
        }
        fprintf(stderr, "replay: no corpus at %s: running the empty input and its mutations\n", path);
        (*inputs)++;
        return replay_input("empty", (const uint8_t *)"", 0, o);
    }
    if (!S_ISDIR(st.st_mode)) {
        (*inputs)++;
        return replay_file(path, o);
    }
    struct dirent **names;
    int n = scandir(path, &names, skip_dot, alphasort);
    if (n < 0) {
        fprintf(stderr, "replay: cannot list %s: %s\n", path, strerror(errno));
        exit(2);
    }
    long runs = 0;
    for (int i = 0; i < n; i++) {
        size_t plen = strlen(path) + strlen(names[i]->d_name) + 2;
        char *full = malloc(plen);
        if (!full)
            exit(2);
        snprintf(full, plen, "%s/%s", path, names[i]->d_name);
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
            (*inputs)++;
            runs += replay_file(full, o);
        }
        free(full);
        free(names[i]);
    }
    free(names);
    if (n == 0) {
        (*inputs)++;
        runs += replay_input("empty", (const uint8_t *)"", 0, o);
    }
    return runs;
}

int main(int argc, char **argv)
{
    replay_opts o = {.mutations = 300, .seed = 0x5eed, .only = -1};
    int first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        const char *a = argv[first];
        if (strcmp(a, "-v") == 0) {
            o.verbose = true;
        } else if (first + 1 < argc &&
                   (strcmp(a, "-n") == 0 || strcmp(a, "-s") == 0 || strcmp(a, "-m") == 0 || strcmp(a, "-o") == 0)) {
            const char *v = argv[++first];
            char *end;
            errno = 0;
            unsigned long long x = strtoull(v, &end, 0);
            if (a[1] == 'o') {
                o.out = v;
                continue;
            }
            if (errno || *end || end == v) {
                fprintf(stderr, "replay: %s needs a number, got '%s'\n", a, v);
                return 2;
            }
            if (a[1] == 'n')
                o.mutations = (long)x;
            else if (a[1] == 's')
                o.seed = x;
            else
                o.only = (long)x;
        } else {
            fprintf(stderr, "usage: %s [-n MUTATIONS] [-s SEED] [-m INDEX [-o OUT]] [-v] PATH...\n", argv[0]);
            return 2;
        }
    }
    if (first == argc) {
        fprintf(stderr, "usage: %s [-n MUTATIONS] [-s SEED] [-m INDEX [-o OUT]] [-v] PATH...\n", argv[0]);
        return 2;
    }
    long inputs = 0, runs = 0;
    for (int i = first; i < argc; i++)
        runs += replay_path(argv[i], &inputs, &o);
    printf("replay: %ld inputs, %ld runs, no crash\n", inputs, runs);
    return 0;
}
