"""specsim_ext: check a speculative-decoding sampler with the specsim harness.

The harness (the Go program `simulate`) owns the distributions, the draft
randomness, the statistics and the verdict; your function owns only its
sampler. Three signatures are served:

a function of one argument (protocol 2; every mode)
    f(batch) -> emitted, or (drafts, emitted) in step mode
    batch is a Batch: the rows, drafts, per-row sampling, draft lengths
    and seeds, the model to draft from (step mode) or the token tree (tree
    mode); see help(specsim_ext.Batch).

verify mode (protocol 1)
    verify(p, q, drafts, rng) -> emitted
    p float32 [B, gamma+1, V] target rows, q float32 [B, gamma, V] draft
    rows, drafts int64 [B, gamma] with drafts[b, i] ~ q[b, i], rng a
    numpy.random.Generator; emitted int64 [B, gamma+1]: the accepted
    drafts, then the correction or bonus token, then -1 padding.

step mode (protocol 1)
    step(p_logits, q_logits, rng) -> (drafts, emitted)
    float32 logits of the same shapes; the function samples its own drafts.

One more positional parameter after rng, if present (the fifth in verify
mode, the fourth in step mode), receives a Sampling (temperature, top_k,
top_p, min_p); the harness then tests against transform(p, sampling).
Rows b = 0..B-1 of a batch are independent sequences.

Run a function under the harness with

    simulate check --external "python3 -m specsim_ext MODULE:FUNCTION" [--mode step|tree]

from a test suite with specsim_ext.check(...), or from pytest with the
fixture specsim_check (installed with the package). The package needs only
NumPy. Its wheel (`python3 -m pip wheel --no-index --no-build-isolation
--no-deps ./python`, Go on PATH) carries the simulate binary, which the
package then uses; or put python/ on PYTHONPATH and simulate on PATH.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys

from ._batch import Batch, MarkovModel, Model, PositionalModel
from ._sampling import RowSampling, Sampling, transform, transform_rows
from ._server import PROTOCOL, load_saved

__all__ = ["describe", "Batch", "Model", "MarkovModel", "PositionalModel", "RowSampling", "Sampling", "transform",
           "transform_rows", "check", "CheckError", "load_saved", "PROTOCOL"]

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class CheckError(RuntimeError):
    """The harness could not reach a verdict (bad flags, a crash, a timeout
    or malformed output of the function); the message is its error line."""


def _spec(func):
    if isinstance(func, str):
        return func
    mod = getattr(func, "__module__", None)
    if not mod or mod == "__main__":
        raise ValueError("pass the function as 'MODULE:FUNCTION' or define it in an importable module "
                         "(functions of __main__ cannot be imported by the served process)")
    m = sys.modules.get(mod)
    path = getattr(m, "__file__", None)
    if path and "." not in mod and mod not in sys.builtin_module_names:
        return "%s:%s" % (path, func.__qualname__)
    return "%s:%s" % (mod, func.__qualname__)


def _installed_binary():
    """The simulate binary that the wheel installed with this copy of the
    package (a script of its distribution's RECORD), or None: a package put
    on PYTHONPATH, or installed without the binary, has none."""
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8
        return None
    here = os.path.realpath(os.path.abspath(__file__))
    for name in ("specsim-ext", "specsim_ext"):
        try:
            files = metadata.distribution(name).files or []
        except Exception:  # not installed, or unreadable metadata
            continue
        if not any(f.name == "__init__.py" and os.path.realpath(str(f.locate())) == here for f in files):
            continue  # another copy of the package is installed; this one was imported from elsewhere
        for f in files:
            if f.name in ("simulate", "simulate.exe") and f.parent.name in ("bin", "Scripts"):
                path = os.path.abspath(str(f.locate()))
                if os.path.isfile(path) and os.access(path, os.X_OK):
                    return path
    return None


def _binary(binary):
    """The harness binary: binary=, then $SPECSIM_SIMULATE, then the one
    installed with this package (the wheel's), then simulate on PATH."""
    b = binary or os.environ.get("SPECSIM_SIMULATE") or _installed_binary() or shutil.which("simulate")
    if not b:
        raise CheckError("no harness binary: pass binary=, set SPECSIM_SIMULATE, install the specsim-ext wheel "
                         "(it ships simulate), or put 'simulate' on PATH (go build -o simulate ./cmd/simulate "
                         "in the specsim repository)")
    return b


def check(func, mode="verify", source="dirichlet:V=1000,a=0.1,beta=0.7", gamma=4, trials=200000,
          batch=1024, seed=1, sampling=None, timeout=60, binary=None, args=(), seconds=None, conform=None,
          rows=None, draft=None, k=None):
    """Run `simulate check --external` on func and return the parsed JSON
    report (a dict with "verdict", "p_value", "min_detectable_tv",
    "tests", "components", ...; "message" holds the harness's own verdict
    line when the verdict is not "not_detected": no test detected a
    deviation, and "claim" says how large a deviation would have been). func is a function of an importable
    module or a 'MODULE:FUNCTION' string. mode is "verify", "step" or
    "tree" (draft and k choose the tree drafter: iid, wor, topk, greedy,
    dynamic); rows composes batches like a serving engine's ("engine" or
    kinds such as "greedy;t=0.7,top_k=50,seeded"); seconds, when given, is
    a time budget that replaces trials; conform names a rule whose exact
    law the steps are tested against instead of losslessness. A violated,
    contract_breach or inconclusive verdict is returned, not raised; CheckError is raised
    when no verdict could be reached.

        r = specsim_ext.check(mymodule.verify)
        assert r["verdict"] == "not_detected", specsim_ext.describe(r)
    """
    cmd = "%s -m specsim_ext %s" % (shlex.quote(sys.executable), shlex.quote(_spec(func)))
    argv = [_binary(binary), "check", "--external", cmd, "--mode", mode, "--source", source,
            "--gamma", str(gamma), "--trials", str(trials), "--batch", str(batch), "--seed", str(seed),
            "--timeout", "%dns" % round(float(timeout) * 1e9), "--json"]  # 0.5 s was "0s"
    if sampling is not None:
        argv += ["--temperature", repr(sampling.temperature), "--top-k", str(sampling.top_k),
                 "--top-p", repr(sampling.top_p), "--min-p", repr(sampling.min_p)]
    if seconds is not None:
        argv += ["--seconds", repr(float(seconds))]
    if conform is not None:
        argv += ["--conform", conform]
    if rows is not None:
        argv += ["--rows", rows]
    if draft is not None:
        argv += ["--draft", draft]
    if k is not None:
        argv += ["--k", str(k)]
    argv += list(args)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([_HERE] + [p for p in sys.path if p] +
                                        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    res = subprocess.run(argv, capture_output=True, text=True, env=env)
    lines = [l for l in res.stderr.strip().splitlines() if l.startswith("simulate:")]
    if res.returncode not in (0, 3, 6, 7) or not res.stdout.strip():
        raise CheckError(lines[-1] if lines else res.stderr.strip() or "exit status %d" % res.returncode)
    r = json.loads(res.stdout)
    if res.returncode != 0 and lines:
        r["message"] = lines[-1]
    return r


def describe(r):
    """The lines that say why a report's verdict is not "not_detected": the harness's
    verdict line, the tests below the level, the failed components and the
    edge cases."""
    out = [r.get("message") or "verdict %s (Holm-adjusted p = %.4g)" % (r["verdict"], r["p_value"])]
    for t in r.get("tests") or []:
        if t["p_holm"] < r["level"]:
            out.append("test %s: p_holm = %.3g (%s)" % (t["name"], t["p_holm"], t["quantity"]))
    for c in r.get("components") or []:
        if c["verdict"] != "not_detected":
            out.append("component %s: %s (%s)" % (c["name"], c["verdict"], c.get("detail", "")))
    if r.get("edge_verdict") in ("violated", "not_exercised"):
        out.append("edge cases %s: %s" % (r["edge_verdict"], r.get("edge_message", "")))
    if r.get("invalid_outcomes"):
        out.append("invalid outcomes: %d" % r["invalid_outcomes"])
    return "\n".join(out)
