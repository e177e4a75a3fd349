/*
 * test_cmd_spec.c: the one parser and help printer of the commands (analyzer/cli/cmd_spec.h): option groups,
 * the model positional, the output option, required options, positional limits, named results, every
 * command's --help printed from its spec, and the runner (an_cmd_exec): own arguments from their defaults,
 * subcommands, forms, and the release on every path.
 */
#include "cli_capture.h"
#include "cli_expect.h"
#include "cmd_spec.h"
#include "rd_test.h"

#include <stdlib.h>
#include <string.h>

enum { OPT_FLAG = 1, OPT_NEEDED };

static const an_optspec test_opts[] = {
    {OPT_FLAG, "flag", 'f', NULL, "a flag of the command's own"},
    {OPT_NEEDED, "needed", 0, "X", "an option the command requires"},
};
static const an_need test_needs[] = {{OPT_NEEDED, "missing --needed X"}};

static const an_cmd_spec model_spec = {
    .usage = "rknn-diag t MODEL.onnx -o OUT --needed X",
    .about = "A test command.",
    AN_SPEC_OPTS(test_opts),
    AN_SPEC_NEEDS(test_needs),
    .output = {0, "output", 'o', "OUT", "what the command writes"},
    .output_missing = "missing -o OUT",
    .groups = AN_OG_SAMPLES | AN_OG_SHAPE | AN_OG_QUANT,
    .model = "MODEL.onnx",
};

static const an_cmd_spec pos_spec = {
    .usage = "rknn-diag p [A] [B]",
    .about = "Positionals kept by the parser.",
    .groups = AN_OG_BOARD,
    .max_positional = 2,
};

typedef struct taken {
    bool flag;
    const char *needed;
    int calls;
} taken;

static int take(an_cmd_ctx *ctx, void *user, int id, const char *v)
{
    taken *t = user;
    t->calls++;
    if (id == OPT_FLAG)
        t->flag = true;
    else if (id == OPT_NEEDED && strcmp(v, "bad") == 0)
        return an_usage(ctx, "--needed: bad value");
    else if (id == OPT_NEEDED)
        t->needed = v;
    return AN_GO;
}

typedef struct parsed {
    int rc;
    char *out, *errs;
    an_cmd_args args;
    taken t;
} parsed;

/* A command context for argv (NULL-terminated, argv[0] the command) whose two streams go to memory: *out
   and *errs hold them after capture_end. */
typedef struct capture {
    an_cmd_ctx ctx;
    size_t out_len, errs_len;
} capture;

static void capture_begin(capture *c, const char *const *argv, char **out, char **errs)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    c->ctx = (an_cmd_ctx){.argc = argc,
                          .argv = (char **)argv,
                          .out = open_memstream(out, &c->out_len),
                          .errs = open_memstream(errs, &c->errs_len)};
    CU_ASSERT_PTR_NOT_NULL_FATAL(c->ctx.out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c->ctx.errs);
}

static void capture_end(capture *c)
{
    fclose(c->ctx.out);
    fclose(c->ctx.errs);
}

