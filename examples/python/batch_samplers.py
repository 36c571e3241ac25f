"""Batched token verification as a serving engine runs it, for composed
batches (simulate check --external ... --rows engine), and planted bugs.

    simulate check --external "python3 -m specsim_ext examples/python/batch_samplers.py:engine" \\
        --source dirichlet:V=100,contexts=8 --rows engine

A composed batch mixes rows of several kinds: each row has its own
sampling parameters (batch.sampling: temperature, top_k, top_p, min_p;
temperature 0 is greedy), its own draft length (batch.gammas; drafts beyond
it are -1) and a seed or none (batch.seeds, -1 for unseeded rows). The
harness judges every row against its own transformed target law, and sends
seeded rows again in another batch to see that their output depends on
their inputs and seed only.

engine applies each row's parameters to p and q, verifies each row's
drafts up to its own length with Leviathan's rule, and draws all of a
seeded row's randomness from numpy.random.Generator(PCG64(seed)) and all
of the unseeded rows' from the batch's generator.
"""

import numpy as np

from numpy_verify import sample_rows
from specsim_ext import RowSampling, transform_rows


def _coins(batch, n, share_stream=False, shared=False):
    """Uniforms [B, n]: a seeded row's from its own generator, the others'
    from the batch's, as batch.uniforms(n) hands them (the keyword
    arguments plant bugs)."""
    if not (share_stream or shared):
        return batch.uniforms(n)
    B = batch.size
    if shared:
        u = np.broadcast_to(batch.rng.random(n), (B, n)).copy()
    else:
        u = batch.rng.random((B, n))
    seeds = batch.seeds
    if seeds is not None and (seeds >= 0).any():
        seeded = np.flatnonzero(seeds >= 0)
        if share_stream:
            g = np.random.Generator(np.random.PCG64(int(seeds[seeded[0]])))
            for b in seeded:
                u[b] = g.random(n)
        else:
            for b in seeded:
                u[b] = np.random.Generator(np.random.PCG64(int(seeds[b]))).random(n)
    return u


def _rows(batch, logits):
    """The rows after each row's own sampling parameters, float64."""
    p, q = batch.p, batch.q
    if batch.sampling is None:
        if logits:
            return np.exp(p.astype(np.float64)), np.exp(q.astype(np.float64))
        return p.astype(np.float64), q.astype(np.float64)
    with np.errstate(divide="ignore"):
        lp = p if logits else np.log(p)
        lq = q if logits else np.log(q)
    return transform_rows(lp, batch.sampling), transform_rows(lq, batch.sampling)


def _engine(batch, step=False, mixed_bug=False, share_stream=False, shared=False, greedy_bug=False, t07_bug=False):
    if greedy_bug and batch.sampling is not None:
        s = batch.sampling
        t = np.where(s.temperature == 0, 1.0, s.temperature)
        batch.sampling = RowSampling(t, s.top_k, s.top_p, s.min_p)
    pt, qt = _rows(batch, logits=step)
    if t07_bug and batch.sampling is not None:
        s = batch.sampling
        hit = np.flatnonzero(s.temperature == 0.7)
        if hit.size:
            s1 = RowSampling(np.ones(hit.size), s.top_k[hit], s.top_p[hit], s.min_p[hit])
            with np.errstate(divide="ignore"):
                lp = batch.p[hit] if step else np.log(batch.p[hit])
            pt[hit] = transform_rows(lp, s1)
    B, G1, V = pt.shape
    G = G1 - 1
    rows = np.arange(B)
    gam = batch.gammas
    u = _coins(batch, 2 * G + 1, share_stream=share_stream, shared=shared)
    if step:
        d = np.stack([sample_rows(qt[:, i], u[:, G + 1 + i]) for i in range(G)], axis=1)
        d[np.arange(G)[None, :] >= gam[:, None]] = -1
    else:
        d = batch.drafts
    idx = np.maximum(d, 0)[..., None]
    px = np.take_along_axis(pt[:, :G], idx, axis=-1)[..., 0]
    qx = np.take_along_axis(qt, idx, axis=-1)[..., 0]
    valid = np.arange(G)[None, :] < gam[:, None]
    rejected = valid & ~(u[:, :G] * qx < px)
    n = np.where(rejected.any(axis=1), rejected.argmax(axis=1), gam)
    w = pt[rows, n].copy()
    coin = u[:, G].copy()
    rj = np.flatnonzero(rejected.any(axis=1))
    if rj.size:
        r = np.maximum(w[rj] - qt[rj, n[rj]], 0.0)
        ok = r.sum(axis=1) > 0
        w[rj[ok]] = r[ok]
        if mixed_bug and batch.seeds is not None and (batch.seeds >= 0).any() and (batch.seeds < 0).any():
            # The residual's coins sit in a buffer that only the seeded
            # rows fill when the batch mixes seeded and unseeded rows; the
            # unseeded rows read what it held (here: zeros).
            buf = np.zeros(B)
            seeded = batch.seeds >= 0
            buf[seeded] = u[seeded, G]
            coin[rj] = buf[rj]
    out = np.full((B, G1), -1, dtype=np.int64)
    keep = np.arange(G)[None, :] < n[:, None]
    out[:, :G][keep] = d[keep]
    out[rows, n] = sample_rows(w, coin)
    if step:
        return d, out
    return out


def engine(batch):
    """Correct (verify mode): preserved, and deterministic in seeded rows."""
    return _engine(batch)


def engine_step(batch):
    """Correct in step mode: each row drafts from its own transformed q."""
    return _engine(batch, step=True)


def bug_mixed_seeding(batch):
    """In batches that mix seeded and unseeded rows, the unseeded rows'
    correction token is drawn with coins from a buffer only the seeded rows
    fill (modelled on an engine that read uninitialised memory there):
    violated when rows are mixed, preserved when none is seeded."""
    return _engine(batch, mixed_bug=True)


def bug_seeded_stream(batch):
    """All seeded rows draw from one generator seeded with the first seeded
    row's seed, in row order: every row's law is right, but a seeded row's
    output depends on the seeded rows before it (the determinism
    component)."""
    return _engine(batch, share_stream=True)


def bug_shared_uniforms(batch):
    """Every unseeded row uses the same uniforms: each row's law is exact,
    but rows are not independent; only a cross-row independence test can
    see it."""
    return _engine(batch, shared=True)


def bug_t07_target(batch):
    """A per-request temperature looked up in a table keyed by the exact
    float: 0.7 misses, and those rows' target rows fall back to
    temperature 1 (their draft rows keep 0.7). Only the t = 0.7 rows are
    wrong: a composed batch names that row kind violated, the others not."""
    return _engine(batch, t07_bug=True)


def bug_greedy_sampled(batch):
    """Temperature 0 treated as 'no temperature' (1): greedy rows sample."""
    return _engine(batch, greedy_bug=True)
