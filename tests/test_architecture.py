"""The package's folders are its layers (see docs/architecture.md): one table says which folder may
import which, every module lives in a folder of the table, nothing loops, and the fast paths load
only what they need."""

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "vaultmem"

# unit -> the units it may import at run time (imports under TYPE_CHECKING only type the code).
# "top" is the facade and routing at the package's top: vault, multi, api, __init__.
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "index": {"core"},
    "recall": {"core", "index"},
    "memory": {"core", "index", "recall"},
    "service": {"core", "index", "recall", "memory"},
    "sync": {"core"},
    "top": {"core", "index", "recall", "memory", "service", "sync"},
    "agents": {"core", "index", "recall", "memory", "service", "sync", "top"},
    "web": {"core", "index", "recall", "memory", "service", "sync", "top", "agents"},
    "cli": {"core", "index", "recall", "memory", "service", "sync", "top", "agents", "web"},
}
TOP = {"vault", "multi", "api", "doctor", "__init__"}
ENTRY = {"__main__": "cli"}  # `python -m vaultmem` is the console entry's twin
FACADE_PARTS = {"memory"}  # composed by Vault: never import it, even for types at run time


def unit_of(parts: list[str]) -> str:
    """The table's unit for a module given as its path parts under vaultmem/."""
    if len(parts) > 1:
        return parts[0]
    return "top" if parts[0] in TOP else ENTRY.get(parts[0], f"<outside the table: {parts[0]}>")


def _targets(here: list[str], node: ast.AST) -> list[list[str]]:
    """The vaultmem modules (as path parts) an import statement names."""
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = here[: len(here) - (node.level - 1)] + (node.module.split(".") if node.module else [])
        elif (node.module or "").split(".")[0] == "vaultmem":
            base = node.module.split(".")[1:]
        else:
            return []
        if node.module:  # `from .pkg import name`: name may be a submodule of pkg
            return [base] + [base + [a.name] for a in node.names]
        return [base + [a.name] for a in node.names]
    if isinstance(node, ast.Import):
        return [a.name.split(".")[1:] for a in node.names if a.name.startswith("vaultmem.")]
    return []


def _module_imports(path: Path) -> set[tuple[str, bool]]:
    """(imported module as dotted parts below vaultmem, only under TYPE_CHECKING?) of one file."""
    parts = list(path.relative_to(PKG).with_suffix("").parts)
    here = parts[:-1]
    found: set[tuple[str, bool]] = set()

    def visit(node: ast.AST, guarded: bool) -> None:
        for child in ast.iter_child_nodes(node):
            g = guarded or (isinstance(child, ast.If) and "TYPE_CHECKING" in ast.dump(child.test))
            for target in _targets(here, child):
                if target:
                    found.add((".".join(target), g))
            visit(child, g)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


def _unit_of_target(dotted: str) -> str:
    parts = dotted.split(".")
    if (PKG / parts[0]).is_dir():
        return parts[0]
    return (
        unit_of(parts[:1]) if (PKG / f"{parts[0]}.py").exists() else "top"
    )  # a name of vaultmem/__init__.py


MODULES = {".".join(f.relative_to(PKG).with_suffix("").parts): f for f in PKG.rglob("*.py")}
GRAPH = {name: _module_imports(path) for name, path in MODULES.items()}


def test_every_module_lives_in_a_folder_of_the_table():
    outside = sorted(m for m in MODULES if unit_of(m.split(".")) not in ALLOWED)
    assert outside == []


def test_each_folder_imports_only_what_the_table_allows():
    wrong = sorted(
        (m, dep)
        for m, deps in GRAPH.items()
        for dep, typing_only in deps
        if not typing_only
        and (mine := unit_of(m.split("."))) != (theirs := _unit_of_target(dep))
        and theirs not in ALLOWED.get(mine, set())
    )
    assert wrong == []


def test_the_table_points_one_way():
    order = list(ALLOWED)
    assert all(order.index(dep) < order.index(unit) for unit, deps in ALLOWED.items() for dep in deps)


def resolve_module(dotted: str, importer: str = "") -> set[str]:
    """The modules an import of ``dotted`` runs: the module itself (a package is its ``__init__``;
    a name imported from a module is that module) and the ``__init__`` of every subpackage on the
    way (``vaultmem/__init__`` is lazy and left out), except the importer's own packages, which
    have run before it."""
    parts = dotted.split(".")
    found = {
        ".".join(parts[:i] + ["__init__"])
        for i in range(1, len(parts))
        if not importer.startswith(".".join(parts[:i]) + ".")
    }
    if dotted in MODULES:
        found.add(dotted)
    elif f"{dotted}.__init__" in MODULES:
        found.add(f"{dotted}.__init__")
    return found & MODULES.keys()


