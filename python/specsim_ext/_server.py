"""Serves the protocol for one Python function (python3 -m specsim_ext)."""

import importlib
import inspect
import json
import os
import sys
import traceback

import numpy as np

from . import _protocol as proto
from ._batch import Batch, MarkovModel, PositionalModel, per_row_sampling
from ._sampling import RowSampling, Sampling

#: The newest protocol version this package speaks.
PROTOCOL = 2


class ScriptedGenerator:
    """Stands in for numpy.random.Generator in the harness's edge-case
    batches: every random() draw is exactly 0, or (top) the largest value
    of its dtype below 1 (1 - 2**-53 in float64, 1 - 2**-24 in float32);
    uniform(low, high) is low + (high - low) * that float64 value; every
    other method is a seeded Generator's (its draws are not scripted: a
    sampler that seeds a generator of its own from integers() is not
    exercised by the edge cases, and the harness says so). A rule that
    compares coin <= p/q inclusively accepts a draft with p = 0 when the
    coin is exactly 0 (sglang #35771).
    """

    def __init__(self, top, seed):
        self._top = bool(top)
        self._rng = np.random.Generator(np.random.PCG64(seed))

    def _value(self, dtype):
        t = np.dtype(dtype).type
        return np.nextafter(t(1), t(0)) if self._top else t(0)

    def random(self, size=None, dtype=np.float64, out=None):
        v = self._value(dtype if out is None else out.dtype)
        if out is not None:
            out[...] = v
            return out
        if size is None:
            return v
        return np.full(size, v, dtype=dtype)

    def uniform(self, low=0.0, high=1.0, size=None):
        v = low + (high - low) * self._value(np.float64)
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


def _positional(f):
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return None, False
    pos = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return pos, any(p.kind == p.VAR_POSITIONAL for p in params)


def takes_batch(f):
    """Whether f is a function of one argument (a Batch, protocol 2)."""
    pos, var = _positional(f)
    if pos is None or var:
        return False
    required = [p for p in pos if p.default is p.empty]
    return len(required) == 1


def takes_sampling(f, mode):
    """Whether f takes the sampling argument: a fifth positional parameter
    in verify mode, a fourth in step mode; a function of a Batch always
    does (Batch.sampling)."""
    if takes_batch(f):
        return True
    need = 5 if mode == "verify" else 4
    pos, var = _positional(f)
    if pos is None:
        return False
    return len(pos) >= need or var


def _signature(f):
    try:
        return str(inspect.signature(f))
    except (TypeError, ValueError):
        return "other arguments"


def _describe(exc):
    tb = traceback.extract_tb(exc.__traceback__)
    where = ""
    if tb:
        fr = tb[-1]
        where = " (%s:%d)" % (os.path.basename(fr.filename), fr.lineno)
    return "%s: %s%s" % (type(exc).__name__, exc, where)


class _Saver:
    """With SPECSIM_EXT_SAVE=DIR, keeps the tables and the first
    SPECSIM_EXT_SAVE_BATCHES (default 8) batches as .npz files, so that a
    benchmark can call the function on the very batches the harness sent
    (load_saved)."""

    def __init__(self):
        self.dir = os.environ.get("SPECSIM_EXT_SAVE")
        self.left = int(os.environ.get("SPECSIM_EXT_SAVE_BATCHES", "8"))
        if self.dir:
            os.makedirs(self.dir, exist_ok=True)

    def hello(self, header):
        if self.dir:
            with open(os.path.join(self.dir, "hello.json"), "w") as fh:
                json.dump(header, fh)

    def tables(self, header, arrays):
        if self.dir:
            np.savez(os.path.join(self.dir, "%s.npz" % header["op"]), header=json.dumps(header), **arrays)

    def batch(self, header, arrays):
        if self.dir and self.left > 0 and header.get("coins", "random") == "random":
            self.left -= 1
            np.savez(os.path.join(self.dir, "batch-%06d.npz" % header["batch"]), header=json.dumps(header), **arrays)


