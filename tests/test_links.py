"""Wiki-link extraction and resolution (vaultmem.core.links)."""

from __future__ import annotations

import pytest

from vaultmem.core.links import (
    Link,
    NoteKeys,
    Resolver,
    body_links,
    frontmatter_links,
    parse_link,
)


def targets(body: str) -> list[str]:
    return [link.target for link in body_links(body)]


# ------------------------------------------------------------------ parse_link


@pytest.mark.parametrize(
    "inner, expected",
    [
        ("Note", Link("Note")),
        ("Note|shown label", Link("Note", label="shown label")),
        ("Note#Some Heading", Link("Note", heading="Some Heading")),
        ("Note#^block-1", Link("Note", block="block-1")),
        ("Note#Heading|label", Link("Note", heading="Heading", label="label")),
        ("folder/Note", Link("folder/Note")),
        ("  Spaced  ", Link("Spaced")),
        ("Note\\|label", Link("Note", label="label")),  # escaped pipe inside a table
    ],
)
def test_parse_link(inner, expected):
    assert parse_link(inner) == expected


def test_link_to_own_heading_is_not_an_edge():
    assert parse_link("#Heading") is None
    assert parse_link("") is None


# ------------------------------------------------------------------ body links


def test_all_link_forms_in_a_body():
    links = body_links("A [[One]], [[Two|2]], [[Three#H]], [[Four#^b]] and ![[Five.png]].")
    assert [(x.target, x.heading, x.block, x.label, x.embed) for x in links] == [
        ("One", None, None, None, False),
        ("Two", None, None, "2", False),
        ("Three", "H", None, None, False),
        ("Four", None, "b", None, False),
        ("Five.png", None, None, None, True),
    ]
    assert {x.kind for x in links} == {"body"}


def test_links_do_not_span_lines_or_nest():
    # Obsidian's bracket grammar (docs/obsidian.md): a line break ends a link, a single "]" or
    # "[" does not, an inner "[[" starts over, and an escaped "\[[" is no link
    assert targets("[[broken\nlink]] [[ok]] [[a[b]] [[Sq]uare]] [[Nested [[Inner]] x]] \\[[esc]]") == [
        "ok",
        "a[b",
        "Sq]uare",
        "Inner",
    ]


def test_links_in_inline_code_are_not_links():
    assert targets("use `[[NotALink]]` or ``a ` [[Nope]] `` but [[Yes]]") == ["Yes"]


def test_unmatched_backtick_does_not_hide_later_paragraphs():
    assert targets("a stray ` backtick\n\n[[Kept]]\n\nanother ` here") == ["Kept"]


@pytest.mark.parametrize(
    "body",
    [
        "```\n[[Hidden]]\n```\n[[Shown]]",
        "~~~\n[[Hidden]]\n~~~\n[[Shown]]",
        "````\n```\n[[Hidden]]\n```\n````\n[[Shown]]",  # a longer fence is closed only by a long one
        "```python\n[[Hidden]]\n```python\n[[Hidden]]\n```\n[[Shown]]",  # an info string does not close
        "~~~\n```\n[[Hidden]]\n~~~\n[[Shown]]",  # ~~~ is not closed by ```
        "   ```\n[[Hidden]]\n   ```\n[[Shown]]",  # indented up to three spaces
    ],
)
def test_fenced_code_blocks_are_not_links(body):
    assert targets(body) == ["Shown"]


def test_unclosed_fence_runs_to_the_end():
    assert targets("[[Before]]\n```\n[[Hidden]]\n\n[[AlsoHidden]]") == ["Before"]


def test_crlf_body():
    assert targets("```\r\n[[Hidden]]\r\n```\r\n[[Shown]]\r\n") == ["Shown"]


# ------------------------------------------------------------------ frontmatter links


