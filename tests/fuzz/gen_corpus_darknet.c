/*
 * gen_corpus_darknet.c: writes the seeds of tests/fuzz/corpus/darknet/ (fuzz_darknet.c's format: uint32 .cfg
 * length, the .cfg, the .weights) from tests/unit/frontends/darknet_synth.c: the small YOLOv3-tiny with weights of
 * header 0.1 and 0.2. Not part of the build; to regenerate:
 *
 *     cc -Itests/unit/frontends tests/fuzz/gen_corpus_darknet.c tests/unit/frontends/darknet_synth.c -o /tmp/gen \
 *        && /tmp/gen tests/fuzz/corpus/darknet
 */
#include "darknet_synth.h"
#include "gen_corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A seed of fuzz_darknet.c's format for weights of header 0.<minor>: NULL when it cannot be made. */
static uint8_t *seed(int minor, size_t *len)
{
    size_t wlen = 0;
    uint8_t *w = dns_weights(dns_tiny_layers, 0, minor, 3, &wlen);
    const uint32_t n = (uint32_t)strlen(dns_tiny_cfg);
    uint8_t *buf = w ? malloc(4 + n + wlen) : NULL;
    if (buf) {
        memcpy(buf, &n, 4);
        memcpy(buf + 4, dns_tiny_cfg, n);
        memcpy(buf + 4 + n, w, wlen);
        *len = 4 + n + wlen;
    }
    free(w);
    return buf;
}

int main(int argc, char **argv)
{
    const char *dir = corpus_dir(argc, argv);
    if (!dir)
        return 2;
    size_t n1 = 0, n2 = 0;
    uint8_t *v01 = seed(1, &n1), *v02 = seed(2, &n2);
    return corpus_save(dir, "tiny_yolo_v01.bin", v01, n1) | corpus_save(dir, "tiny_yolo_v02.bin", v02, n2);
}
