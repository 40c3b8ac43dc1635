"""The memory service (issue 26): CLI latency through it, paired against in process, and its memory.

Runs the real `vaultmem` console script in subprocesses with the real model, in a private HOME
and runtime folder (the user's own service is never touched), on a copy of the demo vault.

latency   Paired in one run, each round alternating the two sides (medians over --runs rounds):
          `recall` CLI through the service vs in process (VAULTMEM_NO_SERVICE=1); `hook prompt`
          through the service vs in process; `hook prompt` when it has to start the service
          (answered from keywords, no model; with --base DIR paired against the checkout in DIR,
          e.g. a worktree of an older commit); `remember` through the service vs in
          process; and the first answer after a cold start (no service; the model's and the
          runtime's files evicted from the page cache with posix_fadvise, the nearest to a
          reboot a shared machine allows) of `recall` (waits for the service) and `hook prompt`.
soak      RSS of the service over --calls mixed calls sent on its socket (recall in one vault
          and in two, wake, status, remember, edit), sampled every --every calls.

    python benchmarks/service_bench.py latency --runs 15
    python benchmarks/service_bench.py soak --calls 10000 [--reads-only]
    python benchmarks/service_bench.py all          # both, one results file

Bytecode: the CLI runs as installed, with its modules' bytecode cached (pip compiles it at install;
a checkout writes __pycache__/ on first use). An environment with PYTHONDONTWRITEBYTECODE=1 (this
project's sessions set it) would otherwise compile vaultmem's modules from source at every call
(+20-25 ms a call); the benchmark drops it for the processes it runs, unless --no-bytecode
(which also deletes vaultmem's __pycache__/ folders first: bytecode found there is read anyway).
Results: benchmarks/results/service.json (the load average before and after each part is kept:
the machine is shared and noisy, so compare the ratios).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import RESULTS, fresh_copy, latency_summary, parser, write_result

HERE = Path(__file__).resolve().parent
DEMO = HERE.parent / "vaults" / "demo"
BIN = str(Path(sys.executable).with_name("vaultmem"))
QUERIES = ["why did we pick postgres advisory locks for job leases?", "how are refunds rounded?",
           "what broke under pgbouncer?", "where do we deploy the api?", "who is the pilot customer?"]  # fmt: skip
PROMPT = "how do we lease jobs with advisory locks so two workers never run the same job?"


class Home:
    """A private HOME, config, state and runtime folder, and a demo vault copy indexed in it."""

    def __init__(self, bytecode: bool = True) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="vm-svc-"))
        self.env = {**os.environ, "HOME": str(self.base), "XDG_RUNTIME_DIR": str(self.base / "run"),
                    "XDG_CONFIG_HOME": str(self.base / "cfg"), "XDG_STATE_HOME": str(self.base / "state"),
                    "PYTHONPATH": str(HERE.parent)}  # fmt: skip
        self.env.pop("VAULTMEM_NO_SERVICE", None)
        if bytecode:  # as installed: bytecode written once, then read (see the module's docstring)
            self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        else:
            self.env["PYTHONDONTWRITEBYTECODE"] = "1"
            for cache in sorted((HERE.parent / "vaultmem").rglob("__pycache__")):
                shutil.rmtree(cache, ignore_errors=True)
        self.env.setdefault("VAULTMEM_CACHE", str(Path.home() / ".cache" / "vaultmem"))  # the assembled model
        self.vault = self.base / "demo"
        self.other = self.base / "other"
        for dest in (self.vault, self.other):
            fresh_copy(DEMO, dest)
            self.run("index", "--vault", str(dest), local=True)
        self.n = 0

    def run(
        self, *args: str, local: bool = False, stdin: str | None = None, code: Path | None = None
    ) -> float:
        """Wall seconds of one `vaultmem` command (in process with ``local``; of the checkout in
        ``code`` instead of this one)."""
        env = {**self.env, **({"VAULTMEM_NO_SERVICE": "1"} if local else {})}
        if code is not None:
            env["PYTHONPATH"] = str(code)
        t = time.perf_counter()
        done = subprocess.run([BIN, *args], env=env, input=stdin, capture_output=True, text=True, timeout=600)
        took = time.perf_counter() - t
        if done.returncode != 0:
            raise SystemExit(f"vaultmem {' '.join(args)}: {done.stderr.strip()}")
        self.last = done
        return took

    def stop(self) -> None:
        self.run("service", "stop")

    def remember_args(self) -> list[str]:
        self.n += 1
        words = " ".join(random.Random(self.n).sample(WORDS, 12))
        return [
            "remember",
            "fact",
            f"Bench note {self.n}",
            f"Bench note {self.n}: {words}.",
            "--vault",
            str(self.vault),
        ]

    def hook(self, session: str, local: bool = False, code: Path | None = None) -> float:
        payload = json.dumps({"prompt": PROMPT, "session_id": session, "cwd": str(self.vault)})
        return self.run("hook", "prompt", "--vault", str(self.vault), stdin=payload, local=local, code=code)

    def close(self) -> None:
        subprocess.run([BIN, "service", "stop"], env=self.env, capture_output=True, timeout=120)
        shutil.rmtree(self.base, ignore_errors=True)


WORDS = (
    "harbour slip marina booking refund payment invoice ledger crane pier tide anchor buoy ferry dock "
    "berth mooring keel hull mast sail rope knot chart compass beacon lighthouse gull heron otter seal"
).split()


def evict_page_cache() -> int:
    """Ask the kernel to drop the cached pages of the model and of onnxruntime (posix_fadvise
    DONTNEED; pages other processes map stay). Returns the number of files advised."""
    import importlib.util

    roots = [Path(os.environ.get("VAULTMEM_CACHE", Path.home() / ".cache" / "vaultmem"))]
    for mod in ("onnxruntime", "tokenizers", "numpy", "whoosh", "networkx", "fastembed"):
        spec = importlib.util.find_spec(mod)
        if spec and spec.origin:
            roots.append(Path(spec.origin).parent)
    count = 0
    for root in roots:
        for path in root.rglob("*"):
            try:
                if path.is_file():
                    fd = os.open(path.resolve(), os.O_RDONLY)
                    try:
                        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                        count += 1
                    finally:
                        os.close(fd)
            except OSError:
                continue
    return count


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def paired(
    h: Home, runs: int, name: str, service, local, labels: tuple[str, str] = ("service", "in process")
) -> dict:
    """``runs`` rounds of (through the service, in process), alternating which goes first."""
    ours, theirs = [], []
    for i in range(runs):
        pair = [(ours, service), (theirs, local)]
        for bucket, fn in pair if i % 2 == 0 else pair[::-1]:
            bucket.append(fn())
    s, l = latency_summary(ours), latency_summary(theirs)
    ratio = round(s["p50_ms"] / l["p50_ms"], 3)
    print(f"{name}: {labels[0]} p50 {s['p50_ms']:.0f} ms, {labels[1]} {l['p50_ms']:.0f} ms, ratio {ratio}")
    return {"service": s, "in_process": l, "ratio_p50": ratio}


def starting_hook(h: Home, session: str, code: Path | None = None) -> float:
    """Wall seconds of a `hook prompt` that finds no service (it answers from keywords and starts
    one as it exits); the service is then waited for, so the next round starts alike."""
    h.stop()
    took = h.hook(session, code=code)
    assert "keyword search only" in h.last.stdout or not h.last.stdout.strip(), h.last.stdout
    wait_ready(h)
    return took


def latency(runs: int, bytecode: bool = True, base: Path | None = None) -> dict:
    h = Home(bytecode)
    try:
        out: dict = {"load_before": load(), "runs": runs, "bytecode_cached": bytecode}
        bare = [timed_python() for _ in range(runs)]
        out["python_start"] = latency_summary(bare)  # the floor of any CLI call on this machine right now
        print(f"python -c pass: p50 {out['python_start']['p50_ms']:.0f} ms")
        h.run("service", "start")
        for q in QUERIES:  # the service warm for every query shape
            h.run("recall", q, "--vault", str(h.vault))
        out["recall"] = paired(h, runs, "recall", lambda: h.run("recall", random.choice(QUERIES), "--vault", str(h.vault)),
                               lambda: h.run("recall", random.choice(QUERIES), "--vault", str(h.vault), local=True))  # fmt: skip
        out["recall_two_vaults"] = paired(
            h, runs, "recall, two vaults",
            lambda: h.run("recall", random.choice(QUERIES), "--vault", str(h.vault), "--vault", str(h.other)),
            lambda: h.run("recall", random.choice(QUERIES), "--vault", str(h.vault), "--vault", str(h.other), local=True))  # fmt: skip
        sessions = iter(range(10**6))
        out["hook_prompt"] = paired(h, runs, "hook prompt", lambda: h.hook(f"s{next(sessions)}"),
                                    lambda: h.hook(f"s{next(sessions)}", local=True))  # fmt: skip
        out["remember"] = paired(h, runs, "remember", lambda: h.run(*h.remember_args()),
                                 lambda: h.run(*h.remember_args(), local=True))  # fmt: skip
        if base is None:
            starting = [starting_hook(h, f"cold{i}") for i in range(runs)]
            out["hook_prompt_starting_the_service"] = latency_summary(starting)
        else:  # paired, alternating, against another checkout (each side's bytecode written first)
            starting_hook(h, "warm-ours"), starting_hook(h, "warm-base", base)
            sessions = iter(range(10**6))
            pair = paired(h, runs, "hook prompt that starts the service (this checkout vs --base)",
                          lambda: starting_hook(h, f"cold{next(sessions)}"),
                          lambda: starting_hook(h, f"cold{next(sessions)}", base), ("this checkout", "base"))  # fmt: skip
            out["hook_prompt_starting_the_service"] = pair["service"]
            out["hook_prompt_starting_the_service_base"] = {"base": str(base), **pair["in_process"],
                                                            "ratio_p50": pair["ratio_p50"]}  # fmt: skip
        print(
            f"hook prompt that starts the service: p50 {out['hook_prompt_starting_the_service']['p50_ms']:.0f} ms"
        )
        cold = {"recall_waits": [], "hook_prompt": [], "files_evicted": 0}
        for i in range(max(3, runs // 5)):
            h.stop()
            cold["files_evicted"] = evict_page_cache()
            cold["recall_waits"].append(h.run("recall", QUERIES[0], "--vault", str(h.vault)))
            h.stop()
            evict_page_cache()
            cold["hook_prompt"].append(h.hook(f"reboot{i}"))
            wait_ready(h)
        cold["recall_waits"] = latency_summary(cold["recall_waits"])
        cold["hook_prompt"] = latency_summary(cold["hook_prompt"])
        out["cold_start"] = cold
        print(f"first answer after a cold start: recall (waits) p50 {cold['recall_waits']['p50_ms']:.0f} ms, "
              f"hook prompt p50 {cold['hook_prompt']['p50_ms']:.0f} ms")  # fmt: skip
        out["load_after"] = load()
        return out
    finally:
        h.close()


def timed_python() -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t


def wait_ready(h: Home, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        h.run("service", "status", "--json")
        if json.loads(h.last.stdout).get("ready"):
            return
        time.sleep(0.2)
    raise SystemExit("the service did not become ready")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def soak(calls: int, every: int, writes: bool = True) -> dict:
    """RSS of the service over ``calls`` mixed calls on its socket (this process is the client);
    without ``writes`` only recall, wake and status (the vaults do not grow)."""
    h = Home()
    try:
        h.run("service", "start")
        os.environ.update(
            {k: h.env[k] for k in ("HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME")}
        )
        from vaultmem.service import client

        def call(op: str, args: dict) -> None:
            reply = client.call(op, args)
            if not reply or not reply.get("ok"):
                raise SystemExit(f"{op}: {reply}")

        h.run("service", "status", "--json")
        pid = json.loads(h.last.stdout)["pid"]
        one, two = {"vault": str(h.vault)}, {"demo": str(h.vault), "other": str(h.other)}
        rng = random.Random(26)
        samples, mix = [], {"recall": 0, "recall2": 0, "wake": 0, "status": 0, "remember": 0, "edit": 0}
        load_before, started = load(), time.perf_counter()
        for i in range(calls + 1):
            if i % every == 0:
                samples.append({"calls": i, "rss_mb": rss_mb(pid)})
                print(f"{i} calls: RSS {samples[-1]['rss_mb']} MB", flush=True)
            if i == calls:
                break
            r = rng.random() * (1.0 if writes else 0.9)
            q = rng.choice(QUERIES) + f" {rng.choice(WORDS)}"
            if r < 0.55:
                kind, op, args = (
                    "recall",
                    "recall",
                    {"roots": one, "query": q, "options": {"k": 10, "log": False}},
                )
            elif r < 0.75:
                kind, op, args = (
                    "recall2",
                    "recall",
                    {"roots": two, "query": q, "options": {"k": 10, "log": False}},
                )
            elif r < 0.80:
                kind, op, args = "wake", "wake", {"roots": one, "budget": 1500, "all_branches": True}
            elif r < 0.90:
                kind, op, args = "status", "status", {"root": str(h.vault), "drift": False}
            elif r < 0.95:
                h.n += 1
                words = " ".join(rng.sample(WORDS, 12))
                kind, op, args = "remember", "remember", {"root": str(h.other), "type": "fact", "title": f"Soak {h.n}",
                                                          "content": f"Soak {h.n}: {words}."}  # fmt: skip
            else:
                kind, op, args = "edit", "edit", {"root": str(h.other), "ref": f"Soak {max(h.n, 1)}",
                                                  "fields": {"add_tags": [rng.choice(WORDS)]}}  # fmt: skip
                if h.n == 0:
                    continue
            mix[kind] += 1
            call(op, args)
        took = time.perf_counter() - started
        rss = [s["rss_mb"] for s in samples]
        settled = rss[len(rss) // 5 :]  # after the first fifth: caches filled
        return {"calls": calls, "mix": mix, "seconds": round(took, 1), "samples": samples,
                "rss_first_mb": rss[0], "rss_after_warmup_mb": settled[0], "rss_last_mb": rss[-1],
                "rss_max_mb": max(rss), "growth_after_warmup_mb": round(rss[-1] - settled[0], 1),
                "growth_per_1000_calls_after_warmup_mb": round((rss[-1] - settled[0]) / max(1, calls * 0.8 / 1000), 2),
                "load_before": load_before, "load_after": load()}  # fmt: skip
    finally:
        h.close()


def main() -> None:
    ap = parser(__doc__, runs=(15, "paired rounds per latency measure"))
    ap.add_argument("part", choices=["latency", "soak", "all"])
    ap.add_argument("--calls", type=int, default=10_000, help="calls in the soak (default 10000)")
    ap.add_argument("--every", type=int, default=500, help="RSS sampled every this many calls (default 500)")
    ap.add_argument(
        "--no-bytecode",
        action="store_true",
        help="latency: run the CLI with PYTHONDONTWRITEBYTECODE=1 (every call compiles vaultmem from source)",
    )
    ap.add_argument(
        "--base",
        type=Path,
        help="latency: also time the hook that starts the service with the "
        "checkout in this folder (e.g. a git worktree of an older commit), paired",
    )
    ap.add_argument(
        "--reads-only", action="store_true", help="soak: no remember or edit (kept as soak_reads_only)"
    )
    a = ap.parse_args()
    previous = RESULTS / "service.json"
    data = json.loads(previous.read_text()) if previous.exists() else {}
    data = {k: v for k, v in data.items() if k in ("latency", "soak", "soak_reads_only")}
    if a.part in ("latency", "all"):
        data["latency"] = latency(a.runs, bytecode=not a.no_bytecode, base=a.base)
    if a.part in ("soak", "all"):
        data["soak_reads_only" if a.reads_only else "soak"] = soak(a.calls, a.every, writes=not a.reads_only)
    print(f"wrote {write_result('service', data)}")


if __name__ == "__main__":
    main()
