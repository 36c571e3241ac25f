"""Token verification (speculative sampling) in vectorised NumPy, and
planted-bug variants of it, for the specsim harness.

    simulate check --external "python3 -m specsim_ext examples/python/numpy_verify.py:verify"
    simulate check --external "python3 -m specsim_ext examples/python/numpy_verify.py:step" --mode step

The correct rule (Leviathan et al., arXiv 2211.17192, Algorithm 1; Chen et
al., arXiv 2302.01318): draft i is accepted iff u_i < p_i(x_i)/q_i(x_i),
written u_i * q_i(x_i) < p_i(x_i); at the first rejection n the correction
is drawn from norm((p_n - q_n)+), and after γ acceptances the bonus token
from p_γ. Each bug_* function below is one bug class from public trackers
(specsim REFERENCES §7.6); each must be judged violated.
"""

import numpy as np


def softmax(logits):
    l = np.asarray(logits, dtype=np.float64)
    w = np.exp(l - l.max(axis=-1, keepdims=True))
    return w / w.sum(axis=-1, keepdims=True)


def sample_rows(w, u):
    """Inverse-CDF draw from unnormalised rows w [..., V] with coins u [...]:
    the first token whose cumulative mass exceeds u * total (a coin of 0
    gives the first token of positive mass). The rows' normalised CDFs are
    offset by their row index, so one searchsorted serves every row."""
    V = w.shape[-1]
    c = np.cumsum(w.reshape(-1, V), axis=-1, dtype=np.float64)
    n = c.shape[0]
    off = np.arange(n, dtype=np.float64)
    c /= c[:, -1:]
    c += off[:, None]
    x = np.searchsorted(c.ravel(), np.ravel(u) + off, side="right") - np.arange(n) * V
    x = np.minimum(x, V - 1)
    # A coin within rounding of 1 can land past the last token of positive
    # mass (u + row rounds up to row + 1); take that last token instead.
    wr = w.reshape(-1, V)
    bad = np.flatnonzero(wr[np.arange(n), x] <= 0)
    if bad.size:
        x[bad] = V - 1 - np.argmax(wr[bad, ::-1] > 0, axis=1)
    return x.reshape(np.shape(u))


def _verify(p, q, drafts, rng, inclusive=False, row_of=None, q_ratio=None):
    """The shared body; the keyword arguments plant bugs."""
    B, G1, V = p.shape
    G = G1 - 1
    rows = np.arange(B)
    idx = drafts[..., None]
    qr = q if q_ratio is None else q_ratio
    px = np.take_along_axis(p[:, :G], idx, axis=-1)[..., 0].astype(np.float64)
    qx = np.take_along_axis(qr, idx, axis=-1)[..., 0].astype(np.float64)
    u = rng.random((B, G))
    acc = (u * qx <= px) if inclusive else (u * qx < px)
    n = np.where(acc.all(axis=1), G, acc.argmin(axis=1))  # first rejection
    src = rows if row_of is None else row_of(B)
    # The next token's law: p_n (bonus, n = G) or norm((p_n - q_n)+).
    w = p[src, n].astype(np.float64)
    rj = np.flatnonzero(n < G)
    if rj.size:
        r = w[rj] - qr[src[rj], n[rj]]
        np.maximum(r, 0.0, out=r)
        ok = r.sum(axis=1) > 0  # float rounding can empty it when p == q
        w[rj[ok]] = r[ok]
    nxt = sample_rows(w, rng.random(B))
    out = np.full((B, G1), -1, dtype=np.int64)
    keep = np.arange(G)[None, :] < n[:, None]
    out[:, :G][keep] = drafts[keep]
    out[rows, n] = nxt
    return out


def verify(p, q, drafts, rng):
    """Correct: preserved."""
    return _verify(p, q, drafts, rng)


def _draft(q, rng):
    return sample_rows(q, rng.random(q.shape[:-1]))


def step(p_logits, q_logits, rng):
    """Correct step mode: softmax, sample the drafts from q, verify."""
    p, q = softmax(p_logits), softmax(q_logits)
    drafts = _draft(q, rng)
    return drafts, _verify(p, q, drafts, rng)


def step_sampled(p_logits, q_logits, rng, sampling):
    """Correct with sampling parameters: the same transforms on p and q."""
    from specsim_ext import transform
    p, q = transform(p_logits, sampling), transform(q_logits, sampling)
    drafts = _draft(q, rng)
    return drafts, _verify(p, q, drafts, rng)


def verify_sampled(p, q, drafts, rng, sampling):
    """Correct verify mode with sampling parameters: p and q arrive
    untransformed (the drafts were drawn from transform(q))."""
    from specsim_ext import transform
    with np.errstate(divide="ignore"):
        pt, qt = transform(np.log(p), sampling), transform(np.log(q), sampling)
    return _verify(pt, qt, drafts, rng)


