"""vaultmem on real Obsidian vaults (issue 27) -> results/obsidian.json.

The vaults are public repositories checked out outside this repository (their commits are in
VAULTS below and in the result); each part works on a private copy under benchmarks/.work/.

Parts (``--parts``, comma-separated; all by default):

* ``links``: agreement of vaultmem's link graph with the reference resolver
  (tests/obsidian_ref.py, Obsidian's rules): every resolved link and every unresolved target.
* ``index``: first index of the 13k-note vault without vectors (BM25, manifest, graph: time and
  peak memory of ``vaultmem index`` in a subprocess), its chunk count, and the measured embedding
  rate of the default model on a sample of its chunks (embedding all of them on 2 shared cores
  takes hours: the rate gives the projection).
* ``resume``: ``vaultmem index`` of the help vault with the real model, killed (SIGKILL) midway,
  run again: how much the second run embedded, and whether the result equals a fresh index.
* ``chunking``: ``chunking.chunk`` time against the length of one paragraph, for this code and
  (``--before DIR``: a checkout of the code before) the old code.
* ``scifact``: whether this code and ``--before`` index exactly the same text of every SciFact
  note (titles, embedded chunks, BM25 words of every field) and give every note the same BM25
  score for every SciFact query (train and test): then SciFact recall cannot differ.
* ``doctor``: ``vaultmem doctor --json`` on the 13k-note vault, this code and ``--before``.
* ``recall``: a labelled question set of our own over kepano's vault (hybrid, the real model)
  and name searches over the zettelkasten (BM25), MRR and hits@1, this code and ``--before``.
* ``help``: 10 how-to questions of our own over the help vault (``HELP_QUESTIONS``: hybrid with
  the real model, and BM25 only), MRR@10 and hits@1, this code and ``--before`` (not in the default
  parts: issue 37).

Run with ``nice``; the machine is shared. Example:
    nice python benchmarks/obsidian_bench.py --before /tmp/base
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path += [str(HERE.parent), str(HERE.parent / "tests")]  # vaultmem (PYTHONPATH first), obsidian_agree


from common import DATA, WORK, fresh_copy, own_home, parser, write_result  # noqa: E402

EXT = Path(os.environ.get("VAULTMEM_EXTVAULTS", "/work/extvaults"))
VAULTS = {  # name -> (vault root, repository, commit)
    "obsidian-help": (EXT / "obsidian-help" / "en", "obsidianmd/obsidian-help", "fa179e91e86eaff5859226cc045c81000d64e3cd"),
    "kepano-obsidian": (EXT / "kepano-obsidian", "kepano/kepano-obsidian", "473697347a0eaac790a6596229c741b3915f3b77"),
    "zettelkasten": (EXT / "digitalyoshixi-zettelkasten" / "content", "digitalyoshixi/zettelkasten",
                     "cb0abd7d1e4164b4b9dc04cd336a954497f246b6"),
}  # fmt: skip
OUT = WORK / "obsidian"

# kepano's vault: questions written for this benchmark, each with the one note that answers it
KEPANO_QUESTIONS = {
    "Which Kevin Kelly book is about emergence?": "References/Out of Control.md",
    "jazz album by Paul Chambers": "References/Bass on Top.md",
    "Ridley Scott science fiction movie with Harrison Ford": "References/Blade Runner.md",
    "dessert recipe with nectarines": "References/Brown butter nectarine tart.md",
    "shrine park in Kyoto": "References/Fushimi Inari.md",
    "open world game on the Nintendo Switch": "References/The Legend of Zelda Breath of the Wild.md",
    "E. M. Forster book about humanism": "References/The Machine Stops.md",
    "podcast episode with Kevin Kelly as guest": "References/Well Made 145 Kevin Kelly.md",
    "podcast hosted by Steph Ango": "References/Well Made.md",
    "sci-fi TV show": "References/Futurama.md",
    "BOTW": "References/The Legend of Zelda Breath of the Wild.md",
    "Kevin Kelly's advice on his 68th birthday": "Clippings/68 Bits of Unsolicited Advice.md",
    "meeting with Steph": "Notes/2023-09-12 Meeting with Steph.md",
    "trip to Japan in 2023": "Notes/2023 Japan Trip.md",
    "city in Japan": "References/Kyoto.md",
    "the company that makes the Obsidian app": "References/Obsidian.md",
    "board game we rated": "References/Catan.md",
}
# the help vault (issue 37): how-to questions written for this benchmark, each with the page a
# person would open as the answer (paths under en/)
HELP_QUESTIONS = {
    "how do I embed a file in a note": "Linking notes and files/Embed files.md",
    "how do I create an alias for a note": "Linking notes and files/Aliases.md",
    "how do I restore a deleted note from a snapshot": "Plugins/File recovery.md",
    "how do I change the keyboard shortcut of a command": "User interface/Hotkeys.md",
    "how do I add a callout box to a note": "Editing and formatting/Callouts.md",
    "how do I create a note for today's date": "Plugins/Daily notes.md",
    "how do I move my notes from Evernote": "Import notes/Import from Evernote.md",
    "how do I use my own domain for a Publish site": "Obsidian Publish/Custom domains.md",
    "how do I change the look with my own CSS": "Extending Obsidian/CSS snippets.md",
    "how do I insert a template into a note": "Plugins/Templates.md",
}
NAME_QUERIES = 25  # zettelkasten notes searched by their own file name


def copy_vault(name: str) -> Path:
    """A fresh private copy of a vault (vaultmem writes .vaultmem/ into a vault it opens)."""
    src = VAULTS[name][0]
    dest = OUT / name
    return fresh_copy(src, dest)


def available(name: str) -> bool:
    return VAULTS[name][0].is_dir()


def vaultmem_cmd(*args: str, code: Path | None = None, env: dict | None = None) -> tuple[list[str], dict]:
    """The vaultmem CLI of the code in ``code`` (run it with ``cwd=OUT``: ``python -m`` puts
    the working folder first on the import path)."""
    env = {**os.environ, **(env or {}), "PYTHONPATH": str(code or HERE.parent), "HF_HUB_OFFLINE": "1"}
    return [sys.executable, "-m", "vaultmem", *args], env


# ---------------------------------------------------------------------- links


def part_links() -> dict:
    from obsidian_agree import compare

    out = {}
    for name in VAULTS:
        if not available(name):
            continue
        root = copy_vault(name)
        started = time.perf_counter()
        result = compare(root)
        out[name] = {
            **{k: v for k, v in result.items() if not isinstance(v, list)},
            "disagree_vaultmem_only": len(result["only_vaultmem"]), "disagree_reference_only": len(result["only_reference"]),
            "examples": (result["only_vaultmem"] + result["only_reference"])[:10],
            "agreement": round(result["agree"] / max(result["reference_links"], 1), 6),
            "seconds": round(time.perf_counter() - started, 1),
        }  # fmt: skip
        print(f"links {name}: {out[name]['agree']}/{out[name]['reference_links']} agree", flush=True)
    return out


# ---------------------------------------------------------------------- index


def part_index(sample: int) -> dict:
    name = "zettelkasten"
    if not available(name):
        return {}
    root = copy_vault(name)
    (root / ".vaultmem.toml").write_text('[embedding]\nmodel = "none"\n')
    cmd, env = vaultmem_cmd("index", "--json", "--vault", str(root))
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=OUT)
    seconds = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    summary = json.loads(proc.stdout)
    progress_lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("vaultmem: indexing")]
    started = time.perf_counter()
    proc2 = subprocess.run(vaultmem_cmd("index", "--json", "--vault", str(root))[0], env=env, capture_output=True, text=True,
                           cwd=OUT)  # fmt: skip
    again = time.perf_counter() - started
    rate = embedding_rate(root, sample)
    out = {"vault": name, "notes_added": summary["added"], "errors": len(summary["errors"]),
           "first_index_seconds_no_vectors": round(seconds, 1), "peak_rss_mb": round(peak_kb / 1024, 1),
           "progress_lines_on_stderr": len(progress_lines), "second_index_seconds": round(again, 1),
           "second_index_added": json.loads(proc2.stdout)["added"], **rate}  # fmt: skip
    print(f"index: {out}", flush=True)
    return out


def embedding_rate(root: Path, sample: int) -> dict:
    """Chunks of every note (as the indexer makes them) and the default model's measured rate on
    ``sample`` of them, spread over the vault."""
    from vaultmem.index.embed import NoEmbedder, make_embedder
    from vaultmem.index.indexer import MAX_CHUNKS, capped, note_chunks
    from vaultmem.vault import Vault

    vault = Vault(root, embedder=NoEmbedder())
    texts = []
    for path in vault.store.list_paths():
        try:
            note = vault.store.read(path)
        except Exception:
            continue
        texts += capped(note_chunks(note, 256), MAX_CHUNKS)
    vault.close()
    step = max(1, len(texts) // sample)
    picked = texts[::step][:sample]
    embedder = make_embedder("sentence-transformers/all-MiniLM-L6-v2", 4)
    embedder.embed(picked[:4])  # loads the model
    started = time.perf_counter()
    embedder.embed(picked)
    seconds = time.perf_counter() - started
    per_s = len(picked) / seconds
    return {"chunks_total": len(texts), "rate_sample_chunks": len(picked), "chunks_per_second": round(per_s, 2),
            "projected_embedding_hours": round(len(texts) / per_s / 3600, 2)}  # fmt: skip


# ---------------------------------------------------------------------- resume


def part_resume(kill_at: float) -> dict:
    name = "obsidian-help"
    if not available(name):
        return {}
    root = copy_vault(name)
    fresh = copy_vault_to(name, OUT / "help-fresh")
    cmd, env = vaultmem_cmd("index", "--json", "--vault", str(root))
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=OUT)
    killed_at = None
    for line in proc.stderr:  # "vaultmem: indexing DONE/TOTAL (P%)"
        m = re.match(r"vaultmem: indexing (\d+)/(\d+)", line)
        if m and int(m.group(1)) >= kill_at * int(m.group(2)):
            proc.send_signal(signal.SIGKILL)
            killed_at = (int(m.group(1)), int(m.group(2)))
            break
    proc.wait()
    first = time.perf_counter() - started
    started = time.perf_counter()
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=OUT)
    resumed = json.loads(second.stdout)
    resume_s = time.perf_counter() - started
    started = time.perf_counter()
    full = json.loads(subprocess.run(vaultmem_cmd("index", "--json", "--vault", str(fresh))[0], env=env,
                                     capture_output=True, text=True, cwd=OUT).stdout)  # fmt: skip
    fresh_s = time.perf_counter() - started
    equal = index_state(root) == index_state(fresh)
    out = {"vault": name, "killed_at_chunks": killed_at, "killed_after_seconds": round(first, 1),
           "resumed_embedded_chunks": resumed["embedded_chunks"], "resumed_added_notes": resumed["added"],
           "resumed_seconds": round(resume_s, 1), "fresh_embedded_chunks": full["embedded_chunks"],
           "fresh_seconds": round(fresh_s, 1), "resumed_equals_fresh": equal}  # fmt: skip
    print(f"resume: {out}", flush=True)
    return out


def copy_vault_to(name: str, dest: Path) -> Path:
    return fresh_copy(VAULTS[name][0], dest)


def index_state(root: Path) -> tuple:
    """Notes (path, hash, title, links), chunk rows and vectors of a vault's manifest, BM25 docs."""
    import sqlite3

    from vaultmem.index.bm25 import BM25Index
    from vaultmem.index.layout import index_dir

    db = sqlite3.connect(f"file:{index_dir(root) / 'manifest.db'}?mode=ro", uri=True)
    notes = sorted(db.execute("SELECT path, hash, title, links FROM notes").fetchall())
    chunks = sorted(db.execute("SELECT path, n, chash FROM chunks").fetchall())
    vectors = sorted(db.execute("SELECT model, chash, vec FROM embeddings").fetchall())
    db.close()
    docs = sorted(BM25Index(index_dir(root) / "bm25").documents().items())
    return notes, chunks, vectors, docs