def runtime_graph() -> dict[str, set[str]]:
    """Module -> the modules it runs at import or call time (TYPE_CHECKING imports left out)."""
    return {
        m: set().union(*(resolve_module(d, m) for d, typing_only in deps if not typing_only)) - {m}
        for m, deps in GRAPH.items()
    }


def test_package_imports_resolve_to_their_init():
    """`from .transcripts import x` and `import vaultmem.agents.transcripts` reach the package's
    ``__init__``: a cycle through a package is a cycle (the check once missed one)."""
    sub = next(m.rpartition(".")[0] for m in MODULES if m.count(".") == 2 and m.endswith(".__init__"))
    assert f"{sub}.__init__" in resolve_module(sub)
    assert f"{sub}.__init__" in resolve_module(f"{sub}.anything")


def test_no_runtime_import_cycle_between_modules():
    runtime = runtime_graph()

    def reach(start: str) -> set[str]:
        seen, todo = set(), list(runtime.get(start, ()))
        while todo:
            mod = todo.pop()
            if mod not in seen:
                seen.add(mod)
                todo += runtime.get(mod, ())
        return seen

    assert sorted(m for m in runtime if m in reach(m)) == []


def test_the_facade_parts_do_not_reach_back_into_vault():
    back = sorted(m for m in MODULES if m.split(".")[0] in FACADE_PARTS
                  for d, typing_only in GRAPH[m] if d == "vault" and not typing_only)  # fmt: skip
    assert back == []


def test_command_modules_open_vaults_only_through_the_session():
    """The CLI opens vaults through api.Session (vault:id references, routing), never by itself."""
    found = []
    for name, path in MODULES.items():
        if name.split(".")[0] != "cli":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                "Vault",
                "open_vault",
            ):
                found.append((name, node.lineno))
        found += [(name, dep) for dep, typing_only in GRAPH[name] if dep == "vault" and not typing_only]
    assert found == []


def test_the_cli_and_the_library_api_import_light():
    """`vaultmem recall` through a watcher (and a hook) loads no heavy module."""
    code = "import sys, vaultmem.cli.app, vaultmem.api; print(sorted(m for m in sys.modules if m.split('.')[0] in " \
           "('whoosh', 'numpy', 'fastembed', 'networkx', 'yaml', 'mcp', 'watchdog')))"  # fmt: skip
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        == "[]\n"
    )


FAST_PATH = """
import sys
sys.argv = [{argv0!r}, 'recall', '--help']
{entry}
from pathlib import Path
from vaultmem.memory import branches
branches.code_state = lambda cwd: (_ for _ in ()).throw(AssertionError('git asked'))
assert branches.shown_test(Path('.'))(Path({vault!r}), 'Plain.md')
loaded = [m for m in sys.modules if m.startswith(('vaultmem.cli', 'vaultmem.service')) or m in ('yaml', 'vaultmem.core.notedates')]
print(sorted(loaded))
"""
FAST_LOADED = "['vaultmem.cli', 'vaultmem.cli.argv', 'vaultmem.cli.common', 'vaultmem.cli.hits', 'vaultmem.cli.main', 'vaultmem.cli.quick', 'vaultmem.cli.recall', 'vaultmem.service', 'vaultmem.service.client', 'vaultmem.service.control']"


