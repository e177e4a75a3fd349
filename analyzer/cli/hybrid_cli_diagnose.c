/* hybrid_cli_diagnose.c: `rknn-diag hybrid diagnose`: the diagnosis (hybrid/diagnose.h) printed, and its exit
 * code: 3 when the configuration as given does not run or the model cannot be read. */
#include "diagnose.h"
#include "hybrid_cli.h"
#include "term_text.h"

int an_hyb_cli_diagnose(an_cmd_ctx *ctx, hyb_args *a)
{
    rd_load_options lopt = {.input_shapes = a->cmd.shapes, .n_input_shapes = a->cmd.n_shapes};
    an_diag_request req = {.model_path = a->model_path,
                           .q = &a->cmd.q,
                           .lopt = &lopt,
                           .inputs = a->cmd.inputs,
                           .n_inputs = a->cmd.n_inputs,
                           .samples = (size_t)a->cmd.samples,
                           .threads = rd_pool_threads(a->cmd.q.pool),
                           .errs = ctx->errs,
                           .progress = a->json ? NULL : ctx->errs};
    an_diagnosis *d = NULL;
    rd_error err = {0};
    if (an_diagnose(&req, &d, &err) != RD_OK)
        return an_fail(ctx, &err);
    int rc = AN_EXIT_OK;
    if (d->given_failed) {
        fputs("rknn-diag hybrid: error: ", ctx->errs);
        an_put_text(ctx->errs, d->v[0].error);
        fputc('\n', ctx->errs);
        rc = AN_EXIT_INPUT;
    } else if (a->json) {
        an_diagnosis_print_json(ctx->out, d);
    } else {
        an_diagnosis_print_text(ctx->out, d);
    }
    an_diagnosis_destroy(d);
    return rc;
}
