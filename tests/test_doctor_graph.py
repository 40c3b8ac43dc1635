"""`vaultmem doctor` and `vaultmem graph ...` on the demo vault and on vaults with each problem planted."""

from __future__ import annotations

import json
import os
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import failed, write
from typer.testing import CliRunner

from vaultmem.cli.app import app
from vaultmem.index.layout import index_dir


@pytest.fixture
def run(fake_model):
    def invoke(vault: Path, *args: str):
        return CliRunner().invoke(app, [*args, "--vault", str(vault)])

    return invoke


def note(title: str, body: str = "", **meta: str) -> str:
    lines = [f"title: {json.dumps(title)}", *(f"{k}: {v}" for k, v in meta.items())]
    return "---\n" + "\n".join(lines) + "\n---\n\n" + body + "\n"


def doctor_json(run, vault: Path, *extra: str) -> tuple[int, dict]:
    r = run(vault, "doctor", "--json", *extra)
    return r.exit_code, json.loads(r.stdout)


def checks(report: dict, check: str) -> list[dict]:
    return [f for f in report["findings"] if f["check"] == check]


# ---------------------------------------------------------------------- doctor


def test_doctor_demo_reports_its_broken_links_with_suggestion(run, demo_copy):
    run(demo_copy, "index")
    code, rep = doctor_json(run, demo_copy)
    assert code == 1 and rep["needs_attention"]
    broken = {(f["path"], f["data"]["target"]): f["data"]["suggestion"] for f in checks(rep, "broken_link")}
    assert broken[("relationships/Harbor Point Marina.md", "Harbor Point contract")] == "Harbor Point Marina"
    assert rep["counts"]["parse_error"] == rep["counts"]["duplicate_id"] == rep["counts"]["index_drift"] == 0
    assert rep["index"]["notes_indexed"] == rep["notes"] == 68
    assert rep["watcher"]["state"] == "not running"
    assert rep["disk"]["notes"] > 0 and rep["disk"]["total_state"] > 0
    text = run(demo_copy, "doctor")
    assert text.exit_code == 1
    assert (
        "broken link: relationships/Harbor Point Marina.md" in text.stdout
        and "did you mean [[Harbor Point Marina]]" in text.stdout
    )
    assert f"findings: {rep['counts']['broken_link']} broken links" in text.stdout


def test_doctor_clean_vault_exits_zero(run, empty_vault):
    write(empty_vault, "a.md", note("Alpha", "See [[Beta]]."))
    write(empty_vault, "b.md", note("Beta", "Back to [[Alpha]]."))
    run(empty_vault, "index")
    code, rep = doctor_json(run, empty_vault)
    assert code == 0 and not rep["needs_attention"], rep["findings"]
    assert "all good" in run(empty_vault, "doctor").stdout