# ---------------------------------------------------------------------- chunking


CHUNK_SIZES_MB = (0.3, 0.6, 1.2, 2.4, 4.8)


FIXTURE = HERE.parent / "tests" / "fixtures" / "obsidian_vault"


def chunk_times(max_mb: float) -> dict:
    """Seconds of ``chunk`` on one paragraph (one sentence, no full stop) of each size."""
    from vaultmem.index.chunking import chunk

    out = {}
    for mb in CHUNK_SIZES_MB:
        if mb > max_mb:
            continue
        text = " ".join(["lorem"] * int(mb * 1_000_000 / 6))
        started = time.perf_counter()
        chunk("T", text)
        out[str(mb)] = round(time.perf_counter() - started, 3)
    return out


def part_chunking(before: Path | None, max_mb: float) -> dict:
    now = chunk_times(max_mb)
    top = max(now, key=float)
    out = {"paragraph_mb_to_seconds": now, f"ratio_{top}_to_0.3": round(now[top] / max(now["0.3"], 1e-6), 1)}
    if before:
        proc = subprocess.run([sys.executable, __file__, "--chunk-times", str(min(max_mb, 2.4))], capture_output=True,
                              text=True, env={**os.environ, "PYTHONPATH": str(before)})  # fmt: skip
        old = json.loads(proc.stdout)
        top = max(old, key=float)
        out["before_paragraph_mb_to_seconds"] = old
        out[f"before_ratio_{top}_to_0.3"] = round(old[top] / max(old["0.3"], 1e-6), 1)
    print(f"chunking: {out}", flush=True)
    return out


