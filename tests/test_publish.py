"""Ready to publish (issues 38, 49): the distribution has a name of its own on the package index
("vaultmem" there is an unrelated project), every install hint names it, the build prints no
warning, the sdist and the wheel carry the license, the demo vault and the man page, the sdist
leaves out the tests (they read the whole repository), README's links work on the package page,
and the built wheel alone, in a fresh venv, runs README's first command and its tour."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from conftest import DEMO, REPO

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


PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
URL = PROJECT["urls"]["Repository"]


def run(*cmd: str, **kw) -> subprocess.CompletedProcess:  # type: ignore[no-untyped-def]
    return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600, **kw)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path, str]:
    """(wheel, sdist, what the build printed), built as `python -m build` does: the sdist from a
    copy of the sources, the wheel from the sdist."""
    tmp = tmp_path_factory.mktemp("build")
    src, dist = tmp / "src", tmp / "dist"  # a copy: the build writes build/ and *.egg-info beside the sources
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".git", ".venv", "*.egg-info", "build", "dist",
                                                              ".vaultmem", ".vaultmem-usage", "__pycache__"))  # fmt: skip
    env = {
        k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"
    }  # a setting, not the build's
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "-o", str(dist), str(src)],
                          capture_output=True, text=True, timeout=600, env=env)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    wheels, sdists = list(dist.glob("vaultmem_md-*.whl")), list(dist.glob("vaultmem_md-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, list(dist.iterdir())
    return wheels[0], sdists[0], done.stdout + done.stderr


def shipped_demo() -> list[str]:
    """The demo vault's files as the repository holds them (not a README run's index)."""
    return sorted(p.relative_to(DEMO).as_posix() for p in DEMO.rglob("*") if p.is_file()
                  and not {".vaultmem", ".vaultmem-usage", ".trash"} & set(p.relative_to(DEMO).parts))  # fmt: skip


@pytest.mark.wheel
def test_the_build_warns_of_nothing_and_both_archives_carry_what_they_need(built):
    wheel, sdist, printed = built
    assert [line for line in printed.splitlines() if "warn" in line.lower()] == []
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        info = tar.extractfile(next(n for n in tar.getnames() if n.endswith("/PKG-INFO"))).read().decode()  # type: ignore[union-attr]
    # the tests read benchmarks/, .ci/, git history and shared data sets: they stay in the clone
    assert not [n for n in names if n.startswith("tests/")]
    assert {"LICENSE", "README.md", "docs/cli.md", "docs/vaultmem.1"} <= names
    assert {f"vaults/demo/{f}" for f in shipped_demo()} <= names  # the wheel is built from it
    assert "License-Expression: MIT" in info and f"Project-URL: Repository, {URL}" in info
    with zipfile.ZipFile(wheel) as whl:
        files = set(whl.namelist())
        meta = whl.read(next(n for n in files if n.endswith(".dist-info/METADATA"))).decode()
        man = whl.read(next(n for n in files if n.endswith(".data/data/share/man/man1/vaultmem.1"))).decode()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in files)
    assert (
        sorted(n.removeprefix("vaultmem/demo/") for n in files if n.startswith("vaultmem/demo/"))
        == shipped_demo()
    )
    assert "License-Expression: MIT" in meta and "Classifier: Programming Language :: Python :: 3.11" in meta
    assert man == (REPO / "docs" / "vaultmem.1").read_text(encoding="utf-8")
    assert not [n for n in files if n.startswith("tests/") or "__pycache__" in n]


def test_the_project_metadata_is_complete():
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]
    assert (REPO / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert PROJECT["authors"] and PROJECT["classifiers"] and URL.startswith("https://github.com/")
    assert set(PROJECT["urls"]) >= {"Homepage", "Documentation", "Repository", "Issues"}
    from vaultmem.cli.reference import MAN_TAIL

    assert URL in MAN_TAIL


def test_readme_links_work_on_the_package_page():
    """PyPI shows README.md without the repository: every link is absolute, and one into this
    repository names a file it has (images from raw.githubusercontent.com, which PyPI shows)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"!?\[[^\]]*\]\(([^)\s]+)\)", readme)
    assert links and [u for u in links if not u.startswith("https://")] == []
    raw = URL.replace("https://github.com/", "https://raw.githubusercontent.com/") + "/main/"
    for url in links:
        if url.startswith(f"{URL}/blob/main/"):
            assert (REPO / url.removeprefix(f"{URL}/blob/main/")).is_file(), url
        elif url.startswith(raw):
            assert (REPO / url.removeprefix(raw)).is_file(), url
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme)
    assert images and all(u.startswith(raw) for u in images)
    assert f"{URL}/blob/main/docs/cli.md" in readme and "**What it is not.**" in readme


