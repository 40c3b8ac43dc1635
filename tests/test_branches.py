"""Branch-scoped memory end to end with a real code repository: memories written on a feature
branch are scoped to it, recall leaves them out elsewhere, and maintain promotes or archives
them once the branch is merged or deleted."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path

import pytest
from gitcluster import git_env
from typer.testing import CliRunner

from vaultmem.cli.app import app
from vaultmem.core.filters import now_utc
from vaultmem.core.notedates import note_scope
from vaultmem.memory.branches import code_state, normalize_remote


@pytest.fixture
def env(tmp_path, monkeypatch):
    for k, v in git_env(tmp_path).items():
        monkeypatch.setenv(k, v)
    return tmp_path


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def vm(vault: Path, *args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--vault", str(vault)])
    assert result.exit_code == 0, (args, result.output, result.exception)
    return result.stdout


def commit(repo: Path, name: str) -> None:
    (repo / name).write_text(name)
    git(repo, "add", name)
    git(repo, "commit", "-qm", f"add {name}")


@pytest.fixture
def setup(env, monkeypatch):
    tmp = env
    git(tmp, "init", "-q", "--bare", "code.git")
    seed = tmp / "seed"
    seed.mkdir()
    git(seed, "init", "-q")
    commit(seed, "README")
    git(seed, "remote", "add", "origin", str(tmp / "code.git"))
    git(seed, "push", "-q", "-u", "origin", "main")
    git(tmp, "clone", "-q", str(tmp / "code.git"), "code")
    code = tmp / "code"
    vault = tmp / "vault"
    CliRunner().invoke(app, ["init", str(vault)])
    cfg = vault / ".vaultmem.toml"
    cfg.write_text(
        cfg.read_text().replace('# model = "sentence-transformers/all-MiniLM-L6-v2"', 'model = "none"')
    )
    monkeypatch.chdir(code)
    return code, vault


def paths(out: str) -> list[str]:
    return [
        h["path"] for h in json.loads(out)["results"] if not h["path"].startswith("projects/")
    ]  # not the anchor


def test_remote_urls_name_one_project():
    assert normalize_remote("git@github.com:Me/App.git") == "github.com/me/app"
    assert normalize_remote("https://user@github.com/Me/App/") == "github.com/me/app"
    assert normalize_remote("ssh://git@github.com:22/Me/App.git") == "github.com/me/app"


def test_branch_scoping_recall_and_maintain(setup, monkeypatch):
    code, vault = setup
    git(code, "checkout", "-qb", "feature-refunds")
    commit(code, "refunds.py")
    out = vm(
        vault,
        "remember",
        "decision",
        "Refunds use idempotency keys",
        "zebrarefund keys per request.",
        "--json",
    )
    decision = json.loads(out)["path"]
    task = json.loads(vm(vault, "remember", "progress", "Refunds half done", "zebrarefund endpoint half done.",
                         "--json", "--importance", "3", "--anchor", "Project: Shop"))["path"]  # fmt: skip
    note = (vault / decision).read_text()
    assert note_scope(note) == ("feature-refunds", code_state(code).repo)
    assert code_state(code).repo == normalize_remote(str(code.parent / "code.git"))
    assert len(paths(vm(vault, "recall", "zebrarefund", "--json"))) == 2  # on the branch: visible

    git(code, "checkout", "-q", "main")
    main_note = json.loads(vm(vault, "remember", "fact", "Main fact", "zebrarefund on main.", "--json"))[
        "path"
    ]
    assert "branch:" not in (vault / main_note).read_text()  # the default branch: not scoped
    assert paths(vm(vault, "recall", "zebrarefund", "--json")) == [main_note]
    as_if = paths(vm(vault, "recall", "zebrarefund", "--json", "--branch", "feature-refunds"))
    assert set(as_if) == {decision, task, main_note}
    assert len(paths(vm(vault, "recall", "zebrarefund", "--json", "--all-branches"))) == 3

    # a second clone of the same code repository is the same project
    git(code.parent, "clone", "-q", str(code.parent / "code.git"), "code2")
    assert code_state(code.parent / "code2").repo == code_state(code).repo

    # an unmerged, open branch: maintain leaves it alone
    assert "branch" not in vm(vault, "maintain", "--json")
    # merge it: the decision is promoted, the task memory archived with a link in the history note
    git(code, "merge", "-q", "--no-ff", "--no-edit", "feature-refunds")
    plan = json.loads(vm(vault, "maintain", "--json"))["actions"]
    assert {(a["kind"], a["path"]) for a in plan if "branch" in a["reason"]} == {
        ("promote", decision),
        ("archive", task),
    }
    vm(vault, "maintain", "--apply")
    assert "branch:" not in (vault / decision).read_text() and "repo:" not in (vault / decision).read_text()
    assert "status: archived" in (vault / task).read_text()
    history = [p for p in vault.rglob("Session history*.md")]
    assert len(history) == 1 and "[[Refunds half done]]" in history[0].read_text()
    assert paths(vm(vault, "recall", "zebrarefund", "--json")) and decision in paths(
        vm(vault, "recall", "zebrarefund", "--json")
    )

    # a branch deleted unmerged archives its task memory, keeps its other memories scoped
    git(code, "checkout", "-qb", "spike")
    commit(code, "spike.py")
    spike_task = json.loads(
        vm(vault, "remember", "progress", "Spike progress", "zebraspike tried.", "--json")
    )["path"]
    spike_fact = json.loads(vm(vault, "remember", "fact", "Spike finding", "zebraspike is slow.", "--json"))[
        "path"
    ]
    git(code, "checkout", "-q", "main")
    git(code, "branch", "-qD", "spike")
    vm(vault, "maintain", "--apply")
    assert "status: archived" in (vault / spike_task).read_text()
    assert (
        "branch: spike" in (vault / spike_fact).read_text()
        and "status: active" in (vault / spike_fact).read_text()
    )


HOOKS = Path(__file__).parent / "data" / "hooks"


def wake_ids(vault: Path, *args: str) -> set[str]:
    return set(json.loads(vm(vault, "wake", "--json", *args))["ids"])


def test_wake_leaves_other_branches_out_like_recall(setup, monkeypatch):
    code, vault = setup
    main_progress = json.loads(
        vm(vault, "remember", "progress", "Main progress", "zebrawake main going.", "--json")
    )
    git(code, "checkout", "-qb", "feature-wake")
    # the feature's progress is the newer (the clock set on, not slept): without the scope it would be
    # "the latest"
    later = now_utc() + dt.timedelta(seconds=5)
    monkeypatch.setattr("vaultmem.memory.ops.now_utc", lambda: later)
    feat_progress = json.loads(
        vm(vault, "remember", "progress", "Feature progress", "zebrawake feature half done.", "--json")
    )
    feat_gotcha = json.loads(
        vm(vault, "remember", "gotcha", "Feature gotcha", "zebrawake retries double-charge.", "--json")
    )
    assert note_scope((vault / feat_gotcha["path"]).read_text())[0] == "feature-wake"
    mine = {feat_progress["id"], feat_gotcha["id"]}

    assert mine <= wake_ids(vault)  # on the branch: its memories
    assert main_progress["id"] not in wake_ids(vault)  # (its own progress is the latest)
    git(code, "checkout", "-q", "main")
    on_main = wake_ids(vault)
    assert not mine & on_main and main_progress["id"] in on_main  # the default branch's latest progress
    assert not mine & wake_ids(vault, "--task", "zebrawake retries")  # nor through the task's recall
    assert mine <= wake_ids(vault, "--branch", "feature-wake")
    assert feat_gotcha["id"] in wake_ids(vault, "--all-branches")
    # the SessionStart hook: the payload's cwd decides, not the hook process's own
    git(code, "checkout", "-q", "feature-wake")
    payload = json.dumps(
        {"session_id": "s-wake", "cwd": str(code), "hook_event_name": "SessionStart", "source": "startup"}
    )
    monkeypatch.chdir(code.parent)  # not a code repository: without the payload's cwd nothing would be scoped
    start = CliRunner().invoke(app, ["hook", "start", "--vault", str(vault)], input=payload)
    assert start.exit_code == 0, start.output
    shown = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"[{feat_gotcha['id']}]" in shown
    git(code, "checkout", "-q", "main")
    start = CliRunner().invoke(
        app, ["hook", "start", "--vault", str(vault)], input=payload.replace("s-wake", "s-wake2")
    )
    shown = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"[{feat_gotcha['id']}]" not in shown and f"[{main_progress['id']}]" in shown


def hook(vault: Path, event: str, payload: dict) -> str:
    result = CliRunner().invoke(app, ["hook", event, "--vault", str(vault), "--json"] if event == "end" else
                                ["hook", event, "--vault", str(vault)], input=json.dumps(payload))  # fmt: skip
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


def test_hooks_sleep_and_checkpoint_scope_what_they_write(setup, monkeypatch):
    code, vault = setup
    git(code, "checkout", "-qb", "feature-hooks")
    monkeypatch.chdir(
        code.parent
    )  # the hook runs elsewhere: the payload's cwd is the agent's code repository
    base = {
        "session_id": "5f0c2a9e-2222",
        "transcript_path": str(HOOKS / "coding_session.jsonl"),
        "cwd": str(code),
    }
    want = ("feature-hooks", code_state(code).repo)

    hook(vault, "pre-compact", {**base, "hook_event_name": "PreCompact", "trigger": "auto"})
    [handoff] = [p for p in (vault / "handoffs").glob("*.md") if "claude-code-5f0c2a9e" in p.read_text()]
    assert note_scope(handoff.read_text()) == want
    out = json.loads(hook(vault, "end", {**base, "hook_event_name": "SessionEnd"}))
    assert note_scope((vault / out["summary"]["path"]).read_text()) == want
    kinds = {(c["title"], note_scope((vault / c["path"]).read_text())) for c in out["candidates"]}
    assert ("JPY amounts have no minor unit", want) in kinds  # a lesson of this branch
    assert ("Always run ruff before committing", (None, None)) in kinds  # a preference is the person's
    # the same session on the default branch: nothing is scoped
    git(code, "checkout", "-q", "main")
    other = {**base, "session_id": "7a7a7a7a-3333", "transcript_path": str(HOOKS / "saved_session.jsonl")}
    out = json.loads(hook(vault, "end", {**other, "hook_event_name": "SessionEnd"}))
    assert note_scope((vault / out["summary"]["path"]).read_text()) == (None, None)

    # sleep and checkpoint from the command line, in the code repository on a feature branch
    monkeypatch.chdir(code)
    git(code, "checkout", "-q", "feature-hooks")
    slept = json.loads(
        vm(
            vault,
            "sleep",
            "--summary",
            "Did the hooks work",
            "--next",
            "ship it",
            "--source",
            "cli-s",
            "--json",
        )
    )
    assert note_scope((vault / slept["summary"]["path"]).read_text()) == want
    assert note_scope((vault / slept["handoff"]["path"]).read_text()) == want
    point = json.loads(vm(vault, "checkpoint", "half way", "--source", "cli-t", "--json"))
    assert note_scope((vault / point["path"]).read_text()) == want


def test_prompt_hook_recalls_by_the_payloads_branch(setup, fake_model, monkeypatch):
    code, vault = setup
    git(code, "checkout", "-qb", "feature-prompt")
    fact = json.loads(
        vm(
            vault,
            "remember",
            "gotcha",
            "Zebraprompt retries",
            "zebraprompt retries double charge refunds.",
            "--json",
        )
    )
    monkeypatch.chdir(code.parent)
    payload = {"session_id": "s-prompt", "cwd": str(code), "hook_event_name": "UserPromptSubmit",
               "prompt": "why do zebraprompt retries double charge refunds?"}  # fmt: skip
    shown = hook(vault, "prompt", payload)
    assert f"[{fact['id']}]" in shown
    git(code, "checkout", "-q", "main")
    assert f"[{fact['id']}]" not in hook(vault, "prompt", {**payload, "session_id": "s-prompt2"})


def test_squash_and_rebase_merged_branches_count_as_merged(setup):
    """A branch squash-merged (then deleted, or kept) or rebase-merged promotes its decisions
    like a merge commit would; a deleted branch whose work never landed stays unmerged."""
    code, vault = setup
    made = {}
    for branch in ("squashed", "kept-squashed", "rebased", "abandoned"):
        git(code, "checkout", "-qb", branch)
        commit(code, f"{branch}-1.py")
        commit(code, f"{branch}-2.py")
        made[branch] = json.loads(vm(vault, "remember", "decision", f"Decision on {branch}",
                                     f"zebra {branch} choice.", "--json"))["path"]  # fmt: skip
        git(code, "checkout", "-q", "main")
    for branch in ("squashed", "kept-squashed"):
        git(code, "merge", "-q", "--squash", branch)
        git(code, "commit", "-qm", f"Ship {branch} (#12)")  # the message names no branch
    git(code, "cherry-pick", "main..rebased")  # a rebase merge: the same patches, new hashes
    for branch in ("squashed", "rebased", "abandoned"):
        git(code, "branch", "-qD", branch)
    plan = {
        a["path"]: a
        for a in json.loads(vm(vault, "maintain", "--json"))["actions"]
        if "branch" in a["reason"]
    }
    for branch in ("squashed", "kept-squashed", "rebased"):
        assert plan[made[branch]]["kind"] == "promote", (branch, plan.get(made[branch]))
    assert made["abandoned"] not in plan  # a decision of a branch deleted unmerged stays scoped


@pytest.mark.parametrize("name", ["-D", "--output=x", "a..b", "a b", "x@{1}", "a\nb"])
def test_a_frontmatter_branch_git_would_not_take_is_left_alone(setup, name):
    from vaultmem.memory.branches import branch_fate

    code, _ = setup
    assert branch_fate(code, name, "main") == "open"


def test_maintain_runs_no_program_the_code_repository_configures(setup, tmp_path):
    """A code repository whose config sets diff.external, a textconv driver, log signatures
    and an fsmonitor: maintain's merged-branch check (git log -p, git diff) must run none."""
    code, vault = setup
    marker = tmp_path / "ran"
    tool = tmp_path / "tool.sh"
    tool.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat "$1" 2>/dev/null\nexit 0\n')
    tool.chmod(0o755)
    for key, value in (
        ("diff.external", str(tool)),
        ("diff.conv.textconv", str(tool)),
        ("core.fsmonitor", str(tool)),
        ("log.showSignature", "true"),
        ("gpg.program", str(tool)),
    ):
        git(code, "config", key, value)
    (code / ".gitattributes").write_text("*.py diff=conv\n")
    git(code, "add", ".gitattributes")
    git(code, "commit", "-qm", "attributes")
    marker.unlink(missing_ok=True)
    git(code, "checkout", "-qb", "feature")
    commit(code, "feature-1.py")
    made = json.loads(vm(vault, "remember", "decision", "Decision on feature", "zebra choice.", "--json"))[
        "path"
    ]
    git(code, "checkout", "-q", "main")
    git(code, "merge", "-q", "--squash", "feature")
    git(code, "commit", "-qm", "Ship it")
    git(code, "branch", "-qD", "feature")
    marker.unlink(missing_ok=True)
    plan = {a["path"]: a for a in json.loads(vm(vault, "maintain", "--json"))["actions"]}
    assert plan[made]["kind"] == "promote"
    assert not marker.exists(), marker.read_text()
