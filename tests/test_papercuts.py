"""A new user's first hour (issue 38), each papercut through the command that showed it."""

from __future__ import annotations

import json
import subprocess

import pytest
from helpers import buffered
from test_branches import commit, env, git, setup  # noqa: F401  (fixtures)
from test_service import EXE, cli, vault  # noqa: F401  (fixtures)
from typer.testing import CliRunner

from vaultmem.cli.app import app
from vaultmem.recall import keywords
from vaultmem.sync.git import Git, GitError


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_hits_are_numbered_as_shown_when_another_branchs_memory_is_left_out(setup):  # noqa: F811
    code, root = setup
    v = ["--vault", str(root)]
    assert invoke("remember", "fact", "Zebra one", "zebra zebra zebra crossing.", *v).exit_code == 0
    git(code, "checkout", "-qb", "feature-x")
    commit(code, "x.py")
    assert invoke("remember", "fact", "Zebra two", "zebra zebra crossing.", *v).exit_code == 0
    git(code, "checkout", "-q", "main")
    assert (
        invoke("remember", "fact", "Zebra three", "a zebra crossing near the harbour office.", *v).exit_code
        == 0
    )
    hits = json.loads(invoke("recall", "zebra crossing", "--json", *v).stdout)["results"]
    every = json.loads(invoke("recall", "zebra crossing", "--json", "--all-branches", *v).stdout)["results"]
    assert "Zebra two" in [h["title"] for h in every[:-1]]  # ranked above another hit: its gap would show
    assert "Zebra two" not in [h["title"] for h in hits]
    assert [h["rank"] for h in hits] == list(range(1, len(hits) + 1)), hits


def test_the_keyword_answer_scores_relative_to_its_best_hit(demo):
    demo.sync()
    kept = keywords.recall_vaults({"demo": demo.root}, "stripe webhook retries", {"k": 5}, explain=True)
    scores = [h["score"] for _, h in kept]
    assert scores[0] == 1.0 and all(0 < s <= 1 for s in scores) and scores == sorted(scores, reverse=True)
    assert kept[0][1]["explain"]["bm25_raw"] > 1  # the raw number stays in --explain


def test_show_with_part_of_a_title_suggests_the_note(demo_copy, empty_vault, fake_model):
    made = invoke(
        "remember", "decision", "Use SQLite for the cache", "Small, local data.", "--vault", str(empty_vault)
    )
    result = invoke("show", "use sqlite", "--vault", str(empty_vault))
    assert result.exit_code == 3
    assert f"did you mean: 'Use SQLite for the cache' ({made.stdout.split()[0]})?" in result.stderr, (
        result.stderr
    )
    result = invoke("show", "advisory locks for job", "--vault", str(demo_copy))
    assert result.exit_code == 3
    assert "did you mean: 'Use Postgres advisory locks for job leasing' (yx66znwj)" in result.stderr, (
        result.stderr
    )
    typo = invoke("show", "Use Postgres advisory lock for job leasng", "--vault", str(demo_copy))
    assert "did you mean: 'Use Postgres advisory locks for job leasing'" in typo.stderr, typo.stderr


def test_a_git_failure_is_said_whole(tmp_path):
    git(tmp_path, "init", "-q")
    with pytest.raises(GitError) as e:
        Git(tmp_path, interactive=False).run("fetch", str(tmp_path / "nowhere"))
    message = str(e.value)
    assert "does not appear to be a git repository" in message, message
    assert not message.endswith("and the repository exists."), message


@pytest.mark.integration  # the CLI in subprocesses
def test_recall_through_the_service_into_a_closed_pipe_ends_quietly(cli, vault):  # noqa: F811
    cli(
        "recall", "advisory locks", "--vault", str(vault)
    )  # starts the service: the next one is its fast path
    proc = subprocess.Popen([EXE, "recall", "advisory locks", "--vault", str(vault)], env=buffered(cli.env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    proc.stdout.close()  # the reader (`| head -1`) is gone before the first line is written
    _, stderr = proc.communicate(timeout=120)
    assert stderr.decode() == ""  # was: "vaultmem: Broken pipe"
    assert proc.returncode == 141  # 128 + SIGPIPE, what git reports (as every other command)
