/*
 * tf_cut.c: which nodes of a frozen graph are written, as RKNN's load_tensorflow(inputs, outputs) takes them
 * (tf_lower.h): the graph is cut at the inputs asked (internal tensors become graph inputs, what computes them
 * is not read) and only what the outputs asked need is kept, so an op outside that part (preprocessing before
 * the input, training or summary nodes) is no longer refused. Without outputs, every node nothing reads is an
 * output, as before. Names are "node" or "node:K"; a name that is no node gets the graph's closest names.
 */
#include "tf_lower.h"

#include <stdio.h>

#define TF_NAME_NEAR_MAX 256 /* names longer than this are not compared for suggestions */

/* Edit distance of a and b, or limit + 1 once it exceeds limit (lengths at most TF_NAME_NEAR_MAX): only the band
   of cells within limit of the diagonal is computed, so a graph of a million long names is compared quickly. */
static size_t distance(const char *a, const char *b, size_t limit)
{
    size_t la = strlen(a), lb = strlen(b), big = limit + 1;
    if (la > TF_NAME_NEAR_MAX || lb > TF_NAME_NEAR_MAX || (la > lb ? la - lb : lb - la) > limit)
        return big;
    size_t row[TF_NAME_NEAR_MAX + 2];
    for (size_t j = 0; j <= lb + 1 && j <= TF_NAME_NEAR_MAX + 1; j++)
        row[j] = j <= limit ? j : big;
    for (size_t i = 1; i <= la; i++) {
        size_t lo = i > limit ? i - limit : 1, hi = i + limit < lb ? i + limit : lb;
        size_t diag = row[lo - 1];
        row[lo - 1] = lo == 1 && i <= limit ? i : big; /* column lo - 1 is outside this row's band */
        size_t best = row[lo - 1];
        for (size_t j = lo; j <= hi; j++) {
            size_t up = row[j], v = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < v)
                v = up + 1;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            diag = up;
            row[j] = v < big ? v : big;
            if (row[j] < best)
                best = row[j];
        }
        row[hi + 1] = big; /* the next row reads it from above: outside this one's band */
        if (best > limit)
            return big;
    }
    return row[lb];
}

/* "; close names: 'a', 'b'" (the nodes nearest want: containing it, or a few edits away), or the Placeholders. */
static void close_names(const tf_ctx *C, const char *want, char *buf, size_t len)
{
    enum { N_NEAR = 5 };
    size_t near[N_NEAR], score[N_NEAR], n_near = 0;
    size_t limit = strlen(want) / 3, cap = 8; /* a third of the name, 2 to 8 edits */
    limit = limit < 2 ? 2 : limit > cap ? cap : limit;
    for (size_t i = 0; i < C->g->n_node; i++) {
        const char *nm = C->g->node[i]->name;
        size_t d = nm[0] && (strstr(nm, want) || strstr(want, nm)) ? 1 : distance(want, nm, limit);
        if (d > limit)
            continue;
        size_t at = n_near < N_NEAR ? n_near++ : N_NEAR;
        while (at > 0 && score[at - 1] > d) { /* kept sorted by score, first seen first */
            if (at < N_NEAR)
                near[at] = near[at - 1], score[at] = score[at - 1];
            at--;
        }
        if (at < N_NEAR)
            near[at] = i, score[at] = d;
    }
    size_t used = (size_t)snprintf(buf, len, "%s", n_near ? "; close names: " : "; the graph's Placeholders: ");
    for (size_t k = 0; k < n_near && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "%s'%s'", k ? ", " : "", C->g->node[near[k]]->name);
    for (size_t i = 0, k = 0; !n_near && i < C->g->n_node && used < len && k < N_NEAR; i++)
        if (!strcmp(C->g->node[i]->op, "Placeholder"))
            used += (size_t)snprintf(buf + used, len - used, "%s'%s'", k++ ? ", " : "", C->g->node[i]->name);
}

