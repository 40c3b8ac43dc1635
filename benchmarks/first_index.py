"""A big vault's first index through the memory service (issue 45): does the vault serve at once?

    python benchmarks/first_index.py --notes 1500 [--burn 8] [--limit 900] [--base DIR] [--label NAME]

A fresh synthetic vault (``synth.py``; no ``.vaultmem/``) and a running service (started and
warm first, with a private HOME and runtime folder, as a user's would be serving other vaults).
At t=0 ``vaultmem index --vault V --json`` starts in the background, as in the issue; then,
until the vault answers hybrid and the index command has returned (or ``--limit`` seconds),
the probes run one after another: ``recall`` (a note's own words, ``--json``), ``hook prompt``
(Claude Code's payload) and ``status --json``. Measured: the time to the first keyword answer
(the first recall with hits) and to hybrid (the first recall no longer degraded), the index
command's exit and time, the recall, hook and status latencies p50/p95 during the first
index, how many hooks took longer than the agent's 30 s (killed) and how many were silent,
whether status showed progress, and the service's peak RSS (VmHWM). Then ``--settled`` rounds
of the same probes on the settled vault: the paired baseline at the same load (a CLI call's
own start-up is most of its time on a loaded machine).

``--burn N`` runs N busy processes meanwhile (load >= N; the machine's own load is recorded
too). ``--base DIR``: the same run with another checkout's package (its vaultmem/ on
PYTHONPATH) first, as the paired "before". Results: results/first-index-<notes>[-label].json.
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from benchmarks.common import WORK, latency_summary, parser, private_home, write_result  # noqa: E402
from benchmarks.synth import generate  # noqa: E402

HOOK_KILLED = 30.0  # what setup declares for the prompt hook (agents/setups.py TIMEOUTS)
BURN = "import time\nend = time.time() + float(__import__('sys').argv[1])\nwhile time.time() < end: pass\n"


def env_for(home: Path, pythonpath: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULTMEM_")}
    env.update(private_home(home))
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


def timed(
    cmd: list[str], env: dict, timeout: float, stdin: str | None = None
) -> tuple[float, subprocess.CompletedProcess | None]:
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, input=stdin)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - start, None
    return time.perf_counter() - start, done


def vm_hwm_mb(pid: int) -> float | None:
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return None
    return round(next(int(x.split()[1]) for x in lines if x.startswith("VmHWM:")) / 1024, 1)


def one_run(
    exe: str, notes: int, limit: float, pythonpath: str | None, probe_every: float, settled: int
) -> dict:
    with tempfile.TemporaryDirectory(prefix="vmfi", dir=WORK) as tmp:
        home = Path(tmp)
        (home / "run").mkdir(mode=0o700)
        vault = home / "big"
        meta = generate(vault, notes)
        shutil.rmtree(vault / ".vaultmem", ignore_errors=True)  # a folder of notes, never indexed
        (vault / ".vaultmem").mkdir()
        env = env_for(home, pythonpath)
        rng = random.Random(5)
        picks = rng.sample(meta, 20)
        queries = [
            (" ".join(w for w in m["words"] if len(w) > 5)[:60] or m["title"], m["path"]) for m in picks
        ]
        subprocess.run([exe, "service", "start"], env=env, capture_output=True, timeout=600, cwd=home)
        v = ["--vault", str(vault)]
        t0 = time.perf_counter()
        index = subprocess.Popen([exe, "index", *v, "--json"], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, cwd=home)  # fmt: skip
        probes: list[dict] = []
        pid: int | None = None
        first_kw = hybrid = None
        index_done = None
        i = 0
        while time.perf_counter() - t0 < limit:
            q, expected = queries[i % len(queries)]
            i += 1
            at = time.perf_counter() - t0
            rs, rec = timed([exe, "recall", q, *v, "--json", "-k", "10"], env, 600)
            payload = json.dumps(
                {"session_id": f"s{i}", "prompt": q, "cwd": str(home), "hook_event_name": "UserPromptSubmit"}
            )
            hs, hook = timed([exe, "hook", "prompt", *v], env, HOOK_KILLED, payload)
            ss, st = timed([exe, "status", *v, "--json"], env, 600)
            row: dict = {
                "t": round(at, 2),
                "recall_s": round(rs, 3),
                "hook_s": round(hs, 3),
                "status_s": round(ss, 3),
            }
            if rec is not None and rec.returncode == 0:
                data = json.loads(rec.stdout)
                paths = [h["path"] for h in data["results"]]
                row.update(hits=len(paths), found=expected in paths, degraded=data.get("degraded"),
                           indexing=data.get("indexing"))  # fmt: skip
                done_at = at + rs  # when this recall answered
                if paths and first_kw is None:
                    first_kw = round(done_at, 2)
                if paths and not data.get("degraded") and hybrid is None:
                    hybrid = round(done_at, 2)
            else:
                row["recall_error"] = None if rec is None else rec.stderr[-300:]
            row["hook"] = "killed" if hook is None else "silent" if not hook.stdout.strip() else "answered"
            if st is not None and st.returncode == 0:
                sdata = json.loads(st.stdout)
                row["status_indexing"] = sdata.get("indexing")
                row["notes_indexed"] = sdata.get("notes_indexed")
                row["vectors"] = sdata.get("vectors")
                pid = sdata.get("pid") or pid
            probes.append(row)
            print(json.dumps(row), flush=True)
            if index_done is None and index.poll() is not None:
                index_done = round(time.perf_counter() - t0, 2)
            if hybrid is not None and index_done is not None:
                break
            time.sleep(max(0.0, probe_every - (time.perf_counter() - t0 - at)))
        after = []  # the same probes once the vault is settled: the paired baseline at this load
        for j in range(settled if hybrid is not None else 0):
            q, _ = queries[j % len(queries)]
            payload = json.dumps(
                {"session_id": f"a{j}", "prompt": q, "cwd": str(home), "hook_event_name": "UserPromptSubmit"}
            )
            after.append({"recall_s": timed([exe, "recall", q, *v, "--json", "-k", "10"], env, 600)[0],
                          "hook_s": timed([exe, "hook", "prompt", *v], env, HOOK_KILLED, payload)[0],
                          "status_s": timed([exe, "status", *v, "--json"], env, 600)[0]})  # fmt: skip
        if index.poll() is None:
            index.kill()
        out, err = index.communicate()
        events = [ln for ln in err.splitlines() if ln.startswith('{"event": "progress"')]
        peak = vm_hwm_mb(pid) if pid else None
        subprocess.run([exe, "service", "stop"], env=env, capture_output=True, timeout=120, cwd=home)
        during = [p for p in probes if hybrid is None or p["t"] <= hybrid]
        return {
            "first_keyword_answer_s": first_kw, "hybrid_s": hybrid, "index_command_s": index_done,
            "index_exit": index.returncode if index_done is not None else "killed at the limit",
            "index_progress_events": len(events), "index_stdout_tail": out[-300:],
            "recall": latency_summary([p["recall_s"] for p in during]),
            "hook": latency_summary([p["hook_s"] for p in during]),
            "status": latency_summary([p["status_s"] for p in during]),
            "hooks_killed": sum(p["hook"] == "killed" for p in probes),
            "hooks_silent": sum(p["hook"] == "silent" for p in during),
            "status_showed_progress": any(p.get("status_indexing") for p in probes),
            "found_in_top10": round(sum(bool(p.get("found")) for p in probes) / max(len(probes), 1), 3),
            "service_peak_rss_mb": peak,
            **({"settled": {k: latency_summary([a[f"{k}_s"] for a in after]) for k in ("recall", "hook", "status")},
                "hook_p50_during_over_settled": round(latency_summary([p["hook_s"] for p in during])["p50_ms"]
                                                      / latency_summary([a["hook_s"] for a in after])["p50_ms"], 2)}
               if after else {}),
            "load_during": os.getloadavg(), "probes": probes,
        }  # fmt: skip


def main() -> None:
    ap = parser(__doc__, base=("optional", "another checkout to run first, as the paired before"))
    ap.add_argument("--notes", type=int, default=1500)
    ap.add_argument("--limit", type=float, default=900.0, help="seconds a run probes at most")
    ap.add_argument("--every", type=float, default=1.0, help="seconds between probe rounds (at least)")
    ap.add_argument("--burn", type=int, default=0, help="busy processes meanwhile (a loaded machine)")
    ap.add_argument("--label", default="")
    ap.add_argument("--settled", type=int, default=10, help="probe rounds once hybrid (the paired baseline)")
    opts = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    exe = str(Path(sys.executable).with_name("vaultmem"))
    burners = [subprocess.Popen([sys.executable, "-c", BURN, str(opts.limit * 3)]) for _ in range(opts.burn)]
    try:
        sides = {**({"base": str(Path(opts.base).resolve())} if opts.base else {}), "current": None}
        result: dict = {"notes": opts.notes, "burn": opts.burn, "load_before": os.getloadavg(), "cpus": os.cpu_count(),
                        "limit_s": opts.limit, "sides": {}}  # fmt: skip
        for side, path in sides.items():
            result["sides"][side] = one_run(exe, opts.notes, opts.limit, path, opts.every, opts.settled)
            summary = {k: v for k, v in result["sides"][side].items() if k != "probes"}
            print(side, json.dumps(summary), flush=True)
        result["load_after"] = os.getloadavg()
    finally:
        for b in burners:
            b.kill()
    name = f"first-index-{opts.notes}" + (f"-{opts.label}" if opts.label else "")
    print(f"wrote {write_result(name, result)}")


if __name__ == "__main__":
    main()
