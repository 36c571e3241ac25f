/*
 * example_verify.c - token verification (Leviathan et al., 2023) in C,
 * served to specsim through the C client (specsim.h).
 *
 *     cc -std=c99 -O2 -o example_verify example_verify.c specsim.c -lm
 *     simulate check --external ./example_verify --source dirichlet:V=1000 --gamma 4
 *     simulate check --external ./example_verify --mode step --source dirichlet:V=1000 --gamma 4
 *
 * For each row: draft i is accepted with probability min(1, p(x)/q(x));
 * at the first rejection the correction token is drawn from the
 * normalised residual max(p - q, 0); when every draft is accepted the
 * bonus token is drawn from the last target row. In step mode the
 * verifier first draws its own drafts from q (the rows then arrive as
 * natural logarithms). Seeded rows of a composed batch (--rows) draw from
 * their own seed. It applies no sampling transforms: it declares
 * takes_sampling = 0 (so the harness refuses sampling flags), and with
 * --rows it is correct only for kinds at t=1 without top-k, top-p or
 * min-p (e.g. --rows "t=1,gamma=2,seeded;t=1").
 *
 * SPECSIM_C_BUG plants a bug, for the harness to find:
 *   inclusive   accept while u <= p/q (a coin of exactly 0 then accepts a
 *               draft of target probability 0; sgl-project/sglang 35771)
 *   resample_p  draw the correction token from p instead of the residual
 *   ignore_seed seeded rows draw from the batch's generator, not from their
 *               own seed (specsim_row_rng), so the same request gives other
 *               tokens in another batch
 */
#include "specsim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { BUG_NONE, BUG_INCLUSIVE, BUG_RESAMPLE_P, BUG_IGNORE_SEED };

/* probs copies a row into w as probabilities (exp of logarithms in step
 * mode) and returns their sum. */
static double probs(const float *row, int v, int logs, double *w)
{
    double sum = 0;
    int y;
    for (y = 0; y < v; y++) {
        w[y] = logs ? exp((double)row[y]) : (double)row[y];
        sum += w[y];
    }
    return sum;
}

/* sample draws a token from the weights w (not normalised, sum > 0) by
 * inverse CDF; a token of weight 0 is never drawn. */
static int sample(const double *w, int v, double sum, specsim_rng *rng)
{
    double t = specsim_random(rng) * sum, c = 0;
    int y, last = -1;
    for (y = 0; y < v; y++) {
        if (w[y] <= 0) continue;
        c += w[y];
        last = y;
        if (c > t) return y;
    }
    return last; /* rounding: t reached the sum */
}

/* at returns a row's probability of token x. */
static double at(const float *row, int x, int logs) { return logs ? exp((double)row[x]) : (double)row[x]; }

/* verify_row verifies row b's drafts d (γ_b of them) and writes the
 * accepted drafts and the extra token into out; p and q are scratch rows
 * of V. Only the row of the extra token is read in full. */
static void verify_row(const specsim_batch *bt, int b, const int64_t *d, int64_t *out, double *p, double *q, int bug,
                       specsim_rng *rng)
{
    int v = bt->vocab, logs = strcmp(bt->mode, "step") == 0, g = specsim_row_gamma(bt, b), i, y;
    double sp, sum;
    for (i = 0; i < g; i++) {
        int x = (int)d[i];
        double u = specsim_random(rng), px = at(specsim_p(bt, b, i), x, logs), qx = at(specsim_q(bt, b, i), x, logs);
        if (bug == BUG_INCLUSIVE ? u * qx <= px : u * qx < px) {
            out[i] = x;
            continue;
        }
        sp = probs(specsim_p(bt, b, i), v, logs, p);
        probs(specsim_q(bt, b, i), v, logs, q);
        sum = 0;
        for (y = 0; y < v; y++) {
            q[y] = p[y] > q[y] ? p[y] - q[y] : 0;
            sum += q[y];
        }
        out[i] = bug == BUG_RESAMPLE_P || sum <= 0 ? sample(p, v, sp, rng) : sample(q, v, sum, rng);
        return;
    }
    sp = probs(specsim_p(bt, b, g), v, logs, p);
    out[g] = sample(p, v, sp, rng);
}

/* draft_row draws row b's drafts from its q rows (step mode). */
static void draft_row(const specsim_batch *bt, int b, int64_t *d, double *q, specsim_rng *rng)
{
    int i, g = specsim_row_gamma(bt, b);
    for (i = 0; i < g; i++) {
        double sum = probs(specsim_q(bt, b, i), bt->vocab, 1, q);
        d[i] = sample(q, bt->vocab, sum, rng);
    }
}

static int verify(const specsim_batch *bt, specsim_reply *r, void *user)
{
    int bug = *(const int *)user, b, i, g = bt->gamma;
    double *p = (double *)malloc(2 * (size_t)bt->vocab * sizeof *p);
    int64_t *d = (int64_t *)malloc((size_t)g * sizeof *d);
    if (p == NULL || d == NULL) {
        free(p);
        free(d);
        strcpy(r->error, "out of memory");
        return 1;
    }
    for (b = 0; b < bt->size; b++) {
        specsim_rng *rng = bug == BUG_IGNORE_SEED ? bt->rng : specsim_row_rng(bt, b); /* the row's seed, if it has one */
        for (i = 0; i < g; i++) d[i] = specsim_draft(bt, b, i);
        if (r->drafts != NULL) {
            draft_row(bt, b, d, p, rng);
            memcpy(r->drafts + (size_t)b * (size_t)g, d, (size_t)g * sizeof *d);
        }
        verify_row(bt, b, d, r->emitted + (size_t)b * (size_t)(g + 1), p, p + bt->vocab, bug, rng);
    }
    free(p);
    free(d);
    return 0;
}

int main(void)
{
    static int bug = BUG_NONE;
    const char *env = getenv("SPECSIM_C_BUG");
    specsim_impl impl;
    memset(&impl, 0, sizeof impl);
    impl.name = "example_verify.c";
    if (env != NULL && *env != '\0') {
        if (strcmp(env, "inclusive") == 0) bug = BUG_INCLUSIVE, impl.name = "example_verify.c (bug: inclusive)";
        else if (strcmp(env, "resample_p") == 0) bug = BUG_RESAMPLE_P, impl.name = "example_verify.c (bug: resample_p)";
        else if (strcmp(env, "ignore_seed") == 0) bug = BUG_IGNORE_SEED, impl.name = "example_verify.c (bug: ignore_seed)";
        else {
            fprintf(stderr, "example_verify: SPECSIM_C_BUG=%s; use inclusive, resample_p or ignore_seed (or leave it unset)\n", env);
            return 2;
        }
    }
    impl.verify = verify;
    impl.user = &bug;
    return specsim_main(&impl);
}
