"""Reading an agent's session log into events (``events.Event``): the entry the hooks use. The
reader of each agent's format is in ``transcripts/`` (``transcripts.FORMATS``), the summary of
the events in ``summary.py``.
"""

from __future__ import annotations

import os

from .events import MAX_BYTES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook imports this module)
if TYPE_CHECKING:  # pragma: no cover
    from .events import Event


def read_events(
    path: str | os.PathLike | None, max_bytes: int = MAX_BYTES, fmt: str = "claude"
) -> list[Event]:
    """The events of a session log (its last ``max_bytes``); [] when there is none. Bad lines
    are skipped. ``fmt``: the agent whose format it is (``transcripts.FORMATS``)."""
    from .transcripts import read

    return read(path, fmt, max_bytes)


def shown_in_transcript(path: str | os.PathLike | None, max_bytes: int, fmt: str = "claude") -> set[str]:
    """The memory ids the agent's own vaultmem tool calls showed it (``events.shown_by_tools``),
    from the last ``max_bytes`` of its log, parsing only the lines that call a vaultmem tool and
    those holding these calls' results (a hook at every prompt cannot afford the whole tail)."""
    from .transcripts import shown

    return shown(path, fmt, max_bytes)