def test_doctor_finds_each_planted_problem(run, empty_vault):
    v = empty_vault
    write(v, "bad.md", "---\ntitle: [unclosed\n---\nbody\n")
    write(v, "d1.md", note("Dup one", "[[Dup two]]", id="same-id"))
    write(v, "d2.md", note("Dup two", "[[Dup one]]", id="SAME-ID"))
    write(v, "broken.md", note("Has broken", "see [[Dup tow]]"))
    write(v, "lonely.md", note("Lonely"))
    write(v, "anchor.md", note("Project: Empty", type="project"))
    write(v, "loop1.md", note("Loop one", "", status="superseded", superseded_by='"[[Loop two]]"'))
    write(v, "loop2.md", note("Loop two", "", status="superseded", superseded_by='"[[Loop one]]"'))
    write(v, "old.md", note("Old way", "", status="superseded", superseded_by='"[[Done way]]"'))
    write(v, "done.md", note("Done way", "", status="resolved"))
    body = "We deploy the billing service on Fly.io in the iad region with two machines."
    write(v, "u1.md", note("Deploy billing on Fly", body, type="decision", updated="2026-01-01"))
    write(v, "u2.md", note("Deploy billing on Fly", body + " Always.", type="decision", updated="2026-02-01"))
    write(v, "exp.md", note("Temporary freeze", "[[Lonely]]", expires="2020-01-01"))
    run(v, "index")
    write(v, "late.md", note("Added after indexing", "[[Lonely]]"))
    code, rep = doctor_json(run, v)
    assert code == 1
    assert [f["path"] for f in checks(rep, "parse_error")] == ["bad.md"]
    assert (
        "frontmatter" in checks(rep, "parse_error")[0]["message"]
        or "YAML" in checks(rep, "parse_error")[0]["message"]
    )
    assert checks(rep, "duplicate_id")[0]["data"]["paths"] == ["d1.md", "d2.md"]
    broken = [f for f in checks(rep, "broken_link") if f["path"] == "broken.md"]
    assert broken and broken[0]["data"]["suggestion"] == "Dup two"
    assert "anchor.md" in [f["path"] for f in checks(rep, "empty_anchor")]
    assert [f["path"] for f in checks(rep, "orphan")] == ["anchor.md", "u1.md", "u2.md"]  # Lonely is linked
    loops = checks(rep, "supersede_loop")
    assert len(loops) == 1 and set(loops[0]["data"]["chain"]) == {"loop1.md", "loop2.md"}
    assert [f["path"] for f in checks(rep, "supersede_ends_resolved")] == ["old.md"]
    upd = checks(rep, "likely_update")
    assert [(f["path"], f["data"]["newer"]) for f in upd] == [("u1.md", "u2.md")]
    assert [f["path"] for f in checks(rep, "expired")] == ["exp.md"]
    drift = checks(rep, "index_drift")
    assert drift and drift[0]["data"]["sample"]["new"] == ["late.md"]
    assert rep["index"]["drift"] == {"new": 1, "changed": 0, "removed": 0}


def test_doctor_reports_a_candidate_until_it_is_confirmed(run, empty_vault):
    v = empty_vault
    write(v, "a.md", note("Alpha", "See [[Rule]]."))
    write(
        v,
        "rule.md",
        note("Rule", "Always run migrations in a transaction. [[Alpha]]", type="rule", status="candidate"),
    )
    run(v, "index")
    code, rep = doctor_json(run, v)
    assert code == 1 and rep["needs_attention"]
    found = checks(rep, "candidate")
    assert [f["path"] for f in found] == ["rule.md"] and rep["counts"]["candidate"] == 1
    assert "confirm" in found[0]["hint"]
    assert run(v, "confirm", "Rule").exit_code == 0
    code, rep = doctor_json(run, v)
    assert code == 0 and checks(rep, "candidate") == [], rep["findings"]


def test_doctor_recorded_update_is_not_reported(run, empty_vault):
    body = "We deploy the billing service on Fly.io in the iad region with two machines."
    write(empty_vault, "u1.md", note("Deploy billing on Fly", body, type="decision"))
    write(
        empty_vault,
        "u2.md",
        note("Deploy billing on Fly", body + " Always.", type="decision", supersedes='"[[u1]]"'),
    )
    run(empty_vault, "index")
    _, rep = doctor_json(run, empty_vault)
    assert checks(rep, "likely_update") == []


def test_doctor_fix_reindexes_and_archives_expired_and_prints_each(run, empty_vault):
    v = empty_vault
    write(v, "a.md", note("Alpha", "[[Beta]]"))
    write(v, "b.md", note("Beta", "[[Alpha]]", expires="2020-01-01"))
    run(v, "index")
    write(v, "c.md", note("Gamma", "[[Alpha]]"))
    (v / "a.md").write_text(note("Alpha", "[[Beta]] and [[Gamma]]"), encoding="utf-8")
    before = (v / "b.md").read_text(encoding="utf-8")
    r = run(v, "doctor", "--fix")
    assert r.exit_code == 0, r.output
    assert "fixed: reindexed: 1 added, 1 updated" in r.stdout
    assert "fixed: archived b.md (expired on 2020-01-01)" in r.stdout
    after = (v / "b.md").read_text(encoding="utf-8")
    assert "status: archived" in after and after.replace("status: archived\n", "") == before
    _, rep = doctor_json(run, v)
    assert rep["counts"]["index_drift"] == 0 and rep["counts"]["expired"] == 0


