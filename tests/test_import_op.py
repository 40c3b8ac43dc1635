"""`vaultmem import` is one declared operation (issue 44): the restore of a backup and every
``--from`` importer run in the ``import`` handler, with the same stdout, stderr (its progress events
too), exit code and files whether a memory service runs (here in a thread of the test,
``service_thread``) or not. Declared ``here``, it runs in the caller's process even when the
service serves the vault, so the service goes on answering recall and hooks on it meanwhile (a
bulk import takes minutes). What the user named is resolved where the user is: a path relative
to the caller's folder, standard input read by the caller. A bulk import stopped half way
resumes as one undo batch."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import seams

from vaultmem import api
from vaultmem.cli.service import import_task  # what the CLI hands its session for --from

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
    and the last line on stderr, the notes written, alike with and without the service, reading
    a file named relative to the caller's folder."""
    chatgpt_export(work / "conversations.json", 12)
    here, served = fresh(tmp_path / "here"), fresh(tmp_path / "served")
    argv = ["import", "--from", "chatgpt", "conversations.json", "--json", "--vault"]
    mine = in_process(monkeypatch, [*argv, str(here)])
    assert mine.code == 0 and mine.ops == ["import"], mine.shown()
    theirs = seams.run_cli([*argv, str(served)])
    assert theirs.code == 0 and theirs.ops == ["import"], theirs.shown()
    assert same(theirs.out) == same(mine.out)
    assert same(theirs.err) == same(mine.err)
    assert [json.loads(line)["event"] for line in theirs.err.splitlines()] == ["progress", "progress", "done"]
    assert len(json.loads(theirs.out)["written"]) == 12 and notes(served) == notes(here)


def test_a_backup_restores_alike_from_standard_input_and_from_a_relative_file(
    work, tmp_path, service_thread, monkeypatch
):
    """The caller reads standard input (here more than the service's 1 MB request line as JSON
    would carry it); a file is named relative to the caller's folder. Both restore with the
    service running what they restore without it, each as one undo batch."""
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
    with api.Session([str(served)]) as session:
        assert [b["source"] for b in session.batches("import")] == [str((work / "backup.json").resolve())]


@pytest.mark.parametrize("where", ["process", "service"])
def test_the_handler_takes_only_absolute_paths(where, work, tmp_path, request):
    """A relative path would be read from the host's folder: the caller resolves it
    (``Session.import_``); the operation refuses one, the same on either host (a client may
    still send ``import`` on the service's socket)."""
    from vaultmem.service import client

    if where == "service":
        request.getfixturevalue("service_thread")
    else:
        request.getfixturevalue("monkeypatch").setenv("VAULTMEM_NO_SERVICE", "1")
    root = fresh(tmp_path / "v")
    chatgpt_export(work / "conversations.json", 1)
    with api.Session([str(root)]) as session:
        for args in ({"source": "chatgpt", "paths": ["conversations.json"]}, {"paths": ["backup.json"]},
                     {"source": "rules", "paths": [str(work)], "project": "."}):  # fmt: skip
            call = {"root": str(root), **args}
            if where == "service":
                reply = client.call("import", call)
                assert not reply["ok"] and reply["error"].startswith("import: paths must be absolute, not '")
            else:
                with pytest.raises(api.VaultError, match="import: paths must be absolute, not '"):
                    session.call("import", call, start=False)
    assert not (root / "sessions").exists()


def test_the_service_answers_recall_on_the_vault_while_an_import_writes_it(
    work, tmp_path, service_thread, monkeypatch
):
    """A bulk import takes minutes: it runs in the caller's process (``here``), never holding
    the service's writer side, so a recall on the same vault through the service answers while
    the import is half way (an import run by the service held every read until it ended)."""
    import threading

    from vaultmem.service import client

    monkeypatch.setenv("VAULTMEM_BULK_EVERY", "10")
    export = chatgpt_export(work / "conversations.json", 30)
    root = fresh(tmp_path / "v")
    assert client.call("open", {"roots": [str(root)]})["ok"]  # the service serves the vault
    assert root.resolve() in service_thread.service.entries
    answers: list[dict] = []

    def recall() -> None:
        reply = client.call("recall", {"roots": {"v": str(root)}, "query": "conversation", "options": {}})
        answers.append({**reply, "written": len(list((root / "sessions").glob("*.md")))})

    def midway(event: dict) -> None:
        if event["phase"] == "writing" and not answers:
            asking = threading.Thread(target=recall)
            asking.start()
            asking.join(20)  # the import waits here: a recall that needs its writer side never answers

    with api.Session([str(root)], tasks={"import": import_task}) as session:
        done = session.import_("chatgpt", [str(export)], on_progress=midway)
    assert answers and answers[0]["ok"] and answers[0]["written"] < 30, answers  # answered half way
    assert len(done["written"]) == 30


def test_an_import_whose_caller_goes_away_stops_and_resumes_as_one_batch(
    work, tmp_path, service_thread, monkeypatch
):
    """A caller that goes away (Ctrl-C) after the first checkpoint ends the import there, the
    service running or not; the next run resumes it (nothing twice, nothing lost) and one undo
    takes all of it back."""
    monkeypatch.setenv("VAULTMEM_BULK_EVERY", "10")
    export = chatgpt_export(work / "conversations.json", 30)
    stopped, whole = fresh(tmp_path / "stopped"), fresh(tmp_path / "whole")
    before = notes(stopped)

    def leave(event: dict) -> None:
        if event["phase"] == "writing":
            raise KeyboardInterrupt  # the caller's Ctrl-C, after the first checkpoint

    with (
        api.Session([str(stopped)], tasks={"import": import_task}) as session,
        pytest.raises(KeyboardInterrupt),
    ):
        session.import_("chatgpt", [str(export)], on_progress=leave)
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
