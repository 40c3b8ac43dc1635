"""Project scope (issue 36): of the memories the agent is shown in a project, the share that
belong to that project or to the user.

A synthetic vault of several projects (one folder each under /home/dev/src/), written the way
vaultmem is used: decisions, facts, gotchas and architecture notes remembered with `--anchor
"Project: <folder>"`, two Claude Code sessions per project imported (session summaries and the
rules the user stated, as candidates), and the user's preferences. The topics overlap on purpose
(every project deploys, tests, caches, logs and has a database). Then, for each project, the
start hook (the wake block for the project found from the folder) and the prompt hook for six
prompts asked in that folder, both as the agent runs them (`hooks.start_hook`, `hook_io.prompt`
with the payload on stdin), with the real model. A shown memory belongs to a project by how it
was written (not by what the vault says), so the figure is the same measure for any version.

    python benchmarks/project_scope.py --label after
    python /path/to/runner-for-main benchmarks/project_scope.py --label before   # paired: main's code

Results go to benchmarks/results/project-scope.json under the label (other labels are kept).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("VAULTMEM_NO_SERVICE", "1")  # everything in this process, the same for both versions

from benchmarks.common import RESULTS, WORK, parser, write_result

PROJECTS: dict[str, dict] = {
    "shop": {
        "memories": [
            (
                "decision",
                "Deploy the shop with GitHub Actions to Fly.io",
                "Every merge to main deploys the shop.",
            ),
            (
                "decision",
                "Use Postgres for the shop database",
                "Migrations run with Django's migrate on deploy.",
            ),
            (
                "gotcha",
                "Shop tests need the Stripe mock running",
                "Start stripe-mock before pytest or checkout tests fail.",
            ),
            ("fact", "Shop cache is Redis with a 5 minute TTL", "Product pages are cached for five minutes."),
            (
                "architecture",
                "Shop checkout goes through the order service",
                "The cart posts to the order service.",
            ),
            ("decision", "Shop logs go to Loki", "Structured JSON logs, shipped by promtail."),
        ],
        "sessions": [
            (
                "Fix the failing checkout tests in the shop.",
                "Remember that the shop staging deploy needs a manual approval.",
            ),
            ("Add caching to the product page of the shop.", None),
        ],
    },
    "infra": {
        "memories": [
            (
                "decision",
                "Deploy infra changes with terraform apply from CI only",
                "Nobody applies from a laptop.",
            ),
            (
                "gotcha",
                "Terraform state lock stays after a killed CI apply",
                "Run terraform force-unlock with the lock id.",
            ),
            (
                "fact",
                "Infra database backups run nightly at 2am",
                "Postgres base backups go to object storage.",
            ),
            ("decision", "Use a Redis cluster for the shared cache", "Three nodes, one per zone."),
            (
                "architecture",
                "Infra network has one VPC per environment",
                "Peering only between staging and prod tools.",
            ),
            ("fact", "CI runners are self-hosted on Hetzner", "Four runners, autoscaled by queue length."),
        ],
        "sessions": [
            (
                "Add a staging environment to the terraform modules.",
                "Remember that terraform plans must be reviewed in the PR.",
            ),
            ("Why did the CI apply fail last night?", None),
        ],
    },
    "myapp": {
        "memories": [
            (
                "decision",
                "Deploy the myapp API as a single Go binary with systemd",
                "Copied by Ansible, restarted by systemd.",
            ),
            (
                "decision",
                "Use SQLite for the myapp local database",
                "Migrations are embedded and run at start.",
            ),
            (
                "gotcha",
                "MyApp tests flake when the emulator is cold",
                "Boot the emulator before the test run.",
            ),
            ("fact", "MyApp caches images on disk for 7 days", "The cache folder is cleared on logout."),
            ("architecture", "MyApp sync protocol uses CRDTs", "Offline edits merge without conflicts."),
            (
                "decision",
                "MyApp logs are shipped with Vector",
                "Logs go to the same bucket as crash reports.",
            ),
        ],
        "sessions": [
            ("Make the myapp image cache smaller.", "Remember that myapp releases need a changelog entry."),
            ("Debug the sync conflict in myapp.", None),
        ],
    },
    "billing": {
        "memories": [
            (
                "decision",
                "Deploy billing with a blue-green switch",
                "The router flips after health checks pass.",
            ),
            (
                "decision",
                "Billing database migrations run before deploy",
                "A migration job runs in CI before the switch.",
            ),
            (
                "gotcha",
                "Billing tests must freeze time at month end",
                "Use freezegun for invoice period tests.",
            ),
            (
                "fact",
                "Billing cache is invalidated on every invoice",
                "Cached totals are dropped when an invoice posts.",
            ),
            ("architecture", "Billing queue processes invoices with Celery", "One worker pool per currency."),
            ("decision", "Billing logs are kept 90 days for audit", "Logs are shipped to the audit bucket."),
        ],
        "sessions": [
            (
                "Add proration to the billing invoices.",
                "Remember that billing changes need a finance sign-off.",
            ),
            ("Why are the billing tests failing at month end?", None),
        ],
    },
}
USER = [
    ("preference", "Prefer short commit messages", "One line, imperative mood."),
    ("preference", "Explain shell commands before running them", "Say what a command does first."),
    ("preference", "Use British spelling in docs", "Colour, organise, licence."),
]
PROMPTS = [
    "how do we deploy this?",
    "the tests are failing, what do I need running first?",
    "which database do we use and how are migrations run?",
    "how long are things cached here?",
    "where do the logs go?",
    "where did we leave off last session?",
]
ID_RE = re.compile(r"^- \[([^\]]+)\]", re.M)


def transcript(folder: Path, project: str, n: int, request: str, rule: str | None) -> None:
    """One finished Claude Code session in /home/dev/src/<project>."""
    cwd = f"/home/dev/src/{project}"
    sid = f"{list(PROJECTS).index(project):08d}-0000-4000-8000-{n:012d}"
    said = [request, *([rule] if rule else [])]
    rows, parent, t = [], None, 0
    for i, text in enumerate(said):
        for role, content in (
            ("user", text),
            ("assistant", [{"type": "text", "text": f"Done: {text.lower()}"}]),
        ):
            uid = f"{role[0]}{i}"
            rows.append({"type": role, "cwd": cwd, "sessionId": sid, "uuid": uid, "parentUuid": parent,
                         "timestamp": f"2026-03-0{n}T10:{t:02d}:00.000Z", "message": {"role": role, "content": content}})  # fmt: skip
            parent, t = uid, t + 1
    path = folder / ("-" + cwd.strip("/").replace("/", "-")) / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    old = time.time() - 3600
    os.utime(path, (old, old))


def build(root: Path) -> dict[str, str]:
    """Write the vault; returns the owner of each note (path -> project or "user")."""
    from vaultmem.agents.importers import import_from
    from vaultmem.core.scaffold import init_vault
    from vaultmem.vault import Vault

    shutil.rmtree(root.parent, ignore_errors=True)
    init_vault(root)
    owner: dict[str, str] = {}
    history = root.parent / "claude"
    with Vault(root) as v:
        for project, spec in PROJECTS.items():
            for type_, title, text in spec["memories"]:
                r = v.remember(type_, title, text, anchor=f"Project: {project}")
                owner[r["path"]] = project
                if r["created_anchor"]:
                    owner[r["created_anchor"]] = project
            for n, (request, rule) in enumerate(spec["sessions"], 1):
                transcript(history, project, n, request, rule)
        for type_, title, text in USER:
            owner[v.remember(type_, title, text, scope="user")["path"]] = "user"
        report = import_from(v, "claude-code", [str(history)])
        rules = {rule: p for p, spec in PROJECTS.items() for _, rule in spec["sessions"] if rule}
        for w in report["written"]:
            owner[w["path"]] = (w["anchor"] or "").removeprefix("Project: ")
        for row in report["candidates"]:
            body = (root / row["path"]).read_text(encoding="utf-8")
            owner[row["path"]] = next((p for rule, p in rules.items() if rule.rstrip(".") in body), "?")
    return owner


def shown_ids(text: str | None) -> list[str]:
    return ID_RE.findall(text or "")


def run(root: Path, owner: dict[str, str]) -> dict:
    from vaultmem import api
    from vaultmem.agents import hook_io, hooks
    from vaultmem.memory.projects import find_anchor
    from vaultmem.vault import Vault

    with Vault(root) as v:
        path_of = {r.key: r.path for r in v.records().values()}
    rows = []
    for project in PROJECTS:
        cwd = f"/home/dev/src/{project}"
        with api.Session([str(root)], cwd=cwd) as session:
            vault = session.fresh()
            payload = {"session_id": f"start-{project}", "cwd": cwd, "hook_event_name": "SessionStart"}
            out = hooks.start_hook(vault, payload, None, 2000, shown=session.shown())
            anchor = find_anchor(vault, cwd)
        text = out["hookSpecificOutput"]["additionalContext"] if out else ""
        rows.append({"hook": "start", "project": project, "anchor": anchor, "ids": shown_ids(text)})
        for i, prompt in enumerate(PROMPTS):
            payload = {"session_id": f"p-{project}-{i}", "cwd": cwd, "hook_event_name": "UserPromptSubmit",
                       "prompt": prompt, "transcript_path": ""}  # fmt: skip
            sys.stdin = io.StringIO(json.dumps(payload))
            out = hook_io.prompt(str(root), 400, "claude")
            text = out["hookSpecificOutput"]["additionalContext"] if out else ""
            rows.append({"hook": "prompt", "project": project, "prompt": prompt, "ids": shown_ids(text)})
    for row in rows:
        owners = [owner.get(path_of.get(i, ""), "?") for i in row["ids"]]
        row["owners"] = owners
        row["ours"] = sum(o in (row["project"], "user") for o in owners)
    return {"rows": rows, **summary(rows)}


def share(rows: list[dict]) -> dict:
    shown = sum(len(r["ids"]) for r in rows)
    ours = sum(r["ours"] for r in rows)
    return {"shown": shown, "ours": ours, "share": round(ours / shown, 4) if shown else None}


def summary(rows: list[dict]) -> dict:
    out = {"all": share(rows), "start": share([r for r in rows if r["hook"] == "start"]),
           "prompt": share([r for r in rows if r["hook"] == "prompt"])}  # fmt: skip
    out["by_project"] = {p: share([r for r in rows if r["project"] == p]) for p in PROJECTS}
    out["leaks"] = sorted(
        {(r["project"], o) for r in rows for o in r["owners"] if o not in (r["project"], "user")}
    )
    return out


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--label", default="after", help="the key the results are stored under (before / after)")
    ap.add_argument("--other-cos", type=float, default=None,
                    help="the bar another project's memory must clear in the prompt hook (default: the code's)")  # fmt: skip
    args = ap.parse_args()
    if args.other_cos is not None:
        from vaultmem.memory import projects

        projects.OTHER_PROJECT_COS = args.other_cos
    root = WORK / f"project-scope-{args.label}" / "vault"
    import vaultmem
    from vaultmem.index.embed import make_embedder

    shared = make_embedder("sentence-transformers/all-MiniLM-L6-v2")  # one model for every Vault opened
    import vaultmem.vault as vaultmod

    vaultmod.make_embedder = lambda *a, **k: shared
    owner = build(root)
    result = run(root, owner)
    result["code"] = str(Path(vaultmem.__file__).parent.parent)
    try:
        from vaultmem.memory.projects import OTHER_PROJECT_COS

        result["other_project_cos"] = OTHER_PROJECT_COS
    except ImportError:  # main before issue 36: no project rule
        result["other_project_cos"] = None
    path = RESULTS / "project-scope.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data = {k: v for k, v in data.items() if k not in ("benchmark", "date", "machine")}
    data[args.label] = {
        "projects": len(PROJECTS),
        "prompts_per_project": len(PROMPTS),
        "notes": len(owner),
        **result,
    }
    write_result("project-scope", data)
    print(json.dumps({k: {m: v.get(m) for m in ("all", "start", "prompt", "leaks")} for k, v in data.items()
                      if isinstance(v, dict) and "all" in v}, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
