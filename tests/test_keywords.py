"""The answer given while the memory service warms up (``recall.keywords``): BM25 over the
indexes as they are, with the pipeline's numbers and filters, without numpy, networkx or the
model, and without ever writing."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import write as note

from vaultmem.core.note import parse, set_fields
from vaultmem.index.bm25 import BM25Index
from vaultmem.recall import keywords
from vaultmem.recall.params import PARAMS

QUERIES = ["advisory locks job lease", "how are refunds rounded?", "pgbouncer broke", "deploy the api",
           "pilot customer", "postgres", "D1:3 follows", "nothing-matches-this-word"]  # fmt: skip


def both(vault, query: str) -> tuple[dict[str, float], dict[str, float]]:
    universe, index = vault.universe()
    numpy_scores = vault.bm25.score_all(query, index, len(universe))
    full = {universe[i]: float(s) for i, s in enumerate(numpy_scores) if s > 0}
    return BM25Index(vault.index_dir / "bm25").matches(query), full


def _split(hit: dict) -> tuple[dict, dict]:
    """A hit's fields and --explain parts: (the exact ones, the floats)."""
    flat = {
        **{k: v for k, v in hit.items() if k != "explain"},
        **{f"explain.{k}": v for k, v in hit["explain"].items()},
    }
    return ({k: v for k, v in flat.items() if not isinstance(v, float)},
            {k: v for k, v in flat.items() if isinstance(v, float)})  # fmt: skip


def same_answer(vault, query: str, **options) -> list[dict]:
    """The keyword answer is the pipeline's BM25 mode hit for hit: every field and --explain
    part equal (the numbers to 1e-3 after rounding: BM25's statistics are summed in another
    order); returns it."""
    light = keywords.recall(vault.root, query, options, explain=True)
    full = [h.as_dict(explain=True) for h in vault.recall(query, mode="bm25", log=False, **options)]
    assert [_split(h)[0] for h in light] == [_split(h)[0] for h in full], query
    for mine, theirs in zip(light, full):
        assert _split(mine)[1] == pytest.approx(_split(theirs)[1], abs=1e-3), (query, mine["path"])
    return light


def test_keyword_scores_are_the_pipelines_bm25_numbers_on_an_incrementally_updated_index(demo):
    demo.sync()
    # several segments, deleted documents not merged away, a property field: live statistics only
    for i in range(3):
        note(
            demo.root,
            f"facts/Lease note {i}.md",
            f"---\nfollows: D1:{i}\n---\n# Lease note {i}\n\nadvisory locks lease {i}\n",
        )
        demo.sync()
    (demo.root / "facts/Lease note 1.md").unlink()
    path = next(p for p in demo.records() if "advisory" in (demo.root / p).read_text().lower())
    text = (demo.root / path).read_text()
    (demo.root / path).write_text(text + "\nMore about pgbouncer and the api deploy.\n")
    demo.sync()
    assert len(demo.bm25._fresh_searcher().reader().leaf_readers()) > 1
    for query in QUERIES:
        light, full = both(demo, query)
        assert set(light) == set(full), query
        assert all(light[p] == pytest.approx(full[p], rel=1e-12) for p in light), query


def test_it_ranks_by_score_and_hides_what_recall_hides(demo):
    demo.sync()
    hits = keywords.recall(demo.root, "advisory locks for job leasing", {"k": 5}, explain=True)
    scores = [h["score"] for h in hits]
    assert hits and scores == sorted(scores, reverse=True) and hits[0]["explain"]["bm25_raw"] > 0
    assert all(h["status"] not in ("superseded", "archived", "resolved") for h in hits)
    every = keywords.recall(demo.root, "advisory locks for job leasing", {"k": 50, "include_resolved": True})
    assert any(h["status"] == "superseded" for h in every)  # the superseded Redis decision matches too
    decisions = keywords.recall(demo.root, "advisory locks for job leasing", {"k": 50, "types": ["decision"]})
    assert decisions and {h["type"] for h in decisions} == {"decision"}
    assert hits[0]["snippet"] and hits[0]["highlights"]


