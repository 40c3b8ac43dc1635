"""`vaultmem import` is one declared operation (issue 44): the restore of a backup and every
``--from`` importer run in the ``import`` handler, through the memory service (here in a thread of
the test, ``service_thread``) or in process, with the same stdout, stderr (its progress events
too), exit code and files. What the user named is resolved where the user is: a path relative to
the caller's folder, standard input read by the caller. A bulk import stopped half way through the
service (its caller gone) resumes as one undo batch."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import seams

from vaultmem import api

REPO = Path(__file__).resolve().parents[1]
VARYING = [(re.compile(r'"(id|path|undo|duplicate_of|like)": "[^"]*"'), r'"\1": "-"'), (re.compile(r"^id: \S+$", re.M), "id: -"),
           (re.compile(r'("seconds(?:_left)?": )[0-9.]+'), r"\1<n>"), (re.compile(r"\d{8}-\d{6}-[0-9a-f]{4}"), "<batch>")]  # fmt: skip


def chatgpt_export(path: Path, n: int) -> Path:
    sys.path.insert(0, str(REPO))  # plain pytest: the repository's root is not on the path
    from benchmarks.import_bench import chatgpt_export as write

    write(path, n)
    return path


def fresh(root: Path) -> Path:
    from vaultmem.core.scaffold import init_vault

    init_vault(root)
    return root


def same(text: str) -> str:
    for pattern, into in VARYING:
        text = pattern.sub(into, text)
    return text


def notes(root: Path) -> dict[str, str]:
    """Every note's text by path, ids left out (new at each write)."""
    return {p.relative_to(root).as_posix(): same(p.read_text()) for p in sorted(root.rglob("*.md"))
            if ".vaultmem" not in p.parts and ".trash" not in p.parts}  # fmt: skip


def in_process(monkeypatch: pytest.MonkeyPatch, argv: list[str], stdin: str = "") -> seams.Outcome:
    with monkeypatch.context() as mp:
        mp.setenv("VAULTMEM_NO_SERVICE", "1")
        return seams.run_cli(argv, stdin)


@pytest.fixture
def work(tmp_path, monkeypatch, fake_model):
    """The caller's folder (what it names is relative to it), never the service's."""
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path / "work"


def test_an_import_from_a_source_is_one_result_through_the_service_and_in_process(
    work, tmp_path, service_thread, monkeypatch
):
    """``--from chatgpt conversations.json --json``: the report on stdout, the progress events
    and the last line on stderr, the notes written, alike; the service ran it (the handler, on
    its watched vault), reading a file named relative to the caller's folder."""
    chatgpt_export(work / "conversations.json", 12)
    here, served = fresh(tmp_path / "here"), fresh(tmp_path / "served")
    argv = ["import", "--from", "chatgpt", "conversations.json", "--json", "--vault"]
    mine = in_process(monkeypatch, [*argv, str(here)])
    assert mine.code == 0 and mine.ops == ["import"], mine.shown()
    theirs = seams.run_cli([*argv, str(served)])
    assert theirs.code == 0 and theirs.ops == ["import"], theirs.shown()
    assert served.resolve() in service_thread.service.entries  # answered there, not here
    assert same(theirs.out) == same(mine.out)
    assert same(theirs.err) == same(mine.err)
    assert [json.loads(line)["event"] for line in theirs.err.splitlines()] == ["progress", "progress", "done"]
    assert len(json.loads(theirs.out)["written"]) == 12 and notes(served) == notes(here)


