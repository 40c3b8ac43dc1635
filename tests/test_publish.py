"""Ready to publish (issue 38): the distribution has a name of its own on the package index
("vaultmem" there is an unrelated project), every install hint names it, and the built wheel
installs into a fresh venv and answers README's first recall."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import DEMO, REPO, copy_notes

DIST = "vaultmem-md"  # free on PyPI when chosen (pip download: no matching distribution)
TAKEN = "vaultmem"
# an install command (pip, pipx, uv, uvx) whose package is the taken name, with or without extras
INSTALL_TAKEN = re.compile(
    r"\b(?:pip3?|pipx|uv(?:\s+tool|\s+pip)?|uvx)\s+(?:install|add|run)?\s*(?:-[\w-]+(?:=\S+)?\s+)*"
    r"""["'`]*vaultmem(?:\[[\w,]+\])?(?![\w.-])""",
    re.IGNORECASE,
)
TEXT = ("*.md", "*.py", "*.html", "*.toml", "*.txt", "*.json", "*.yml", "*.yaml", "*.js")
SKIP = {".git", ".venv", "archive", "node_modules", "__pycache__", "build", "dist"}


def texts() -> list[Path]:
    """Every text file the project ships or documents: docs, README, package, templates, tests."""
    out = []
    for pattern in TEXT:
        for path in REPO.rglob(pattern):
            rel = path.relative_to(REPO).parts
            if not SKIP.intersection(rel) and not any(p.endswith(".egg-info") for p in rel):
                out.append(path)
    return out


def test_the_pattern_finds_install_commands_of_the_taken_name():
    for bad in ("pipx install vaultmem", "uv tool install vaultmem", "pip install 'vaultmem[codex]'",
                "pip install -U vaultmem", "(`pip install vaultmem[codex]`)", "uvx vaultmem recall x"):  # fmt: skip
        assert INSTALL_TAKEN.search(bad), bad
    for good in ("pipx install vaultmem-md", "pip install 'vaultmem-md[codex]'", "uv tool install vaultmem-md",
                 "pip install -e .", "uvx --from vaultmem-md vaultmem recall x"):  # fmt: skip
        assert not INSTALL_TAKEN.search(good), good


def test_no_text_names_the_taken_distribution_in_an_install_command():
    found = [f"{p.relative_to(REPO)}:{n}: {line.strip()}" for p in texts() if p.name != "test_publish.py"
             for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if INSTALL_TAKEN.search(line)]  # fmt: skip
    assert found == []


def test_the_distribution_has_its_own_name_and_keeps_the_command():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == DIST != TAKEN
    assert project["scripts"] == {"vaultmem": "vaultmem.cli.main:main"}
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"pipx install {DIST}" in readme and f"uv tool install {DIST}" in readme


def first_recall() -> list[str]:
    """The arguments of README's first `vaultmem recall` (its first command block)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", readme.split("## Set up", 1)[1], re.S).group(1)  # type: ignore[union-attr]
    command = next(part for part in block.split("&&") if part.strip().startswith("vaultmem recall"))
    return shlex.split(command)[1:]


def deps_folder(tmp: Path) -> Path:
    """This environment's installed packages as links, without vaultmem itself (its editable
    install): the fresh venv finds its dependencies there, so pip downloads nothing."""
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    folder = tmp / "deps"
    folder.mkdir()
    for entry in site.iterdir():
        name = entry.name.lower()
        if name.startswith(("vaultmem", "__editable__", "_vaultmem")) or name.endswith(".pth"):
            continue
        (folder / entry.name).symlink_to(entry)
    return folder


@pytest.mark.model
@pytest.mark.wheel
def test_the_built_wheel_installs_into_a_fresh_venv_and_answers_readmes_first_recall(tmp_path):
    dist = tmp_path / "dist"
    run = lambda *cmd, **kw: subprocess.run(
        cmd, check=True, capture_output=True, text=True, timeout=600, **kw
    )
    src = tmp_path / "src"  # a copy: the build writes build/ and *.egg-info beside the sources
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".git", ".venv", "*.egg-info", "build", "dist",
                                                              ".vaultmem", ".vaultmem-usage", "__pycache__"))  # fmt: skip
    run(sys.executable, "-m", "build", "--no-isolation", "-o", str(dist), str(src))
    wheels, sdists = list(dist.glob("vaultmem_md-*.whl")), list(dist.glob("vaultmem_md-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", str(venv))
    python = venv / "bin" / "python"
    purelib = run(
        str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    ).stdout.strip()
    (Path(purelib) / "deps.pth").write_text(str(deps_folder(tmp_path)) + "\n", encoding="utf-8")
    run(sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index", "-q", str(wheels[0]))
    where = run(str(python), "-c", "import vaultmem; print(vaultmem.__file__)").stdout.strip()
    assert where.startswith(purelib), where  # the wheel's, not this checkout's

    vault = copy_notes(DEMO, tmp_path / "vaults" / "demo")
    args = first_recall()
    args[args.index("vaults/demo")] = str(vault)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("VAULTMEM_NO_SERVICE", None)  # as a new user runs it: the memory service starts
    vaultmem = str(venv / "bin" / "vaultmem")
    try:
        out = run(vaultmem, *args, env=env, cwd=tmp_path).stdout
    finally:
        subprocess.run([vaultmem, "service", "stop"], env=env, capture_output=True, timeout=60)
    assert out.splitlines()[0].split("  ")[0] == " 1. Use Postgres advisory locks for job leasing", out
