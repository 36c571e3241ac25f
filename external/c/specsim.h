/*
 * specsim.h - a C client of specsim's external-implementation protocol.
 *
 * specsim's `simulate check --external CMD` runs CMD as a child process and
 * talks to it over its stdin and stdout (docs/external.md, external/doc.go).
 * This client speaks that protocol (versions 1 and 2) for a token verifier
 * written in C, C++ or anything that can call C: the program supplies one
 * callback, and specsim_serve() answers the harness's messages with it
 * until the harness says close. It needs nothing beyond the C99 standard
 * library; compile specsim.c with the program, e.g.
 *
 *     cc -std=c99 -O2 -o myverify myverify.c specsim.c -lm
 *     simulate check --external ./myverify --source dirichlet:V=1000 --gamma 4
 *
 * (-lm only if the program itself uses <math.h>; specsim.c does not.)
 *
 * What is served: chain batches in verify mode (the harness draws the
 * drafts, the callback verifies them) and in step mode (the callback
 * draws its own drafts from the rows, which arrive as natural logarithms
 * of the probabilities), with the rows of a pool (sent once, batches
 * carry context indices) or inline (sent with the batch), the edge-case
 * batches' scripted coins, and any further per-row arrays a batch carries
 * (protocol 2's composed batches: temperature, top_k, top_p, min_p,
 * gamma, seed), readable by name. Tree mode and step mode on a Markov
 * model pair (whose tables the harness ships) are refused at the
 * handshake with a message saying so.
 *
 * Randomness: draw every coin and every sample of row b with
 * specsim_random(specsim_row_rng(batch, b)) (or, where no row is seeded,
 * from batch->rng). The generator is seeded from the batch's seed, or a
 * seeded row's own seed, so a run repeats exactly; in the two edge-case
 * batches it returns exactly 0, then exactly 1 - 2^-53, on every call:
 * that is how the harness scripts the coins (an inclusive comparison
 * u <= p/q then accepts a draft of target probability 0). A verifier
 * that uses another generator is not exercised by the edge cases.
 *
 * Errors: malformed input (a header that is not JSON, a frame with a
 * wrong magic, dtype or shape, a token or context out of range, a stream
 * that ends inside a message) ends specsim_serve() with one line on
 * stderr, "specsim: ...", naming what was wrong, and a return of 1. Nothing but protocol messages is ever written to the
 * output stream; print diagnostics to stderr.
 */
#ifndef SPECSIM_H
#define SPECSIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* SPECSIM_PROTOCOL is the newest protocol version this client speaks; it
 * also speaks version 1 and answers the hello with the newest version the
 * harness and it share. */
#define SPECSIM_PROTOCOL 2

/* specsim_rng is a batch's generator (xoshiro256** seeded by splitmix64
 * from the batch's seed), or, in an edge-case batch, a scripted one. */
typedef struct specsim_rng {
    uint64_t s[4];
    int scripted;  /* 1: every draw is `value` */
    double value;  /* 0 or 1 - 2^-53 when scripted */
} specsim_rng;

/* specsim_random returns a uniform double in [0, 1) with 53 random bits,
 * or the scripted value in an edge-case batch. */
double specsim_random(specsim_rng *rng);

/* specsim_array is one array a message carried: its name, its NumPy
 * dtype ("<f4", "<f8" or "<i8"; nothing else is accepted), its C-order
 * shape, its element count and its data, exactly one of f32, f64 and
 * i64 being set. */
typedef struct specsim_array {
    char name[32];
    char descr[8];
    int ndim;
    int64_t shape[4];
    size_t n;
    const float *f32;
    const double *f64;
    const int64_t *i64;
} specsim_array;

/* specsim_sampling is the hello message's sampling parameters
 * (--temperature, --top-k, --top-p, --min-p), when given. */
typedef struct specsim_sampling {
    double temperature;
    int64_t top_k;
    double top_p;
    double min_p;
} specsim_sampling;

/* specsim_batch is one chain batch of `size` independent rows. Read it
 * through the functions below; the pointers stay valid until the
 * callback returns. */
