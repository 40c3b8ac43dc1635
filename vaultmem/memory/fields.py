"""``remember``'s fields, declared once (as ``recall.params`` declares recall's): name, type,
default, help. The CLI's ``vaultmem remember`` options and the MCP ``remember`` tool's
arguments are built from ``FIELDS``, and each is a keyword of ``api.Session.remember``; a field
with ``session`` set also decides where the memory goes (``shared``, ``scope``), every other one
is ``ops.remember``'s own (``tests/test_one_door.py`` holds the three to it). Standard library
only.
"""

from __future__ import annotations

from ..recall.params import Param

FIELDS: tuple[Param, ...] = (
    Param("tags", list[str], "A tag to give the memory, e.g. cache (repeatable: one per tag).", [], flags=("--tag",)),
    Param("importance", int | str | None, "1-10, or high / medium / low (default 5)."),
    Param("links", list[str], "Titles of related notes to link to (repeatable).", [], flags=("--link",)),
    Param("anchor", str | None, "The anchor note to link to, e.g. 'Project: MyApp'; created if missing."),
    Param("scope", str | None, "project (default), or user for a person's preference that follows them.",
          session=True),
    Param("context", list[str], "Files or topics the memory is about, e.g. app/cache.py (repeatable).", [],
          flags=("--context",)),
    Param("source", str | None, "The agent or session writing it."),
    Param("shared", bool, "Store it in the team's shared vault instead of your own.", False, flags=("--shared",),
          session=True),
    Param("key", str | None, "Subject key naming the fact, e.g. deploy-target or user.editor: a new memory with "
          "the same key and type replaces the active one."),
    Param("supersedes", list[str], "Memories (ids, titles or paths) this one replaces, when you know (e.g. from "
          "recall): they are marked superseded (repeatable).", [], flags=("--supersedes",)),
)  # fmt: skip
BY_NAME = {f.name: f for f in FIELDS}
