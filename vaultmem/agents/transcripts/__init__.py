"""Readers of the session logs agents keep on disk, each turning its agent's lines into
``events.Event``s with Claude Code's tool names (a shell call is ``Bash`` with
``input.command``, a file change ``Edit``/``Write`` with ``input.file_path``, a vaultmem MCP tool
``mcp__vaultmem__<tool>``), so that ``summarise``, ``unsaved_work`` and ``shown_by_tools`` work
unchanged. The reading rules are ``events.py``'s: regular files only, the last 32 MB at most,
a line that is too long, not JSON or of an unknown shape skipped, never fatal.

Each agent's module (``kinds/<agent>.py``) names its reader; the helpers the readers share are
in ``common.py``. Each format module has ``line_events(obj)`` (the events of one parsed line, on
its own) and a reader of the whole file (which may need more than one line at a time: Gemini
rewrites and rewinds records, Codex logs each prompt twice). Codex has one reader
(``rollouts.py``) for the hooks and the importer; ``history.py`` is the shape whole past
sessions are read into for the importers.
"""
