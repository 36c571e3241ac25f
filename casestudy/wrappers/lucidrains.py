"""lucidrains/speculative-decoding: speculative_decoding/speculative_decoding.py's
speculative_decoding (PyTorch), one speculative step per batch row in step
mode on a Markov pair.

speculative_decoding(net, small_net, prompt, seq_len, gamma, temperature,
filter_thres, lenience) loops until the sequence has seq_len tokens; with
seq_len one more than the prompt it runs one step and returns the tokens
it appended. Its networks answer net(x, cache=..., return_cache=True) with
(logits [1, len(x), V+1], cache); here the logits are the logarithms of
the harness model's rows and the cache a placeholder that the function
only slices. filter_thres = 0 keeps every token (top_k keeps
ceil((1 - thres) V)), temperature 1 and lenience 1 make the rule lossless
as written. Coins come from torch's global generator (uniform_, Gumbel
noise, multinomial), seeded from the batch's generator.

einops is not installed with the system Python: rearrange below serves
the two patterns this function uses and refuses any other.
"""

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import Module

import upstream

_PATTERNS = {"b -> b 1 1": lambda t: t[:, None, None], "b n 1 -> b n": lambda t: t[..., 0]}


def rearrange(t, pattern):
    """rearrange applies one of the einops patterns speculative_decoding uses."""
    if pattern not in _PATTERNS:
        raise ValueError("rearrange: pattern %r is not one this wrapper serves (einops is not installed)" % pattern)
    return _PATTERNS[pattern](t)


_NAMES = ["exists", "default", "log", "gumbel_noise", "gumbel_sample", "top_k", "safe_div",
                     "find_first_true_index", "speculative_decoding"]
_ns = upstream.load(_NAMES, {"torch": torch, "F": F, "Tensor": Tensor, "Module": Module, "math": __import__("math"),
                     "rearrange": rearrange})


class _Net:
    """A network answering net(x, cache=, return_cache=True) from one row's RowModel."""

    def __init__(self, rows):
        self.rows = rows

    def __call__(self, x, cache=None, return_cache=False):
        with np.errstate(divide="ignore"):
            logits = torch.tensor(np.log(self.rows.rows(x[0].tolist())), dtype=torch.float32)[None]
        if return_cache:
            return logits, torch.zeros((1, x.shape[-1], 1))
        return logits


def step(batch):
    """step runs upstream speculative_decoding once per row."""
    B, G = batch.size, batch.gamma
    torch.manual_seed(int(batch.rng.integers(2**62)))
    out = np.empty((B, G + 1), dtype=np.int64)
    for b in range(B):
        net = _Net(upstream.RowModel(batch.model, b, target=True))
        small = _Net(upstream.RowModel(batch.model, b, target=False))
        new, _ = _ns["speculative_decoding"](net, small, torch.zeros((1, 1), dtype=torch.long), 2, gamma=G,
                                             temperature=1.0, filter_thres=0.0, lenience=1.0)
        out[b] = upstream.harness_tokens([0] + new[0].tolist(), 1, G)
    return out