PEOPLE = ("Mara", "Ivo")
TOPICS = [  # session -> what its turns talk about (each turn names a little of it)
    ["pottery class downtown", "glaze colours for the bowls", "kiln firing on friday", "the teacher Ruth"],
    ["hiking trip to the lakes", "tent and stove", "rain on the second day", "a heron by the water"],
    ["adopting a rescue dog", "the shelter visit", "dog named Biscuit", "puppy training classes"],
]
LINKED_QUERIES = ["When did Mara go to the pottery class?", "What did Ivo see by the water?",
                  "What is the dog called?", "kiln", "Who taught the class?", "shelter Biscuit training",
                  "What happened on the hiking trip?", "rain tent"]  # fmt: skip


def write_linked_conversation(root) -> None:
    """LoCoMo's linked shape: a note per session, a note per turn linking its session and the
    turn before it (``benchmarks/locomo.py``)."""
    for n, topics in enumerate(TOPICS, 1):
        note(root, f"S{n}.md", f'---\nid: "S{n}"\ntitle: "Session {n}"\n---\nSession {n} of Mara and Ivo.\n')
        previous = None
        for t, topic in enumerate(topics * 2, 1):
            meta = f'id: "D{n}:{t}"\nsession: "[[S{n}]]"\n' + (
                f'follows: "[[{previous}]]"\n' if previous else ""
            )
            words = topic if t <= len(topics) else "yes, and then we talked more"
            note(root, f"D{n}-{t}.md", f"---\n{meta}---\n{PEOPLE[t % 2]}: {words}.\n")
            previous = f"D{n}-{t}"


def test_on_linked_notes_it_ranks_as_the_pipelines_bm25_mode(empty_vault, open_vault):
    """The link graph from the manifest: neighbour context and the strongest hits' expansion,
    the pipeline's numbers (issue 37: the warm-up answer ranked by BM25 alone, 4 points of
    R@3 below the pipeline's BM25 mode on linked LoCoMo)."""
    write_linked_conversation(empty_vault)
    vault = open_vault(empty_vault)
    vault.sync()
    differs = 0
    for query in LINKED_QUERIES:
        light = same_answer(vault, query, k=8)
        by_raw = sorted(light, key=lambda h: (-h["explain"]["bm25_raw"], h["path"]))
        differs += [h["path"] for h in light] != [h["path"] for h in by_raw]
    assert differs  # the links changed some ranking: BM25 alone would not have passed


def test_usefulness_ratings_rank_as_in_the_pipeline(demo):
    demo.sync()
    query = "advisory locks for job leasing"
    hits = keywords.recall(demo.root, query, {"k": 10})
    for _ in range(3):  # the back half useful, the front half not
        demo.rate([(hit["id"], rank >= 5) for rank, hit in enumerate(hits)])
    light = [h["path"] for h in same_answer(demo, query, k=10)]
    assert light != [h["path"] for h in hits]  # the ratings moved something


def test_it_answers_as_the_pipelines_bm25_mode_for_plain_notes(demo):
    """With nothing the pipeline adds on top (no links, profiles or usage to tell apart), the
    keyword answer is the pipeline's BM25 answer."""
    for i, words in enumerate(["harbour crane lease", "harbour crane", "harbour", "crane pier lease lease"]):
        note(demo.root, f"facts/Plain {i}.md", f"# Plain {i}\n\n{words} tidepool\n")
    demo.sync()
    light = [h["path"] for h in keywords.recall(demo.root, "tidepool harbour crane lease", {"k": 4})]
    full = [
        h.path
        for h in demo.recall("tidepool harbour crane lease", k=4, mode="bm25", adaptive=False, log=False)
    ]
    assert light == full


def test_it_never_writes_and_answers_nothing_from_an_index_it_may_not_read(demo, tmp_path):
    assert keywords.recall(tmp_path, "anything", {}) == []  # never indexed: no folder is made
    assert not (tmp_path / ".vaultmem").exists()
    demo.sync()
    folder = demo.index_dir / "bm25"
    (folder / "_MAIN_999.toc").write_bytes(b"planted by a sync")
    assert keywords.recall(demo.root, "advisory locks", {}) == []
    assert (folder / "_MAIN_999.toc").exists() and not folder.with_name(
        "bm25.foreign"
    ).exists()  # left for the service
    (folder / "_MAIN_999.toc").unlink()
    assert keywords.recall(demo.root, "advisory locks", {})
    demo.manifest.set("index_version", "m0.b0.file")  # an older index: the service rebuilds it
    assert keywords.recall(demo.root, "advisory locks", {}) == []


