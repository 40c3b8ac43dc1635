"""The vault config's ``[agents_md]`` section: ``vaultmem maintain --apply`` and ``vaultmem sync``
refresh the vaultmem section of the files it names inside the vault, and of the files outside it
that this machine keeps (``export --to agents-md FILE --keep``; issue 28, "the other direction";
issue 39: a synced config never names where vaultmem writes outside the vault), through the
console entry (in this process: files are all these tests look at; the sync tests run it in a
subprocess). Off by default: no file is written unless one is named."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from gitcluster import Cluster
from helpers import Done, vaultmem

HEAD, TAIL = "# Shop\n\nHand-written intro.\n", "\n## Setup\n- `uv sync`\n"
NOTE = "---\nid: {id}\ntitle: '{title}'\ntype: {type}\nstatus: active\nimportance: {imp}\n{extra}---\n# {title}\n\n{body}\n"


def _note(root: Path, rel: str, id_: str, title: str, type_: str, imp: int = 6, extra: str = "",
          body: str = "Text.") -> None:  # fmt: skip
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        NOTE.format(id=id_, title=title, type=type_, imp=imp, extra=extra, body=body), encoding="utf-8"
    )


def _keep(root: Path, *files: Path, keep: bool = True) -> None:
    """This machine refreshes ``files`` for the vault (as ``export --to agents-md FILE --keep``
    records them, without writing them now)."""
    from vaultmem.memory.agents_md import keep as keep_file

    for f in files:
        keep_file(root, str(f), keep)


def _configure(root: Path, **values: str) -> None:
    """Uncomment the ``[agents_md]`` keys of the config `vaultmem init` wrote, with these values."""
    cfg = root / ".vaultmem.toml"
    text = cfg.read_text(encoding="utf-8")
    for key, value in values.items():
        line = next((ln for ln in text.splitlines() if ln.startswith((f"# {key} = ", f"{key} = "))), None)
        if line is None:  # a config written before the section existed: [agents_md] is its last table
            text += ("" if "\n[agents_md]\n" in text else "\n[agents_md]\n") + f"{key} = {value}\n"
        else:
            text = text.replace(line, f"{key} = {value}", 1)
    cfg.write_text(text, encoding="utf-8")


@pytest.fixture
def shop(tmp_path, capsys, monkeypatch):
    """A vault (vectors off) with a project, its lesson and key decision, and a user preference;
    beside it the project folder ``shop/`` with a hand-written AGENTS.md."""
    root = tmp_path / "vault"
    assert vaultmem(capsys, "init", str(root)).returncode == 0
    _configure(root, model='"none"')
    _note(root, "projects/Project - Shop.md", "proj0001", "Project: Shop", "project", 8)
    _note(root, "lessons/Stripe retries.md", "less0001", "Stripe retries webhooks for three days", "lesson",
          extra="anchor: '[[Project: Shop]]'\n")  # fmt: skip
    _note(root, "decisions/Postgres.md", "deci0001", "Postgres over MySQL", "decision", 8,
          extra="anchor: '[[Project: Shop]]'\n")  # fmt: skip
    _note(root, "preferences/Cents.md", "pref0001", "Always use integer cents for money", "preference",
          extra="scope: user\n")  # fmt: skip
    project = tmp_path / "shop"
    project.mkdir()
    (project / "AGENTS.md").write_text(HEAD + TAIL, encoding="utf-8")

    monkeypatch.chdir(tmp_path)

    def vm(*args: str) -> Done:
        return vaultmem(capsys, *args, "--vault", str(root))

    return root, project / "AGENTS.md", vm


def _ok(proc: Done | subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def test_by_default_maintain_writes_no_file(shop):
    root, agents, vm = shop
    before = agents.read_bytes()
    result = json.loads(_ok(vm("maintain", "--apply", "--json")))
    assert result["agents_md"] == []
    assert "agents-md" not in _ok(vm("maintain", "--apply"))
    assert agents.read_bytes() == before and not (root / "AGENTS.md").exists()


def test_maintain_lists_then_refreshes_the_configured_file_once(shop):
    root, agents, vm = shop
    _keep(root, agents)
    _configure(root, anchor='"Project: Shop"')
    plan = _ok(vm("maintain"))
    assert f"agents-md would update {agents} (" in plan and "run with --apply" in plan
    assert agents.read_text() == HEAD + TAIL  # the plan writes nothing
    out = _ok(vm("maintain", "--apply"))
    assert f"agents-md updated {agents} (1 preference, 1 lesson, 1 decision; anchor: Project: Shop)" in out
    text = agents.read_text()
    assert text.startswith(HEAD + TAIL + "\n<!-- vaultmem:begin -->") and text.endswith(
        "<!-- vaultmem:end -->\n"
    )
    assert "- Stripe retries webhooks for three days" in text and "- Postgres over MySQL" in text
    stamp = agents.stat().st_mtime_ns
    again = json.loads(_ok(vm("maintain", "--apply", "--json")))
    assert [(f["file"], f["changed"]) for f in again["agents_md"]] == [(str(agents), False)]
    assert agents.read_text() == text and agents.stat().st_mtime_ns == stamp  # not rewritten
    _note(root, "lessons/Idempotent.md", "less0002", "Webhook handlers must be idempotent", "lesson",
          extra="anchor: '[[Project: Shop]]'\n")  # fmt: skip
    _ok(vm("maintain", "--apply"))
    assert "- Webhook handlers must be idempotent" in agents.read_text()


def test_a_symlink_within_its_folder_is_written_through(shop):
    """CLAUDE.md -> AGENTS.md: the section lands in AGENTS.md and the link stays a link; the
    anchor defaults to the project named like the file's folder."""
    root, agents, vm = shop
    (agents.parent / "CLAUDE.md").symlink_to("AGENTS.md")
    _keep(root, agents.parent / "CLAUDE.md")
    _configure(root, refresh_on='["maintain"]')
    _ok(vm("maintain", "--apply"))
    assert (agents.parent / "CLAUDE.md").is_symlink()
    assert "## Memory from vaultmem (Project: Shop)" in agents.read_text()