typedef struct specsim_batch {
    const char *mode;     /* "verify" or "step" */
    int protocol;         /* the version in use (1 or 2) */
    int index;            /* the batch number k */
    int64_t first_step;   /* the run's step of row 0 */
    int size;             /* B, the rows */
    int gamma;            /* γ, the draft length */
    int vocab;            /* V */
    uint64_t seed;        /* the seed rng was seeded with */
    const char *coins;    /* "random", "zero" or "max" (edge cases) */
    const specsim_sampling *sampling; /* NULL unless sampling flags */
    specsim_rng *rng;     /* draw all randomness from it (or from
                             specsim_row_rng for seeded rows) */
    /* internal: where the rows are */
    const float *p_rows;  /* [C or B, γ+1, V] */
    const float *q_rows;  /* [C or B, γ, V] */
    const int64_t *ctx;   /* [B] context of each row, or NULL (inline) */
    const int64_t *drafts;/* [B, γ] in verify mode, else NULL */
    const specsim_array *arrays;
    int narrays;
    specsim_rng *row_rng; /* specsim_row_rng's generator */
} specsim_batch;

/* specsim_p returns the V target probabilities of row b at position i
 * (0 <= i <= γ; i = γ is the bonus row): p(. | prefix, drafts 0..i-1).
 * In step mode the values are natural logarithms (log 0 = -INFINITY). */
const float *specsim_p(const specsim_batch *batch, int b, int i);

/* specsim_q returns the V draft probabilities of row b at position i
 * (0 <= i < γ), drafts[b][i] ~ q(b, i); logarithms in step mode. */
const float *specsim_q(const specsim_batch *batch, int b, int i);

/* specsim_draft returns draft i of row b in verify mode (-1 beyond the
 * row's draft length), or -1 in step mode. */
int64_t specsim_draft(const specsim_batch *batch, int b, int i);

/* specsim_row_gamma returns row b's draft length: its entry of the
 * per-row "gamma" array in a composed batch, else γ. */
int specsim_row_gamma(const specsim_batch *batch, int b);

/* specsim_row_rng returns the generator row b draws from: for a seeded
 * row of a composed batch (its entry of the per-row "seed" array is
 * >= 0) a generator seeded from that seed alone, restarted by each call,
 * so the row's tokens depend on its seed and rows only, as engines
 * promise for seeded requests (the harness's determinism component
 * replays seeded rows in another order and batch); for any other row,
 * and in the edge-case batches, batch->rng. Call it once per row, before
 * the row's first draw; the pointer is valid until the next call. */
specsim_rng *specsim_row_rng(const specsim_batch *batch, int b);

/* specsim_batch_array returns the array the batch carried under name
 * ("ctx", "drafts", "p", "q", "temperature", "top_k", "top_p", "min_p",
 * "gamma", "seed", or any array a later protocol adds), or NULL. */
const specsim_array *specsim_batch_array(const specsim_batch *batch, const char *name);

/* specsim_reply is what the callback fills: emitted [B, γ+1], row b
 * holding the accepted drafts, then the correction or bonus token, then
 * -1 padding (it arrives filled with -1); in step mode also drafts
 * [B, γ] (-1 beyond a row's draft length), the drafts the callback drew.
 * In step mode under protocol 2 a sampler that has no chain of drafts
 * (a tree or beam sampler) sets with_drafts = 0 and returns emitted
 * alone. error: a message the callback may set (at most 255 bytes) when
 * it returns non-zero. */
typedef struct specsim_reply {
    int64_t *emitted;
    int64_t *drafts;   /* NULL in verify mode */
    int with_drafts;   /* step mode: 1 (default) sends drafts */
    char error[256];
} specsim_reply;

/* specsim_verify_fn verifies (or, in step mode, drafts and verifies) one
 * batch. It returns 0, or non-zero after setting reply->error: the client
 * then sends the harness an error message with it, and the check stops
 * with that line. */
typedef int (*specsim_verify_fn)(const specsim_batch *batch, specsim_reply *reply, void *user);

/* specsim_impl describes the implementation: its name (reported in the
 * verdict), its callback and the pointer handed to it, the modes it
 * serves ("verify", "step" or "verify,step"; NULL: both), and whether it
 * applies the hello's sampling parameters (batch->sampling): when the
 * harness sends them to an implementation that does not, the harness
 * refuses the check. */
typedef struct specsim_impl {
    const char *name;
    specsim_verify_fn verify;
    void *user;
    const char *modes;
    int takes_sampling;
} specsim_impl;

/* specsim_serve answers the harness's messages read from in, writing the
 * replies to out, until the close message (returns 0) or an error (one
 * line on stderr, returns 1). in and out are the program's stdin and
 * stdout when it runs under --external. */
int specsim_serve(const specsim_impl *impl, FILE *in, FILE *out);

/* specsim_main is specsim_serve on stdin and stdout: `return
 * specsim_main(&impl);` from main(). */
int specsim_main(const specsim_impl *impl);

#ifdef __cplusplus
}
#endif

#endif /* SPECSIM_H */
