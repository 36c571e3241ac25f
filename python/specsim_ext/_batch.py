"""The Batch a function of one argument receives (protocol 2), and the
models step-mode samplers draft from."""

import numpy as np

from ._sampling import RowSampling


def _lengths(prefixes):
    """Token counts of right-padded prefixes (-1 padding) [N, L]."""
    if prefixes.shape[1] == 0:
        return np.zeros(prefixes.shape[0], dtype=np.int64)
    return (prefixes >= 0).sum(axis=1)


def _as_prefixes(prefixes):
    """int64 [N, L] from an array or a list of token sequences (ragged
    sequences are right-padded with -1)."""
    if isinstance(prefixes, np.ndarray):
        a = prefixes
        if a.ndim == 1:
            a = a[None, :]
        return a.astype(np.int64, copy=False)
    seqs = [list(s) for s in prefixes]
    L = max((len(s) for s in seqs), default=0)
    a = np.full((len(seqs), L), -1, dtype=np.int64)
    for i, s in enumerate(seqs):
        a[i, :len(s)] = s
    return a


class Model:
    """The target and draft models of a batch, for samplers that draft
    for themselves (step mode): next-token rows for any batch of prefixes.

    prefixes is int64 [N, L] (right-padded with -1) or a list of token
    sequences; rows, int [N], says which batch row each prefix continues
    (the rows of a pool differ per row; a model pair starts every row from
    the empty context, so it ignores rows); by default prefix n continues
    row n. Logits are natural logarithms of the probabilities (-inf for
    probability 0), float64 [N, V]; target()/draft() give probabilities.
    """

    vocab = 0
    logits = True  # whether the tables hold logarithms (step mode)

    def target_logits(self, prefixes, rows=None):
        return self._rows(True, prefixes, rows, True)

    def draft_logits(self, prefixes, rows=None):
        return self._rows(False, prefixes, rows, True)

    def target(self, prefixes, rows=None):
        return self._rows(True, prefixes, rows, False)

    def draft(self, prefixes, rows=None):
        return self._rows(False, prefixes, rows, False)

    def _rows(self, target, prefixes, rows, logits):
        pre = _as_prefixes(prefixes)
        out = np.asarray(self._table(target, pre, rows), dtype=np.float64)
        if logits == self.logits:
            return out
        if logits:
            with np.errstate(divide="ignore"):
                return np.log(out)
        return np.exp(out)

    def _row_index(self, pre, rows):
        if rows is None:
            if pre.shape[0] != self.size:
                raise ValueError("model: %d prefixes for a batch of %d rows; pass rows= (the batch row each prefix continues)"
                                 % (pre.shape[0], self.size))
            return np.arange(self.size)
        return np.asarray(rows, dtype=np.int64)


class PositionalModel(Model):
    """A pool's (or inline) rows: the row after a prefix depends on the
    batch row and the prefix's length only (positions past the last row
    repeat it)."""

    def __init__(self, p, q, logits):
        # p [B, gamma+1, V], q [B, gamma, V]: the rows of each batch row.
        self.p, self.q = p, q
        self.size, self.vocab, self.logits = p.shape[0], p.shape[-1], logits

    def _table(self, target, pre, rows):
        r = self._row_index(pre, rows)
        t = self.p if target else self.q
        pos = np.minimum(_lengths(pre), t.shape[1] - 1)
        return t[r, pos]


class MarkovModel(Model):
    """A Markov model pair of order K: the row after a prefix is that of
    its last K tokens (missing tokens at the start are the start symbol V),
    read as a base-(V+1) number (sim.Markov.State in the harness)."""

    def __init__(self, order, p, q, logits, size):
        self.order, self.p, self.q = order, p, q
        self.vocab, self.logits, self.size = p.shape[-1], logits, size

    def state(self, prefixes):
        """The state (row index) of every prefix."""
        pre = _as_prefixes(prefixes)
        n, V = len(pre), self.vocab
        lens = _lengths(pre)
        s = np.zeros(n, dtype=np.int64)
        for j in range(self.order):
            i = lens - self.order + j
            tok = np.where(i >= 0, pre[np.arange(n), np.maximum(i, 0)] if pre.shape[1] else 0, V)
            s = s * (V + 1) + tok
        return s

    def _table(self, target, pre, rows):
        return (self.p if target else self.q)[self.state(pre)]


