"""Token-tree verification in vectorised NumPy for the specsim harness's
tree mode, and planted-bug variants of it.

    simulate check --external "python3 -m specsim_ext examples/python/tree_verify.py:specinfer" \\
        --mode tree --draft iid --k 4 --gamma 4 --source markov:V=8

The harness drafts a tree per batch row (k i.i.d. chains merged into a
trie here) and sends its nodes: parent, token, the children of each node
in draw order, every node's target row and the draft row its children
were drawn from. The function returns the tokens of the accepted path and
the extra token.

specinfer is SpecInfer's multi-round rejection sampling (Miao et al.,
arXiv 2305.09781; MCSD, Yang et al., arXiv 2401.06706), lossless for
children drawn i.i.d. from q: at a node with target row p and draft row q,
r = p; for each drawn child x in draw order (a token drawn twice is
examined twice) accept x with probability min(1, r(x)/q(x)), else
r = norm((r - q)+); if every child is rejected emit a token from r; at a
leaf emit the bonus token from the leaf's own row. It is the harness's
tree rule "specinfer" (--conform specinfer).

target_only is the membership rule of EAGLE-2 and SGLang for children
chosen deterministically (top-k heads as in Medusa, EAGLE's dynamic tree):
accept child x with probability r(x), else zero it and renormalise;
emit from r after every child is rejected (--conform target-only).

Each bug_* function plants one bug a real tree verifier has had; on a
model pair every node has its own rows, so each changes the emitted law.
"""

import numpy as np

from numpy_verify import sample_rows
from specsim_ext import RowSampling, transform_rows


def _laws(batch, t07_bug=False):
    """The target and draft laws of a composed batch's rows (--rows): each
    row's rows through its own sampling (batch.sampling); the raw rows
    otherwise. t07_bug plants a bug: rows of temperature 0.7 keep their
    raw target rows."""
    s = batch.sampling

    def law(x, target):
        x = x.astype(np.float64)
        if s is None:
            return x
        rs = s
        if t07_bug and target:
            rs = RowSampling(np.where(s.temperature == 0.7, 1.0, s.temperature), s.top_k, s.top_p, s.min_p)
        with np.errstate(divide="ignore", invalid="ignore"):
            return transform_rows(np.log(x), rs)
    return law


def _coins(batch, unseeded=False):
    """uniforms(n, live): n uniforms from the batch's generator, where
    entry i of the live rows (an index array; entry i belongs to row
    live[i], or to row i when n is the batch size) is replaced for a
    seeded row (batch.seeds >= 0) by a draw from the row's own generator,
    so a seeded row's answer depends on its own tree and seed only."""
    gens = {}
    if batch.seeds is not None and not unseeded:
        gens = {int(b): np.random.Generator(np.random.PCG64(int(batch.seeds[b]))) for b in np.flatnonzero(batch.seeds >= 0)}

    def uniforms(n, live):
        u = batch.rng.random(n)
        for i, b in enumerate(live):
            g = gens.get(int(b))
            if g is not None:
                u[b if n == batch.size else i] = g.random()
        return u
    return uniforms


