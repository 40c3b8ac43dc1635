"""Time and truth end to end: subject keys, validity, --as-of, history, expired notes, time
expressions in recall, possible updates, duplicate ids, the key and declared rules under a watcher."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
import yaml
from helpers import Running, failed, wait_for, write
from typer.testing import CliRunner

from vaultmem.cli.app import app
from vaultmem.index.manifest import Manifest
from vaultmem.memory import lifecycle
from vaultmem.vault import Vault


@pytest.fixture
def run(empty_vault, fake_embedder, monkeypatch, backend):
    monkeypatch.setattr("vaultmem.vault.make_embedder", lambda *a, **k: fake_embedder)
    env = {"VAULTMEM_VAULT": str(empty_vault)}
    return lambda *args, input=None: CliRunner().invoke(app, list(args), env=env, input=input)


def ok(result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout


def meta(root, rel: str) -> dict:
    text = (root / rel).read_text()
    return yaml.safe_load(text.split("---\n")[1])


def note(rid: str, title: str, body: str, **fields) -> str:
    head = {"id": rid, "title": title, **fields}
    return "---\n" + yaml.safe_dump(head, sort_keys=False) + f"---\n# {title}\n\n{body}\n"


# ------------------------------------------------------------------ subject keys on remember


def test_same_key_and_type_supersedes_whatever_the_source(run, empty_vault):
    first = json.loads(ok(run("remember", "fact", "Deploy target", "We deploy to Fly.io.", "--key", "deploy-target",
                              "--source", "agent-a", "--json")))  # fmt: skip
    out = ok(run("remember", "fact", "Where we deploy", "Kubernetes on EKS, since the cost review.",
                 "--key", "Deploy-Target", "--source", "agent-a"))  # fmt: skip
    new_id = out.splitlines()[0].split()[0]
    assert f"superseded {first['id']}  Deploy target  (same key Deploy-Target)" in out
    old, new = meta(empty_vault, first["path"]), meta(empty_vault, out.splitlines()[0].split("  ")[1])
    assert old["status"] == "superseded" and old["superseded_by"] == "[[Where we deploy]]"
    assert new["key"] == "Deploy-Target" and new["supersedes"] == ["[[Deploy target]]"]
    assert str(old["valid_until"]) == str(new["valid_from"]) == new["created"].date().isoformat()
    hist = ok(run("history", "deploy-target"))
    assert "2 version(s)" in hist
    lines = hist.splitlines()[1:]
    assert "superseded" in lines[0] and first["id"] in lines[0]
    assert "current" in lines[1] and new_id in lines[1] and ".. now" in lines[1]
    assert json.loads(ok(run("history", first["id"], "--json")))["key"] == "deploy-target"


def test_a_key_never_crosses_type_or_scope(run, empty_vault):
    a = json.loads(ok(run("remember", "fact", "Editor", "Vim.", "--key", "user.editor", "--json")))
    b = json.loads(ok(run("remember", "preference", "Editor", "Helix.", "--key", "user.editor", "--json")))
    c = json.loads(ok(run("remember", "fact", "Editor of the user", "Emacs.", "--key", "user.editor",
                          "--scope", "user", "--vault", str(empty_vault), "--json")))  # fmt: skip
    assert b["superseded"] == [] and c["superseded"] == []
    assert meta(empty_vault, a["path"])["status"] == "active"


def test_bad_key_is_refused(run, empty_vault):
    assert "empty" in failed(run("remember", "fact", "X", "Y.", "--key", "  "), 2)
    assert "200" in failed(run("remember", "fact", "X", "Y.", "--key", "k" * 201), 2)


def test_possible_updates_are_listed_not_applied(run, empty_vault):
    (empty_vault / ".vaultmem.toml").write_text(
        "[lifecycle]\nsupersede_shared_context = 2\nsupersede_no_context = 2\n"
        "supersede_retract_cosine = 2\npossible_update = -1\n"
    )  # everything similar is only "possible"
    old = json.loads(ok(run("remember", "decision", "Cache layer", "Redis for the session cache.",
                            "--context", "app/cache.py", "--json")))  # fmt: skip
    res = json.loads(ok(run("remember", "decision", "Cache layer choice", "Memcached for the session cache now.",
                            "--context", "app/cache.py", "--json")))  # fmt: skip
    assert res["superseded"] == []
    assert [p["id"] for p in res["possible_updates"]] == [old["id"]]
    assert isinstance(res["possible_updates"][0]["similarity"], float)
    assert meta(empty_vault, old["path"])["status"] == "active"
    out = ok(run("remember", "decision", "Cache layer pick", "Dragonfly for the session cache now.",
                 "--context", "app/cache.py"))  # fmt: skip
    assert f"possible update of {old['id']}  Cache layer  (similarity" in out
    assert f"vaultmem supersede {old['id']} " in out


def test_signal_rule_supersedes_a_clear_update(open_vault, empty_vault):
    v = open_vault(empty_vault)
    v.config["lifecycle"]["supersede_retract_cosine"] = -1.0  # the test embedder's cosines are arbitrary
    old = v.remember("decision", "Error tracking in Rollbar", "Backend errors are reported to Rollbar.",
                     context=["app/errors.py"], source="a")  # fmt: skip
    unrelated = v.remember("decision", "Logo colours", "The logo is teal.", source="a")
    new = v.remember("decision", "Error tracking moved to Sentry", "We replaced Rollbar with Sentry.",
                     context=["app/errors.py"], source="b")  # fmt: skip
    assert [s["id"] for s in new["superseded"]] == [old["id"]]
    assert unrelated["id"] not in [p["id"] for p in new["possible_updates"] + new["superseded"]]


# ------------------------------------------------------------------ validity, --as-of, expired


def test_as_of_answers_with_what_was_true_then(run, empty_vault):
    write(empty_vault, "decisions/Region iad.md", note("reg1", "Deploy region iad", "The app runs in iad.",
          type="decision", created="2026-06-02", status="superseded", superseded_by="[[Region fra]]",
          valid_until="2026-10-19"))  # fmt: skip
    write(empty_vault, "decisions/Region fra.md", note("reg2", "Deploy region fra", "The app runs in fra.",
          type="decision", created="2026-10-19", valid_from="2026-10-19", supersedes="[[Region iad]]"))  # fmt: skip
    ids = lambda *a: [
        h["id"] for h in json.loads(ok(run("recall", "deploy region app runs", "--json", *a)))["results"]
    ]
    assert ids() == ["reg2"]  # today: only the current one
    assert ids("--as-of", "2026-09-01") == ["reg1"]
    assert ids("--as-of", "2026-10-19") == ["reg2"]
    assert ids("--as-of", "2026-01-01") == []
    assert "--as-of" in failed(run("recall", "region", "--as-of", "someday"), 2)
    past = json.loads(
        ok(run("recall", "deploy region app runs in September", "--now", "2026-11-22", "--json"))
    )
    assert past["results"][0]["id"] == "reg1"  # a question about a past period sees what was true then
    out = ok(run("recall", "deploy region", "--as-of", "2026-09-01", "--explain"))
    assert "superseded" in out.splitlines()[0] and "valid on 2026-09-01" in out


def test_past_valid_until_without_successor_is_expired(run, empty_vault):
    write(empty_vault, "facts/Promo.md", note("pro1", "Promo code", "SUMMER24 gives 10% off.", type="fact",
                                              valid_until="2026-01-01"))  # fmt: skip
    write(
        empty_vault,
        "facts/Other.md",
        note("oth1", "Coupon policy", "Coupons stack with any promo.", type="fact"),
    )
    assert [h["id"] for h in json.loads(ok(run("recall", "promo code", "--json")))["results"]] == ["oth1"]
    hits = json.loads(ok(run("recall", "promo code", "--include-resolved", "--json")))["results"]
    assert hits[0]["id"] == "pro1" and hits[0]["status"] == "expired"
    assert "expired" in ok(run("history", "pro1"))


# ------------------------------------------------------------------ time expressions in recall


def _dated_vault(root) -> None:
    for day, text in (("2026-11-13", "Partial refunds shipped."), ("2026-10-16", "Currency conversion for CHF."),
                      ("2026-08-14", "Tables moved to Postgres 16.")):  # fmt: skip
        write(root, f"progress/Payments {day}.md", note(f"p{day[5:7]}{day[8:]}", "Payments weekly progress", text,
                                                         type="progress", created=day, updated=day))  # fmt: skip
    write(root, "progress/Postgres migration.md", note("mig1", "Postgres migration", "Done, no downtime.",
                                                       type="progress", date="2026-08-14", created="2026-11-01",
                                                       updated="2026-11-01"))  # fmt: skip
    write(root, "notes/Retro.md", note("retro", "Retro", "Held on 2 October 2026: payments went well.",
                                       created="2026-11-01", updated="2026-11-01"))  # fmt: skip


def test_time_expression_boosts_notes_dated_in_its_range(run, empty_vault):
    _dated_vault(empty_vault)
    top = lambda q, *a: json.loads(ok(run("recall", q, "--now", "2026-11-22", "--json", "--explain", *a)))[
        "results"
    ]
    hits = top("payments progress last week")
    assert hits[0]["id"] == "p1113"
    assert hits[0]["explain"]["time_range"] == "2026-11-09..2026-11-15 (last week)"
    assert top("payments progress in 2026-10")[0]["id"] == "p1016"
    assert top("payments progress since the migration")[0]["id"] in ("p1113", "p1016")
    assert top("payments on 2 October 2026")[0]["id"] == "retro"  # a date written in the body
    plain = top("payments progress")
    assert all("time_range" not in h["explain"] for h in plain)
    assert [h["id"] for h in top("payments progress last week", "--time", "filter")] == ["p1113"]
    assert "time_range" not in top("payments progress last week", "--time", "off")[0]["explain"]
    out = ok(run("recall", "payments progress last week", "--now", "2026-11-22", "--explain"))
    assert "dates 2026-11-09..2026-11-15 (last week)" in out
    assert "--time" in failed(run("recall", "x", "--time", "sometimes"), 2)


def test_a_range_that_tells_no_notes_apart_is_left_as_text(run, empty_vault):
    _dated_vault(empty_vault)
    hits = json.loads(ok(run("recall", "payments in 1999", "--now", "2026-11-22", "--json", "--explain")))[
        "results"
    ]
    assert all("time_range" not in h["explain"] for h in hits)


# ------------------------------------------------------------------ duplicate ids


def test_duplicate_ids_are_reported_and_never_resolved_silently(run, empty_vault):
    write(empty_vault, "facts/One.md", note("same1", "One", "First."))
    write(empty_vault, "facts/Two.md", note("SAME1", "Two", "Second."))
    indexed = run("index")
    assert indexed.exit_code == 0 and "duplicate id same1: facts/One.md, facts/Two.md" in indexed.stderr
    out = ok(run("status"))
    assert "duplicate id same1: facts/One.md, facts/Two.md" in out
    assert json.loads(ok(run("status", "--json")))["duplicate_ids"] == {
        "same1": ["facts/One.md", "facts/Two.md"]
    }
    err = failed(run("show", "same1"), 2)
    assert "is used by 2 notes" in err and "facts/One.md" in err
    assert "is used by 2 notes" in failed(run("edit", "same1", "--add-tag", "x"), 2)
    assert "First." in ok(run("show", "facts/One.md"))


# ------------------------------------------------------------------ the watcher applies keys to hand-written notes


def test_watcher_applies_the_key_rule_to_hand_written_notes(empty_vault, fake_embedder):
    write(empty_vault, "facts/Editor.md", note("ed1", "Editor", "VS Code.", type="fact", key="user.editor",
                                               created="2026-01-01"))  # fmt: skip
    r = Running(empty_vault, fake_embedder)
    try:
        new_text = note("ed2", "Editor now", "Neovim.", type="fact", key="user.editor", created="2026-11-01")
        write(empty_vault, "facts/Editor now.md", new_text)
        wait_for(
            lambda: meta(empty_vault, "facts/Editor.md").get("status") == "superseded", what="old superseded"
        )
        old = meta(empty_vault, "facts/Editor.md")
        assert old["superseded_by"] == "[[Editor now]]" and str(old["valid_until"]) == "2026-11-01"
        assert (empty_vault / "facts/Editor now.md").read_text() == new_text  # the new note is never touched
    finally:
        r.stop()


def _batches_after(r, action) -> None:
    """Run ``action`` (a file change) and wait until the watcher applied a batch after it."""
    before = r.watcher.state.batches
    action()
    wait_for(lambda: r.watcher.state.batches > before, what="a batch")


def test_watcher_acts_on_a_hand_written_update_only_when_it_says_so(empty_vault, fake_embedder, monkeypatch):
    """A hand-written note that resembles an older one changes nothing, however sure the
    signals of ``remember`` would be; its own ``supersedes:`` does act."""
    calibrated = lifecycle._thresholds  # the signals would call this an update
    monkeypatch.setattr(
        lifecycle, "_thresholds", lambda *a: dataclasses.replace(calibrated(*a), auto_cosine=-1.0)
    )
    old_text = note("rb1", "Error tracking in Rollbar", "Backend errors are reported to Rollbar.", type="decision",
                    context=["app/errors.py"], created="2026-10-01")  # fmt: skip
    write(empty_vault, "decisions/Rollbar.md", old_text)
    r = Running(empty_vault, fake_embedder)
    try:
        update = note("se1", "Error tracking moved to Sentry", "We replaced Rollbar with Sentry.", type="decision",
                      context=["app/errors.py"], created="2026-11-01")  # fmt: skip
        _batches_after(r, lambda: write(empty_vault, "decisions/Sentry.md", update))
        wait_for(lambda: "decisions/Sentry.md" in r.paths(), what="the update indexed")
        time.sleep(0.5)  # a wrong supersede would have been written by now
        assert (empty_vault / "decisions/Rollbar.md").read_text() == old_text
        stated = note("se1", "Error tracking moved to Sentry", "We replaced Rollbar with Sentry.", type="decision",
                      context=["app/errors.py"], created="2026-11-01", supersedes="[[Rollbar]]")  # fmt: skip
        write(empty_vault, "decisions/Sentry.md", stated)
        wait_for(
            lambda: meta(empty_vault, "decisions/Rollbar.md").get("status") == "superseded",
            what="old superseded",
        )
        old = meta(empty_vault, "decisions/Rollbar.md")
        assert (
            old["superseded_by"] == "[[Sentry|Error tracking moved to Sentry]]"
            and str(old["valid_until"]) == "2026-11-01"
        )
        assert (empty_vault / "decisions/Sentry.md").read_text() == stated  # the new note is never touched
    finally:
        r.stop()


@pytest.mark.model  # the watcher subprocess loads the real embedding model
def test_a_watcher_process_never_supersedes_by_similarity_with_the_real_model(empty_vault, tmp_path):
    """``vaultmem watch`` as its own process, with the default model: neither a related note
    nor an update written by hand changes the old note; a stated ``supersedes:`` does."""
    old_text = note("rb1", "Error tracking in Rollbar", "Backend errors are reported to Rollbar.", type="decision",
                    context=["app/errors.py"], created="2026-10-01")  # fmt: skip
    write(empty_vault, "decisions/Rollbar.md", old_text)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("VAULTMEM_VAULT", None)
    status = lambda: json.loads(
        CliRunner().invoke(app, ["status", "--json", "--vault", str(empty_vault)]).stdout or "{}"
    )
    proc = subprocess.Popen([sys.executable, "-m", "vaultmem", "watch", "--vault", str(empty_vault)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        wait_for(lambda: status().get("pid") == proc.pid, timeout=120, what="the watcher process")
        distinct = note("al1", "Error alert threshold", "Alerts fire after five errors a minute.", type="decision",
                        context=["app/errors.py"], created="2026-10-20")  # fmt: skip
        write(empty_vault, "decisions/Alerts.md", distinct)
        wait_for(lambda: ((st := status()).get("last_batch") or {}).get("added") == 1 and not st.get("pending"),
                 timeout=60, what="the distinct note indexed")  # fmt: skip
        time.sleep(0.5)  # a wrong supersede would have been written by now
        assert (empty_vault / "decisions/Rollbar.md").read_text() == old_text
        update = note("se1", "Error tracking moved to Sentry", "We replaced Rollbar with Sentry.", type="decision",
                      context=["app/errors.py"], created="2026-11-01")  # fmt: skip
        write(empty_vault, "decisions/Sentry.md", update)
        wait_for(lambda: ((st := status()).get("last_batch") or {}).get("added") == 1 and not st.get("pending")
                 and st.get("batches", 0) >= 3, timeout=60, what="the update indexed")  # fmt: skip
        time.sleep(0.5)
        assert (empty_vault / "decisions/Rollbar.md").read_text() == old_text
        stated = update.replace("created:", "supersedes: '[[Rollbar]]'\ncreated:")
        write(empty_vault, "decisions/Sentry.md", stated)
        wait_for(lambda: meta(empty_vault, "decisions/Rollbar.md").get("status") == "superseded", timeout=60,
                 what="old superseded")  # fmt: skip
        old = meta(empty_vault, "decisions/Rollbar.md")
        assert (
            old["superseded_by"] == "[[Sentry|Error tracking moved to Sentry]]"
            and str(old["valid_until"]) == "2026-11-01"
        )
        assert (empty_vault / "decisions/Sentry.md").read_text() == stated
        assert (empty_vault / "decisions/Alerts.md").read_text() == distinct
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_keys_and_signals_supersede_only_within_a_branch(open_vault, empty_vault):
    write(empty_vault, "a.md", note("b1", "A", "1.", type="fact", key="k", created="2026-01-01"))
    write(empty_vault, "b.md", note("b2", "B", "2.", type="fact", key="k", created="2026-02-01", branch="feat-x",
                                    repo="github.com/me/app"))  # fmt: skip
    v = open_vault(empty_vault)
    assert v.reindex().superseded == []  # the same key on two branches: both stay
    write(empty_vault, "c.md", note("b3", "C", "3.", type="fact", key="k", created="2026-03-01"))
    assert [(d["id"], d["by"]) for d in v.reindex().superseded] == [("b1", "b3")]  # default branch only
    assert meta(empty_vault, "b.md").get("status") is None
    # remember on a feature branch: its key and its signals stay on that branch
    v.reindex()
    on_branch = v.remember(
        "fact", "D", "4.", key="k", extra={"branch": "feat-x", "repo": "github.com/me/app"}
    )
    assert [s["id"] for s in on_branch["superseded"]] == ["b2"]
    v.config["lifecycle"]["supersede_retract_cosine"] = -1.0
    v.remember("decision", "Error tracking in Rollbar", "Backend errors are reported to Rollbar.",
               context=["app/errors.py"])  # fmt: skip
    new = v.remember("decision", "Error tracking moved to Sentry", "We replaced Rollbar with Sentry.",
                     context=["app/errors.py"], extra={"branch": "feat-y"})  # fmt: skip
    assert new["superseded"] == []


def test_list_and_show_mark_expired_notes(run, empty_vault):
    write(
        empty_vault,
        "facts/Promo.md",
        note("pro1", "Promo code", "SUMMER24.", type="fact", valid_until="2026-01-01"),
    )
    write(empty_vault, "facts/Sale.md", note("sal1", "Sale", "Ends soon.", type="fact", expires="2026-02-01"))
    write(
        empty_vault,
        "facts/Other.md",
        note("oth1", "Coupon policy", "Coupons stack with any promo.", type="fact"),
    )
    rows = {r["id"]: r["status"] for r in json.loads(ok(run("list", "--status", "active", "--json")))}
    assert rows == {"pro1": "expired", "sal1": "expired", "oth1": "active"}
    assert json.loads(ok(run("show", "pro1", "--json")))["status"] == "expired"
    assert "(id sal1, expired)" in ok(run("show", "sal1"))
    assert "(expired)" not in ok(run("show", "oth1"))
    listed = ok(run("list", "--status", "active")).splitlines()
    assert [line.endswith("(expired)") for line in sorted(listed, key=lambda l: "Coupon" in l)] == [
        True,
        True,
        False,
    ]
    assert json.loads(ok(run("show", "oth1", "--json")))["status"] == "active"


# ------------------------------------------------------------------ the index schema


def test_an_index_of_schema_1_is_upgraded_and_rebuilt(empty_vault, fake_embedder):
    write(empty_vault, "facts/Dated.md", note("d1", "Dated", "Met on 8 May 2023.", key="x"))
    v = Vault(empty_vault, embedder=fake_embedder)
    v.reindex()
    v.close()
    db = sqlite3.connect(empty_vault / ".vaultmem" / "index" / "manifest.db")
    for column in ("subject", "valid_from", "valid_until", "dates"):
        db.execute(f"ALTER TABLE notes DROP COLUMN {column}")
    db.execute("UPDATE state SET value='m1.b3' WHERE key='index_version'")
    db.commit()
    db.close()
    v = Vault(empty_vault, embedder=fake_embedder)
    v.reindex()
    rec = v.records()["facts/Dated.md"]
    assert rec.subject == "x" and rec.dates == ("2023-05-08",)
    v.close()
    assert Manifest  # the module under test


# ------------------------------------------------------------------ the demo vault


def test_demo_vault_shows_a_validity_chain(demo_copy, fake_embedder, monkeypatch):
    monkeypatch.setattr("vaultmem.vault.make_embedder", lambda *a, **k: fake_embedder)
    out = CliRunner().invoke(app, ["history", "job-leasing", "--vault", str(demo_copy)])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[0] == "history of job-leasing: 3 version(s)"
    assert lines[1].split()[:4] == ["2026-09-19", "..", "2026-10-09", "superseded"]
    assert lines[2].split()[:4] == ["2026-10-09", "..", "2026-11-04", "superseded"]
    assert lines[3].split()[:4] == ["2026-11-04", "..", "now", "current"]
    res = CliRunner().invoke(app, ["recall", "job leasing locks", "--as-of", "2026-10-20", "--vault", str(demo_copy),
                                   "--json", "--mode", "bm25"])  # fmt: skip
    titles = [h["title"] for h in json.loads(res.stdout)["results"]]
    assert titles[0] == "Use Redis locks for job leasing"  # what was true on 2026-10-20
    assert "Use Postgres advisory locks for job leasing" not in titles  # not yet
    assert "Use a job_leases table for job leasing" not in titles  # no longer
