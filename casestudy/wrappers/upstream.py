"""Loading an upstream sampler unchanged, and the models it calls.

The case study's wrappers never copy upstream code: run.py fetches the
file at a commit and names it in SPECSIM_UPSTREAM_FILE, and load() runs
the file's own top-level definitions (their text and line numbers as
fetched) in a namespace the wrapper fills with what their module-level
imports would have bound. Only definitions are taken, so imports of
packages a sampler does not use on this path (model loaders, CUDA
kernels, the engine's configuration) are never executed.

Token ids: upstream code is handed a vocabulary of V + 1 ids in which id 0
is a start token that both models give probability 0, and harness token t
is id t + 1. The samplers index "the row after the last prefix token", so
they need one prefix token; several also refuse to emit id 0 (a padding
guard), which this keeps meaningful.
"""

import ast
import os
import types

import numpy as np

ENV = "SPECSIM_UPSTREAM_FILE"


def upstream_path():
    """upstream_path returns the fetched file run.py named, or raises with the fix."""
    path = os.environ.get(ENV, "")
    if not path or not os.path.isfile(path):
        raise RuntimeError("%s is not set to a fetched upstream file (%r); run casestudy/run.py" % (ENV, path))
    return path


def sibling(rel):
    """sibling returns another file of the same fetched commit (run.py
    fetches a manifest entry's "also" files beside its file), by its path
    in the repository."""
    root = os.environ.get("SPECSIM_UPSTREAM_ROOT", "")
    path = os.path.join(root, rel)
    if not root or not os.path.isfile(path):
        raise RuntimeError("SPECSIM_UPSTREAM_ROOT has no %s (%r); list it under the entry's \"also\" in manifest.json" % (rel, root))
    return path


def load(names, env, path=None):
    """load executes the upstream top-level definitions `names` (functions,
    classes or assignments of those names), unchanged, in `env` and
    returns env. A missing name raises, naming the file."""
    path = path or upstream_path()
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    body, found = [], set()
    for node in tree.body:
        n = _defined(node)
        if n & set(names):
            body.append(node)
            found |= n
    missing = set(names) - found
    if missing:
        raise RuntimeError("%s defines no %s at this commit" % (path, ", ".join(sorted(missing))))
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), env)
    return env


def _defined(node):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    return set()


def has(name, path=None):
    """has reports whether the upstream file defines `name` at top level."""
    path = path or upstream_path()
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    return any(name in _defined(n) for n in tree.body)


class tqdm:
    """tqdm stands in for the progress bar some samplers draw (tqdm is not
    installed with the system Python); it draws nothing."""

    def __init__(self, *args, **kwargs):
        self.n = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, k=1):
        self.n += k


class RowModel:
    """RowModel is one batch row's target or draft model over upstream ids:
    rows(x) for a start token and tokens x[1:] gives, for every position t,
    the next-token probabilities after x[1:t+1], as float64 [len(x), V+1]
    (column 0, the start token, 0)."""

    def __init__(self, model, row, target):
        self.model, self.row, self.target = model, row, target
        self.cache = {}

    def rows(self, x):
        x = [int(v) for v in x]
        out = np.zeros((len(x), self.model.vocab + 1))
        todo = [t for t in range(len(x)) if tuple(x[1:t + 1]) not in self.cache]
        if todo:
            pre = [[v - 1 for v in x[1:t + 1]] for t in todo]
            rows = np.full(len(todo), self.row, dtype=np.int64)
            f = self.model.target if self.target else self.model.draft
            got = f(pre, rows)
            for t, r in zip(todo, got):
                self.cache[tuple(x[1:t + 1])] = r
        for t in range(len(x)):
            out[t, 1:] = self.cache[tuple(x[1:t + 1])]
        return out


def harness_tokens(ids, start, gamma):
    """harness_tokens turns the upstream ids a sampler appended after its
    prefix of length `start` into a harness row [gamma+1] padded with -1;
    an id 0 (the start token) becomes -2, which the harness refuses as a
    malformed answer naming the row."""
    new = [int(v) for v in ids[start:]]
    if len(new) > gamma + 1:
        raise RuntimeError("the sampler appended %d tokens in one step; at most gamma+1 = %d" % (len(new), gamma + 1))
    out = np.full(gamma + 1, -1, dtype=np.int64)
    out[:len(new)] = [v - 1 if v > 0 else -2 for v in new]
    return out


def no_pin(torch):
    """no_pin returns a stand-in for the torch module whose tensor
    factories drop pin_memory=True, which a CPU-only build refuses
    (serving code pins host buffers for its accelerator); every other
    attribute is torch's own."""
    ns = types.SimpleNamespace()
    for k in dir(torch):
        try:
            setattr(ns, k, getattr(torch, k))
        except Exception:  # noqa: BLE001 - lazily failing attributes are skipped
            pass
    for k in ("tensor", "arange", "ones", "zeros", "empty", "full"):
        setattr(ns, k, _unpinned(getattr(torch, k)))
    return ns


def _unpinned(f):
    def g(*args, **kwargs):
        kwargs.pop("pin_memory", None)
        return f(*args, **kwargs)
    return g
