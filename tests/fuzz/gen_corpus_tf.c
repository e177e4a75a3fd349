/*
 * gen_corpus_tf.c: writes the seeds of tests/fuzz/corpus/tf/ (the GraphDefs of tests/unit/frontends/tf_synth.c: the
 * test graph, NHWC, the small NCHW graph of the other options and the graph that computes shapes). Not part of the
 * build; to regenerate:
 *
 *     cc -Itests/unit/frontends tests/fuzz/gen_corpus_tf.c tests/unit/frontends/tf_synth.c -o /tmp/gen \
 *        && /tmp/gen tests/fuzz/corpus/tf
 */
#include "gen_corpus.h"
#include "tf_synth.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    const char *dir = corpus_dir(argc, argv);
    if (!dir)
        return 2;
    size_t a = 0, b = 0, c = 0;
    uint8_t *ga = tgs_test_graph(7, &a), *gb = tgs_small_graph(&b), *gc = tgs_shape_graph(&c);
    return corpus_save(dir, "test_graph.pb", ga, a) | corpus_save(dir, "small_nchw.pb", gb, b) |
           corpus_save(dir, "shape_ops.pb", gc, c);
}
