"""One headless session of a real agent CLI against the fake model, in a throw-away home.

``Workspace`` lays out a temp HOME, a project (``tidewater``, a git repository), a vault with
three planted notes and the agent's configs written by ``vaultmem setup AGENT --write``; every
hook command in them is then wrapped by ``recorder.py``. ``run_session`` runs the agent once and
returns a ``Session``: what the fake model received, each hook's payload, answer and times, and
the notes in the vault afterwards."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agents_e2e.fake_model import FakeModel, Request
from agents_e2e.providers import DEFAULT, Script

HERE = Path(__file__).resolve().parent
RECORDER = HERE / "recorder.py"
VAULTMEM = Path(sys.executable).parent / "vaultmem"
PROMPT = "How does our Stripe webhook handler avoid processing the same event twice?"
PLANTED = "Stripe webhook idempotency"  # the note the prompt hook must recall
UNRELATED = "Marina slip sizes"  # a note it must not
PROJECT = "Project: Tidewater"  # the anchor the start block opens with
REMINDER = "Before you finish"  # the opening of vaultmem's Stop reminder
FILLER = [  # linked to the project: they fill its [MEMORY] block past 4,000 characters, as a real one
    (
        "architecture",
        "Slip booking flow",
        "A booking of a slip goes held, then paid, then confirmed; a held slip is released after 15 minutes without payment; the dock master sees every held slip on the dock board.",
    ),
    (
        "architecture",
        "Dock board",
        "The dock board shows each dock (A to D) with its slips, their length, beam and power, and who is moored at each slip tonight; it refreshes every 30 seconds.",
    ),
    (
        "decision",
        "Slip pricing per metre",
        "Slips are priced per metre of boat length per night, with a weekly rate at six nights; the marina sets the rates per season and per dock.",
    ),
    (
        "decision",
        "Seasonal slip contracts",
        "A seasonal contract holds one slip from April to October; it is paid in two instalments and renews unless the berth holder cancels by February.",
    ),
    (
        "decision",
        "Dock master app offline first",
        "The dock master app works offline on the pontoons and syncs moorings and arrivals when it is back on the marina wifi.",
    ),
    (
        "gotcha",
        "Tide tables change slip availability",
        "At low spring tides the shallow slips of dock D cannot take boats with a draught over 1.5 m; the booking form checks the tide table for the arrival date.",
    ),
    (
        "gotcha",
        "Beam limits on finger pontoons",
        "Finger pontoons limit the beam of a boat at each slip; a catamaran needs two adjacent slips or a hammerhead berth on dock A.",
    ),
    (
        "tech_context",
        "Tidewater stack",
        "Python 3.12, Starlette, SQLAlchemy, Postgres 16, HTMX for the dock board, deployed on two VMs behind Caddy; background jobs run on RQ with Redis.",
    ),
    (
        "architecture",
        "Arrivals and departures",
        "Arrivals are checked in by the dock master with the boat name, length, beam and draught; departures free the slip for the next booking at once.",
    ),
    (
        "decision",
        "Visitor moorings",
        "Visitors book a slip for one to seven nights; longer stays need a monthly contract; visitors pay the harbour dues with the slip.",
    ),
]
NOTES = [  # not linked to the project: found by recall only
    (
        "decision",
        PLANTED,
        "The Stripe webhook handler stores each event id in the processed_events table and skips an event id "
        "it has already seen, so a retried webhook never books a slip twice.",
    ),
    (
        "fact",
        UNRELATED,
        "Slips at the marina are 8 m, 10 m and 12 m long, with finger pontoons on docks A to C; the dock master "
        "assigns slips by boat length, beam and draught at the tide of arrival.",
    ),
]


@dataclass
class Workspace:
    """The temp folders of one session and the environment its agent runs in."""

    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def proj(self) -> Path:
        return self.root / "tidewater"

    @property
    def vault(self) -> Path:
        return self.root / "vault"

    @property
    def hooklog(self) -> Path:
        return self.root / "hooklog"

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        keep = ("PATH", "LANG", "LC_ALL", "TERM", "TZ", "SYSTEMROOT")
        env = {k: v for k, v in os.environ.items() if k in keep}
        env["PATH"] = os.pathsep.join([str(VAULTMEM.parent), env.get("PATH", "/usr/bin:/bin")])
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_STATE_HOME=str(self.home / ".local/state"),
            XDG_DATA_HOME=str(self.home / ".local/share"),
            XDG_RUNTIME_DIR=str(self.root / "run"),
            HF_HUB_OFFLINE="1",
            GIT_AUTHOR_NAME="E2E",
            GIT_AUTHOR_EMAIL="e2e@example.invalid",
            GIT_COMMITTER_NAME="E2E",
            GIT_COMMITTER_EMAIL="e2e@example.invalid",
            NO_COLOR="1",
            CI="",
        )
        env.pop("CI")
        env.update(extra or {})
        return env

    def vaultmem(self, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
        done = subprocess.run(
            [str(VAULTMEM), *args],
            cwd=cwd or self.proj,
            env=env or self.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(f"vaultmem {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def lay_out(self, agent: str, env: dict[str, str]) -> None:
        """Home, project, vault with the planted notes, and the agent's configs (setup --write)."""
        for d in (self.home, self.proj, self.hooklog, self.root / "run"):
            d.mkdir(parents=True, exist_ok=True)
        (self.root / "run").chmod(0o700)
        subprocess.run(["git", "init", "-q"], cwd=self.proj, check=True, env=env)
        (self.proj / "README.md").write_text("# Tidewater\n\nSlip bookings for small marinas.\n")
        self.vaultmem("init", str(self.vault), env=env)
        self.vaultmem(
            "remember",
            "project",
            PROJECT,
            "Tidewater is a web app for small marinas to manage slip bookings.",
            "--vault",
            str(self.vault),
            env=env,
        )
        for kind, title, body in FILLER:  # from inside the project: scoped to it, as an agent's would be
            self.vaultmem(
                "remember", kind, title, body, "--anchor", PROJECT, "--vault", str(self.vault), env=env
            )
        for kind, title, body in NOTES:  # from outside the project: notes of no project
            self.vaultmem("remember", kind, title, body, "--vault", str(self.vault), env=env, cwd=self.root)
        self.vaultmem("setup", agent, "--vault", str(self.vault), "--write", env=env)
        self.vaultmem("service", "stop", env=env)  # each session starts cold: its start hook starts it

    def wrap_hooks(self, config: Path) -> int:
        """Put the recorder in front of every vaultmem hook command of ``config``; returns how many."""
        data = json.loads(config.read_text())
        count = 0
        for event, entries in (data.get("hooks") or {}).items():
            count += _wrap(entries, event, self.hooklog)
        config.write_text(json.dumps(data, indent=2))
        return count


