"""Titles cut from free text (a request, a summary, a rule) as whole clauses: a title is a file
name, so it never ends inside a clause ("... failing after I") or with "…"."""

from __future__ import annotations

import re

# words a clause may be cut before ("The test is failing | after I bumped the library")
BREAKS = frozenset(
    "after because since when while so but and if as though although until which where before once unless "
    "whereas".split()
)


def folded(text: str | None) -> str:
    """``text`` with case and runs of white space folded: the form in which two titles (or two
    texts) are the same memory's (``Vault.titled``, ``remember``'s duplicate and same-title rules)."""
    return " ".join((text or "").lower().split())


def title_words(text: str, n: int = 12) -> str:
    """The first clause of ``text`` fit for a file name (no ``;``, quotes, slashes or other
    punctuation): whole when it has at most ``n`` words, else cut before a joining word ("The
    checkout total test is failing after I bumped the tax library" -> "The checkout total test
    is failing"), else its first ``n`` words. A leading "Please" is dropped."""
    clause = re.split(r"[.;:!?](?=\s|$)|\n|,\s", text, maxsplit=1)[0]
    words = [w.strip(".") for w in re.sub(r"[^\w\s.'-]", " ", clause).split() if w.strip("'.-")]
    if words and words[0].lower() == "please" and len(words) > 2:
        words = [words[1][:1].upper() + words[1][1:], *words[2:]]
    if len(words) <= n:
        return " ".join(words)
    cuts = [i for i in range(3, n + 1) if words[i].lower() in BREAKS]
    return " ".join(words[: cuts[-1] if cuts else n])


# words a phrase may be cut before, when no clause ends within a title's width
PHRASE_BREAKS = frozenset("for with to in on at by from of into over under via than instead".split())


def clause_clip(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` characters at the end of a clause (``;``, ``,``, a
    dash), else before a joining word ("... for the catalog | because Postgres ..."), else
    before a preposition: a whole phrase, never with "…" nor inside a word or a phrase; a text
    with none of those is cut at a word."""
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    cut = text[: width + 1]
    end = max(cut.rfind("; "), cut.rfind(", "), cut.rfind(" - "))
    if end >= width // 3:
        return cut[:end].rstrip(" ,;:-")
    words = text.split(" ")
    fits = [i for i in range(1, len(words)) if len(" ".join(words[:i])) <= width]
    for breaks in (BREAKS, PHRASE_BREAKS):
        at = [i for i in fits if i >= 3 and words[i].lower() in breaks]
        if at:
            return " ".join(words[: at[-1]]).rstrip(" ,;:-")
    return cut[: cut.rfind(" ")].rstrip(" ,;:-") if " " in cut else cut[:width]
