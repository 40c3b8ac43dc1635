"""Aging (``vaultmem maintain`` and remember --anchor): latest progress per anchor, at most 3
session summaries per anchor with a history note, expired and unused low-importance
memories archived, a plan without --apply, nothing ever deleted."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from pathlib import Path

import pytest
from helpers import write
from typer.testing import CliRunner

from vaultmem.cli.app import app
from vaultmem.core.note import parse
from vaultmem.memory import aging
from vaultmem.vault import Vault

DAY = 86400.0
HISTORY = "sessions/Session history - Project - X.md"


def read(root: Path, rel: str) -> str:
    return (root / rel).read_text(encoding="utf-8")


def meta(root: Path, rel: str) -> dict:
    return parse(read(root, rel), rel).meta


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and not {".vaultmem", ".vaultmem-usage"} & set(p.relative_to(root).parts)}  # fmt: skip


def ago(days: float) -> str:
    return (dt.datetime.now(dt.UTC) - dt.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def note(root: Path, rel: str, type_: str, created: str, body: str = "", importance: int = 5, title: str = "",
         **extra: str) -> None:  # fmt: skip
    title = title or rel.rsplit("/", 1)[-1][:-3]
    lines = [f"id: n{hashlib.md5(rel.encode()).hexdigest()[:7]}", f"title: '{title}'", f"type: {type_}",
             f"importance: {importance}", f"created: {created}", f"updated: {created}"]  # fmt: skip
    lines += [f"{k}: {v}" for k, v in extra.items()]
    write(root, rel, "---\n" + "\n".join(lines) + f"\n---\n# {title}\n\n{body or 'Text of ' + title}.\n")


@pytest.fixture
def root(empty_vault) -> Path:
    r = empty_vault
    note(r, "projects/Project - X.md", "project", ago(400), "Anchor. Plan in [[P0]]", title="Project: X")
    note(r, "projects/Project - Y.md", "project", ago(400), title="Project: Y")
    note(r, "progress/P0.md", "progress", ago(60))  # linked from the anchor
    note(r, "progress/P1.md", "progress", ago(50), anchor="'[[Project: X]]'")
    note(r, "progress/P2.md", "progress", ago(40), "Progress on [[Project: X]]")
    note(r, "progress/P3.md", "progress", ago(30), anchor="'[[Project: X]]'")  # the latest for X
    note(r, "progress/Q1.md", "progress", ago(55), anchor="'[[Project: Y]]'")  # alone for Y
    note(r, "progress/Loose.md", "progress", ago(70))  # no anchor
    return r


@pytest.fixture
def vault(root, open_vault):
    return open_vault(root)


def kinds(result: dict) -> dict[str, str]:
    return {a["path"]: a["kind"] for a in result["actions"]}


# ------------------------------------------------------------------ progress


def test_only_the_latest_progress_per_anchor_stays_active(vault, root):
    before = snapshot(root)
    plan = vault.maintain()
    assert plan["applied"] is False and plan["done"] == 0
    assert kinds(plan) == {f"progress/P{i}.md": "supersede" for i in range(3)}
    assert {a["by"] for a in plan["actions"]} == {"progress/P3.md"}
    assert snapshot(root) == before  # a plan changes nothing

    done = vault.maintain(apply=True)
    assert done["done"] == 3
    for i in range(3):
        m = meta(root, f"progress/P{i}.md")
        assert (m["status"], m["superseded_by"]) == ("superseded", "[[P3]]")
    assert meta(root, "progress/P3.md")["supersedes"] == ["[[P0]]", "[[P1]]", "[[P2]]"]
    assert "status" not in meta(root, "progress/Q1.md") and "status" not in meta(root, "progress/Loose.md")
    after = snapshot(root)
    assert set(after) == set(before)  # nothing deleted, nothing added
    assert {p for p in after if after[p] != before[p]} == {f"progress/P{i}.md" for i in range(4)}
    assert vault.maintain()["actions"] == []  # settled


def test_remember_progress_with_anchor_ages_at_once(empty_vault, fake_embedder):
    v = Vault(empty_vault, embedder=fake_embedder)
    v.config["lifecycle"].update(
        supersede_no_context=1.01, supersede_shared_context=1.01
    )  # no similarity rule
    now = dt.datetime.now(dt.UTC)
    first = v.remember(
        "progress",
        "Progress one",
        "Wired the booking form.",
        anchor="Project: Z",
        now=now - dt.timedelta(days=2),
    )
    assert first["created_anchor"] == "projects/Project - Z.md" and first["superseded"] == []
    second = v.remember(
        "progress", "Progress two", "Shipped payments to staging.", anchor="Project: Z", now=now
    )
    assert [(s["id"], s["action"]) for s in second["superseded"]] == [(first["id"], "supersede")]
    m = meta(empty_vault, first["path"])
    assert (m["status"], m["superseded_by"]) == ("superseded", "[[Progress two]]")
    assert meta(empty_vault, second["path"])["supersedes"] == ["[[Progress one]]"]
    hits = v.recall("booking form", k=3, log=False)
    assert hits[0].id == second["id"] and hits[0].via == f"supersedes {first['id']}"
    v.close()


# ------------------------------------------------------------------ session summaries


def summaries(root: Path, n: int, start: int = 1) -> None:
    for i in range(start, start + n):
        note(root, f"sessions/S{i}.md", "session_summary", ago(30 - i), f"Session {i} with [[Project: X]]")


def test_at_most_three_session_summaries_with_a_history_note(vault, root):
    summaries(root, 4)
    vault.maintain(apply=True)
    assert meta(root, "sessions/S1.md")["status"] == "archived"
    assert all("status" not in meta(root, f"sessions/S{i}.md") for i in (2, 3, 4))
    history = read(root, HISTORY)
    m = meta(root, HISTORY)
    assert m["title"] == "Session history: Project: X" and m["tags"] == ["session-history"]
    assert m["anchor"] == "[[Project - X|Project: X]]"
    assert history.count("[[S1]]") == 1

    # a fifth summary through remember: the oldest active one is archived at once, the
    # history note is appended to, not made again
    r = vault.remember("session_summary", "S5", "Session five about [[Project: X]].", anchor="Project: X")
    assert [(s["id"], s["action"]) for s in r["superseded"]] == [
        (meta(root, "sessions/S2.md")["id"], "archive")
    ]
    assert meta(root, "sessions/S2.md")["status"] == "archived"
    updated = read(root, HISTORY)
    assert updated == history.replace(
        "- [[S1]]", f"- [[S2]] ({str(meta(root, 'sessions/S2.md')['created'])[:10]})\n- [[S1]]"
    )  # newest first
    assert updated.count("[[S1]]") == 1 and updated.count("[[S2]]") == 1
    assert [p for p in snapshot(root) if "Session history" in p] == [HISTORY]
    assert not [a for a in vault.maintain()["actions"] if a["path"].startswith("sessions/")]
    vault.maintain(apply=True)
    assert read(root, HISTORY) == updated
    vault.reopen("S1")  # four active again: S1 is archived once more, listed once
    vault.maintain(apply=True)
    assert meta(root, "sessions/S1.md")["status"] == "archived" and read(root, HISTORY) == updated
    hits = vault.recall("session history project", k=5, log=False)
    assert HISTORY in [h.path for h in hits]  # the archived summaries stay reachable through it


def test_summaries_of_other_anchors_are_counted_apart(vault, root):
    summaries(root, 3)
    note(root, "sessions/T1.md", "session_summary", ago(1), "Session about [[Project: Y]]")
    assert not [a for a in vault.maintain()["actions"] if a["path"].startswith("sessions/")]


# ------------------------------------------------------------------ expired and unused


def test_expired_memories_are_archived(vault, root):
    note(root, "facts/Old promo.md", "fact", ago(5), expires="2020-01-01")
    note(root, "facts/Future promo.md", "fact", ago(5), expires="2999-01-01")
    plan = vault.maintain()
    assert kinds(plan)["facts/Old promo.md"] == "archive" and "facts/Future promo.md" not in kinds(plan)
    assert "expired on 2020-01-01" in next(
        a["reason"] for a in plan["actions"] if a["path"] == "facts/Old promo.md"
    )
    vault.maintain(apply=True)
    assert meta(root, "facts/Old promo.md")["status"] == "archived"
    assert "status" not in meta(root, "facts/Future promo.md")


def test_low_importance_memories_nobody_recalls_are_archived(vault, root):
    note(root, "facts/Never read.md", "fact", ago(400), importance=2)
    note(root, "facts/Read lately.md", "fact", ago(400), importance=2)
    note(root, "facts/Read long ago.md", "fact", ago(400), importance=3)
    note(root, "facts/New.md", "fact", ago(10), importance=1)
    note(root, "facts/Important.md", "fact", ago(400), importance=4)
    note(root, "projects/Small project.md", "project", ago(400), importance=1)
    note(root, "facts/Tagged anchor.md", "fact", ago(400), importance=1, tags="[anchor]")  # anchors stay
    keys = {p: meta(root, p)["id"] for p in ("facts/Read lately.md", "facts/Read long ago.md")}
    now = time.time()
    vault.usage.log_retrievals([keys["facts/Read lately.md"]], "recall", at=now - 10 * DAY)
    vault.usage.log_retrievals([keys["facts/Read long ago.md"]], "recall", at=now - 100 * DAY)

    def archived(days: int | None) -> set[str]:
        return {a["path"] for a in vault.maintain(days=days)["actions"] if a["kind"] == "archive"}

    assert archived(30) == {"facts/Never read.md", "facts/Read long ago.md"}
    assert archived(None) == {"facts/Never read.md", "facts/Read long ago.md"}  # default 90 days
    assert archived(200) == {"facts/Never read.md"}
    assert archived(5) == {
        "facts/Never read.md",
        "facts/Read long ago.md",
        "facts/Read lately.md",
        "facts/New.md",
    }
    reason = next(
        a["reason"] for a in vault.maintain(days=30)["actions"] if a["path"] == "facts/Never read.md"
    )
    assert reason == "importance 2, not recalled for 30 days"
    before = snapshot(root)
    vault.maintain(apply=True, days=30)
    after = snapshot(root)
    assert set(after) == set(before)
    assert meta(root, "facts/Never read.md")["status"] == "archived"
    assert meta(root, "facts/Read long ago.md")["status"] == "archived"
    assert "status" not in meta(root, "facts/Read lately.md")
    assert "facts/Never read.md" not in [h.path for h in vault.recall("Never read", mode="bm25", log=False)]
    paths = [h.path for h in vault.recall("Never read", mode="bm25", include_resolved=True, log=False)]
    assert "facts/Never read.md" in paths  # archived, not gone


def test_plan_with_an_explicit_clock(vault, root):
    note(root, "facts/Dated.md", "fact", "2026-01-01T00:00:00Z", importance=2)
    at = dt.datetime(2026, 1, 20, tzinfo=dt.UTC)
    assert "facts/Dated.md" not in {a.path for a in aging.plan(vault, days=30, now=at)}
    assert "facts/Dated.md" in {a.path for a in aging.plan(vault, days=10, now=at)}
    assert all(a.kind == "supersede" for a in aging.plan(vault, days=10, now=at, per_anchor_only=True))


# ------------------------------------------------------------------ CLI


@pytest.fixture
def run(root, fake_model, backend):
    def invoke(*args: str):
        return CliRunner().invoke(app, list(args), env={"VAULTMEM_VAULT": str(root)})

    return invoke


def test_cli_maintain_prints_a_plan_and_changes_files_only_with_apply(run, root):
    summaries(root, 4)
    note(root, "facts/Old promo.md", "fact", ago(5), expires="2020-01-01")
    before = snapshot(root)
    result = run("maintain")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[-1] == "5 changes planned; run with --apply to make them"
    assert any(ln.startswith("supersede ") and "(older progress of Project: X)" in ln for ln in lines)
    assert any(
        ln.startswith("archive ") and "S1" in ln and "more than 3 session summaries" in ln for ln in lines
    )
    assert snapshot(root) == before
    data = json.loads(run("maintain", "--json").stdout)
    assert data["applied"] is False and len(data["actions"]) == 5 and snapshot(root) == before

    result = run("maintain", "--apply")
    assert result.exit_code == 0 and result.stdout.splitlines()[-1] == "applied 5 changes"
    after = snapshot(root)
    assert set(before) <= set(after) and set(after) - set(before) == {HISTORY}  # nothing deleted
    assert meta(root, "facts/Old promo.md")["status"] == "archived"
    assert run("maintain").stdout == "nothing to do\n"
