"""The command line as a shell user meets it (issue 49): completion in bash (really completed),
zsh and fish (their scripts checked, and run where the shell is installed), a suggestion for a
command named otherwise, an example in every command's and group's help, the man page, and
`vaultmem demo`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from conftest import DEMO, REPO
from typer.testing import CliRunner

from vaultmem.cli.app import app

BIN = Path(sys.executable).parent  # where the console script `vaultmem` is installed


def shell_env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "VAULTMEM_NO_SERVICE": "1"}


def vaultmem(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "vaultmem"), *args], capture_output=True, text=True, timeout=120,
                          env=shell_env(), cwd=cwd)  # fmt: skip


BASH = """
source <(vaultmem completion bash)
complete -p vaultmem
complete_line() {{ COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _vaultmem_completion vaultmem; echo "${{COMPREPLY[*]}}"; }}
{lines}
"""


def test_bash_completes_commands_subcommands_and_options():
    lines = ["complete_line vaultmem gr", "complete_line vaultmem graph pa", "complete_line vaultmem recall x --pro",
             "complete_line vaultmem completion ''"]  # fmt: skip
    done = subprocess.run(["bash", "-c", BASH.format(lines="\n".join(lines))], capture_output=True, text=True,
                          env=shell_env(), timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0] == "complete -o default -F _vaultmem_completion vaultmem"
    assert out[1:] == ["graph", "path", "--profile", "bash zsh fish"]


def test_zsh_and_fish_scripts_call_vaultmem_for_their_completions():
    zsh = vaultmem("completion", "zsh").stdout
    assert zsh.splitlines()[0] == "#compdef vaultmem"  # the first line, as compinit reads it
    assert (
        "_VAULTMEM_COMPLETE=complete_zsh vaultmem" in zsh and "compdef _vaultmem_completion vaultmem" in zsh
    )
    fish = vaultmem("completion", "fish").stdout
    assert fish.startswith("complete --command vaultmem ") and "_VAULTMEM_COMPLETE=complete_fish" in fish
    # what each script runs: vaultmem answering in the shell's own completion protocol
    env = {**shell_env(), "_VAULTMEM_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": "vaultmem graph pa"}
    answer = subprocess.run([str(BIN / "vaultmem")], capture_output=True, text=True, env=env, timeout=120)
    assert answer.stdout.startswith('_arguments \'*: :(("path":')
    env.update(_VAULTMEM_COMPLETE="complete_fish", _TYPER_COMPLETE_FISH_ACTION="get-args",
               _TYPER_COMPLETE_ARGS="vaultmem gr")  # fmt: skip
    answer = subprocess.run([str(BIN / "vaultmem")], capture_output=True, text=True, env=env, timeout=120)
    assert answer.stdout.startswith("graph\t")


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_registers_and_runs_the_completion():
    script = ("autoload -U compinit && compinit -u; source <(vaultmem completion zsh); print ${_comps[vaultmem]};"
              " _arguments() { print -r -- \"$@\" }; words=(vaultmem graph pa); CURRENT=3; _vaultmem_completion")  # fmt: skip
    done = subprocess.run(["zsh", "-c", script], capture_output=True, text=True, env=shell_env(), timeout=120)
    assert done.stdout.splitlines()[0] == "_vaultmem_completion" and '"path"' in done.stdout, done.stderr


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_with_the_script():
    script = 'vaultmem completion fish | source; complete -C "vaultmem graph pa"'
    done = subprocess.run(
        ["fish", "-c", script], capture_output=True, text=True, env=shell_env(), timeout=120
    )
    assert done.stdout.startswith("path\t"), done.stderr


def test_a_command_named_otherwise_gets_a_suggestion():
    web = CliRunner().invoke(app, ["web"])
    assert web.exit_code == 2 and "No such command 'web'. Did you mean 'serve'?" in web.stderr
    typo = CliRunner().invoke(app, ["recal", "x"])
    assert typo.exit_code == 2 and "Did you mean 'recall'?" in typo.stderr
    sub = CliRunner().invoke(app, ["graph", "neighbors", "x"])
    assert sub.exit_code == 2 and "Did you mean 'neighbours'" in sub.stderr


def _tree(command, path=()):  # type: ignore[no-untyped-def]
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        if not sub.hidden:
            yield from _tree(sub, (*path, name))


def test_every_command_and_group_has_an_example_in_its_help():
    missing = [" ".join(path) or "vaultmem" for path, c in _tree(typer.main.get_command(app))
               if path and "Example" not in (c.help or "")]  # fmt: skip
    assert missing == []


def test_the_man_page_and_the_cli_reference_are_the_commands_own_and_readme_links_them():
    from vaultmem.cli.reference import manpage

    page = vaultmem("man").stdout
    assert page == manpage(app) == (REPO / "docs" / "vaultmem.1").read_text(encoding="utf-8")
    assert page.startswith(".TH VAULTMEM 1 ") and '.SS "vaultmem graph path"' in page
    if shutil.which("man"):  # it renders
        shown = subprocess.run(["man", "-l", "-"], input=page, capture_output=True, text=True, timeout=60,
                               env={**os.environ, "MANPAGER": "cat", "PAGER": "cat"})  # fmt: skip
        assert "vaultmem graph path" in shown.stdout
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "docs/cli.md" in readme and "vaultmem completion" in readme and "man vaultmem" in readme


def test_demo_copies_the_shipped_demo_vault_and_never_over_a_folder(tmp_path):
    done = vaultmem("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    copy = tmp_path / "vaultmem-demo"
    shipped = sorted(p.relative_to(DEMO).as_posix() for p in DEMO.rglob("*") if p.is_file()
                     and not {".vaultmem", ".vaultmem-usage"} & set(p.relative_to(DEMO).parts))  # fmt: skip
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file()) == shipped
    assert f"copied the demo vault ({len(shipped)} files) to {copy}" in done.stdout
    assert "undo: rm -r vaultmem-demo" in done.stdout
    again = vaultmem("demo", cwd=tmp_path)
    assert again.returncode == 2 and again.stderr.startswith("vaultmem: vaultmem-demo exists")
