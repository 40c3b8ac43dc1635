#!/usr/bin/env python3
"""Reference resolver for Obsidian vault links (stdlib only): the test oracle of issue 27.

This is an independent re-implementation of the link-resolution rules written
down in docs/obsidian.md (RULES.md of the issue-27 research).  It is meant as an oracle / fixture generator
for vaultmem tests; it deliberately does not import vaultmem.

What it does, for a vault folder:

* lists every note (``*.md``) and every other file ("attachment"), skipping
  any file or folder whose name starts with ``.`` (``.obsidian/``, ``.trash/``,
  ``.git/``, ...), which is what Obsidian hides from its vault;
* extracts, per note,
    - body wiki-links ``[[...]]`` and embeds ``![[...]]``,
    - markdown links / images ``[t](dest)`` / ``![a](dest)`` to local files
      (percent-decoded; ``<dest with spaces>`` accepted; URLs with a scheme
      such as ``https:``, ``mailto:``, ``obsidian:``, ``file:`` are skipped),
    - frontmatter property links: a property value (or a list item) whose
      whole string value is ``[[...]]`` (it must be quoted in YAML);
  ignoring everything inside fenced code blocks and inline code spans;
* resolves each link the way Obsidian's ``getFirstLinkpathDest`` does
  (RULES.md section 4) into an edge
  ``(source, target or None, kind: note|attachment|unresolved, raw)``.

Usage::

    python obsidian_resolver.py VAULT            # human summary
    python obsidian_resolver.py VAULT --json     # edges + unresolved as JSON
    python obsidian_resolver.py VAULT --exclude-templates   # skip template notes as sources
    python obsidian_resolver.py --selftest       # observed-fixture checks

Also ignored: ``$inline$`` and ``$$display$$`` math.  Limits (RULES.md
section 9): indented (4-space) code blocks, HTML blocks and reference-style
links ``[t][ref]`` are not special-cased; links in ``%% comments %%`` are
kept (Obsidian indexes them too).
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import re
import sys
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass
from urllib.parse import unquote

# --------------------------------------------------------------------------
# File types
# --------------------------------------------------------------------------

# "Accepted file formats" help page (obsidian-help en/Files and folders/
# Accepted file formats.md).  Files with other extensions still exist in the
# vault and can be linked (with "Show all file types"); we count them as
# attachments too but report them separately.
ACCEPTED_ATTACHMENT_EXTS = {
    # Bases, JSON Canvas
    "base",
    "canvas",
    # images
    "avif",
    "bmp",
    "gif",
    "jpeg",
    "jpg",
    "png",
    "svg",
    "webp",
    # audio
    "flac",
    "m4a",
    "mp3",
    "ogg",
    "wav",
    "webm",
    "3gp",
    # video
    "mkv",
    "mov",
    "mp4",
    "ogv",
    # pdf
    "pdf",
}


def nfc(s: str) -> str:
    """Unicode NFC normalisation (macOS stores NFD names; Obsidian matches NFC)."""
    return unicodedata.normalize("NFC", s)


def fold(s: str) -> str:
    """Key used for every path comparison: NFC + case-insensitive."""
    return nfc(s).lower()


def list_vault(root: str):
    """Return (notes, attachments): sorted vault-relative POSIX paths.

    Hidden entries (name starting with '.') are skipped at every depth,
    which covers .obsidian/, .trash/, .git/ and dot-files.
    """
    notes, atts = [], []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/")
        for fn in sorted(filenames):
            if fn.startswith("."):
                continue
            rel = nfc(f"{rel_dir}/{fn}" if rel_dir else fn)
            (notes if fn.lower().endswith(".md") else atts).append(rel)
    return notes, atts


# --------------------------------------------------------------------------
# Masking code (fenced blocks and inline code spans)
# --------------------------------------------------------------------------

# Opening fence: optional indentation / blockquote '>' / list marker, then
# >=3 backticks or tildes.  (Heuristic: CommonMark limits indentation to 3
# spaces relative to the container; vaults often indent fences inside lists.)
FENCE_OPEN = re.compile(
    r"^(?P<prefix>[ \t>]*(?:(?:[-*+]|\d+[.)])[ \t]+)?)(?P<fence>`{3,}|~{3,})(?P<info>.*)$"
)


def _blank(s: str) -> str:
    """Replace every character except newlines by a space (keeps offsets)."""
    return re.sub(r"[^\n]", " ", s)


def mask_fenced_code(text: str) -> str:
    """Blank out fenced code blocks (``` or ~~~, closing fence >= opening).

    An unclosed fence runs to the end of the document (CommonMark).
    """
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if m and not (m.group("fence")[0] == "`" and "`" in m.group("info")):
            ch, n = m.group("fence")[0], len(m.group("fence"))
            close = re.compile(r"^[ \t>]*" + re.escape(ch) + "{" + str(n) + r",}[ \t]*$")
            out.append(_blank(lines[i]))
            i += 1
            while i < len(lines):
                closing = close.match(lines[i])
                out.append(_blank(lines[i]))
                i += 1
                if closing:
                    break
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


BACKTICK_RUN = re.compile(r"`+")
BLANK_LINE = re.compile(r"\n[ \t]*\n")


def mask_inline_code(text: str) -> str:
    """Blank out inline code spans: a run of N backticks closed by the next
    run of exactly N backticks within the same paragraph (CommonMark)."""
    chars = list(text)
    pos = 0
    while True:
        m = BACKTICK_RUN.search(text, pos)
        if not m:
            break
        start, n = m.start(), len(m.group())
        if start > 0 and text[start - 1] == "\\":  # escaped backtick
            pos = m.end()
            continue
        # look for a closing run of exactly n backticks
        j = m.end()
        closed = None
        while True:
            c = BACKTICK_RUN.search(text, j)
            if not c:
                break
            if BLANK_LINE.search(text, m.end(), c.start()):
                break  # a paragraph break ends the search
            if len(c.group()) == n:
                closed = c
                break
            j = c.end()
        if closed is None:
            pos = m.end()
            continue
        for k in range(start, closed.end()):
            if chars[k] != "\n":
                chars[k] = " "
        pos = closed.end()
    return "".join(chars)


MATH_BLOCK = re.compile(r"(?<!\\)\$\$.*?(?<!\\)\$\$", re.S)
# inline $...$: opening '$' followed by non-space, closing '$' preceded by
# non-space and not followed by a digit (so "$5 and $6" is not math).
MATH_INLINE = re.compile(r"(?<![\\$])\$(?=[^\s$])[^$\n]*?(?<=[^\s\\])\$(?!\d)")


def mask_math(text: str) -> str:
    """Blank out $$display$$ and $inline$ math (LaTeX is not link syntax)."""
    text = MATH_BLOCK.sub(lambda m: _blank(m.group(0)), text)
    return MATH_INLINE.sub(lambda m: _blank(m.group(0)), text)


# --------------------------------------------------------------------------
# Frontmatter (minimal YAML subset)
# --------------------------------------------------------------------------

FM_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)?^(?:---|\.\.\.)[ \t]*$", re.S | re.M)