def test_it_covers_plain_calls_and_leaves_the_rest_to_the_pipeline():
    assert keywords.covers({"k": 3, "log": False})
    assert keywords.covers({p.name: p.default for p in PARAMS})  # the CLI passes every option
    assert keywords.covers({"types": ["decision"], "since": "7d", "mode": "bm25"})
    assert not keywords.covers({"anchor": "Project: Tidewater"})
    assert not keywords.covers({"profile": "incident"})
    assert not keywords.covers({"mode": "vector"})
    assert not keywords.covers({"as_of": "2026-09-01"})


def test_a_superseded_note_is_not_shown_even_when_it_matches_best(demo):
    demo.sync()
    path = "facts/Old lease rule.md"
    note(demo.root, path, "# Old lease rule\n\ntidepool tidepool tidepool lease rule\n")
    note(demo.root, "facts/New lease rule.md", "# New lease rule\n\ntidepool lease rule\n")
    demo.sync()
    assert keywords.recall(demo.root, "tidepool", {})[0]["path"] == path
    text = set_fields((demo.root / path).read_text(), {"status": "superseded"})
    (demo.root / path).write_text(text)
    assert parse(text, path).status == "superseded"
    demo.sync()
    assert [h["path"] for h in keywords.recall(demo.root, "tidepool", {})] == ["facts/New lease rule.md"]