def test_broken_markers_stop_maintain_before_anything_changes(shop):
    """The aging rules are not applied either: maintain --apply does all of it or nothing."""
    root, agents, vm = shop
    _note(root, "facts/Old.md", "fact0001", "An expired fact", "fact", extra="expires: 2020-01-01\n")
    agents.write_text("<!-- vaultmem:end -->\nx\n<!-- vaultmem:begin -->\n")
    _keep(root, agents)
    before = _files(root.parent)
    proc = vm("maintain", "--apply")
    assert proc.returncode != 0 and proc.stderr.count("\n") == 1 and "markers are broken" in proc.stderr, (
        proc.stderr
    )
    assert _files(root.parent) == before
    _keep(root, agents, keep=False)
    assert (
        "archive" in _ok(vm("maintain", "--apply"))
        and "status: archived" in (root / "facts/Old.md").read_text()
    )


def _leaving_link(root: Path) -> str:
    (root.parent / "elsewhere.md").write_text("not yours\n")
    (root / "CLAUDE.md").symlink_to(root.parent / "elsewhere.md")
    return '["CLAUDE.md"]'


def _files(folder: Path) -> dict[Path, bytes]:
    """Every file below ``folder`` but the vault's derived state, with its bytes."""
    derived = {".vaultmem", ".vaultmem-usage"}
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and not derived & set(p.parts)}


