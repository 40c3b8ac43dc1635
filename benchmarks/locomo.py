"""LoCoMo dev conversations as vaults: evidence recall@k through ``Vault.recall``, real model.

    python benchmarks/locomo.py                        # both shapes, default settings
    python benchmarks/locomo.py --shape linked --set recall.graph_seeds=8 --tag seeds8
    python benchmarks/locomo.py --no-adaptive          # usage data off (as scifact.py measures)
    python benchmarks/locomo.py --convs 0,1,2          # a subset of the 5 conversations

Protocol (``../shared/data/locomo-dev/README.md``): one vault per conversation, one note per
turn (id = dia id, body = ``Speaker: text``, the image caption if any, the session date), the
question as the query, evidence recall@k = share of a question's evidence turns in the top k,
averaged over questions with evidence; overall and per category, k = 5/10/25/50. Each figure
also comes against the corrected evidence of ``evidence-audit.json`` beside the data (an
independent audit; the honest figure, printed first, ``corrected`` in the result file).
Shapes: *flat* (turn notes only) and *linked* (a note per session; each turn links to its
session note and to the previous turn, in frontmatter, so a turn's text is the same in both
shapes). Queries run in order through ``Vault.recall(question, k=50)`` with the vault's
settings (adaptive scoring and retrieval logging on unless ``--no-adaptive``), on a fresh
usage store. Vaults are written once under ``benchmarks/.work/locomo/`` and reused; every
text is embedded once (``common.CachedEmbedder``).
Results: benchmarks/results/locomo[-TAG].json.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import (
    DATA,
    WORK,
    CachedEmbedder,
    fresh_usage,
    latency_summary,
    mean,
    parser,
    write_result,
)
from vaultmem.core import config as configmod
from vaultmem.vault import Vault

DEFAULT_DATA = DATA / "locomo-dev" / "locomo-dev.json"
AUDIT_NAME = "evidence-audit.json"  # beside the data: an independent audit's corrected evidence
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (5, 10, 25, 50)
SESSION_RE = re.compile(r"^session_(\d+)$")


def stem(dia_id: str) -> str:
    return dia_id.replace(":", "-")


def sessions(conv: dict) -> list[tuple[int, str, list[dict]]]:
    out = []
    for key, turns in conv.items():
        m = SESSION_RE.match(key)
        if m and isinstance(turns, list):
            out.append((int(m.group(1)), conv.get(f"{key}_date_time", ""), turns))
    return sorted(out)


def notes_of(sample: dict, shape: str) -> dict[str, str]:
    """File name -> file text for one conversation in one shape."""
    conv = sample["conversation"]
    files: dict[str, str] = {}
    for n, date, turns in sessions(conv):
        session = f"S{n}"
        if shape == "linked":
            files[f"{session}.md"] = (
                f"---\nid: {json.dumps(session)}\ntitle: {json.dumps(f'Session {n}')}\n---\n"
                f"Session {n} of the conversation between {conv['speaker_a']} and {conv['speaker_b']}, {date}.\n"
            )
        previous = None
        for turn in turns:
            dia = turn["dia_id"]
            meta = [f"id: {json.dumps(dia)}"]
            if shape == "linked":
                meta.append(f"session: {json.dumps(f'[[{session}]]')}")
                if previous:
                    meta.append(f"follows: {json.dumps(f'[[{stem(previous)}]]')}")
            body = f"{turn['speaker']}: {turn['text']}\n"
            if turn.get("blip_caption"):
                body += f"\n(image: {turn['blip_caption']})\n"
            body += f"\n{date}\n"
            files[f"{stem(dia)}.md"] = "---\n" + "\n".join(meta) + "\n---\n" + body
            previous = dia
    return files


def write_vault(root: Path, files: dict[str, str]) -> None:
    """Write the notes (only files whose text differs; stale ones removed)."""
    root.mkdir(parents=True, exist_ok=True)
    for old in root.glob("*.md"):
        if old.name not in files:
            old.unlink()
    for name, text in files.items():
        path = root / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def evidence_of(qa: dict, known: set[str]) -> list[str]:
    ids = []
    for item in qa.get("evidence") or []:
        ids += [x for x in re.split(r"[;,\s]+", str(item)) if x]
    return sorted({x for x in ids if x in known})


def overrides(pairs: list[str]) -> dict:
    """``section.key=value`` pairs (value parsed as JSON when it can be) as a config dict."""
    out: dict = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        section, _, name = key.partition(".")
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = value
        out.setdefault(section, {})[name] = parsed
    return out


def open_vault(root: Path, embedder, extra: dict) -> Vault:
    fresh_usage(root)  # a fresh usage store per run
    vault = Vault(root, embedder)
    vault.config = configmod.merge(vault.config, extra)
    return vault


def write_conversation(root: Path, sample: dict, shape: str, turns: int = 0) -> None:
    """A conversation's vault in ``shape`` (only its first ``turns`` notes when given)."""
    files = notes_of(sample, shape)
    write_vault(root, dict(list(files.items())[:turns]) if turns else files)


