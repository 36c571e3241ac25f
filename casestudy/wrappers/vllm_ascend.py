"""vllm-project/vllm-ascend: vllm_ascend/sample/rejection_sampler.py's
rejection_sample, the PyTorch path (no Triton), in verify mode.

rejection_sample(draft_token_ids, num_draft_tokens, max_spec_len,
cu_num_draft_tokens, draft_probs, target_logits, bonus_token_ids,
sampling_metadata) takes a flattened batch; with max_spec_len >= 3 and
draft probabilities it uses block verification (Sun et al.), otherwise
token verification. The upstream definitions in that file run unchanged;
the names it imports from vLLM are bound here:

- generate_uniform_probs (vLLM's acceptance coins) returns the harness's
  coins, batch.uniforms(gamma), so the scripted edge cases reach it;
- the constants PLACEHOLDER_TOKEN_ID = -1 and GREEDY_TEMPERATURE = 0 and
  MAX_SPEC_LEN = 128, as vLLM defines them;
- HAS_TRITON = False, which selects the file's own PyTorch functions;
- torch without pin_memory (see upstream.no_pin).

The bonus tokens, which vLLM's ordinary sampler draws before this
function, are drawn here from the target's last row with batch coins; the
recovered tokens' exponential race draws from torch's global generator,
seeded from the batch's generator.
"""

import types

import numpy as np
import torch

import upstream

_NAMES = ["rejection_sample", "sample_recovered_tokens", "sample_recovered_tokens_pytorch",
          "sample_recovered_tokens_blockwise_pytorch", "rejection_random_sample_pytorch",
          "rejection_random_sample_block_verify_pytorch", "rejection_greedy_sample_pytorch",
          "rejection_greedy_sample_spec_len_1_pytorch", "expand_pytorch"]


def _load():
    env = {"torch": upstream.no_pin(torch), "HAS_TRITON": False, "triton": None,
           "PLACEHOLDER_TOKEN_ID": -1, "GREEDY_TEMPERATURE": 0, "MAX_SPEC_LEN": 128,
           "SamplingMetadata": object}
    names = [n for n in _NAMES if upstream.has(n)]
    return upstream.load(names, env)


_ns = _load()


def _inverse_cdf(rows, u):
    c = np.cumsum(rows, axis=1)
    idx = (c < (u * c[:, -1])[:, None]).sum(axis=1)
    return np.minimum(idx, rows.shape[1] - 1)


def verify(batch):
    """verify runs upstream rejection_sample on the batch, with the draft
    probabilities (a draft model's path: EAGLE, MTP)."""
    return _run(batch, True)


def ngram(batch):
    """ngram runs upstream rejection_sample with draft_probs None, as for
    n-gram and suffix drafters (the drafts are point masses; accepting x
    with probability p(x) and else sampling p without x is lossless for
    drafts from any law, so the harness's drafts from q may be judged)."""
    return _run(batch, False)


def _run(batch, with_q):
    B, G = batch.size, batch.gamma
    V = batch.p.shape[-1]
    u = batch.uniforms(G + 1)
    _ns["generate_uniform_probs"] = lambda *a, **k: torch.tensor(u[:, :G].reshape(-1), dtype=torch.float64)
    torch.manual_seed(int(batch.rng.integers(2**62)))
    p = np.asarray(batch.p, dtype=np.float32)
    with np.errstate(divide="ignore"):
        logits = np.log(p[:, :G].reshape(B * G, V))
    meta = types.SimpleNamespace(all_greedy=False, all_random=True, temperature=torch.ones(B), generators={})
    out = _ns["rejection_sample"](
        torch.tensor(np.asarray(batch.drafts).reshape(-1), dtype=torch.long), [G] * B, G,
        torch.arange(1, B + 1, dtype=torch.int32) * G,
        torch.tensor(np.asarray(batch.q, dtype=np.float32).reshape(B * G, V)) if with_q else None,
        torch.tensor(logits).contiguous(),
        torch.tensor(_inverse_cdf(p[:, G], u[:, G]), dtype=torch.long)[:, None].contiguous(),
        meta)
    return out.numpy().astype(np.int64)