def test_doctor_without_vault_is_one_line_error(run, tmp_path):
    assert "vaultmem: " in failed(run(tmp_path / "nope", "doctor"))


# ---------------------------------------------------------------------- graph


def test_graph_commands_on_demo(run, demo_copy):
    run(demo_copy, "index")
    proj = "projects/Project - Tidewater.md"
    anchors = json.loads(run(demo_copy, "graph", "anchors", "--json").stdout)
    assert any(a["path"] == proj and a["members"] > 10 for a in anchors)
    back = json.loads(run(demo_copy, "graph", "backlinks", "Project: Tidewater", "--json").stdout)
    assert "decisions/Use Postgres advisory locks for job leasing.md" in [b["path"] for b in back]
    links = json.loads(
        run(demo_copy, "graph", "links", "Use Postgres advisory locks for job leasing", "--json").stdout
    )
    assert {"supersedes"} <= {k for item in links for k in item["kinds"]}
    near = json.loads(
        run(demo_copy, "graph", "neighbours", "Project: Tidewater", "--depth", "2", "--json").stdout
    )
    assert {n["hops"] for n in near} == {1, 2}
    unresolved = json.loads(run(demo_copy, "graph", "unresolved", "--json").stdout)
    assert {"target": "Harbor Point contract", "from": ["relationships/Harbor Point Marina.md"]} in unresolved
    path = json.loads(
        run(
            demo_copy, "graph", "path", "Use Redis locks for job leasing", "Harbor Point Marina", "--json"
        ).stdout
    )
    assert path["hops"] >= 1 and path["path"][0]["title"] == "Use Redis locks for job leasing"
    rows = run(demo_copy, "graph", "neighbours", "Project: Tidewater", "--depth", "2").stdout
    assert "  (1 hop)" in rows and "  (2 hops)" in rows and "[1]" not in rows
    text = run(demo_copy, "graph", "backlinks", "Project: Tidewater")
    assert text.exit_code == 0 and "(decisions/Use Postgres advisory locks for job leasing.md)" in text.stdout
    assert json.loads(run(demo_copy, "graph", "orphans", "--json").stdout) == []


def test_graph_planted_orphan_unresolved_and_no_path(run, empty_vault):
    write(empty_vault, "a.md", note("Alpha", "[[Beta]] [[Nowhere]]"))
    write(empty_vault, "b.md", note("Beta"))
    write(empty_vault, "c.md", note("Gamma"))
    write(empty_vault, "d.md", note("Delta", "[[Nowhere]]"))  # not indexed: graph reads the files
    assert [o["path"] for o in json.loads(run(empty_vault, "graph", "orphans", "--json").stdout)] == ["c.md"]
    assert json.loads(run(empty_vault, "graph", "unresolved", "--json").stdout) == [
        {"target": "Nowhere", "from": ["a.md", "d.md"]},
        {
            "target": "Beta",
            "from": ["a.md"],
            "obsidian_only": True,
        },  # b.md's title: Obsidian resolves file names
    ]
    r = run(empty_vault, "graph", "path", "Alpha", "Delta")  # only a missing note joins them: no path
    assert failed(r, 1) == "vaultmem: no chain of links joins these notes"
    assert "vaultmem: no note" in failed(run(empty_vault, "graph", "links", "Epsilon"))
    assert "unknown format" in failed(run(empty_vault, "graph", "export", "--format", "png"))
    assert "--json asks for JSON but --format asks for dot" in failed(
        run(empty_vault, "graph", "export", "--format", "dot", "--json")
    )
    assert not (index_dir(empty_vault) / "manifest.db").exists()  # nothing was indexed


