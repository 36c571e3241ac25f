"""The no-harness baseline for the protocol-overhead figure: the same
NumPy function called in a plain Python loop over batches of the same
shape (a Dirichlet pool of 16 contexts, rows cycling through the contexts
as the harness's do, drafts sampled from q), prebuilt so the loop times
the function alone.

    /usr/bin/python3 examples/python/bench_loop.py [V] [gamma] [B] [batches]

prints steps/s by wall clock and by CPU time (process_time)."""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy_verify as nv  # noqa: E402


def main(argv):
    V, G, B, nb = (int(a) for a in (argv[1:] + ["1000", "4", "1024", "100"][len(argv) - 1:])[:4])
    rng0 = np.random.default_rng(1)
    C = 16
    P = rng0.dirichlet(np.full(V, 0.1), size=(C, G + 1)).astype(np.float32)
    Q = rng0.dirichlet(np.full(V, 0.1), size=(C, G)).astype(np.float32)
    batches = []
    for k in range(4):  # prebuilt, cycled
        ctx = np.arange(k * B, (k + 1) * B) % C
        p, q = P[ctx], Q[ctx]
        batches.append((p, q, nv.sample_rows(q, rng0.random(q.shape[:-1]))))
    nv.verify(*batches[0], np.random.Generator(np.random.PCG64(0)))  # warm up
    w0, c0 = time.perf_counter(), time.process_time()
    for k in range(nb):
        p, q, d = batches[k % len(batches)]
        nv.verify(p, q, d, np.random.Generator(np.random.PCG64(k)))
    w1, c1 = time.perf_counter(), time.process_time()
    print("plain loop, V=%d gamma=%d B=%d, %d batches: %.0f steps/s wall, %.0f steps/s CPU"
          % (V, G, B, nb, nb * B / (w1 - w0), nb * B / (c1 - c0)))


if __name__ == "__main__":
    main(sys.argv)