class Batch:
    """One batch of the harness, for a function of one argument (protocol
    2). Attributes (None where the mode has none):

    mode        "verify", "step" or "tree"
    index       the batch's number; size: its rows B; gamma: the draft
                length (the tree depth in tree mode); vocab: V
    rng         numpy.random.Generator for the batch (in the edge-case
                batches one whose random() and uniform() return a scripted
                value)
    uniforms(*shape, device=None, dtype=None)
                the coins the harness owns: take every random number of the
                step from here (see the method), so that the edge cases can
                script them
    p, q        chain modes: the rows, [B, gamma+1, V] and [B, gamma, V]
                (probabilities in verify mode, logits in step mode; None in
                step mode on a model pair: draft from `model`); tree mode:
                every node's target row and the row its children were drawn
                from, [B, N, V] (gathered when first read; zero rows where a
                node has none; prefer p_at/q_at)
    drafts      verify mode: int64 [B, gamma], -1 beyond a row's gamma
    gammas      int64 [B]: each row's draft length
    sampling    None, or a RowSampling (per-row temperature, top_k, top_p,
                min_p arrays); a row with temperature 0 is greedy
    seeds       None, or int64 [B]: each row's seed, -1 for unseeded rows
    model       step mode: a Model (target/draft rows for any prefixes)
    parent, token, draws, nodes
                tree mode: int64 [B, N] parent node (-1: the root and
                padding), [B, N] token of each node (-1: root, padding),
                [B, N, K] the children of each node in draw order (a child
                drawn twice appears twice; -1 padding), [B] node counts

    Return int64 emitted [B, gamma+1]: the accepted tokens (drafts or the
    accepted path of a tree), then the correction or bonus token, then -1
    padding. In step mode you may return (drafts, emitted) instead; then the
    accepted tokens must be the drafts (a tree or beam sampler returns
    emitted alone, or (None, emitted)).
    """

    def __init__(self, **kw):
        self.mode = self.index = self.size = self.gamma = self.vocab = None
        self.rng = self.drafts = self.sampling = self.seeds = self.model = None
        self.parent = self.token = self.draws = self.nodes = None
        self._p = self._q = None
        self._tp = self._tq = self._prow = self._qrow = None
        self.gammas = None
        self.coins = "random"
        self._row_gens = {}
        for k, v in kw.items():
            setattr(self, k, v)
        if self.gammas is None and self.size is not None:
            self.gammas = np.full(self.size, self.gamma, dtype=np.int64)

    @property
    def p(self):
        if self._p is None and self._prow is not None:
            self._p = self._gather(self._tp, self._prow)
        return self._p

    @p.setter
    def p(self, v):
        self._p = v

    @property
    def q(self):
        if self._q is None and self._qrow is not None:
            self._q = self._gather(self._tq, self._qrow)
        return self._q

    @q.setter
    def q(self, v):
        self._q = v

    @staticmethod
    def _gather(table, idx):
        i = np.maximum(idx, 0)
        out = table[i]
        out[idx < 0] = 0
        return out

    def p_at(self, node):
        """Tree mode: the target row of node[b] of every row b, [B, V]."""
        return self._tp[self._prow[np.arange(self.size), node]]

    def q_at(self, node):
        """Tree mode: the row node[b]'s children were drawn from, [B, V]
        (zeros where it has none: a leaf, or children not drawn)."""
        idx = self._qrow[np.arange(self.size), node]
        return self._gather(self._tq, idx)

    def row_rng(self, b):
        """Row b's Generator, seeded with its seed (None for unseeded rows):
        one per row and batch, the stream uniforms() draws the row's coins
        from too, so the two never repeat each other's numbers."""
        if self.seeds is None or self.seeds[b] < 0:
            return None
        g = self._row_gens.get(b)
        if g is None:
            g = self._row_gens[b] = np.random.Generator(np.random.PCG64(int(self.seeds[b])))
        return g

    def uniforms(self, *shape, device=None, dtype=None):
        """Uniform coins in [0, 1), [B, *shape]: fresh ones at every call.

        This is how a sampler takes its randomness. Row b's coins come from
        row_rng(b) when the row is seeded, else from the batch's rng; in the
        harness's edge-case batches every coin is exactly 0, or the largest
        value below 1 of the dtype (1 - 2**-53 in float64). A sampler that
        draws from a generator of its own (seeded from rng.integers, say)
        never sees those coins, and its edge cases are reported
        not_exercised.

        dtype is float64 (default) or float32, as a NumPy or torch dtype or
        its name. device (torch only: "cpu", "cuda", "cuda:1", a
        torch.device) returns a torch tensor on that device; the coins are
        the same numbers as without it.
        """
        name = str(dtype or "float64").replace("torch.", "")
        if name not in ("float32", "float64"):
            raise ValueError("uniforms: dtype %s; use float64 or float32" % name)
        dt = np.dtype(name)
        size = (self.size,) + tuple(int(n) for n in shape)
        u = self.rng.random(size, dtype=dt)
        if self.coins == "random" and self.seeds is not None:
            for b in np.flatnonzero(self.seeds >= 0):
                u[b] = self.row_rng(b).random(size[1:], dtype=dt)
        if device is None:
            return u
        import torch  # the caller asked for a torch tensor
        return torch.from_numpy(u).to(device)

    def __repr__(self):
        return "Batch(mode=%s, index=%s, size=%s, gamma=%s, vocab=%s)" % (
            self.mode, self.index, self.size, self.gamma, self.vocab)


def per_row_sampling(arrays):
    """The RowSampling of a composed batch's per-row arrays, or None."""
    if "temperature" not in arrays:
        return None
    return RowSampling(arrays["temperature"], arrays["top_k"], arrays["top_p"], arrays["min_p"])
