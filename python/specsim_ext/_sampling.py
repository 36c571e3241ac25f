"""Sampling parameters and the transforms the harness tests against."""

import numpy as np


class Sampling:
    """temperature, top_k, top_p, min_p as in transformers and vLLM; the
    defaults change nothing (temperature 1, top_k 0, top_p 1, min_p 0)."""

    __slots__ = ("temperature", "top_k", "top_p", "min_p")

    def __init__(self, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0):
        self.temperature = float(temperature)
        self.top_k = int(top_k)
        self.top_p = float(top_p)
        self.min_p = float(min_p)

    def __repr__(self):
        return "Sampling(temperature=%g, top_k=%d, top_p=%g, min_p=%g)" % (
            self.temperature, self.top_k, self.top_p, self.min_p)


def transform(logits, s):
    """Probabilities after temperature, top-k, top-p and min-p, row by row
    over the last axis, in float64: the transforms of the harness's
    data.Sampling (Go package data, transform.go), so a correct
    implementation that applies them to both p and q is judged against
    exactly this law. Temperature 0 (greedy) gives the one-hot argmax row.
    """
    l = np.asarray(logits, dtype=np.float64)
    m = l.max(axis=-1, keepdims=True)
    if s.temperature == 0:
        out = np.zeros_like(l)
        np.put_along_axis(out, l.argmax(axis=-1)[..., None], 1.0, axis=-1)
        return out
    w = np.exp((l - m) / s.temperature)
    v = l.shape[-1]
    if 0 < s.top_k < v:
        thr = np.partition(w, v - s.top_k, axis=-1)[..., v - s.top_k:v - s.top_k + 1]
        w = np.where(w < thr, 0.0, w)
    if s.top_p < 1:
        order = np.argsort(-w, axis=-1, kind="stable")
        ws = np.take_along_axis(w, order, axis=-1)
        total = ws.sum(axis=-1, keepdims=True)
        before = np.cumsum(ws, axis=-1) - ws
        keep = before < s.top_p * total
        keep[..., 0] = True
        # once a token is cut every later one is too (mass before is monotone)
        ws = np.where(keep, ws, 0.0)
        np.put_along_axis(w, order, ws, axis=-1)
    if s.min_p > 0:
        thr = s.min_p * w.max(axis=-1, keepdims=True)
        w = np.where(w < thr, 0.0, w)
    return w / w.sum(axis=-1, keepdims=True)


class RowSampling:
    """Per-row sampling parameters of a composed batch: float arrays
    temperature, top_p, min_p and an int array top_k, each [B]. A row with
    temperature 0 is greedy."""

    __slots__ = ("temperature", "top_k", "top_p", "min_p")

    def __init__(self, temperature, top_k, top_p, min_p):
        self.temperature = np.asarray(temperature, dtype=np.float64)
        self.top_k = np.asarray(top_k, dtype=np.int64)
        self.top_p = np.asarray(top_p, dtype=np.float64)
        self.min_p = np.asarray(min_p, dtype=np.float64)

    @classmethod
    def uniform(cls, s, size):
        """Every one of size rows with the Sampling s."""
        return cls(np.full(size, s.temperature), np.full(size, s.top_k),
                   np.full(size, s.top_p), np.full(size, s.min_p))

    def row(self, b):
        """Row b's parameters as a Sampling."""
        return Sampling(self.temperature[b], self.top_k[b], self.top_p[b], self.min_p[b])

    @property
    def greedy(self):
        """bool [B]: the greedy rows."""
        return self.temperature == 0

    def groups(self):
        """(Sampling, row indices) for each distinct parameter set."""
        keys = np.stack([self.temperature, self.top_k.astype(np.float64), self.top_p, self.min_p], axis=1)
        uniq, inv = np.unique(keys, axis=0, return_inverse=True)
        inv = np.asarray(inv).reshape(-1)
        for g, k in enumerate(uniq):
            yield Sampling(k[0], int(k[1]), k[2], k[3]), np.flatnonzero(inv == g)


def transform_rows(logits, sampling):
    """transform() with each row b of logits [B, ...] under its own
    parameters sampling.row(b) (a RowSampling)."""
    l = np.asarray(logits, dtype=np.float64)
    out = np.empty_like(l)
    for s, rows in sampling.groups():
        out[rows] = transform(l[rows], s)
    return out
