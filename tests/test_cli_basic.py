"""The first CLI commands through typer's CliRunner (with the small test embedder), each on
both backends (``conftest.backend``): in process and through a real memory service.

In the installed click, CliRunner keeps stderr apart: ``result.stdout`` and ``result.stderr``
are separate and ``result.output`` is both, interleaved.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from helpers import failed
from typer.testing import CliRunner

from vaultmem.cli.app import app

ADVISORY = "decisions/Use Postgres advisory locks for job leasing.md"


@pytest.fixture
def run(empty_vault, fake_model, backend):
    """Run vaultmem with VAULTMEM_VAULT set to a fresh vault (and the small test embedder), in
    this process and through the memory service (``backend``)."""

    def invoke(*args: str, input: str | None = None, vault: Path | None = empty_vault):
        env = {"VAULTMEM_VAULT": str(vault)} if vault else {}
        return CliRunner().invoke(app, list(args), input=input, env=env)

    return invoke


def ok(result) -> str:
    assert result.exit_code == 0, result.output
    assert result.exception is None
    return result.stdout


def remember(run, *args: str) -> dict:
    return json.loads(ok(run("remember", *args, "--json")))


# ------------------------------------------------------------------ happy paths


def test_init_then_again(tmp_path, run):
    target = tmp_path / "fresh"
    out = ok(run("init", str(target), vault=None))
    assert "created .vaultmem.toml" in out and "vault ready" in out
    assert (target / ".vaultmem.toml").is_file()
    assert "already a vault" in ok(run("init", str(target), vault=None))


def test_remember_prints_id_and_path(run, empty_vault):
    out = ok(run("remember", "decision", "Use SQLite", "Because.", "--tag", "db", "--importance", "high"))
    first, undo = out.rstrip("\n").split("\n")
    note_id, path = first.split("  ")
    assert undo == f"undo: vaultmem delete --force {note_id}"
    assert path == "decisions/Use SQLite.md" and len(note_id) == 8
    assert "Because." in (empty_vault / path).read_text()


def test_remember_reads_content_from_stdin_and_prints_json(run, empty_vault):
    result = run("remember", "fact", "From stdin", "-", "--link", "Other", "--anchor", "Project: X", "--json",
                 input="piped text\n")  # fmt: skip
    data = json.loads(ok(result))
    assert set(data) == {
        "id",
        "path",
        "title",
        "type",
        "created_anchor",
        "duplicate_of",
        "superseded",
        "possible_updates",
    }
    assert data["created_anchor"] == "projects/Project - X.md"
    text = (empty_vault / data["path"]).read_text()
    assert "---\npiped text\n" in text and "Related: [[Other]]" in text


def test_remember_without_content_uses_the_template(run, empty_vault):
    data = remember(run, "fact", "Templated")
    assert "## Source" in (empty_vault / data["path"]).read_text()


def test_show_by_id_and_title(run):
    data = remember(run, "lesson", "Run migrations twice", "Always.")
    out = ok(run("show", data["id"]))
    assert out.startswith(f"# {data['path']}  (id {data['id']})") and "Always." in out
    shown = json.loads(ok(run("show", "Run migrations twice", "--json")))
    assert shown["id"] == data["id"] and shown["type"] == "lesson" and "Always." in shown["text"]


def test_list_json_and_text(run):
    a = remember(run, "fact", "First", "x")
    b = remember(run, "decision", "Second", "y")
    rows = json.loads(ok(run("list", "--json")))
    assert {r["id"] for r in rows} == {a["id"], b["id"]}
    assert [r["id"] for r in json.loads(ok(run("list", "--type", "decision", "--json")))] == [b["id"]]
    text = ok(run("list", "--type", "fact"))
    assert a["id"] in text and "First" in text and "Second" not in text


def test_list_with_no_match_says_so_on_stderr(run):
    result = run("list", "--type", "decision")
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr == "vaultmem: no memories match\n"


def test_edit_set_and_add_tag(run, empty_vault):
    data = remember(run, "fact", "Editable", "x")
    assert (
        ok(run("edit", data["id"], "--set", "importance=8", "--add-tag", "pg")).splitlines()[0]
        == f"updated {data['path']}"
    )
    shown = json.loads(ok(run("show", data["id"], "--json")))
    assert shown["importance"] == 8 and "pg" in shown["tags"]


def test_edit_content_from_stdin(run, empty_vault):
    data = remember(run, "fact", "Editable", "old")
    result = json.loads(ok(run("edit", data["id"], "--content", "-", "--json", input="new body\n")))
    assert result["changed"] is True
    assert (empty_vault / data["path"]).read_text().endswith("---\nnew body\n")


def test_delete_with_force(run, empty_vault):
    data = remember(run, "fact", "Doomed", "x")
    assert ok(run("delete", data["id"], "--force")) == (
        f"moved {data['path']} to .trash/{data['path']}\nundo: vaultmem restore {shlex.quote('.trash/' + data['path'])}\n"
    )
    assert (empty_vault / ".trash" / data["path"]).is_file()


def test_delete_without_force_refuses_when_not_a_tty(run, empty_vault):
    data = remember(run, "fact", "Kept", "x")
    line = failed(run("delete", data["id"]))
    assert "--force" in line
    assert (empty_vault / data["path"]).is_file()


def test_stats(run):
    remember(run, "fact", "A", "x")
    remember(run, "fact", "B", "x", "--importance", "9")
    data = json.loads(ok(run("stats", "--json")))
    assert data["notes"] == 2 and data["by_type"] == {"fact": 2} and data["by_importance"] == {"9": 1, "5": 1}
    assert "notes: 2" in ok(run("stats"))


def test_export_import_round_trip(run, demo_copy, tmp_path, empty_vault):
    exported = ok(run("export", vault=demo_copy))
    backup = tmp_path / "backup.json"
    backup.write_text(exported, encoding="utf-8")
    count = len(json.loads(exported)["notes"])
    assert ok(run("import", str(backup))).splitlines()[0] == f"imported {count}, skipped 0 already present"
    assert (empty_vault / ADVISORY).read_bytes() == (demo_copy / ADVISORY).read_bytes()
    again = json.loads(ok(run("import", "-", "--json", input=exported)))
    assert (again["imported"], again["skipped_existing"]) == (0, count)


def test_vault_option_beats_discovery(run, demo_copy):
    out = ok(run("show", "yx66znwj", "--vault", str(demo_copy), vault=None))
    assert ADVISORY in out


def test_vault_found_by_walking_up(run, empty_vault, monkeypatch):
    data = remember(run, "fact", "Here", "x")
    (empty_vault / "facts" / "deeper").mkdir()
    monkeypatch.chdir(empty_vault / "facts" / "deeper")
    assert data["id"] in ok(run("show", data["id"], vault=None))


# ------------------------------------------------------------------ errors: one line, no traceback


@pytest.mark.parametrize(
    "args, code, words",
    [
        (["show", "zzzzzzzz"], 3, "no note 'zzzzzzzz'"),
        (["edit", "zzzzzzzz", "--set", "a=1"], 3, "no note"),
        (["delete", "zzzzzzzz", "--force"], 3, "no note"),
        (["remember", "nonsense", "Title"], 2, "unknown type 'nonsense'; known types: "),
        (["remember", "fact", "T", "--importance", "11"], 2, "--importance"),
        (["list", "--since", "yesterday"], 2, "--since"),
        (["list", "--importance", "huge"], 2, "--importance"),
        (["list", "--scope", "team"], 2, "--scope"),
    ],
)
def test_error_paths(run, args, code, words):
    assert words in failed(run(*args), code)


def test_bad_set(run):
    data = remember(run, "fact", "T", "x")
    assert "--set" in failed(run("edit", data["id"], "--set", "no-equals-sign"), 2)
    assert "id" in failed(run("edit", data["id"], "--set", "id=other"), 2)


def test_no_vault_found(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert "no vault found" in failed(run("list", vault=None), 2)
    assert "no vault folder" in failed(run("list", vault=tmp_path / "missing"), 2)


@pytest.mark.parametrize(
    "content, words",
    [("not json {", "bad.json is not JSON"), ("[1, 2]", "not a vaultmem export"),
     ('{"format": "vaultmem-export/1", "notes": [3]}', "export entry is not a note")],
)  # fmt: skip
def test_import_of_a_bad_file(run, tmp_path, content, words):
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    assert words in failed(run("import", str(bad)), 2)


def test_import_of_a_missing_file(run, tmp_path):
    assert "cannot read" in failed(run("import", str(tmp_path / "missing.json")), 2)


def test_import_with_path_traversal(run, tmp_path):
    bad = tmp_path / "evil.json"
    bad.write_text(
        json.dumps({"format": "vaultmem-export/1", "notes": [{"path": "../evil.md", "text": "x"}]})
    )
    assert "outside the vault" in failed(run("import", str(bad)))
    assert not (tmp_path / "evil.md").exists()


def test_show_returns_backlinks(run, demo_copy):
    data = json.loads(ok(run("show", "yx66znwj", "--json", vault=demo_copy)))
    assert {
        "gotchas/Session advisory locks leak under PgBouncer transaction pooling.md",
        "lessons/Keep Celery tasks small and idempotent.md",
        "projects/Project - Tidewater.md",
    } <= set(data["backlinks"])
    assert ADVISORY not in data["backlinks"]
    assert json.loads(
        ok(run("show", "lessons/Keep Celery tasks small and idempotent.md", "--json", vault=demo_copy))
    )["backlinks"] == [  # fmt: skip
        "architecture/Background jobs with Celery and Redis.md",
        "bug-fixes/Celery tasks lost during deploys.md",
    ]


@pytest.mark.integration  # the CLI in subprocesses
def test_version_from_the_console_entry_and_python_dash_m():
    import subprocess
    import sys

    import vaultmem

    script = Path(sys.executable).parent / "vaultmem"
    for cmd in ([str(script), "--version"], [sys.executable, "-m", "vaultmem", "--version"]):
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and out.stdout == f"vaultmem {vaultmem.__version__}\n", out
    assert CliRunner().invoke(app, ["--version"]).stdout == f"vaultmem {vaultmem.__version__}\n"