def _verify(batch, rule="specinfer", row_of=None, sibling_order=None, bonus_node=None, t07_bug=False, unseeded=False):
    """The shared walk; the keyword arguments plant bugs.

    row_of(batch, node): the node whose target row verifies node's children.
    sibling_order(kids, tokens): a permutation of each row's draws.
    bonus_node(batch, node): the node whose row the bonus token comes from.
    A composed batch (--rows) verifies each row under its own sampling and
    draws a seeded row's coins from its own generator.
    """
    B, D = batch.size, batch.gamma
    rows = np.arange(B)
    law, uniforms = _laws(batch, t07_bug), _coins(batch, unseeded)
    node = np.zeros(B, dtype=np.int64)
    out = np.full((B, D + 1), -1, dtype=np.int64)
    active = np.ones(B, dtype=bool)
    K = batch.draws.shape[2]
    for depth in range(D + 1):
        if not active.any():
            break
        kids = batch.draws[rows, node]                      # [B, K], -1 padded
        leaf = kids[:, 0] < 0
        src = node if row_of is None else row_of(batch, node)
        r = law(batch.p_at(src), True)
        if bonus_node is not None:
            bn = bonus_node(batch, node)
            r[leaf] = law(batch.p_at(bn), True)[leaf]
        q = law(batch.q_at(node), False)
        toks = batch.token[rows[:, None], np.maximum(kids, 0)]
        if sibling_order is not None:
            perm = sibling_order(kids, toks)
            kids = np.take_along_axis(kids, perm, axis=1)
            toks = np.take_along_axis(toks, perm, axis=1)
        chosen = np.full(B, -1, dtype=np.int64)
        for j in range(K):
            c, x = kids[:, j], toks[:, j]
            live = active & (c >= 0) & (chosen < 0)
            if not live.any():
                continue
            u = uniforms(B, np.flatnonzero(live))
            rx = r[rows, x]
            if rule == "specinfer":
                ok = live & (u * q[rows, x] < rx)
            else:  # target-only: accept with probability r(x)
                ok = live & (u < rx)
            chosen[ok] = c[ok]
            rej = np.flatnonzero(live & ~ok)
            if rej.size:
                if rule == "specinfer":
                    d = np.maximum(r[rej] - q[rej], 0.0)
                else:
                    d = r[rej].copy()
                    d[np.arange(rej.size), x[rej]] = 0.0
                s = d.sum(axis=1)
                good = s > 0  # rounding can empty it; then keep r
                r[rej[good]] = d[good] / s[good, None]
        moved = chosen >= 0
        out[rows[moved], depth] = batch.token[rows[moved], chosen[moved]]
        stop = np.flatnonzero(active & ~moved)
        if stop.size:
            out[stop, depth] = sample_rows(r[stop], uniforms(stop.size, stop))
        node = np.where(moved, chosen, node)
        active = moved
    return out


def specinfer(batch):
    """Correct for i.i.d. drafts: preserved."""
    return _verify(batch)


def target_only(batch):
    """Correct for deterministic children (topk, dynamic): preserved."""
    return _verify(batch, rule="target-only")


# ---- planted bugs ---------------------------------------------------------

def bug_seed_ignored(batch):
    """Seeded rows draw their coins from the batch's generator like the
    others: every row's law is right, but a seeded row's answer changes
    with the batch (the determinism component)."""
    return _verify(batch, unseeded=True)


def bug_t07_target(batch):
    """In a composed batch, rows of temperature 0.7 are verified against
    their raw target rows (a per-request temperature looked up by the
    exact float, 0.7 missing): only that row kind is wrong."""
    return _verify(batch, t07_bug=True)


def _previous_node(batch, node):
    """Node n-1 of the flattened tree for every non-root node."""
    return np.where(node > 0, node - 1, 0)


def bug_wrong_row(batch):
    """An off-by-one in the flattened tree's row index: the children of
    node n are verified against the target row of node n-1 (a sibling, a
    cousin or the parent) instead of node n's own row."""
    return _verify(batch, row_of=_previous_node)


def _by_token(kids, toks):
    key = np.where(kids >= 0, toks, np.iinfo(np.int64).max)
    return np.argsort(key, axis=1, kind="stable")


def bug_sibling_order(batch):
    """Siblings examined in token order (as a verifier that walks a sorted,
    flattened tree does) instead of the order they were drawn in: the
    rejection chain then sees order statistics, not i.i.d. draws."""
    return _verify(batch, sibling_order=_by_token)


def _parent(batch, node):
    return np.maximum(batch.parent[np.arange(batch.size), node], 0)


def bug_bonus_from_parent(batch):
    """After the whole path is accepted, the bonus token is drawn from the
    target row of the leaf's parent instead of the leaf's own row."""
    return _verify(batch, bonus_node=_parent)


def lie_path(batch):
    """Claims a first token that is not a child of the root: an invalid
    outcome (the path is not in the tree), not a protocol error."""
    out = specinfer(batch)
    kids = batch.draws[0, 0]
    taken = set(batch.token[0, kids[kids >= 0]].tolist())
    out[0, 0] = min(t for t in range(batch.vocab) if t not in taken)
    return out
