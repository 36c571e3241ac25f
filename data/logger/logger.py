#!/usr/bin/env python3
"""Log speculative decoding runs in the specsim log schema (package data).

One row per speculative step: the draft tokens x_1..x_gamma, the raw
logits of the gamma draft rows q_1..q_gamma and of the gamma+1 target rows
p_1..p_{gamma+1}, the emitted tokens, the sampling parameters and the
model names (column names and types: data/logschema.go, LogRow).

With --tree K each row is a tree step instead (data.TreeLogRow, schema
version 2): a static EAGLE-1-style tree, K children per node drawn without
replacement from the processed draft row, to depth --gamma, verified by
recursive rejection sampling without replacement (RSD, EAGLE-1), with per
node its parent, token, draft and target logits, then the accepted path
and the extra token.

The run itself uses token verification (Leviathan et al. 2023, arXiv
2211.17192, Alg. 1) on the *processed* rows: the same sampling transform
(temperature, top-k, top-p, min-p, in the order of transformers'
generate(); temperature 0 is greedy) applied to p and q, exactly as
data.Sampling does on replay.

Models:
  --target/--draft NAME   Hugging Face causal LMs sharing a tokenizer (needs
                          transformers; NAME is a local path or a hub name
                          already in the local cache). With --from-config
                          the models are built from their config with random
                          weights (no download of weights needed).
  --tiny                  a pure-PyTorch pair of tiny character GPTs (target
                          larger than draft), trained for --train-steps on
                          --corpus text; needs only torch.

Output: parquet via pyarrow when it is importable (--format parquet), else
JSON lines (--format jsonl) to convert with
  simulate import-log --in FILE.jsonl --out FILE.parquet
JSON cannot hold -Inf, so -Inf logits are written as the lowest float32.
"""
import argparse
import json
import math
import os
import sys
import time

SCHEMA_VERSION = 1
TREE_SCHEMA_VERSION = 2
F32_LOWEST = -3.4028234663852886e38

COLUMNS = ["schema_version", "run_id", "prompt_id", "step", "gamma", "vocab_size", "draft_tokens",
           "emitted_tokens", "target_model", "draft_model", "temperature", "top_k", "top_p", "min_p",
           "row_kind", "layout", "q", "p", "q_nnz", "q_index", "q_value", "q_tail", "p_nnz", "p_index",
           "p_value", "p_tail"]

# data.TreeLogRow (schema version 2): one row per tree step.
TREE_COLUMNS = ["schema_version", "run_id", "prompt_id", "step", "gamma", "vocab_size", "emitted_tokens",
                "target_model", "draft_model", "temperature", "top_k", "top_p", "min_p", "row_kind", "layout",
                "q", "p", "node_parent", "node_token", "node_q", "node_p", "path"]


# ---------------------------------------------------------------- pure Python
def process_row(logits, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0):
    """Processed probabilities of one row of logits (a list of floats),
    the same transform as Go's data.Transformer.Apply:
    temperature (0: one-hot argmax, lowest index on ties), top-k (ties at
    the threshold kept), top-p (descending order, ties by index; token kept
    iff the mass before it is < top_p of the kept mass), min-p (weights >=
    min_p * max), renormalise."""
    v = len(logits)
    for x, l in enumerate(logits):
        if math.isnan(l) or l == math.inf:
            raise ValueError("logit %d is %r; logits must be finite or -inf" % (x, l))
    m = max(logits)
    if m == -math.inf:
        raise ValueError("every logit is -inf")
    if temperature == 0:
        best = logits.index(m)
        return [1.0 if x == best else 0.0 for x in range(v)]
    w = [math.exp((l - m) / temperature) if l != -math.inf else 0.0 for l in logits]
    if 0 < top_k < v:
        thr = sorted(w, reverse=True)[top_k - 1]
        w = [x if x >= thr else 0.0 for x in w]
    if top_p < 1:
        total = sum(w)
        order = sorted((x for x in range(v) if w[x] > 0), key=lambda x: (-w[x], x))
        before = 0.0
        for k, x in enumerate(order):
            if k > 0 and before >= top_p * total:
                for y in order[k:]:
                    w[y] = 0.0
                break
            before += w[x]
    if min_p > 0:
        thr = min_p * max(w)
        w = [x if x >= thr else 0.0 for x in w]
    z = sum(w)
    return [x / z for x in w]