def split_frontmatter(text: str):
    """Return (frontmatter_text or None, body_offset)."""
    m = FM_RE.match(text)
    if not m:
        return None, 0
    return m.group(1), m.end()


def _yaml_scalar(raw: str):
    """Parse one YAML scalar (or flow sequence) enough for link detection.

    Returns a str, a list, or None.  Unquoted ``[[X]]`` is a YAML flow
    sequence (nested list), *not* a string - Obsidian does not treat it as a
    link; we return a list so the caller can flag it.
    """
    s = raw.strip()
    if not s:
        return None
    if s[0] == '"':
        end = s.find('"', 1)
        while end != -1 and s[end - 1] == "\\":
            end = s.find('"', end + 1)
        body = s[1:end] if end != -1 else s[1:]
        return body.replace('\\"', '"').replace("\\\\", "\\")
    if s[0] == "'":
        end = s.find("'", 1)
        while end != -1 and end + 1 < len(s) and s[end + 1] == "'":
            end = s.find("'", end + 2)
        body = s[1:end] if end != -1 else s[1:]
        return body.replace("''", "'")
    if s[0] == "[":
        return _yaml_flow_seq(s)
    # plain scalar: a ' #' starts a comment
    s = re.split(r"\s#", s, maxsplit=1)[0].rstrip()
    return s