# ---- planted bugs ---------------------------------------------------------

# Logits as a model head emits them are not normalised; a typical magnitude
# is a few tens. The harness sends log-probabilities, so the bf16 examples
# shift them to that range first (softmax does not change) - which is where
# bf16's 8-bit mantissa bites: the spacing between 32 and 64 is 1/4.
ENGINE_LOGIT_OFFSET = 48.0


def bf16(x):
    """Round float32 values to bfloat16 (round to nearest even) and back."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & np.uint32(0xFFFF0000)
    return b.view(np.float32)


def bug_bf16_step(p_logits, q_logits, rng):
    """DeepSpec #31: drafts sampled from softmax of bf16 logits while the
    ratio and residual use the float32 probabilities."""
    p, q = softmax(p_logits), softmax(q_logits)
    qb = softmax(bf16(np.asarray(q_logits, np.float32) + ENGINE_LOGIT_OFFSET))
    drafts = _draft(qb, rng)
    return drafts, _verify(p, q, drafts, rng)


def bug_bf16_verify(p, q, drafts, rng):
    """The verify-mode face of the same mismatch: the drafts came from q,
    the ratio and residual use q recomputed through a bf16 logit path."""
    with np.errstate(divide="ignore"):
        qb = softmax(bf16(np.log(q).astype(np.float32) + ENGINE_LOGIT_OFFSET))
    return _verify(p, q, drafts, rng, q_ratio=qb)


def bug_zero_coin(p, q, drafts, rng):
    """sglang #35771: accept iff u <= p/q (inclusive), so a draft of target
    probability 0 is accepted when the coin is exactly 0."""
    return _verify(p, q, drafts, rng, inclusive=True)


def bug_zero_coin_step(p_logits, q_logits, rng):
    p, q = softmax(p_logits), softmax(q_logits)
    drafts = _draft(q, rng)
    return drafts, _verify(p, q, drafts, rng, inclusive=True)


def bug_topk_candidates(p_logits, q_logits, rng):
    """Beam-search / top-k candidates verified as if sampled: the drafts are
    the draft model's argmax (a deterministic candidate), the ratio uses q
    (jaymody/speculative-sampling #3; the lossless alternative is the
    membership rule with q = 1)."""
    p, q = softmax(p_logits), softmax(q_logits)
    drafts = q.argmax(axis=-1)
    return drafts, _verify(p, q, drafts, rng)


def bug_params_draft_only(p_logits, q_logits, rng, sampling):
    """vllm #9834 / transformers #47932: temperature/top-k/top-p applied to
    the draft distribution but not to the target's."""
    from specsim_ext import transform
    p, q = softmax(p_logits), transform(q_logits, sampling)
    drafts = _draft(q, rng)
    return drafts, _verify(p, q, drafts, rng)


def bug_params_draft_only_verify(p, q, drafts, rng, sampling):
    from specsim_ext import transform
    with np.errstate(divide="ignore"):
        qt = transform(np.log(q), sampling)
    return _verify(p.astype(np.float64), qt, drafts, rng)


def _row_off_by_one(B):
    """Rows b >= 2 read row b-1's distributions for their correction or
    bonus token: a gather offset that only exists when B > 2."""
    src = np.arange(B)
    if B > 2:
        src[2:] -= 1
    return src


def bug_batch_rows(p, q, drafts, rng):
    """A batch-row bug that appears only above two sequences."""
    return _verify(p, q, drafts, rng, row_of=_row_off_by_one)


def bug_batch_rows_step(p_logits, q_logits, rng):
    p, q = softmax(p_logits), softmax(q_logits)
    drafts = _draft(q, rng)
    return drafts, _verify(p, q, drafts, rng, row_of=_row_off_by_one)


# ---- protocol misbehaviour (robustness tests) ------------------------------

def lie_drafts(p, q, drafts, rng):
    """Claims to accept a token that was not the draft."""
    out = verify(p, q, drafts, rng)
    out[:, 0] = (drafts[:, 0] + 1) % p.shape[-1]
    out[:, 1] = drafts[:, 1]
    return out


def lie_padding(p, q, drafts, rng):
    out = verify(p, q, drafts, rng)
    out[:, 0] = -1
    return out


def lie_shape(p, q, drafts, rng):
    return verify(p, q, drafts, rng)[:, :-1]


def lie_dtype(p, q, drafts, rng):
    return verify(p, q, drafts, rng).astype(np.float32)


def hang(p, q, drafts, rng):
    import time
    time.sleep(3600)


def crash(p, q, drafts, rng):
    import os
    import signal
    os.kill(os.getpid(), signal.SIGKILL)


def boom(p, q, drafts, rng):
    raise ValueError("planted failure")
