"""The files a shell command writes, read from the command line alone (no LLM, nothing run):
its redirections (``> f``, ``>> f``, ``&> f``, ``tee f``) and the commands that make, change,
move or delete a file (``touch``, ``cp``, ``mv``, ``rm``, ``sed -i``, ``perl -i``, ``install``,
``git mv``/``git rm``). A session whose agent changed files only through its shell tool changed
files (``summary.py`` lists them; it is not chat-only). What cannot be told (a variable, a
command substitution, a device) is left out.
"""

from __future__ import annotations

import shlex

REDIRECTS = {">", ">>", "&>", "&>>", ">|"}
SEPARATORS = {"|", "||", "&&", ";", "&", "(", ")", ";;", "|&"}
WRAPPERS = {"sudo", "env", "nice", "time", "command", "nohup", "xargs"}
TARGET_LAST = {"cp", "install", "ln"}  # the last argument is what is written


def _tokens(command: str) -> list[str]:
    """The command's words and operators; a here-document's lines are its body, not commands."""
    first = command.split("\n", 1)[0] if "<<" in command else command
    lexer = shlex.shlex(first, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote
        return first.split()


def _plain(word: str) -> bool:
    """A word that names a file as written (no variable, substitution, glob or device)."""
    return bool(word) and not word.startswith(("-", "/dev/", "/proc/")) and not any(c in word for c in "$`*?")


def _args(words: list[str]) -> list[str]:
    return [w for w in words if not w.startswith("-")]


def _by_command(words: list[str]) -> list[str]:
    """The files the command itself (not its redirections) writes."""
    while words and ("=" in words[0] and not words[0].startswith("=") or words[0] in WRAPPERS):
        words = words[1:]
    if not words:
        return []
    name, rest = words[0].rsplit("/", 1)[-1], words[1:]
    if name == "git" and rest[:1] in (["mv"], ["rm"]):
        name, rest = rest[0], rest[1:]
    if name in ("touch", "rm", "tee", "truncate", "shred"):
        return _args(rest)
    if name == "mv":
        return _args(rest)  # the sources go, the target comes
    if name in TARGET_LAST:
        return _args(rest)[-1:]
    if name == "sed" and any(w == "-i" or w.startswith(("-i", "--in-place")) for w in rest):
        args = [
            w
            for i, w in enumerate(rest)
            if not w.startswith("-") and (i == 0 or rest[i - 1] not in ("-e", "-f"))
        ]
        scripted = any(w in ("-e", "-f") or w.startswith(("--expression", "--file")) for w in rest)
        return args if scripted else args[1:]
    if name == "perl" and any(w.startswith("-") and "i" in w and not w.startswith("--") for w in rest):
        args = _args(rest)
        return args[1:] if any(w.startswith("-") and "e" in w for w in rest) else args
    return []


def written(command: str) -> list[str]:
    """The paths ``command`` writes, as written in it, in order, each once."""
    tokens = _tokens(command)
    out: list[str] = []
    segment: list[str] = []
    i = 0
    while i <= len(tokens):
        token = tokens[i] if i < len(tokens) else ";"
        if token in SEPARATORS:
            out += _by_command(segment)
            segment = []
        elif token in REDIRECTS and i + 1 < len(tokens):
            out.append(tokens[i + 1])
            i += 1
        elif token in ("<", "<<", "<<<", ">&", "<&") and i + 1 < len(tokens):
            i += 1  # what is read, or a descriptor
        elif not (token.isdigit() and i + 1 < len(tokens) and tokens[i + 1] in REDIRECTS):
            segment.append(token)
        i += 1
    return list(dict.fromkeys(p for p in out if _plain(p)))