class Server:
    """The state of one session with the harness."""

    def __init__(self, f, name):
        self.f, self.name = f, name
        self.mode, self.hello, self.version = "verify", {}, PROTOCOL
        self.sampling, self.with_sampling, self.batch_form = None, False, False
        self.pool_p = self.pool_q = None
        self.model = None  # (order, p, q) of a Markov pair
        self.buf_p = self.buf_q = self.buf_ctx = None
        self.save = _Saver()

    def on_hello(self, h):
        self.hello = h
        self.mode = h["mode"]
        self.save.hello(h)
        self.batch_form = takes_batch(self.f)
        self.with_sampling = takes_sampling(self.f, self.mode)
        s = h.get("sampling")
        self.sampling = Sampling(**s) if s else None
        version = self.version = min(PROTOCOL, h.get("protocol", 1))
        need = None
        if self.mode == "tree":
            need = "tree mode"
        elif self.mode == "step" and h.get("source") == "markov":
            need = "step mode on a model pair"
        elif h.get("per_row"):
            need = "a composed batch (per-row sampling, draft lengths and seeds)"
        if need and not self.batch_form:
            return {"op": "error", "batch": 0, "arrays": [],
                    "message": "%s needs a function of one argument, a specsim_ext.Batch (def f(batch): ...); %s takes %s"
                               % (need, self.name, _signature(self.f))}
        if self.batch_form and version < 2:
            return {"op": "error", "batch": 0, "arrays": [],
                    "message": "a function of a Batch needs a harness that speaks protocol 2; this one speaks %d" % version}
        return {"op": "ready", "protocol": version, "name": self.name, "takes_sampling": self.with_sampling,
                "form": "batch" if self.batch_form else "positional", "arrays": []}

    def rows_of(self, ctx):
        """The pool rows of contexts ctx, gathered into read-only buffers
        kept across batches; a batch whose contexts equal the previous
        batch's (the harness cycles through the contexts, so with B a
        multiple of their number every batch does) reuses them."""
        if self.buf_ctx is None or not np.array_equal(self.buf_ctx, ctx):
            if self.buf_p is None or self.buf_p.shape[0] != len(ctx):
                self.buf_p = np.empty((len(ctx),) + self.pool_p.shape[1:], self.pool_p.dtype)
                self.buf_q = np.empty((len(ctx),) + self.pool_q.shape[1:], self.pool_q.dtype)
            self.buf_p.flags.writeable = self.buf_q.flags.writeable = True
            np.take(self.pool_p, ctx, axis=0, out=self.buf_p)
            np.take(self.pool_q, ctx, axis=0, out=self.buf_q)
            self.buf_p.flags.writeable = self.buf_q.flags.writeable = False
            self.buf_ctx = ctx.copy()
        return self.buf_p, self.buf_q

    def make_batch(self, h, arrays):
        """The Batch of a batch message (and the positional arguments of
        the protocol-1 forms)."""
        coins = h.get("coins", "random")
        if coins == "random":
            rng = np.random.Generator(np.random.PCG64(h.get("seed", 0)))
        else:
            rng = ScriptedGenerator(coins != "zero", h.get("seed", 0))
        B, G, V = h["size"], self.hello.get("gamma"), self.hello.get("vocab")
        kw = dict(mode=self.mode, index=h["batch"], size=B, gamma=G, vocab=V, rng=rng, coins=coins)
        logits = self.mode == "step"
        rows = h.get("rows")
        if self.mode == "tree":
            kw.update(parent=arrays["parent"], token=arrays["token"], draws=arrays["draws"], nodes=arrays["nodes"],
                      _prow=arrays["prow"], _qrow=arrays["qrow"])
            if rows == "pool":
                kw.update(_tp=self.pool_p.reshape(-1, V), _tq=self.pool_q.reshape(-1, V))
            elif rows == "markov":
                kw.update(_tp=self.model[1], _tq=self.model[2])
            else:
                kw.update(_tp=arrays["p"], _tq=arrays["q"])
        else:
            p = q = None
            if rows == "pool":
                p, q = self.rows_of(arrays["ctx"])
                kw["ctx"] = arrays["ctx"]
            elif rows == "inline":
                p, q = arrays["p"], arrays["q"]
            kw.update(p=p, q=q)
            if self.mode == "verify":
                kw["drafts"] = arrays["drafts"].copy()
            if self.mode == "step":
                if rows == "model":
                    order, mp, mq = self.model
                    kw["model"] = MarkovModel(order, mp, mq, logits, B)
                else:
                    kw["model"] = PositionalModel(p, q, logits)
        rs = per_row_sampling(arrays)
        if rs is None and self.sampling is not None:
            rs = RowSampling.uniform(self.sampling, B)
        kw["sampling"] = rs
        if "gamma" in arrays:
            kw["gammas"] = arrays["gamma"]
        if "seed" in arrays:
            kw["seeds"] = arrays["seed"]
        return Batch(**kw)

    def call(self, h, arrays):
        """Calls the function on one batch and returns the reply arrays."""
        bt = self.make_batch(h, arrays)
        if self.batch_form:
            res = self.f(bt)
        else:
            args = [bt.p, bt.q]
            if self.mode == "verify":
                args.append(bt.drafts)
            args.append(bt.rng)
            if self.with_sampling:
                args.append(self.sampling or Sampling())
            res = self.f(*args)
        out = self.step_result(res) if self.mode == "step" else {"emitted": np.asarray(res)}
        for v in out.values():
            if v.dtype.hasobject:
                raise TypeError("the function returned an array of dtype object")
        return out

    def step_result(self, res):
        """The reply arrays of a step-mode answer, from every function form:
        (drafts, emitted), or emitted alone as (None, emitted) or emitted
        (a tree or beam sampler, or one that hides its drafts)."""
        drafts, emitted = None, res
        if isinstance(res, tuple):
            if len(res) != 2:
                raise TypeError("a step function returns emitted, (None, emitted) or (drafts, emitted), got a tuple of %d" % len(res))
            drafts, emitted = res
        if drafts is None and self.version < 2:
            raise TypeError("this harness speaks protocol 1, whose step mode needs (drafts, emitted); "
                            "a newer harness also takes emitted alone")
        out = {"emitted": np.asarray(emitted)}
        if drafts is not None:
            out = {"drafts": np.asarray(drafts), "emitted": out["emitted"]}
        return out

    def serve(self, stdin, stdout):
        while True:
            h = proto.read_header(stdin)
            if h is None or h["op"] == "close":
                return
            op = h["op"]
            if op == "hello":
                proto.write_header(stdout, self.on_hello(h))
            elif op in ("pool", "model"):
                arrays = {k: proto.read_array(stdin) for k in h["arrays"]}
                self.save.tables(h, arrays)
                if op == "pool":
                    self.pool_p, self.pool_q, self.buf_ctx = arrays["p"], arrays["q"], None
                else:
                    self.model = (h["order"], arrays["p"], arrays["q"])
                proto.write_header(stdout, {"op": "ok", "batch": 0, "arrays": []})
            elif op == "batch":
                arrays = {k: proto.read_array(stdin) for k in h["arrays"]}
                self.save.batch(h, arrays)
                try:
                    out = self.call(h, arrays)
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


