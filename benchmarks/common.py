"""The benchmarks' shared harness: arguments (``parser``), the data folder (``DATA``), vault set-up
(``fresh_copy``, ``private_home``), the results file (``write_result``: date, machine, commit,
arguments), timing, percentiles and metrics."""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# VAULTMEM_BENCH_DIR: results and work folders under it instead (the test suite's smoke runs)
_OUT = Path(os.environ["VAULTMEM_BENCH_DIR"]) if os.environ.get("VAULTMEM_BENCH_DIR") else None
RESULTS = _OUT / "results" if _OUT else HERE / "results"
WORK = _OUT / "work" if _OUT else HERE / ".work"
# VAULTMEM_BENCH_NOTES: a copied vault keeps its first N notes only (the smoke runs: a tiny sample)
SAMPLE = int(os.environ.get("VAULTMEM_BENCH_NOTES") or 0)
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _data_dir() -> Path:
    """The shared data sets: ``$VAULTMEM_DATA``, else ``shared/data`` beside the repository, or
    beside its main checkout when this is a git worktree (its ``.git`` a file naming the gitdir)."""
    if os.environ.get("VAULTMEM_DATA"):
        return Path(os.environ["VAULTMEM_DATA"])
    roots, git = [REPO], REPO / ".git"
    if git.is_file():  # "gitdir: <main>/.git/worktrees/<name>", whose commondir is <main>/.git
        linked = Path(git.read_text().partition("gitdir:")[2].strip())
        common = linked / "commondir"
        roots.append((linked / common.read_text().strip()).resolve().parent if common.exists() else REPO)
    found = [root.parent / "shared" / "data" for root in roots]
    return next((d for d in found if d.is_dir()), found[0])


DATA = _data_dir()


def fresh_usage(root: Path) -> None:
    """Delete a vault's usage store (new and old place), so a run starts with no usage data."""
    for folder in (".vaultmem-usage", ".vaultmem"):
        for name in ("usage.db", "usage.db-wal", "usage.db-shm"):
            (root / folder / name).unlink(missing_ok=True)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation."""
    if not values:
        return float("nan")
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def latency_summary(seconds: Sequence[float]) -> dict:
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 2),
        "p95_ms": round(percentile(ms, 95), 2),
        "mean_ms": round(statistics.fmean(ms), 2) if ms else None,
    }


def ndcg_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 10) -> float:
    """nDCG@k with graded relevance (BEIR's definition)."""
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(rel / math.log2(i + 2) for i, rel in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 100) -> float:
    rel = {d for d, r in relevant.items() if r > 0}
    return len(rel & set(ranked[:k])) / len(rel) if rel else 0.0


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine() -> dict:
    return {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}


def commit() -> str | None:
    """The checkout's commit, with ``+`` when its tracked files differ from it; None outside git."""

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=30)

    try:
        head = git("rev-parse", "--short=12", "HEAD")
        return head.stdout.strip() + ("+" if git("diff", "--quiet", "HEAD").returncode else "") or None
    except (OSError, subprocess.SubprocessError):
        return None


def provenance() -> dict:
    """What a results file starts with: when, where, which code, and how it was run (the command
    line as given and, for a script on ``parser``, every argument with its default)."""
    arguments = {k: v if isinstance(v, (int, float, str, bool, type(None), list)) else str(v)
                 for k, v in _ARGUMENTS.items()}  # fmt: skip
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine(), "commit": commit(),
            "command": [Path(sys.argv[0]).name, *sys.argv[1:]], "arguments": arguments or None}  # fmt: skip


def write_result(name: str, data: dict, tag: str = "") -> Path:
    """``results/<name>[-<tag>].json``: ``data`` after the run's provenance."""
    name += f"-{tag}" if tag else ""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    data = {"benchmark": name, **provenance(), **data}
    path.write_text(json.dumps(data, indent=2, default=str) + "\n")  # paths among the arguments
    return path