def load_audit(data: Path) -> dict[tuple[int, int], list[str]]:
    """(conversation position, question position) -> the audit's corrected evidence ids, from
    ``evidence-audit.json`` beside the data (empty when there is none). Its ``question_id`` reads
    ``locomo_<conversation>_qa<0-based question index>``."""
    path = data.parent / AUDIT_NAME
    if not path.exists():
        return {}
    out = {}
    for entry in json.loads(path.read_text()):
        m = re.fullmatch(r"locomo_(\d+)_qa(\d+)", entry["question_id"])
        if m:
            out[(int(m.group(1)), int(m.group(2)))] = list(entry["correct_evidence"])
    return out


def questions(sample: dict, vault: Vault):  # type: ignore[no-untyped-def]
    """(question, its evidence ids) of every question with evidence in the indexed ``vault``."""
    for qa, evidence, _ in audited(sample, vault):
        yield qa, evidence


def audited(sample: dict, vault: Vault, audit: dict[int, list[str]] | None = None):  # type: ignore[no-untyped-def]
    """(question, its evidence ids, its corrected evidence ids) of every question with evidence
    in the indexed ``vault``; ``audit``: question position -> corrected evidence (else as cited)."""
    known = {r.id for r in vault.records().values() if r.id}
    for i, qa in enumerate(sample["qa"]):
        evidence = evidence_of(qa, known)
        if evidence:
            fixed = (audit or {}).get(i)
            yield qa, evidence, (evidence_of({"evidence": fixed}, known) if fixed is not None else evidence)


def run_conversation(sample: dict, shape: str, embedder, args, extra: dict, ranks: list) -> list[dict]:
    root = args.work / shape / sample["sample_id"]
    write_conversation(root, sample, shape, args.turns)
    vault = open_vault(root, embedder, extra)
    vault.reindex()
    rows = []
    for qa, evidence, corrected in audited(sample, vault, args.audit.get(sample["sample_id"], {})):
        start = time.perf_counter()
        hits = vault.recall(str(qa["question"]), k=max(KS), adaptive=not args.no_adaptive)
        seconds = time.perf_counter() - start
        ranked = [h.id for h in hits]
        row = {"category": qa["category"], "seconds": seconds, "conv": sample["sample_id"]}
        for k in KS:
            row[f"r@{k}"] = len(set(ranked[:k]) & set(evidence)) / len(evidence)
            row[f"c@{k}"] = len(set(ranked[:k]) & set(corrected)) / len(corrected) if corrected else 0.0
        row["corrected"] = bool(corrected)
        rows.append(row)
        if args.dump:
            ranks.append({"conv": sample["sample_id"], "q": qa["question"], "category": qa["category"],
                          "evidence": evidence, "corrected": corrected, "ranked": ranked,
                          "explain": [h.explain for h in hits] if args.dump_explain else None})  # fmt: skip
    vault.close()
    return rows