/* Parses argv (NULL-terminated, argv[0] the command) by spec, capturing both streams. */
static parsed *parse(const an_cmd_spec *spec, const char *const *argv)
{
    parsed *p = calloc(1, sizeof *p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    capture c;
    capture_begin(&c, argv, &p->out, &p->errs);
    p->rc = an_cmd_parse(&c.ctx, spec, &p->args, take, &p->t);
    capture_end(&c);
    return p;
}

static void parsed_free(parsed *p)
{
    an_cmd_args_fini(&p->args);
    free(p->out);
    free(p->errs);
    free(p);
}

static void test_groups_and_model(void)
{
    parsed *p = parse(&model_spec,
                      (const char *const[]){"t", "m.onnx", "-o", "out", "--needed", "x", "-f", "--input-shape",
                                            "in=1,3,8,8", "--dtype", "w16a16i", "-i", "a.npy", "--samples", "4", NULL});
    CU_ASSERT_EQUAL(p->rc, AN_GO);
    CU_ASSERT_STRING_EQUAL(p->args.model, "m.onnx");
    CU_ASSERT_STRING_EQUAL(p->args.q.model_path, "m.onnx");
    CU_ASSERT_STRING_EQUAL(p->args.output, "out");
    CU_ASSERT(p->t.flag);
    CU_ASSERT_STRING_EQUAL(p->t.needed, "x");
    CU_ASSERT_EQUAL(p->t.calls, 2); /* the groups never reach the command */
    CU_ASSERT_EQUAL(p->args.n_shapes, 1);
    CU_ASSERT_STRING_EQUAL(p->args.shapes[0].name, "in");
    CU_ASSERT_EQUAL(p->args.shapes[0].rank, 4);
    CU_ASSERT_EQUAL(p->args.shapes[0].dims[3], 8);
    CU_ASSERT_STRING_EQUAL(p->args.q.flag_dtype, "w16a16i");
    CU_ASSERT_EQUAL(p->args.n_inputs, 1);
    CU_ASSERT_EQUAL(p->args.samples, 4);
    CU_ASSERT_STRING_EQUAL(p->errs, "");
    parsed_free(p);
    /* defaults */
    p = parse(&model_spec, (const char *const[]){"t", "m.onnx", "-o", "out", "--needed", "x", NULL});
    CU_ASSERT_EQUAL(p->rc, AN_GO);
    CU_ASSERT_EQUAL(p->args.samples, 1);
    CU_ASSERT_EQUAL(p->args.n_shapes, 0);
    CU_ASSERT_FALSE(p->t.flag);
    parsed_free(p);
}

/* Each case: the arguments and the start of the usage error, in the order the parser checks. */
static void test_usage_errors(void)
{
    static const struct {
        const char *argv[8];
        const char *msg;
    } cases[] = {
        {{"t", "-o", "out", "--needed", "x", NULL}, "rknn-diag t: missing MODEL.onnx"},
        {{"t", "a.onnx", "b.onnx", NULL}, "rknn-diag t: one model only (got 'a.onnx' and 'b.onnx')"},
        {{"t", "m.onnx", "--needed", "x", NULL}, "rknn-diag t: missing -o OUT"},
        {{"t", "m.onnx", "-o", "out", NULL}, "rknn-diag t: missing --needed X"},
        {{"t", "m.onnx", "--bogus", NULL}, "rknn-diag t: unknown option '--bogus'"},
        {{"t", "m.onnx", "--needed", NULL}, "rknn-diag t: option --needed needs a value (X)"},
        {{"t", "m.onnx", "--flag=1", NULL}, "rknn-diag t: option --flag takes no value"},
        {{"t", "m.onnx", "--needed", "bad", NULL}, "rknn-diag t: --needed: bad value"},
        {{"t", "m.onnx", "--input-shape", "nodims", NULL}, "rknn-diag t: --input-shape expects NAME=D0,D1,..."},
        {{"t", "m.onnx", "--samples", "0", NULL}, "rknn-diag t: --samples expects an integer in 1..100000"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        parsed *p = parse(&model_spec, cases[k].argv);
        CU_ASSERT_EQUAL(p->rc, AN_EXIT_USAGE);
        if (strncmp(p->errs, cases[k].msg, strlen(cases[k].msg)) != 0) {
            fprintf(stderr, "case %zu: expected '%s', got '%s'\n", k, cases[k].msg, p->errs);
            CU_FAIL("usage error");
        }
        parsed_free(p);
    }
}

static void test_positionals(void)
{
    parsed *p = parse(&pos_spec, (const char *const[]){"p", "a", "--serial", "S1", "b", NULL});
    CU_ASSERT_EQUAL(p->rc, AN_GO);
    CU_ASSERT_EQUAL(p->args.n_pos, 2);
    CU_ASSERT_STRING_EQUAL(p->args.pos[1], "b");
    CU_ASSERT_STRING_EQUAL(p->args.adb.serial, "S1");
    CU_ASSERT(p->args.board_given);
    CU_ASSERT_EQUAL(p->t.calls, 0);
    parsed_free(p);
    p = parse(&pos_spec, (const char *const[]){"p", "a", "b", "c", NULL});
    CU_ASSERT_EQUAL(p->rc, AN_EXIT_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(p->errs, "unexpected argument 'c'"));
    parsed_free(p);
    p = parse(&pos_spec, (const char *const[]){"p", "--timeout", "0", NULL});
    CU_ASSERT_EQUAL(p->rc, AN_EXIT_USAGE);
    parsed_free(p);
}

static void test_help(void)
{
    parsed *p = parse(&model_spec, (const char *const[]){"t", "-h", NULL});
    CU_ASSERT_EQUAL(p->rc, AN_EXIT_OK);
    CU_ASSERT_STRING_EQUAL(p->errs, "");
    const char *want[] = {"usage: rknn-diag t MODEL.onnx -o OUT --needed X\n\nA test command.\n\noptions:\n",
                          "-o, --output OUT",
                          "-f, --flag",
                          "--needed X",
                          "-h, --help",
                          "\nsamples analysed:\n",
                          "-i, --inputs FILE",
                          "\nmodel options:\n",
                          "--input-shape",
                          "\nsubgraph cut",
                          "--graph-inputs NAME,..",
                          "--graph-outputs NAME,..",
                          "\nquantization options",
                          "--dataset FILE",
                          "--threads N"};
    const char *at = p->out;
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) { /* in this order */
        const char *hit = strstr(at, want[k]);
        if (!hit) {
            fprintf(stderr, "help lacks '%s' after its previous part:\n%s\n", want[k], p->out);
            CU_FAIL("help");
            break;
        }
        at = hit;
    }
    CU_ASSERT_PTR_NULL(strstr(p->out, "board options")); /* only the groups the command takes */
    CU_ASSERT_PTR_NULL(strstr(p->out, "--rknn-build-log"));
    parsed_free(p);
}

/* ---- the runner ---- */

typedef struct run_args {
    an_cmd_args cmd;
    bool flag;
    const char *needed;
    char *owned; /* made by the take function, released by args_fini */
} run_args;

static int run_counts[2]; /* [0] args_fini calls, [1] main calls, of the current case */

static int run_take(an_cmd_ctx *ctx, void *user, int id, const char *v)
{
    run_args *a = user;
    if (id == OPT_FLAG) {
        a->flag = true;
        free(a->owned);
        a->owned = strdup("taken");
    } else if (strcmp(v, "bad") == 0) {
        return an_usage(ctx, "--needed: bad value");
    } else {
        a->needed = v;
    }
    return AN_GO;
}

static int run_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    run_args *a = args;
    run_counts[1]++;
    fprintf(ctx->out, "main sub=%d flag=%d needed=%s model=%s cmd_in_args=%d\n", cmd->sub, a->flag, a->needed,
            cmd->model ? cmd->model : "-", cmd == &a->cmd);
    return a->flag ? AN_EXIT_GATE : AN_EXIT_OK;
}