def test_the_recall_fast_path_builds_only_its_own_command(tmp_path):
    """`vaultmem recall` loads cli.recall, not cli.app and the other command modules, and the
    branch filter reads no YAML and asks git nothing for a note without a `branch:` line."""
    (tmp_path / "Plain.md").write_text("---\ntitle: Plain\n---\n\nNo branch here.\n", encoding="utf-8")
    entry = "from vaultmem.cli.main import main\ntry:\n    main()\nexcept SystemExit:\n    pass"
    code = FAST_PATH.format(argv0="vaultmem", entry=entry, vault=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == FAST_LOADED


def test_python_dash_m_takes_the_same_fast_path(tmp_path):
    """`python -m vaultmem recall` dispatches like the console entry (one entry dispatch)."""
    (tmp_path / "Plain.md").write_text("---\ntitle: Plain\n---\n\nNo branch here.\n", encoding="utf-8")
    entry = "import runpy\ntry:\n    runpy.run_module('vaultmem', run_name='__main__')\nexcept SystemExit:\n    pass"
    code = FAST_PATH.format(argv0="python -m vaultmem", entry=entry, vault=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == FAST_LOADED


HOOK_FAST = """
import io, sys
sys.argv = ['vaultmem', 'hook', 'prompt', '--agent', {agent!r}, '--vault', {vault!r}]
sys.stdin = io.StringIO({payload!r})
from vaultmem.cli.main import main
try:
    main()
except SystemExit as e:
    assert e.code == 0, e.code
print(sorted(m for m in sys.modules if m.startswith(('vaultmem.cli', 'vaultmem.agents')) or m in ('typer', 'click')))
"""
# summary (stdlib only) holds the one list of small talk, which the session summary uses too; events the reminder's
# mark; kinds one module per agent (the registry, adapters, names them all)
HOOK_LOADED = "['vaultmem.agents', 'vaultmem.agents.adapters', 'vaultmem.agents.events', 'vaultmem.agents.hook_io', 'vaultmem.agents.hooks', 'vaultmem.agents.kinds', 'vaultmem.agents.kinds.base', 'vaultmem.agents.kinds.claude', 'vaultmem.agents.kinds.codex', 'vaultmem.agents.kinds.copilot', 'vaultmem.agents.kinds.cursor', 'vaultmem.agents.kinds.gemini', 'vaultmem.agents.summary', 'vaultmem.cli', 'vaultmem.cli.argv', 'vaultmem.cli.main']"


def test_the_hook_prompt_fast_path_loads_no_typer_for_any_agent(tmp_path):
    """`hook prompt --agent X` (every prompt of every agent) is answered before typer is
    imported, with one adapter module more than Claude Code's path had."""
    (tmp_path / ".vaultmem").mkdir()
    for agent, payload in (("gemini", '{"prompt": "thanks!", "session_id": "s"}'),
                           ("copilot", '{"prompt": "ok", "sessionId": "s"}'), ("claude", '{"prompt": "thanks!"}')):  # fmt: skip
        code = HOOK_FAST.format(agent=agent, vault=str(tmp_path), payload=payload)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        assert out.strip().splitlines()[-1] == HOOK_LOADED, agent


SERVED = """
import io, sys
sys.argv = ['vaultmem', *{argv!r}]
sys.stdin = io.StringIO({payload!r})
from vaultmem.cli.main import main
try:
    main()
except SystemExit:
    pass
print(sorted(m for m in sys.modules if m.startswith('vaultmem.cli.') or m == 'vaultmem.vault'
             or m.split('.')[0] in ('typer', 'click', 'numpy', 'networkx', 'whoosh', 'fastembed')))
"""
DOOR = ["vaultmem.cli.argv", "vaultmem.cli.main"]  # the console entry and the one small parser
DOCTOR_LOADED = sorted([*DOOR, "vaultmem.cli.fast", "vaultmem.cli.render"])


def test_doctor_and_the_session_hooks_through_the_service_load_only_their_door(module_service, empty_vault):
    """`doctor` and `hook start|stop|end` answered by a ready memory service load no typer,
    click, numpy, networkx, whoosh, model or Vault facade, and no other command's module."""
    import json
    import os

    from conftest import MODULE_SERVICE_KEY

    env = {k: v for k, v in os.environ.items() if k not in ("VAULTMEM_NO_SERVICE", "VAULTMEM_TEST_NO_MODEL")}
    env.update(XDG_RUNTIME_DIR=str(module_service), VAULTMEM_SERVICE_KEY=MODULE_SERVICE_KEY,
               PYTHONPATH=str(PKG.parent))  # fmt: skip
    vault = str(empty_vault)
    run = lambda argv, payload="": subprocess.run([sys.executable, "-c", SERVED.format(argv=argv, payload=payload)],
                                                  capture_output=True, text=True, env=env, check=True).stdout  # fmt: skip
    run(["list", "--vault", vault])
    subprocess.run(
        [sys.executable, "-m", "vaultmem", "recall", "anything", "--vault", vault],
        env=env,
        capture_output=True,
        check=True,
    )  # fmt: skip  (the service serves the vault from now on)
    payload = json.dumps({"session_id": "s1", "cwd": vault, "source": "startup"})
    for argv, expected in ((["doctor"], DOCTOR_LOADED), (["doctor", "--json"], DOCTOR_LOADED),
                           (["hook", "start"], DOOR), (["hook", "stop"], DOOR), (["hook", "end", "--wait"], DOOR)):  # fmt: skip
        assert run([*argv, "--vault", vault], payload).strip().splitlines()[-1] == str(expected), argv


def test_the_console_entry_imports_no_process_machinery():
    """The entry every hook call pays for imports no subprocess/threading (a detached `hook end`
    imports them when it runs): they cost ~16 modules on every prompt."""
    code = "import sys; from vaultmem.cli.main import main; print(sorted(m for m in ('subprocess', 'threading', 'typer') if m in sys.modules))"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        == "[]\n"
    )
