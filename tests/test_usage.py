"""The usage sidecar (.vaultmem-usage/usage.db): retrieval log, ratings, gaps; logged by recall,
carried by export/import; reading never rewrites a note."""

from __future__ import annotations

import itertools
import json
import types
from pathlib import Path

import pytest
from helpers import failed, write
from typer.testing import CliRunner

from vaultmem.cli.app import app
from vaultmem.core.errors import BadInput
from vaultmem.index.usage import Usage, UsageStore
from vaultmem.vault import Vault


@pytest.fixture
def store(tmp_path):
    s = UsageStore(tmp_path / "state" / "usage.db")
    yield s
    s.close()


@pytest.fixture
def clock(monkeypatch):
    """A fake clock for the usage store: 1000, 1001, 1002, ..."""
    ticks = itertools.count(1000)
    monkeypatch.setattr("vaultmem.index.usage.time", types.SimpleNamespace(time=lambda: float(next(ticks))))


# ------------------------------------------------------------------ the store


def test_retrievals_and_ratings_make_usage(store):
    store.log_retrievals(["a", "b"], "recall", at=100.0)
    store.log_retrievals(["a"], "wake", at=200.0)
    store.rate("a", True, at=10.0)
    store.rate("a", False, "agent-1", at=20.0)
    store.rate("c", True, at=5.0)
    got = store.usage(["a", "b", "c", "never", "a"])
    assert got == {
        "a": Usage(count=2, last_access=200.0, useful=1, ratings=2, last_rating=20.0),
        "b": Usage(count=1, last_access=100.0),
        "c": Usage(useful=1, ratings=1, last_rating=5.0),
    }
    assert store.usage([]) == {}


def test_usage_of_many_keys(store):
    keys = [f"k{i}" for i in range(1234)]
    store.log_retrievals(keys, "recall", at=1.0)
    got = store.usage(keys)
    assert len(got) == 1234 and all(u.count == 1 for u in got.values())


def test_data_survives_reopening(tmp_path):
    s = UsageStore(tmp_path / "usage.db")
    s.log_retrievals(["a"], "recall", at=1.0)
    s.rate("a", True, at=2.0)
    s.close()
    s = UsageStore(tmp_path / "usage.db")
    assert s.usage(["a"])["a"] == Usage(count=1, last_access=1.0, useful=1, ratings=1, last_rating=2.0)
    s.close()


def test_gaps_are_grouped_and_most_frequent_first(store, clock):
    store.add_gap("Deploy rollback steps")  # 1000
    store.add_gap("How to rotate the Stripe secret", "stripe secret")  # 1001
    store.add_gap("  how to ROTATE the stripe   secret ", "stripe secret")  # 1002: same gap, same query
    store.add_gap("Where are the backups?")  # 1003
    store.add_gap("how to rotate the stripe secret", "rotate webhook key")  # 1004
    store.add_gap("deploy rollback steps")  # 1005
    gaps = store.gaps()
    assert [(g["text"], g["count"]) for g in gaps] == [
        ("How to rotate the Stripe secret", 3),
        ("Deploy rollback steps", 2),  # ties: the most recently reported first
        ("Where are the backups?", 1),
    ]  # fmt: skip
    assert gaps[0]["queries"] == ["stripe secret", "rotate webhook key"] and gaps[0]["last"] == 1004.0
    assert gaps[1]["queries"] == [] and gaps[2]["count"] == 1


def test_gap_ties_by_recency(store, clock):
    store.add_gap("first")
    store.add_gap("second")
    assert [g["text"] for g in store.gaps()] == ["second", "first"]


def test_dump_and_load_merge_without_duplicates(store, tmp_path, clock):
    store.log_retrievals(["a", "b"], "recall", at=1.0)
    store.rate("a", False, "agent", at=2.0)
    store.add_gap("a gap", "q")
    data = store.dump()
    assert data == {"retrievals": [["a", 1.0, "recall"], ["b", 1.0, "recall"]],
                    "ratings": [["a", 0, 2.0, "agent"]], "gaps": [["a gap", "q", 1000.0, None]], "counts": []}  # fmt: skip
    other = UsageStore(tmp_path / "other.db")
    assert other.load(json.loads(json.dumps(data))) == 4
    assert other.dump() == data
    assert other.load(data) == 0 and other.dump() == data  # again: nothing doubled
    assert other.load({"retrievals": [["c", 3.0, "wake"], ["bad row"]], "ratings": None}) == 1
    assert other.usage(["c"])["c"].count == 1
    other.close()


# ------------------------------------------------------------------ through the vault


