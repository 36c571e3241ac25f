"""romsto/Speculative-Decoding: sampling/speculative_decoding.py's
speculative_generate (PyTorch, Hugging Face style models), in step mode on
a Markov pair.

speculative_generate(inputs, drafter, target, tokenizer, gamma,
logits_processor, max_gen_len, eos_tokens_id, pad_token_id, use_cache,
skip_sample_adjustment, first_target) first samples one token from the
target (first_target), then runs speculative steps until max_gen_len
tokens were generated. With max_gen_len = gamma + 1 each row's call
returns gamma + 1 tokens: the target's first token and one or more
speculative steps (the later ones with fewer drafts); step mode judges
every one of them against the target law given the tokens before it, as
a lossless generator must pass. The logits processor is upstream's own
MultinomialProcessor (utils/logits_processor.py at the same commit) at
temperature 1; eos_tokens_id is an id no model emits (-5) and
use_cache=False (the stand-in models recompute every position). Coins
come from torch's global generator, seeded from the batch's generator.
"""

import abc
import types

import numpy as np
import torch
from torch import Tensor
from torch.nn import Module
from torch.nn import functional as F

import upstream

_lp = upstream.load(["LogitsProcessor", "GreedyProcessor", "MultinomialProcessor"],
                    {"abc": abc, "torch": torch, "Tensor": Tensor, "F": F, "__name__": "logits_processor"},
                    path=upstream.sibling("utils/logits_processor.py"))
_ns = upstream.load(["max_fn", "speculative_generate"],
                    {"torch": torch, "Module": Module, "List": list, "GreedyProcessor": _lp["GreedyProcessor"],
                     "LogitsProcessor": _lp["LogitsProcessor"]})


class _HF:
    """A causal LM answering model(input_ids=, past_key_values=, use_cache=) from one row's RowModel."""

    device = torch.device("cpu")

    def __init__(self, rows):
        self.rows = rows
        self.config = types.SimpleNamespace(vocab_size=rows.model.vocab + 1, max_position_embeddings=1 << 20)

    def __call__(self, input_ids=None, past_key_values=None, use_cache=False):
        with np.errstate(divide="ignore"):
            logits = np.log(self.rows.rows(input_ids[0].tolist()))
        return types.SimpleNamespace(logits=torch.tensor(logits, dtype=torch.float32)[None], past_key_values=None)


def step(batch):
    """step runs upstream speculative_generate once per row."""
    B, G = batch.size, batch.gamma
    torch.manual_seed(int(batch.rng.integers(2**62)))
    proc = _lp["MultinomialProcessor"](temperature=1.0)
    out = np.empty((B, G + 1), dtype=np.int64)
    for b in range(B):
        drafter = _HF(upstream.RowModel(batch.model, b, target=False))
        target = _HF(upstream.RowModel(batch.model, b, target=True))
        toks, _ = _ns["speculative_generate"]([0], drafter, target, None, gamma=G, logits_processor=proc,
                                              max_gen_len=G + 1, eos_tokens_id=-5, pad_token_id=0,
                                              use_cache=False, first_target=True)
        out[b] = upstream.harness_tokens([0] + toks, 1, G)
    return out
