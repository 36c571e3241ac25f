"""romsto/Speculative-Decoding as of April 2024: sampling/speculative_decoding.py's
speculative_decoding (PyTorch), in step mode on a Markov pair.

speculative_decoding(input_ids, drafter, target, min_len, gamma, ...)
samples a first token from the target (target_first, the default) and then
runs speculative steps until min_len tokens were generated. With min_len =
2 it runs one step after the first token, so a call returns at most gamma
+ 2 tokens; the wrapper passes gamma - 1 drafts so that a row emits at
most the harness's gamma + 1 tokens, every one judged against the target
law given the tokens before it. Every other parameter keeps upstream's
default (temperature 1, no top-k or top-p, and skip_sample_adjustment
where the commit has it) except end_token_id, an id no model emits (-5),
and use_cache=False. norm_logits, sample, forward, decoder_start_token and
is_decoder_only are upstream's (utils/sampling.py, utils/generation.py at
the same commit). transformers is not installed with the system Python:
the function only asks isinstance(model, T5ForConditionalGeneration) to
choose a cache pruner, and the stand-in models are decoder-only, so an
empty class answers it. Coins come from torch's global generator, seeded
from the batch's generator.
"""

import types
import typing

import numpy as np
import torch
from torch import Tensor, cat, tensor
from torch.nn import Module
from torch.nn import functional as F

import upstream


class T5ForConditionalGeneration:
    """T5ForConditionalGeneration stands in for transformers' class in an isinstance test."""


_util = {"torch": torch, "Tensor": Tensor, "F": F, "Module": Module, "tensor": tensor, "cat": cat,
         "Optional": typing.Optional}
upstream.load(["topp", "top_k_top_p_filter", "norm_logits", "sample"], _util, path=upstream.sibling("utils/sampling.py"))
upstream.load(["forward", "is_decoder_only", "decoder_start_token"], _util, path=upstream.sibling("utils/generation.py"))
_ns = upstream.load(["max_fn", "speculative_decoding"],
                    {"torch": torch, "Tensor": Tensor, "Module": Module, "Tuple": typing.Tuple,
                     "T5ForConditionalGeneration": T5ForConditionalGeneration,
                     "prune_cache_general": None, "prune_cache_t5": None,
                     **{k: _util[k] for k in ("norm_logits", "sample", "forward", "decoder_start_token", "is_decoder_only")}})


class _LM:
    """A decoder-only causal LM answering model(ids, past_key_values=, use_cache=) from one row's RowModel."""

    device = torch.device("cpu")

    def __init__(self, rows):
        self.rows = rows
        self.config = types.SimpleNamespace(vocab_size=rows.model.vocab + 1)

    def __call__(self, input_ids, past_key_values=None, use_cache=False):
        with np.errstate(divide="ignore"):
            logits = np.log(self.rows.rows(input_ids[0].tolist()))
        return types.SimpleNamespace(logits=torch.tensor(logits, dtype=torch.float32)[None], past_key_values=None)


def step(batch):
    """step runs upstream speculative_decoding once per row."""
    B, G = batch.size, batch.gamma
    torch.manual_seed(int(batch.rng.integers(2**62)))
    out = np.empty((B, G + 1), dtype=np.int64)
    for b in range(B):
        drafter = _LM(upstream.RowModel(batch.model, b, target=False))
        target = _LM(upstream.RowModel(batch.model, b, target=True))
        ids, _ = _ns["speculative_decoding"](torch.zeros((1, 1), dtype=torch.long), drafter, target,
                                             min_len=2, gamma=G - 1, end_token_id=-5, use_cache=False)
        out[b] = upstream.harness_tokens([0] + ids[0].tolist(), 1, G)
    return out