@pytest.fixture
def vault(empty_vault, open_vault):
    write(
        empty_vault,
        "facts/Alpha.md",
        "---\nid: alpha001\ntype: fact\n---\n# Alpha\n\nPostgres advisory locks lease jobs.\n",
    )
    write(
        empty_vault,
        "facts/Beta.md",
        "---\nid: beta0001\ntype: fact\n---\n# Beta\n\nRedis keys expire. See [[Alpha]].\n",
    )
    write(
        empty_vault, "lessons/Gamma.md", "# Gamma\n\nAlways run migrations against a snapshot.\n"
    )  # no id: key is the path
    return open_vault(empty_vault)


KEYS = ["alpha001", "beta0001", "lessons/Gamma.md"]


def counts(v: Vault) -> dict[str, int]:
    return {k: u.count for k, u in v.usage.usage(KEYS).items()}


def test_recall_logs_what_it_returned(vault):
    hits = vault.recall("advisory locks", k=2)
    assert counts(vault) == {h.id: 1 for h in hits} and len(hits) == 2
    vault.recall("advisory locks", k=2, log=False)
    assert counts(vault) == {h.id: 1 for h in hits}
    vault.recall("advisory locks", k=2)
    assert counts(vault) == {h.id: 2 for h in hits}
    assert {row[2] for row in vault.usage.dump()["retrievals"]} == {"recall"}


def test_rate_by_id_title_or_path(vault):
    done = vault.rate([("alpha001", True), ("Beta", False), ("lessons/Gamma.md", True)], source="agent-1")
    assert done["unknown"] == []
    assert done["rated"] == [{"id": "alpha001", "title": "Alpha", "useful": True},
                    {"id": "beta0001", "title": "Beta", "useful": False},
                    {"id": "lessons/Gamma.md", "title": "Gamma", "useful": True}]  # fmt: skip
    got = vault.usage.usage(KEYS)
    assert (got["alpha001"].useful, got["beta0001"].useful, got["lessons/Gamma.md"].ratings) == (1, 0, 1)
    assert {r[3] for r in vault.usage.dump()["ratings"]} == {"agent-1"}


def test_an_unknown_memory_is_named_and_the_known_ones_are_rated(vault):
    done = vault.rate([("alpha001", True), ("nosuch99", True)])
    assert [r["id"] for r in done["rated"]] == ["alpha001"]
    assert [u["id"] for u in done["unknown"]] == ["nosuch99"] and "nosuch99" in done["unknown"][0]["error"]
    assert [r[0] for r in vault.usage.dump()["ratings"]] == ["alpha001"]


def test_gaps_through_the_vault(vault):
    vault.gap("How do we rotate keys?", query="rotate keys", source="agent")
    vault.gap("how do we rotate keys?")
    assert [(g["text"], g["count"], g["queries"]) for g in vault.gaps()] == [
        ("How do we rotate keys?", 2, ["rotate keys"])
    ]
    with pytest.raises(BadInput):
        vault.gap("   ")
    assert len(vault.usage.dump()["gaps"]) == 2


def test_export_carries_usage_and_import_restores_it(vault, tmp_path, fake_embedder):
    vault.recall("advisory locks", k=2)
    vault.rate([("alpha001", True), ("beta0001", False)])
    vault.gap("backups?", "where are backups")
    data = json.loads(json.dumps(vault.export()))
    assert data["usage"] == vault.usage.dump() and len(data["usage"]["retrievals"]) == 2

    from vaultmem.core.scaffold import init_vault

    init_vault(tmp_path / "restored")
    other = Vault(tmp_path / "restored", embedder=fake_embedder)
    result = other.import_(data)
    assert data["usage"][
        "counts"
    ]  # the daily counts by type and status come along (a restore keeps the history)
    assert result["imported"] == 3 and result["usage_rows"] == 5 + len(data["usage"]["counts"])
    assert other.usage.dump() == vault.usage.dump()
    assert other.usage.usage(KEYS) == vault.usage.usage(KEYS)
    assert other.gaps() == vault.gaps()
    again = other.import_(data)
    assert (again["imported"], again["usage_rows"]) == (0, 0) and other.usage.dump() == vault.usage.dump()
    other.close()


