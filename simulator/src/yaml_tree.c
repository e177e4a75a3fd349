/* yaml_tree.c: one YAML document turned into a small tree with positions, from libyaml's event API.
 *
 * We build our own tree (rather than libyaml's document API) to keep the line and column of every
 * node for messages, to refuse aliases (whose expansion can be exponential) and to bound depth and
 * node counts on hostile input. Scalar typing follows YAML 1.1 as PyYAML applies it, since RKNN's
 * files are written and read by PyYAML. */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <yaml.h>

typedef struct builder {
    const char *name;
    sim_ynode *stack[SIM_YAML_MAX_DEPTH + 1];
    int depth;
    size_t n_nodes;
    sim_ynode *root;
} builder;

void sim_ynode_free(sim_ynode *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n_items; i++)
        sim_ynode_free(n->items[i]);
    free(n->items);
    free(n->str);
    free(n);
}

const char *sim_ynode_kind_name(const sim_ynode *n)
{
    if (!n)
        return "nothing";
    switch (n->kind) {
    case SIM_Y_SCALAR:
        return "a scalar";
    case SIM_Y_SEQ:
        return "a list";
    case SIM_Y_MAP:
        return "a mapping";
    }
    return "a node";
}

/* Appends child to the container on top of the stack (or makes it the root). */
static rd_status attach(builder *b, sim_ynode *child, rd_error *err)
{
    if (b->depth == 0) {
        b->root = child;
        return RD_OK;
    }
    sim_ynode *parent = b->stack[b->depth - 1];
    size_t n = parent->n_items;
    if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) { /* capacity 4, then doubled at each power of two */
        size_t cap = n ? n * 2 : 4;
        sim_ynode **items = sim_malloc_array(cap, sizeof *items);
        if (!items) {
            sim_ynode_free(child);
            return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", b->name);
        }
        if (n)
            memcpy(items, parent->items, n * sizeof *items);
        free(parent->items);
        parent->items = items;
    }
    parent->items[parent->n_items++] = child;
    parent->n = parent->kind == SIM_Y_MAP ? parent->n_items / 2 : parent->n_items;
    return RD_OK;
}

static sim_ynode *new_node(builder *b, sim_ynode_kind kind, const yaml_mark_t *mark)
{
    if (b->n_nodes >= SIM_YAML_MAX_NODES)
        return NULL;
    sim_ynode *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    b->n_nodes++;
    n->kind = kind;
    n->line = (int)mark->line + 1;
    n->col = (int)mark->column + 1;
    return n;
}

static rd_status on_event(builder *b, const yaml_event_t *ev, rd_error *err)
{
    sim_ynode *n = NULL;
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        return rd_errorf(err, RD_E_PARSE, "%s:%zu:%zu: YAML aliases (*%s) are not supported", b->name,
                         ev->start_mark.line + 1, ev->start_mark.column + 1, (const char *)ev->data.alias.anchor);
    case YAML_SCALAR_EVENT:
        n = new_node(b, SIM_Y_SCALAR, &ev->start_mark);
        if (!n)
            break;
        n->len = ev->data.scalar.length;
        n->str = malloc(n->len + 1);
        if (!n->str) {
            sim_ynode_free(n);
            n = NULL;
            break;
        }
        memcpy(n->str, ev->data.scalar.value, n->len);
        n->str[n->len] = '\0';
        n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        return attach(b, n, err);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        if (b->depth >= SIM_YAML_MAX_DEPTH)
            return rd_errorf(err, RD_E_LIMIT, "%s:%zu:%zu: nesting deeper than %d levels", b->name,
                             ev->start_mark.line + 1, ev->start_mark.column + 1, SIM_YAML_MAX_DEPTH);
        bool seq = ev->type == YAML_SEQUENCE_START_EVENT;
        n = new_node(b, seq ? SIM_Y_SEQ : SIM_Y_MAP, &ev->start_mark);
        if (!n)
            break;
        n->flow = seq ? ev->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE
                      : ev->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE;
        rd_status st = attach(b, n, err);
        if (st != RD_OK)
            return st;
        b->stack[b->depth++] = n;
        return RD_OK;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (b->depth > 0)
            b->depth--;
        return RD_OK;
    default:
        return RD_OK;
    }
    if (b->n_nodes >= SIM_YAML_MAX_NODES)
        return rd_errorf(err, RD_E_LIMIT, "%s: more than %u YAML nodes", b->name, SIM_YAML_MAX_NODES);
    return rd_errorf(err, RD_E_NOMEM, "%s: out of memory", b->name);
}