def verify(draft, p_rows, q_rows, uniform):
    """Token verification on processed rows (lists of floats); uniform() draws
    U[0,1). Returns the emitted tokens x_1..x_n, t."""
    out = []
    for i, x in enumerate(draft):
        if not (uniform() < p_rows[i][x] / q_rows[i][x]):
            res = [max(0.0, a - b) for a, b in zip(p_rows[i], q_rows[i])]
            z = sum(res)
            row = [r / z for r in res] if z > 0 else p_rows[i]
            out.append(sample(row, uniform()))
            return out
        out.append(x)
    out.append(sample(p_rows[len(draft)], uniform()))
    return out


def sample(row, u):
    """Inverse-CDF sample of a probability row at u (last positive on rounding)."""
    c, last = 0.0, -1
    for x, p in enumerate(row):
        if p > 0:
            c += p
            last = x
            if c > u:
                return x
    return last


def sample_without_replacement(q, k, uniform):
    """Up to k distinct tokens, each drawn from q with the tokens drawn
    before it removed and the rest renormalised (fewer when q's mass runs
    out)."""
    w, out = list(q), []
    for _ in range(k):
        z = sum(w)
        if not z > 0:
            break
        x = sample([v / z for v in w], uniform())
        out.append(x)
        w[x] = 0.0
    return out


def residual(r, s):
    """max(r - s, 0) renormalised; r itself when that has no mass (as Go's
    algos residualStep)."""
    d = [max(0.0, a - b) for a, b in zip(r, s)]
    z = sum(d)
    return [x / z for x in d] if z > 0 else r


def build_tree(ids, draft_row, target_row, k, depth, s, uniform):
    """An EAGLE-1-style static tree after the context ids: every node above
    depth `depth` draws k children without replacement from its processed
    draft row (sample_without_replacement), breadth first, so parents come
    before children and siblings are in draw order. draft_row(ids) and
    target_row(ids) return the models' raw logits after ids; s is the
    sampling transform. Node dicts: parent, token, depth, kids, p and
    p_logits for every node, q and q_logits for the nodes that drew."""
    nodes = [{"parent": -1, "token": -1, "depth": 0, "kids": []}]
    frontier = [0]
    for d in range(depth):
        nxt = []
        for n in frontier:
            ql = draft_row(ids + tree_path_tokens(nodes, n))
            nodes[n]["q_logits"], nodes[n]["q"] = ql, process_row(ql, **s)
            for x in sample_without_replacement(nodes[n]["q"], k, uniform):
                nodes[n]["kids"].append(len(nodes))
                nxt.append(len(nodes))
                nodes.append({"parent": n, "token": x, "depth": d + 1, "kids": []})
        frontier = nxt
    for n, nd in enumerate(nodes):
        nd["p_logits"] = target_row(ids + tree_path_tokens(nodes, n))
        nd["p"] = process_row(nd["p_logits"], **s)
    return nodes


def tree_path_tokens(nodes, n):
    """The tokens from the root to node n."""
    out = []
    while n > 0:
        out.append(nodes[n]["token"])
        n = nodes[n]["parent"]
    return out[::-1]


def verify_tree(nodes, uniform):
    """Recursive rejection sampling without replacement (RSD; EAGLE-1's
    verifier; Go's rrs-wor) over processed rows: at a node, each child in
    draw order is accepted w.p. min(1, r(x)/s(x)) with r the target's
    residual and s the draft row with the children tried so far removed;
    after a rejection r becomes the residual of r and s, x is removed from
    s. An accepted child is verified in turn; when every child is rejected
    (or at a leaf) the extra token is drawn from r. Returns (path, extra):
    the accepted nodes from the root's child down, and the extra token."""
    path, n = [], 0
    while True:
        nd = nodes[n]
        r = nd["p"]
        if not nd["kids"]:
            return path, sample(r, uniform())
        s = list(nd["q"])
        nxt = None
        for c in nd["kids"]:
            x = nodes[c]["token"]
            if uniform() < r[x] / s[x]:
                nxt = c
                break
            r = residual(r, s)
            s[x] = 0.0
            z = sum(s)
            s = [v / z for v in s] if z > 0 else [0.0] * len(s)
        if nxt is None:
            return path, sample(r, uniform())
        path.append(nxt)
        n = nxt


