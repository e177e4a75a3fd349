/*
 * diagnose.h: `hybrid diagnose` as analysis and result (docs/hybrid.md): the usual configuration mistakes
 * of RKNN's guide, each tried on the simulation (the output cosine it reaches, int8 against FP32 on that
 * variant's inputs), and the direct evidence that names a mistake where the cosine cannot see it. The
 * analysis (hybrid_diagnose.c) fills an an_diagnosis; diagnose_print.c writes it as text or JSON; the
 * command (cli/hybrid_cli_diagnose.c) chooses the exit code.
 */
#ifndef RD_AN_DIAGNOSE_H
#define RD_AN_DIAGNOSE_H

#include "diagnose_evidence.h"
#include "hybrid.h"
#include "quant_setup.h"

#include <stdio.h>

typedef struct variant {
    char name[160];
    an_quant_opts q;
    bool self_calibration; /* calibrate on the analysed samples */
    bool keep;             /* keep the simulation and measure clipping (evidence) */
    an_hyb_score score;
    bool ok;
    char error[200];
    rd_sim *sim; /* kept */
    an_diag_clip clip;
} variant;

/* Preprocessing candidates judged by the first BatchNormalization (golden-independent evidence). */
#define PREP_MAX 8
typedef struct prep_cand {
    an_quant_opts q;
    bool given_ms;                   /* the given mean/std */
    char ms[96];                     /* "mean 127, std 128" */
    double fit[RD_MAX_MODEL_INPUTS]; /* median KL per channel, NaN: no site for that input */
} prep_cand;

typedef struct prep_eval {
    prep_cand c[PREP_MAX];
    size_t n;
    bool any_site;
    an_diag_bn_site site[RD_MAX_MODEL_INPUTS];
    bool has_site[RD_MAX_MODEL_INPUTS];
    size_t best[RD_MAX_MODEL_INPUTS];
    /* RGB/BGR over every BatchNormalization, with the best mean/std: as given and swapped */
    bool rgb_checked;
    double rgb_fit[2];
    size_t rgb_layers;
    char rgb_ms[96];
} prep_eval;

/* One named mistake: what, the evidence, the fix. */
typedef struct finding {
    char what[64];
    char evidence[400];
    char fix[160];
} finding;

#define AN_DIAG_MAX_VARIANTS 16
#define AN_DIAG_MAX_FINDINGS 8

/** What the diagnosis found: every variant's score, the preprocessing fit, the evidence, the mistakes. */
typedef struct an_diagnosis {
    rd_model *m; /* the model as configured */
    size_t n_in; /* its inputs */
    variant v[AN_DIAG_MAX_VARIANTS];
    size_t nv;
    size_t golden_same; /* variants from here on keep the given inputs, hence the given golden */
    size_t v_self;      /* the variant calibrated on the analysed inputs */
    bool given_failed;  /* the configuration as given does not run: v[0].error says why, nothing else is set */
    prep_eval pe;       /* preprocessing against the first BatchNormalization */
    double range_log2;  /* median range against calibrating on the analysed inputs (NaN: unknown) */
    an_diag_wspread ws; /* weight channel spread */
    finding fd[AN_DIAG_MAX_FINDINGS];
    size_t nf; /* likely mistakes */
} an_diagnosis;

/** What to diagnose: the model and its configuration as the command line gives them. */
typedef struct an_diag_request {
    const char *model_path;
    an_quant_opts *q;
    const rd_load_options *lopt; /* --input-shape */
    const char *const *inputs;   /* --inputs, else the first samples lines of the dataset */
    size_t n_inputs, samples;
    int threads;
    FILE *errs;     /* notes of the model's loading */
    FILE *progress; /* one line per variant; NULL: silent */
} an_diag_request;

/**
 * Runs every variant and judges the evidence into *out (an_diagnosis_destroy). A configuration as given that
 * does not run is a result (given_failed), not an error; errors are the model's loading, the preprocessing
 * evaluation and memory.
 */
rd_status an_diagnose(const an_diag_request *req, an_diagnosis **out, rd_error *err);
void an_diagnosis_destroy(an_diagnosis *d);

/** The variants table, the evidence and the likely mistakes, as text. */
void an_diagnosis_print_text(FILE *f, const an_diagnosis *d);
/** The same as one JSON object (docs/hybrid.md); false when it could not be built (out of memory). */
bool an_diagnosis_print_json(FILE *f, const an_diagnosis *d);

#endif
