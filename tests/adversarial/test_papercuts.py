"""Papercuts found while trying vaultmem as a new user: small, but each one misled someone."""

from __future__ import annotations

import pytest

from .adversarial_helpers import run

pytestmark = pytest.mark.integration  # the CLI in subprocesses


def test_a_skipped_note_is_named_on_each_recall_in_one_line(small_vault):
    """A broken note never drops out silently (issue 34: the same warnings on every backend and
    every call), and one broken note costs one line, not a traceback."""
    (small_vault / "Broken.md").write_text("---\ntitle: [unclosed\n---\nBody.\n")
    v = str(small_vault)
    first = run("recall", "Alpha", "--vault", v)
    assert first.returncode == 0 and "skipped Broken.md" in first.stderr
    again = run("recall", "Alpha", "--vault", v)
    assert again.returncode == 0 and again.stderr.count("skipped Broken.md") == 1, again.stderr
    assert "Traceback" not in again.stderr
    assert "Broken.md" in run("status", "--vault", v).stdout  # still listed where asked for
    assert "skipped Broken.md" in run("index", "--vault", v).stderr
    (small_vault / "Broken.md").write_bytes(b"---\ntitle: ok\n---\nBody \xff.\n")  # broken differently
    assert "skipped Broken.md" in run("recall", "Alpha", "--vault", v).stderr  # a new reason: reported again


def test_sleep_and_checkpoint_default_to_the_anchor_the_session_woke_with(small_vault):
    v = str(small_vault)
    assert run("remember", "project", "Project: Otter", "The otter project.", "--vault", v).returncode == 0
    assert run("remember", "project", "Project: Badger", "The badger project.", "--vault", v).returncode == 0
    assert run("wake", "--anchor", "Project: Otter", "--vault", v).returncode == 0
    assert run("checkpoint", "wired the otter pump", "--vault", v).returncode == 0
    assert run("sleep", "--summary", "Finished the otter pump wiring", "--vault", v).returncode == 0
    block = run("wake", "--anchor", "Project: Otter", "--vault", v).stdout
    assert "otter pump" in block, block  # before: written without anchor, so left out of this wake


def test_sleep_defaults_to_the_only_project_anchor(small_vault):
    v = str(small_vault)
    assert run("remember", "project", "Project: Otter", "The otter project.", "--vault", v).returncode == 0
    assert run("sleep", "--summary", "Tuned the otter turbine", "--vault", v).returncode == 0
    assert "otter turbine" in run("wake", "--anchor", "Project: Otter", "--vault", v).stdout


def test_help_shows_defaults_without_a_stray_backslash():
    out = run("recall", "--help").stdout
    assert "[default: hybrid]" in out and "\\[" not in out, out


def test_human_recall_output_has_no_negative_scores(small_vault):
    import re

    out = run("recall", "Alpha", "--vault", str(small_vault)).stdout
    scores = [float(s) for s in re.findall(r"\]  (-?\d+\.\d+)", out)]
    assert scores and min(scores) > 0, out  # unrelated notes scored below 0 before, then were shown as 0.000
    assert "Alpha" in out and "Gamma" not in out, out  # and a note without evidence is no hit at all


def test_readme_set_up_commands_agree_and_delete_mentions_force():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    setup = readme.split("## Set up", 1)[1].split("## A short tour", 1)[0]
    commands = [ln for ln in setup.splitlines() if ln.startswith("python3 -m venv")]
    assert len(commands) == 2 and not any("HF_HUB_OFFLINE=1 " in c for c in commands), commands
    assert "--force" in next(ln for ln in readme.splitlines() if ln.startswith("vaultmem delete"))


@pytest.mark.model  # the subprocess loads the real embedding model
def test_the_default_model_loads_without_hf_hub_offline_set(tmp_path):
    import subprocess
    import sys

    from .adversarial_helpers import cli_env

    env = cli_env(real_model=True)
    env.pop("HF_HUB_OFFLINE")
    code = ("import os; from vaultmem.index.embed import FastEmbedder, DEFAULT_MODEL; "
            "FastEmbedder(DEFAULT_MODEL).embed(['x']); print(os.environ.get('HF_HUB_OFFLINE'))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "1", out.stderr


def test_vault_add_of_a_missing_path_asks_for_create(tmp_path):
    from .adversarial_helpers import cli_env

    env = cli_env(VAULTMEM_HOME=str(tmp_path / "home"))
    typo = tmp_path / "memroy"
    result = run("vault", "add", "work", str(typo), env=env)
    assert result.returncode == 2 and "--create" in result.stderr and not typo.exists()
    assert run("vault", "add", "work", str(typo), "--create", env=env).returncode == 0
    assert (typo / ".vaultmem").is_dir()


def test_recall_for_an_agent_without_a_vault_says_so(tmp_path):
    from .adversarial_helpers import cli_env

    (tmp_path / "team" / "shared" / ".vaultmem").mkdir(parents=True)
    env = cli_env(VAULTMEM_HOME=str(tmp_path / "home"), VAULTMEM_TEAM_DIR=str(tmp_path / "team"))
    result = run("recall", "anything", "--agent", "alice", env=env)
    assert result.returncode == 2 and "no vault for agent 'alice'" in result.stderr, result.stderr


def test_first_index_reports_progress_in_visible_steps_from_before_the_model_loads(demo_copy, fake_embedder):
    """The bar used to get one report (0% and 100% at once) after ~15 s of silence."""
    from vaultmem.vault import Vault

    events: list = []

    class Watched:
        name, max_tokens = fake_embedder.name, fake_embedder.max_tokens

        def embed(self, texts):
            events.append(("embed", len(texts)))
            return fake_embedder.embed(texts)

    v = Vault(demo_copy, embedder=Watched())
    try:
        v.reindex(progress=lambda done, total: events.append(("progress", done, total)))
    finally:
        v.close()
    reports = [e for e in events if e[0] == "progress"]
    assert events[0][0] == "progress" and reports[0][1] == 0  # shown before the first embed call
    total = reports[0][2]
    assert len(reports) >= 1 + total // 16 and reports[-1][1] == total  # a step every 16 chunks
    assert all(b[1] > a[1] for a, b in zip(reports, reports[1:]))


def test_the_bar_shows_a_loading_line_on_a_terminal(monkeypatch, capsys):
    import sys

    from vaultmem.cli.common import EmbeddingBar

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    bar = EmbeddingBar()
    bar(0, 74)
    bar(16, 74)
    bar.close()
    err = capsys.readouterr().err
    assert "loading the embedding model, then embedding 74 chunks" in err and "embedding" in err


def test_list_reports_a_note_it_skips(small_vault):
    (small_vault / "Broken.md").write_text("---\ntitle: [unclosed\n---\nBody.\n")
    result = run("list", "--vault", str(small_vault))
    assert result.returncode == 0 and "Alpha" in result.stdout
    assert result.stderr.count("skipped Broken.md: ") == 1, result.stderr  # was: silently left out