BAD = [
    ({"refresh_on": '["weekly"]'}, "agents_md.refresh_on"),
    ({"files": '"AGENTS.md"'}, "agents_md.files"),
    ({"files": "[1]"}, "agents_md.files"),
    ({"anchor": "3"}, "agents_md.anchor"),
    ({"files": '["nowhere/AGENTS.md"]'}, "agents_md.files"),
    ({"files": '[""]'}, "agents_md.files"),
    ({"files": '["sub/.git/AGENTS.md"]'}, "agents_md.files"),
    ({"files": _leaving_link}, "agents_md.files"),
]


@pytest.mark.parametrize("values,key", BAD, ids=[f"{k}-{i}" for i, (_, k) in enumerate(BAD)])
def test_a_bad_value_or_path_is_a_one_line_error_naming_the_key(shop, values, key):
    root, agents, vm = shop
    (root / "sub" / ".git").mkdir(parents=True)
    values = {k: v(root) if callable(v) else v for k, v in values.items()}
    _configure(root, **({"files": '["AGENTS.md"]'} | values))
    before = _files(root.parent)
    proc = vm("maintain", "--apply")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert len(lines) == 1 and key in lines[0] and ".vaultmem.toml" in lines[0], proc.stderr
    assert _files(root.parent) == before  # nothing written: not the file, not a note


def test_a_config_entry_outside_the_vault_is_skipped_and_said(shop):
    """The config is synced: an entry outside the vault is a warning naming the command that
    keeps it on this machine; the file inside the vault is still refreshed."""
    root, agents, vm = shop
    _configure(root, files='["../shop/AGENTS.md", "AGENTS.md"]')
    proc = vm("maintain", "--apply")
    out = _ok(proc)
    assert agents.read_text() == HEAD + TAIL
    assert "is outside the vault" in proc.stderr and "--keep" in proc.stderr
    assert f"agents-md updated {root / 'AGENTS.md'}" in out


@pytest.mark.integration  # `vaultmem sync` in subprocesses
def test_sync_refreshes_the_file_with_what_the_pull_brought(tmp_path):
    """A teammate's preference arrives by `vaultmem sync`, which then refreshes AGENTS.md; a second
    sync leaves it alone; a bad value is reported after the sync's own report."""
    c = Cluster(tmp_path)
    laptop = c.first("laptop")
    desk = c.clone("desk")
    _note(desk, "projects/Project - Shop.md", "proj0001", "Project: Shop", "project", 8)
    _note(desk, "preferences/Cents.md", "pref0001", "Always use integer cents for money", "preference",
          extra="anchor: '[[Project: Shop]]'\n")  # fmt: skip
    c.vm("desk", "sync", real=True)
    project = tmp_path / "shop"
    project.mkdir()
    (project / "AGENTS.md").write_text(HEAD + TAIL)
    _keep(laptop, project / "AGENTS.md")
    _configure(laptop, refresh_on='["sync"]')
    assert "agents-md" not in c.vm("laptop", "maintain", "--apply", real=True).stdout  # only on sync
    assert (project / "AGENTS.md").read_text() == HEAD + TAIL
    out = c.vm("laptop", "sync", real=True).stdout
    assert "in: added preferences/Cents.md" in out
    assert (
        f"agents-md updated {project / 'AGENTS.md'} (1 preference, 0 lesson, 0 decision; anchor: Project: Shop)"
        in out
    )
    text = (project / "AGENTS.md").read_text()
    assert (
        text.startswith(HEAD + TAIL + "\n<!-- vaultmem:begin -->")
        and "- Always use integer cents for money" in text
    )
    again = json.loads(c.vm("laptop", "sync", "--json", real=True).stdout)
    assert [(f["file"], f["changed"]) for f in again["agents_md"]] == [(str(project / "AGENTS.md"), False)]
    assert (project / "AGENTS.md").read_text() == text
    _configure(laptop, refresh_on='["nightly"]')
    proc = c.vm("laptop", "sync", real=True, check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode != 0 and len(lines) == 1 and "agents_md.refresh_on" in lines[0], proc.stderr
    assert "committed" in proc.stdout or "pushed" in proc.stdout  # the sync itself was done and said
