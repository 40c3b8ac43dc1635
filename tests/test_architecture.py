"""Layers point one way and nothing loops (see docs/architecture.md)."""

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "vaultmem"
LOW = {"note", "links", "store", "manifest", "bm25", "vectors", "embed", "indexer", "fusion", "traverse", "graph",
       "chunking", "analysis", "ignore"}  # fmt: skip
HIGH = {"recall", "vault", "ops", "mcp_server", "web", "hooks", "multi", "context", "sessions", "aging", "lifecycle",
        "api"}  # fmt: skip
FACADE_PARTS = {"ops", "lifecycle", "aging", "context", "sessions"}  # composed by Vault: never import it


def _imports(node: ast.AST, typing_only: bool = False) -> set[tuple[str, bool]]:
    """(imported vaultmem module, only under TYPE_CHECKING?) for every import below ``node``."""
    found: set[tuple[str, bool]] = set()
    for child in ast.iter_child_nodes(node):
        guarded = typing_only or (isinstance(child, ast.If) and "TYPE_CHECKING" in ast.dump(child.test))
        if isinstance(child, ast.ImportFrom) and child.level:
            names = [child.module] if child.module else [a.name for a in child.names]
            found |= {(n.split(".")[0], guarded) for n in names}
        elif isinstance(child, ast.Import):
            found |= {(a.name.split(".")[1], guarded) for a in child.names if a.name.startswith("vaultmem.")}
        found |= _imports(child, guarded)
    return found


GRAPH = {f.stem: _imports(ast.parse(f.read_text(encoding="utf-8"))) for f in PKG.glob("*.py")}
RUNTIME = {m: {d for d, typing_only in deps if not typing_only} for m, deps in GRAPH.items()}


def _layer(mod: str) -> str:
    return "high" if mod in HIGH or mod.startswith("cli") else "low" if mod in LOW else "mid"


def test_low_layers_never_import_high_ones():
    upward = sorted((m, d) for m, deps in RUNTIME.items() for d in deps if _layer(m) == "low" and _layer(d) == "high")
    assert upward == []


def test_no_runtime_import_cycle():
    def reach(start: str) -> set[str]:
        seen, todo = set(), list(RUNTIME.get(start, ()))
        while todo:
            mod = todo.pop()
            if mod not in seen:
                seen.add(mod)
                todo += RUNTIME.get(mod, ())
        return seen

    assert sorted(m for m in RUNTIME if m in reach(m)) == []


def test_the_facade_parts_do_not_reach_back_into_vault():
    assert sorted(m for m in FACADE_PARTS if any(d == "vault" for d, _ in GRAPH[m])) == []


def test_the_cli_and_the_library_api_import_light():
    """`vaultmem recall` through a watcher (and a hook) loads no heavy module."""
    import subprocess
    import sys

    code = "import sys, vaultmem.cli, vaultmem.api; print(sorted(m for m in sys.modules if m.split('.')[0] in " \
           "('whoosh', 'numpy', 'fastembed', 'networkx', 'yaml', 'mcp', 'watchdog')))"  # fmt: skip
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


def test_the_recall_fast_path_builds_only_its_own_command(tmp_path):
    """`vaultmem recall` loads cli_recall, not cli.py and the other command modules, and the
    branch filter reads no YAML and asks git nothing for a note without a `branch:` line."""
    (tmp_path / "Plain.md").write_text("---\ntitle: Plain\n---\n\nNo branch here.\n", encoding="utf-8")
    code = (
        "import sys\n"
        "sys.argv = ['vaultmem', 'recall', '--help']\n"
        "from vaultmem.cli_fast import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "from pathlib import Path\n"
        "from vaultmem import branches\n"
        "branches.code_state = lambda cwd: (_ for _ in ()).throw(AssertionError('git asked'))\n"
        f"assert branches.shown_test(Path('.'))(Path({str(tmp_path)!r}), 'Plain.md')\n"
        "loaded = [m for m in sys.modules if m.startswith('vaultmem.cli') or m in ('yaml', 'vaultmem.notedates')]\n"
        "print(sorted(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "['vaultmem.cli_common', 'vaultmem.cli_fast', 'vaultmem.cli_recall', 'vaultmem.client']"
