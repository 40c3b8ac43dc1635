"""wake (the [MEMORY] block), sleep and checkpoint."""

from __future__ import annotations

import re

import pytest

from vaultmem.core.errors import BadInput
from vaultmem.memory.context import SECTIONS, estimate_tokens

ANCHOR = "Project: Tidewater"


@pytest.fixture(autouse=True)
def _indexed(demo):
    demo.reindex()


def section_names(text: str) -> list[str]:
    return re.findall(r"^## (.+)$", text, re.M)


def test_sections_come_in_order_and_only_when_non_empty(demo):
    text = demo.wake(anchor=ANCHOR, task="refunds for cancelled bookings", budget=100000)["text"]
    names = section_names(text)
    assert names == [s for s in SECTIONS if s in names]
    assert names[0] == "Project Brief" and "Relevant to Current Task" in names
    nonce = re.match(r"\[MEMORY ([0-9a-f]{12})\]\n", text).group(1)
    assert text.rstrip().endswith(f"[/MEMORY {nonce}]")
    brief = text.split("## Project Brief\n")[1].splitlines()[0]
    assert "**Project: Tidewater**" in brief  # the anchor opens the block


def test_every_line_carries_an_id_that_resolves(demo):
    result = demo.wake(anchor=ANCHOR, budget=100000)
    lines = [ln for ln in result["text"].splitlines() if ln.startswith("- ")]
    assert lines and all(re.match(r"- \[[^\]]+\] \*\*", ln) for ln in lines)
    records = demo.records()
    for key in result["ids"]:
        assert demo.find(key, records)


def test_lines_within_a_section_go_by_importance_then_recency(demo):
    result = demo.wake(anchor=ANCHOR, budget=100000)
    for section in result["sections"]:
        if section["name"] in ("Project Brief", "Last Session"):
            continue
        keys = [(-i["importance"], i["updated"]) for i in section["items"]]
        assert [k[0] for k in keys] == sorted(k[0] for k in keys)


def test_budget_is_respected_and_least_important_lines_go_first(demo):
    full = demo.wake(anchor=ANCHOR, budget=100000)
    small = demo.wake(anchor=ANCHOR, budget=600)
    assert small["tokens"] <= 600 < full["tokens"]
    assert small["tokens"] == estimate_tokens(small["text"])
    kept = {i["id"]: i["importance"] for s in small["sections"] for i in s["items"]}
    dropped = [i["importance"] for s in full["sections"] for i in s["items"] if i["id"] not in kept]
    assert dropped and min(kept.values()) >= max(dropped) - 0  # nothing kept is less important than what went
    with pytest.raises(BadInput):
        demo.wake(budget=10)


def test_hidden_memories_never_appear_and_shown_ones_are_logged(demo):
    result = demo.wake(anchor=ANCHOR, budget=100000)
    records = {r.key: r for r in demo.records().values()}
    assert all(records[k].status == "active" for k in result["ids"])
    redis = demo.find("Use Redis locks for job leasing")
    assert (
        redis.status == "superseded"
        and redis.key not in result["ids"]
        and f"[{redis.key}]" not in result["text"]
    )
    usage = demo.usage.usage(result["ids"])
    assert all(usage[k].count == 1 for k in result["ids"])


def test_user_preferences_follow_the_user_across_anchors(demo):
    text = demo.wake(anchor="Project: Tidewater Mobile", budget=100000)["text"]
    assert "## User Preferences" in text


def test_checkpoint_then_sleep_builds_one_handoff(demo):
    first = demo.checkpoint("refund endpoint done", source="agent-7", anchor=ANCHOR)
    second = demo.checkpoint("tests failing on currency rounding", source="agent-7", anchor=ANCHOR)
    assert first["path"] == second["path"]
    result = demo.sleep(
        "Added the refunds API.", next_steps="fix rounding; write docs", source="agent-7", anchor=ANCHOR
    )
    assert result["handoff"]["path"] == first["path"]
    text = (demo.root / first["path"]).read_text()
    assert "refund endpoint done" in text and "currency rounding" in text
    assert "## Next steps\n- fix rounding\n- write docs" in text
    old = demo.find("Handoff 2026-11-21")
    assert old.status == "superseded" and old.key in result["superseded"]
    wake = demo.wake(anchor=ANCHOR, budget=100000)["text"]
    last = wake.split("## Last Session\n")[1].split("\n## ")[0]
    assert "Next steps: fix rounding; write docs" in last and "Handoff 2026-11-21" not in last
    assert "Added the refunds API" in last


def test_sleep_keeps_session_summaries_bounded(demo):
    for i in range(3):
        demo.sleep(f"Session number {i} did things {i}.", source=f"s{i}", anchor=ANCHOR)
    records = demo.records()
    anchor_path = demo.find(ANCHOR, records).path
    g = demo.graph()
    active = [r for r in records.values() if r.type == "session_summary" and r.status == "active"
              and (anchor_path in g.successors(r.path) or anchor_path in g.predecessors(r.path))]  # fmt: skip
    assert len(active) <= 3
    assert any("session-history" in r.tags for r in records.values())


def test_sleep_and_checkpoint_need_text(demo):
    with pytest.raises(BadInput):
        demo.sleep("  ")
    with pytest.raises(BadInput):
        demo.checkpoint("")
