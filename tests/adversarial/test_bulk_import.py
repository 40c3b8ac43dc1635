"""A large chat export is one bulk write (issue 39, Medium 7): the notes it writes are the ones the
per-note path writes, and an import killed half way (SIGKILL) and run again ends as an import that
was never stopped: nothing lost, nothing twice, one undo batch for all of it.

Through the real CLI (CliRunner in process for the comparison, subprocesses for the kill).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from .adversarial_helpers import CLI, cli_env, run

REPO = Path(__file__).resolve().parents[2]
ID_RE = re.compile(r"^id: \S+$", re.M)


def _export(path: Path, n: int) -> Path:
    """The benchmark's ChatGPT export of ``n`` conversations plus what the per-note rules act on:
    a secret, a ``<private>`` span, and a conversation repeated under another id (its own note,
    linked to the first: a session is deduplicated by its identity, never by its text)."""
    sys.path.insert(0, str(REPO))  # plain pytest: the repository's root is not on the path
    from benchmarks.import_bench import chatgpt_export

    chatgpt_export(path, n)
    convs = json.loads(path.read_text())
    first = convs[0]["mapping"]["m0"]["message"]["content"]
    first["parts"] = [first["parts"][0] + " My token is ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
                      + " and <private>my home address is 12 Elm St</private>."]  # fmt: skip
    twin = json.loads(json.dumps(convs[1]))
    twin["id"] = "conv-twin"
    convs.append(twin)
    path.write_text(json.dumps(convs))
    return path


def _vault(root: Path) -> Path:
    from vaultmem.core.scaffold import init_vault

    init_vault(root)
    cfg = root / ".vaultmem.toml"
    cfg.write_text(
        cfg.read_text().replace('# model = "sentence-transformers/all-MiniLM-L6-v2"', 'model = "none"')
    )
    return root


def _notes(root: Path) -> dict[str, str]:
    """Every note's text by path, ids left out (random per write)."""
    return {p.relative_to(root).as_posix(): ID_RE.sub("id: -", p.read_text())
            for p in sorted(root.rglob("*.md")) if ".vaultmem" not in p.parts and ".trash" not in p.parts}  # fmt: skip


@pytest.mark.parametrize("model", ["none", "test embedder"])
def test_the_bulk_import_writes_what_the_per_note_path_writes(tmp_path, monkeypatch, model, fake_embedder):
    """Keyword-only, and with the test embedder (vectors indexed at each checkpoint)."""
    from vaultmem.cli.app import app
    from vaultmem.vault import Vault

    export = _export(tmp_path / "conversations.json", 40)
    bulk, single = _vault(tmp_path / "bulk"), _vault(tmp_path / "single")
    if model != "none":
        monkeypatch.setattr("vaultmem.vault.make_embedder", lambda *a, **k: fake_embedder)
    ran = CliRunner().invoke(
        app, ["import", "--from", "chatgpt", str(export), "--vault", str(bulk), "--json"]
    )
    assert ran.exit_code == 0, ran.output
    out = json.loads(ran.stdout)
    batch = Vault.batch
    monkeypatch.setattr(Vault, "batch", lambda self, bulk=False: batch(self, False))  # one note at a time
    per_note = CliRunner().invoke(
        app, ["import", "--from", "chatgpt", str(export), "--vault", str(single), "--json"]
    )
    assert per_note.exit_code == 0, per_note.output
    assert _notes(bulk) == _notes(single)
    theirs = json.loads(per_note.stdout)
    for key in ("written", "candidates", "known_rules", "already_imported", "empty"):
        assert _rows(out[key]) == _rows(theirs[key]), key
    text = "\n".join(_notes(bulk).values())
    assert "ghp_" not in text and "12 Elm St" not in text  # redacted, private span dropped
    # the twin (another conversation id, the same words) is another conversation: kept, linked to the first
    assert not [w for w in out["written"] if w["duplicate_of"]]
    assert sum(1 for w in out["written"] if w.get("like")) == 1
    assert len(out["written"]) == 41 and out["candidates"]


def _rows(rows: list) -> list:
    """An import's report rows without the random ids (whether a row names a duplicate stays)."""
    return [{k: (bool(v) if k in ("duplicate_of", "like") else v) for k, v in r.items() if k not in ("id", "path")}
            if isinstance(r, dict) else r for r in rows]  # fmt: skip


def _count(folder: Path) -> int:
    try:
        return sum(1 for e in os.scandir(folder) if e.name.endswith(".md"))
    except FileNotFoundError:
        return 0