static rd_status syntax_error(const yaml_parser_t *p, const char *name, rd_error *err)
{
    if (p->error == YAML_MEMORY_ERROR)
        return rd_errorf(err, RD_E_NOMEM, "%s: out of memory while parsing YAML", name);
    char ctx[256] = "";
    if (p->context)
        snprintf(ctx, sizeof ctx, " (%s at line %zu)", p->context, p->context_mark.line + 1);
    return rd_errorf(err, RD_E_PARSE, "%s:%zu:%zu: YAML syntax error: %s%s", name, p->problem_mark.line + 1,
                     p->problem_mark.column + 1, p->problem ? p->problem : "unknown problem", ctx);
}

rd_status sim_yaml_parse(const char *buf, size_t len, const char *name, sim_ynode **out, rd_error *err)
{
    *out = NULL;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return rd_errorf(err, RD_E_NOMEM, "%s: cannot initialise the YAML parser", name);
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
    builder b = {.name = name};
    rd_status st = RD_OK;
    int documents = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            st = syntax_error(&parser, name, err);
            break;
        }
        bool done = ev.type == YAML_STREAM_END_EVENT;
        if (ev.type == YAML_DOCUMENT_START_EVENT && ++documents > 1) {
            st = rd_errorf(err, RD_E_PARSE, "%s:%zu: a second YAML document; only one is expected", name,
                           ev.start_mark.line + 1);
            yaml_event_delete(&ev);
            break;
        }
        st = on_event(&b, &ev, err);
        yaml_event_delete(&ev);
        if (st != RD_OK || done)
            break;
    }
    yaml_parser_delete(&parser);
    if (st != RD_OK) {
        sim_ynode_free(b.root);
        return st;
    }
    *out = b.root;
    return RD_OK;
}

bool sim_ynode_is_null(const sim_ynode *n)
{
    if (!n || n->kind != SIM_Y_SCALAR || !n->plain)
        return false;
    const char *s = n->str;
    return s[0] == '\0' || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

bool sim_yscalar_str(const sim_ynode *n, const char **out)
{
    if (!n || n->kind != SIM_Y_SCALAR || sim_ynode_is_null(n) || strlen(n->str) != n->len)
        return false;
    *out = n->str;
    return true;
}

bool sim_yscalar_bool(const sim_ynode *n, bool *out)
{
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
    if (!n || n->kind != SIM_Y_SCALAR || !n->plain)
        return false;
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (!strcmp(n->str, yes[i])) {
            *out = true;
            return true;
        }
        if (!strcmp(n->str, no[i])) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* The text of a plain (unquoted) scalar of 1 to max_len bytes, else NULL: what a number can be written as. */
static const char *plain_number_text(const sim_ynode *n, size_t max_len)
{
    return n && n->kind == SIM_Y_SCALAR && n->plain && n->len > 0 && n->len <= max_len ? n->str : NULL;
}

bool sim_yscalar_int(const sim_ynode *n, int64_t *out)
{
    const char *s = plain_number_text(n, 24);
    if (!s)
        return false;
    size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (s[i] == '\0')
        return false;
    for (size_t k = i; s[k]; k++)
        if (s[k] < '0' || s[k] > '9')
            return false;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE)
        return false;
    *out = v;
    return true;
}

bool sim_yscalar_double(const sim_ynode *n, double *out)
{
    const char *s = plain_number_text(n, 64);
    if (!s)
        return false;
    const char *body = (s[0] == '-' || s[0] == '+') ? s + 1 : s;
    if (!strcmp(body, ".inf") || !strcmp(body, ".Inf") || !strcmp(body, ".INF")) {
        *out = s[0] == '-' ? -INFINITY : INFINITY;
        return true;
    }
    if (!strcmp(s, ".nan") || !strcmp(s, ".NaN") || !strcmp(s, ".NAN")) {
        *out = NAN;
        return true;
    }
    bool digit = false;
    for (const char *c = body; *c; c++) {
        if (*c >= '0' && *c <= '9')
            digit = true;
        else if (*c != '.' && *c != 'e' && *c != 'E' && *c != '-' && *c != '+')
            return false; /* keeps out C's "inf", "nan" and hex floats */
    }
    if (!digit)
        return false;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end != s + n->len || errno == ERANGE)
        return false;
    *out = v;
    return true;
}

rd_status sim_yaml_err(rd_error *err, rd_status code, const char *file, const sim_ynode *at, const char *fmt, ...)
{
    char msg[RD_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rd_errorf(err, code, "%s:%d: %s", file, at ? at->line : 0, msg);
}
