/*
 * accuracy_shard.c: accuracy_shard.h: the hashes that tell the shards of one run apart from any other, the
 * command line a merge runs again, the shard's samples.
 */
#include "accuracy_shard.h"
#include "content_hash.h"

#include <stdlib.h>
#include <string.h>

/* Options that change where results go and how much is printed, not what they are; *with_value: the next
   argument is theirs. */
static bool neutral(const char *arg, bool *with_value)
{
    static const char *const opts[] = {"--output-dir", "--shard", "-o"};
    *with_value = false;
    if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0)
        return true;
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        size_t n = strlen(opts[i]);
        if (strncmp(arg, opts[i], n) == 0) {
            if (arg[n] == '\0')
                *with_value = true;
            if (arg[n] == '\0' || arg[n] == '=' || (i == 2 && arg[n] != '-'))
                return true; /* -oDIR: the short option's value in the same argument */
        }
    }
    return false;
}

rd_status an_acc_keep_argv(int argc, char **argv, an_acc_header *out, rd_error *err)
{
    out->argv = calloc((size_t)argc + 1, sizeof *out->argv);
    if (!out->argv)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    out->argc = 0;
    for (int i = 0; i < argc; i++) {
        bool with_value;
        if (i > 0 && neutral(argv[i], &with_value)) {
            i += with_value;
            continue;
        }
        if (!(out->argv[out->argc] = strdup(argv[i])))
            return rd_errorf(err, RD_E_NOMEM, "out of memory");
        out->argc++;
    }
    return RD_OK;
}

rd_status an_acc_run_hash(const an_quant_opts *q, const char *model_path, int argc, char **argv, char *hex,
                          rd_error *err)
{
    an_hash h;
    rd_status st = an_hash_init(&h, err);
    if (st != RD_OK) {
        an_hash_fini(&h);
        return st;
    }
    an_hash_str(&h, AN_ACC_PARTIAL_FORMAT);
    an_hash_str(&h, rd_version());
    an_acc_header kept = {0};
    st = an_acc_keep_argv(argc, argv, &kept, err);
    for (int i = 0; st == RD_OK && i < kept.argc; i++)
        an_hash_str(&h, kept.argv[i]);
    an_acc_header_fini(&kept);
    const char *files[] = {model_path, q->config_path, q->qcfg_path, q->rknn_path, q->rknn_log_path, q->cfg.dataset};
    for (size_t i = 0; st == RD_OK && i < sizeof files / sizeof files[0]; i++) {
        an_hash_str(&h, files[i] ? "file" : "none"); /* a file given or not is part of the run */
        if (files[i])
            st = an_hash_file(&h, files[i], err);
    }
    rd_dataset ds;
    memset(&ds, 0, sizeof ds);
    if (st == RD_OK && q->cfg.dataset)
        st = rd_dataset_load(q->cfg.dataset, 0, &ds, err);
    for (size_t k = 0; st == RD_OK && k < ds.n_samples * ds.n_inputs; k++)
        st = an_hash_file(&h, ds.paths[k], err);
    rd_dataset_fini(&ds);
    if (st == RD_OK)
        an_hash_hex(&h, hex);
    an_hash_fini(&h);
    return st;
}

rd_status an_acc_shard_hash(const char *run_hex, int k, int n, size_t lo, size_t hi, char *hex, rd_error *err)
{
    an_hash h;
    const uint64_t place[4] = {(uint64_t)k, (uint64_t)n, lo, hi};
    rd_status st = an_hash_init(&h, err);
    if (st == RD_OK) {
        an_hash_str(&h, run_hex);
        an_hash_bytes(&h, place, sizeof place);
        an_hash_hex(&h, hex);
    }
    an_hash_fini(&h);
    return st;
}

rd_status an_acc_dataset_total(const an_quant_opts *q, const rd_model *m, size_t wanted, FILE *errs, size_t *total,
                               rd_error *err)
{
    if (!q->cfg.dataset)
        return rd_errorf(err, RD_E_USAGE, "--shard splits the --samples lines of --dataset FILE: give --dataset");
    rd_dataset ds;
    memset(&ds, 0, sizeof ds);
    rd_status st = rd_dataset_load(q->cfg.dataset, rd_model_input_count(m), &ds, err);
    if (st != RD_OK)
        return st;
    *total = ds.n_samples < wanted ? ds.n_samples : wanted;
    if (wanted > ds.n_samples)
        fprintf(errs, "warning: --samples %zu but %s has %zu samples: analysing %zu\n", wanted, ds.path, ds.n_samples,
                ds.n_samples);
    rd_dataset_fini(&ds);
    return *total ? RD_OK : rd_errorf(err, RD_E_INVAL, "%s: no samples", q->cfg.dataset);
}

rd_status an_acc_load_range(const an_quant_opts *q, const rd_model *m, size_t lo, size_t hi, FILE *errs,
                            rd_tensor **out, rd_error *err)
{
    *out = NULL;
    size_t n_in = rd_model_input_count(m);
    rd_dataset ds;
    memset(&ds, 0, sizeof ds);
    rd_status st = rd_dataset_load(q->cfg.dataset, n_in, &ds, err);
    rd_tensor *t = st == RD_OK ? calloc((hi - lo) * n_in + 1, sizeof *t) : NULL;
    if (st == RD_OK && !t)
        st = rd_errorf(err, RD_E_NOMEM, "out of memory");
    for (size_t k = lo; k < hi && st == RD_OK; k++)
        for (size_t i = 0; i < n_in && st == RD_OK; i++)
            st = an_quant_prepare_sample(q, m, &ds, k, i, errs, &t[(k - lo) * n_in + i], err);
    rd_dataset_fini(&ds);
    if (st != RD_OK) {
        for (size_t k = 0; t && k < (hi - lo) * n_in; k++)
            rd_tensor_fini(&t[k]);
        free(t);
        return st;
    }
    *out = t;
    return RD_OK;
}