/* The node and output of an asked tensor name (what says which list); -1 with a failure. */
static int asked(tf_ctx *C, const char *what, const char *ref, int *port)
{
    char name[1024], near[600];
    const char *colon = strrchr(ref, ':');
    size_t len = colon ? (size_t)(colon - ref) : strlen(ref);
    *port = 0;
    if (!ref[0] || ref[0] == '^' || len >= sizeof name)
        return tf_fail(C, RD_E_INVAL, "%s: the %s name '%.200s', which is no tensor name (\"node\" or \"node:K\")",
                       C->path, what, ref),
               -1;
    for (const char *d = colon ? colon + 1 : ""; *d; d++)
        if (*d < '0' || *d > '9' || (*port = *port * 10 + (*d - '0')) > TF_MAX_PORT)
            return tf_fail(C, RD_E_INVAL, "%s: the %s name '%s', whose output number is not one", C->path, what, ref),
                   -1;
    memcpy(name, ref, len);
    name[len] = '\0';
    fe_map_slot *s = fe_map_get(&C->index, name);
    if (!s) {
        close_names(C, name, near, sizeof near);
        return tf_fail(C, RD_E_INVAL, "%s: the %s name '%s', which is no node of the graph%s", C->path, what, ref,
                       near),
               -1;
    }
    return (int)(intptr_t)s->val - 1;
}

/* Declares the inputs asked as graph inputs, in their order (a Placeholder with its own shape). */
static rd_status cut_inputs(tf_ctx *C)
{
    const rd_frontend_options *fo = C->fo;
    for (size_t i = 0; i < fo->n_inputs && C->st == RD_OK; i++) {
        int port, n = asked(C, "inputs", fo->inputs[i], &port);
        if (n < 0)
            break;
        if (C->cut[n])
            return tf_fail(C, RD_E_INVAL, "%s: the inputs name '%s' twice (as '%s' too), or two outputs of one node",
                           C->path, C->g->node[n]->name, fo->inputs[i]);
        C->cut[n] = 1;
        C->konst_of[n] = -1; /* a constant asked as an input is one */
        C->cur = (size_t)n;
        if (port == 0 && !strcmp(tf_node_def(C)->op, "Placeholder")) {
            tf_placeholder(C);
            continue;
        }
        const char *v = tf_out_k(C, port);
        if (v && rd_onnx_add_input(C->b, v, RD_DT_F32, -1, NULL, NULL) != RD_OK)
            tf_fail(C, RD_E_NOMEM, "out of memory");
    }
    return C->st;
}

/* The roots of the walk: the nodes of the outputs asked, else every node no input (data or control) names, or
   every node when there is none (a graph made of a cycle: the walk reports it). */
static size_t roots(tf_ctx *C, size_t *out)
{
    size_t n = C->g->n_node, n_roots = 0;
    const rd_frontend_options *fo = C->fo;
    if (fo && fo->n_outputs) {
        for (size_t i = 0; i < fo->n_outputs && C->st == RD_OK; i++) {
            int port, v = asked(C, "outputs", fo->outputs[i], &port);
            if (v >= 0)
                out[n_roots++] = (size_t)v;
        }
        return n_roots;
    }
    bool *named = calloc(n, sizeof *named);
    if (!named)
        return tf_fail(C, RD_E_NOMEM, "out of memory"), 0;
    char name[1024];
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < C->g->node[i]->n_input; k++) {
            const char *ref = C->g->node[i]->input[k];
            ref += ref[0] == '^';
            size_t len = strcspn(ref, ":");
            if (len >= sizeof name)
                continue; /* the walk refuses it if it matters */
            memcpy(name, ref, len);
            name[len] = '\0';
            fe_map_slot *s = fe_map_get(&C->index, name);
            if (s)
                named[(intptr_t)s->val - 1] = true;
        }
    for (size_t i = 0; i < n; i++)
        if (!named[i])
            out[n_roots++] = i;
    free(named);
    for (size_t i = 0; !n_roots && i < n; i++)
        out[i] = i;
    return n_roots ? n_roots : n;
}

