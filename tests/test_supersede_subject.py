"""Issue 37: a retraction supersedes only when it retracts the old memory's subject, end to end
through ``vaultmem remember`` (the vault's thresholds at -1: the test embedder's cosines are
arbitrary, so only the retraction rule decides)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from vaultmem.cli.app import app
from vaultmem.core.note import parse

JWT = ("JWT for API auth", "The public API authenticates with short-lived JWTs.")
COOKIES = (
    "Session cookies for the web app",
    "The web app uses HttpOnly session cookies instead of storing JWTs in localStorage.",
)
ROLLBAR = ("Error tracking in Rollbar", "Backend errors are reported to Rollbar.")
SENTRY = ("Error tracking moved to Sentry", "We replaced Rollbar with Sentry for backend error tracking.")


@pytest.fixture
def remember(empty_vault, fake_model):
    (empty_vault / ".vaultmem.toml").write_text(
        "[lifecycle]\nsupersede_retract_cosine = -1\npossible_update = -1\n"
    )

    def run(title: str, content: str) -> dict:
        args = [
            "remember",
            "decision",
            title,
            content,
            "--vault",
            str(empty_vault),
            "--anchor",
            "Project: Shop",
        ]
        result = CliRunner().invoke(app, [*args, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    return run


def status(vault, rel: str) -> str:
    return str(parse((vault / rel).read_text(), rel).meta.get("status", "active"))


def test_a_shared_retracted_word_about_another_subject_does_not_supersede(remember, empty_vault):
    """ "instead of storing JWTs" in a memory about the web app does not retract the API's JWTs."""
    old = remember(*JWT)
    new = remember(*COOKIES)
    assert new["superseded"] == [] and status(empty_vault, old["path"]) == "active"
    assert [p["id"] for p in new["possible_updates"]] == [old["id"]]  # flagged, not applied


def test_a_retraction_of_the_subject_still_supersedes(remember, empty_vault):
    old = remember(*ROLLBAR)
    new = remember(*SENTRY)
    assert [s["id"] for s in new["superseded"]] == [old["id"]]
    assert status(empty_vault, old["path"]) == "superseded"