static void run_fini(void *args)
{
    run_counts[0]++;
    free(((run_args *)args)->owned);
}

static const char *const run_subs[] = {"first", "second", "third", NULL};
static const run_args run_defaults = {.needed = "default"};

static const an_cmd_spec run_spec = {
    .usage = "rknn-diag r first|second|third MODEL.onnx [--flag] [--needed X]",
    .about = "A test command with subcommands.",
    AN_SPEC_OPTS(test_opts),
    .model = "MODEL.onnx",
    .subcommands = run_subs,
    AN_SPEC_ARGS_CMD(run_args, cmd, &run_defaults),
    .take = run_take,
    .main = run_main,
    .args_fini = run_fini,
};

static int plain_main(an_cmd_ctx *ctx, an_cmd_args *cmd, void *args)
{
    CU_ASSERT_PTR_NULL(args);
    CU_ASSERT_EQUAL(cmd->sub, 0);
    fputs("plain\n", ctx->out);
    return AN_EXIT_OK;
}

static const an_cmd_spec *plain_form(const an_cmd_ctx *ctx)
{
    return ctx->argc > 1 ? &run_spec : NULL;
}

static const an_cmd_spec plain_spec = {
    .usage = "rknn-diag q",
    .about = "A test command without arguments of its own, run by run_spec's spec when it has any.",
    .main = plain_main,
    .form = plain_form,
};

/* Runs argv by spec through an_cmd_exec; returns the exit code, stdout and stderr in *out and *errs. */
static int exec(const an_cmd_spec *spec, const char *const *argv, char **out, char **errs)
{
    capture c;
    capture_begin(&c, argv, out, errs);
    run_counts[0] = run_counts[1] = 0;
    int rc = an_cmd_exec(&c.ctx, spec);
    capture_end(&c);
    return rc;
}

