"""Note parsing, rendering and in-place frontmatter edits (vaultmem.core.note)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from vaultmem.core.errors import NoteParseError
from vaultmem.core.note import parse, render, set_fields

HAND_WRITTEN = """\
---
# written by hand in Obsidian
title: Use advisory locks
type: decision
reviewed_by: dana   # an unknown key with a comment
tags:
  - jobs
  - postgres

extra:
  nested: {a: 1}
importance: 7
---

# Use advisory locks

Body with [[Links]] and #inline tags.
"""


def note(text: str, path: str = "notes/Example.md", **times):
    return parse(text, path, **times)


def fm(text: str, **fields) -> str:
    """A note text with frontmatter lines ``key: value`` (values written as given)."""
    lines = "".join(f"{k}: {v}\n" for k, v in fields.items())
    return f"---\n{lines}---\n{text}"


# ------------------------------------------------------------------ set_fields: byte safety


def test_set_fields_without_changes_returns_text_unchanged():
    assert set_fields(HAND_WRITTEN, {}) is HAND_WRITTEN
    assert set_fields("no frontmatter\n", {}) == "no frontmatter\n"


def test_set_one_key_rewrites_only_that_line():
    out = set_fields(HAND_WRITTEN, {"importance": 9})
    assert out == HAND_WRITTEN.replace("importance: 7", "importance: 9")


def test_set_multiline_key_keeps_blank_line_and_following_keys():
    out = set_fields(HAND_WRITTEN, {"tags": ["a", "b"]})
    assert out == HAND_WRITTEN.replace("tags:\n  - jobs\n  - postgres\n", "tags: [a, b]\n")


def test_new_key_is_appended_after_existing_keys():
    out = set_fields(HAND_WRITTEN, {"status": "resolved"})
    assert out == HAND_WRITTEN.replace("importance: 7\n---", "importance: 7\nstatus: resolved\n---")


def test_crlf_line_endings_are_kept():
    text = HAND_WRITTEN.replace("\n", "\r\n")
    out = set_fields(text, {"importance": 3, "status": "archived"})
    assert out == text.replace("importance: 7\r\n", "importance: 3\r\nstatus: archived\r\n")


def test_remove_keys():
    out = set_fields(HAND_WRITTEN, {}, remove=("reviewed_by", "extra"))
    assert out == HAND_WRITTEN.replace("reviewed_by: dana   # an unknown key with a comment\n", "").replace(
        "extra:\n  nested: {a: 1}\n", ""
    )
    assert set_fields(HAND_WRITTEN, {}, remove=("not-there",)) == HAND_WRITTEN


def test_note_without_frontmatter_gets_one_only_when_a_key_is_set():
    assert set_fields("# Title\n", {"id": "abc12345"}) == "---\nid: abc12345\n---\n# Title\n"
    assert set_fields("# Title\n", {}, remove=("id",)) == "# Title\n"
    assert set_fields("# Title\r\n", {"a": 1}) == "---\r\na: 1\r\n---\r\n# Title\r\n"


def test_duplicated_key_is_set_once():
    assert set_fields("---\na: 1\nb: 2\na: 3\n---\n", {"a": 9}) == "---\na: 9\nb: 2\n---\n"


def test_key_names_are_read_as_yaml_reads_them():
    text = "---\n\"quoted key\": 1\n'it''s': 2\nplain: 3\n---\n"
    out = set_fields(text, {"quoted key": 10, "it's": 20})
    assert parse(out, "x.md").meta == {"quoted key": 10, "it's": 20, "plain": 3}
    assert out.count("quoted key") == 1 and out.count("it") == 1


@pytest.mark.parametrize("key", ["\x1b", "a: b", "- x", "#c", "?", "true", "1"])
def test_keys_yaml_quotes_or_escapes_can_be_set_and_removed(key):
    text = render({key: 1, "other": "x\u2028y: 2"}, "")
    assert parse(set_fields(text, {key: 2}), "x.md").meta == {key: 2, "other": "x\u2028y: 2"}
    assert parse(set_fields(text, {}, remove=(key,)), "x.md").meta == {"other": "x\u2028y: 2"}


def test_flow_mapping_frontmatter_is_rewritten_whole():
    out = set_fields("---\n{a: 1, b: 2}\n---\nbody", {"a": 5})
    assert parse(out, "x.md").meta == {"a": 5, "b": 2}
    assert out.endswith("---\nbody")


def test_invalid_frontmatter_is_not_edited():
    with pytest.raises(NoteParseError):
        set_fields("---\na: [1\n---\n", {"a": 2})


def test_render_then_parse_gives_meta_and_body():
    meta = {"id": "k7f3x9q2", "title": 'Say "hi": now', "tags": ["a", "b"], "deep": {"x": [1, {"y": None}]}}
    n = note(render(meta, "# Body\n"))
    assert n.meta == meta and n.body == "# Body\n"


def test_render_skips_empty_values():
    assert render({"a": None, "b": "", "c": [], "d": 0}, "x") == "---\nd: 0\n---\nx"


def test_render_without_meta_keeps_a_frontmatter_like_body_as_body():
    body = "---\nlooks: like yaml\n---\n"
    assert note(render({}, body)).body == body
    assert render({}, "plain\n") == "plain\n"


# ------------------------------------------------------------------ property tests

TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20)
KEYS = TEXT.filter(bool)
SCALARS = st.one_of(
    KEYS, st.integers(), st.booleans(), st.floats(allow_nan=False), st.dates(), st.just("line\nbreak: x")
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3), st.dictionaries(TEXT, inner, min_size=1, max_size=3)
    ),
    max_leaves=8,
)
METAS = st.dictionaries(KEYS, VALUES, max_size=6)
BODIES = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=80)
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(METAS, BODIES)
@example({"nel": "a\x85b", "ls": "\u2028"}, "")  # YAML line breaks other than \n
@example({}, "---\nx: 1\n---\n")
@example({}, "\ufeffbody")
def test_parse_of_render_round_trips(meta, body):
    n = note(render(meta, body))
    assert n.meta == meta
    assert n.body == body


@PROPERTY
@given(METAS.filter(bool), st.data(), VALUES, BODIES)
def test_set_one_key_changes_only_that_key(meta, data, value, body):
    key = data.draw(st.one_of(st.sampled_from(sorted(meta)), KEYS), label="key")
    out = set_fields(render(meta, body), {key: value})
    n = note(out)
    assert n.meta == {**meta, key: value}
    assert n.body == body


@PROPERTY
@given(METAS.filter(bool), st.data(), BODIES)
def test_remove_one_key_keeps_the_others(meta, data, body):
    key = data.draw(st.sampled_from(sorted(meta)), label="key")
    n = note(set_fields(render(meta, body), {}, remove=(key,)))
    assert n.meta == {k: v for k, v in meta.items() if k != key}
    assert n.body == body


# ------------------------------------------------------------------ normalisation


@pytest.mark.parametrize(
    "value, origin, expected",
    [
        ("high", None, 8), ("Medium", None, 5), ("low", None, 2), (15, None, 10), (0, None, 1),
        (-3, None, 1), ("7", None, 7), ("abc", None, 5), (None, None, 5), (".inf", None, 5),
        (9, "planning", 5), ("high", "investigation", 5), (3, "planning", 3), (9, "implementation", 9),
    ],
)  # fmt: skip
def test_importance_is_normalised(value, origin, expected):
    fields = {"importance": value} if value is not None else {}
    if origin:
        fields["origin"] = origin
    assert note(fm("", **fields)).importance == expected


def test_title_comes_from_frontmatter_first():
    assert note(fm("# Heading\n", title="From FM")).title == "From FM"


def test_title_is_the_file_name_not_a_heading_by_default():
    # Obsidian names a note by its file name; "# Todo" in a body is no title (issue 27)
    assert (
        note("# Todo\nstuff\n", path="Math/Amortized Accounting Method.md").title
        == "Amortized Accounting Method"
    )


def test_title_from_heading_falls_back_to_first_h1_outside_code():
    body = "intro\n```\n# not a heading\n```\n## Sub\n# Real Heading ##\n# Second\n"
    assert parse(body, "notes/Example.md", title_from="heading").title == "Real Heading"
    assert parse("# C# tips\n", "notes/Example.md", title_from="heading").title == "C# tips"


def test_list_and_link_valued_scalar_properties():
    # kepano's vault: type: ["[[game_studios]]"]; never a Python list string, never [[...]]
    n = note(fm("", type='["[[game_studios]]"]', title='["[[Real|Shown]]"]', status="[resolved]"))
    assert (n.type, n.title, n.status) == ("game_studios", "Shown", "resolved")
    assert note(fm("", type="[]")).type is None


def test_title_falls_back_to_file_stem():
    assert note("no heading here\n", path="facts/My Fact.md").title == "My Fact"
    assert note("#hashtag is not a heading\n", path="x/Stem.md").title == "Stem"


def test_status_and_scope_defaults_and_validation():
    n = note("body")
    assert (n.status, n.scope) == ("active", "project")
    assert note(fm("", status="Resolved", scope="user")).status == "resolved"
    assert note(fm("", scope="user")).scope == "user"
    bogus = note(fm("", status="bogus", scope="team"))
    assert (bogus.status, bogus.scope) == ("active", "project")


def test_tags_from_frontmatter_list_or_string_plus_inline():
    assert note(fm("text #Inline and #nested/tag\n", tags="[jobs, '#postgres']")).tags == (
        "jobs", "postgres", "inline", "nested/tag",
    )  # fmt: skip
    assert note(fm("", tags="a, b")).tags == ("a", "b")
    assert note(fm("", tags="a b")).tags == ("a", "b")


def test_inline_tags_skip_code_urls_and_headings():
    body = (
        "# Heading\n## Sub heading\n`#incode` and\n```\n#fenced\n```\n"
        "see https://example.com/page#frag and https://x.org/a-#frag2 and [l](http://y.org/#frag3)\n"
        "issue #123 and real #kept\n"
    )
    assert note(body).tags == ("kept",)


def test_aliases_split_on_commas_only():
    assert note(fm("", aliases="Foo Bar, Baz")).aliases == ("Foo Bar", "Baz")
    assert note(fm("", aliases="[Foo Bar]")).aliases == ("Foo Bar",)


def test_dates_from_frontmatter_are_iso_strings():
    n = note(fm("", created="2026-11-04T16:30:00Z", updated="2026-11-05"))
    assert (n.created, n.updated) == ("2026-11-04T16:30:00Z", "2026-11-05")


def test_missing_dates_come_from_file_times():
    mtime = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC).timestamp()
    n = note("body", mtime=mtime, ctime=mtime - 86400)
    assert (n.created, n.updated) == ("2026-01-01T03:04:05Z", "2026-01-02T03:04:05Z")
    assert note("body", mtime=mtime).created == "2026-01-02T03:04:05Z"


@pytest.mark.parametrize(
    "text, reason",
    [
        ("---\ntitle: [unclosed\n---\nbody", "bad YAML"),
        ("---\n- a list\n- not a mapping\n---\nbody", "not a mapping"),
        ("---\njust a string\n---\nbody", "not a mapping"),
        ("binary\x00data", "binary"),
    ],
)
def test_unreadable_notes_raise_with_the_path(text, reason):
    with pytest.raises(NoteParseError) as err:
        note(text, path="bad/Note.md")
    assert err.value.path == "bad/Note.md"
    assert str(err.value).startswith("bad/Note.md: ") and reason in str(err.value)


def test_empty_frontmatter_is_fine():
    assert note("---\n---\nbody").meta == {}


@pytest.mark.parametrize(
    "written, canonical",
    [("error-solution", "bug_fix"), ("summary", "session_summary"), ("task-update", "progress"),
     ("Bug-Fix", "bug_fix"), ("decision", "decision"), ("my custom", "my_custom")],
)  # fmt: skip
def test_type_synonyms(written, canonical):
    assert note(fm("", type=written)).type == canonical


def test_no_type_is_none():
    assert note("body").type is None


def test_id_and_key():
    assert note(fm("", id="k7f3x9q2")).key == "k7f3x9q2"
    assert note("body", path="a/B.md").id is None
    assert note("body", path="a/B.md").key == "a/B.md"


def test_superseded_by_target_and_links():
    n = note(fm("See [[Other]].", superseded_by='"[[New Note|label]]"'))
    assert n.superseded_by == "New Note"
    assert [(link.target, link.kind) for link in n.links] == [
        ("New Note", "superseded_by"),
        ("Other", "body"),
    ]


def test_byte_order_mark_is_not_part_of_the_body():
    assert parse("\ufeff# Title\n", "notes/Example.md", title_from="heading").title == "Title"
    assert note("\ufeff---\ntitle: T\n---\nbody").meta == {"title": "T"}


def test_hash_changes_with_text():
    assert note("a").hash != note("b").hash
    assert note("a").hash == note("a", path="other.md").hash
