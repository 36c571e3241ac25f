"""Samplers that draft for themselves (step mode), judged by the tokens they
emit alone: a speculative sampler that does not expose its drafts, a beam
sampler, and a point-mass n-gram verifier; each with planted bugs.

    simulate check --external "python3 -m specsim_ext examples/python/step_samplers.py:beam" \\
        --mode step --gamma 3 --source markov:V=8

In step mode the harness ships the target and draft models (a pool's rows,
or a Markov pair's tables) and judges only what the function emits: the
tokens it accepted and its extra token, against the target law given the
emitted prefix. A function of one argument gets a specsim_ext.Batch whose
`model` gives the rows after any prefixes (model.target(prefixes, rows),
model.draft(prefixes, rows)); it returns emitted [B, gamma+1], or
(drafts, emitted) for a chain sampler that exposes its drafts.
"""

import numpy as np

from numpy_verify import sample_rows, step as _chain_step


# ---- a chain sampler that does not expose its drafts ---------------------

def _chain(batch, residual_shift=0):
    """Leviathan et al.'s speculative sampling drafting gamma tokens from
    the draft model autoregressively; residual_shift plants a bug."""
    B, G, m = batch.size, batch.gamma, batch.model
    rows = np.arange(B)
    rng = batch.rng
    drafts = np.zeros((B, G), dtype=np.int64)
    qs = []
    for i in range(G):
        q = m.draft(drafts[:, :i], rows)
        drafts[:, i] = sample_rows(q, rng.random(B))
        qs.append(q)
    q = np.stack(qs, axis=1)                                   # [B, G, V]
    p = np.stack([m.target(drafts[:, :i], rows) for i in range(G + 1)], axis=1)
    idx = drafts[..., None]
    px = np.take_along_axis(p[:, :G], idx, axis=-1)[..., 0]
    qx = np.take_along_axis(q, idx, axis=-1)[..., 0]
    acc = rng.random((B, G)) * qx < px
    n = np.where(acc.all(axis=1), G, acc.argmin(axis=1))
    w = p[rows, n].copy()
    rj = np.flatnonzero(n < G)
    if rj.size:
        qn = q[rj, np.clip(n[rj] + residual_shift, 0, G - 1)]
        r = np.maximum(w[rj] - qn, 0.0)
        ok = r.sum(axis=1) > 0
        w[rj[ok]] = r[ok]
    out = np.full((B, G + 1), -1, dtype=np.int64)
    keep = np.arange(G)[None, :] < n[:, None]
    out[:, :G][keep] = drafts[keep]
    out[rows, n] = sample_rows(w, rng.random(B))
    return out


def no_drafts(batch):
    """Correct, and it returns only what it emits: preserved."""
    return _chain(batch)


def bug_no_drafts_residual(batch):
    """The residual after a rejection at position n uses the draft row of
    position n+1 (an off-by-one in the draft rows' index)."""
    return _chain(batch, residual_shift=1)


def hidden_drafts(p_logits, q_logits, rng):
    """Correct, in the step form of protocol 1 (p_logits, q_logits, rng),
    hiding its drafts: returns (None, emitted), judged as emitted alone."""
    return None, _chain_step(p_logits, q_logits, rng)[1]


def emitted_only(p_logits, q_logits, rng):
    """Correct, in the same form, returning emitted alone."""
    return _chain_step(p_logits, q_logits, rng)[1]


# ---- a beam sampler -------------------------------------------------------

def _beams(batch, k):
    """Beam search of width k over the draft model: [B, k, gamma] token
    sequences, best first (ties to the lower token)."""
    B, G, m = batch.size, batch.gamma, batch.model
    rows = np.arange(B)
    seqs = np.zeros((B, 1, 0), dtype=np.int64)
    score = np.zeros((B, 1))
    for _ in range(G):
        w = seqs.shape[1]
        with np.errstate(divide="ignore"):
            lq = m.draft_logits(seqs.reshape(B * w, -1), np.repeat(rows, w)).reshape(B, w, -1)
        V = lq.shape[-1]
        tot = (score[:, :, None] + lq).reshape(B, w * V)
        kk = min(k, w * V)
        top = np.argsort(-tot, axis=1, kind="stable")[:, :kk]
        score = np.take_along_axis(tot, top, axis=1)
        parent, tok = top // V, top % V
        seqs = np.concatenate([np.take_along_axis(seqs, parent[:, :, None], axis=1), tok[:, :, None]], axis=2)
    return seqs


def _beam(batch, k=3, q_ratio=False):
    """Beams merged into a trie and verified from the root: at a node with
    target row r, each child (in beam order) is accepted with probability
    r(x) and otherwise zeroed in r, which is renormalised (the membership
    rule, lossless for candidates chosen deterministically); after every
    child is rejected a token is drawn from r, and after a whole beam the
    bonus token from the target row after it. q_ratio plants the bug."""
    B, G, m = batch.size, batch.gamma, batch.model
    rows = np.arange(B)
    rng = batch.rng
    beams = _beams(batch, k)
    K = beams.shape[1]
    out = np.full((B, G + 1), -1, dtype=np.int64)
    alive = np.ones((B, K), dtype=bool)      # beams through the accepted path
    active = np.ones(B, dtype=bool)
    for d in range(G + 1):
        path = out[:, :d]
        r = m.target(path, rows)
        if d == G:
            out[active, d] = sample_rows(r[active], rng.random(int(active.sum())))
            break
        q = m.draft(path, rows)
        chosen = np.full(B, -1, dtype=np.int64)
        for j in range(K):
            x = beams[:, j, d]
            live = active & alive[:, j] & (chosen < 0)
            if not live.any():
                continue
            u = rng.random(B)
            rx = r[rows, x]
            if q_ratio:
                ok = live & (u * q[rows, x] < rx)
            else:
                ok = live & (u < rx)
            chosen[ok] = x[ok]
            rej = np.flatnonzero(live & ~ok)
            if rej.size:
                if q_ratio:
                    nr = np.maximum(r[rej] - q[rej], 0.0)
                else:
                    nr = r[rej].copy()
                    nr[np.arange(rej.size), x[rej]] = 0.0
                s = nr.sum(axis=1)
                good = s > 0
                r[rej[good]] = nr[good] / s[good, None]
        moved = chosen >= 0
        out[moved, d] = chosen[moved]
        stop = np.flatnonzero(active & ~moved)
        if stop.size:
            out[stop, d] = sample_rows(r[stop], rng.random(stop.size))
        alive &= beams[:, :, d] == chosen[:, None]
        active = moved
    return out


