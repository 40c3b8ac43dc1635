"""Lifecycle: resolve, resolve --source, supersede, reopen (library and CLI), their guard
against concurrent edits, auto-supersede on remember and duplicate detection."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest
from helpers import failed, vaultmem, write
from typer.testing import CliRunner

from vaultmem.cli.app import app
from vaultmem.core.errors import BadInput, Conflict, NoteNotFound
from vaultmem.core.note import parse
from vaultmem.memory import lifecycle
from vaultmem.memory.lifecycle import memory_text, start_of
from vaultmem.vault import Vault

# A hand-written note: a comment, unknown keys, odd spacing, a flow mapping value and a body
# link. Transitions may only touch status / superseded_by / supersedes / valid_until / valid_from.
OLD = (
    "---\n"
    "id: old00001\n"
    "title: Cache layer\n"
    "type: decision\n"
    "status: active\n"
    "# a comment that stays\n"
    "importance: 6\n"
    "tags: [cache, redis]\n"
    "custom_key: {nested: true, list: [1, 2]}\n"
    "weird:    spacing kept   \n"
    "context: [app/cache.py]\n"
    "source: agent-a\n"
    "---\n"
    "# Cache layer\n"
    "\n"
    "We use Redis for the session cache because it is fast. See [[Deploy notes]].\n"
)
NEW = (
    "---\n"
    "id: new00001\n"
    "title: Cache layer v2\n"
    "type: decision\n"
    "x-owner: dana   # inline comment\n"
    "source: agent-b\n"
    "---\n"
    "# Cache layer v2\n"
    "\n"
    "Switched the session cache to Memcached for lower memory use.\n"
)
PLAIN = "# Loose idea\n\nA note without any frontmatter at all.\n"  # no frontmatter, no id

OLD_PATH, NEW_PATH, PLAIN_PATH = (
    "decisions/Cache layer.md",
    "decisions/Cache layer v2.md",
    "facts/Loose idea.md",
)


def read(root: Path, rel: str) -> str:
    return (root / rel).read_bytes().decode("utf-8")


def meta(root: Path, rel: str) -> dict:
    return parse(read(root, rel), rel).meta


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the vault except vaultmem's own state."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and not {".vaultmem", ".vaultmem-usage"} & set(p.relative_to(root).parts)}  # fmt: skip


def cos(a: tuple[str, str], b: tuple[str, str], embedder) -> float:
    x = embedder.embed([memory_text(*a), memory_text(*b)])
    return float(np.dot(x[0], x[1]))


@pytest.fixture
def root(empty_vault) -> Path:
    write(empty_vault, OLD_PATH, OLD)
    write(empty_vault, NEW_PATH, NEW)
    write(empty_vault, PLAIN_PATH, PLAIN)
    write(
        empty_vault,
        "facts/Deploy notes.md",
        "---\nid: dep00001\ntype: fact\nsource: agent-a\nstatus: resolved\n---\n# Deploy notes\n\nFly.io.\n",
    )
    return empty_vault


@pytest.fixture
def vault(root, open_vault):
    return open_vault(root)


# ------------------------------------------------------------------ resolve


def test_resolve_rewrites_status_in_place_and_nothing_else(vault, root):
    before = snapshot(root)
    r = vault.resolve("old00001")
    assert (r["id"], r["path"], r["action"], r["changed"]) == ("old00001", OLD_PATH, "resolved", True)
    assert read(root, OLD_PATH) == OLD.replace("status: active\n", "status: resolved\n")
    after = snapshot(root)
    assert {p for p in after if after[p] != before.get(p)} == {OLD_PATH}
    assert vault.records()[OLD_PATH].status == "resolved"  # the index follows
    again = vault.resolve(OLD_PATH)
    assert again["changed"] is False and read(root, OLD_PATH) == OLD.replace(
        "status: active\n", "status: resolved\n"
    )


def test_resolve_appends_status_when_absent_and_adds_frontmatter_when_none(vault, root):
    vault.resolve("new00001")
    assert read(root, NEW_PATH) == NEW.replace(
        "source: agent-b\n---", "source: agent-b\nstatus: resolved\n---"
    )
    vault.resolve("Loose idea")  # by title: a note without frontmatter gets one, body intact
    assert read(root, PLAIN_PATH) == "---\nstatus: resolved\n---\n" + PLAIN


def test_resolve_keeps_crlf_line_endings(vault, root):
    crlf = OLD.replace("\n", "\r\n")
    write(root, OLD_PATH, crlf)
    vault.resolve("old00001")
    assert read(root, OLD_PATH) == crlf.replace("status: active\r\n", "status: resolved\r\n")


def test_resolved_memory_leaves_recall_and_reopen_brings_it_back(vault):
    assert "old00001" in [h.id for h in vault.recall("redis session cache", mode="bm25", log=False)]
    vault.resolve("old00001")
    assert "old00001" not in [h.id for h in vault.recall("redis session cache", mode="bm25", log=False)]
    vault.reopen("old00001")
    assert vault.recall("redis session cache", mode="bm25", log=False)[0].id == "old00001"


def test_resolve_source_resolves_only_that_sources_active_memories(vault, root):
    write(
        root, "facts/Other a.md", "---\nid: oth00001\ntype: fact\nsource: agent-a\n---\n# Other a\n\nText.\n"
    )
    before = snapshot(root)
    done = vault.resolve_source("agent-a")
    assert sorted(d["id"] for d in done) == ["old00001", "oth00001"]
    assert all(d["changed"] and d["action"] == "resolved" for d in done)
    after = snapshot(root)
    assert {p for p in after if after[p] != before[p]} == {
        OLD_PATH,
        "facts/Other a.md",
    }  # dep00001 was resolved already
    assert read(root, OLD_PATH) == OLD.replace("status: active\n", "status: resolved\n")
    assert vault.resolve_source("agent-a") == [] and snapshot(root) == after
    assert vault.resolve_source("nobody") == []


# ------------------------------------------------------------------ supersede and reopen


def test_supersede_writes_both_sides_and_nothing_else(vault, root):
    before = snapshot(root)
    since = start_of(vault.records()[NEW_PATH])  # the day the new one became true
    r = vault.supersede("old00001", "Cache layer v2")
    assert (r["id"], r["action"], r["changed"], r["by"]) == ("old00001", "superseded", True, "new00001")
    assert read(root, OLD_PATH) == OLD.replace("status: active\n", "status: superseded\n").replace(
        "source: agent-a\n---", f"source: agent-a\nsuperseded_by: '[[Cache layer v2]]'\nvalid_until: {since}\n---")  # fmt: skip
    assert read(root, NEW_PATH) == NEW.replace(
        "source: agent-b\n---", f"source: agent-b\nsupersedes: ['[[Cache layer]]']\nvalid_from: {since}\n---")  # fmt: skip
    after = snapshot(root)
    assert {p for p in after if after[p] != before[p]} == {OLD_PATH, NEW_PATH}
    recs = vault.records()
    assert recs[OLD_PATH].status == "superseded" and recs[OLD_PATH].superseded_by == "Cache layer v2"
    assert vault.supersede("old00001", "new00001")["changed"] is False and snapshot(root) == after


def test_a_memory_superseding_two_keeps_a_list(vault, root):
    vault.supersede("old00001", "new00001")
    vault.supersede(PLAIN_PATH, "new00001")
    assert meta(root, NEW_PATH)["supersedes"] == ["[[Cache layer]]", "[[Loose idea]]"]
    since = dt.date.fromisoformat(start_of(vault.records()[NEW_PATH]))
    assert meta(root, PLAIN_PATH) == {
        "status": "superseded",
        "superseded_by": "[[Cache layer v2]]",
        "valid_until": since,
    }


def test_superseded_memory_is_replaced_in_recall(vault):
    vault.supersede("old00001", "new00001")
    hits = vault.recall("redis", mode="bm25", log=False)  # only the old note says "redis"
    assert [h.id for h in hits][:1] == ["new00001"] and hits[0].via == "supersedes old00001"
    assert "old00001" not in [h.id for h in hits]


def test_reopen_restores_the_original_bytes(vault, root):
    vault.supersede("old00001", "new00001")
    r = vault.reopen("old00001")
    assert (r["action"], r["changed"]) == ("reopened", True)
    assert read(root, OLD_PATH) == OLD  # status back in place, superseded_by removed
    assert vault.records()[OLD_PATH].status == "active"
    assert vault.reopen("old00001")["changed"] is False
    for status in ("resolved", "archived"):
        write(root, NEW_PATH, NEW.replace("source: agent-b\n", f"source: agent-b\nstatus: {status}\n"))
        vault.reopen("new00001")
        assert read(root, NEW_PATH) == NEW.replace("source: agent-b\n", "source: agent-b\nstatus: active\n")


def test_errors(vault, root):
    before = snapshot(root)
    with pytest.raises(NoteNotFound):
        vault.resolve("nosuch99")
    with pytest.raises(NoteNotFound):
        vault.reopen("nosuch99")
    with pytest.raises(NoteNotFound):
        vault.supersede("old00001", "nosuch99")
    with pytest.raises(BadInput, match="itself"):
        vault.supersede("old00001", OLD_PATH)
    assert snapshot(root) == before


# ------------------------------------------------------------------ guarded writes


@pytest.fixture
def meddle(monkeypatch, root):
    """Make another editor change a file between vaultmem's read and its write."""
    real = lifecycle.set_fields
    calls = {"n": 0}

    def install(rel: str, on_call: int = 1) -> str:
        edited = read(root, rel).replace("\n# ", "\n# Edited elsewhere.\n# ", 1)

        def set_fields(text, *a, **k):
            calls["n"] += 1
            if calls["n"] == on_call:
                write(root, rel, edited)
            return real(text, *a, **k)

        monkeypatch.setattr(lifecycle, "set_fields", set_fields)
        return edited

    return install


