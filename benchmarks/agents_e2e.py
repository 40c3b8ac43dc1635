"""The memory loop in the real agent CLIs: per agent, over several headless sessions against
the fake model of tests/agents_e2e, which hooks fired, whether the [MEMORY] blocks reached
the model, whether the summary was written, and how long the agent waited for each hook.

    python benchmarks/agents_e2e.py                      # every agent, 3 sessions each
    python benchmarks/agents_e2e.py --agents codex --runs 1
    python benchmarks/agents_e2e.py --record             # also refresh tests/fixtures/agents/real/
    python benchmarks/agents_e2e.py --loop               # issue 46's reproductions, once each

The pinned CLIs (tests/agents_e2e/install.py) are installed from npm into
$VAULTMEM_AGENTS_CACHE (default ~/.cache/vaultmem-agents-e2e) when missing."""

from __future__ import annotations

import shutil
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(
    0, str(REPO / "tests")
)  # the lane's package, as pytest imports it (before this script's name)

from agents_e2e import install, record  # noqa: E402
from agents_e2e.agents import SPECS  # noqa: E402
from agents_e2e.checks import CHECKS, percentile, waits  # noqa: E402
from agents_e2e.harness import Session, run_session  # noqa: E402
from agents_e2e.scenarios import SCENARIOS  # noqa: E402

from benchmarks.common import WORK, parser, write_result  # noqa: E402

VARIANTS = {  # name -> (spec, extra environment)
    "claude": ("claude", {}),
    "claude-noservice": ("claude", {"VAULTMEM_NO_SERVICE": "1"}),
    "gemini": ("gemini", {}),
    "codex": ("codex", {}),
    "copilot": ("copilot", {}),
}
FIXTURES = REPO / "tests" / "fixtures" / "agents" / "real"


def summarise(sessions: list[Session]) -> dict:
    """One variant's sessions as pass counts per check and hook waits."""
    fired: dict[str, list[int]] = {}
    for s in sessions:
        for hook in ("start", "prompt", "stop", "pre-compact", "end"):
            fired.setdefault(hook, []).append(len(s.hook(hook)))
    checks = {name: sum(fn(s)[0] for s in sessions) for name, fn in CHECKS.items()}
    details = {name: CHECKS[name](sessions[0])[1] for name in CHECKS}
    per_hook: dict[str, list[float]] = {}
    for s in sessions:
        for hook, secs in waits(s).items():
            per_hook.setdefault(hook, []).extend(secs)
    every = [x for v in per_hook.values() for x in v]
    killed = sum(1 for s in sessions for h in s.hooks if h.get("seconds") is None)
    return {
        "version": sessions[0].version,
        "runs": len(sessions),
        "exit_codes": [s.rc for s in sessions],
        "hook_calls_per_session": {k: v for k, v in fired.items()},
        "checks_passed": checks,
        "first_run_details": details,
        "hooks_killed": killed,
        "wait_s": {
            hook: {"n": len(v), "p50": percentile(v, 50), "p95": percentile(v, 95)}
            for hook, v in per_hook.items()
        },
        "wait_all_s": {"n": len(every), "p50": percentile(every, 50), "p95": percentile(every, 95)},
        "session_s_median": round(statistics.median(s.seconds for s in sessions), 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__, runs=(3, "sessions per agent"))
    ap.add_argument(
        "--agents", default=",".join(VARIANTS), help="comma-separated variants: " + ", ".join(VARIANTS)
    )
    ap.add_argument("--record", action="store_true", help="write the first run's payloads as fixtures")
    ap.add_argument("--loop", action="store_true", help="issue 46's reproductions (scenarios.py), once each")
    args = ap.parse_args(argv)
    if args.loop:
        return loop()
    variants = [v.strip() for v in args.agents.split(",") if v.strip()]
    bindir, work = prepare(sorted({SPECS[VARIANTS[v][0]].name for v in variants}), "agents-e2e")
    if bindir is None:
        return 2
    results = {}
    for variant in variants:
        spec_name, extra = VARIANTS[variant]
        spec = SPECS[spec_name]
        sessions = []
        for i in range(args.runs):
            root = work / f"{variant}-{i}"
            root.mkdir(parents=True)
            sessions.append(run_session(spec.name, spec, bindir, root, extra))
        if args.record and variant == spec_name:
            record.save(sessions[0], FIXTURES / spec_name)
        results[variant] = summarise(sessions)
        r = results[variant]
        print(
            f"{variant:17} {spec.version:9} checks {sum(r['checks_passed'].values())}/{len(CHECKS) * args.runs} "
            f"killed {r['hooks_killed']} wait p50 {r['wait_all_s']['p50']} s p95 {r['wait_all_s']['p95']} s"
        )
    conditions = ("headless, fake model on 127.0.0.1 (one ls tool call, then text), 13 planted notes, "
                  "configs from vaultmem setup --write, hooks wrapped by a recorder (its ~30 ms start included)")  # fmt: skip
    return finish("agents-e2e", conditions, "agents", results, work)


def prepare(agents: list[str] | None, name: str) -> tuple[Path | None, Path]:
    """(the CLIs' bin folder, or None when they cannot be installed; an empty work folder)."""
    bindir, error = install.ensure(agents)
    if error:
        print(f"cannot install the agent CLIs: {error}", file=sys.stderr)
        return None, WORK / name
    shutil.rmtree(WORK / name, ignore_errors=True)
    return bindir, WORK / name


def finish(name: str, conditions: str, key: str, results: dict, work: Path) -> int:
    """Write ``results/<name>.json`` (with the pins) and remove the work folder."""
    pins = {a: v for a, (_, v) in install.PINS.items()}
    path = write_result(name, {"conditions": conditions, "pins": pins, key: results})
    print(f"wrote {path}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


def loop() -> int:
    """Each reproduction of issue 46 (tests/agents_e2e/scenarios.py) once: its checks, passed or not."""
    bindir, work = prepare(None, "agents-e2e-loop")
    if bindir is None:
        return 2
    results = {}
    for name, scenario in SCENARIOS.items():
        root = work / name
        root.mkdir(parents=True)
        checks = scenario(bindir, root)
        results[name] = {check: {"passed": ok, "detail": detail} for check, (ok, detail) in checks.items()}
        passed = sum(ok for ok, _ in checks.values())
        print(f"{name:28} {passed}/{len(checks)} " + " ".join(c for c, (ok, _) in checks.items() if not ok))
    conditions = ("headless, fake model on 127.0.0.1 (a scripted shell command or three, then text), "
                  "configs from vaultmem setup --write, hooks wrapped by a recorder")  # fmt: skip
    return finish("agents-e2e-loop", conditions, "scenarios", results, work)


if __name__ == "__main__":
    sys.exit(main())