static void test_runner(void)
{
    static const struct {
        const char *argv[8];
        int rc, mains;
        const char *says; /* on stdout for 0 and 1, else on stderr */
    } cases[] = {
        {{"r", "second", "m.onnx", NULL}, 0, 1, "main sub=1 flag=0 needed=default model=m.onnx cmd_in_args=1\n"},
        {{"r", "third", "m.onnx", "--needed", "x", "-f", NULL},
         1,
         1,
         "main sub=2 flag=1 needed=x model=m.onnx cmd_in_args=1\n"},
        {{"r", NULL}, 2, 0, "rknn-diag r: missing subcommand: first, second or third"},
        {{"r", "fourth", "m.onnx", NULL}, 2, 0, "rknn-diag r: unknown subcommand 'fourth' (first, second or third)"},
        {{"r", "--help", NULL}, 0, 0, "usage: rknn-diag r first|second|third MODEL.onnx"},
        {{"r", "first", "--help", NULL}, 0, 0, "usage: rknn-diag r first|second|third MODEL.onnx"},
        /* a usage error after the take function made something: released, main not run */
        {{"r", "first", "m.onnx", "-f", "--needed", "bad", NULL}, 2, 0, "rknn-diag r: --needed: bad value"},
        {{"r", "first", "m.onnx", "-f", "--bogus", NULL}, 2, 0, "rknn-diag r: unknown option '--bogus'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *out = NULL, *errs = NULL;
        int rc = exec(&run_spec, cases[k].argv, &out, &errs);
        const char *said = cases[k].rc <= 1 ? out : errs;
        bool ok = rc == cases[k].rc && run_counts[1] == cases[k].mains && run_counts[0] == 1 &&
                  strncmp(said, cases[k].says, strlen(cases[k].says)) == 0;
        if (!ok) {
            fprintf(stderr, "case %zu: rc %d, main %d, fini %d, out '%s', errs '%s'\n", k, rc, run_counts[1],
                    run_counts[0], out, errs);
            CU_FAIL("runner case");
        }
        free(out);
        free(errs);
    }
}

/* A spec's form picks another spec for some arguments (inspect: a .rknn model). */
static void test_runner_form(void)
{
    char *out = NULL, *errs = NULL;
    CU_ASSERT_EQUAL(exec(&plain_spec, (const char *const[]){"q", NULL}, &out, &errs), 0);
    CU_ASSERT_STRING_EQUAL(out, "plain\n");
    free(out);
    free(errs);
    CU_ASSERT_EQUAL(exec(&plain_spec, (const char *const[]){"q", "second", "m.onnx", NULL}, &out, &errs), 0);
    CU_ASSERT_STRING_EQUAL(out, "main sub=1 flag=0 needed=default model=m.onnx cmd_in_args=1\n");
    CU_ASSERT_EQUAL(run_counts[0], 1);
    free(out);
    free(errs);
}

/* Every command prints its help from its spec, with exit 0, and refuses an unknown option with exit 2. */
static void test_every_command(void)
{
    static const char *const commands[] = {"demo",      "accuracy", "run",        "inspect",   "ops",   "report",
                                           "compare",   "devices",  "pull",       "push",      "shell", "board-emulate",
                                           "board-run", "quantize", "export-qdq", "onnx-edit", "eval",  "merge",
                                           "hybrid",    "prune",    "convert"};
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++) {
        rd_cli_result r = rd_test_cli(commands[k], "--help", NULL);
        char usage[64];
        snprintf(usage, sizeof usage, "usage: rknn-diag %s", commands[k]);
        CU_ASSERT_EQUAL(r.code, 0);
        if (strncmp(r.out, usage, strlen(usage)) != 0 || !strstr(r.out, "-h, --help")) {
            fprintf(stderr, "%s --help:\n%s\n", commands[k], r.out);
            CU_FAIL("help");
        }
        /* every command that takes a model takes the subgraph cut (convert: model_config.yml's subgraphs) */
        static const char *const no_model[] = {"demo", "ops",   "report",        "compare", "devices", "pull",
                                               "push", "shell", "board-emulate", "merge",   "convert"};
        bool takes_model = true;
        for (size_t j = 0; j < sizeof no_model / sizeof no_model[0]; j++)
            takes_model = takes_model && strcmp(no_model[j], commands[k]) != 0;
        CU_ASSERT_EQUAL(strstr(r.out, "--graph-inputs NAME,..") != NULL, takes_model);
        rd_test_cli_free(&r);
        RD_CLI_EXPECT(2, NULL, NULL, commands[k], "--no-such-option");
    }
}

RD_TEST_REGISTER(register_cmd_spec)
{
    RD_SUITE("cmd_spec", {"groups and model", test_groups_and_model}, {"usage errors", test_usage_errors},
             {"positionals", test_positionals}, {"help from the spec", test_help},
             {"every command", test_every_command}, {"runner", test_runner}, {"runner form", test_runner_form});
}
