"""Serves the protocol for one Python function (python3 -m specsim_ext)."""

import importlib
import inspect
import os
import sys
import traceback

import numpy as np

from . import _protocol as proto
from ._sampling import Sampling


class ScriptedGenerator:
    """Stands in for numpy.random.Generator in the harness's edge-case
    batches: every random() draw is exactly `value` (0.0, or 1 - 2**-53),
    uniform(low, high) is low + (high - low) * value; every other method is
    a seeded Generator's. A rule that compares coin <= p/q inclusively
    accepts a draft with p = 0 when the coin is exactly 0 (sglang #35771).
    """

    def __init__(self, value, seed):
        self._value = value
        self._rng = np.random.Generator(np.random.PCG64(seed))

    def random(self, size=None, dtype=np.float64, out=None):
        if size is None and out is None:
            return dtype(self._value) if isinstance(dtype, type) else np.dtype(dtype).type(self._value)
        if out is not None:
            out[...] = self._value
            return out
        return np.full(size, self._value, dtype=dtype)

    def uniform(self, low=0.0, high=1.0, size=None):
        v = low + (high - low) * self._value
        if size is None:
            return v
        return np.full(size, v)

    def __getattr__(self, name):
        return getattr(self._rng, name)


def load(spec):
    """Import MODULE:FUNCTION (the module may be a file path ending in .py)."""
    if ":" not in spec:
        raise SystemExit("specsim_ext: %r is not MODULE:FUNCTION" % spec)
    mod, fn = spec.rsplit(":", 1)
    if mod.endswith(".py"):
        path = os.path.abspath(mod)
        sys.path.insert(0, os.path.dirname(path))
        mod = os.path.splitext(os.path.basename(path))[0]
    else:
        sys.path.insert(0, os.getcwd())
    m = importlib.import_module(mod)
    f = m
    for part in fn.split("."):
        f = getattr(f, part)
    return f


def takes_sampling(f, mode):
    """Whether f takes the sampling argument: a fifth positional parameter
    in verify mode, a fourth in step mode."""
    need = 5 if mode == "verify" else 4
    try:
        params = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return False
    pos = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(pos) >= need or any(p.kind == p.VAR_POSITIONAL for p in params)


def _describe(exc):
    tb = traceback.extract_tb(exc.__traceback__)
    where = ""
    if tb:
        fr = tb[-1]
        where = " (%s:%d)" % (os.path.basename(fr.filename), fr.lineno)
    return "%s: %s%s" % (type(exc).__name__, exc, where)


def serve(f, name, stdin=None, stdout=None):
    """Answer the harness's messages with f until it says close."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    mode, sampling, with_sampling = "verify", None, False
    pool_p = pool_q = buf_p = buf_q = buf_ctx = None
    while True:
        h = proto.read_header(stdin)
        if h is None or h["op"] == "close":
            return
        op = h["op"]
        if op == "hello":
            mode = h["mode"]
            with_sampling = takes_sampling(f, mode)
            s = h.get("sampling")
            sampling = Sampling(**s) if s else Sampling()
            proto.write_header(stdout, {"op": "ready", "name": name, "takes_sampling": with_sampling, "arrays": []})
        elif op == "pool":
            pool_p = proto.read_array(stdin)
            pool_q = proto.read_array(stdin)
            buf_ctx = None
            proto.write_header(stdout, {"op": "ok", "batch": 0, "arrays": []})
        elif op == "batch":
            arrays = {k: proto.read_array(stdin) for k in h["arrays"]}
            if h["rows"] == "pool":
                ctx = arrays["ctx"]
                # Gather into read-only buffers kept across batches; a batch
                # whose contexts equal the previous batch's (the harness
                # cycles through the contexts, so with B a multiple of
                # their number every batch does) reuses them as they are.
                if buf_ctx is None or not np.array_equal(buf_ctx, ctx):
                    if buf_p is None or buf_p.shape[0] != len(ctx):
                        buf_p = np.empty((len(ctx),) + pool_p.shape[1:], pool_p.dtype)
                        buf_q = np.empty((len(ctx),) + pool_q.shape[1:], pool_q.dtype)
                    buf_p.flags.writeable = buf_q.flags.writeable = True
                    np.take(pool_p, ctx, axis=0, out=buf_p)
                    np.take(pool_q, ctx, axis=0, out=buf_q)
                    buf_p.flags.writeable = buf_q.flags.writeable = False
                    buf_ctx = ctx.copy()
                p, q = buf_p, buf_q
            else:
                p, q = arrays["p"], arrays["q"]
            coins = h.get("coins", "random")
            if coins == "random":
                rng = np.random.Generator(np.random.PCG64(h.get("seed", 0)))
            else:
                rng = ScriptedGenerator(0.0 if coins == "zero" else 1.0 - 2.0**-53, h.get("seed", 0))
            args = [p, q]
            if mode == "verify":
                args.append(arrays["drafts"].copy())
            args.append(rng)
            if with_sampling:
                args.append(sampling)
            try:
                res = f(*args)
                if mode == "verify":
                    out = {"emitted": np.asarray(res)}
                else:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise TypeError("a step function returns (drafts, emitted), got %s" % type(res).__name__)
                    out = {"drafts": np.asarray(res[0]), "emitted": np.asarray(res[1])}
                for v in out.values():
                    if v.dtype.hasobject:
                        raise TypeError("the function returned an array of dtype object")
            except Exception as exc:  # reported to the harness, which stops
                traceback.print_exc(file=sys.stderr)
                proto.write_header(stdout, {"op": "error", "batch": h["batch"], "message": _describe(exc), "arrays": []})
                stdout.flush()
                continue
            proto.write_header(stdout, {"op": "result", "batch": h["batch"], "arrays": list(out)})
            for v in out.values():
                proto.write_array(stdout, v)
        else:
            proto.write_header(stdout, {"op": "error", "batch": h.get("batch", 0), "message": "unknown message %r" % op, "arrays": []})
        stdout.flush()
