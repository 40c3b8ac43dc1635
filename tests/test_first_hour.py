"""What a new user tripped over in the first hour (issue 29), each through the CLI (typer's
CliRunner with the small test embedder, or the installed ``vaultmem`` in a subprocess) or the
MCP SDK client.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import write
from typer.testing import CliRunner

from vaultmem.cli.app import app

VAULTMEM = [str(Path(sys.executable).with_name("vaultmem"))]  # the installed console script


@pytest.fixture
def run(empty_vault, fake_model, backend):
    """Run vaultmem in ``empty_vault`` (VAULTMEM_VAULT) with the small test embedder."""
    env = {"VAULTMEM_VAULT": str(empty_vault)}
    return lambda *args, input=None: CliRunner().invoke(app, list(args), env=env, input=input)


def ok(result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout


def note(rid: str | None, title: str, body: str, **fields) -> str:
    head = {**({"id": rid} if rid else {}), "title": title, **fields}
    return "---\n" + yaml.safe_dump(head, sort_keys=False) + f"---\n# {title}\n\n{body}\n"


SEVEN = {  # one note about caching, six about other things
    "cache": ("Use SQLite for the cache", "We cache rendered pages in SQLite because the data is small and local."),
    "redis": ("Redis evicts keys under memory pressure", "Set maxmemory-policy to noeviction for the job queue."),
    "fly": ("Deploy target is Fly.io", "We deploy on Fly.io in the iad region."),
    "tabs": ("User prefers tabs", "Indent with tabs in Go files."),
    "stripe": ("Stripe webhooks retry for three days", "Make webhook handlers idempotent."),
    "berths": ("The marina has 42 berths", "Twelve take boats over 15 m."),
    "locks": ("Postgres advisory locks for job leasing", "Chosen over Redis locks for simplicity."),
}  # fmt: skip


def seven_notes(root: Path, **fields) -> None:
    for rid, (title, body) in SEVEN.items():
        write(root, f"notes/{title}.md", note(f"{rid}0000"[:8], title, body, type="fact", **fields))


def recall(run, *args: str) -> list[dict]:
    return json.loads(ok(run("recall", *args, "--json", "--explain")))["results"]


# ------------------------------------------------------------------ recall


def test_recall_never_pads_with_hits_without_evidence(run, empty_vault):
    seven_notes(empty_vault)
    hits = recall(run, "how do we cache things?")
    assert hits[0]["id"] == "cache000"
    assert len(hits) < len(SEVEN)  # all 7 before, the unrelated ones at 0.000
    assert all(h["score"] > 0 or h["explain"]["bm25_raw"] > 0 for h in hits), hits
    text = ok(run("recall", "how do we cache things?"))
    assert " 0.000" not in text, text


def test_time_filter_with_no_note_in_its_range_returns_nothing(run, empty_vault):
    seven_notes(empty_vault, created="2026-11-20", updated="2026-11-20")
    out = run("recall", "cache in 2020", "--time", "filter", "--now", "2026-11-22", "--json")
    assert json.loads(ok(out))["results"] == []  # before: every note, outside the range, at 0.000
    assert (
        recall(run, "cache in 2020", "--now", "2026-11-22")[0]["id"] == "cache000"
    )  # boost: the text decides


def test_a_time_expression_reranks_relevant_notes_and_lifts_no_unrelated_one(run, empty_vault):
    seven_notes(empty_vault, created="2026-09-01", updated="2026-09-01")
    for rid, title, body in (("ttl00000", "Cache TTL is five minutes", "We set the cache TTL to five minutes."),
                             ("invoice0", "Invoices go out monthly", "Stripe sends the invoices on the first.")):  # fmt: skip
        write(empty_vault, f"notes/{title}.md", note(rid, title, body, type="fact", created="2026-11-12",
                                                      updated="2026-11-12"))  # fmt: skip
    hits = recall(run, "what did we change about the cache last week?", "--now", "2026-11-22")
    ids = [h["id"] for h in hits]
    assert ids[:2] == ["ttl00000", "cache000"], ids  # the dated relevant one first, then the other cache note
    # dated last week, but nothing to do with the cache: it was 2nd (+ time 1.000); now it gets no more of the
    # boost than its text earns (the test embedder finds it a little above average)
    lifted = {h["id"]: h["explain"]["time"] for h in hits}
    assert lifted.get("invoice0", 0) < 0.2 and lifted["ttl00000"] > 0.5, lifted
    # a query that names nothing but the time: the range alone selects
    assert {h["id"] for h in recall(run, "what happened last week?", "--now", "2026-11-22")[:2]} == {
        "ttl00000",
        "invoice0",
    }


def test_recall_rejects_an_unknown_type_like_remember(run, empty_vault):
    seven_notes(empty_vault)
    write(
        empty_vault,
        "notes/Standup.md",
        note("meet0000", "Standup", "We talked about the cache.", type="meeting"),
    )
    bad = run("recall", "cache", "--type", "bogus")
    assert bad.exit_code == 2 and "unknown type 'bogus'" in bad.stderr and "decision" in bad.stderr, (
        bad.output
    )
    assert "unknown type 'bogus'" in run("remember", "bogus", "T", "x").stderr  # the same words
    assert recall(run, "cache", "--type", "meeting")[0]["id"] == "meet0000"  # a type a note has is known
    assert recall(run, "cache", "--type", "Fact")[0]["id"] == "cache000"  # written as remember takes it


# ------------------------------------------------------------------ lifecycle


def meta(root: Path, rel: str) -> dict:
    return yaml.safe_load((root / rel).read_text().split("---\n")[1])


def test_reopen_takes_the_supersedes_link_off_the_newer_note(run, empty_vault):
    old = json.loads(ok(run("remember", "fact", "Deploy region iad", "The app runs in iad.", "--json")))
    new = json.loads(ok(run("remember", "fact", "Deploy region fra", "The app runs in fra now.", "--json")))
    ok(run("supersede", old["id"], new["id"]))
    assert meta(empty_vault, new["path"])["supersedes"] == ["[[Deploy region iad]]"]
    ok(run("reopen", old["id"]))
    assert meta(empty_vault, old["path"])["status"] == "active"
    assert "supersedes" not in meta(empty_vault, new["path"])  # before: graph exports still drew the edge
    graph = json.loads(ok(run("graph", "export", "--format", "json")))
    assert not [e for e in graph["edges"] if {"supersedes", "superseded_by"} & set(e[2])], graph


CONFLICTED = note("conf0001", "Cache size", "> [!warning] vaultmem merge conflict\\n\\n64 MB\\n\\n128 MB",
                  type="fact", status="conflict", status_before_conflict="active")  # fmt: skip


@pytest.mark.parametrize("settle", [("edit", "conf0001", "--set", "status=active"), ("resolve", "conf0001"),
                                    ("reopen", "conf0001")])  # fmt: skip
def test_a_settled_conflict_drops_status_before_conflict(run, empty_vault, settle):
    write(empty_vault, "facts/Cache size.md", CONFLICTED)
    ok(run(*settle))
    fields = meta(empty_vault, "facts/Cache size.md")
    assert fields["status"] != "conflict" and "status_before_conflict" not in fields, fields


def test_doctor_reports_a_note_left_in_conflict(run, empty_vault):
    write(empty_vault, "facts/Cache size.md", CONFLICTED)
    result = run("doctor")
    assert result.exit_code == 1 and "Cache size.md" in result.stdout and "conflict" in result.stdout, (
        result.stdout
    )
    assert "all good" not in result.stdout
    data = json.loads(run("doctor", "--json").stdout)
    assert data["counts"]["conflict"] == 1


def test_explain_says_when_ratings_do_not_count_yet(run, empty_vault):
    seven_notes(empty_vault)
    for _ in range(2):
        ok(run("rate", "cache000", "useful"))
    out = ok(run("recall", "how do we cache things?", "--explain"))
    assert "usefulness 0.50 (2 ratings; neutral 0.50 until 3)" in out, out
    ok(run("rate", "cache000", "useful"))
    assert "usefulness 1.00 (3 ratings)" in ok(run("recall", "how do we cache things?", "--explain"))


# ------------------------------------------------------------------ CLI details


def test_remember_help_describes_tag_as_a_tag_to_give(run):
    out = ok(run("remember", "--help"))
    assert "A tag to give the memory" in out and "Only notes with this tag" not in out, out


def test_resolve_without_arguments_says_what_to_give(run):
    result = run("resolve")
    assert result.exit_code == 2 and "name the memory to resolve" in result.stderr, result.stderr
    assert "not both" not in result.stderr
    assert "not both" in run("resolve", "x", "--source", "a").stderr


def test_list_has_no_gap_between_id_and_type(run, empty_vault):
    seven_notes(empty_vault)
    line = next(ln for ln in ok(run("list")).splitlines() if "cache000" in ln)
    assert "cache000  fact" in line, line  # before: the id padded to 40 columns
    write(empty_vault, "notes/No id.md", note(None, "No id", "A note without an id.", type="fact"))
    rows = ok(run("list")).splitlines()
    assert "notes/No id.md  fact" in next(ln for ln in rows if "No id" in ln), rows


def test_recall_prints_the_path_of_a_note_without_id_once(run, empty_vault):
    write(
        empty_vault,
        "notes/No id.md",
        note(None, "Cache without id", "We cache pages without an id.", type="fact"),
    )
    out = ok(run("recall", "cache pages"))
    assert out.count("notes/No id.md") == 1, out


def test_gaps_json_gives_last_as_an_iso_time(run):
    ok(run("gap", "How do we rotate the webhook secret?"))
    rows = json.loads(ok(run("gaps", "--json")))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", rows[0]["last"]), rows  # was a Unix timestamp


def _cli(*args: str, input: str | None = None, vault: Path) -> subprocess.CompletedProcess:
    """The installed ``vaultmem`` (a real pipe as standard input); no vault loads the model here."""
    return subprocess.run([*VAULTMEM, *args, "--vault", str(vault)], input=input, capture_output=True, text=True,
                          timeout=120)  # fmt: skip


@pytest.mark.integration  # the CLI in subprocesses
def test_delete_reads_the_answer_from_a_pipe(empty_vault):
    for i, title in enumerate(("Kept", "Doomed")):
        write(empty_vault, f"facts/{title}.md", note(f"del{i}0000", title, "x", type="fact"))
    kept = _cli("delete", "del00000", input="n\n", vault=empty_vault)
    assert kept.returncode == 1 and "not deleted" in kept.stderr and (empty_vault / "facts/Kept.md").is_file()
    gone = _cli("delete", "del10000", input="y\n", vault=empty_vault)  # before: refused unless on a terminal
    assert gone.returncode == 0, gone.stderr
    assert (empty_vault / ".trash/facts/Doomed.md").is_file() and not (
        empty_vault / "facts/Doomed.md"
    ).exists()
    silent = _cli("delete", "del00000", input="", vault=empty_vault)
    assert silent.returncode == 2 and "--force" in silent.stderr and (empty_vault / "facts/Kept.md").is_file()


def test_status_forgets_a_broken_note_once_it_is_deleted(run, empty_vault, fake_embedder, backend):
    if backend == "service":
        pytest.skip("it runs a watcher of its own, which a served vault already has")
    from helpers import Running, wait_for

    bad = write(empty_vault, "bad.md", "---\ntitle: [unclosed\n---\nBody.\n")
    ok(run("index"))
    assert "not indexed: bad.md" in ok(run("status"))
    bad.unlink()
    ok(run("index"))
    assert "not indexed" not in ok(run("status"))  # before: listed after index and a watcher restart
    write(empty_vault, "bad.md", "---\ntitle: [unclosed\n---\nBody.\n")
    ok(run("index"))
    running = Running(empty_vault, fake_embedder)  # a watcher sees the delete as one path of a batch
    try:
        bad.unlink()
        wait_for(
            lambda: "bad.md" not in running.vault.index_status(drift=False)["errors"], what="error cleared"
        )
    finally:
        running.stop()


# ------------------------------------------------------------------ init (issue 38)


def test_init_adds_no_readme_note_to_an_obsidian_vault_and_copies_no_docs(tmp_path):
    obsidian = tmp_path / "obsidian"
    (obsidian / ".obsidian").mkdir(parents=True)
    (obsidian / "Daily.md").write_text("# Daily\n", encoding="utf-8")
    out = ok(CliRunner().invoke(app, ["init", str(obsidian)]))
    assert not (obsidian / "README.md").exists() and "README" not in out  # Obsidian would show it as a note
    plain = tmp_path / "plain"
    ok(CliRunner().invoke(app, ["init", str(plain)]))
    readme = (plain / "README.md").read_text(encoding="utf-8")
    assert len(readme) < 1000 and "vaultmem --help" in readme  # a pointer that cannot go stale
    assert "status:" not in readme  # no copy of the format's documentation
