"""The no-harness baseline of tree mode's overhead: a function called in a
plain Python loop on the very batches the harness sent (saved by a run with
SPECSIM_EXT_SAVE=DIR; specsim_ext.load_saved rebuilds them), timed alone.

    SPECSIM_EXT_SAVE=/tmp/trees simulate check --external \\
        "python3 -m specsim_ext examples/python/tree_verify.py:specinfer" --mode tree \\
        --draft iid --k 4 --gamma 4 --source dirichlet:V=1000,contexts=16 --batch 1024 --trials 8192
    python3 examples/python/bench_tree.py /tmp/trees [FUNCTION] [rounds]

prints steps/s by wall clock and by CPU time (process_time); go test
./external -run TreeSpeed -external.speed runs both and compares."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import specsim_ext  # noqa: E402
import tree_verify  # noqa: E402


def main(argv):
    d = argv[1]
    fn = getattr(tree_verify, argv[2] if len(argv) > 2 else "specinfer")
    rounds = int(argv[3]) if len(argv) > 3 else 5
    batches = specsim_ext.load_saved(d)
    if not batches:
        raise SystemExit("no saved batches in %s" % d)
    steps = sum(b.size for b in batches)
    fn(batches[0])  # warm up
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(rounds):
        for b in batches:
            b.rng = np.random.Generator(np.random.PCG64(b.index))
            fn(b)
    w1, c1 = time.perf_counter(), time.process_time()
    n = rounds * steps
    print("plain loop, %d batches of %d trees, %d rounds: %.0f steps/s wall, %.0f steps/s CPU"
          % (len(batches), batches[0].size, rounds, n / (w1 - w0), n / (c1 - c0)))


if __name__ == "__main__":
    main(sys.argv)