@pytest.mark.parametrize("op", ["resolve", "reopen", "resolve_source"])
def test_a_concurrent_edit_is_a_conflict_and_the_file_is_untouched(vault, root, meddle, op):
    if op == "reopen":
        write(root, OLD_PATH, OLD.replace("status: active", "status: resolved"))
    edited = meddle(OLD_PATH)
    with pytest.raises(Conflict, match="changed on disk"):
        {"resolve": lambda: vault.resolve("old00001"), "reopen": lambda: vault.reopen("old00001"),
         "resolve_source": lambda: vault.resolve_source("agent-a")}[op]()  # fmt: skip
    assert read(root, OLD_PATH) == edited


def test_supersede_conflict_on_old_writes_neither(vault, root, meddle):
    edited = meddle(OLD_PATH)
    with pytest.raises(Conflict):
        vault.supersede("old00001", "new00001")
    assert read(root, OLD_PATH) == edited and read(root, NEW_PATH) == NEW


def test_supersede_conflict_on_new_leaves_the_concurrent_edit(vault, root, meddle):
    edited = meddle(NEW_PATH, on_call=2)  # the second write is the `supersedes` side
    with pytest.raises(Conflict):
        vault.supersede("old00001", "new00001")
    assert read(root, NEW_PATH) == edited