# ---------------------------------------------------------------------- recall


def name_queries(root: Path) -> dict[str, str]:
    """Zettelkasten notes whose first "# heading" is not their file name (the old title), spread
    over the vault: query = the file name, answer = the note."""
    heading = re.compile(r"^#[ \t]+(\S.*?)[ \t]*$", re.M)
    picked = []
    for path in sorted(
        p for p in root.rglob("*.md") if not any(x.startswith(".") for x in p.relative_to(root).parts)
    ):
        text = path.read_text(encoding="utf-8", errors="replace")
        m = heading.search(text)
        if m and m.group(1).strip().lower() != path.stem.lower() and len(path.stem) > 3:
            picked.append(path)
    step = max(1, len(picked) // NAME_QUERIES)
    return {p.stem: p.relative_to(root).as_posix() for p in picked[::step][:NAME_QUERIES]}


def score(vault, questions: dict[str, str], mode: str) -> dict:
    ranks = []
    for q, want in questions.items():
        paths = [h.path for h in vault.recall(q, k=10, mode=mode, log=False, snippets=False)]
        ranks.append(paths.index(want) + 1 if want in paths else None)
    n = len(ranks)
    return {"questions": n, "mrr@10": round(sum(1 / r for r in ranks if r) / n, 4),
            "hits@1": sum(1 for r in ranks if r == 1), "hits@10": sum(1 for r in ranks if r), "ranks": ranks}  # fmt: skip


def recall_scores(work: Path, props_weights: list[float]) -> dict:
    """MRR and hits@1 of this process's code (the parent picks the code by PYTHONPATH); on
    kepano also for each of ``props_weights`` (the BM25 weight of the property field)."""
    from vaultmem.index.embed import NoEmbedder
    from vaultmem.vault import Vault

    out = {}
    help_vault = work / "obsidian-help"
    if help_vault.is_dir():
        vault = Vault(help_vault)
        vault.reindex()
        out["help_hybrid"] = score(vault, HELP_QUESTIONS, "hybrid")
        out["help_bm25"] = score(vault, HELP_QUESTIONS, "bm25")
        vault.close()
    kepano = work / "kepano-obsidian"
    if kepano.is_dir():
        vault = Vault(kepano)
        vault.reindex()
        out["kepano_hybrid"] = score(vault, KEPANO_QUESTIONS, "hybrid")
        out["kepano_bm25"] = score(vault, KEPANO_QUESTIONS, "bm25")
        out.update(props_weight_scores(vault, props_weights))
        vault.close()
    zk = work / "zettelkasten"
    if zk.is_dir():
        (zk / ".vaultmem.toml").write_text('[embedding]\nmodel = "none"\n')
        vault = Vault(zk, embedder=NoEmbedder())
        vault.reindex()
        out["zettelkasten_names_bm25"] = score(
            vault, json.loads((work / "name_queries.json").read_text()), "bm25"
        )
        vault.close()
    return out


def props_weight_scores(vault, weights: list[float]) -> dict:
    """Kepano's questions with each BM25 weight of the property field (how it was chosen)."""
    if not weights:
        return {}
    from vaultmem.index import bm25

    kept, out = dict(bm25.FIELDS), {}
    for w in weights:
        bm25.FIELDS["props"] = w
        out.update(
            {f"kepano_{m}_props_weight_{w:g}": score(vault, KEPANO_QUESTIONS, m) for m in ("hybrid", "bm25")}
        )
    bm25.FIELDS.update(kept)
    return out


def part_recall(
    before: Path | None, props_weights: list[float], names: tuple = ("kepano-obsidian", "zettelkasten")
) -> dict:
    """Questions over ``names`` (recall: kepano's and the zettelkasten's; help: the help vault's),
    this code and ``before``."""
    out = {}
    for side, code in (("after", HERE.parent), ("before", before)):
        if code is None:
            continue
        work = OUT / f"recall-{side}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        for name in names:
            if available(name):
                copy_vault_to(name, work / name)
        if "zettelkasten" in names and available("zettelkasten"):
            (work / "name_queries.json").write_text(json.dumps(name_queries(work / "zettelkasten")))
        weights = (
            ["--props-weights", ",".join(map(str, props_weights))]
            if props_weights and side == "after"
            else []
        )
        proc = subprocess.run([sys.executable, __file__, "--recall-scores", str(work), *weights],
                              capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1"})  # fmt: skip
        if proc.returncode:
            raise SystemExit(f"recall ({side}) failed: {proc.stderr[-2000:]}")
        out[side] = json.loads(proc.stdout)
        print(f"recall {side}: " + json.dumps({k: {m: v[m] for m in ('mrr@10', 'hits@1', 'questions')}
                                                 for k, v in out[side].items()}), flush=True)  # fmt: skip
    return out


# ---------------------------------------------------------------------- doctor


def part_doctor(before: Path | None) -> dict:
    """``vaultmem doctor --json`` on the 13k-note vault (no vectors): seconds, broken links."""
    if not available("zettelkasten"):
        return {}
    out = {}
    for side, code in (("after", HERE.parent), ("before", before)):
        if code is None:
            continue
        root = copy_vault_to("zettelkasten", OUT / f"doctor-{side}")
        (root / ".vaultmem.toml").write_text('[embedding]\nmodel = "none"\n')
        cmd, env = vaultmem_cmd("doctor", "--json", "--vault", str(root), code=code)
        started = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=OUT)
        seconds = time.perf_counter() - started
        report = json.loads(proc.stdout)
        broken = [f for f in report["findings"] if f["check"] == "broken_link"]
        out[side] = {"seconds": round(seconds, 1), "broken_links": len(broken),
                     "broken_targets": len({f["data"]["target"] for f in broken}),
                     "suggestions": sum(1 for f in broken if f["data"].get("suggestion"))}  # fmt: skip
        print(f"doctor {side}: {out[side]}", flush=True)
    return out


# ---------------------------------------------------------------------- what SciFact indexes


SCIFACT = DATA / "scifact" / "corpus.jsonl"


def scifact_notes(corpus: Path) -> list:
    """The SciFact notes as scifact.py writes them."""
    from vaultmem.core.note import parse

    notes = []
    for line in corpus.open(encoding="utf-8"):
        doc = json.loads(line)
        title = json.dumps(doc["title"] or doc["_id"], ensure_ascii=False)
        notes.append(parse(f"---\ntitle: {title}\ntype: fact\n---\n{doc['text']}\n", f"{doc['_id']}.md"))
    return notes


def indexed_text_digest(corpus: Path) -> str:
    """A digest of what vaultmem indexes of each SciFact note (title, embedded chunks, BM25
    words of every field), written as scifact.py writes them: equal digests mean equal recall inputs."""
    import hashlib

    from vaultmem.index import indexer
    from vaultmem.index.chunking import chunk, plain_text

    digest = hashlib.sha256()
    for note in scifact_notes(corpus):
        if hasattr(indexer, "note_chunks"):
            chunks = indexer.note_chunks(note, 256)
        else:  # before issue 27
            chunks = chunk(note.title, plain_text(note.body), 256)
        indexed = indexer.bm25_doc(note)
        props = getattr(indexed, "props", "")  # BM25's props field; none before issue 27
        words = " ".join(indexed.content.split()) + "#" + " ".join(props.split())
        digest.update(("|".join(chunks) + "#" + words + "#" + note.title).encode())
    return digest.hexdigest()


def bm25_score_digest(corpus: Path) -> str:
    """A digest of the BM25 score of every SciFact note for every query in ``queries.jsonl``
    beside the corpus (train and test): equal digests mean bit-identical keyword scores."""
    import hashlib
    import tempfile

    from vaultmem.index import indexer
    from vaultmem.index.bm25 import BM25Index

    notes = scifact_notes(corpus)
    index = {n.path: i for i, n in enumerate(notes)}
    queries = [json.loads(line)["text"] for line in (corpus.parent / "queries.jsonl").open(encoding="utf-8")]
    digest = hashlib.sha256()
    with tempfile.TemporaryDirectory() as tmp:
        bm25 = BM25Index(Path(tmp) / "bm25")
        bm25.apply((indexer.bm25_doc(n) for n in notes), [])
        for q in queries:
            digest.update(bm25.score_all(q, index, len(notes)).tobytes())
        bm25.close()
    return digest.hexdigest()


def scifact_digests(corpus: Path) -> dict:
    return {"indexed_text": indexed_text_digest(corpus), "bm25_scores": bm25_score_digest(corpus)}


def part_scifact_identity(before: Path | None, corpus: Path) -> dict:
    if not corpus.exists():
        return {}
    out = {"after": scifact_digests(corpus)}
    if before:
        proc = subprocess.run([sys.executable, __file__, "--digest", str(corpus)], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(before)})  # fmt: skip
        if proc.returncode:
            raise SystemExit(f"scifact digest (before) failed: {proc.stderr[-2000:]}")
        out["before"] = json.loads(proc.stdout)
        out["identical"] = {k: out["before"][k] == v for k, v in out["after"].items()}
    print(f"scifact identity: {out}", flush=True)
    return out