def in_turns(trees: dict[str, Path], code: str, argv: Sequence[str], runs: int) -> dict[str, list]:
    """Run ``code`` (a script that prints one JSON value: its timings) in a fresh process per
    tree (its vaultmem imported from ``trees[name]``), the trees in turns, ``runs`` times;
    name -> the values printed, run by run (compare them paired: the machine is shared)."""
    import subprocess
    import sys

    out: dict[str, list] = {name: [] for name in trees}
    for run in range(runs):
        for name, tree in list(trees.items())[:: 1 if run % 2 == 0 else -1]:  # which goes first alternates
            env = {**os.environ, "PYTHONPATH": str(tree)}
            done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env,
                                  check=True)  # fmt: skip
            out[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    return out


def timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


class CachedEmbedder:
    """The default embedder behind a persistent text -> vector cache (SQLite in ``WORK``), so
    benchmark vaults of several shapes, rebuilt vaults and repeated queries embed a text once."""

    def __init__(self, inner=None, path: Path | None = None, model: str = ""):
        import sqlite3

        from vaultmem.index.embed import DEFAULT_MODEL, make_embedder

        self.inner = inner or make_embedder(model or DEFAULT_MODEL)
        self.name, self.max_tokens = self.inner.name, self.inner.max_tokens
        self.batch_size = getattr(self.inner, "batch_size", 4)
        path = path or WORK / "embed-cache.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path))
        self.db.execute("CREATE TABLE IF NOT EXISTS v (model TEXT, h TEXT, vec BLOB, PRIMARY KEY (model, h))")
        self.embedded = 0

    def embed(self, texts):
        return self._embed(texts, "")

    def embed_query(self, texts):
        """A query's vector (a model with roles keys it apart from the same text stored)."""
        query = getattr(self.inner, "embed_query", None)
        return self._embed(texts, "query: ", query) if query is not None else self.embed(texts)

    def similarity(self, cosines):
        from vaultmem.index.embed import similarity

        return similarity(self.inner, cosines)

    def _embed(self, texts, role: str, run=None):
        import hashlib

        import numpy as np

        keys = [hashlib.sha256((role + t).encode()).hexdigest() for t in texts]
        found = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            rows = self.db.execute(
                f"SELECT h, vec FROM v WHERE model=? AND h IN ({','.join('?' * len(part))})",
                [self.name, *part],
            )
            found.update({h: np.frombuffer(b, dtype=np.float32) for h, b in rows})
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in found))
        if missing:
            vecs = (run or self.inner.embed)(missing)
            self.embedded += len(missing)
            new = {hashlib.sha256((role + t).encode()).hexdigest(): v for t, v in zip(missing, vecs)}
            self.db.executemany("INSERT OR REPLACE INTO v VALUES (?,?,?)",
                                [(self.name, h, v.astype(np.float32).tobytes()) for h, v in new.items()])  # fmt: skip
            self.db.commit()
            found.update(new)
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([found[k] for k in keys]).astype(np.float32)


class ReusedEmbedder:
    """Index-time embedder for scale runs that cannot afford the model on every note: a text
    found in a ``CachedEmbedder`` cache gets its real vector; any other text gets the real
    vector of a cached text chosen by its hash (a stand-in: same model, same distribution, so
    the matrix, its memory and the matmul are those of a real index; the stand-ins are counted
    and reported). The model itself never runs here: queries go through a vault's own embedder."""

    def __init__(self, path: Path, model: str):
        import sqlite3

        import numpy as np

        self.name, self.max_tokens, self.batch_size = model, 256, 4
        self.db = sqlite3.connect(str(path))
        self.pool = np.stack([np.frombuffer(b, dtype=np.float32) for (b,) in
                              self.db.execute("SELECT vec FROM v WHERE model=? ORDER BY h LIMIT 50000", (model,))])  # fmt: skip
        self.real = self.stand_ins = 0

    def embed(self, texts):
        import hashlib

        import numpy as np

        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        marks = ",".join("?" * len(keys))
        found = {h: np.frombuffer(b, dtype=np.float32) for h, b in
                 self.db.execute(f"SELECT h, vec FROM v WHERE model=? AND h IN ({marks})", [self.name, *keys])}  # fmt: skip
        self.real += sum(k in found for k in keys)
        self.stand_ins += sum(k not in found for k in keys)
        rows = [found[k] if k in found else self.pool[int(k[:12], 16) % len(self.pool)] for k in keys]
        return (
            np.stack(rows).astype(np.float32) if rows else np.zeros((0, self.pool.shape[1]), dtype=np.float32)
        )


