"""Hostile input: loops, bombs, huge files and control characters cost bounded time and are
skipped (or refused) with a reason; nothing else in the vault stops working.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from .adversarial_helpers import run, wait_for

LOOP_REASON = "symlink loop"


def _plant_loops(root) -> None:
    os.symlink("b.md", root / "a.md")
    os.symlink("a.md", root / "b.md")
    os.symlink("self.md", root / "self.md")


# ---------------------------------------------------------------- symlink loops
@pytest.mark.integration  # the CLI in subprocesses
def test_symlink_loops_are_skipped_with_a_reason_by_every_command(small_vault):
    _plant_loops(small_vault)
    v = str(small_vault)
    index = run("index", "--vault", v)
    assert index.returncode == 0 and "Traceback" not in index.stderr, index.stderr
    for name in ("a.md", "b.md", "self.md"):
        assert f"skipped {name}: {LOOP_REASON}" in index.stderr
    status = run("status", "--vault", v)
    assert status.returncode == 0 and f"a.md: {LOOP_REASON}" in status.stdout, status
    listed = run("list", "--vault", v)
    assert listed.returncode == 0 and "Alpha" in listed.stdout, listed
    recall = run("recall", "Alpha", "--vault", v)
    assert recall.returncode == 0 and "Alpha" in recall.stdout and "Traceback" not in recall.stderr, recall
    show = run("show", "a.md", "--vault", v)
    assert show.returncode != 0 and show.stderr.startswith("vaultmem: ") and "Traceback" not in show.stderr


def test_watcher_skips_a_symlink_loop_once_and_keeps_going(small_vault, watching):
    w = watching(small_vault)
    _plant_loops(small_vault)
    wait_for(lambda: LOOP_REASON in (w.watcher.state.last_error or ""), what="the loop to be reported")
    batches = w.watcher.state.batches
    time.sleep(2.0)  # the thing under test: a watcher retrying a failed batch would run several meanwhile
    assert w.watcher.state.batches <= batches + 1 and w.error is None
    (small_vault / "Delta.md").write_text("---\ntitle: Delta\n---\nDelta text.\n")
    wait_for(lambda: "Delta.md" in w.vault.manifest.records(), what="a later note to be indexed")


@pytest.mark.anyio
async def test_mcp_tools_work_beside_a_symlink_loop_and_name_it(small_vault, fake_embedder):
    from mcp import Client

    from vaultmem.agents.mcp_server import build_server

    _plant_loops(small_vault)
    srv = build_server(small_vault, fake_embedder)
    try:
        async with Client(srv) as client:
            result = await client.call_tool("recall", {"query": "Alpha"})
            assert not result.is_error and "Alpha" in json.dumps(result.structured_content)
            result = await client.call_tool("read_note", {"ref": "a.md"})
            text = result.content[0].text
            assert result.is_error and f"a.md: {LOOP_REASON}" in text, (
                text
            )  # the SDK prefixes "Error executing tool"
    finally:
        srv.memory.vault.close()


def test_watcher_retries_a_failing_batch_a_few_times_not_forever(small_vault, watching, monkeypatch):
    w = watching(small_vault)
    calls = []

    def broken(*args, **kwargs):
        calls.append(time.monotonic())
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(w.vault, "reindex", broken)
    (small_vault / "Delta.md").write_text("---\ntitle: Delta\n---\nDelta text.\n")
    # the last failure queues no retry (retries back off 0.5, 1, 1.5 s, then wait for a change)
    wait_for(lambda: w.watcher._failures == 1 + w.watcher.RETRIES, what="the retries to be given up")
    assert 1 + w.watcher.RETRIES == len(calls), len(calls)
    assert "disk on fire" in w.watcher.status()["last_error"] and w.error is None


# ---------------------------------------------------------------- control characters


def _files(root) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if not {".vaultmem", ".vaultmem-usage"} & set(p.parts)
    }


@pytest.mark.anyio
@pytest.mark.parametrize("title", ["Bad\x00title", "Bad\x01title", "Esc\x1b[31mred", "Two\nlines", "Del\x7f"])
async def test_mcp_remember_refuses_control_characters_and_writes_nothing(small_vault, fake_embedder, title):
    from mcp import Client

    from vaultmem.agents.mcp_server import build_server

    before = _files(small_vault)
    srv = build_server(small_vault, fake_embedder)
    try:
        async with Client(srv) as client:
            for _ in range(2):  # a retry leaves nothing either
                result = await client.call_tool(
                    "remember", {"type": "fact", "title": title, "content": "text"}
                )
                assert result.is_error and "control characters" in result.content[0].text
            result = await client.call_tool(
                "write_note", {"path": "New.md", "content": "---\ntitle: x\n---\nA\x01B\n"}
            )
            assert result.is_error and "U+0001" in result.content[0].text
    finally:
        srv.memory.vault.close()
    assert _files(small_vault) == before


@pytest.mark.integration  # the CLI in subprocesses
def test_cli_refuses_control_characters_in_titles(small_vault):
    from .adversarial_helpers import run

    before = _files(small_vault)
    v = str(small_vault)
    for args in (["remember", "fact", "Bad\x01title", "text"], ["remember", "fact", "Ok", "text", "--anchor", "A\x1bB"],
                 ["edit", "note0aa", "--set", "title=New\x07title"]):  # fmt: skip
        result = run(*args, "--vault", v)
        assert (
            result.returncode == 2
            and result.stderr.startswith("vaultmem: ")
            and "control characters" in result.stderr
        )
    assert _files(small_vault) == before and "title: Alpha" in (small_vault / "Alpha.md").read_text()


@pytest.mark.integration  # the CLI in subprocesses
def test_editing_a_note_that_already_has_a_form_feed_still_works(small_vault):
    from .adversarial_helpers import run

    (small_vault / "Alpha.md").write_text("---\nid: note0aa\ntitle: Alpha\n---\n# Alpha\n\npage\x0cbreak\n")
    result = run("edit", "note0aa", "--set", "importance=7", "--vault", str(small_vault))
    assert result.returncode == 0, result.stderr
    assert "importance: 7" in (small_vault / "Alpha.md").read_text()


# ---------------------------------------------------------------- huge notes
@pytest.mark.integration  # the CLI in subprocesses
def test_a_huge_note_embeds_at_most_max_chunks_and_bm25_keeps_all_of_it(small_vault):
    from .adversarial_helpers import run

    (small_vault / ".vaultmem.toml").write_text("[embedding]\nmax_chunks = 5\n")
    paragraphs = [f"Paragraph {i} talks about topic{i} in some detail. " * 20 for i in range(60)]
    (small_vault / "Huge.md").write_text(
        "---\ntitle: Huge\n---\n" + "\n\n".join(paragraphs) + "\nzebracorn at the end.\n"
    )
    result = run("index", "--vault", str(small_vault))
    assert result.returncode == 0, result.stderr
    total = 60 * 20 * 8 // 176  # words / words per chunk, roughly
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("Huge.md: embedded 5 of its "))
    assert int(line.split()[5]) >= total // 2 and "8 chunks embedded" in result.stdout  # 3 small notes + 5
    hits = run("recall", "zebracorn", "--mode", "bm25", "--vault", str(small_vault))
    assert "Huge" in hits.stdout  # the last words are still found by keyword


# ---------------------------------------------------------------- YAML bombs

BOMB = """---
title: Bomb
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
---
Boom.
"""


@pytest.mark.integration  # the CLI in subprocesses
def test_a_yaml_alias_bomb_is_skipped_with_a_reason_in_bounded_time(small_vault):
    """The 389-byte 'billion laughs' kept `vaultmem index` busy for ~6 minutes; the subprocess
    timeout (60 s, mostly model loading on a busy machine) is the bound checked here."""
    from .adversarial_helpers import run

    (small_vault / "Bomb.md").write_text(BOMB)
    result = run("index", "--vault", str(small_vault), timeout=60)
    assert result.returncode == 0, result.stderr
    assert "skipped Bomb.md: " in result.stderr and "aliases expand to more than" in result.stderr, (
        result.stderr
    )
    assert "3 added" in result.stdout  # the other notes are indexed as usual
