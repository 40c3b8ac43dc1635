"""What a recall score shows (issue 38: "recall shows hits at score 0.000, an unrelated gotcha"),
through the CLI: no hit is printed with a score it does not have, and a hit below the vault's
average note says why it is there."""

from __future__ import annotations

import json
import re

import pytest
from test_service import cli  # noqa: F401  (fixture: the real CLI with the memory service)
from typer.testing import CliRunner

from vaultmem.cli.app import app

# five notes about deploying the API to Fly.io and one gotcha that shares only the word "API":
# most notes match the query strongly, so the gotcha's keyword match is below the average note
NOTES = [
    ("decision", "Deploy the API to Fly.io", "We deploy the API to Fly.io from CI on every merge to main."),
    ("tech_context", "Fly.io deploy topology", "The API deploy runs two machines on Fly.io behind its proxy."),
    ("lesson", "Check the Fly.io deploy logs", "After a deploy to Fly.io read the deploy logs before calling it done."),
    ("progress", "Moved the API deploy to Fly.io", "The API deploy now goes to Fly.io; Heroku is switched off."),
    ("gotcha", "Safari caches the API responses", "Safari keeps stale API responses unless the header says no-store."),
    ("preference", "Commit messages in imperative mood", "Write 'Add retry' not 'Added retry'."),
]  # fmt: skip


def invoke(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def deploys(empty_vault, fake_model):
    for kind, title, body in NOTES:
        invoke("remember", kind, title, body, "--vault", str(empty_vault))
    return empty_vault


def printed_scores(stdout: str) -> dict[str, str]:
    """Title -> the score text of each hit line (`` 1. Title  [type]  0.123  (why)``)."""
    return {
        m.group(1): m.group(2) for m in re.finditer(r"^\s*\d+\. (.+?)  \[\w+\]\s+(-?\d+\.\d+)", stdout, re.M)
    }


def test_an_unrelated_gotcha_is_shown_at_the_average_with_why_never_below(deploys):
    """The gotcha shares one keyword ("api") and scores below the vault's average note: it was
    shown with a negative score; issue 47: no score shown is negative, it is shown at 0 with
    why it is there, after every note above the average."""
    v = ["--vault", str(deploys)]
    shown = invoke("recall", "deploy api fly.io", *v)
    data = json.loads(invoke("recall", "deploy api fly.io", "--json", "--explain", *v).stdout)["results"]
    gotcha = next(h for h in data if h["title"] == "Safari caches the API responses")
    assert gotcha["score"] == 0 and gotcha["explain"]["score"] == 0 and data[-1] is gotcha
    assert all(h["score"] >= 0 and h["explain"]["score"] >= 0 for h in data), data
    assert "keyword" in gotcha["via"] and "below" in gotcha["via"], gotcha  # and why it is there
    line = next(ln for ln in shown.stdout.splitlines() if "Safari caches" in ln)
    assert f"({gotcha['via']})" in line and "-0." not in line, line
    assert all(h["via"] is None for h in data if h["score"] > 0 and "Fly.io" in h["title"]), data


def test_a_note_the_date_range_selects_is_scored_for_its_date(demo_copy, fake_model):
    """``--time filter`` with nothing but a time in the query: the range is the evidence, and the
    notes dated in it get the time part (as with ``--time boost``), not a text score below 0."""
    v = ["--vault", str(demo_copy), "--now", "2026-11-07"]  # yesterday: the advisory-locks decision
    data = json.loads(invoke("recall", "yesterday", "--time", "filter", "--json", "--explain", *v).stdout)
    assert data["results"], data
    for hit in data["results"]:
        assert hit["explain"]["time"] == 1.0, hit["explain"]
        assert hit["score"] > 0, hit
    shown = invoke("recall", "yesterday", "--time", "filter", *v).stdout
    assert "0.000" not in printed_scores(shown).values(), shown


LINKED = [
    ("decision", "Deploy the API to Fly.io", "We deploy the API to Fly.io from CI on every merge. See [[Rotate secrets quarterly]]."),
    ("gotcha", "Rotate secrets quarterly", "Every quarter the credentials in the password manager are renewed by hand."),
    ("preference", "Commit messages in imperative mood", "Write 'Add retry' not 'Added retry'."),
    ("lesson", "Pin the Python version in CI", "A runner image update moved Python to 3.13 and broke the build."),
    ("fact", "Office dog is called Biscuit", "Biscuit visits on Fridays."),
    ("fact", "Lunch order on Thursdays", "Pizza from the place on the corner."),
    ("fact", "Printer on floor two", "The printer needs toner every month."),
    ("fact", "Holiday calendar", "Company holidays are listed in the shared calendar."),
]  # fmt: skip


def test_a_hit_only_its_link_brings_says_where_it_is_linked_from(empty_vault, fake_model):
    """A gotcha sharing no word with the query comes second, lifted by the note it is linked
    from (context and graph): its line says so instead of showing a bare score."""
    v = ["--vault", str(empty_vault)]
    ids = {title: invoke("remember", kind, title, body, *v).stdout.split()[0] for kind, title, body in LINKED}
    data = json.loads(invoke("recall", "deploy api fly.io", "--json", "--explain", *v).stdout)["results"]
    gotcha = next(h for h in data if h["title"] == "Rotate secrets quarterly")
    assert gotcha["explain"]["bm25_raw"] == 0 and gotcha["explain"]["graph"] > 0  # the premise
    assert gotcha["via"] == f"linked from {ids['Deploy the API to Fly.io']}", gotcha
    line = next(
        ln
        for ln in invoke("recall", "deploy api fly.io", *v).stdout.splitlines()
        if ". Rotate secrets quarterly  [" in ln
    )
    assert f"(linked from {ids['Deploy the API to Fly.io']})" in line, line


def test_through_the_memory_service_too(cli, tmp_path):  # noqa: F811
    """The same through the service (its typer-free path prints the hits): the score it has,
    never 0.000, and no note below the average (issue 47)."""
    root = tmp_path / "vault"
    cli("init", str(root))
    for kind, title, body in NOTES:
        cli("remember", kind, title, body, "--vault", str(root))
    for _ in range(2):  # the first call starts the service, the second takes the fast path
        out = cli("recall", "deploy api fly.io", "--vault", str(root)).stdout
        scores = printed_scores(out)
        assert scores["Safari caches the API responses"] == "0.000", out
        assert all(float(x) >= 0 for x in scores.values()), out
        assert "(a keyword in common (api); below the average note)" in out, out


def test_a_resolved_note_lifts_no_unrelated_neighbour_into_the_hits(empty_vault, fake_model):
    """After `resolve`, the resolved note is gone from recall and so is the gotcha that was a hit
    only for being linked with it (it came back alone, as the top hit, before)."""
    v = ["--vault", str(empty_vault)]
    ids = {title: invoke("remember", kind, title, body, *v).stdout.split()[0] for kind, title, body in LINKED}
    invoke("resolve", ids["Deploy the API to Fly.io"], *v)
    data = json.loads(invoke("recall", "deploy api fly.io", "--json", *v).stdout)["results"]
    assert "Rotate secrets quarterly" not in [h["title"] for h in data], data
    every = json.loads(invoke("recall", "deploy api fly.io", "--json", "--include-resolved", *v).stdout)
    assert [h["title"] for h in every["results"][:2]] == [
        "Deploy the API to Fly.io",
        "Rotate secrets quarterly",
    ]
