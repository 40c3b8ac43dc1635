"""The rules that act on notes as they are indexed (vaultmem.memory.rules): only explicit
statements (the same subject key, a note's own ``supersedes:``), never similarity, and the
same whether a watcher or ``vaultmem index`` indexed the files."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import numpy as np
import yaml
from helpers import HashEmbedder, Running, wait_for, write
from typer.testing import CliRunner

from vaultmem.cli.app import app
from vaultmem.vault import Vault


class NearEmbedder(HashEmbedder):
    """Texts that differ only in their numbers are near-identical (cosine ~0.94, as the default
    model puts the burst notes: above the old cosine-alone rule, below a duplicate)."""

    def embed(self, texts):
        words = super().embed([re.sub(r"\d", "", t) for t in texts])
        digits = super().embed([" ".join(re.findall(r"\d+", t)) or "none" for t in texts])
        out = words + 0.25 * digits
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def note(rid: str, title: str, body: str, **fields) -> str:
    head = {"id": rid, "title": title, **fields}
    head.setdefault("updated", head.get("created"))  # else the file's time, which differs between copies
    return "---\n" + yaml.safe_dump(head, sort_keys=False) + f"---\n# {title}\n\n{body}\n"


def meta(root: Path, rel: str) -> dict:
    return yaml.safe_load((root / rel).read_text().split("---\n")[1])


def burst(folder: Path, first: int = 100, last: int = 299) -> None:
    """The issue's bulk copy: near-identical but different hand-written notes."""
    for n in range(first, last + 1):
        write(folder, f"burst/b{n}.md", note(f"b{n}", f"Burst note {n}", f"Burst note {n} mentions the word xylophonic.",
                                             type="fact", created=f"2026-11-{1 + n % 28:02d}T10:00:00Z"))  # fmt: skip


def statements(folder: Path) -> None:
    """Notes that state an update explicitly: a key group, and a ``supersedes:`` naming an older note."""
    write(folder, "facts/Editor.md", note("ed1", "Editor", "VS Code.", type="fact", key="user.editor",
                                          created="2026-01-01"))  # fmt: skip
    write(folder, "facts/Editor now.md", note("ed2", "Editor now", "Neovim.", type="fact", key="user.editor",
                                              created="2026-11-01"))  # fmt: skip
    write(folder, "decisions/Queue on Redis.md", note("q1", "Queue on Redis", "Jobs go through Redis lists.",
                                                      type="decision", created="2026-03-01"))  # fmt: skip
    write(folder, "decisions/Queue on SQS.md", note("q2", "Queue on SQS", "Jobs go through SQS now.", type="decision",
                                                    supersedes="[[Queue on Redis]]", created="2026-10-01"))  # fmt: skip


def files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*.md"))
            if ".vaultmem" not in p.parts}  # fmt: skip


def index_view(v: Vault) -> tuple:
    """The index without file times (two folders written at different moments)."""
    recs = {p: dataclasses.replace(r, mtime_ns=0) for p, r in v.manifest.records().items()}
    return recs, v.bm25.documents(), v.manifest.chunk_hashes()


def test_index_without_a_watcher_gives_the_same_files_and_index_as_a_watcher(
    tmp_path, fake_embedder, fake_model
):
    from vaultmem.core.scaffold import init_vault

    watched, indexed = tmp_path / "watched", tmp_path / "indexed"
    for root in (watched, indexed):
        init_vault(root)
    r = Running(watched, fake_embedder)
    try:  # a person copies notes into a watched vault
        statements(watched)
        burst(watched)
        wait_for(lambda: len([p for p in r.paths() if p.startswith(("burst/", "facts/", "decisions/"))]) == 204,
                 what="all notes indexed")  # fmt: skip
        wait_for(
            lambda: meta(watched, "decisions/Queue on Redis.md").get("status") == "superseded", what="rules"
        )
        r.settle()  # the rewritten notes come back as file events: applied before the comparison
    finally:
        r.stop()
    statements(indexed)  # the same notes, then `vaultmem index` with no watcher
    burst(indexed)
    result = CliRunner().invoke(app, ["index", "--vault", str(indexed)])
    assert result.exit_code == 0, result.output
    assert files(indexed) == files(watched)
    w, i = Vault(watched, embedder=fake_embedder), Vault(indexed, embedder=fake_embedder)
    try:
        assert index_view(i) == index_view(w)
    finally:
        w.close()
        i.close()
    # the explicit statements acted on both routes; the near-identical notes did not
    old = meta(indexed, "facts/Editor.md")
    assert old["status"] == "superseded" and old["superseded_by"] == "[[Editor now]]"
    assert str(old["valid_until"]) == "2026-11-01"
    assert meta(indexed, "decisions/Queue on Redis.md")["superseded_by"] == "[[Queue on SQS]]"
    assert not any("status" in meta(indexed, f"burst/b{n}.md") for n in range(100, 300))