@pytest.mark.integration  # Python in a subprocess
def test_importing_it_loads_neither_numpy_nor_networkx_nor_the_model():
    code = ("import sys, vaultmem.recall.keywords, vaultmem.api; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'networkx', 'fastembed', 'onnxruntime')"
            " or m in ('vaultmem.vault', 'vaultmem.recall.pipeline')))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_several_vaults_answer_in_one_ranking_with_their_names(demo, open_vault, empty_vault):
    """BM25 standardised with the moments pooled over every vault, as ``MultiVault`` ranks."""
    from vaultmem.multi import MultiVault

    for i in range(3):
        note(
            empty_vault,
            f"facts/Tidepool lease {i}.md",
            f"# Tidepool lease {i}\n\ntidepool advisory lease {i}\n",
        )
    for i in range(12):
        note(empty_vault, f"facts/Filler {i}.md", f"# Filler {i}\n\nharbour crane number {i}\n")
    other = open_vault(empty_vault)
    other.sync()
    demo.sync()
    query, roots = "tidepool advisory locks", {"demo": demo.root, "other": other.root}
    full = MultiVault({"demo": demo, "other": other}).recall(query, k=12, mode="bm25", log=False)
    kept = keywords.recall_vaults(roots, query, {"k": 12})
    assert [(name, h["path"]) for name, h in kept] == [(h.vault, h.path) for h in full]
    assert {name for name, _ in kept} == {"demo", "other"}
    assert [h["rank"] for _, h in kept] == list(range(1, 13)) and all(h["vault"] == n for n, h in kept)
    assert kept[0][1]["score"] == 1.0
    alone = keywords.recall_vaults({"demo": demo.root}, "advisory locks", {"k": 2})
    assert len(alone) == 2 and all(h["vault"] is None for _, h in alone)


DEMO_QUERIES = [*QUERIES, "stripe webhook retries", "celery redis", "job leasing", "the marina booking",
                "mobile app", "how do we deploy?", "advisory locks for job leasing"]  # fmt: skip


def test_it_answers_as_the_pipelines_bm25_mode_hit_for_hit(demo):
    """Every field of every hit and every --explain part: links, lifecycle, usage parts, the
    below-average note's ``via``, filters (issue 44: one ranking, two readers)."""
    demo.sync()
    for query in DEMO_QUERIES:
        same_answer(demo, query, k=40)
        same_answer(demo, query, k=40, include_resolved=True)
    same_answer(demo, "job leasing locks", k=10, types=["decision"])
    same_answer(demo, "job leasing locks", k=10, tags=["jobs"], scope="project")


def test_a_superseded_note_hands_its_score_down_a_chain_of_replacements(demo):
    """``superseded_by`` resolves over the whole vault, not only the notes whose links the
    query read: the keyword answer lost the redirect when a replacement was itself replaced
    by a note sharing no word with the query."""
    note(demo.root, "facts/Old harbour rule.md", '---\nstatus: superseded\nsuperseded_by: "[[Harbour rule v2]]"\n'
         "---\n# Old harbour rule\n\ntidepool tidepool harbour rule\n")  # fmt: skip
    note(demo.root, "facts/Harbour rule v2.md", '---\nstatus: superseded\nsuperseded_by: "[[Quay fees]]"\n---\n'
         "# Harbour rule v2\n\nThe second rule.\n")  # fmt: skip
    note(demo.root, "facts/Quay fees.md", "# Quay fees\n\nThe pier charges by the metre.\n")
    demo.sync()
    hits = same_answer(demo, "tidepool", k=5)
    assert [(h["path"], h["via"]) for h in hits] == [
        ("facts/Quay fees.md", "supersedes facts/Old harbour rule.md")
    ]


def test_a_filter_on_the_shown_notes_runs_before_the_top_k(demo):
    """``shown`` (another code branch's memories left out) is tested where the ranking is, so
    the answer still brings k hits, as ``Vault.recall`` does."""
    demo.sync()
    every = [h["path"] for h in keywords.recall(demo.root, "job leasing", {"k": 6})]
    hidden = set(every[:2])
    shown = lambda root, path: root == demo.root and path not in hidden
    light = keywords.recall(demo.root, "job leasing", {"k": 4, "shown": shown})
    assert [h["path"] for h in light] == every[2:6]
    full = demo.recall("job leasing", k=4, mode="bm25", log=False, shown=shown)
    assert [h["path"] for h in light] == [h.path for h in full]
    assert keywords.covers({"k": 4, "shown": shown})


def test_it_shows_what_may_update_a_hit_and_leaves_out_a_hidden_notes_context(demo):
    """A hit another note names as a possible update says so (``outdated_by``); context from a
    resolved note is no evidence (the pipeline's rule)."""
    note(demo.root, "facts/Tide table.md", "# Tide table\n\ntidepool tides at the quay\n")
    note(
        demo.root,
        "facts/New tide table.md",
        '---\nmay_update: "[[Tide table]]"\n---\n# New tide table\n\nquay\n',
    )
    note(
        demo.root,
        "facts/Solved kelp.md",
        "---\nstatus: resolved\n---\n# Solved kelp\n\nkelpie kelpie kelpie\n",
    )
    note(demo.root, "facts/Kelp notes.md", "# Kelp notes\n\nSee [[Solved kelp]] and [[Tide table]].\n")
    demo.sync()
    hits = same_answer(demo, "tidepool", k=5)
    assert hits[0]["path"] == "facts/Tide table.md" and hits[0]["outdated_by"] == ["New tide table"]
    for query in ("kelpie", "kelpie tidepool", "kelpie quay"):
        same_answer(demo, query, k=10)


def test_a_note_linked_with_a_match_passes_the_relevance_floor(demo):
    """Without vectors the relevance floor (issue 47, ``floor.py``) takes a keyword in common, or
    a lift from a linked note that has one (its key among the ranking's sources): a note that
    shares no word with the query but links with a match stays a hit in both readers."""
    note(demo.root, "decisions/Kelpie pens.md", "---\ntype: decision\n---\n# Kelpie pens\n\n"
         "kelpie kelpie pens, see [[Pen gates]]\n")  # fmt: skip
    note(demo.root, "facts/Pen gates.md", "---\ntype: fact\n---\n# Pen gates\n\nThe gates open inward.\n")
    demo.sync()
    hits = same_answer(demo, "kelpie", k=5)
    assert [h["path"] for h in hits] == ["decisions/Kelpie pens.md", "facts/Pen gates.md"]
    assert hits[1]["via"] == "linked from decisions/Kelpie pens.md" and hits[1]["explain"]["bm25_raw"] == 0


def test_a_hit_below_the_average_note_is_shown_at_zero(empty_vault, open_vault):
    """A note with a keyword in common and little else scores below the vault's average: it is
    listed last at 0 and says why, never with a negative score (issue 47), in both readers."""
    for i in range(5):
        note(empty_vault, f"Tide {i}.md", f"# Tide {i}\n\ntidepool tidepool tidepool\n")
    note(empty_vault, "Long log.md", "# Long log\n\n" + "harbour crane pier quay lease " * 40 + "tidepool\n")
    vault = open_vault(empty_vault)
    vault.sync()
    hits = same_answer(vault, "tidepool", k=10)
    assert hits[-1]["path"] == "Long log.md" and hits[-1]["score"] == 0.0
    assert hits[-1]["via"].startswith("a keyword in common") and all(h["score"] >= 0 for h in hits)