def _wrap(node: Any, event: str, logdir: Path) -> int:
    if isinstance(node, list):
        return sum(_wrap(n, event, logdir) for n in node)
    if not isinstance(node, dict):
        return 0
    count = 0
    for key in ("command", "bash"):
        cmd = node.get(key)
        if isinstance(cmd, str) and " hook " in cmd:
            node[key] = f"{sys.executable} {RECORDER} {logdir} {event} -- {cmd}"
            count += 1
    for key in ("hooks",):
        count += _wrap(node.get(key), event, logdir)
    return count


@dataclass
class Session:
    """What one headless session left behind."""

    agent: str
    version: str
    rc: int
    stdout: str
    stderr: str
    seconds: float
    requests: list[Request]
    hooks: list[dict]
    notes: list[dict]
    root: Path
    extra: dict = field(default_factory=dict)

    def model_texts(self) -> list[str]:
        """Each model call's body as one string (every string in it, joined)."""
        return ["\n".join(_strings(r.body)) for r in self.requests if r.body]

    def hook(self, event: str) -> list[dict]:
        return [h for h in self.hooks if h["vaultmem"] == event]

    def notes_of(self, kind: str) -> list[dict]:
        return [n for n in self.notes if n.get("type") == kind]


def _strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []


def read_hooks(logdir: Path) -> list[dict]:
    """The recorder's records, oldest first, each with its vaultmem hook name and payload parsed."""
    out = []
    for path in sorted(logdir.glob("*.json"), key=lambda p: int(p.name.split("-")[0])):
        rec = json.loads(path.read_text())
        words = rec["command"].split()
        rec["vaultmem"] = words[words.index("hook") + 1] if "hook" in words else "?"
        try:
            rec["payload"] = json.loads(rec["stdin"]) if rec["stdin"].strip() else None
        except ValueError:
            rec["payload"] = None
        rec["seconds"] = rec["end"] - rec["start"] if "end" in rec else None
        rec["pid"] = int(path.name.split("-")[1])
        out.append(rec)
    return out


