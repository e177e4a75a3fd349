/*
 * gen_corpus_caffe.c: writes the seeds of tests/fuzz/corpus/caffe_prototxt/ (the test net's .prototxt and
 * small nets of the other layer kinds and text forms) and tests/fuzz/corpus/caffe_model/ (the test net's
 * .caffemodel, its InnerProduct blob in the legacy 4-D form) from tests/unit/frontends/caffe_synth.c. Not part of
 * the build; to regenerate (from a configured build-test, for the generated caffe.pb-c.h):
 *
 *     cc -Itests/unit/frontends -Ibuild-test/frontends/gen tests/fuzz/gen_corpus_caffe.c
 * tests/unit/frontends/caffe_synth.c \ build-test/frontends/gen/caffe.pb-c.c -lprotobuf-c -o /tmp/gen && /tmp/gen
 * tests/fuzz/corpus
 */
#include "caffe_synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int save(const char *dir, const char *sub, const char *name, const void *buf, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    FILE *f = fopen(path, "wb");
    int bad = !f || fwrite(buf, 1, len, f) != len;
    if (f)
        bad |= fclose(f) != 0;
    if (bad)
        fprintf(stderr, "cannot write %s\n", path);
    return bad;
}

static const char *const small_nets[][2] = {
    {"legacy_inputs.prototxt", "input: \"b\"\ninput_dim: 1\ninput_dim: 2\ninput_dim: 3\ninput_dim: 3\n"
                               "input: \"a\"\ninput_dim: 1\ninput_dim: 2\ninput_dim: 3\ninput_dim: 3\n"
                               "layer { name: \"m\" type: \"Eltwise\" bottom: \"a\" bottom: \"b\" top: \"m\" "
                               "eltwise_param { operation: MAX } }\n"},
    {"unaries.prototxt",
     "input: \"x\"\ninput_shape { dim: 1 dim: 2 dim: 4 dim: 4 }\n"
     "layer { name: \"s\" type: \"Sigmoid\" bottom: \"x\" top: \"s\" }\n"
     "layer { name: \"t\" type: \"TanH\" bottom: \"s\" top: \"t\" }\n"
     "layer { name: \"sp\" type: \"Split\" bottom: \"t\" top: \"t1\" top: \"t2\" }\n"
     "layer { name: \"r\" type: \"ReLU\" bottom: \"t1\" top: \"r\" relu_param { negative_slope: 0.1 } }\n"
     "layer { name: \"d\" type: \"Dropout\" bottom: \"t2\" top: \"d\" }\n"
     "layer { name: \"i\" type: \"Interp\" bottom: \"r\" bottom: \"d\" top: \"i\" }\n"
     "layer { name: \"p\" type: \"Pooling\" bottom: \"i\" top: \"p\" pooling_param { pool: MAX "
     "kernel_h: 2 kernel_w: 3 stride_h: 2 stride_w: 1 round_mode: FLOOR } }\n"},
    {"text_forms.prototxt", "# comments, ':' before '{', '<' '>' messages, lists and string escapes\n"
                            "name: 'a' \"b\\n\\101\"\ninput: \"x\" input_shape: { dim: [1, 3, 4, 4] }\n"
                            "layer < name: \"c\" type: \"Concat\" bottom: \"x\" bottom: \"x\" top: \"c\"; "
                            "concat_param { axis: 1 } >\n"
                            "layer { name: \"sl\" type: \"Slice\" bottom: \"c\" top: \"s1\" top: \"s2\" top: \"s3\" "
                            "slice_param { slice_point: [1, 4] } }\n"},
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    int bad = save(argv[1], "caffe_prototxt", "net.prototxt", csy_net, strlen(csy_net));
    for (size_t i = 0; i < sizeof small_nets / sizeof small_nets[0]; i++)
        bad |= save(argv[1], "caffe_prototxt", small_nets[i][0], small_nets[i][1], strlen(small_nets[i][1]));
    size_t len = 0;
    uint8_t *w = csy_net_weights(&len);
    bad |= !w || save(argv[1], "caffe_model", "net.caffemodel", w, len);
    free(w);
    return bad;
}
