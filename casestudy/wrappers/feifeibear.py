"""feifeibear/LLMSpeculativeSampling: sample.py's speculative_sampling_v2
(DeepMind's version) and speculative_sampling (Google's version), PyTorch,
one speculative step per batch row in step mode on a Markov pair.

Both take (prefix, approx_model, target_model, max_len, gamma, temperature,
top_k, top_p) and loop until max_len tokens were appended; with max_len = 1
they run one step. Their models are Hugging Face style: model(x).logits,
float32 [1, len(x), V+1], here the logarithms of the harness model's rows.
They draw coins from torch's global generator (torch.rand,
torch.multinomial), which the wrapper seeds from the batch's generator.
Upstream's sample() raises RuntimeError when it draws id 0 (a padding
guard); id 0 is the start token of probability 0 (see upstream.py).
"""

import types

import numpy as np
import torch
from torch.nn import functional as F

import upstream

_NAMES = ["top_k_top_p_filter", "sample", "max_fn", "norm_logits", "speculative_sampling_v2", "speculative_sampling"]
_ns = upstream.load(_NAMES, {"torch": torch, "F": F, "tqdm": upstream.tqdm})


class _HF:
    """A model answering model(x).logits from one row's RowModel."""

    device = torch.device("cpu")

    def __init__(self, rows):
        self.rows = rows

    def __call__(self, x):
        with np.errstate(divide="ignore"):
            logits = np.log(self.rows.rows(x[0].tolist()))
        return types.SimpleNamespace(logits=torch.tensor(logits, dtype=torch.float32)[None])


def _run(batch, name):
    B, G = batch.size, batch.gamma
    torch.manual_seed(int(batch.rng.integers(2**62)))
    f = _ns[name]
    out = np.empty((B, G + 1), dtype=np.int64)
    for b in range(B):
        approx = _HF(upstream.RowModel(batch.model, b, target=False))
        target = _HF(upstream.RowModel(batch.model, b, target=True))
        x = f(torch.zeros((1, 1), dtype=torch.long), approx, target, 1, G)
        out[b] = upstream.harness_tokens(x[0].tolist(), 1, G)
    return out


def deepmind(batch):
    """deepmind runs upstream speculative_sampling_v2 once per row."""
    return _run(batch, "speculative_sampling_v2")


def google(batch):
    """google runs upstream speculative_sampling once per row."""
    return _run(batch, "speculative_sampling")
