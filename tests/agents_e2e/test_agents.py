"""The memory loop inside the real agent CLIs (marker ``agents_e2e``).

Each agent runs one headless session against the fake model (``fake_model.py``) with the
configs ``vaultmem setup AGENT --write`` wrote; each check of ``checks.py`` is one test. A
check that fails on a known mismatch (issue 35) is ``xfail(strict=True)`` naming it, so the
fix flips it to a failure to clear here."""

from __future__ import annotations

import pytest

from tests.agents_e2e.agents import SPECS
from tests.agents_e2e.checks import CHECKS
from tests.agents_e2e.harness import Session, run_session

pytestmark = [pytest.mark.agents_e2e, pytest.mark.model, pytest.mark.timeout(600)]

END_KILLED = (
    "Claude Code kills a SessionEnd hook after 1.5 s: setup writes no timeout and hook end is not detached"
)
# with the service warm, hook end takes 0.8-1.6 s here: killed in about one run of three
RACY = {("claude", "hooks_completed"): END_KILLED, ("claude", "summary_written"): END_KILLED}
# (agent variant, check) -> the known mismatch that makes it fail today
KNOWN = {
    ("claude-noservice", "hooks_completed"): END_KILLED,
    ("claude-noservice", "summary_written"): END_KILLED + ": no summary",
    (
        "gemini",
        "prompt_recall",
    ): "Gemini prepends the start <hook_context> block to the prompt: recall searches the memory block",
    (
        "gemini",
        "summary_written",
    ): "Gemini: the user record starting with <hook_context> is dropped and the Stop reminder is taken as the request",
    (
        "gemini",
        "no_bogus_checkpoint",
    ): "Gemini fires PreCompress before every model call: pre-compact writes a bogus checkpoint",
}
# agent variant -> (agent, extra environment of the session)
VARIANTS = {
    "claude": ("claude", {}),
    # a user with the service off ([service] enabled = false): hook end loads the model itself
    "claude-noservice": ("claude", {"VAULTMEM_NO_SERVICE": "1"}),
    "gemini": ("gemini", {}),
}
_sessions: dict[str, Session] = {}


@pytest.fixture
def session(request, agent_bin, tmp_path_factory) -> Session:
    variant = request.param
    if variant not in _sessions:
        agent, extra = VARIANTS[variant]
        root = tmp_path_factory.mktemp(f"e2e-{variant}")
        _sessions[variant] = run_session(agent, SPECS[agent], agent_bin, root, extra)
    return _sessions[variant]


def _cases():
    for variant in VARIANTS:
        for check in CHECKS:
            reason = KNOWN.get((variant, check))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            if (variant, check) in RACY:
                marks = [
                    pytest.mark.xfail(
                        strict=False, reason=RACY[variant, check] + " (racy with the service up)"
                    )
                ]
            yield pytest.param(variant, check, id=f"{variant}-{check}", marks=marks)


@pytest.mark.parametrize("session,check", list(_cases()), indirect=["session"])
def test_agent_session(session: Session, check: str) -> None:
    assert session.rc == 0, f"{session.agent} exited {session.rc}: {session.stderr[-500:]}"
    ok, detail = CHECKS[check](session)
    assert ok, detail
