"""Token verification in PyTorch for the specsim harness (CPU tensors;
the harness hands NumPy arrays, converted without copies where possible).

    simulate check --external "python3 -m specsim_ext examples/python/torch_verify.py:verify"
"""

import numpy as np
import torch


def verify(p, q, drafts, rng):
    p = torch.from_numpy(np.ascontiguousarray(p)).double()
    q = torch.from_numpy(np.ascontiguousarray(q)).double()
    d = torch.from_numpy(np.ascontiguousarray(drafts))
    g = torch.Generator().manual_seed(int(rng.integers(2**62)))
    B, G1, V = p.shape
    G = G1 - 1
    rows = torch.arange(B)
    px = p[:, :G].gather(-1, d[..., None])[..., 0]
    qx = q.gather(-1, d[..., None])[..., 0]
    u = torch.rand(B, G, generator=g, dtype=torch.float64)
    acc = u * qx < px
    n = torch.where(acc.all(dim=1), torch.full((B,), G), (~acc).int().argmax(dim=1))
    pn = p[rows, n]
    qn = q[rows, n.clamp(max=G - 1)]
    w = torch.where((n < G)[:, None], (pn - qn).clamp(min=0), pn)
    w = torch.where(w.sum(dim=1, keepdim=True) > 0, w, pn)
    nxt = torch.multinomial(w, 1, generator=g)[:, 0]
    out = torch.full((B, G1), -1, dtype=torch.int64)
    keep = torch.arange(G)[None, :] < n[:, None]
    out[:, :G][keep] = d[keep]
    out[rows, n] = nxt
    return out.numpy()