# ---------------------------------------------------------------------- main


def main() -> None:
    ap = parser(__doc__, tag=True)
    ap.add_argument("--parts", default="links,scifact,index,resume,chunking,recall,doctor")
    ap.add_argument("--before", type=Path, help="a checkout of the code before (for chunking and recall)")
    ap.add_argument("--sample", type=int, default=256, help="chunks embedded to measure the rate")
    ap.add_argument("--kill-at", type=float, default=0.4, help="share of the chunks embedded before the kill")
    ap.add_argument("--max-mb", type=float, default=4.8, help="longest paragraph timed by the chunking part")
    ap.add_argument(
        "--fixture",
        action="store_true",
        help="use the committed fixture vault (tests/fixtures/obsidian_vault) as the only vault",
    )
    ap.add_argument("--chunk-times", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--recall-scores", type=Path, help=argparse.SUPPRESS)
    ap.add_argument(
        "--props-weights",
        type=lambda t: [float(x) for x in t.split(",")],
        default=[],
        help="part recall: also kepano's questions with these BM25 weights of the property field",
    )
    ap.add_argument("--digest", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--scifact", type=Path, default=SCIFACT, help="SciFact corpus.jsonl (part scifact)")
    args = ap.parse_args()
    own_home("home")  # never the user's own service, config or state
    if args.chunk_times:
        print(json.dumps(chunk_times(args.chunk_times)))
        return
    if args.digest:
        print(json.dumps(scifact_digests(args.digest)))
        return
    if args.recall_scores:
        print(json.dumps(recall_scores(args.recall_scores, args.props_weights)))
        return
    if args.fixture:
        VAULTS.clear()
        VAULTS["fixture"] = (FIXTURE, "this repository", "tests/fixtures/obsidian_vault")
    if not any(available(n) for n in VAULTS):
        sys.exit(
            f"obsidian_bench.py: no vault under {EXT} (set VAULTMEM_EXTVAULTS; see VAULTS for the repositories)"
        )
    OUT.mkdir(parents=True, exist_ok=True)
    parts = args.parts.split(",")
    result: dict = {
        "vaults": {
            n: {"repository": r, "commit": c, "present": available(n)} for n, (_, r, c) in VAULTS.items()
        }
    }
    try:
        result["load_average_start"] = os.getloadavg()
    except OSError:
        pass
    if "links" in parts:
        result["links"] = part_links()
    if "chunking" in parts:
        result["chunking"] = part_chunking(args.before, args.max_mb)
    if "recall" in parts:
        result["recall"] = part_recall(args.before, args.props_weights)
    if "help" in parts:
        result["help"] = part_recall(args.before, [], ("obsidian-help",))
    if "scifact" in parts:
        result["scifact_identity"] = part_scifact_identity(args.before, args.scifact)
    if "doctor" in parts:
        result["doctor"] = part_doctor(args.before)
    if "resume" in parts:
        result["resume"] = part_resume(args.kill_at)
    if "index" in parts:
        result["index"] = part_index(args.sample)
    result["load_average_end"] = os.getloadavg()
    path = write_result("obsidian", result, tag=args.tag)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
