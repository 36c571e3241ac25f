#!/usr/bin/env python3
"""run.py fetches each sampler of the case study's manifest at its
commits and checks it with `simulate check --external`.

    python3 casestudy/run.py [--only NAME] [--trials N] [--out DIR]

Upstream files come from SPECSIM_CASESTUDY_MIRROR when it is set (a
directory of bare git repositories named OWNER+NAME/repo or OWNER+NAME),
and otherwise from GitHub with git (`git fetch --depth 1` of the commit
into a cache under --work); where neither has the commit, the entry is
skipped with one line saying why. Nothing fetched is written inside the
checkout. The results go to DIR/results.json and DIR/results.csv with the
command, the specsim revision and the date.
"""

import argparse
import csv
import datetime
import json
import os
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIELDS = ["name", "role", "repo", "commit", "file", "function", "mode", "flags", "trials", "status",
          "verdict", "exit_code", "p_holm", "min_detectable_tv", "finest_test", "edge_verdict",
          "invalid_outcomes", "steps_per_second", "error"]


def git(gitdir, *args, timeout=600):
    return subprocess.run(["git", "--git-dir", gitdir] + list(args), capture_output=True, timeout=timeout)


def mirror_dir(repo):
    """The mirror's git directory for owner/name, or None."""
    root = os.environ.get("SPECSIM_CASESTUDY_MIRROR", "")
    if not root:
        return None
    base = os.path.join(root, repo.replace("/", "+"))
    for d in (os.path.join(base, "repo"), base):
        if os.path.isdir(d) and git(d, "rev-parse", "--git-dir").returncode == 0:
            return d
    return None


def network_dir(repo, commit, work):
    """A bare cache of owner/name holding commit, fetched from GitHub; None
    and a reason when it cannot be reached."""
    d = os.path.join(work, "git", repo.replace("/", "+") + ".git")
    if not os.path.isdir(d):
        subprocess.run(["git", "init", "--quiet", "--bare", d], check=True)
    if git(d, "cat-file", "-e", commit + "^{commit}").returncode == 0:
        return d, ""
    try:
        r = git(d, "fetch", "--quiet", "--depth", "1", "https://github.com/%s" % repo, commit, timeout=300)
    except subprocess.TimeoutExpired:
        return None, "git fetch from github.com timed out"
    if r.returncode != 0:
        return None, "git fetch from github.com failed: %s" % r.stderr.decode(errors="replace").strip().splitlines()[-1:]
    return d, ""


def fetch(repo, commit, path, work):
    """Writes path at commit to work/src/OWNER+NAME/COMMIT/path; returns
    (file, why-not)."""
    d = mirror_dir(repo)
    why = ""
    if d is None:
        d, why = network_dir(repo, commit, work)
        if d is None:
            return None, why
    if git(d, "cat-file", "-e", commit + "^{commit}").returncode != 0:
        return None, "commit %s is not in %s" % (commit, d)
    r = git(d, "show", "%s:%s" % (commit, path))
    if r.returncode != 0:
        return None, "%s has no %s" % (commit[:12], path)
    out = os.path.join(work, "src", repo.replace("/", "+"), commit, path)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "wb") as f:
        f.write(r.stdout)
    return out, ""


def check(entry, c, src, args):
    """Runs simulate check --external on one fetched commit; returns a row."""
    impl = "%s -m specsim_ext %s" % (args.python, os.path.join("casestudy", "wrappers", entry["wrapper"]))
    cmd = [args.simulate, "check", "--external", impl, "--mode", entry["mode"],
           "--trials", str(args.trials), "--seed", str(args.seed), "--json"] + entry["flags"]
    root = src[:-len(c["file"])].rstrip(os.sep)
    env = dict(os.environ, SPECSIM_UPSTREAM_FILE=src, SPECSIM_UPSTREAM_ROOT=root,
               PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "python"), os.path.join(HERE, "wrappers")]))
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, timeout=args.timeout)
    row = base_row(entry, c, args)
    row["exit_code"] = r.returncode
    try:
        j = json.loads(r.stdout)
    except ValueError:
        lines = r.stderr.decode(errors="replace").strip().splitlines()
        row.update(status="error", error=lines[-1] if lines else "exit %d" % r.returncode)
        return row
    row.update(status="checked", verdict=j["verdict"], p_holm=j.get("p_value"), trials=j.get("trials"),
               min_detectable_tv=j.get("min_detectable_tv"), finest_test=j.get("finest_test"),
               edge_verdict=j.get("edge_verdict"), invalid_outcomes=j.get("invalid_outcomes"),
               steps_per_second=j.get("steps_per_second"))
    return row


