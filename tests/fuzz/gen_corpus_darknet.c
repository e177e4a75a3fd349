/*
 * gen_corpus_darknet.c: writes the seeds of tests/fuzz/corpus/darknet/ (fuzz_darknet.c's format: uint32 .cfg
 * length, the .cfg, the .weights) from tests/unit/frontends/darknet_synth.c: the small YOLOv3-tiny with weights of
 * header 0.1 and 0.2. Not part of the build; to regenerate:
 *
 *     cc -Itests/unit/frontends tests/fuzz/gen_corpus_darknet.c tests/unit/frontends/darknet_synth.c -o /tmp/gen \
 *        && /tmp/gen tests/fuzz/corpus/darknet
 */
#include "darknet_synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int save(const char *dir, const char *name, int minor)
{
    size_t wlen = 0;
    uint8_t *w = dns_weights(dns_tiny_layers, 0, minor, 3, &wlen);
    if (!w)
        return 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    uint32_t n = (uint32_t)strlen(dns_tiny_cfg);
    int bad = !f || fwrite(&n, 4, 1, f) != 1 || fwrite(dns_tiny_cfg, 1, n, f) != n || fwrite(w, 1, wlen, f) != wlen;
    if (f)
        bad |= fclose(f) != 0;
    free(w);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    return save(argv[1], "tiny_yolo_v01.bin", 1) | save(argv[1], "tiny_yolo_v02.bin", 2);
}