def test_read_text_racing_a_writer_is_a_conflict(vault, root, monkeypatch):
    """The guard compares with what was read: a read that saw an older version refuses to write."""
    from vaultmem.core.store import Store

    real = Store.read_text
    state = {"first": True}

    def stale(self, rel):
        text = real(self, rel)
        if rel == OLD_PATH and state["first"]:
            state["first"] = False
            write(root, OLD_PATH, OLD.replace("importance: 6", "importance: 9"))  # lands after our read
        return text

    rec = vault.find("old00001")
    monkeypatch.setattr(Store, "read_text", stale)
    with pytest.raises(Conflict):
        lifecycle.change(vault, rec, {"status": "resolved"})
    assert read(root, OLD_PATH) == OLD.replace("importance: 6", "importance: 9")


# ------------------------------------------------------------------ CLI


@pytest.fixture
def run(root, fake_model, backend):
    def invoke(*args: str):
        return CliRunner().invoke(app, list(args), env={"VAULTMEM_VAULT": str(root)})

    return invoke


def ok(result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout


def test_cli_resolve_and_reopen(run, root):
    assert (
        ok(run("resolve", "old00001")) == "resolved: old00001  Cache layer\nundo: vaultmem reopen old00001\n"
    )
    assert read(root, OLD_PATH) == OLD.replace("status: active\n", "status: resolved\n")
    assert ok(run("resolve", "old00001")) == "already resolved: old00001  Cache layer\n"
    assert ok(run("reopen", "old00001")) == (
        "reopened: old00001  Cache layer\nundo: vaultmem edit old00001 --set status=resolved\n"
    )
    assert read(root, OLD_PATH) == OLD


def test_cli_resolve_source(run, root):
    data = json.loads(ok(run("resolve", "--source", "agent-a", "--json")))
    assert [(d["id"], d["changed"]) for d in data] == [("old00001", True)]
    assert meta(root, OLD_PATH)["status"] == "resolved" and read(root, NEW_PATH) == NEW
    result = run("resolve", "--source", "agent-a")
    assert result.exit_code == 0 and "nothing to change" in result.stderr


def test_cli_supersede(run, root):
    out = ok(run("supersede", "old00001", "new00001"))
    assert out == "superseded by new00001: old00001  Cache layer\nundo: vaultmem reopen old00001\n"
    assert meta(root, OLD_PATH)["superseded_by"] == "[[Cache layer v2]]"
    assert meta(root, NEW_PATH)["supersedes"] == ["[[Cache layer]]"]
    hits = json.loads(ok(run("recall", "redis", "--mode", "bm25", "--json")))["results"]
    assert hits[0]["id"] == "new00001" and hits[0]["via"] == "supersedes old00001"


def test_superseding_back_is_refused(run, root):
    ok(run("supersede", "old00001", "new00001"))
    before = snapshot(root)
    assert "loop" in failed(run("supersede", "new00001", "old00001"), 2)
    assert snapshot(root) == before
    hits = json.loads(ok(run("recall", "redis", "--mode", "bm25", "--json")))["results"]
    assert hits[0]["id"] == "new00001"  # one of the two stays in recall


def test_supersede_back_through_a_chain_is_refused(vault, root):
    write(root, "facts/Third.md", "---\nid: thr00001\ntitle: Third\ntype: decision\n---\n# Third\n\nx.\n")
    vault.supersede("old00001", "new00001")
    vault.supersede("new00001", "thr00001")
    with pytest.raises(BadInput, match="loop"):
        vault.supersede("thr00001", "old00001")


@pytest.mark.parametrize(
    "args, code, message",
    [
        (("resolve",), 2, "name the memory to resolve"),
        (("resolve", "old00001", "--source", "agent-a"), 2, "not both"),
        (("resolve", "nosuch99"), 3, "nosuch99"),
        (("reopen", "nosuch99"), 3, "nosuch99"),
        (("supersede", "nosuch99", "new00001"), 3, "nosuch99"),
        (("supersede", "old00001", "Cache layer"), 2, "itself"),
    ],
)
def test_cli_errors_are_one_line(run, root, args, code, message):
    before = snapshot(root)
    assert message in failed(run(*args), code)
    assert snapshot(root) == before


def test_cli_conflict_is_one_line(run, root, meddle, backend):
    if backend == "service":
        pytest.skip("the other editor is patched into this process, which the service is not")
    edited = meddle(OLD_PATH)
    assert "changed on disk" in failed(run("resolve", "old00001"), 4)
    assert read(root, OLD_PATH) == edited


# ------------------------------------------------------------------ auto-supersede on remember

A = ("Cache layer", "We use Redis for the session cache because it is fast.")
B = ("Cache layer choice", "Switched the session cache to Memcached for lower memory.")


@pytest.fixture
def fresh(empty_vault, open_vault):
    return open_vault(empty_vault)


R_OLD = ("Session cache on Redis", "We use Redis for the session cache because it is fast.")
R_NEW = (
    "Session cache on Memcached",
    "We replaced Redis with Memcached for the session cache.",
)  # retracts "Redis"


def status(v: Vault, rel: str) -> str:
    return meta(v.root, rel).get("status", "active")


def test_similarity_alone_never_supersedes_it_flags(fresh, fake_embedder):
    """B is very like A (0.77 here, the SQLite/purge decisions were 0.54 with the real model)
    but retracts none of A's own words: A stays, and is shown as possibly outdated."""
    assert cos(A, B, fake_embedder) > 0.6  # (embedded without the "# title" heading since issue 36)
    old = fresh.remember("decision", *A, context=["app/cache.py"], source="s1")
    new = fresh.remember("decision", *B, context=["app/cache.py"], source="s2")
    assert new["superseded"] == [] and status(fresh, old["path"]) == "active"
    assert [p["id"] for p in new["possible_updates"]] == [old["id"]]
    assert meta(fresh.root, new["path"])["may_update"] == ["[[Cache layer]]"]
    hits = {h.id: h for h in fresh.recall("redis fast session cache", k=5, log=False)}
    assert hits[old["id"]].outdated_by == ["Cache layer choice"] and hits[new["id"]].outdated_by == []
    assert "(may be outdated by [[Cache layer choice]])" in fresh.wake(task="redis session cache")["text"]


@pytest.mark.parametrize("old_context, new_context, superseded", [
    (["app/cache.py"], ["App/Cache.py"], True),  # a shared context entry
    ([], [], True),  # title key words in common ("session", "cache")
])  # fmt: skip
def test_a_retraction_of_the_old_title_supersedes(fresh, old_context, new_context, superseded):
    fresh.config["lifecycle"]["supersede_retract_cosine"] = -1.0  # the test embedder's cosines are arbitrary
    old = fresh.remember("decision", *R_OLD, context=old_context, source="s1")
    new = fresh.remember("decision", *R_NEW, context=new_context, source="s2")
    assert [s["id"] for s in new["superseded"]] == [old["id"]]
    assert status(fresh, old["path"]) == "superseded"
    assert meta(fresh.root, old["path"])["superseded_by"] == "[[Session cache on Memcached]]"
    assert meta(fresh.root, new["path"])["supersedes"] == ["[[Session cache on Redis]]"]


def test_a_retraction_of_a_word_outside_the_old_title_is_only_possible(fresh):
    fresh.config["lifecycle"].update(supersede_retract_cosine=-1.0, possible_update=-1.0)
    old = fresh.remember("decision", "Use SQLite for the cache", "Because the data is small and local; Redis would "
                         "be another service to run. See [[Cache invalidation on deploy]].", anchor="App")  # fmt: skip
    new = fresh.remember("decision", "Purge the cache in the post-deploy hook", "Decided to delete cache.db after "
                         "every deploy instead of versioning the cache file.", tags=["cache"], anchor="App")  # fmt: skip
    assert new["superseded"] == [] and status(fresh, old["path"]) == "active"
    assert [p["id"] for p in new["possible_updates"]] == [old["id"]]


def test_the_writer_naming_the_old_memory_supersedes_it(fresh):
    old = fresh.remember("fact", "Build machine", "CI runs on the shared Jenkins box.")
    other = fresh.remember("fact", "Unrelated", "Lunch is at noon.")
    new = fresh.remember(
        "fact", "Self-hosted runners", "CI uses GitHub runners.", supersedes=[old["id"], "Build machine"]
    )
    assert new["superseded"] == [
        {"id": old["id"], "title": "Build machine", "similarity": None, "named": True}
    ]
    assert status(fresh, old["path"]) == "superseded" and status(fresh, other["path"]) == "active"
    with pytest.raises(BadInput, match="superseded, not active"):
        fresh.remember("fact", "Runners again", "CI uses other runners.", supersedes=[old["id"]])
    with pytest.raises(NoteNotFound):
        fresh.remember("fact", "Runners thrice", "CI uses no runners.", supersedes=["nosuch99"])


def test_only_the_same_type_is_superseded(fresh):
    fresh.config["lifecycle"]["supersede_retract_cosine"] = -1.0
    old = fresh.remember("fact", *R_OLD)
    new = fresh.remember("decision", *R_NEW)
    assert new["superseded"] == [] and status(fresh, old["path"]) == "active"


def test_session_summaries_are_never_superseded(fresh):
    fresh.config["lifecycle"]["supersede_retract_cosine"] = -1.0
    old = fresh.remember("session_summary", *R_OLD, context=["app/cache.py"], source="s1")
    new = fresh.remember("session_summary", *R_NEW, context=["app/cache.py"], source="s2")
    assert new["superseded"] == [] and status(fresh, old["path"]) == "active"


@pytest.mark.parametrize(
    "old_source, new_source, superseded",
    [("s1", "s1", False), ("s1", "s2", True), ("s1", None, True), (None, "s2", True), (None, None, True)],
)
def test_never_against_the_same_source(fresh, old_source, new_source, superseded):
    fresh.config["lifecycle"]["supersede_retract_cosine"] = -1.0
    old = fresh.remember("decision", *R_OLD, source=old_source)
    new = fresh.remember("decision", *R_NEW, source=new_source)
    assert bool(new["superseded"]) is superseded
    assert status(fresh, old["path"]) == ("superseded" if superseded else "active")


C = ("Session cache eviction on Redis", "The Redis session cache evicts the least recently used keys.")


@pytest.mark.parametrize("candidates, expected", [(1, ["a"]), (5, ["a", "c"])])
def test_only_the_most_similar_candidates_are_compared(fresh, fake_embedder, candidates, expected):
    ab, cb = cos(R_OLD, R_NEW, fake_embedder), cos(C, R_NEW, fake_embedder)
    assert cb < ab  # both retracted by the new one, the first is the nearer one
    fresh.config["lifecycle"].update(supersede_retract_cosine=-1.0, supersede_candidates=candidates)
    ids = {
        "a": fresh.remember("decision", *R_OLD, source="s1")["id"],
        "c": fresh.remember("decision", *C, source="s1")["id"],
    }
    new = fresh.remember("decision", *R_NEW, source="s2")
    assert [s["id"] for s in new["superseded"]] == [ids[x] for x in expected]


def test_remember_on_the_cli_prints_what_it_superseded(empty_vault, fake_embedder, fake_model):
    c = cos(R_OLD, R_NEW, fake_embedder)
    (empty_vault / ".vaultmem.toml").write_text("[lifecycle]\nsupersede_retract_cosine = -1\n")
    env = {"VAULTMEM_VAULT": str(empty_vault)}
    first = json.loads(ok(CliRunner().invoke(app, ["remember", "decision", *R_OLD, "--json"], env=env)))
    out = ok(CliRunner().invoke(app, ["remember", "decision", *R_NEW, "--source", "s2"], env=env))
    assert out.splitlines()[1] == f"superseded {first['id']}  {R_OLD[0]}  (similarity {round(c, 3)})"
    third = ok(CliRunner().invoke(app, ["remember", "fact", "Editor", "Neovim.", "--json"], env=env))
    out = ok(CliRunner().invoke(app, ["remember", "fact", "Editor now", "Helix.", "--supersedes",
                                      json.loads(third)["id"]], env=env))  # fmt: skip
    assert out.splitlines()[1] == f"superseded {json.loads(third)['id']}  Editor  (named)"


def test_recall_shows_the_replacement_for_the_old_words(fresh):
    fresh.config["lifecycle"]["supersede_retract_cosine"] = -1.0
    old = fresh.remember("decision", *R_OLD)
    new = fresh.remember("decision", *R_NEW)
    hits = fresh.recall("fast", k=5, log=False)  # a word only the old memory has
    assert hits[0].id == new["id"] and hits[0].via == f"supersedes {old['id']}"
    assert old["id"] not in [h.id for h in hits]
    assert old["id"] in [h.id for h in fresh.recall("fast", k=5, include_resolved=True, log=False)]


# ------------------------------------------------------------------ duplicates


def test_same_type_and_text_is_not_stored_again_and_tags_merge(fresh):
    first = fresh.remember("decision", *A, tags=["cache"])
    files = snapshot(fresh.root)
    again = fresh.remember("decision", "  cache LAYER ", "We use Redis  for the session\ncache because it is fast.",
                           tags=["cache", "#redis", "perf"])  # fmt: skip
    assert again["duplicate_of"] == again["id"] == first["id"] and again["path"] == first["path"]
    assert again["tags_added"] == ["redis", "perf"] and again["superseded"] == []
    assert set(snapshot(fresh.root)) == set(files)  # no new file
    assert meta(fresh.root, first["path"])["tags"] == ["cache", "redis", "perf"]
    third = fresh.remember("decision", *A, tags=["perf"])
    assert third["duplicate_of"] == first["id"] and third["tags_added"] == []
    assert snapshot(fresh.root)[first["path"]] == (fresh.root / first["path"]).read_bytes()


def test_near_identical_text_is_a_duplicate_by_vector(fresh, fake_embedder):
    first = fresh.remember("decision", *A)
    variant = ("Cache layer!", "We use Redis, for the session cache; because it is fast!")
    assert cos(A, variant, fake_embedder) >= fresh.config["lifecycle"]["duplicate"]
    again = fresh.remember("decision", *variant)
    assert again["duplicate_of"] == first["id"]
    assert len(list((fresh.root / "decisions").glob("*.md"))) == 1


def test_a_long_near_identical_memory_is_a_duplicate(fresh):
    """Compared as the index embeds it: chunked for the embedder's window (64 tokens here)."""
    paras = [
        " ".join(f"{word}{i}" for word in ("alpha", "beta", "gamma", "delta", "epsilon") * 4) + "."
        for i in range(3)
    ]
    first = fresh.remember("lesson", "Long lesson", "\n\n".join(paras))
    again = fresh.remember("lesson", "Long lesson", "\n\n".join(p.replace(".", "!") for p in paras))
    assert again["duplicate_of"] == first["id"]


def test_different_type_is_stored(fresh):
    first = fresh.remember("decision", *A)
    other = fresh.remember("fact", *A)
    assert other["duplicate_of"] is None and other["id"] != first["id"]
    assert (fresh.root / other["path"]).is_file() and status(fresh, first["path"]) == "active"


def test_a_tail_of_an_existing_memory_is_not_a_duplicate(fresh):
    """Only the same text is a duplicate: a new memory that repeats the end of one is kept (under
    the same title, added to that note, not a second file)."""
    first = fresh.remember("lesson", "Lunch", "We skipped lunch and had breakfast.")
    second = fresh.remember("lesson", "Lunch", "fast.")
    assert second["path"] == first["path"] and second["text_added"] == ["fast."]
    assert fresh.show(first["id"])["text"].rstrip().endswith("breakfast.\n\n## Also remembered\n\nfast.")
    third = fresh.remember("lesson", "Dinner", "fast.")
    assert third["duplicate_of"] is None and third["path"] != first["path"]


# issue 37: a new value in the old memory's slot, said to have changed, is an update on its own
SLOT_OLD = ("CI runs on ubuntu-20.04", "GitHub Actions CI jobs run on ubuntu-20.04 runners.")
SLOT_NEW = ("CI now runs on ubuntu-22.04", "GitHub Actions CI jobs now run on ubuntu-22.04 runners.")
NOT_THE_SLOT = {
    "another subject": ("Staging now runs on ubuntu-22.04", "The staging VMs now run ubuntu-22.04 LTS."),
    "an addition": ("CI now runs on ubuntu-22.04", "GitHub Actions CI jobs now also run on ubuntu-22.04."),
    "a negation": (
        "CI not moved to ubuntu-22.04",
        "CI jobs were not moved to ubuntu-22.04: a runner image bug.",
    ),
    "a part": ("CI now runs on ubuntu-22.04", "The lint job in CI now runs on ubuntu-22.04."),
}


def _remember(env: dict, *args: str) -> dict:
    return json.loads(ok(CliRunner().invoke(app, ["remember", "tech_context", *args, "--json"], env=env)))


def test_a_new_value_in_the_old_slot_supersedes_it_on_the_cli(empty_vault, fake_model):
    (empty_vault / ".vaultmem.toml").write_text("[lifecycle]\nsupersede_slot_cosine = -1\n")
    env = {"VAULTMEM_VAULT": str(empty_vault)}
    old = _remember(env, *SLOT_OLD, "--source", "s1")
    new = _remember(env, *SLOT_NEW, "--source", "s2")
    assert [s["id"] for s in new["superseded"]] == [old["id"]]
    assert meta(empty_vault, old["path"])["status"] == "superseded"
    assert meta(empty_vault, new["path"])["supersedes"] == ["[[CI runs on ubuntu-20.04]]"]


@pytest.mark.parametrize("shape", sorted(NOT_THE_SLOT))
def test_the_same_frame_for_another_subject_an_addition_or_a_negation_is_only_possible(
    empty_vault, fake_model, shape
):
    (empty_vault / ".vaultmem.toml").write_text(
        "[lifecycle]\nsupersede_slot_cosine = -1\nsupersede_retract_cosine = -1\npossible_update = -1\n"
    )
    env = {"VAULTMEM_VAULT": str(empty_vault)}
    old = _remember(env, *SLOT_OLD, "--source", "s1")
    new = _remember(env, *NOT_THE_SLOT[shape], "--source", "s2")
    assert new["superseded"] == [] and [p["id"] for p in new["possible_updates"]] == [old["id"]]
    assert meta(empty_vault, old["path"]).get("status", "active") == "active"


@pytest.mark.model
def test_a_new_value_in_the_old_slot_supersedes_it_with_the_real_model(empty_vault, real_model, capsys,
                                                                       monkeypatch):  # fmt: skip
    """Issue 37 through the CLI with the default model: "CI now runs on ubuntu-22.04" replaces
    "CI runs on ubuntu-20.04" on its own; staging on ubuntu-22.04 (the same frame, another
    subject) only flags it. (The console entry in this process, with the worker's model.)"""
    monkeypatch.setenv("VAULTMEM_VAULT", str(empty_vault))

    def remember(title: str, content: str) -> dict:
        r = vaultmem(capsys, "remember", "tech_context", title, content, "--context", ".github/workflows/ci.yml",
                     "--json")  # fmt: skip
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    old = remember(*SLOT_OLD)
    staging = remember(*NOT_THE_SLOT["another subject"])
    assert staging["superseded"] == [] and meta(empty_vault, old["path"]).get("status", "active") == "active"
    new = remember(*SLOT_NEW)
    assert [s["id"] for s in new["superseded"]] == [old["id"]]
    assert meta(empty_vault, old["path"])["status"] == "superseded"


def test_cli_duplicate_message(empty_vault, fake_model):
    env = {"VAULTMEM_VAULT": str(empty_vault)}
    first = ok(CliRunner().invoke(app, ["remember", "decision", *A], env=env)).split()[0]
    out = ok(CliRunner().invoke(app, ["remember", "decision", *A, "--tag", "redis"], env=env))
    assert out == f"already remembered as {first}  decisions/Cache layer.md; added tags redis\n"


@pytest.mark.model
def test_a_different_decision_under_one_anchor_stays_and_is_flagged_with_the_real_model(
    empty_vault, real_model, capsys, monkeypatch
):
    """The issue's reproduction through the CLI with the default model: the purge decision
    (cosine 0.541 to the SQLite one) once superseded it; now it is a possible update, and
    recall and wake show the SQLite decision as possibly outdated. (The console entry in this
    process, with the worker's model.)"""
    monkeypatch.setenv("VAULTMEM_VAULT", str(empty_vault))

    def cli(*args: str) -> str:
        r = vaultmem(capsys, *args)
        assert r.returncode == 0, r.stderr
        return r.stdout

    old = json.loads(cli("remember", "decision", "Use SQLite for the cache", "Because the data is small and local; "
                         "Redis would be another service to run. See [[Cache invalidation on deploy]].",
                         "--anchor", "Project: App", "--json"))  # fmt: skip
    new = json.loads(cli("remember", "decision", "Purge the cache in the post-deploy hook", "Decided to delete "
                         "cache.db after every deploy instead of versioning the cache file.", "--tag", "cache",
                         "--anchor", "Project: App", "--json"))  # fmt: skip
    assert new["superseded"] == [] and [p["id"] for p in new["possible_updates"]] == [old["id"]]
    assert meta(empty_vault, old["path"]).get("status") == "active"
    hits = json.loads(cli("recall", "which database for the cache", "--json"))["results"]
    mine = [h for h in hits if h["id"] == old["id"]]
    assert mine and mine[0]["outdated_by"] == ["Purge the cache in the post-deploy hook"]
    assert "may be outdated by [[Purge the cache in the post-deploy hook]]" in cli(
        "recall", "which database for the cache"
    )
    assert "(may be outdated by [[Purge the cache in the post-deploy hook]])" in cli(
        "wake", "--anchor", "Project: App"
    )