def test_frontmatter_links_are_whole_values_as_obsidian_reads_them():
    # a value or list item that is one whole [[link]]; text around a link, nested mappings
    # and unquoted [[X]] (a YAML nested list) are not property links in Obsidian
    meta = {
        "parent": "[[Project: Tidewater]]",
        "related": ["[[A]]", {"deep": ["[[B]]"]}, "text [[C|label]] text", [["Unquoted"]]],
        "type": ["[[game_studios]]"],
        "superseded_by": "[[New]]",
        "supersedes": ["[[Old#H]]"],
        "count": 3,
        "plain": "no links",
    }
    assert [(x.target, x.kind) for x in frontmatter_links(meta)] == [
        ("Project: Tidewater", "frontmatter"),
        ("A", "frontmatter"),
        ("game_studios", "frontmatter"),
        ("New", "superseded_by"),
        ("Old", "supersedes"),
    ]


# ------------------------------------------------------------------ resolution


def resolver(*notes: NoteKeys | str) -> Resolver:
    return Resolver(n if isinstance(n, NoteKeys) else NoteKeys(n) for n in notes)


def test_stem_is_case_insensitive_and_md_optional():
    r = resolver("decisions/Use Redis.md")
    assert r.resolve("use redis") == "decisions/Use Redis.md"
    assert r.resolve("Use Redis.md") == "decisions/Use Redis.md"


def test_rule_order_file_name_then_title_then_alias_then_id():
    notes = (
        NoteKeys("a/Target.md"),
        NoteKeys("b/Other.md", title="Target", aliases=("Alias",), id="id1"),
        NoteKeys("c/Third.md", aliases=("Other Title",), id="alias"),
        NoteKeys("d/Fourth.md", title="Other Title"),
    )
    r = Resolver(notes, extras=Resolver.EXTRAS)
    assert r.resolve("Target") == "a/Target.md"  # file name beats title
    assert r.resolve("other title") == "d/Fourth.md"  # title beats alias
    assert r.resolve("Alias") == "b/Other.md"  # alias beats id
    assert r.resolve("ID1") == "b/Other.md"
    obsidian = Resolver(notes)  # the default: a bare [[Alias]] stays unresolved, as in Obsidian
    assert obsidian.resolve("Alias") == "c/Third.md"  # not b's alias: c's id
    assert Resolver([NoteKeys("Hesperus.md", aliases=("Phosphorus",))]).resolve("Phosphorus") is None
    assert obsidian.resolve("other title") == "d/Fourth.md" and obsidian.resolve("id1") == "b/Other.md"


def test_ties_go_to_the_same_folder_then_the_shortest_path():
    r = resolver("x/Dup.md", "y/Dup.md", "y/z/Dup.md", "zzzz/Dup.md", "a/b/Dup.md")
    assert r.resolve("Dup", source_path="y/Note.md") == "y/Dup.md"
    assert r.resolve("Dup", source_path="y/z/w/Note.md") == "x/Dup.md"  # ancestors count for nothing
    assert r.resolve("Dup", source_path="zzzz/Note.md") == "zzzz/Dup.md"
    assert r.resolve("Dup", source_path="q/Note.md") == "x/Dup.md"
    assert resolver("zzzz/Dup.md", "a/b/Dup.md").resolve("Dup") == "a/b/Dup.md"  # shortest string
    assert resolver("Dup.md", "a/b/Dup.md").resolve("Dup", "a/b/Src.md") == "Dup.md"  # exact path wins


def test_folder_qualified_target():
    r = resolver("x/Dup.md", "y/Dup.md", "deep/y/Other.md")
    assert r.resolve("y/Dup", source_path="x/Note.md") == "y/Dup.md"
    assert r.resolve("Y/dup.md") == "y/Dup.md"
    assert r.resolve("y/Other") == "deep/y/Other.md"  # a path suffix


def test_unresolved_is_none():
    r = resolver(NoteKeys("a/A.md", title="Alpha"))
    assert r.resolve("Missing") is None
    assert r.resolve("nope/A") is None