def test_graph_export_formats(run, demo_copy):
    run(demo_copy, "index")
    data = json.loads(run(demo_copy, "graph", "export", "--json").stdout)
    assert len([n for n in data["nodes"] if n["path"]]) == 68 and data["edges"]
    sub = json.loads(
        run(demo_copy, "graph", "export", "--anchor", "Harbor Point Marina", "--depth", "1").stdout
    )
    paths = {n["path"] for n in sub["nodes"]}
    assert "relationships/Harbor Point Marina.md" in paths and len(paths) < 20
    root = ET.fromstring(run(demo_copy, "graph", "export", "--format", "graphml").stdout)
    ns = "{http://graphml.graphdrawing.org/xmlns}"
    assert len(root.findall(f"{ns}graph/{ns}node")) == len(data["nodes"])
    assert len(root.findall(f"{ns}graph/{ns}edge")) == len(data["edges"])
    dot = run(demo_copy, "graph", "export", "--format", "dot").stdout
    assert dot.startswith("digraph vaultmem {") and dot.count(" -> ") == len(data["edges"])
    mer = run(
        demo_copy, "graph", "export", "--format", "mermaid", "--anchor", "Harbor Point Marina", "--depth", "1"
    ).stdout
    assert mer.startswith("```mermaid\nflowchart LR\n") and mer.rstrip().endswith("```")
    assert '["Harbor Point Marina"]' in mer and '"' not in mer.replace('["', "").replace('"]', "").replace(
        '(["', ""
    )


def test_doctor_reports_a_running_watcher_and_leaves_reindexing_to_it(run, empty_vault, fake_embedder):
    from helpers import Running

    write(empty_vault, "a.md", note("Alpha", "[[Beta]]"))
    write(empty_vault, "b.md", note("Beta", "[[Alpha]]"))
    watcher = Running(empty_vault, fake_embedder, serve=True)
    try:
        deadline = time.time() + 20
        while len(watcher.paths()) < 2 and time.time() < deadline:
            time.sleep(0.05)
        code, rep = doctor_json(run, empty_vault)
        assert rep["watcher"]["state"] == "running" and rep["watcher"]["pid"] == os.getpid()
        assert code == 0 and rep["index"]["notes_indexed"] == 2
    finally:
        watcher.stop()


def test_doctor_moves_a_config_out_of_the_disposable_folder_and_names_pinned_settings(run, empty_vault):
    """A vault made before keeps its config in .vaultmem/ (lost if that folder is deleted),
    with every default of its day written out: doctor says so, --fix moves the file."""
    (empty_vault / ".vaultmem.toml").unlink()
    old = empty_vault / ".vaultmem" / "config.toml"
    old.write_text("[recall]\nk = 10\nbm25_weight = 0.25\n")
    write(empty_vault, "a.md", note("Alpha", "See [[Beta]]."))
    write(empty_vault, "b.md", note("Beta", "Back to [[Alpha]]."))
    code, rep = doctor_json(run, empty_vault)
    assert code == 1 and [f["path"] for f in checks(rep, "old_config_place")] == [".vaultmem/config.toml"]
    assert [f["data"]["key"] for f in checks(rep, "config_not_default")] == [
        "recall.bm25_weight"
    ]  # k = 10 is the default
    assert "1 setting not at the default" in run(empty_vault, "doctor").stdout
    fixed = run(empty_vault, "doctor", "--fix")
    assert "fixed: moved .vaultmem/config.toml to .vaultmem.toml" in fixed.stdout
    assert (
        not old.exists()
        and (empty_vault / ".vaultmem.toml").read_text() == "[recall]\nk = 10\nbm25_weight = 0.25\n"
    )
    code, rep = doctor_json(run, empty_vault)
    assert code == 0 and checks(rep, "old_config_place") == []
    assert [f["path"] for f in checks(rep, "config_not_default")] == [".vaultmem.toml"]