def beam(batch):
    """Correct: beams verified with the membership rule: preserved."""
    return _beam(batch)


def beam_path_as_drafts(batch):
    """The correct beam sampler, returning its best beam (a fixed path of
    its tree) as drafts: the emitted tokens leave that path whenever a
    child off it is accepted, so its answers break the contract (accepted
    tokens are the drafts) while its emitted law is right. The harness
    judges the emitted tokens alone and reports the breach as the contract
    component: verdict contract_breach, not violated. A tree or beam
    sampler returns emitted alone."""
    return _beams(batch, 3)[:, 0, :], _beam(batch)


def bug_beam_q_ratio(batch):
    """Beam candidates verified with q ratios, min(1, r/q) and the residual
    norm((r - q)+), as if they had been sampled from q
    (jaymody/speculative-sampling issue 3; EAGLE issues 183 and 221)."""
    return _beam(batch, q_ratio=True)


# ---- a point-mass n-gram verifier -----------------------------------------

def _point_mass(p, drafts, gammas, rng):
    """Each draft x is a point mass: accept it with probability p(x), else
    emit a token from p with x removed, renormalised. Lossless whatever law
    the drafts came from (so for n-gram lookups), though it keeps fewer
    drafts than Leviathan's rule would for drafts sampled from q."""
    B, G1, V = p.shape
    G = G1 - 1
    rows = np.arange(B)
    out = np.full((B, G1), -1, dtype=np.int64)
    n = np.full(B, G)
    n = np.minimum(n, gammas)
    decided = np.zeros(B, dtype=bool)
    for i in range(G):
        live = ~decided & (i < gammas)
        x = np.maximum(drafts[:, i], 0)
        u = rng.random(B)
        px = p[rows, i, x]
        acc = live & (u < px)
        out[acc, i] = x[acc]
        rej = np.flatnonzero(live & ~acc)
        if rej.size:
            w = p[rej, i].astype(np.float64).copy()
            w[np.arange(rej.size), x[rej]] = 0.0
            out[rej, i] = sample_rows(w, rng.random(rej.size))
            n[rej] = i
            decided[rej] = True
    bonus = np.flatnonzero(~decided)
    if bonus.size:
        out[bonus, n[bonus]] = sample_rows(p[bonus, n[bonus]].astype(np.float64), rng.random(bonus.size))
    return out


def ngram_verify(p, q, drafts, rng):
    """Point-mass verification of the harness's drafts (verify mode)."""
    return _point_mass(p, drafts, np.full(len(p), p.shape[1] - 1), rng)


def _lookup(prefix_last, V):
    """An n-gram table's guess of the next token: here a fixed successor
    table (token t -> (3t + 1) mod V), the kind of draft prompt lookup
    makes; it is not drawn from the draft model at all."""
    return (3 * prefix_last + 1) % V


def ngram_step(batch):
    """Step mode: drafts from the lookup table (chained from the start),
    verified as point masses against the model's target rows; returns the
    drafts too (their draft probability is never looked at)."""
    B, G, m = batch.size, batch.gamma, batch.model
    rows = np.arange(B)
    V = m.vocab
    drafts = np.zeros((B, G), dtype=np.int64)
    last = np.zeros(B, dtype=np.int64)
    for i in range(G):
        drafts[:, i] = _lookup(last, V)
        last = drafts[:, i]
    p = np.stack([m.target(drafts[:, :i], rows) for i in range(G + 1)], axis=1)
    return drafts, _point_mass(p, drafts, batch.gammas, batch.rng)


def bug_ngram_keep_x(batch):
    """The point-mass rule with the rejected draft left in the resampled
    row (sampling from p instead of p without x): the rejected token comes
    back too often."""
    B, G, m = batch.size, batch.gamma, batch.model
    rows = np.arange(B)
    V = m.vocab
    drafts = np.zeros((B, G), dtype=np.int64)
    last = np.zeros(B, dtype=np.int64)
    for i in range(G):
        drafts[:, i] = _lookup(last, V)
        last = drafts[:, i]
    p = np.stack([m.target(drafts[:, :i], rows) for i in range(G + 1)], axis=1)
    rng = batch.rng
    out = np.full((B, G + 1), -1, dtype=np.int64)
    n = np.full(B, G)
    decided = np.zeros(B, dtype=bool)
    for i in range(G):
        x = drafts[:, i]
        u = rng.random(B)
        acc = ~decided & (u < p[rows, i, x])
        out[acc, i] = x[acc]
        rej = np.flatnonzero(~decided & ~acc)
        if rej.size:
            out[rej, i] = sample_rows(p[rej, i], rng.random(rej.size))
            n[rej] = i
            decided[rej] = True
    bonus = np.flatnonzero(~decided)
    if bonus.size:
        out[bonus, G] = sample_rows(p[bonus, G], rng.random(bonus.size))
    return out