def serve(f, name, stdin=None, stdout=None):
    """Answer the harness's messages with f until it says close."""
    Server(f, name).serve(stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)


def load_saved(directory):
    """The batches a run with SPECSIM_EXT_SAVE=directory kept, as the
    Batch objects (or, for functions of the protocol-1 forms, the same
    Batch: take .p, .q, .drafts, .rng) the function received, in order:
    for benchmarks that call the function in a plain loop on the very
    batches the harness sent."""
    names = sorted(os.listdir(directory))
    hello = None
    srv = Server(None, "saved")
    for n in names:
        if n in ("pool.npz", "model.npz"):
            z = np.load(os.path.join(directory, n))
            h = json.loads(str(z["header"]))
            if n == "pool.npz":
                srv.pool_p, srv.pool_q = z["p"], z["q"]
            else:
                srv.model = (h["order"], z["p"], z["q"])
        if n == "hello.json":
            with open(os.path.join(directory, n)) as fh:
                hello = json.load(fh)
    if hello is None:
        raise ValueError("%s holds no hello.json: save with SPECSIM_EXT_SAVE set" % directory)
    srv.hello, srv.mode = hello, hello["mode"]
    s = hello.get("sampling")
    srv.sampling = Sampling(**s) if s else None
    out = []
    for n in names:
        if n.startswith("batch-"):
            z = np.load(os.path.join(directory, n))
            h = json.loads(str(z["header"]))
            out.append(srv.make_batch(h, {k: z[k] for k in z.files if k != "header"}))
    return out
