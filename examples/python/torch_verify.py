"""Token verification in PyTorch for the specsim harness, on any device
(CUDA when available, else the CPU), with every coin taken from the batch.

    simulate check --external "python3 -m specsim_ext examples/python/torch_verify.py:verify"

The harness owns the coins: batch.uniforms(n, device=dev) hands the step's
uniforms as a float64 tensor on dev, and in the scripted-coin edge cases
they are exactly 0, then just below 1. A torch.Generator seeded from
rng.integers would never see those coins, and the edge cases would be
reported not_exercised.
"""

import numpy as np
import torch


def _device(device):
    if device is not None:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _verify(batch, device=None, inclusive=False):
    dev = _device(device)
    p = torch.from_numpy(np.ascontiguousarray(batch.p)).to(dev, torch.float64)
    q = torch.from_numpy(np.ascontiguousarray(batch.q)).to(dev, torch.float64)
    d = torch.from_numpy(np.ascontiguousarray(batch.drafts)).to(dev)
    B, G1, V = p.shape
    G = G1 - 1
    u = batch.uniforms(G + 1, device=dev)  # [B, G+1]: G acceptance coins, one for the next token
    rows = torch.arange(B, device=dev)
    px = p[:, :G].gather(-1, d[..., None])[..., 0]
    qx = q.gather(-1, d[..., None])[..., 0]
    acc = (u[:, :G] * qx <= px) if inclusive else (u[:, :G] * qx < px)
    n = torch.where(acc.all(dim=1), torch.full((B,), G, device=dev), (~acc).int().argmax(dim=1))
    pn = p[rows, n]
    qn = q[rows, n.clamp(max=G - 1)]
    w = torch.where((n < G)[:, None], (pn - qn).clamp(min=0), pn)
    w = torch.where(w.sum(dim=1, keepdim=True) > 0, w, pn)
    # inverse CDF: the first token whose cumulative mass exceeds the coin
    c = w.cumsum(dim=1)
    c = c / c[:, -1:]
    nxt = torch.searchsorted(c, u[:, G:], right=True)[:, 0].clamp(max=V - 1)
    out = torch.full((B, G1), -1, dtype=torch.int64, device=dev)
    keep = torch.arange(G, device=dev)[None, :] < n[:, None]
    out[:, :G][keep] = d[keep]
    out[rows, n] = nxt
    return out.cpu().numpy()


def verify(batch, device=None):
    """Correct: not detected, edge cases passed."""
    return _verify(batch, device)


def bug_inclusive(batch, device=None):
    """Accepts while u * q <= p (sglang issue 35771): the coin of exactly 0
    accepts a draft of target probability 0; the edge cases are violated."""
    return _verify(batch, device, inclusive=True)


def verify_cuda(batch):
    """verify on the CUDA device, the coins handed as CUDA tensors (the
    device test, TestTorchCUDA, runs it where torch sees a GPU)."""
    return _verify(batch, "cuda")
