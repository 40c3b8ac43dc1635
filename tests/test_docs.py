"""The docs that describe the code are checked against it: the command reference against the
commands, the module maps against the modules."""

import re
from pathlib import Path

from cli_reference import reference

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "vaultmem"


def test_the_command_reference_is_the_commands_own_help():
    """docs/cli.md is what `python tests/cli_reference.py` prints (regenerate it after a change)."""
    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == reference()


def _modules() -> dict[str, list[str]]:
    """Folder (or "" for the top) -> the module names in it, without __init__ and __main__."""
    found: dict[str, list[str]] = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG)
        if rel.stem in ("__init__", "__main__"):
            continue
        folder = rel.parts[0] if len(rel.parts) > 1 else ""
        name = "/".join(rel.with_suffix("").parts[1:]) if folder else rel.stem
        found.setdefault(folder, []).append(name)
    return found


def _missing(text: str) -> list[str]:
    """The modules whose name (its last part, or folder/name) the text never mentions."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_/]*", text))
    return sorted(
        f"{folder}/{name}" if folder else name
        for folder, names in _modules().items()
        for name in names
        if name not in words
        and name.rsplit("/", 1)[-1] not in words
        and f"{name}.py" not in text
        and not ("/" in name and f"{name.rsplit('/', 1)[0]}/" in text)  # a subpackage named whole
    )


def test_the_readme_module_map_names_every_module():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = "\n".join(line for line in readme.splitlines() if line.startswith(("| `", "| top")))
    assert _missing(table) == []


def test_the_architecture_doc_names_every_module():
    assert _missing((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")) == []
