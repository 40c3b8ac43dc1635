"""The note commands through the library: remember, show/find, list, edit, delete, stats,
export and import (vaultmem.memory.ops via vaultmem.vault.Vault)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from vaultmem.core.errors import BadInput, Conflict, NoteNotFound, VaultError
from vaultmem.core.note import content_hash, parse
from vaultmem.core.scaffold import init_vault
from vaultmem.memory.ops import EXPORT_FORMAT, parse_assignment
from vaultmem.vault import Vault

NOW = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.UTC)
ADVISORY = "decisions/Use Postgres advisory locks for job leasing.md"
NO_ID = "facts/Pilot marinas and their sizes.md"


@pytest.fixture
def vault(empty_vault, open_vault):
    return open_vault(empty_vault)


def read(v: Vault, rel: str) -> str:
    return (v.root / rel).read_text(encoding="utf-8")


def write(v: Vault, rel: str, text: str) -> None:
    path = v.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def meta(v: Vault, rel: str) -> dict:
    return parse(read(v, rel), rel).meta


def stamp(days_ago: float) -> str:
    return (dt.datetime.now(dt.UTC) - dt.timedelta(days=days_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the vault except vaultmem's own state (indexes, usage data)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and not {".vaultmem", ".vaultmem-usage"} & set(p.relative_to(root).parts)}  # fmt: skip


# ------------------------------------------------------------------ remember


def test_remember_writes_a_note_with_id_in_the_type_folder(vault):
    r = vault.remember(
        "decision", "Use SQLite for the cache", "Because it is simple.", tags=["cache"], now=NOW
    )
    assert re.fullmatch(r"[0-9a-z]{8}", r["id"]) and not r["id"].isdigit()
    assert r["path"] == "decisions/Use SQLite for the cache.md"
    assert (r["type"], r["created_anchor"]) == ("decision", None)
    m = meta(vault, r["path"])
    assert (m["id"], m["title"], m["type"], m["status"]) == (r["id"], r["title"], "decision", "active")
    assert m["tags"] == ["cache"]
    # unquoted, as Obsidian writes a Date & time (issue 49); read back as the same UTC time
    assert m["created"] == m["updated"] == dt.datetime(2026, 6, 1, 12, 0)
    assert "\ncreated: 2026-06-01T12:00:00\nupdated: 2026-06-01T12:00:00\n" in read(vault, r["path"])
    assert vault.find(r["id"]).created == vault.find(r["id"]).updated == "2026-06-01T12:00:00Z"
    # no "# title" heading: Obsidian shows the title (issue 36)
    assert read(vault, r["path"]).endswith("---\nBecause it is simple.\n")


def test_remember_without_content_uses_the_template(vault):
    r = vault.remember("decision", "Pick a queue", now=NOW)
    text = read(vault, r["path"])
    assert "# Pick a queue" not in text and "## Alternatives considered" in text
    assert "{{" not in text


def test_remember_uses_a_vault_template_and_its_defaults(vault):
    write(vault, "templates/decision.md", "---\ntags: house\nowner: team-a\n---\n# {{title}} on {{date}}\n")
    r = vault.remember("decision", "Custom", now=NOW)
    assert meta(vault, r["path"])["tags"] == ["house"]
    assert meta(vault, r["path"])["owner"] == "team-a"
    assert "# Custom on 2026-06-01" in read(vault, r["path"])
    assert vault.store.list_paths() == [r["path"]]  # the template folder is not notes


def test_remember_links_and_anchor(vault):
    first = vault.remember("fact", "Fact one", "x", links=["Other note"], anchor="Project: Demo", now=NOW)
    second = vault.remember("fact", "Fact two", "y", anchor="Project: Demo", now=NOW)
    assert first["created_anchor"] == "projects/Project - Demo.md"
    assert second["created_anchor"] is None
    assert [p for p in vault.store.list_paths() if p.startswith("projects/")] == [
        "projects/Project - Demo.md"
    ]
    anchor = vault.find("Project: Demo")
    assert anchor.type == "project" and "anchor" in anchor.tags
    rec = vault.find(first["id"])
    assert ("Other note", "body") in rec.links and ("Project - Demo", "frontmatter") in rec.links
    assert meta(vault, first["path"])["anchor"] == "[[Project - Demo|Project: Demo]]"  # resolves in Obsidian


def test_remember_unknown_type_lists_the_known_ones(vault):
    with pytest.raises(BadInput) as err:
        vault.remember("nonsense", "Title")
    assert "nonsense" in str(err.value) and "decision" in str(err.value) and "bug_fix" in str(err.value)
    assert vault.store.list_paths() == []


@pytest.mark.parametrize(
    "written, type_, folder",
    [("error-solution", "bug_fix", "bug-fixes"), ("summary", "session_summary", "sessions"),
     ("task-update", "progress", "progress"), ("Trade-Off", "trade_off", "trade-offs")],
)  # fmt: skip
def test_remember_accepts_type_synonyms(vault, written, type_, folder):
    r = vault.remember(written, "Something", "x")
    assert r["type"] == type_ and r["path"] == f"{folder}/Something.md"
    assert vault.find(r["id"]).type == type_


def test_remember_title_with_quotes_and_colon(vault):
    title = 'Project: "Quoted" #1 [draft]'
    r = vault.remember("project", title, "x")
    assert r["path"] == "projects/Project - Quoted 1 draft.md"
    assert meta(vault, r["path"])["title"] == title
    assert vault.show(title)["path"] == r["path"]


def test_remember_same_title_twice_gets_a_second_file(vault):
    """A new memory under the title of a resolved one (an active one would take it in: test_mcp)."""
    a = vault.remember("fact", "Same", "a")
    vault.resolve(a["id"])
    b = vault.remember("fact", "same", "b")
    assert (a["path"], b["path"]) == ("facts/Same.md", "facts/same 2.md")
    assert a["id"] != b["id"]


@pytest.mark.parametrize(
    "kwargs, message",
    [({"title": "  "}, "title"), ({"importance": "11"}, "--importance"), ({"importance": "urgent"}, "--importance"),
     ({"scope": "team"}, "--scope")],
)  # fmt: skip
def test_remember_bad_input(vault, kwargs, message):
    with pytest.raises(BadInput, match=message):
        vault.remember("fact", **{"title": "T", **kwargs})


def test_remember_importance_words_and_fields(vault):
    r = vault.remember(
        "fact", "T", "x", importance="high", scope="user", source="agent-1", context=["app.py"]
    )
    rec = vault.find(r["id"])
    assert (rec.importance, rec.scope, rec.source, rec.context) == (8, "user", "agent-1", ("app.py",))


# ------------------------------------------------------------------ show / find


@pytest.mark.parametrize(
    "ref",
    ["yx66znwj", "YX66ZNWJ", ADVISORY, ADVISORY[:-3], "Use Postgres advisory locks for job leasing",
     "use postgres advisory locks for job leasing", "advisory lock leasing",
     "[[Use Postgres advisory locks for job leasing]]"],
)  # fmt: skip
def test_show_by_id_path_title_alias(demo, ref):
    data = demo.show(ref)
    assert data["path"] == ADVISORY and data["id"] == "yx66znwj"
    assert data["text"] == read(demo, ADVISORY)


def test_show_by_absolute_path(demo):
    assert demo.show(str(demo.root / ADVISORY))["id"] == "yx66znwj"


def test_note_without_id_is_named_by_its_path(demo):
    assert demo.show(NO_ID)["id"] == NO_ID


def test_show_unknown(demo):
    with pytest.raises(NoteNotFound, match="no note 'zzzzzzzz'"):
        demo.show("zzzzzzzz")


def test_find_ambiguous_title(vault):
    vault.remember("fact", "Twin", "a")
    vault.remember("lesson", "Twin", "b")
    with pytest.raises(BadInput, match="names 2 notes"):
        vault.find("Twin")


# ------------------------------------------------------------------ list


@pytest.fixture
def listing(vault):
    notes = {
        "facts/Old.md": dict(type="fact", updated=stamp(30), tags="[db]", importance=9),
        "facts/New.md": dict(type="fact", updated=stamp(1), tags="[db/postgres]", importance=3),
        "lessons/Mid.md": dict(type="lesson", updated=stamp(3), importance="high"),
        "lessons/Done.md": dict(type="lesson", updated=stamp(2), status="resolved"),
        "decisions/Gone.md": dict(type="decision", updated=stamp(0.5), status="superseded"),
    }
    for rel, fields in notes.items():
        write(vault, rel, "---\n" + "".join(f"{k}: {v}\n" for k, v in fields.items()) + "---\nbody\n")
    return vault


def titles(rows: list[dict]) -> list[str]:
    return [r["title"] for r in rows]


def test_list_is_newest_first_and_hides_resolved(listing):
    assert titles(listing.list_notes()) == ["New", "Mid", "Old"]
    assert titles(listing.list_notes(limit=2)) == ["New", "Mid"]


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        ({"types": ["fact"]}, ["New", "Old"]),
        ({"types": ["lessons"]}, []),
        ({"statuses": ["resolved"]}, ["Done"]),
        ({"statuses": ["resolved", "superseded"]}, ["Gone", "Done"]),
        ({"tags": ["db"]}, ["New", "Old"]),  # nested tags match their parent
        ({"tags": ["#db/postgres"]}, ["New"]),
        ({"since": "7d"}, ["New", "Mid"]),
        ({"since": "48h"}, ["New"]),
        ({"importance": "high"}, ["Mid", "Old"]),
        ({"importance": "9"}, ["Old"]),
        ({"types": ["fact"], "since": "7d"}, ["New"]),
    ],
)
def test_list_filters(listing, kwargs, expected):
    assert titles(listing.list_notes(**kwargs)) == expected


@pytest.mark.parametrize(
    "kwargs, message",
    [({"since": "yesterday"}, "--since"), ({"importance": "0"}, "--importance"),
     ({"importance": "huge"}, "--importance"), ({"scope": "team"}, "--scope")],
)  # fmt: skip
def test_list_bad_filters(listing, kwargs, message):
    with pytest.raises(BadInput, match=message):
        listing.list_notes(**kwargs)


def test_list_since_far_back_is_everything(listing):
    assert titles(listing.list_notes(since="99999999d")) == ["New", "Mid", "Old"]


# ------------------------------------------------------------------ edit


def test_edit_content_keeps_frontmatter_and_heading(demo):
    before = meta(demo, ADVISORY)
    result = demo.edit("yx66znwj", content="New body.", now=NOW)
    assert result == {"id": "yx66znwj", "path": ADVISORY, "changed": True}
    text = read(demo, ADVISORY)
    assert text.endswith("\n---\n# Use Postgres advisory locks for job leasing\n\nNew body.\n")
    assert meta(demo, ADVISORY) == {**before, "updated": dt.datetime(2026, 6, 1, 12, 0)}


def test_edit_set_and_add_tag_rewrite_only_those_keys(demo):
    before = read(demo, ADVISORY)
    demo.edit("yx66znwj", sets=["importance=9"], add_tags=["#locks", "Postgres"], now=NOW)
    expected = (
        before.replace("importance: 8\n", "importance: 9\n")
        .replace(
            "tags: [jobs, postgres, leasing, concurrency]",
            "tags: [jobs, postgres, leasing, concurrency, locks]",
        )
        .replace("updated: 2026-11-06T09:12:00Z", "updated: 2026-06-01T12:00:00")
    )
    assert read(demo, ADVISORY) == expected  # reviewed_by and every other byte kept


def test_edit_add_tag_to_a_string_tag_list_ignores_inline_tags(vault):
    write(vault, "n.md", "---\ntags: a, b\n---\n# N\n\ntext #inline\n")
    vault.edit("n.md", add_tags=["c"])
    assert meta(vault, "n.md")["tags"] == ["a", "b", "c"]


def test_edit_set_values(vault):
    write(vault, "n.md", "# N\n")
    sets = ["title=Use X: because Y", "source=issue #3", "tags=[a, b]", "importance=7", "when=2026-01-01"]
    vault.edit("n.md", sets=sets)
    assert meta(vault, "n.md") == {
        "title": "Use X: because Y", "source": "issue #3", "tags": ["a", "b"], "importance": 7,
        "when": "2026-01-01", "updated": meta(vault, "n.md")["updated"],
    }  # fmt: skip


def test_edit_cannot_change_the_id(demo):
    before = read(demo, ADVISORY)
    with pytest.raises(BadInput, match="id"):
        demo.edit("yx66znwj", sets=["id=newid123"])
    assert read(demo, ADVISORY) == before


@pytest.mark.parametrize("assignment", ["noequals", "=value", "-x=1", "a:b=1", "a#b=1"])
def test_edit_bad_set(demo, assignment):
    with pytest.raises(BadInput, match="--set"):
        demo.edit("yx66znwj", sets=[assignment])


def test_parse_assignment_values():
    assert parse_assignment("k=7") == ("k", 7)
    assert parse_assignment("k= spaced value ") == ("k", "spaced value")
    assert parse_assignment("k=") == ("k", "")
    assert parse_assignment("k='quoted #1'") == ("k", "quoted #1")
    assert parse_assignment("k={a: 1}") == ("k", {"a": 1})


def test_edit_guard_refuses_a_stale_hash(demo):
    stale = content_hash(read(demo, ADVISORY))
    write(demo, ADVISORY, read(demo, ADVISORY) + "\nedited elsewhere\n")
    before = read(demo, ADVISORY)
    with pytest.raises(Conflict):
        demo.edit("yx66znwj", sets=["importance=2"], expected_hash=stale)
    assert read(demo, ADVISORY) == before
    demo.edit("yx66znwj", sets=["importance=2"], expected_hash=content_hash(before))
    assert meta(demo, ADVISORY)["importance"] == 2


def test_edit_note_without_id_stays_without_id(demo):
    demo.edit(NO_ID, sets=["importance=6"])
    assert "id" not in meta(demo, NO_ID) and meta(demo, NO_ID)["importance"] == 6


def test_edit_without_changes_writes_nothing(demo):
    before = (demo.root / ADVISORY).stat().st_mtime_ns
    assert demo.edit("yx66znwj")["changed"] is False
    assert (demo.root / ADVISORY).stat().st_mtime_ns == before


def test_edit_keeps_crlf(vault):
    (vault.root / "n.md").write_bytes(b"---\r\ntitle: N\r\n---\r\n# N\r\n\r\nold\r\n")
    vault.edit("n.md", content="new\nlines", sets=["importance=3"], now=NOW)
    assert (vault.root / "n.md").read_bytes() == (
        b"---\r\ntitle: N\r\nimportance: 3\r\nupdated: 2026-06-01T12:00:00\r\n---\r\n# N\r\n\r\nnew\r\nlines\r\n"
    )


# ------------------------------------------------------------------ delete and stats


def test_delete_moves_to_trash(demo):
    result = demo.delete("yx66znwj")
    assert result == {"id": "yx66znwj", "path": ADVISORY, "trashed_to": ".trash/" + ADVISORY}
    assert not (demo.root / ADVISORY).exists() and (demo.root / ".trash" / ADVISORY).is_file()
    with pytest.raises(NoteNotFound):
        demo.find("yx66znwj")


def test_stats(listing):
    s = listing.stats()
    assert s["notes"] == 5
    assert s["by_type"] == {"fact": 2, "lesson": 2, "decision": 1}
    assert s["by_status"] == {"active": 3, "resolved": 1, "superseded": 1}
    assert s["by_importance"] == {"9": 1, "8": 1, "5": 2, "3": 1}
    assert s["notes_bytes"] == sum(
        len(b) for p, b in snapshot(listing.root).items() if p.endswith(".md") and "/" in p
    )
    assert s["index_bytes"] == 0


def test_stats_of_an_empty_vault(vault):
    s = vault.stats()
    assert (s["notes"], s["oldest"], s["newest"], s["by_type"]) == (0, None, None, {})


# ------------------------------------------------------------------ export / import


def test_export_import_round_trip_is_byte_identical(demo, tmp_path, fake_embedder):
    data = demo.export()
    assert data["format"] == EXPORT_FORMAT and len(data["notes"]) == len(demo.store.list_paths())
    target = tmp_path / "restored"
    init_vault(target)
    restored = Vault(target, embedder=fake_embedder)
    result = restored.import_(data)
    assert result["imported"] == len(data["notes"]) and result["skipped_existing"] == 0
    for item in data["notes"]:
        assert (target / item["path"]).read_bytes() == (demo.root / item["path"]).read_bytes()
    assert restored.store.list_paths() == demo.store.list_paths()


def test_import_again_skips_everything(demo):
    before = snapshot(demo.root)
    result = demo.import_(demo.export())
    assert result == {
        "imported": 0,
        "skipped_existing": len(demo.store.list_paths()),
        "paths": [],
        "usage_rows": 0,
    }
    assert snapshot(demo.root) == before


def test_import_skips_a_known_id_at_another_path(demo):
    data = {"format": EXPORT_FORMAT, "notes": [{"path": "elsewhere/Copy.md", "text": read(demo, ADVISORY)}]}
    assert demo.import_(data)["skipped_existing"] == 1
    assert not (demo.root / "elsewhere").exists()


def test_import_restores_a_note_with_broken_yaml_as_it_was(vault):
    data = {"format": EXPORT_FORMAT, "notes": [{"path": "bad.md", "text": "---\na: [\n---\nbody"}]}
    assert vault.import_(data)["imported"] == 1
    assert read(vault, "bad.md") == "---\na: [\n---\nbody"


@pytest.mark.parametrize(
    "path", ["../escape.md", "a/../../escape.md", "/tmp/escape.md", ".vaultmem/x.md", "a/../b.md"]
)
def test_import_refuses_paths_outside_or_hidden(vault, path):
    data = {"format": EXPORT_FORMAT, "notes": [{"path": "ok.md", "text": "x"}, {"path": path, "text": "x"}]}
    with pytest.raises(VaultError):
        vault.import_(data)
    assert not (vault.root.parent / "escape.md").exists()
    assert not (vault.root / "ok.md").exists()  # nothing is written when one entry is bad


@pytest.mark.parametrize(
    "data",
    [[], {"notes": []}, {"format": "other/1", "notes": []}, {"format": EXPORT_FORMAT, "notes": {}},
     {"format": EXPORT_FORMAT, "notes": ["text"]}, {"format": EXPORT_FORMAT, "notes": [{"path": "a.md"}]},
     {"format": EXPORT_FORMAT, "notes": [{"path": "a.txt", "text": "x"}]},
     {"format": EXPORT_FORMAT, "notes": [{"path": 3, "text": "x"}]}],
)  # fmt: skip
def test_import_malformed_export(vault, data):
    with pytest.raises(BadInput):
        vault.import_(data)
    assert vault.store.list_paths() == []


def test_export_hands_unreadable_files_back_instead_of_printing(demo, monkeypatch, capsys):
    """Library code does not print: ops.export wrote "skipped ..." to stderr itself (issue 23)."""
    real = demo.store.read_text
    broken = sorted(demo.store.list_paths())[0]

    def read_text(path):
        if path == broken:
            raise OSError("unreadable")
        return real(path)

    monkeypatch.setattr(demo.store, "read_text", read_text)
    data = demo.export()
    assert data["skipped"] == [{"path": broken, "error": "unreadable"}]
    assert broken not in {n["path"] for n in data["notes"]}
    assert capsys.readouterr() == ("", "")
