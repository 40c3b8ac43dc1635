"""Reading an agent's session log into events (``events.Event``): the entry the hooks use. Each
agent's module (``kinds/<agent>.py``) names the reader of its log (``read_log``,
``line_events``; the readers are in ``transcripts/``), the summary of the events is
``summary.py``'s.
"""

from __future__ import annotations

import os

from .events import MAX_BYTES, load_line, memory_action, shown_by_tools, tail

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook imports this module)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable

    from .events import Event
    from .kinds.base import Adapter


def _adapter(agent: str) -> Adapter | None:
    from .adapters import ADAPTERS

    return ADAPTERS.get(agent)


def read_events(
    path: str | os.PathLike | None, max_bytes: int = MAX_BYTES, fmt: str = "claude"
) -> list[Event]:
    """The events of a session log (its last ``max_bytes``); [] when there is none or ``fmt``
    names no agent. Bad lines are skipped. ``fmt``: the agent whose log it is (its name)."""
    adapter = _adapter(fmt)
    return adapter.read_log(path, max_bytes) if adapter else []


def shown_in_transcript(path: str | os.PathLike | None, max_bytes: int, fmt: str = "claude") -> set[str]:
    """The memory ids the agent's own vaultmem tool calls showed it (``events.shown_by_tools``),
    from the last ``max_bytes`` of its log, parsing only the lines that call a vaultmem tool and
    those holding these calls' results (a hook at every prompt cannot afford the whole tail)."""
    adapter = _adapter(fmt)
    if adapter is None:
        return set()
    lines = tail(path, max_bytes).splitlines()

    def events(raws: Iterable[bytes]) -> list[Event]:
        return [e for raw in raws if (obj := load_line(raw)) is not None for e in adapter.line_events(obj)]

    uses = events(raw for raw in lines if b"vaultmem" in raw)
    asked = {e.id.encode() for e in uses if e.kind == "tool" and e.id and memory_action(e) == "recall"}
    if not asked:
        return set()
    results = events(raw for raw in lines if any(a in raw for a in asked))
    return shown_by_tools(uses + results)
