"""Small helpers shared by the test modules."""

from __future__ import annotations

from pathlib import Path


def write(root: Path, rel: str, text: str) -> Path:
    """Write a file under ``root`` (creating folders) and return its path."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def failed(result, code: int | None = None) -> str:
    """Assert a clean CLI failure: the exit code, one ``vaultmem:`` line on stderr, no traceback."""
    assert result.exit_code != 0, result.output
    if code is not None:
        assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("vaultmem: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]