def watch_request(root: Path, op: str, args: dict | None = None, timeout: float = 60.0) -> dict | None:
    """A request to what a `vaultmem watch` of ``root`` serves, in the old per-vault form
    (``{"ok", "result"}``): the memory service (this checkout: `watch` runs it; ``ping`` answers
    only once it serves ``root`` with its model loaded), or an older checkout's per-vault socket."""
    from vaultmem.service import client

    old = root / ".vaultmem" / "vaultmem.sock"
    if old.exists():
        return client.send(old, {"op": op, "args": args or {}}, timeout)
    args = dict(args or {})
    if op == "ping":
        reply = client.call("ping", timeout=timeout)
        result = (reply or {}).get("result") or {}
        ready = result.get("ready") and str(Path(root).resolve()) in result.get("vaults", [])
        return reply if ready else None
    if op == "recall":
        query, explain = args.pop("query"), bool(args.pop("explain", False))
        reply = client.call("recall", {"roots": {"vault": str(root)}, "query": query, "explain": explain,
                                       "options": args, "all_branches": True}, timeout)  # fmt: skip
        return {**reply, "result": reply["result"]["hits"]} if reply and reply.get("ok") else reply
    return client.call(op, {"root": str(root), **args}, timeout)


_ARGUMENTS: dict = {}  # the parsed arguments of this run (``parser``), for its results file


class _Parser(argparse.ArgumentParser):
    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        parsed, rest = super().parse_known_args(args, namespace)
        _ARGUMENTS.update(vars(parsed))
        return parsed, rest


Flag = str | tuple[str, str]  # a value, or a value and its help


def parser(
    doc: str | None, *, data: Flag = "", runs: int | tuple[int, str] = 0, base: Flag = "", tag: bool = False
) -> argparse.ArgumentParser:
    """A benchmark's argument parser: its docstring as the help, and the common flags it asks for:
    ``--data`` (``data`` a path under the shared data folder ``DATA``), ``--runs N`` (``runs`` the
    default), ``--base DIR`` (another checkout for paired runs; ``base`` "optional" or "required"),
    ``--tag`` (a suffix of the results file's name); each optionally with its own help. What it
    parses goes into the results file."""
    ap = _Parser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    if data:
        path, what = data if isinstance(data, tuple) else (data, "the data set")
        ap.add_argument("--data", type=Path, default=DATA / path, help=f"{what} (default: {DATA / path}; the "
                        "shared data folder is $VAULTMEM_DATA, else shared/data beside the repository)")  # fmt: skip
    if runs:
        n, what = runs if isinstance(runs, tuple) else (runs, "runs")
        ap.add_argument("--runs", type=int, default=n, help=f"{what} (default {n})")
    if base:
        need, what = base if isinstance(base, tuple) else (base, "another checkout, run paired with this one")
        ap.add_argument("--base", type=Path, required=need == "required", help=what)
    if tag:
        ap.add_argument("--tag", default="", help="a suffix of the results file's name")
    return ap


def fresh_copy(src: Path, dest: Path) -> Path:
    """``dest``: a fresh copy of the vault ``src`` without its index, usage data and git folder
    (vaultmem writes ``.vaultmem/`` into a vault it opens; a run starts from the notes alone)."""
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".vaultmem", ".vaultmem-usage", ".git"))
    if SAMPLE:
        for note in sorted(dest.rglob("*.md"))[SAMPLE:]:
            note.unlink()
    return dest


def private_home(home: Path) -> dict[str, str]:
    """Environment variables that put HOME and the config, state, runtime (the service's socket)
    and cache folders under ``home``, so a run meets no service, config or cache of the user's."""
    return {"HOME": str(home), "XDG_RUNTIME_DIR": str(home / "run"), "XDG_STATE_HOME": str(home / "state"),
            "XDG_CONFIG_HOME": str(home / "config"), "XDG_CACHE_HOME": str(home / "cache"), "HF_HUB_OFFLINE": "1"}  # fmt: skip


def own_home(name: str) -> Path:
    """This run and every child it starts in a private HOME (``WORK/name``, ``private_home``)
    with no memory service (these scripts measure the in-process and watcher paths): the
    user's own service, config, state and key are never touched."""
    home = WORK / name
    os.environ.update({**private_home(home), "VAULTMEM_NO_SERVICE": "1"})
    return home