def test_reading_never_changes_a_note(demo_copy, fake_embedder):
    v = Vault(demo_copy, embedder=fake_embedder)

    def files() -> dict[str, tuple[bytes, int]]:
        return {p.relative_to(demo_copy).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns) for p in demo_copy.rglob("*")
                if p.is_file() and not {".vaultmem", ".vaultmem-usage"} & set(p.relative_to(demo_copy).parts)}  # fmt: skip

    before = files()
    hits = v.recall("why advisory locks for job leasing?", k=10)
    v.recall("stripe webhook", k=10, include_resolved=True, anchor="Project: Tidewater")
    v.rate([(h.id, True) for h in hits[:3]])
    v.gap("nothing on backups")
    for h in hits:
        v.show(h.id)
    v.list_notes(limit=None)
    v.stats()
    v.export()
    v.gaps()
    v.maintain()  # the plan only
    assert files() == before
    assert sum(u.count for u in v.usage.usage([h.id for h in hits]).values()) >= 10
    v.close()


# ------------------------------------------------------------------ CLI


@pytest.fixture
def run(vault, fake_model):
    def invoke(*args: str, root: Path | None = None, input: str | None = None):
        return CliRunner().invoke(
            app, list(args), input=input, env={"VAULTMEM_VAULT": str(root or vault.root)}
        )

    return invoke


def test_cli_rate(run, vault, tmp_path):
    assert run("rate", "alpha001", "useful").stdout == "rated useful: alpha001  Alpha\n"
    assert run("rate", "Beta", "not-useful").stdout == "rated not useful: beta0001  Beta\n"
    batch = tmp_path / "ratings.json"
    batch.write_text(
        json.dumps([{"id": "alpha001", "useful": True}, {"id": "lessons/Gamma.md", "useful": False}])
    )
    data = json.loads(run("rate", "--batch", str(batch), "--json").stdout)
    assert [(d["id"], d["useful"]) for d in data["rated"]] == [
        ("alpha001", True),
        ("lessons/Gamma.md", False),
    ]
    assert data["unknown"] == []
    assert run("rate", "--batch", "-", input=json.dumps([{"id": "beta0001", "useful": True}])).exit_code == 0
    got = vault.usage.usage(KEYS)
    assert (
        got["alpha001"].useful,
        got["alpha001"].ratings,
        got["beta0001"].ratings,
        got["lessons/Gamma.md"].useful,
    ) == (2, 2, 2, 0)


@pytest.mark.parametrize(
    "args, code",
    [(("rate", "nosuch99", "useful"), 3), (("rate", "alpha001", "maybe"), 2), (("rate", "alpha001"), 2),
     (("rate",), 2), (("gap", " "), 2)],
)  # fmt: skip
def test_cli_usage_errors_record_nothing(run, vault, args, code):
    failed(run(*args), code)
    assert vault.usage.dump() == {"retrievals": [], "ratings": [], "gaps": [], "counts": []}


def test_cli_bad_batch(run, vault, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"id": "alpha001", "useful": "yes"}]')
    assert "--batch" in failed(run("rate", "--batch", str(bad)), 2)
    assert vault.usage.dump()["ratings"] == []


def test_cli_batch_rates_the_known_ones_and_names_the_unknown(run, vault, tmp_path):
    batch = tmp_path / "ratings.json"
    batch.write_text('[{"id": "alpha001", "useful": true}, {"id": "nosuch99", "useful": true}]')
    result = run("rate", "--batch", str(batch))
    assert "nosuch99" in failed(result, 3)  # one line naming it; before: every rating was rejected
    assert result.stdout == "rated useful: alpha001  Alpha\n"
    assert [r[0] for r in vault.usage.dump()["ratings"]] == ["alpha001"]


def test_cli_gap_and_gaps(run):
    assert run("gaps").stdout == "no gaps reported\n"
    assert run("gap", "How to rotate the webhook secret", "--query", "rotate secret").stdout == "recorded\n"
    run("gap", "how to rotate the webhook secret")
    run("gap", "Backups")
    assert (
        run("gaps").stdout
        == "  2x  How to rotate the webhook secret  (queries: rotate secret)\n  1x  Backups\n"
    )
    assert [g["count"] for g in json.loads(run("gaps", "--json").stdout)] == [2, 1]


def test_cli_recall_logs_and_export_import_round_trip(run, vault, tmp_path):
    hits = json.loads(run("recall", "advisory locks", "-k", "2", "--json").stdout)["results"]
    assert counts(vault) == {h["id"]: 1 for h in hits}
    run("rate", "alpha001", "useful")
    exported = run("export").stdout
    assert json.loads(exported)["usage"] == vault.usage.dump()
    dump = tmp_path / "backup.json"
    dump.write_text(exported)
    from vaultmem.core.scaffold import init_vault

    init_vault(tmp_path / "restored")
    assert run("import", str(dump), root=tmp_path / "restored").exit_code == 0
    run("import", str(dump), root=tmp_path / "restored")  # again: nothing doubled
    with Vault(tmp_path / "restored", embedder=vault.embedder) as restored:
        assert restored.usage.dump() == vault.usage.dump()