def make_tree_row(run_id, prompt_id, step, nodes, path, extra, target, draft_name, s):
    """A tree schema row (data.TreeLogRow) with dense raw-logit rows: one
    target row per node, one draft row per node that drew children."""
    fin = lambda xs: [F32_LOWEST if l == -math.inf else float(l) for l in xs]
    q, p, node_q, node_p = [], [], [], []
    for nd in nodes:
        node_p.append(len(p))
        p.append(fin(nd["p_logits"]))
        if "q_logits" in nd:
            node_q.append(len(q))
            q.append(fin(nd["q_logits"]))
        else:
            node_q.append(-1)
    return {
        "schema_version": TREE_SCHEMA_VERSION, "run_id": run_id, "prompt_id": prompt_id, "step": step,
        "gamma": max(nd["depth"] for nd in nodes), "vocab_size": len(p[0]),
        "emitted_tokens": [nodes[n]["token"] for n in path] + [extra],
        "target_model": target, "draft_model": draft_name, "temperature": float(s["temperature"]),
        "top_k": int(s["top_k"]), "top_p": float(s["top_p"]), "min_p": float(s["min_p"]),
        "row_kind": "logits", "layout": "dense",
        "q": [x for row in q for x in row], "p": [x for row in p for x in row],
        "node_parent": [nd["parent"] for nd in nodes], "node_token": [nd["token"] for nd in nodes],
        "node_q": node_q, "node_p": node_p, "path": list(path),
    }


def make_row(run_id, prompt_id, step, draft, emitted, q_logits, p_logits, target, draft_name, s):
    """A schema row (dict of columns) with dense raw-logit rows."""
    v = len(p_logits[0])
    fin = lambda xs: [F32_LOWEST if l == -math.inf else float(l) for l in xs]
    return {
        "schema_version": SCHEMA_VERSION, "run_id": run_id, "prompt_id": prompt_id, "step": step,
        "gamma": len(draft), "vocab_size": v, "draft_tokens": list(draft), "emitted_tokens": list(emitted),
        "target_model": target, "draft_model": draft_name, "temperature": float(s["temperature"]),
        "top_k": int(s["top_k"]), "top_p": float(s["top_p"]), "min_p": float(s["min_p"]),
        "row_kind": "logits", "layout": "dense",
        "q": [x for row in q_logits for x in fin(row)], "p": [x for row in p_logits for x in fin(row)],
        "q_nnz": [], "q_index": [], "q_value": [], "q_tail": [],
        "p_nnz": [], "p_index": [], "p_value": [], "p_tail": [],
    }


class JsonlSink:
    def __init__(self, path, provenance):
        self.f = open(path, "w")
        self.provenance = provenance

    def write(self, row):
        self.f.write(json.dumps(row, allow_nan=False) + "\n")

    def close(self):
        self.f.close()
        with open(self.f.name + ".provenance.json", "w") as g:
            json.dump(self.provenance, g, indent=1)


class ParquetSink:
    """pyarrow writer: the schema of data.LogRow, provenance as key/value
    metadata with the specsim. prefix."""

    def __init__(self, path, provenance, tree=False):
        import pyarrow as pa
        import pyarrow.parquet as pq
        self.pa, self.pq = pa, pq
        i32, f32, f64, s = pa.int32(), pa.float32(), pa.float64(), pa.string()
        L = pa.list_
        types = {"schema_version": i32, "run_id": s, "prompt_id": pa.int64(), "step": pa.int64(), "gamma": i32,
                 "vocab_size": i32, "draft_tokens": L(i32), "emitted_tokens": L(i32), "target_model": s,
                 "draft_model": s, "temperature": f64, "top_k": i32, "top_p": f64, "min_p": f64, "row_kind": s,
                 "layout": s, "q": L(f32), "p": L(f32), "q_nnz": L(i32), "q_index": L(i32), "q_value": L(f32),
                 "q_tail": L(f32), "p_nnz": L(i32), "p_index": L(i32), "p_value": L(f32), "p_tail": L(f32),
                 "node_parent": L(i32), "node_token": L(i32), "node_q": L(i32), "node_p": L(i32), "path": L(i32)}
        meta = {("specsim." + k).encode(): str(v).encode() for k, v in provenance.items()}
        meta[b"specsim.schema_version"] = str(TREE_SCHEMA_VERSION if tree else SCHEMA_VERSION).encode()
        self.columns = TREE_COLUMNS if tree else COLUMNS
        self.schema = pa.schema([(c, types[c]) for c in self.columns], metadata=meta)
        self.w = pq.ParquetWriter(path, self.schema)
        self.buf = []

    def write(self, row):
        self.buf.append(row)
        if len(self.buf) >= 16:
            self.flush()

    def flush(self):
        if self.buf:
            cols = {c: [r[c] for r in self.buf] for c in self.columns}
            self.w.write_table(self.pa.table(cols, schema=self.schema))
            self.buf = []

    def close(self):
        self.flush()
        self.w.close()