def summarise(rows: list[dict]) -> dict:
    """Recall@k overall and per category against the cited evidence, and the same under
    ``corrected`` against the audit's corrected evidence (questions that keep some)."""

    def block(sel: list[dict], key: str = "r") -> dict:
        return {f"R@{k}": round(100 * mean(r[f"{key}@{k}"] for r in sel), 1) for k in KS} | {"n": len(sel)}

    def by_category(sel: list[dict], key: str) -> dict:
        out = {"overall": block(sel, key)}
        for cat, name in CATEGORIES.items():
            part = [r for r in sel if r["category"] == cat]
            if part:
                out[name] = block(part, key)
        return out

    out = by_category(rows, "r")
    out["corrected"] = by_category([r for r in rows if r["corrected"]], "c")
    out["by_conversation_R@10"] = {
        c: round(100 * mean(r["r@10"] for r in rows if r["conv"] == c), 1)
        for c in dict.fromkeys(r["conv"] for r in rows)
    }
    out["latency"] = latency_summary([r["seconds"] for r in rows])
    return out


def show(shape: str, s: dict) -> None:
    for label, block in (("corrected", s["corrected"]), ("cited", s)):
        o = block["overall"]
        cats = "  ".join(f"{name} {block[name]['R@10']:.1f}" for name in CATEGORIES.values() if name in block)
        print(f"  {shape:<6} {label:<9} R@5 {o['R@5']:.1f}  R@10 {o['R@10']:.1f}  R@25 {o['R@25']:.1f}"
              f"  R@50 {o['R@50']:.1f}  | R@10 {cats}", flush=True)  # fmt: skip
    print(f"  {shape:<6} p50 {s['latency']['p50_ms']} ms", flush=True)


def main() -> None:
    ap = parser(__doc__, data="locomo-dev/locomo-dev.json", tag=True)
    ap.add_argument("--work", type=Path, default=WORK / "locomo")
    ap.add_argument("--shape", choices=("flat", "linked", "both"), default="both")
    ap.add_argument("--convs", default="", help="comma-separated conversation positions (0-4) or sample ids")
    ap.add_argument("--no-adaptive", action="store_true", help="recall with adaptive=False")
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="config override")
    ap.add_argument(
        "--model", default="", help="[embedding] model (default: the default model; its own work folder)"
    )
    ap.add_argument("--dump", action="store_true", help="keep every question's ranking in .work")
    ap.add_argument("--dump-explain", action="store_true", help="with --dump: the hits' score parts too")
    ap.add_argument(
        "--turns", type=int, default=0, help="only the first N notes of each conversation (a smoke run)"
    )
    args = ap.parse_args()
    if not args.data.exists():
        sys.exit(f"locomo.py: no LoCoMo data at {args.data} (pass --data PATH)")
    samples = json.loads(args.data.read_text())
    audit = load_audit(args.data)
    args.audit = {
        s["sample_id"]: {q: ev for (c, q), ev in audit.items() if c == i} for i, s in enumerate(samples)
    }
    if args.convs:
        wanted = args.convs.split(",")
        samples = [s for i, s in enumerate(samples) if str(i) in wanted or s["sample_id"] in wanted]
    extra = overrides(args.set)
    embedder = CachedEmbedder(model=args.model)
    if args.model and args.work == WORK / "locomo":  # a model's vaults apart: each index keeps its vectors
        args.work = WORK / f"locomo-{args.model.rsplit('/', 1)[-1]}"
    shapes = ("flat", "linked") if args.shape == "both" else (args.shape,)
    print(f"LoCoMo: {len(samples)} conversations, {sum(len(s['qa']) for s in samples)} questions, "
          f"adaptive {'off' if args.no_adaptive else 'on'}, overrides {extra or 'none'}", flush=True)  # fmt: skip
    result: dict = {"conversations": [s["sample_id"] for s in samples], "adaptive": not args.no_adaptive,
                    "overrides": extra, "model": embedder.name}  # fmt: skip
    ranks: list = []
    for shape in shapes:
        rows = []
        for sample in samples:
            rows += run_conversation(sample, shape, embedder, args, extra, ranks)
        result[shape] = summarise(rows)
        show(shape, result[shape])
    result["texts_embedded"] = embedder.embedded
    if args.dump:
        dump = WORK / f"locomo-ranks{'-' + args.tag if args.tag else ''}.json"
        dump.write_text(json.dumps(ranks))
    path = write_result("locomo", result, tag=args.tag)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
