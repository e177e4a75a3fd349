/*
 * gen_corpus_rknn.c: writes the seeds of tests/fuzz/corpus/rknn/ with tests/unit/rknn_model/rknn_synth.c (small
 * .rknn files of our own covering the reader's paths: format 6 and 2, the 24-byte header, every parameter
 * union it knows and one it does not, a generator text instead of the dict, an encrypted header). Not part
 * of the build; to regenerate after a change of the writer:
 *
 *     cc -Iflatbuf/include -Isimulator/include -Itests/unit/rknn_model tests/fuzz/gen_corpus_rknn.c
 * tests/unit/rknn_model/rknn_synth.c \
 *        build/flatbuf/librd_flatbuf.a build/simulator/librd_simulator.a \
 *        $(pkg-config --libs libprotobuf-c openblas libpng libjpeg yaml-0.1 libcjson zlib) -lm -lpthread -o /tmp/gen \
 *        && /tmp/gen tests/fuzz/corpus/rknn
 */
#include "rknn_synth.h"

#include <stdio.h>
#include <stdlib.h>

static int save(const rs_model *m, const char *dir, const char *name)
{
    uint8_t *buf;
    size_t len;
    rd_error err;
    if (rs_write(m, &buf, &len, &err) != RD_OK) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    int bad = !f || fwrite(buf, 1, len, f) != len;
    if (f)
        bad |= fclose(f) != 0;
    free(buf);
    if (bad)
        fprintf(stderr, "%s: cannot write\n", path);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_corpus_rknn DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    int bad = 0;
    rs_model m;
    rs_demo(&m);
    bad |= save(&m, dir, "demo_v6.rknn");
    rs_demo(&m);
    m.version = 2;
    bad |= save(&m, dir, "format2_blobs_slot4.rknn");
    rs_demo(&m);
    m.version = 1;
    bad |= save(&m, dir, "toolkit1_header24.rknn");
    rs_demo(&m);
    m.nodes[1].param_type = 20;
    m.nodes[2].param_type = 77;
    bad |= save(&m, dir, "split_and_unknown_params.rknn");
    rs_demo(&m);
    m.nodes[1].param_type = 26;
    m.nodes[2].param_type = 19;
    m.dict = "Generated from compiler version: 1.3.0 (seed)";
    bad |= save(&m, dir, "resize_concat_generator_text.rknn");
    FILE *f = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/encrypted_header.rknn", dir);
    static const unsigned char enc[32] = "CYPTRKNN\x06";
    if (!(f = fopen(path, "wb")) || fwrite(enc, 1, sizeof enc, f) != sizeof enc)
        bad = 1;
    if (f)
        fclose(f);
    return bad;
}