# ------------------------------------------------------------------ counts over time


def test_count_snapshots_once_a_day_first_one_stays(store):
    assert store.count_history() == []
    assert store.snapshot_counts("2026-11-20", {("fact", "active"): 3, ("rule", "candidate"): 1})
    assert not store.snapshot_counts("2026-11-20", {("fact", "active"): 9})  # the day has its row set
    assert store.snapshot_counts("2026-11-22", {("fact", "active"): 4})
    assert store.snapshot_counts("2026-11-21", {})  # an empty vault is a snapshot too
    assert store.count_history() == [
        ("2026-11-20", {("fact", "active"): 3, ("rule", "candidate"): 1}),
        ("2026-11-21", {}),
        ("2026-11-22", {("fact", "active"): 4}),
    ]
    assert [d for d, _ in store.count_history(days=2)] == ["2026-11-21", "2026-11-22"]
    again = UsageStore(store.path)  # durable, and carried by dump/load
    assert again.count_history()[-1] == ("2026-11-22", {("fact", "active"): 4})
    other = UsageStore(store.path.parent / "other.db")
    assert other.load(store.dump()) == 4 and other.load(store.dump()) == 0
    assert other.count_history() == store.count_history()
    again.close(), other.close()


def test_reconcile_snapshots_counts_by_type_and_status(demo, monkeypatch):
    demo.reindex()
    ((day, counts),) = demo.count_history()
    assert sum(counts.values()) == 68 and counts[("decision", "superseded")] >= 1
    rec = demo.records()
    want: dict = {}
    for r in rec.values():
        want[(r.type or "note", r.status)] = want.get((r.type or "note", r.status), 0) + 1
    assert counts == want
    demo.resolve("Use Postgres advisory locks for job leasing")
    demo.reindex()
    assert demo.count_history() == [(day, counts)]  # still the day's first row set
    assert demo.snapshot_counts("2099-01-01")
    later = dict(demo.count_history())["2099-01-01"]
    assert later[("decision", "resolved")] == counts.get(("decision", "resolved"), 0) + 1


# ------------------------------------------------------------------ a durable sidecar


def test_deleting_the_state_folder_keeps_ratings_and_gaps(run, vault, tmp_path):
    """``.vaultmem/`` is disposable: delete it, index again, and usage data is still there
    (before, usage.db lived inside it and ratings were lost)."""
    import shutil

    run("rate", "alpha001", "useful")
    run("gap", "how to rotate the webhook secret")
    before = vault.usage.dump()
    vault.close()
    assert (vault.root / ".vaultmem-usage" / "usage.db").is_file()
    shutil.rmtree(vault.root / ".vaultmem")
    assert run("index").exit_code == 0
    after = json.loads(run("export").stdout)["usage"]
    assert before["ratings"] and {k: after[k] for k in ("ratings", "gaps", "retrievals")} == {
        k: before[k] for k in ("ratings", "gaps", "retrievals")
    }  # (index takes today's counts)
    assert json.loads(run("gaps", "--json").stdout)[0]["text"] == "how to rotate the webhook secret"


def test_a_usage_store_in_its_old_place_is_moved_on_open(vault):
    old = vault.root / ".vaultmem" / "usage.db"
    vault.usage.rate("alpha001", True, "agent-z")
    vault.usage.log_retrievals(["beta0001"], "recall")
    before = vault.usage.dump()
    vault.close()
    new = vault.root / ".vaultmem-usage" / "usage.db"
    new.rename(old)  # as an older vaultmem kept it
    assert not new.exists()
    with Vault(vault.root, embedder=vault.embedder) as again:
        assert again.usage.dump() == before
        assert again.usage.path == new and not old.exists()
        assert (
            oct(new.stat().st_mode & 0o777) == "0o600" and oct(new.parent.stat().st_mode & 0o777) == "0o700"
        )


def test_the_usage_store_keeps_itself_out_of_git(tmp_path):
    from vaultmem.core.scaffold import init_vault
    from vaultmem.index.usage import UsageStore

    (tmp_path / "v").mkdir()
    (tmp_path / "v" / ".gitignore").write_text("*.tmp\n.vaultmem/\n")
    init_vault(tmp_path / "v")
    UsageStore.of(tmp_path / "v").close()
    assert (tmp_path / "v" / ".gitignore").read_text() == "*.tmp\n.vaultmem/\n"
    assert (tmp_path / "v" / ".vaultmem-usage" / ".gitignore").read_text() == "*\n"
