/*
 * gen_corpus.h: what the seed generators (gen_corpus_*.c, built by hand as their headers say) share: the
 * corpus folder from the command line and one seed written there.
 */
#ifndef RD_GEN_CORPUS_H
#define RD_GEN_CORPUS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/** The corpus folder, argv[1]; NULL after printing the usage when the command line is not exactly one folder. */
static const char *corpus_dir(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return NULL;
    }
    return argv[1];
}

/** Writes buf[0..len) as dir/name, then frees buf; 0 when written, 1 when buf is NULL (the seed could not be
    made) or the write fails. */
static int corpus_save(const char *dir, const char *name, uint8_t *buf, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = buf ? fopen(path, "wb") : NULL;
    int bad = !f || fwrite(buf, 1, len, f) != len;
    if (f)
        bad |= fclose(f) != 0;
    free(buf);
    return bad;
}

#endif
