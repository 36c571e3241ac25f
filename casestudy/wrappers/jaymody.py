"""jaymody/speculative-sampling: main.py's speculative_sampling (NumPy),
one speculative step per batch row in step mode on a Markov pair.

speculative_sampling(x, draft_model, target_model, N, K) runs until N
tokens were appended; with N = 1 it runs exactly one step (K drafts, then
the accepted drafts and a correction or bonus token). Its models map a
token array to next-token probabilities at every position, which
RowModel provides from the harness's model. It draws every coin from
NumPy's global generator, which the wrapper seeds from the batch's
generator (so the harness's scripted edge-case coins are not seen).
"""

import numpy as np

import upstream

_ns = upstream.load(["max_fn", "sample", "speculative_sampling"], {"np": np, "tqdm": upstream.tqdm})


def step(batch):
    """step runs upstream speculative_sampling once per row."""
    B, G = batch.size, batch.gamma
    np.random.seed(int(batch.rng.integers(2**32)))
    out = np.empty((B, G + 1), dtype=np.int64)
    for b in range(B):
        draft = upstream.RowModel(batch.model, b, target=False)
        target = upstream.RowModel(batch.model, b, target=True)
        x = _ns["speculative_sampling"](np.array([0]), draft.rows, target.rows, 1, G)
        out[b] = upstream.harness_tokens(x, 1, G)
    return out