def base_row(entry, c, args):
    row = {k: None for k in FIELDS}
    row.update(name=entry["name"], role=c["role"], repo=entry["repo"], commit=c["commit"], file=c["file"],
               function=entry["function"], mode=entry["mode"], flags=" ".join(entry["flags"]), trials=args.trials)
    return row


def revision():
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True)
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], capture_output=True)
    return r.stdout.decode().strip() + ("+dirty" if dirty.stdout.strip() else "")


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", default=os.path.join(HERE, "manifest.json"))
    ap.add_argument("--only", action="append", default=[], help="an entry's name (repeatable)")
    ap.add_argument("--trials", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--simulate", default=os.path.join(ROOT, "simulate"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per check")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "specsim-casestudy"))
    ap.add_argument("--out", default="", help="directory for results.json and results.csv (default: print)")
    ap.add_argument("--keep", default="", help="an earlier results.json whose rows of entries this run does not check are kept")
    a = ap.parse_args(argv)
    if a.trials < 1:
        ap.error("--trials = %d; use 1 or more" % a.trials)
    if not os.access(a.simulate, os.X_OK):
        ap.error("--simulate %s is not an executable; build it: go build -o simulate ./cmd/simulate" % a.simulate)
    return a


def main(argv):
    args = parse(argv)
    with open(args.manifest, encoding="utf-8") as f:
        entries = json.load(f)["samplers"]
    names = {e["name"] for e in entries}
    for n in args.only:
        if n not in names:
            print("run.py: --only %s: no such entry; the manifest has %s" % (n, ", ".join(sorted(names))), file=sys.stderr)
            return 2
    rows = []
    for e in entries:
        if args.only and e["name"] not in args.only:
            continue
        for c in e["commits"]:
            src, why = fetch(e["repo"], c["commit"], c["file"], args.work)
            for extra in e.get("also", []):
                if src is not None:
                    ok, why = fetch(e["repo"], c["commit"], extra, args.work)
                    src = src if ok else None
            if src is None:
                print("run.py: skip %s at %s (%s): %s" % (e["name"], c["commit"][:12], c["role"], why), file=sys.stderr)
                rows.append(dict(base_row(e, c, args), status="skipped", error=why))
                continue
            row = check(e, c, src, args)
            print("run.py: %s %s %s: %s" % (e["name"], c["role"], c["commit"][:12], row["verdict"] or row["error"]), file=sys.stderr)
            rows.append(row)
    earlier = keep(args.keep, {r["name"] for r in rows}) if args.keep else None
    write(rows, args, argv, earlier)
    return 0


def keep(path, done):
    """The rows of an earlier results.json for entries not in done, and
    that file's command, revision and date."""
    with open(path, encoding="utf-8") as f:
        old = json.load(f)
    rows = [r for r in old["rows"] if r["name"] not in done]
    return {"command": old["command"], "revision": old["revision"], "date": old["date"],
            "entries": sorted({r["name"] for r in rows}), "rows": rows}


def write(rows, args, argv, earlier=None):
    meta = {"command": "python3 casestudy/run.py " + " ".join(shlex.quote(a) for a in argv),
            "revision": revision(), "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "mirror": bool(os.environ.get("SPECSIM_CASESTUDY_MIRROR")), "rows": rows}
    if earlier:
        # the kept rows come first, in the earlier file's order; their
        # provenance is the earlier run's, recorded under "earlier"
        meta["rows"] = earlier.pop("rows") + rows
        meta["earlier"] = earlier
    if not args.out:
        json.dump(meta, sys.stdout, indent=1)
        print()
        return
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    write_csv(os.path.join(args.out, "results.csv"), meta["rows"])


def write_csv(path, rows):
    """Writes rows (kept rows included) as results.csv."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
