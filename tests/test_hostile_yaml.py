"""Hostile frontmatter costs bounded time and is skipped with a reason (issue 15: a 389-byte
YAML alias bomb kept ``vaultmem index`` busy for minutes). Extend with any new YAML trick."""

from __future__ import annotations

import json
import time

import pytest
from helpers import write
from typer.testing import CliRunner

from vaultmem.cli.app import app
from vaultmem.core import note
from vaultmem.core.errors import NoteParseError

# "Billion laughs": nine levels of nine aliases expand to 9**9 (~387 million) strings.
LEVELS = "abcdefghi"
BOMB = (
    "---\ntitle: Laughs\n"
    + "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"
    + "".join(f"{b}: &{b} [{','.join(['*' + a] * 9)}]\n" for a, b in zip(LEVELS, LEVELS[1:]))
    + "---\nbody [[Other]]\n"
)

HOSTILE = {
    "bomb": (BOMB, "aliases expand to more than"),
    "self-reference": ("---\na: &a [x, *a]\n---\n", "contains it"),
    "deep flow nesting": ("---\na: " + "[" * 50_000 + "]" * 50_000 + "\n---\n", "nested deeper than"),
    "unclosed deep nesting": ("---\na: " + "{a: " * 60_000 + "\n---\n", "nested deeper than"),
    "deep block nesting": (
        "---\n" + "".join(" " * i + f"k{i}:\n" for i in range(700)) + "---\n",
        "nested deeper than",
    ),
    # libyaml composes recursively: unchecked, this one crashes the process (segmentation fault)
    "compact nested sequences": ("---\na:\n" + "- " * 120_000 + "x\n---\n", "nested deeper than"),
    "huge frontmatter": ("---\n" + "k: v\n" * 60_000 + "---\n", "frontmatter longer than"),
}


def test_the_bomb_is_the_size_the_issue_found():
    assert len(BOMB.split("---\n")[1].encode()) < 389


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_frontmatter_is_refused_quickly_with_a_reason(name):
    text, reason = HOSTILE[name]
    t = time.perf_counter()
    with pytest.raises(NoteParseError) as err:
        note.parse(text, "hostile.md")
    with pytest.raises(NoteParseError):  # editing it is refused the same way, not rewritten
        note.set_fields(text, {"status": "resolved"})
    assert time.perf_counter() - t < 1.0, "bounded time"  # minutes before the limits
    assert reason in err.value.reason


def test_harmless_anchors_and_aliases_still_parse():
    n = note.parse(
        "---\ntitle: Shared\ntags: &t [db, locks]\nkeywords: *t\n"
        "base: &base {owner: dana, team: infra}\nreview: {<<: *base, due: 2026-12-01}\n---\nbody\n",
        "ok.md",
    )
    assert n.tags == ("db", "locks") and n.meta["keywords"] == ["db", "locks"]
    assert n.meta["review"] == {"owner": "dana", "team": "infra", "due": note.dt.date(2026, 12, 1)}


def test_the_limit_is_on_the_expanded_size_not_the_text():
    ok = "---\na: &a [" + ",".join(["x"] * 90) + "]\nb: [" + ",".join(["*a"] * 100) + "]\n---\n"
    assert len(note.parse(ok, "ok.md").meta["b"]) == 100  # 9,000 values once expanded
    over = ok.replace(",".join(["*a"] * 100), ",".join(["*a"] * 120))  # 10,800
    with pytest.raises(NoteParseError, match="aliases expand"):
        note.parse(over, "over.md")


def test_index_skips_the_bomb_with_a_reason_and_indexes_the_rest(empty_vault, fake_model):
    write(empty_vault, "Bomb.md", BOMB)
    write(empty_vault, "Other.md", "# Other\n\nA normal note about postgres locks.\n")
    env = {"VAULTMEM_VAULT": str(empty_vault)}
    t = time.perf_counter()
    result = CliRunner().invoke(app, ["index"], env=env)
    assert time.perf_counter() - t < 10, "minutes before the alias limit"
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("1 added, 0 updated")
    assert "skipped Bomb.md: bad YAML frontmatter (aliases expand to more than 10000 values)" in result.stderr
    status = CliRunner().invoke(app, ["status"], env=env)
    assert "not indexed: Bomb.md: bad YAML frontmatter (aliases expand" in status.stdout
    hits = json.loads(CliRunner().invoke(app, ["recall", "postgres locks", "--json"], env=env).stdout)
    assert [h["path"] for h in hits["results"]] == ["Other.md"]


def test_a_bomb_in_a_template_or_an_edit_value_is_bounded_too(empty_vault, fake_model):
    env = {"VAULTMEM_VAULT": str(empty_vault)}
    write(empty_vault, "templates/fact.md", BOMB + "---\n\n{{title}}\n")
    t = time.perf_counter()
    result = CliRunner().invoke(app, ["remember", "fact", "Laughing", "body"], env=env)
    assert time.perf_counter() - t < 10
    assert "the template for 'fact' has invalid YAML frontmatter" in result.stderr
    (empty_vault / "templates" / "fact.md").unlink()
    made = CliRunner().invoke(app, ["remember", "fact", "Plain fact", "body", "--json"], env=env)
    ref = json.loads(made.stdout)["id"]
    value = BOMB.split("---\n")[1].replace("\n", " ")
    t = time.perf_counter()
    CliRunner().invoke(app, ["edit", ref, "--set", f"extra={value}"], env=env)
    assert time.perf_counter() - t < 10
