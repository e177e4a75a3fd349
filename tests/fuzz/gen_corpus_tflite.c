/*
 * gen_corpus_tflite.c: writes the seeds of tests/fuzz/corpus/tflite/ with tests/unit/frontends/tflite_synth.c (small
 * .tflite files of our own: the float operator zoo, an int16x8 network, an int8 convolution). Not part of the
 * build; to regenerate after a change of the writer:
 *
 *     cc -Iflatbuf/include -Isimulator/include -Itests/unit/frontends tests/fuzz/gen_corpus_tflite.c \
 *        tests/unit/frontends/tflite_synth.c build-test/flatbuf/librd_flatbuf.a build-test/simulator/librd_simulator.a
 * \
 *        $(pkg-config --libs libprotobuf-c openblas libpng libjpeg yaml-0.1 libcjson zlib) -lm -lpthread \
 *        -fsanitize=address,undefined -o /tmp/gen && /tmp/gen tests/fuzz/corpus/tflite
 */
#include "gen_corpus.h"
#include "tflite_synth.h"

#include <stdio.h>
#include <stdlib.h>

static int save(tfs_model *m, const char *dir, const char *name)
{
    uint8_t *buf;
    size_t len;
    rd_error err;
    int bad = tfs_finish(m, &buf, &len, &err) != RD_OK;
    tfs_destroy(m);
    if (bad) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return 1;
    }
    return corpus_save(dir, name, buf, len);
}

static tfs_model *int8_conv(void)
{
    tfs_model *m = tfs_create();
    int x = tfs_tensor(m, "x", TFS_INT8, 4, (const int32_t[]){1, 3, 3, 2}, NULL, 0);
    tfs_quant(m, x, (const float[]){0.05f}, (const int64_t[]){-10}, 1, 0);
    int8_t w[2 * 2 * 2 * 2] = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 13, -14, 15, -16};
    int wt = tfs_tensor(m, "w", TFS_INT8, 4, (const int32_t[]){2, 2, 2, 2}, w, sizeof w);
    tfs_quant(m, wt, (const float[]){0.1f, 0.2f}, (const int64_t[]){0, 0}, 2, 0);
    int32_t b[2] = {7, -7};
    int bt = tfs_tensor(m, "b", TFS_INT32, 1, (const int32_t[]){2}, b, sizeof b);
    tfs_quant(m, bt, (const float[]){0.005f, 0.01f}, (const int64_t[]){0, 0}, 2, 0);
    int y = tfs_tensor(m, "y", TFS_INT8, 4, (const int32_t[]){1, 3, 3, 2}, NULL, 0);
    tfs_quant(m, y, (const float[]){0.1f}, (const int64_t[]){5}, 1, 0);
    tfs_op(m, 3, (const int[]){x, wt, bt}, 3, &y, 1, 1, (const tfs_field[]){{0, 1, 0}, {1, 4, 1}, {2, 4, 1}, {3, 1, 1}},
           4);
    int q = tfs_tensor(m, "q", TFS_INT8, 4, (const int32_t[]){1, 3, 3, 2}, NULL, 0);
    tfs_quant(m, q, (const float[]){0.2f}, (const int64_t[]){0}, 1, 0);
    tfs_op(m, 114, &y, 1, &q, 1, 0, NULL, 0);
    tfs_io(m, &x, 1, &q, 1);
    return m;
}

int main(int argc, char **argv)
{
    const char *dir = corpus_dir(argc, argv);
    if (!dir)
        return 2;
    int bad = save(tfs_example_zoo(), dir, "zoo_float.tflite");
    bad |= save(tfs_example_int16(), dir, "int16x8_net.tflite");
    bad |= save(int8_conv(), dir, "int8_conv_quantize.tflite");
    return bad;
}