def _yaml_flow_seq(s: str):
    """Parse ``[a, "b", [c]]`` into a python list (strings / nested lists)."""
    items, depth, cur, q = [], 0, "", None
    inner = s.strip()
    if not inner.startswith("["):
        return inner
    # find the matching close bracket
    for _i, ch in enumerate(inner):
        if q:
            cur += ch
            if ch == q:
                q = None
            continue
        if ch in "\"'":
            q = ch
            cur += ch
        elif ch == "[":
            depth += 1
            if depth > 1:
                cur += ch
        elif ch == "]":
            depth -= 1
            if depth == 0:
                if cur.strip():
                    items.append(cur)
                break
            cur += ch
        elif ch == "," and depth == 1:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    out = []
    for it in items:
        it = it.strip()
        out.append(_yaml_flow_seq(it) if it.startswith("[") else _yaml_scalar(it))
    return out


KEY_RE = re.compile(
    r"""^(?P<key>"[^"]*"|'[^']*'|[^\s#'"\-][^:]*?|-[^\s][^:]*?)[ \t]*:(?:[ \t]+(?P<val>.*)|[ \t]*)$"""
)
ITEM_RE = re.compile(r"^(?P<ind>[ \t]*)-(?:[ \t]+(?P<val>.*)|[ \t]*)$")


def parse_frontmatter(fm: str):
    """Very small YAML subset: top-level ``key: scalar``, ``key: [flow]``,
    and ``key:`` followed by ``- item`` lines.  Block scalars (| >) and
    nested mappings are skipped.  Returns {key: value}."""
    props = {}
    cur_key = None
    block_scalar = False
    for line in fm.split("\n"):
        line = line.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indented = line[0] in " \t"
        m_item = ITEM_RE.match(line)
        if block_scalar and indented:
            continue
        block_scalar = False
        if m_item and cur_key is not None:
            val = m_item.group("val")
            lst = props.get(cur_key)
            if not isinstance(lst, list):
                lst = props[cur_key] = []
            lst.append(_yaml_scalar(val) if val is not None else None)
            continue
        if indented:
            continue  # nested mapping content - not modelled
        m = KEY_RE.match(line)
        if not m:
            cur_key = None
            continue
        key = m.group("key").strip("\"'")
        val = m.group("val")
        cur_key = key
        if val is None or not val.strip():
            props[key] = None
        elif val.strip()[:1] in ("|", ">"):
            props[key] = None
            block_scalar = True
        else:
            props[key] = _yaml_scalar(val)
    return props


WHOLE_WIKILINK = re.compile(r"^\[\[([^\n]*?)\]\]$")


def frontmatter_links(props):
    """Yield (prop_key, inner_linktext, shape) for property links.

    shape: 'text' (a scalar string) or 'list' (an item of a block or flow
    list).  Only a string that is *entirely* one ``[[...]]`` counts (that is
    what Obsidian records in ``frontmatterLinks``).  An unquoted ``[[X]]``
    parses as the nested list ``[["X"]]`` - Obsidian does NOT treat it as a
    link; it is yielded with shape 'unquoted' so the caller can count it.
    """

    def is_unquoted_wikilink(v):
        return (
            isinstance(v, list)
            and len(v) == 1
            and isinstance(v[0], list)
            and len(v[0]) == 1
            and isinstance(v[0][0], str)
        )

    def walk(key, v, shape):
        if isinstance(v, str):
            m = WHOLE_WIKILINK.match(v.strip())
            if m:
                yield key, m.group(1), shape
        elif is_unquoted_wikilink(v):
            yield key, v[0][0], "unquoted"
        elif isinstance(v, list):
            for item in v:
                yield from walk(key, item, "list")

    for key, val in props.items():
        yield from walk(key, val, "text")


# --------------------------------------------------------------------------
# Body link extraction
# --------------------------------------------------------------------------

# [[target]]: ends at the first ']]' (a single ']' does not end it), no line
# break, and an inner '[[' restarts the match (so [[a [[b]] c]] yields 'b').
WIKILINK = re.compile(r"(?<!\\)(?P<embed>!?)\[\[(?P<inner>(?:(?!\[\[|\]\])[^\n])*?)\]\]")