def read_notes(vault: Path) -> list[dict]:
    """Every note of the vault: its frontmatter, plus ``body`` and ``path``."""
    notes = []
    for path in vault.rglob("*.md"):
        if any(part.startswith(".") for part in path.relative_to(vault).parts) or path.name == "README.md":
            continue
        text = path.read_text()
        meta: dict = {}
        if text.startswith("---"):
            _, head, text = text.split("---", 2)
            meta = yaml.safe_load(head) or {}
        notes.append({**meta, "body": text, "path": str(path.relative_to(vault))})
    return notes


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return Path(f"/proc/{pid}").exists() and "zombie" not in _state(pid)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split("\n")[0].lower()
    except (OSError, IndexError):
        return ""


def wait_for(check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.25)
    return check()


PROMPT2 = "Which table records the Stripe events we already processed?"


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    try:
        done = subprocess.run(
            argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL
        )
        return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as e:
        return -9, str(e.stdout or ""), str(e.stderr or "")


def _settled(ws: Workspace, summaries: int) -> Callable[[], bool]:
    def check() -> bool:  # every hook ended (or was killed) and each ended end hook wrote its summary
        hooks = read_hooks(ws.hooklog)
        ended = all("end" in h or not _alive(h["pid"]) for h in hooks)
        ends = [h for h in hooks if h["vaultmem"] == "end" and h.get("rc") == 0]
        written = sum(n.get("type") == "session_summary" for n in read_notes(ws.vault))
        return ended and written >= min(len(ends), summaries)

    return check


def run_session(
    agent: str,
    spec: Any,
    bindir: Path,
    root: Path,
    extra_env: dict[str, str] | None = None,
    settle: float = 30.0,
    then: str | None = None,
    script: Script = DEFAULT,
    prompt: str = PROMPT,
    prepare: Callable[[Workspace], None] | None = None,
    keep_service: bool = False,
    folder: str | None = None,
) -> Session:
    """Lay out, run the agent once headless, wait for the detached summary, stop the service.

    ``then="again"``: a second session 5 s later (``PROMPT2``) in the same project;
    ``then="same"``: a second session with the same prompt; ``then="fork"``: a fork of the
    first session (``spec.fork``). ``script``: what the fake model does; ``prepare``: more
    set-up after the layout (another project, another agent's hooks); ``keep_service``: the
    memory service is left running (the caller stops it); ``folder``: where the agent runs
    (a folder under the root; default the project)."""
    ws = Workspace(root)
    ws.lay_out(agent, ws.env())  # with the service (remember is quick), stopped at the end
    if prepare is not None:
        prepare(ws)
    env = ws.env(extra_env)
    with FakeModel(script) as fm:
        for config in spec.configs(ws):
            ws.wrap_hooks(config)
        argv, agent_env = spec.command(ws, bindir, fm.url, prompt.replace("{url}", fm.url))
        run_env = {**env, **agent_env}
        where = root / folder if folder else ws.proj
        started = time.monotonic()
        rc, out, err = _run(argv, where, run_env)
        seconds = time.monotonic() - started
        wait_for(_settled(ws, 1), settle)
        time.sleep(3)  # a late second write of the summary (seen with Codex) is counted too
        extra: dict = {}
        if then:
            first = (
                next((h["payload"] for h in read_hooks(ws.hooklog) if h["vaultmem"] == "start"), None) or {}
            )
            sid = first.get("session_id") or first.get("sessionId") or ""
            if then in ("again", "same"):
                time.sleep(5)
                argv2, _ = spec.command(ws, bindir, fm.url, PROMPT2 if then == "again" else prompt)
            else:
                argv2 = spec.fork(ws, bindir, fm.url, PROMPT2, sid)
            extra["second"] = _run(argv2, where, run_env)
            extra["first_session_id"] = sid
            wait_for(_settled(ws, 2), settle)
        requests = list(fm.requests)
    hooks = read_hooks(ws.hooklog)
    notes = read_notes(ws.vault)
    if not keep_service:
        subprocess.run([str(VAULTMEM), "service", "stop"], env=env, capture_output=True, timeout=60)
    return Session(agent, spec.version, rc, out, err, seconds, requests, hooks, notes, root, extra)


def stop_services(ws: Workspace) -> None:
    """Stop this home's memory services, one a late call may have started too (never leaves one)."""
    for _ in range(3):
        subprocess.run([str(VAULTMEM), "service", "stop"], env=ws.env(), capture_output=True, timeout=60)
        if wait_for(lambda: not services(ws.home), 5):
            return
    for pid in services(ws.home):
        os.kill(pid, 15)


def services(home: Path) -> list[int]:
    """The pids of the memory services running for this HOME (whatever runtime folder)."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            env = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"service" in argv and b"run" in argv and b"HOME=" + str(home).encode() in env:
            out.append(int(proc.name))
    return out


def clean(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)
