"""Note commands behind ``Vault``: remember, show, list, edit, delete, stats, export, import.

Each function takes the vault as its first argument and is bound as a ``Vault`` method.
Every change to a file is a guarded, atomic write through ``Store``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput, Conflict, NoteParseError
from ..core.filters import EPOCH, Filters, is_expired, now_utc, parse_time
from ..core.links import link_target
from ..core.memtypes import fill_template, known_types, load_template, normalize_type
from ..core.note import (
    IMPORTANCE_WORDS,
    STATUSES,
    as_list,
    content_hash,
    load_yaml_value,
    note_time,
    parse,
    render,
    set_fields,
    split_frontmatter,
)
from ..core.secrets import Scrubber
from ..core.store import check_title, new_id
from ..index import graph as graphmod
from ..index.manifest import Record
from . import aging, dupes
from .lifecycle import check_new, link_to, mark_superseded, same_key

if TYPE_CHECKING:  # pragma: no cover
    from .state import VaultState

EXPORT_FORMAT = "vaultmem-export/1"


def _stamp(now: dt.datetime) -> str:
    """A time as text (an export's date)."""
    return now.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _template_parts(vault: VaultState, type_: str, title: str, now: dt.datetime) -> tuple[dict, str]:
    text = load_template(type_, vault.templates_dir)
    if text is None:
        return {}, ""
    fm, body, _, _ = split_frontmatter(text)
    try:  # the title is set by remember itself, so YAML never sees it unescaped
        meta = load_yaml_value(fill_template(fm, "title", now), f"template {type_}") if fm else {}
    except NoteParseError:
        raise BadInput(f"the template for {type_!r} has invalid YAML frontmatter") from None
    return (meta if isinstance(meta, dict) else {}), fill_template(body, title, now)


def remember(
    vault: VaultState, type: str, title: str, content: str | None = None, *, tags: Iterable[str] = (),
    importance: int | str | None = None, links: Iterable[str] = (), anchor: str | None = None,
    scope: str | None = None, context: Iterable[str] = (), source: str | None = None,
    origin: str | None = None, now: dt.datetime | None = None, status: str = "active",
    extra: dict[str, Any] | None = None, key: str | None = None, supersedes: Iterable[str] = (),
    supersede: bool = True, age: bool = True,
) -> dict[str, Any]:  # fmt: skip
    """Write a new memory from its type's template; returns its id, path, what it superseded
    and the likely updates it did not supersede on its own (``possible_updates``).

    It supersedes older memories only on a sure signal: the same subject ``key``, the writer
    naming them (``supersedes``: ids, titles or paths), or a retraction of the old memory's own
    words (``updates.decide``); similarity alone never does. The possible updates are named in
    the new note's ``may_update:``, so recall and wake show the older note as "may be outdated
    by" the new one instead of hiding it. A ``candidate`` (an unconfirmed memory) never
    supersedes an active one. ``extra``: more frontmatter keys (e.g. ``branch``/``repo``).
    ``supersede=False``: likely updates are reported, never applied (an importer writing many
    memories at once); ``age=False``: the anchor's aging rules wait for ``age_anchor`` (called
    once after a batch)."""
    clean = Scrubber()  # text from an agent, a transcript or an import: no private span, no secret
    title, content, anchor, key, source = (clean.title(title), clean.text(content), clean.title(anchor),
                                           clean.title(key), clean.title(source))  # fmt: skip
    tags, links, context = ([clean.title(v) for v in vs] for vs in (tags, links, context))
    type_ = normalize_type(type)
    types = known_types(vault.templates_dir)
    if type_ not in types:
        raise BadInput(f"unknown type {type!r}; known types: {', '.join(types)}")
    title = check_title((title or "").strip())
    if not title:
        raise BadInput("a memory needs a title")
    if anchor:
        check_title(anchor, "an anchor name")
    if scope not in (None, "project", "user"):
        raise BadInput(f"--scope: {scope!r} is not 'project' or 'user'")
    now = now or now_utc()
    replaced: list = []
    possible: list = []
    key = _key(key)
    named = _named(vault, supersedes)
    branch = (str(extra["branch"]), extra.get("repo")) if extra and extra.get("branch") else (None, None)
    if content and content.strip():
        duplicate, replaced, possible = check_new(vault, type_, title, content, list(context), source, anchor,
                                                  branch=branch)  # fmt: skip
        # an active memory under an active one's title is that one (never "Title 2.md"); a candidate
        # is never merged into a memory nobody confirmed it for
        repeated = (
            None if duplicate or status != "active" else dupes.same_title(title, [*replaced, *possible])
        )
        duplicate = duplicate or repeated
        if duplicate is not None and not (key and duplicate.subject != key.casefold()):
            added = dupes.new_sentences(vault, duplicate, content) if repeated else []
            return {**_merge_duplicate(vault, duplicate, tags, added, source),
                    **({"redacted": clean.kinds} if clean.kinds else {})}  # fmt: skip
        if status != "active" or not supersede:
            possible, replaced = [*possible, *replaced], []
    if key and status == "active":  # the subject key decides, whatever the sources
        keyed = same_key(vault, type_, key, scope, branch=branch)
        replaced = [(r, None) for r in keyed] + [(r, c) for r, c in replaced if r not in keyed]
        possible = [(r, c) for r, c in possible if r not in keyed]
    if named and status == "active":  # the writer said so: whatever the signals
        replaced = [(r, c) for r, c in replaced if r not in named] + [(r, "named") for r in named]
        possible = [(r, c) for r, c in possible if r not in named]
    catalog = vault.catalog()
    warnings: list[str] = []  # what the writer should know: an anchor picked of several, a bare template
    created_anchor, anchor_path = (
        _ensure_anchor(vault, anchor, catalog, now, warnings) if anchor else (None, None)
    )
    defaults, template_body = _template_parts(vault, type_, title, now)
    meta = _new_meta(vault.note_ids(), type_, title, defaults, now)
    meta["status"] = status
    meta.update(_given(tags, importance, scope, source, origin, context, defaults))
    meta.update({k: v for k, v in (extra or {}).items() if v not in (None, "")})
    every = vault.note_paths() if anchor or possible or links else []
    if anchor:  # by its file name, as Obsidian resolves links; the name it was given as the label
        meta["anchor"] = link_to(anchor_path, every, _title_of(anchor)) if anchor_path else f"[[{anchor}]]"
    if key:
        meta["key"] = key
    if possible:
        meta["may_update"] = [link_to(r.path, every, r.title) for r, _ in possible]
    # no "# title" heading: Obsidian shows the file's title above the body
    body = f"{content.strip()}\n" if content and content.strip() else without_title(template_body, title)
    if links:
        body += "\nRelated: " + ", ".join(_related(vault, link, catalog, every) for link in links) + "\n"
    folder = existing_folder(vault.root, vault.config["folders"].get(type_, type_))
    path = vault.store.create(vault.store.unique_path(folder, title), render(meta, body))
    touched = [path] + ([created_anchor] if created_anchor else [])
    new = Record.from_note(vault.store.read(path), 0, 0)
    try:
        for rec, _ in replaced:
            touched.append(rec.path)
            mark_superseded(vault, rec, new)
    finally:  # the new note is indexed even if an old one changed meanwhile (Conflict)
        vault.sync_paths(touched)
    aged = _age_anchor(vault, type_, anchor_path or anchor, now) if age else []
    if not (content and content.strip()):  # said, never silently a note of empty headings
        held = f"only the {type_} template's empty headings" if body.strip() else "no text"
        warnings.append(f"no text given: {path} holds {held}; write the memory into it")
    return {"id": meta["id"], "path": path, "title": title, "type": type_, "created_anchor": created_anchor,
            "duplicate_of": None,
            "superseded": [_superseded(r, c, key) for r, c in replaced] + aged,
            "possible_updates": [{"id": r.key, "title": r.title, "similarity": _round(c)} for r, c in possible],
            **({"redacted": clean.kinds} if clean.kinds else {}), **({"warnings": warnings} if warnings else {})}  # fmt: skip


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _superseded(rec: Record, how: float | str | None, key: str | None) -> dict[str, Any]:
    """One memory remember superseded: by the same ``key`` (None), ``named`` by the writer, or
    a retraction of its words (the pair's similarity)."""
    out: dict[str, Any] = {
        "id": rec.key,
        "title": rec.title,
        "similarity": _round(how) if isinstance(how, float) else None,
    }
    if how is None:
        out["key"] = key
    elif how == "named":
        out["named"] = True
    return out


def _named(vault: VaultState, refs: Iterable[str]) -> list[Record]:
    """The memories a writer says the new one replaces: each must exist and be active."""
    out: list[Record] = []
    for ref in refs:
        rec = vault.find(ref)
        if rec.status != "active":
            raise BadInput(f"--supersedes {ref}: {rec.key} is {rec.status}, not active")
        if rec not in out:
            out.append(rec)
    return out


def _key(key: str | None) -> str | None:
    """A subject key as given to remember: one line, at most 200 characters."""
    if key is None:
        return None
    text = " ".join(str(key).split())
    if not text:
        raise BadInput("--key: the subject key is empty")
    if len(text) > 200:
        raise BadInput("--key: the subject key is longer than 200 characters")
    return text


def _merge_duplicate(vault: VaultState, rec: Record, tags: Iterable[str], sentences: list[str] | None = None,
                     source: str | None = None) -> dict[str, Any]:  # fmt: skip
    """A memory that is already there: report it, merging any new tags and ``sentences`` into it."""
    new_tags = list(dict.fromkeys(t.lstrip("#") for t in tags if t.lstrip("#").lower() not in rec.tags))
    sentences = sentences or []
    if sentences:
        dupes.add_text(vault, rec, sentences, source, note_time(now_utc()))
    if new_tags:
        edit(vault, rec.path, add_tags=new_tags)
    if new_tags or sentences:
        vault.sync_paths([rec.path])
    return {"id": rec.key, "path": rec.path, "title": rec.title, "type": rec.type, "created_anchor": None,
            "duplicate_of": rec.key, "superseded": [], "possible_updates": [], "tags_added": new_tags,
            "text_added": sentences}  # fmt: skip


def age_anchor(vault: VaultState, anchor: str, now: dt.datetime | None = None) -> list[dict]:
    """Apply an anchor's aging rules (its progress notes and session summaries kept bounded)."""
    return _age_anchor(vault, "session_summary", anchor, now or now_utc())


def _age_anchor(vault: VaultState, type_: str, anchor: str | None, now: dt.datetime) -> list[dict]:
    """Storing a progress note or session summary applies the aging rules of its anchor."""
    if not anchor or type_ not in ("progress", "session_summary"):
        return []
    records = vault.records()
    try:
        path = vault.find(anchor, records).path
    except BadInput:  # an anchor made on two clones, not yet folded
        path = _first_named(records, _title_of(anchor)).path
    actions = aging.plan(vault, anchor=path, now=now, per_anchor_only=True)
    aging.apply(vault, actions, now)
    return [
        {"id": a.id, "title": a.title, "similarity": None, "reason": a.reason, "action": a.kind}
        for a in actions
    ]


def _new_meta(taken: set[str], type_: str, title: str, defaults: dict, now: dt.datetime) -> dict:
    stamp = note_time(now)
    meta: dict[str, Any] = {"id": new_id(taken), "title": title, "type": type_, "status": "active"}
    meta.update({k: v for k, v in defaults.items() if k not in ("id", "title", "type", "created", "updated")})
    meta.update({"created": stamp, "updated": stamp})
    return meta


def _given(tags, importance, scope, source, origin, context, defaults: dict) -> dict:
    out: dict[str, Any] = {}
    tag_list = list(dict.fromkeys([*as_list(defaults.get("tags")), *(t.lstrip("#") for t in tags)]))
    if tag_list:
        out["tags"] = tag_list
    if importance not in (None, ""):
        out["importance"] = _importance_value(importance)
    for key, value in (("scope", scope), ("source", source), ("origin", origin)):
        if value:
            out[key] = value
    if context:
        out["context"] = list(context)
    return out


def _importance_value(value: int | str, flag: str = "--importance") -> int | str:
    text = str(value).strip().lower()
    if text in IMPORTANCE_WORDS:  # stored as its number: one property type across notes
        return IMPORTANCE_WORDS[text]
    if text.isdigit() and 1 <= int(text) <= 10:
        return int(text)
    raise BadInput(f"{flag}: {value!r} is not 1-10 or high/medium/low")


def _ensure_anchor(
    vault: VaultState, anchor: str, catalog: dict[str, Record], now: dt.datetime, warnings: list[str]
) -> tuple[str | None, str | None]:
    """(the path of the anchor note if created here, its path). Created when no note by that
    name exists, at the one path its title gives (``projects/Project - X.md``): a file already
    there (another clone's, not yet indexed) is that anchor, never a second one. A name several
    notes have picks one, said in ``warnings``."""
    from ..core.errors import NoteNotFound
    from ..core.store import safe_filename

    title = _title_of(anchor)
    try:
        return None, vault.find(link_target(anchor) or anchor, catalog).path
    except NoteNotFound:
        pass
    except BadInput:  # two notes of that name (two clones' anchors, not yet folded): the first, said
        picked = _first_named(catalog, title).path
        same = sorted(r.path for r in catalog.values() if r.title.casefold() == title.casefold())
        warnings.append(f"--anchor {anchor!r} names {len(same)} notes ({', '.join(same[:5])}): linked "
                        f"{picked}; name another by its path")  # fmt: skip
        return None, picked
    folder = existing_folder(vault.root, vault.config["folders"].get("project", "project"))
    path = (
        f"{folder.strip('/')}/{safe_filename(title)}.md"
        if folder.strip("/")
        else f"{safe_filename(title)}.md"
    )
    if vault.store.is_note(path) and os.path.lexists(vault.root / path):
        vault.sync_paths([path])
        return None, path
    result = remember(vault, "project", title, f"Anchor note for {title}.", tags=["anchor"], now=now)
    catalog.update(vault.catalog())
    return result["path"], result["path"]


def _first_named(records: dict[str, Record], title: str) -> Record:
    """Of several notes titled ``title`` (an anchor made on two clones), the active one at the
    shortest path: the one ``maintain`` folds the others into."""
    same = sorted((r for r in records.values() if r.title.casefold() == title.casefold()),
                  key=lambda r: (r.status != "active", len(r.path), r.path))  # fmt: skip
    if not same:
        raise BadInput(f"--anchor: no note called {title!r}")
    return same[0]


def _title_of(anchor: str) -> str:
    """The name an ``--anchor`` gives (a link's label, else its target; the text itself)."""
    from ..core.links import LINK_RE, parse_link

    m = LINK_RE.search(anchor)
    link = parse_link(m.group(2)) if m else None
    return (link.label or link.target) if link else anchor


def _related(vault: VaultState, name: str, catalog: dict[str, Record], every: list[str]) -> str:
    """A ``Related:`` link to the note ``name`` names, by its file name; as given when none does."""
    from ..core.errors import VaultError

    try:
        rec = vault.find(link_target(name) or name, catalog)
    except VaultError:
        return f"[[{name}]]"
    return link_to(rec.path, every, name)


def without_title(body: str, title: str) -> str:
    """A template's body without its leading ``# <title>`` line (Obsidian shows the title)."""
    lines = body.lstrip("\n").split("\n")
    if lines and lines[0].strip() == f"# {title}":
        return "\n".join(lines[1:]).lstrip("\n")
    return body


def existing_folder(root: Path, folder: str) -> str:
    """``folder`` as the vault already spells it (a vault with ``Decisions/`` gets its decisions
    there): each level matched case-insensitively against the folders that exist."""
    parts, current = [], root
    for part in (p for p in folder.strip("/").split("/") if p):
        if not (current / part).is_dir() and current.is_dir():
            part = next((c.name for c in sorted(current.iterdir())
                         if c.is_dir() and c.name.casefold() == part.casefold()), part)  # fmt: skip
        parts.append(part)
        current = current / part
    return "/".join(parts)


def show(vault: VaultState, ref: str) -> dict[str, Any]:
    """A note's metadata, text and links: ``links`` (targets as written) and ``backlinks``
    (paths of the notes linking to it), read from the files (no index needed)."""
    records = vault.catalog()
    rec = vault.find(ref, records)
    text = vault.store.read_text(rec.path)
    backlinks = graphmod.backlinks(vault.build_graph(records.values()), rec.path)
    return {**_record_dict(rec), "backlinks": backlinks, "text": text}


def _record_dict(rec: Record) -> dict[str, Any]:
    status = "expired" if rec.status == "active" and is_expired(rec) else rec.status  # as recall shows it
    return {
        "id": rec.key, "title": rec.title, "path": rec.path, "type": rec.type, "status": status,
        "importance": rec.importance, "tags": list(rec.tags), "scope": rec.scope,
        "source": rec.source, "created": rec.created, "updated": rec.updated,
        "superseded_by": rec.superseded_by, "links": sorted({t for t, _ in rec.links}),
    }  # fmt: skip


def list_notes(vault: VaultState, *, types: Iterable[str] = (), statuses: Iterable[str] = (),
               tags: Iterable[str] = (), since: str | None = None, importance: str | None = None,
               scope: str | None = None, limit: int | None = 20) -> list[dict[str, Any]]:  # fmt: skip
    """Notes matching the filters, newest first (by ``updated``)."""
    flt = Filters.build(types, tags, statuses, since=since, scope=scope, importance=importance,
                        include_hidden=bool(statuses))  # fmt: skip
    rows = [r for r in vault.catalog().values() if flt.metadata_match(r) and flt.visible(r)]
    rows.sort(key=lambda r: (parse_time(r.updated) or EPOCH, r.path), reverse=True)
    return [_record_dict(r) for r in (rows[:limit] if limit else rows)]


def parse_assignment(text: str) -> tuple[str, Any]:
    """``key=value`` with a YAML value (``importance=7``, ``tags=[a, b]``)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or key.startswith("-") or any(c in key for c in ":#\n"):
        raise BadInput(f"--set: expected key=value, got {text!r}")
    text = raw.strip()
    try:
        value = load_yaml_value(text, "--set") if text else ""
    except NoteParseError:
        value = text
    if isinstance(value, (dt.date, dt.datetime)):
        value = text
    elif isinstance(value, dict) and not text.startswith("{"):
        value = text  # title=Use X: because Y is a title, not a mapping
    elif isinstance(value, list) and not text.startswith("["):
        value = text  # "- x" is text
    elif isinstance(value, str) and value != text and not text.startswith(("'", '"', "|", ">")):
        value = text  # YAML would drop " #3" as a comment
    return key, value


def edit(vault: VaultState, ref: str, *, content: str | None = None, sets: Iterable[str] = (),
         add_tags: Iterable[str] = (), remove_tags: Iterable[str] = (), now: dt.datetime | None = None,
         expected_hash: str | None = None, record: bool = False) -> dict[str, Any]:  # fmt: skip
    """Change a note's body and/or frontmatter keys, under the note's lock and applied to its
    current text (so concurrent edits of different keys all land); with ``expected_hash``,
    refuses if the file changed since the caller read it. ``record``: keep the text before as
    an undo batch (``undo``: its id, when the note changed)."""
    if record:
        from . import undo

        with undo.recording(vault, "edit", ref) as batch:
            done = edit(vault, ref, content=content, sets=sets, add_tags=add_tags, remove_tags=remove_tags,
                        now=now, expected_hash=expected_hash)  # fmt: skip
        return {**done, "undo": None if batch.empty() else batch.id}
    rec = vault.find(ref)
    given: dict[str, Any] = dict(parse_assignment(s) for s in sets)
    if "id" in given:
        raise BadInput("--set: the id of a note cannot be changed")
    if isinstance(given.get("title"), str):
        check_title(given["title"])
    if given.get("importance") not in (None, ""):
        given["importance"] = _importance_value(given["importance"], "--set importance")
    if "status" in given and given["status"] not in STATUSES:
        raise BadInput(f"--set status: {str(given['status'])[:40]!r} is not one of {', '.join(STATUSES)}")

    def change(text: str) -> str:
        updates = dict(given)
        if add_tags or remove_tags:
            current = as_list(parse(text, rec.path).meta.get("tags"))  # the frontmatter's own list
            for tag in (t.lstrip("#").strip() for t in add_tags):
                if tag and tag.lower() not in {str(c).lower() for c in current}:
                    current.append(tag)
            gone = {t.lstrip("#").strip().lower() for t in remove_tags}
            kept = [c for c in current if str(c).lstrip("#").lower() not in gone]
            if kept != as_list(parse(text, rec.path).meta.get("tags")):
                updates["tags"] = kept
        new = _replace_body(text, rec.title, content) if content is not None else text
        if updates or new != text:
            updates.setdefault("updated", note_time(now or now_utc()))
        settled = (
            ("status_before_conflict",)
            if str(updates.get("status", "conflict")).lower() != "conflict"
            else ()
        )
        return set_fields(new, updates, settled)  # a new status settles a merge conflict

    old, new = vault.store.update(rec.path, change, expected_hash or None)
    return {"id": rec.key, "path": rec.path, "changed": new != old}


def _replace_body(text: str, title: str, content: str) -> str:
    fm, body, opener, closer = split_frontmatter(text)
    heading = next((ln for ln in body.splitlines() if ln.startswith("# ")), None)
    newline = "\r\n" if "\r\n" in text else "\n"
    new_body = (f"{heading}\n\n" if heading else "") + content.strip() + "\n"
    new_body = new_body.replace("\r\n", "\n").replace("\n", newline)
    return (opener + fm + closer + new_body) if fm is not None else new_body


def write_note(vault: VaultState, path: str, content: str, expected_version: str | None = None,
               overwrite: bool = False) -> dict[str, Any]:  # fmt: skip
    """Create a whole note file, or replace one only if it is unchanged since it was read
    (``expected_version``: its ``content_hash`` then) or with ``overwrite``; then index it.
    Paths outside the vault, dot-folders and non-notes are refused."""
    clean = Scrubber()
    rel = vault.store.relpath(vault.store.abspath(clean.title(path) or path))
    content = _scrub_note(content, rel, clean)
    if not vault.store.is_note(rel):
        raise BadInput(
            f"{rel}: not a note path (only .md files outside dot-folders, templates and ignored paths)"
        )
    try:
        parse(content, rel)
    except NoteParseError as e:
        raise BadInput(f"content is not a readable note: {e.reason}") from None
    created = not os.path.lexists(vault.root / rel)
    if created and expected_version is not None:
        raise Conflict(
            f"{rel} no longer exists (moved or deleted since you read it); find it again with recall"
        )
    if created:
        vault.store.create(rel, content)
    else:
        if not overwrite and expected_version is None:
            raise Conflict(
                f"{rel} exists; read_note it and pass its version as expected_version (or overwrite=true)"
            )

        def replace(text: str) -> str:  # checked under the note's lock
            current = content_hash(text)
            if not overwrite and expected_version != current:
                raise Conflict(f"{rel} changed since you read it (version {expected_version}, now {current}); "
                               "read it again and redo your edit")  # fmt: skip
            return content

        vault.store.update(rel, replace)
    vault.sync_paths([rel])
    note = vault.store.read(rel)
    return {"id": note.id or rel, "path": rel, "title": note.title, "created": created, "version": content_hash(content),
            **({"redacted": clean.kinds} if clean.kinds else {})}  # fmt: skip


def _scrub_note(content: str, rel: str, clean: Scrubber) -> str:
    """A whole note from an agent without private spans or secrets: the body redacted with
    ``[REDACTED:<kind>]``, the frontmatter with the YAML-safe ``redacted-<kind>``; frontmatter
    that no longer parses after that is refused rather than stored with the secret."""
    fm, body, opener, closer = split_frontmatter(content)
    if fm is None:
        return clean.text(content) or content
    new_fm = clean.title(fm) or fm
    if new_fm != fm:
        try:
            load_yaml_value(new_fm, rel)
        except NoteParseError:
            raise BadInput(f"{rel}: the frontmatter holds a secret that cannot be redacted in place; "
                           "remove it and write again") from None  # fmt: skip
    return opener + new_fm + closer + (clean.text(body) or body)


def delete(vault: VaultState, ref: str) -> dict[str, Any]:
    """Move a note to the vault's ``.trash/`` folder; nothing is destroyed."""
    rec = vault.find(ref)
    return {"id": rec.key, "path": rec.path, "trashed_to": vault.store.trash(rec.path)}


def stats(vault: VaultState) -> dict[str, Any]:
    """Counts by type, status and importance, the date range and disk use."""
    records = vault.catalog()
    by: dict[str, dict[str, int]] = {"type": {}, "status": {}, "importance": {}}
    for r in records.values():
        for name, value in (
            ("type", r.type or "(none)"),
            ("status", r.status),
            ("importance", str(r.importance)),
        ):
            by[name][value] = by[name].get(value, 0) + 1
    times = sorted(t for r in records.values() for t in [parse_time(r.created)] if t)
    index_bytes = (
        sum(p.stat().st_size for p in vault.index_dir.rglob("*") if p.is_file())
        if vault.index_dir.exists()
        else 0
    )
    return {
        "notes": len(records),
        "by_type": dict(sorted(by["type"].items(), key=lambda kv: (-kv[1], kv[0]))),
        "by_status": dict(sorted(by["status"].items(), key=lambda kv: (-kv[1], kv[0]))),
        "by_importance": dict(sorted(by["importance"].items(), key=lambda kv: -int(kv[0]))),
        "oldest": times[0].isoformat() if times else None,
        "newest": times[-1].isoformat() if times else None,
        "notes_bytes": sum(r.size for r in records.values()),
        "index_bytes": index_bytes,
    }


def export(vault: VaultState) -> dict[str, Any]:
    """Every note's exact text, by path (a lossless backup); ``skipped``: files that could not be
    read, with why (reported by the caller, never silently dropped)."""
    notes, skipped = [], []
    for path in vault.store.list_paths():
        try:
            notes.append({"path": path, "text": vault.store.read_text(path)})
        except Exception as e:
            skipped.append({"path": path, "error": str(e)})
    return {"format": EXPORT_FORMAT, "exported": _stamp(now_utc()), "notes": notes, "usage": vault.usage.dump(),
            "skipped": skipped}  # fmt: skip


def import_(vault: VaultState, data: dict[str, Any]) -> dict[str, Any]:
    """Write notes from an export; notes whose id (or, without id, path) exists are skipped."""
    if (
        not isinstance(data, dict)
        or data.get("format") != EXPORT_FORMAT
        or not isinstance(data.get("notes"), list)
    ):
        raise BadInput(f"not a vaultmem export (expected format {EXPORT_FORMAT!r})")
    entries = [_import_entry(vault, item) for item in data["notes"]]  # all checked before any write
    catalog = vault.catalog()
    ids = {r.id for r in catalog.values() if r.id}
    imported, skipped, paths = 0, 0, list[str]()
    for path, text in entries:
        try:
            note_id = parse(text, path).id
        except NoteParseError:  # exported as it was: a broken note is restored as it was
            note_id = None
        if (note_id and note_id in ids) or os.path.lexists(vault.root / path):
            skipped += 1
            continue
        vault.store.create(path, text)
        if note_id:
            ids.add(note_id)
        imported += 1
        paths.append(path)
    usage = data.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise BadInput("the export's usage section is not an object")
    usage_rows = vault.usage.load(usage) if usage else 0
    vault.sync_paths(paths)
    return {"imported": imported, "skipped_existing": skipped, "paths": paths, "usage_rows": usage_rows}


def _import_entry(vault: VaultState, item: Any) -> tuple[str, str]:
    """(path, text) of one export entry; BadInput/VaultError for anything that is not a note
    path inside the vault (absolute, ``..``, hidden folders such as ``.vaultmem/``)."""
    path = item.get("path") if isinstance(item, dict) else None
    text = item.get("text") if isinstance(item, dict) else None
    if not isinstance(path, str) or not isinstance(text, str) or not path.endswith((".md", ".markdown")):
        raise BadInput(f"export entry is not a note: {str(path)[:80]!r}")
    vault.store.abspath(path)  # refuses absolute paths and paths leading outside
    if any(part.startswith(".") for part in path.replace("\\", "/").split("/")):
        raise BadInput(f"export entry {path[:80]!r} is not a note path (hidden or relative folder)")
    return path, text


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


__all__ = [
    "age_anchor",
    "remember",
    "show",
    "list_notes",
    "edit",
    "write_note",
    "delete",
    "stats",
    "export",
    "import_",
]