@pytest.mark.integration  # the CLI in subprocesses
def test_an_import_killed_half_way_resumes_to_the_state_of_an_uninterrupted_one(tmp_path):
    """200 conversations, a checkpoint every 100 (VAULTMEM_BULK_EVERY; until issue 44: 400 and
    the default 250), killed 20 notes past the first checkpoint, before the end."""
    n, every = 200, 100
    export = _export(tmp_path / "conversations.json", n)
    env = cli_env(VAULTMEM_NO_SERVICE="1", HOME=str(tmp_path / "home"), VAULTMEM_BULK_EVERY=str(every))
    killed, whole = _vault(tmp_path / "killed"), _vault(tmp_path / "whole")
    before = _notes(killed)
    args = ["import", "--from", "chatgpt", str(export), "--json"]
    proc = __import__("subprocess").Popen(
        [*CLI, *args, "--vault", str(killed)], stdout=-1, stderr=-1, env=env
    )
    deadline = time.monotonic() + 240
    while _count(killed / "sessions") < every + 20 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL, "the import ended before it could be killed"
    on_disk = _count(killed / "sessions")
    assert every + 20 <= on_disk < n + 1

    again = run(*args, "--vault", str(killed), env=env, timeout=240)
    assert again.returncode == 0, again.stderr
    resumed = json.loads(again.stdout)
    assert len(resumed["already_imported"]) >= every + 10  # what the killed run wrote is not written again
    done = run(*args, "--vault", str(whole), env=env, timeout=240)
    assert done.returncode == 0, done.stderr
    assert _notes(killed) == _notes(whole)  # nothing lost, nothing twice
    sources = [ln for p in (killed / "sessions").glob("*.md") for ln in p.read_text().splitlines()
               if ln.startswith("source:")]  # fmt: skip
    assert len(sources) == len(set(sources)) == n + 1  # the twin is a conversation of its own

    undone = run("import", "--undo", resumed["undo"], "--vault", str(killed), "--json", env=env)
    assert undone.returncode == 0, undone.stderr
    assert _notes(killed) == before  # the one batch covers the killed run and its resumption


@pytest.mark.parametrize("every", [7])
def test_progress_is_reported_at_each_checkpoint(tmp_path, monkeypatch, every):
    """Each checkpoint (durable, undo record saved, indexed) reports the items written so far."""
    from vaultmem.agents.importers import base as importers
    from vaultmem.agents.importers import get
    from vaultmem.memory import batch

    export = _export(tmp_path / "conversations.json", 20)
    vault = _vault(tmp_path / "v")
    seen: list[tuple[int, int]] = []

    class Progress:
        def __call__(self, done: int, total: int) -> None: ...

        def writing(self, done: int, total: int) -> None:
            seen.append((done, total))
            undo = list((vault / ".vaultmem/undo").glob("*.json"))
            assert (
                undo and json.loads(undo[0].read_text())["data"]["finished"] is False
            )  # saved (signed) as it stands

    monkeypatch.setattr(batch, "EVERY", every)
    monkeypatch.setattr(importers, "paced", lambda v, items, p: batch.paced(v, items, p, every))
    from vaultmem.memory import undo as undomod
    from vaultmem.vault import Vault

    v = Vault.open(vault)
    with undomod.recording(v, "import", "chatgpt", resume=True):
        get("chatgpt").into(v, [str(export)], project=None, since=None, dry_run=False, progress=Progress())
    assert seen == [(7, 21), (14, 21), (21, 21)]


def test_an_import_indexes_and_builds_the_link_graph_per_checkpoint_not_per_note(tmp_path, monkeypatch):
    """Before: each conversation written was indexed on its own (a whoosh commit, four fsyncs)
    and the link graph rebuilt for the project rule: both grew with the vault, per note."""
    from vaultmem.cli.app import app
    from vaultmem.index import bm25, graph

    export = _export(tmp_path / "conversations.json", 60)
    vault = _vault(tmp_path / "v")
    calls = {"commit": 0, "graph": 0}
    apply, build = bm25.BM25Index.apply, graph.build

    def counted_apply(self, *a, **k):
        calls["commit"] += 1
        return apply(self, *a, **k)

    def counted_build(*a, **k):
        calls["graph"] += 1
        return build(*a, **k)

    monkeypatch.setattr(bm25.BM25Index, "apply", counted_apply)
    monkeypatch.setattr(graph, "build", counted_build)
    ran = CliRunner().invoke(
        app, ["import", "--from", "chatgpt", str(export), "--vault", str(vault), "--json"]
    )
    assert ran.exit_code == 0, ran.output
    assert len(json.loads(ran.stdout)["written"]) == 61
    assert calls["commit"] <= 3 and calls["graph"] <= 3, calls