def pipx_first_command() -> list[list[str]]:
    """README's first command from an install (its Install section: `vaultmem demo && vaultmem recall ...`)."""
    install = readme_section("## Install")
    block = re.findall(r"```bash\n(.*?)```", install, re.S)[1]
    return [shlex.split(part)[1:] for part in block.split("&&")]


def readme_section(heading: str) -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return readme.split(heading, 1)[1].split("\n## ", 1)[0]


def tour() -> list[list[str]]:
    """The arguments of README's tour (its first block) up to `export` and `import` of a backup,
    placeholders filled: `<id>` for a note, optional `[...]` parts left out. (The lines after it
    import the user's own files, or run in the foreground.)"""
    block = re.search(r"```bash\n(.*?)```", readme_section("## A short tour"), re.S).group(1)  # type: ignore[union-attr]
    lines = []
    for raw in block.replace("\\\n", " ").splitlines():
        line = re.sub(r"\s+#\s.*$", "", raw).strip()
        line = re.sub(r"\s*\[[^\]]*\]", "", line).replace("<id|title|path>", "<id>")
        if line.startswith("vaultmem "):
            lines += [shlex.split(part.split(" > ")[0])[1:] for part in line.split("&&")]
        if line.startswith("vaultmem export > "):
            break
    return lines


def test_the_tour_parses_into_commands():
    commands = [c[0] for c in tour()]
    assert commands == ["init", "remember", "recall", "recall", "list", "show", "edit", "delete", "restore",
                        "index", "stats", "export", "import"]  # fmt: skip
    assert ["show", "<id>"] in tour() and ["import", "backup.json"] in tour()


@pytest.mark.model
@pytest.mark.wheel
def test_the_built_wheel_alone_runs_readmes_first_command_and_its_tour(built, tmp_path):
    wheel = built[0]
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", str(venv))
    python = venv / "bin" / "python"
    purelib = run(
        str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    ).stdout.strip()
    (Path(purelib) / "deps.pth").write_text(str(deps_folder(tmp_path)) + "\n", encoding="utf-8")
    run(sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index", "-q", str(wheel))
    where = run(str(python), "-c", "import vaultmem; print(vaultmem.__file__)").stdout.strip()
    assert where.startswith(purelib), where  # the wheel's, not this checkout's
    assert (venv / "share" / "man" / "man1" / "vaultmem.1").is_file()

    home = tmp_path / "home"  # no clone in sight: an empty folder, a home of its own
    home.mkdir()
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "HOME": str(home)}
    env.pop("VAULTMEM_NO_SERVICE", None)  # as a new user runs it: the memory service starts
    exe = str(venv / "bin" / "vaultmem")
    vm = lambda *args, **kw: run(exe, *args, env=env, cwd=home, **kw)
    try:
        demo, recall = pipx_first_command()
        assert demo[0] == "demo" and recall[0] == "recall"
        vm(*demo)
        out = vm(*recall).stdout
        assert out.splitlines()[0].split("  ")[0] == " 1. Use Postgres advisory locks for job leasing", out
        _run_tour(vm, env, home)
    finally:
        subprocess.run([exe, "service", "stop"], env=env, capture_output=True, timeout=60)


def _run_tour(vm, env: dict, home: Path) -> None:  # type: ignore[no-untyped-def]
    """README's tour, line by line, in ``home``: `~/memory` the vault, the remembered note's id for `<id>`."""
    env["VAULTMEM_VAULT"] = str(home / "memory")  # the tour's `export VAULTMEM_VAULT=~/memory`
    key = None
    for args in tour():
        args = [a.replace("~", str(home)) for a in args]
        if "<id>" in args:
            args = [key if a == "<id>" else a for a in args]  # type: ignore[misc]
        if args[0] == "export":
            (home / "backup.json").write_text(vm(*args).stdout, encoding="utf-8")
            continue
        done = vm(*args, input="y\n" if args[0] == "delete" else None)
        if args[0] == "remember":
            key = re.search(r"^([0-9a-z]{8})  ", done.stdout, re.M).group(1)  # type: ignore[union-attr]
        if args[:2] == ["recall", "how do we cache things?"]:
            assert "Use SQLite for the cache" in done.stdout.splitlines()[0], done.stdout
    assert key is not None
