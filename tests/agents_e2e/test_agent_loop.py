"""Issue 46's reproductions in the real agent CLIs (marker ``agents_e2e``): each scenario of
``scenarios.py`` runs once, each of its checks is one test."""

from __future__ import annotations

import pytest

from agents_e2e.scenarios import SCENARIOS, Checks

pytestmark = [pytest.mark.agents_e2e, pytest.mark.model, pytest.mark.timeout(900)]

CHECKS = {
    "claude-json-two-projects": ["session_ran", "b_removed_keeps_claude_json", "claude_keys_byte_for_byte",
                                 "a_removed_leaves_claudes_file"],
    "two-identical-sessions": ["two_notes", "second_linked_to_first"],
    "copilot-runs-claudes-hooks": ["setup_says_so", "start_block_once", "one_answer_per_event", "one_summary"],
    "codex-one-service": ["session_ran", "one_service", "service_stop_stops_it"],
    "model-states-a-decision": ["decision_captured", "title_whole_phrase", "decision_top_3", "shell_write_counted"],
    "download-and-run": ["session_ran", "no_download_run_fix", "not_injected", "prose_secret_redacted"],
    "project-scope": ["start_block_is_harbors", "prompt_block_no_other_project", "plain_wake_is_harbors"],
    "hook-timings": ["timed_inside_the_hook"],
}  # fmt: skip
_done: dict[str, Checks] = {}


@pytest.fixture
def scenario(request, agent_bin, tmp_path_factory) -> Checks:
    name = request.param
    if name not in _done:
        _done[name] = SCENARIOS[name](agent_bin, tmp_path_factory.mktemp(f"e2e-{name}"))
    return _done[name]


@pytest.mark.parametrize(
    "scenario,check",
    [pytest.param(name, check, id=f"{name}-{check}") for name, checks in CHECKS.items() for check in checks],
    indirect=["scenario"],
)
def test_issue_46(scenario: Checks, check: str) -> None:
    ok, detail = scenario[check]
    assert ok, detail
