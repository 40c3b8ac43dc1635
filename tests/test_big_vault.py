"""Issue 45: a big vault serves from its first minute, with progress, and the first answer is
never blank. The real CLI and service in subprocesses (``test_service.cli``), with the small hash
embedder held midway through the vault's vectors (``VAULTMEM_TEST_EMBED_HOLD``): its first
index then lasts as long as the test needs, cheaply."""

from __future__ import annotations

import json
import subprocess

import pytest
from helpers import wait_for, write
from test_service import EXE, cli  # noqa: F401  (fixture)

pytestmark = pytest.mark.integration  # the CLI and the memory service in subprocesses

NOTES = 120


def big_vault(root):
    for i in range(NOTES):
        write(
            root,
            f"notes/Note {i:03d}.md",
            f"# Note {i:03d}\n\nHarbour crane {i} lifts word{i} crates{' with it and the rest as it is for us if we can' * (i % 2)}.\n",
        )
    (root / ".vaultmem").mkdir()
    return root


def status(cli, root) -> dict:  # noqa: F811
    return json.loads(cli("status", "--vault", str(root), "--json").stdout)


def test_a_vault_in_its_first_index_answers_hooks_status_and_recall_while_index_streams_progress(
    cli,  # noqa: F811
    tmp_path,
):
    root = big_vault(tmp_path / "big")
    hold = tmp_path / "hold"
    hold.touch()
    cli.env["VAULTMEM_TEST_EMBED_HOLD"] = f"{hold}:8"  # the vectors of a few notes, then held
    cli.env["VAULTMEM_FILL_WAIT"] = "1"  # the recall below waits 1 s (not 10) for vectors that are held
    cli("service", "start")
    index = subprocess.Popen([EXE, "index", "--vault", str(root), "--json"], env=cli.env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        wait_for(lambda: status(cli, root)["vectors"]["done"] > 0, timeout=60, what="the first vectors")
        assert status(cli, root)["indexing"]["phase"] == "vectors"
        line = cli("status", "--vault", str(root)).stdout
        assert "indexing " in line and f" of {NOTES} notes (vectors)" in line, line
        payload = json.dumps(
            {"session_id": "s1", "prompt": "which crane lifts word7 crates?", "cwd": str(root)}
        )
        hook = cli("hook", "prompt", "--vault", str(root), input=payload, timeout=30)
        assert "Note 007" in hook.stdout, hook.stdout  # answered from keywords, in its budget
        # stop words (in odd notes): no keyword hit, yet the hash embedder's vectors share them (cosine
        # about 0.7, above the relevance floor), so only the vectors built so far can answer
        lost = json.loads(
            cli("recall", "with it and the as it is for us if we can", "--vault", str(root), "--json").stdout
        )
        assert lost["degraded"] == "partial-vectors" and lost["results"], (
            lost
        )  # no keyword hit: vectors so far
        assert 0 < lost["indexing"]["vectors"] <= lost["indexing"]["notes"] == NOTES
        assert index.poll() is None  # all of that while the first index went on
        hold.unlink()
        out, err = index.communicate(timeout=120)
    finally:
        index.kill()
    assert index.returncode == 0, err
    # what this call added: every note, or none when a `status` that reached the service first had
    # begun the first index (never more: a manifest made twice counted them twice, 240)
    assert json.loads(out)["added"] in (NOTES, 0), out
    events = [json.loads(x) for x in err.splitlines() if x.startswith('{"event": "progress"')]
    assert {e["phase"] for e in events} >= {"vectors"} and events[-1]["total"] == NOTES
    assert status(cli, root)["vectors"] == {"done": NOTES, "notes": NOTES}


def test_the_demos_first_recall_of_what_we_decided_is_not_blank(cli, demo_copy):  # noqa: F811
    """Keywords find nothing in "what did we decide": the answer comes from the vectors, after
    a bounded wait for them, and says so when some are still missing."""
    first = json.loads(cli("recall", "what did we decide", "--vault", str(demo_copy), "--json").stdout)
    assert first["results"], first
    assert first.get("degraded") in (None, "partial-vectors")


def test_index_and_index_rebuild_through_the_service_report_what_they_did(cli, demo_copy):  # noqa: F811
    cli("service", "start")
    vault = ["--vault", str(demo_copy)]
    first = json.loads(cli("index", *vault, "--json").stdout)
    assert first["added"] >= 60 and first["embedded_chunks"] >= first["added"], first
    again = json.loads(cli("index", "--rebuild", *vault, "--json").stdout)
    assert again["added"] == first["added"], again
    counts = status(cli, demo_copy)["vectors"]
    assert counts["done"] == counts["notes"] == first["added"]
    assert json.loads(cli("recall", "advisory locks", *vault, "--json").stdout)["results"]