/* Depth-first from each root over data inputs, stopping at the cut; order gets each node after its inputs. */
static rd_status walk(tf_ctx *C, const size_t *root, size_t n_roots, size_t *order, size_t *n_order)
{
    size_t n = C->g->n_node;
    uint8_t *state = calloc(n, 1); /* 0 new, 1 on the walk, 2 done */
    size_t *stack = malloc(n * sizeof *stack), *next = calloc(n, sizeof *next);
    if (!state || !stack || !next) {
        free(state), free(stack), free(next);
        return tf_fail(C, RD_E_NOMEM, "out of memory");
    }
    for (size_t r = 0; r < n_roots && C->st == RD_OK; r++) {
        if (state[root[r]])
            continue;
        size_t top = 0;
        stack[top++] = root[r];
        state[root[r]] = 1;
        while (top && C->st == RD_OK) {
            size_t v = stack[top - 1];
            const Rdtf__NodeDef *nd = C->g->node[v];
            if (!C->cut[v] && next[v] < nd->n_input) {
                const char *ref = nd->input[next[v]++];
                if (ref[0] == '^')
                    continue; /* control inputs order side effects; an inference graph has none to keep */
                int port, u = tf_resolve(C, v, ref, &port);
                if (u < 0)
                    break;
                C->read[u] = true;
                if (state[u] == 1)
                    tf_fail(C, RD_E_PARSE, "%s: a cycle: node '%s' reads '%s', which depends on it", C->path, nd->name,
                            C->g->node[u]->name);
                else if (!state[u]) {
                    state[u] = 1;
                    stack[top++] = (size_t)u;
                }
            } else {
                state[v] = 2;
                order[(*n_order)++] = v;
                top--;
            }
        }
    }
    free(state), free(stack), free(next);
    return C->st;
}

rd_status tf_plan(tf_ctx *C, size_t *order, size_t *n_order)
{
    *n_order = 0;
    size_t *root = malloc((C->g->n_node + (C->fo ? C->fo->n_outputs : 0)) * sizeof *root);
    if (!root)
        return tf_fail(C, RD_E_NOMEM, "out of memory");
    if (C->fo && C->fo->n_inputs)
        cut_inputs(C);
    size_t n_roots = C->st == RD_OK ? roots(C, root) : 0;
    if (C->st == RD_OK)
        walk(C, root, n_roots, order, n_order);
    free(root);
    return C->st;
}

void tf_outputs(tf_ctx *C)
{
    const rd_frontend_options *fo = C->fo;
    size_t n_out = 0;
    char w[300];
    for (size_t i = 0; fo && i < fo->n_outputs && C->st == RD_OK; i++) {
        int port, n = asked(C, "outputs", fo->outputs[i], &port);
        if (n < 0)
            return;
        C->cur = (size_t)n;
        if (C->cut[n]) {
            tf_fail(C, RD_E_INVAL, "%s: the outputs name '%s', which is also an input", C->path, fo->outputs[i]);
            return;
        }
        const char *v = C->konst_of[n] >= 0 && port == 0 ? NULL : tf_port_value(C, (size_t)n, port);
        if (!v) {
            tf_fail(C, RD_E_INVAL, "%s: the outputs name '%s', which %s", tf_where(C, w, sizeof w), fo->outputs[i],
                    C->konst_of[n] >= 0 ? "is a constant" : "this node does not write");
            return;
        }
        for (size_t k = 0; k < i; k++)
            if (!strcmp(fo->outputs[k], fo->outputs[i])) {
                tf_fail(C, RD_E_INVAL, "%s: the outputs name '%s' twice", C->path, fo->outputs[i]);
                return;
            }
        if (rd_onnx_add_output(C->b, v, RD_DT_F32, -1, NULL, NULL) != RD_OK)
            tf_fail(C, RD_E_NOMEM, "out of memory");
        n_out++;
    }
    for (size_t i = 0; !(fo && fo->n_outputs) && i < C->g->n_node; i++) {
        if (C->read[i] || !C->value[i] || C->konst_of[i] >= 0 || C->cut[i] || !strcmp(C->g->node[i]->op, "Placeholder"))
            continue;
        if (rd_onnx_add_output(C->b, C->value[i], RD_DT_F32, -1, NULL, NULL) != RD_OK)
            tf_fail(C, RD_E_NOMEM, "out of memory");
        n_out++;
    }
    if (!n_out && C->st == RD_OK)
        tf_fail(C, RD_E_PARSE, "%s: the graph has no output (no node that computes a value nothing reads)", C->path);
}
