/*
 * gen_corpus_tf.c: writes the seeds of tests/fuzz/corpus/tf/ (the GraphDefs of tests/unit/frontends/tf_synth.c: the
 * test graph, NHWC, the small NCHW graph of the other options and the graph that computes shapes). Not part of the
 * build; to regenerate:
 *
 *     cc -Itests/unit/frontends tests/fuzz/gen_corpus_tf.c tests/unit/frontends/tf_synth.c -o /tmp/gen \
 *        && /tmp/gen tests/fuzz/corpus/tf
 */
#include "tf_synth.h"

#include <stdio.h>
#include <stdlib.h>

static int save(const char *dir, const char *name, uint8_t *buf, size_t len)
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

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    size_t a = 0, b = 0, c = 0;
    uint8_t *ga = tgs_test_graph(7, &a), *gb = tgs_small_graph(&b), *gc = tgs_shape_graph(&c);
    return save(argv[1], "test_graph.pb", ga, a) | save(argv[1], "small_nchw.pb", gb, b) |
           save(argv[1], "shape_ops.pb", gc, c);
}