# ---------------------------------------------------------------- torch part
def torch_models(args):
    import torch
    if args.tiny:
        return tiny_pair(args)
    import transformers  # noqa: F401  (a clear ImportError if absent)
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    def load(name):
        if args.from_config:
            return AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(name))
        return AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.float32)
    tgt, drf = load(args.target).to(args.device).eval(), load(args.draft).to(args.device).eval()
    tok = AutoTokenizer.from_pretrained(args.target)
    if tgt.config.vocab_size != drf.config.vocab_size:
        sys.exit("logger: target and draft vocabularies differ (%d vs %d); use a pair sharing a tokenizer"
                 % (tgt.config.vocab_size, drf.config.vocab_size))
    encode = lambda text: tok(text, return_tensors="pt").input_ids[0].tolist()
    call = lambda m: (lambda ids: m(ids).logits)
    return call(tgt), call(drf), encode, args.target, args.draft, tgt.config.vocab_size


def tiny_pair(args):
    """Two character-level GPTs in pure PyTorch, trained on --corpus."""
    import torch
    import torch.nn as nn
    torch.manual_seed(args.seed)
    text = open(args.corpus, encoding="utf-8", errors="replace").read().lower()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    v = len(chars)

    class GPT(nn.Module):
        def __init__(self, d, layers, heads, ctx=64):
            super().__init__()
            self.ctx = ctx
            self.emb = nn.Embedding(v, d)
            self.pos = nn.Embedding(ctx, d)
            layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True, norm_first=True)
            self.body = nn.TransformerEncoder(layer, layers)
            self.head = nn.Linear(d, v)

        def forward(self, ids):
            ids = ids[:, -self.ctx:]
            L = ids.shape[1]
            mask = torch.triu(torch.full((L, L), float("-inf")), diagonal=1).to(ids.device)
            h = self.emb(ids) + self.pos(torch.arange(L, device=ids.device))
            return self.head(self.body(h, mask=mask))

    def train(m, steps):
        opt = torch.optim.AdamW(m.parameters(), lr=3e-3)
        for _ in range(steps):
            ix = torch.randint(0, len(data) - m.ctx - 1, (32,))
            x = torch.stack([data[i:i + m.ctx] for i in ix]).to(args.device)
            y = torch.stack([data[i + 1:i + m.ctx + 1] for i in ix]).to(args.device)
            loss = nn.functional.cross_entropy(m(x).reshape(-1, v), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        return m.eval()

    tgt = train(GPT(64, 2, 4).to(args.device), args.train_steps)
    drf = train(GPT(32, 1, 2).to(args.device), max(1, args.train_steps // 2))
    encode = lambda s: [stoi.get(c, 0) for c in s.lower()]
    return tgt, drf, encode, "tiny-gpt-d64-l2", "tiny-gpt-d32-l1", v


def run(args):
    import torch
    target, draft, encode, tname, dname, v = torch_models(args)
    s = {"temperature": args.temperature, "top_k": args.top_k, "top_p": args.top_p, "min_p": args.min_p}
    gen = torch.Generator().manual_seed(args.seed)
    uniform = lambda: torch.rand((), generator=gen).item()
    provenance = {"writer": "data/logger/logger.py", "seed": args.seed, "source": "%s vs %s" % (tname, dname),
                  "torch_version": torch.__version__, "python_version": sys.version.split()[0],
                  "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "device": args.device}
    fmt = args.format
    if fmt == "auto":
        try:
            import pyarrow  # noqa: F401
            fmt = "parquet"
        except ImportError:
            fmt = "jsonl"
    tree = args.tree > 0
    sink = ParquetSink(args.out, provenance, tree) if fmt == "parquet" else JsonlSink(args.out, provenance)
    prompts = args.prompt or ["the license "]
    rows = 0
    last = lambda m: (lambda ids: m(torch.tensor([ids], device=args.device))[0, -1].float().cpu().tolist())
    with torch.no_grad():
        for pid in range(args.prompts if tree else 0):
            ids = encode(prompts[pid % len(prompts)])
            for step in range(args.steps):
                nodes = build_tree(ids, last(draft), last(target), args.tree, args.gamma, s, uniform)
                path, extra = verify_tree(nodes, uniform)
                row = make_tree_row(args.run_id, pid, step, nodes, path, extra, tname, dname, s)
                sink.write(row)
                rows += 1
                ids = ids + row["emitted_tokens"]
        for pid in range(0 if tree else args.prompts):
            ids = encode(prompts[pid % len(prompts)])
            for step in range(args.steps):
                prefix = list(ids)
                draft_toks, q_logits, q_probs = [], [], []
                for _ in range(args.gamma):
                    l = draft(torch.tensor([prefix], device=args.device))[0, -1].float().cpu().tolist()
                    pr = process_row(l, **s)
                    x = sample(pr, uniform())
                    q_logits.append(l)
                    q_probs.append(pr)
                    draft_toks.append(x)
                    prefix.append(x)
                full = target(torch.tensor([prefix], device=args.device))[0].float().cpu()
                # p_i is the target's row after ids + x_<i: the last gamma+1
                # positions of the forward pass (models may truncate the
                # context on the left, so index from the end).
                n = full.shape[0]
                p_logits = [full[n - (args.gamma + 1) + i].tolist() for i in range(args.gamma + 1)]
                p_probs = [process_row(l, **s) for l in p_logits]
                emitted = verify(draft_toks, p_probs, q_probs, uniform)
                sink.write(make_row(args.run_id, pid, step, draft_toks, emitted, q_logits, p_logits, tname, dname, s))
                rows += 1
                ids = ids + emitted
    sink.close()
    print("logger: wrote %d rows to %s (%s, V = %d)" % (rows, args.out, fmt, v))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target")
    ap.add_argument("--draft")
    ap.add_argument("--from-config", action="store_true", help="random weights from the models' configs")
    ap.add_argument("--tiny", action="store_true", help="tiny pure-PyTorch character GPT pair")
    ap.add_argument("--corpus", default="/usr/share/common-licenses/GPL-3")
    ap.add_argument("--train-steps", type=int, default=200)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--gamma", type=int, default=4, help="draft length; with --tree, the tree's depth")
    ap.add_argument("--tree", type=int, default=0, metavar="K",
                    help="log tree steps (schema version 2): K children per node drawn without replacement "
                         "from the draft, to depth --gamma, verified by recursive rejection sampling (EAGLE-1)")
    ap.add_argument("--steps", type=int, default=20, help="steps per prompt")
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--prompt", action="append", help="prompt text (repeatable; cycled)")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--top-k", type=int, default=0)
    ap.add_argument("--top-p", type=float, default=1.0)
    ap.add_argument("--min-p", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--run-id", default="logger")
    ap.add_argument("--format", choices=["auto", "parquet", "jsonl"], default="auto")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    if not args.tiny and not (args.target and args.draft):
        ap.error("give --target and --draft (Hugging Face models), or --tiny")
    if args.tree < 0:
        ap.error("--tree K needs K >= 1 children per node (0: chain steps)")
    if args.tree > 0 and sum(args.tree ** d for d in range(args.gamma + 1)) > 4096:
        ap.error("--tree %d to depth --gamma %d exceeds 4096 nodes (sim.MaxTreeNodes); lower K or gamma" % (args.tree, args.gamma))
    if args.gamma < 1 or args.temperature < 0 or args.top_k < 0 or not (0 < args.top_p <= 1) or not (0 <= args.min_p < 1):
        ap.error("need gamma >= 1, temperature >= 0, top_k >= 0, 0 < top_p <= 1, 0 <= min_p < 1")
    run(args)


if __name__ == "__main__":
    main()