# [text](dest "title") / ![alt](dest) - dest either <...> or a run without
# spaces with balanced parentheses (one level).
MDLINK = re.compile(
    r"(?<![\\\]])(?P<embed>!?)\[(?P<text>(?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
    r"\(\s*(?P<dest><[^<>\n]*>|(?:[^\s()<>]|\([^\s()]*\))+)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def split_linktext(inner: str):
    """'Name#Heading|Display' -> ('Name', '#Heading', 'Display').

    Display text starts at the first '|'; a trailing backslash before it is
    the table escape ``[[a\\|b]]``.  The subpath starts at the first '#'
    (Obsidian's parseLinktext), so [[Name^block]] keeps '^block' in the path.
    """
    display = None
    if "|" in inner:
        inner, display = inner.split("|", 1)
        if inner.endswith("\\"):
            inner = inner[:-1]
    path, sub = inner, ""
    if "#" in inner:
        i = inner.index("#")
        path, sub = inner[:i], inner[i:]
    return path.strip(), sub, display


@dataclass
class Link:
    source: str
    raw: str  # the link text as written (inside [[ ]] / ( ))
    via: str  # wikilink | embed | mdlink | mdembed | property
    linkpath: str  # path part, decoded, no subpath/display
    subpath: str = ""
    prop: str | None = None
    target: str | None = None
    kind: str = "unresolved"  # note | attachment | unresolved
    candidates: int = 0  # how many files matched (ambiguity if > 1)
    rule: str = ""  # which resolution rule fired


def extract_links(source: str, text: str, stats: Counter):
    links = []
    if text.startswith("\ufeff"):
        text = text[1:]
    fm, off = split_frontmatter(text)
    if fm is not None:
        for key, inner, shape in frontmatter_links(parse_frontmatter(fm)):
            if shape == "unquoted":
                stats["fm_unquoted_wikilink_ignored"] += 1
                continue
            path, sub, _ = split_linktext(inner)
            links.append(Link(source, inner, "property", path, sub, prop=key))
    body = text[off:] if fm is not None else text
    n_raw = len(WIKILINK.findall(body))
    body = mask_inline_code(mask_fenced_code(body))
    n_code = len(WIKILINK.findall(body))
    body = mask_math(body)
    stats["wikilinks_ignored_in_code"] += n_raw - n_code
    stats["wikilinks_ignored_in_math"] += n_code - len(WIKILINK.findall(body))

    def _wl(m):
        inner = m.group("inner")
        path, sub, _ = split_linktext(inner)
        if path or sub:
            links.append(Link(source, inner, "embed" if m.group("embed") else "wikilink", path, sub))
        else:
            stats["empty_wikilink"] += 1
        return _blank(m.group(0))

    body = WIKILINK.sub(_wl, body)
    for m in MDLINK.finditer(body):
        dest = m.group("dest")
        if dest.startswith("<"):
            dest = dest[1:-1]
        dest = dest.strip()
        if not dest or SCHEME.match(dest) or dest.startswith("//"):
            continue
        decoded = unquote(dest)
        path, sub = decoded, ""
        if "#" in decoded:
            i = decoded.index("#")
            path, sub = decoded[:i], decoded[i:]
        links.append(Link(source, dest, "mdembed" if m.group("embed") else "mdlink", path.strip(), sub))
    return links


# --------------------------------------------------------------------------
# Resolution (Obsidian getFirstLinkpathDest, as described in RULES.md s.4)
# --------------------------------------------------------------------------


class Resolver:
    def __init__(self, files):
        self.files = files
        self.by_path = {}  # folded path -> real path
        self.by_name = defaultdict(list)  # folded file name -> [paths]
        self.by_stem = defaultdict(list)  # folded basename of .md notes -> [paths]
        for p in files:
            self.by_path.setdefault(fold(p), p)
            name = p.rsplit("/", 1)[-1]
            self.by_name[fold(name)].append(p)
            if name.lower().endswith(".md"):
                self.by_stem[fold(name[:-3])].append(p)

    def _exact(self, path):
        f = fold(path)
        if f in self.by_path:
            return self.by_path[f]
        if fold(path + ".md") in self.by_path:
            return self.by_path[fold(path + ".md")]
        return None

    def resolve(self, linkpath: str, source: str):
        """Return (target or None, n_candidates, rule)."""
        if linkpath == "":
            return source, 1, "self"  # [[#Heading]] / [[#^block]]
        lp = linkpath.replace("\\", "/")
        src_dir = posixpath.dirname(source)
        # Rule R: explicit relative path -> relative to the source, no fallback
        if lp.startswith("./") or lp.startswith("../"):
            joined = posixpath.normpath(posixpath.join(src_dir, lp))
            if joined.startswith("../") or joined == "..":
                return None, 0, "relative-outside-vault"
            hit = self._exact(joined)
            return hit, int(hit is not None), "relative"
        lp = lp.lstrip("/")  # '/Folder/Note' = vault-absolute
        if not lp:
            return None, 0, "empty"
        # Files whose path ends with '/<linkpath>' (or with '.md' added)
        flp = fold(lp)
        name = flp.rsplit("/", 1)[-1]
        cands = []
        for p in self.by_name.get(name, []):  # [[Figure 1.png]], [[Note.md]]
            if fold(p).endswith("/" + flp):
                cands.append(p)
        for p in self.by_stem.get(name, []):  # [[Note]] -> Note.md
            if fold(p)[:-3].endswith("/" + flp):
                cands.append(p)
        # Rule 1: an exact vault path wins (as written, then + '.md'), even
        # over a same-name file in the source's own folder
        hit = self._exact(lp)
        if hit:
            return hit, 1 + len(set(cands) - {hit}), "exact-path"
        # Rule 2: path-suffix match
        if not cands:
            return None, 0, "unresolved"
        cands = sorted(set(cands))
        same = [p for p in cands if posixpath.dirname(p) == src_dir]
        if same:
            return same[0], len(cands), "same-folder"
        # shortest path string; equal lengths: Obsidian is not stable, we take
        # the lexicographically first for determinism
        best = min(cands, key=lambda p: (len(p), p))
        return best, len(cands), "shortest-path" if len(cands) > 1 else "unique-name"


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------


def templates_folder(vault: str):
    """The core Templates plugin folder from .obsidian/templates.json, if any."""
    try:
        with open(os.path.join(vault, ".obsidian", "templates.json"), encoding="utf-8") as fh:
            folder = json.load(fh).get("folder") or None
    except (OSError, ValueError):
        return None
    return folder.strip("/") if folder else None


def analyse(vault: str, exclude_templates: bool = False):
    notes, atts = list_vault(vault)
    resolver = Resolver(notes + atts)
    tfolder = templates_folder(vault)
    stats = Counter(
        {
            "fm_unquoted_wikilink_ignored": 0,
            "empty_wikilink": 0,
            "case_insensitive_matches": 0,
            "wikilinks_ignored_in_code": 0,
            "wikilinks_ignored_in_math": 0,
        }
    )
    edges = []
    for n in notes:
        if exclude_templates and tfolder and n.startswith(tfolder + "/"):
            stats["template_notes_skipped_as_sources"] += 1
            continue
        with open(os.path.join(vault, n), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for link in extract_links(n, text, stats):
            target, ncand, rule = resolver.resolve(link.linkpath, n)
            link.target, link.candidates, link.rule = target, ncand, rule
            if target is None:
                link.kind = "unresolved"
            elif target.lower().endswith(".md"):
                link.kind = "note"
            else:
                link.kind = "attachment"
            if target is not None and rule != "self":
                # did we need case-folding?  compare the written name part
                written = nfc(link.linkpath.replace("\\", "/").rsplit("/", 1)[-1])
                tname = target.rsplit("/", 1)[-1]
                if written not in (tname, tname[:-3]) and written not in ("..", "."):
                    stats["case_insensitive_matches"] += 1
            edges.append(link)
    unresolved = Counter(e.linkpath for e in edges if e.kind == "unresolved")
    kinds = Counter(e.kind for e in edges)
    vias = Counter(e.via for e in edges)
    rules = Counter(e.rule for e in edges)
    summary = {
        "vault": os.path.abspath(vault),
        "templates_folder": tfolder,
        "notes": len(notes),
        "attachments": len(atts),
        "attachments_accepted_format": sum(
            1
            for a in atts
            if a.rsplit(".", 1)[-1].lower() in ACCEPTED_ATTACHMENT_EXTS and "." in a.rsplit("/", 1)[-1]
        ),
        "duplicate_note_basenames": sum(1 for v in resolver.by_stem.values() if len(v) > 1),
        "edges": len(edges),
        "note_edges": kinds["note"],
        "attachment_edges": kinds["attachment"],
        "unresolved_edges": kinds["unresolved"],
        "unresolved_distinct_targets": len(unresolved),
        "self_links": rules["self"],
        "ambiguous_resolutions": sum(1 for e in edges if e.candidates > 1),
        "by_syntax": dict(sorted(vias.items())),
        "by_rule": dict(sorted(rules.items())),
        "notes_with_outlinks": len({e.source for e in edges}),
        "distinct_note_pairs": len({(e.source, e.target) for e in edges if e.kind == "note"}),
        **{k: v for k, v in sorted(stats.items())},
    }
    return summary, edges, unresolved


def selftest():
    """Check Resolver against the fixtures observed in Obsidian 1.13.7
    (RULES.md section 4, [observed-3p]).  Pure in-memory, no files needed."""
    R = Resolver(
        [
            "Note.md",
            "zzzz/Note.md",
            "a/b/Note.md",
            "y.md",
            "Log.md",
            "Attachments/Figure 1.png",
            "Sub/My Note.md",
        ]
    )
    checks = [
        (R, "Note", "src.md", "Note.md"),  # exact path wins ...
        (R, "Note", "a/b/src.md", "Note.md"),  # ... even beside a/b/Note.md
        (R, "b/Note", "suffix.md", "a/b/Note.md"),  # path-suffix match
        (R, "../y", "a/x.md", "y.md"),  # explicit relative
        (R, "./y", "a/x.md", None),  # relative: no name fallback
        (R, "log", "src.md", "Log.md"),  # case-insensitive
        (R, "Figure 1.png", "a/x.md", "Attachments/Figure 1.png"),
        (R, "Figure 1", "a/x.md", None),  # attachments need the extension
        (R, "My Note.md", "src.md", "Sub/My Note.md"),  # markdown dest: vault-wide
        (R, "Sub/My Note.md", "Sub/x.md", "Sub/My Note.md"),
        (R, "", "a/x.md", "a/x.md"),  # [[#Heading]] = self
    ]
    R2 = Resolver(["zzzz/Note.md", "a/b/Note.md", "b/Note.md", "aaaaaaaa/Note.md"])
    checks += [
        (R2, "Note", "zzzz/src.md", "zzzz/Note.md"),  # own folder first
        (R2, "Note", "zzzz/deep/src.md", "b/Note.md"),  # ancestors don't count
        (R2, "Note", "src.md", "b/Note.md"),  # then shortest string
        (Resolver(["zzzz/Note.md", "a/b/Note.md"]), "Note", "src.md", "a/b/Note.md"),
    ]
    bad = 0
    for res, lp, src, want in checks:
        got = res.resolve(lp, src)[0]
        if got != want:
            bad += 1
            print(f"FAIL resolve({lp!r}, {src!r}) = {got!r}, want {want!r}")
    print(f"selftest: {len(checks) - bad}/{len(checks)} ok")
    return 1 if bad else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vault", nargs="?")
    ap.add_argument("--selftest", action="store_true", help="run the built-in resolution checks")
    ap.add_argument("--json", action="store_true", help="print summary, edges and unresolved targets as JSON")
    ap.add_argument(
        "--exclude-templates",
        action="store_true",
        help="do not read links from notes inside the .obsidian/templates.json folder",
    )
    args = ap.parse_args(argv)
    if args.selftest:
        return selftest()
    if not args.vault:
        ap.error("VAULT is required")
    summary, edges, unresolved = analyse(args.vault, args.exclude_templates)
    if args.json:
        json.dump(
            {
                "summary": summary,
                "edges": [
                    {
                        "source": e.source,
                        "target": e.target,
                        "kind": e.kind,
                        "raw": e.raw,
                        "via": e.via,
                        "linkpath": e.linkpath,
                        "subpath": e.subpath,
                        "prop": e.prop,
                        "rule": e.rule,
                        "candidates": e.candidates,
                    }
                    for e in edges
                ],
                "unresolved": dict(unresolved.most_common()),
            },
            sys.stdout,
            ensure_ascii=False,
            indent=1,
        )
        print()
        return 0
    for k, v in summary.items():
        print(f"{k:32} {v}")
    print("\ntop unresolved targets:")
    for t, c in unresolved.most_common(10):
        print(f"  {c:5}  {t}")
    amb = [e for e in edges if e.candidates > 1]
    if amb:
        print("\nambiguous resolutions (first 10):")
        for e in amb[:10]:
            print(f"  {e.source}: [[{e.raw}]] -> {e.target} ({e.candidates} candidates, {e.rule})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