def test_a_backup_restores_alike_from_standard_input_and_from_a_relative_file(
    work, tmp_path, service_thread, monkeypatch
):
    """The caller reads standard input and sends it (here more than the service's old 1 MB
    request line as JSON carries it); a file is named relative to the caller's folder. Both
    restore through the service what they restore in process, each as one undo batch."""
    source = seams.make_vault(tmp_path / "source")
    small = in_process(monkeypatch, ["export", "--vault", str(source)])
    (work / "backup.json").write_text(small.out)
    (source / "facts" / "Long.md").write_text("---\ntype: fact\n---\n\n" + "記憶 " * 100_000 + "\n")
    big = in_process(monkeypatch, ["export", "--vault", str(source)])
    assert small.code == big.code == 0 and len(json.dumps(big.out)) > 1 << 20
    for how, argv, stdin in (("stdin", ["import", "-"], big.out), ("file", ["import", "backup.json"], "")):
        here, served = fresh(tmp_path / f"here-{how}"), fresh(tmp_path / f"served-{how}")
        mine = in_process(monkeypatch, [*argv, "--vault", str(here)], stdin)
        theirs = seams.run_cli([*argv, "--vault", str(served)], stdin)
        assert mine.code == theirs.code == 0, (mine.shown(), theirs.shown())
        restored = 5 if how == "stdin" else 4
        assert theirs.out.startswith(
            f"imported {restored}, skipped 0 already present\nundo: vaultmem import --undo "
        )
        assert (same(theirs.out), theirs.err) == (same(mine.out), mine.err) and notes(served) == notes(here)
        assert served.resolve() in service_thread.service.entries
    with api.Session([str(served)]) as session:
        assert [b["source"] for b in session.batches("import")] == [str((work / "backup.json").resolve())]


@pytest.mark.parametrize("where", ["process", "service"])
def test_the_handler_takes_only_absolute_paths(where, work, tmp_path, request):
    """A relative path would be read from the service's folder: the caller resolves it
    (``Session.import_``); the operation refuses one, the same on either host."""
    if where == "service":
        request.getfixturevalue("service_thread")
    else:
        request.getfixturevalue("monkeypatch").setenv("VAULTMEM_NO_SERVICE", "1")
    root = fresh(tmp_path / "v")
    chatgpt_export(work / "conversations.json", 1)
    with api.Session([str(root)]) as session:
        for args in ({"source": "chatgpt", "paths": ["conversations.json"]}, {"paths": ["backup.json"]},
                     {"source": "rules", "paths": [str(work)], "project": "."}):  # fmt: skip
            with pytest.raises(api.VaultError, match="import: paths must be absolute, not '"):
                session.call("import", {"root": str(root), **args}, start=False)
        assert session.backend == (api.SERVICE if where == "service" else api.PROCESS)
    assert not (root / "sessions").exists()


def test_an_import_whose_caller_goes_away_stops_and_resumes_as_one_batch(
    work, tmp_path, service_thread, monkeypatch
):
    """Through the service the import runs in the service's thread: a caller that goes away
    (Ctrl-C, killed) ends it at its next progress event, as a kill ends one in process; the
    next run resumes it (nothing twice, nothing lost) and one undo takes all of it back."""
    monkeypatch.setenv("VAULTMEM_BULK_EVERY", "10")
    export = chatgpt_export(work / "conversations.json", 30)
    stopped, whole = fresh(tmp_path / "stopped"), fresh(tmp_path / "whole")
    before = notes(stopped)

    def leave(event: dict) -> None:
        if event["phase"] == "writing":
            raise KeyboardInterrupt  # the caller's Ctrl-C, after the first checkpoint

    with api.Session([str(stopped)]) as session, pytest.raises(KeyboardInterrupt):
        session.import_("chatgpt", [str(export)], on_progress=leave)
    from helpers import wait_for

    wait_for(lambda: service_thread.service._in_flight == 0, timeout=30, what="the import to stop")
    written = len(list((stopped / "sessions").glob("*.md")))
    assert 10 <= written < 30  # stopped at a checkpoint after the caller left, before the end
    argv = ["import", "--from", "chatgpt", "conversations.json", "--json", "--vault"]
    again = seams.run_cli([*argv, str(stopped)])
    assert again.code == 0, again.shown()
    resumed = json.loads(again.out)
    assert len(resumed["already_imported"]) == written and len(resumed["written"]) == 30 - written
    assert seams.run_cli([*argv, str(whole)]).code == 0
    assert notes(stopped) == notes(whole)
    undone = seams.run_cli(["import", "--undo", resumed["undo"], "--vault", str(stopped)])
    assert undone.code == 0 and notes(stopped) == before, undone.shown()


def test_an_agents_own_folder_is_found_in_the_callers_environment(tmp_path, monkeypatch):
    """``--from codex`` without a path reads ``$CODEX_HOME`` as the caller has it, not as the
    service was started with."""
    from vaultmem.agents import importers

    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    assert importers.get("codex").where([]) == [str(tmp_path / "codex")]
    assert importers.get("codex").where(["a"]) == ["a"] and importers.get("rules").where([]) == []
