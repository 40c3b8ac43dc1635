"""Ready to publish, part 2 (issue 49): the papercuts of a new user's first hour, each through
the command that showed it (typer's CliRunner on both backends, or the installed `vaultmem`
in a subprocess where a terminal, a pipe or the real memory service is the point)."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers import write
from test_service import EXE, cli, vault  # noqa: F401  (fixtures)
from typer.testing import CliRunner

from vaultmem.cli.app import app


@pytest.fixture
def run(empty_vault, fake_model, backend):
    """Run vaultmem in ``empty_vault`` (VAULTMEM_VAULT) with the small test embedder."""
    env = {"VAULTMEM_VAULT": str(empty_vault), "VAULTMEM_SESSION": "s1"}
    return lambda *args, input=None: CliRunner().invoke(app, list(args), env=env, input=input)


def ok(result) -> str:
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


def notes(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.md")
            if not any(part.startswith(".") for part in p.relative_to(root).parts)}  # fmt: skip


def front(root: Path, rel: str) -> dict:
    return yaml.safe_load((root / rel).read_text(encoding="utf-8").split("---\n")[1])


# ------------------------------------------------------------------ remember


def test_remember_refuses_two_anchors_instead_of_dropping_the_first(run, empty_vault):
    before = notes(empty_vault)
    done = run("remember", "fact", "Two homes", "It belongs to two projects.", "--anchor", "Alpha",
               "--anchor", "Beta")  # fmt: skip
    assert done.exit_code == 2 and "--anchor given 2 times" in done.stderr and "one anchor" in done.stderr
    assert notes(empty_vault) == before  # nothing written, no anchor created
    again = run("remember", "fact", "Two keys", "Same.", "--key", "a", "--key=b")
    assert again.exit_code == 2 and "--key given 2 times" in again.stderr


def test_an_anchor_name_two_notes_have_is_named_not_picked_silently(run, empty_vault):
    for folder in ("x", "y"):
        write(empty_vault, f"{folder}/Alpha.md", f"---\ntype: project\n---\nAlpha in {folder}.\n")
    out = run("remember", "fact", "Anchored fact", "Linked to one of two Alphas.", "--anchor", "Alpha")
    assert out.exit_code == 0, out.output
    assert "--anchor 'Alpha' names 2 notes (x/Alpha.md, y/Alpha.md): linked x/Alpha.md" in out.stderr
    assert front(empty_vault, "facts/Anchored fact.md")["anchor"] == "[[x/Alpha|Alpha]]"
    as_json = json.loads(
        ok(run("remember", "fact", "Second fact", "Also to Alpha.", "--anchor", "Alpha", "--json"))
    )
    assert as_json["warnings"] == ["--anchor 'Alpha' names 2 notes (x/Alpha.md, y/Alpha.md): linked x/Alpha.md; "
                                   "name another by its path"]  # fmt: skip


def test_remember_without_text_says_it_saved_the_templates_headings(run, empty_vault):
    out = run("remember", "fact", "Bare fact")
    assert out.exit_code == 0, out.output
    assert "no text given: facts/Bare fact.md holds only the fact template's empty headings" in out.stderr
    assert "## Fact" in (empty_vault / "facts" / "Bare fact.md").read_text(encoding="utf-8")
    given = run("remember", "fact", "Full fact", "It has text.")
    assert given.exit_code == 0 and "no text given" not in given.stderr


# ------------------------------------------------------------------ checkpoint and sleep


def test_checkpoint_says_the_anchor_it_guessed_and_sleep_moves_the_handoff_to_its_own(run, empty_vault):
    ok(run("remember", "project", "Project: Guessed", "The vault's only project."))
    cp = ok(run("checkpoint", "refund endpoint done"))
    assert "anchor: Project: Guessed (the vault's only project; --anchor names another)" in cp
    handoff = cp.split("  ")[1]
    cp2 = ok(run("checkpoint", "tests green"))
    assert "anchor:" not in cp2  # the handoff exists: no anchor chosen now
    out = ok(run("sleep", "--summary", "Added refunds", "--next", "write docs", "--anchor", "Project: Named"))
    assert front(empty_vault, handoff)["anchor"] == "[[Project - Named|Project: Named]]"
    assert "moved handoff" in out and "was [[Project - Guessed|Project: Guessed]]" in out
    undo = next(line for line in out.splitlines() if line.startswith("undo: "))
    handoff_id = front(empty_vault, handoff)["id"]
    assert f"delete --force {handoff_id}" not in undo  # the checkpoints live in it
    assert f"take the next steps out of '{handoff}'" in undo


def test_sleeps_undo_still_deletes_a_handoff_it_made(run, empty_vault):
    out = ok(run("sleep", "--summary", "Short session", "--next", "pick it up"))
    made = json.loads(ok(run("list", "--type", "handoff", "--json")))[0]["id"]
    assert f"vaultmem delete --force {made}" in out


# ------------------------------------------------------------------ edit without a terminal


def test_edit_without_flags_and_without_a_terminal_refuses_in_one_line(empty_vault, tmp_path):
    marker = tmp_path / "editor-ran"
    write(empty_vault, "facts/Note.md", "---\nid: note0001\ntitle: Note\n---\nText.\n")
    env = {**os.environ, "VAULTMEM_VAULT": str(empty_vault), "VAULTMEM_NO_SERVICE": "1",
           "EDITOR": f"touch {marker}", "VISUAL": ""}  # fmt: skip
    done = subprocess.run([EXE, "edit", "note0001"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          env=env, timeout=60)  # fmt: skip
    assert done.returncode == 2 and done.stdout == "" and not marker.exists()
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(
        "vaultmem: no terminal to open an editor in"
    )


# ------------------------------------------------------------------ import --undo


def test_import_undo_removes_the_folders_the_import_made(run, empty_vault, tmp_path):
    (empty_vault / "decisions").mkdir()  # there before: an undo leaves it
    rules = tmp_path / "AGENTS.md"
    rules.write_text("# Rules\n\n- Always use integer cents for money.\n- Never push to main on Fridays.\n")
    shown = lambda: sorted(p.name for p in empty_vault.iterdir() if not p.name.startswith("."))
    before = shown()
    out = ok(run("import", "--from", "rules", str(rules)))
    batch = re.search(r"vaultmem import --undo (\S+)", out).group(1)
    assert (empty_vault / "preferences").is_dir()
    undone = ok(run("import", "--undo", batch))
    assert "removed the empty folder preferences/ it made" in undone
    assert shown() == before
    assert (empty_vault / "decisions").is_dir()


def test_an_undo_keeps_a_folder_that_holds_a_note_written_since(run, empty_vault, tmp_path):
    rules = tmp_path / "AGENTS.md"
    rules.write_text("- Always use integer cents for money.\n")
    batch = re.search(r"--undo (\S+)", ok(run("import", "--from", "rules", str(rules)))).group(1)
    write(empty_vault, "preferences/Mine.md", "---\ntitle: Mine\n---\nWritten by hand since.\n")
    ok(run("import", "--undo", batch))
    assert (empty_vault / "preferences" / "Mine.md").is_file()


# ------------------------------------------------------------------ the service's lock file


def test_service_stop_leaves_no_lock_file(cli):  # noqa: F811
    cli("service", "start")
    folder = Path(os.environ["XDG_RUNTIME_DIR"]) / f"vaultmem-{os.getuid()}"
    assert len(list(folder.glob("service-*.lock"))) == 1
    cli("service", "stop")
    assert list(folder.glob("service-*.lock")) == []
    cli("service", "start")  # and the next one starts and stops as before
    assert cli.status()["running"]
    cli("service", "stop")
    assert list(folder.glob("service-*.lock")) == []


# ------------------------------------------------------------------ graph path


def test_graph_path_shows_which_way_each_link_goes(run, empty_vault):
    write(empty_vault, "a.md", "---\ntitle: A\n---\nSee [[B]].\n")
    write(empty_vault, "b.md", "---\ntitle: B\n---\nNothing.\n")
    write(empty_vault, "c.md", "---\ntitle: C\n---\nAbout [[B]].\n")
    ok(run("index"))
    out = ok(run("graph", "path", "A", "C"))
    assert out.splitlines() == ["A  (a.md)", "-> B  (b.md)", "<- C  (c.md)"]
    data = json.loads(ok(run("graph", "path", "C", "A", "--json")))
    assert data["directions"] == ["->", "<-"] and [p["title"] for p in data["path"]] == ["C", "B", "A"]


# ------------------------------------------------------------------ dates as Obsidian types them


def test_created_and_updated_are_obsidian_datetimes_read_back_as_the_same_time(run, empty_vault):
    made = json.loads(ok(run("remember", "fact", "Dated", "A fact with dates.", "--json")))
    text = (empty_vault / made["path"]).read_text(encoding="utf-8")
    stamp = re.search(r"^created: (\S+)$", text, re.M).group(1)
    # unquoted YYYY-MM-DDTHH:mm:ss, Obsidian's Date & time; YAML reads it as a datetime, not text
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", stamp) and f"\nupdated: {stamp}\n" in text
    assert isinstance(front(empty_vault, made["path"])["created"], dt.datetime)
    shown = json.loads(ok(run("show", made["id"], "--json")))
    assert shown["created"] == shown["updated"] == f"{stamp}Z"  # the same UTC time as before
    edited = ok(run("edit", made["id"], "--set", "importance=7"))
    assert "updated" in edited
    assert re.search(
        r"^updated: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$", (empty_vault / made["path"]).read_text(), re.M
    )


def test_an_older_note_with_quoted_dates_still_reads_the_same(run, empty_vault):
    write(empty_vault, "facts/Old.md", "---\nid: old00001\ntitle: Old\ntype: fact\n"
          "created: '2026-01-02T03:04:05Z'\nupdated: '2026-01-03T03:04:05Z'\n---\nAn older note.\n")  # fmt: skip
    shown = json.loads(ok(run("show", "old00001", "--json")))
    assert (shown["created"], shown["updated"]) == ("2026-01-02T03:04:05Z", "2026-01-03T03:04:05Z")
    listed = json.loads(ok(run("list", "--since", "2026-01-03", "--json")))
    assert [r["id"] for r in listed] == ["old00001"]


# ------------------------------------------------------------------ the prompt hook's vault


def test_the_prompt_hook_without_vault_finds_it_as_every_command_does(cli, vault, tmp_path):  # noqa: F811
    """The hook's fast path called its prompt without a vault when --vault was not given (a
    traceback); the vault then comes from $VAULTMEM_VAULT as for any command."""
    payload = json.dumps({"prompt": "why advisory locks for job leasing?", "cwd": str(tmp_path)})
    done = cli("hook", "prompt", "--agent", "claude", input=payload, env={"VAULTMEM_VAULT": str(vault)},
               check=False)  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "advisory" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"].lower()