def test_a_burst_of_near_identical_hand_written_notes_changes_no_file(empty_vault, tmp_path):
    """The issue's reproduction: 200 notes copied into a watched vault; none is rewritten."""
    source = tmp_path / "copy"
    burst(source)
    before = files(source)
    embedder = NearEmbedder()
    cos = embedder.embed(
        ["Burst note 100 mentions the word xylophonic.", "Burst note 295 mentions the word xylophonic."]
    )
    assert 0.91 < float(cos[0] @ cos[1]) < 0.97
    write(empty_vault, "burst/README.md", "# About the burst\n\nNotes copied from elsewhere.\n")
    r = Running(empty_vault, embedder)
    try:  # copied one by one into a folder the vault already has
        for path in sorted((source / "burst").iterdir()):
            shutil.copy(path, empty_vault / "burst" / path.name)
        wait_for(lambda: sum(p.startswith("burst/b") for p in r.paths()) == 200, what="the burst indexed")
        # each note's batch ran the vault's rules as it indexed it: a wrong supersede is on disk now
        with r.watcher.mutex:
            statuses = {
                rec.status for p, rec in r.vault.manifest.records().items() if p.startswith("burst/b")
            }
    finally:
        r.stop()
    after = {k: t for k, t in files(empty_vault / "burst").items() if k != "README.md"}
    assert after == {k.removeprefix("burst/"): t for k, t in before.items()}
    assert statuses == {"active"}


def test_a_declaration_acts_whichever_note_arrives_first(open_vault, empty_vault):
    v = open_vault(empty_vault)
    write(empty_vault, "decisions/Queue on SQS.md", note("q2", "Queue on SQS", "SQS now.", type="decision",
                                                         supersedes="[[Queue on Redis]]", created="2026-10-01"))  # fmt: skip
    v.reindex()
    write(empty_vault, "decisions/Queue on Redis.md", note("q1", "Queue on Redis", "Redis lists.", type="decision",
                                                           created="2026-03-01"))  # fmt: skip
    s = v.reindex(["decisions/Queue on Redis.md"])
    assert [(d["id"], d["by"], d["rule"]) for d in s.superseded] == [("q1", "q2", "supersedes")]
    assert v.records()["decisions/Queue on Redis.md"].status == "superseded"  # indexed in the same sync
    # reopen takes the note out of the newer note's supersedes: it stays open on the next sync
    v.reopen("q1")
    assert "supersedes" not in meta(empty_vault, "decisions/Queue on SQS.md")
    v.reindex(rebuild=True)
    assert meta(empty_vault, "decisions/Queue on Redis.md")["status"] == "active"


def test_two_notes_naming_each_other_never_both_leave_recall(open_vault, empty_vault):
    write(empty_vault, "a.md", note("a1", "A", "one.", type="fact", supersedes="[[B]]", created="2026-01-01"))
    write(empty_vault, "b.md", note("b1", "B", "two.", type="fact", supersedes="[[A]]", created="2026-02-01"))
    v = open_vault(empty_vault)
    v.reindex()
    assert sorted(r.status for r in v.records().values()) == ["active", "superseded"]


def test_the_key_rule_keeps_the_newest_of_a_type_and_branch(open_vault, empty_vault):
    write(empty_vault, "a.md", note("k1", "A", "1.", type="fact", key="k", created="2026-01-01"))
    write(empty_vault, "b.md", note("k2", "B", "2.", type="fact", key="k", created="2026-02-01"))
    write(empty_vault, "c.md", note("k3", "C", "3.", type="decision", key="k", created="2025-01-01"))
    write(empty_vault, "e.md", note("k5", "E", "5.", type="fact", key="k", created="2026-03-01", branch="feat-x",
                                    repo="github.com/me/app"))  # fmt: skip
    v = open_vault(empty_vault)
    assert [(d["id"], d["by"]) for d in v.reindex().superseded] == [("k1", "k2")]
    assert "status" not in meta(empty_vault, "c.md") and "status" not in meta(empty_vault, "e.md")
    write(empty_vault, "d.md", note("k4", "D", "4.", type="fact", key="K", created="2025-06-01"))
    assert [(d["id"], d["by"]) for d in v.reindex().superseded] == [
        ("k4", "k2")
    ]  # an older note given the key later
