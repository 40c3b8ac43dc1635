"""An imported history answers like a raw one (issue 37): does a question find the conversation
it is about as often after ``vaultmem import --from chatgpt`` as when the sessions are notes?

LongMemEval-S is not reachable from this machine, so the haystacks are LoCoMo's dev
conversations (``../shared/data/locomo-dev``): each session becomes one ChatGPT conversation
(the first speaker is the user, the second the assistant; image captions kept as text), the
questions are LoCoMo's, and a question's answer sessions are those of its evidence turns.

- ``raw``: a note per session holding every message (``user: text``, ``assistant: text``: the
  speakers' names are in neither side's text), titled by its session;
- ``imported``: the same sessions as a ChatGPT export (``conversations.json``), imported by the
  real CLI (``vaultmem import --from chatgpt``, model "none"); each note maps back to its session
  by its ``source`` (``chatgpt-<conversation id>``; a rule it proposes carries its conversation's).

Both vaults are then indexed with the default model (cached) and asked every question with
evidence (hybrid recall, ``adaptive`` off, nothing logged): any@5 is the share of questions
with one of their answer sessions among the first 5 hits; by category and by who said the
evidence (the user, the assistant, both).

    python benchmarks/import_recall.py [--convs 0,1] [--tag after] [--importer OLD_TREE --tag before]

Results: benchmarks/results/import-recall[-TAG].json.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import WORK, CachedEmbedder, fresh_usage, mean, parser, write_result
from benchmarks.locomo import CATEGORIES, sessions
from vaultmem.vault import Vault

K = 5
TURN_RE = re.compile(r"^D(\d+):")


def when(date: str) -> float:
    """A LoCoMo session time ("1:56 pm on 8 May, 2023") as epoch seconds (UTC)."""
    stamp = dt.datetime.strptime(date.strip(), "%I:%M %p on %d %B, %Y")
    return stamp.replace(tzinfo=dt.UTC).timestamp()


def text_of(turn: dict) -> str:
    caption = f" (image: {turn['blip_caption']})" if turn.get("blip_caption") else ""
    return f"{turn['text']}{caption}"


def raw_notes(sample: dict) -> dict[str, str]:
    """File name -> note of each session: every message as the export holds it (its role, not
    the speaker's name, which a chat export does not have either), as indexed directly."""
    user = sample["conversation"]["speaker_a"]
    out = {}
    for n, date, turns in sessions(sample["conversation"]):
        body = "\n\n".join(f"{'user' if t['speaker'] == user else 'assistant'}: {text_of(t)}" for t in turns)
        out[f"S{n}.md"] = f'---\ntitle: "Session {n}"\nsource: "raw-S{n}"\n---\n{date}\n\n{body}\n'
    return out


def export(sample: dict) -> list[dict]:
    """The conversation's sessions as a ChatGPT export (one conversation per session)."""
    user = sample["conversation"]["speaker_a"]
    convs = []
    for n, date, turns in sessions(sample["conversation"]):
        start = when(date)
        mapping: dict = {"root": {"id": "root", "message": None, "parent": None, "children": ["m0"]}}
        for k, turn in enumerate(turns):
            role = "user" if turn["speaker"] == user else "assistant"
            mapping[f"m{k}"] = {"id": f"m{k}", "parent": "root" if k == 0 else f"m{k - 1}",
                                "children": [f"m{k + 1}"] if k + 1 < len(turns) else [],
                                "message": {"id": f"m{k}", "author": {"role": role, "metadata": {}},
                                            "create_time": start + 30 * k, "recipient": "all", "metadata": {},
                                            "content": {"content_type": "text", "parts": [text_of(turn)]}}}  # fmt: skip
        convs.append({"title": f"Session {n}", "create_time": start, "update_time": start + 30 * len(turns),
                      "mapping": mapping, "current_node": f"m{len(turns) - 1}", "id": f"{sample['sample_id']}-S{n}"})  # fmt: skip
    return convs


def build(sample: dict, side: str, work: Path, tree: Path | None = None) -> Path:
    """The vault of one side (the imported one through the CLI, in a fresh HOME, no service)."""
    root = work / side / sample["sample_id"]
    subprocess.run(["rm", "-rf", str(root)], check=True)
    root.mkdir(parents=True)
    if side == "raw":
        for name, text in raw_notes(sample).items():
            (root / name).write_text(text)
        return root
    path = work / f"{sample['sample_id']}-conversations.json"
    path.write_text(json.dumps(export(sample)))
    home = tempfile.mkdtemp(prefix="import-recall-")
    env = {**os.environ, "HOME": home, "XDG_CONFIG_HOME": f"{home}/.config", "XDG_STATE_HOME": f"{home}/.state",
           "XDG_RUNTIME_DIR": f"{home}/.run", "VAULTMEM_NO_SERVICE": "1"}  # fmt: skip
    if tree is not None:  # the importer of another vaultmem tree (--importer)
        env["PYTHONPATH"] = str(tree)
    vaultmem = [sys.executable, "-m", "vaultmem"]
    # run from the temp HOME: ``python -m`` puts its folder first on sys.path, before PYTHONPATH
    subprocess.run([*vaultmem, "init", str(root)], capture_output=True, env=env, check=True, cwd=home)
    config = root / ".vaultmem.toml"
    kept = config.read_text() if config.exists() else ""
    config.write_text(
        kept.replace("[embedding]\n", '[embedding]\nmodel = "none"\n', 1)
    )  # the import: no model
    done = subprocess.run([*vaultmem, "import", "--from", "chatgpt", str(path), "--vault", str(root), "--json"],
                          capture_output=True, text=True, env=env, cwd=home)  # fmt: skip
    if done.returncode:
        sys.exit(f"import_recall.py: the import failed: {done.stderr.strip()}")
    config.write_text(kept)
    subprocess.run(
        ["rm", "-rf", str(root / ".vaultmem" / "index")], check=True
    )  # indexed again with the model
    return root


def session_of(source: str | None, sample_id: str) -> int | None:
    m = re.search(rf"{re.escape(sample_id)}-S(\d+)$", source or "")
    return int(m.group(1)) if m else None


def answer_sessions(qa: dict) -> set[int]:
    ids = [x for item in qa.get("evidence") or [] for x in re.split(r"[;,\s]+", str(item)) if x]
    return {int(m.group(1)) for x in ids for m in [TURN_RE.match(x)] if m}


def said_by(qa: dict, sample: dict) -> str:
    """Who said the evidence turns: "user", "assistant" or "both" (the first speaker is the user)."""
    speakers = {t["dia_id"]: t["speaker"] for _, _, turns in sessions(sample["conversation"]) for t in turns}
    user = sample["conversation"]["speaker_a"]
    ids = [x for item in qa.get("evidence") or [] for x in re.split(r"[;,\s]+", str(item)) if x in speakers]
    roles = {"user" if speakers[x] == user else "assistant" for x in ids}
    return roles.pop() if len(roles) == 1 else "both"


def padded(sample: dict, chars: int, every: int = 3) -> dict:
    """The sample with every ``every``-th answer ending in a code block of ``chars`` characters
    (vaultmem's own source, a different slice each time): long answers, as a real chat has, in
    both the raw and the imported side (``--pad``)."""
    code = "".join(
        p.read_text() for p in sorted((Path(__file__).parent.parent / "vaultmem" / "index").glob("*.py"))
    )
    user, n, conv = sample["conversation"]["speaker_a"], 0, dict(sample["conversation"])
    for key, turns in sample["conversation"].items():
        if key.startswith("session_") and isinstance(turns, list):
            conv[key] = [dict(t) for t in turns]
            for t in conv[key]:
                if t["speaker"] != user:
                    n += 1
                    if n % every == 0:
                        start = (n * 997) % max(1, len(code) - chars)
                        t["text"] += f"\n\n```python\n{code[start : start + chars]}\n```"
    return {**sample, "conversation": conv}


def words(text: str) -> str:
    return " ".join(re.sub(r"[*`>#_-]+", " ", text).split())


def bodies(sample: dict, vault: Vault) -> dict[int | None, str]:
    """Session -> the words of the imported notes that map to it."""
    out: dict[int | None, str] = {}
    for r in vault.records().values():
        n = session_of(r.source, sample["sample_id"])
        out[n] = out.get(n, "") + " " + words((vault.root / r.path).read_text())
    return out


def kept(sample: dict, notes: dict[int | None, str], qa: dict) -> bool:
    """Whether the imported notes hold every evidence turn of the question whole (its words, in
    order, in its session's notes): a question lost with its evidence kept was lost by ranking."""
    turns = {t["dia_id"]: (n, words(text_of(t))) for n, _, ts in sessions(sample["conversation"]) for t in ts}
    ids = [x for item in qa.get("evidence") or [] for x in re.split(r"[;,\s]+", str(item)) if x in turns]
    return all(turns[x][1] in notes.get(turns[x][0], "") for x in ids)


def run(sample: dict, work: Path, embedder, tree: Path | None = None) -> list[dict]:
    found = {}
    notes = {}
    whole: list[bool] = []
    for side in ("raw", "imported"):
        root = build(sample, side, work, tree)
        fresh_usage(root)
        vault = Vault(root, embedder)
        vault.reindex()
        notes[side] = len(vault.records())
        of = {r.key: session_of(r.source, sample["sample_id"]) if side == "imported" else
              int(r.source[len("raw-S"):]) for r in vault.records().values()}  # fmt: skip
        found[side] = [[of.get(h.id) for h in vault.recall(str(qa["question"]), k=K, adaptive=False, log=False)]
                       for qa in sample["qa"]]  # fmt: skip
        if side == "imported":
            held = bodies(sample, vault)
            whole = [kept(sample, held, qa) for qa in sample["qa"]]
        vault.close()
    rows = []
    for i, qa in enumerate(sample["qa"]):
        wanted = answer_sessions(qa)
        if wanted:
            rows.append({"conv": sample["sample_id"], "q": i, "category": CATEGORIES.get(qa["category"], str(qa["category"])),
                         "said_by": said_by(qa, sample), "wanted": sorted(wanted), "evidence_kept": whole[i],
                         **{side: bool(wanted & set(found[side][i])) for side in found},
                         **{f"{side}_hits": found[side][i] for side in found}})  # fmt: skip
    print(f"{sample['sample_id']}: {len(rows)} questions, notes raw {notes['raw']} / imported {notes['imported']}; "
          f"any@{K} raw {mean(r['raw'] for r in rows):.3f} imported {mean(r['imported'] for r in rows):.3f}", flush=True)  # fmt: skip
    return rows


def summary(rows: list[dict]) -> dict:
    def part(sel: list[dict]) -> dict:
        return {"n": len(sel), "raw": round(mean(r["raw"] for r in sel), 3),
                "imported": round(mean(r["imported"] for r in sel), 3)}  # fmt: skip

    return {"all": part(rows),
            "by_category": {c: part([r for r in rows if r["category"] == c]) for c in sorted({r["category"] for r in rows})},
            "by_who_said_it": {w: part([r for r in rows if r["said_by"] == w]) for w in ("user", "assistant", "both")},
            "lost": sum(r["raw"] and not r["imported"] for r in rows),
            "lost_with_evidence_kept": sum(r["raw"] and not r["imported"] and r["evidence_kept"] for r in rows),
            "evidence_kept": sum(r["evidence_kept"] for r in rows),
            "gained": sum(r["imported"] and not r["raw"] for r in rows)}  # fmt: skip


def main() -> None:
    ap = parser(__doc__, data="locomo-dev/locomo-dev.json", tag=True)
    ap.add_argument("--work", type=Path, default=WORK / "import-recall")
    ap.add_argument("--convs", default="", help="comma-separated conversation positions (0-4)")
    ap.add_argument(
        "--questions", type=int, default=0, help="ask only the first N questions of each (0: all)"
    )
    ap.add_argument(
        "--pad", type=int, default=0, help="end every 3rd answer with a code block of N characters"
    )
    ap.add_argument(
        "--importer", type=Path, help="import with the vaultmem tree at this path (e.g. an older commit)"
    )
    args = ap.parse_args()
    if not args.data.exists():
        sys.exit(f"import_recall.py: no LoCoMo data at {args.data} (pass --data PATH)")
    samples = json.loads(args.data.read_text())
    if args.convs:
        samples = [s for i, s in enumerate(samples) if str(i) in args.convs.split(",")]
    if args.pad:
        samples = [padded(s, args.pad) for s in samples]
    if args.questions:
        samples = [{**s, "qa": s["qa"][: args.questions]} for s in samples]
    args.work.mkdir(parents=True, exist_ok=True)
    embedder = CachedEmbedder()
    rows = [row for sample in samples for row in run(sample, args.work, embedder, args.importer)]
    result = {"data": "LoCoMo dev as a ChatGPT export (LongMemEval-S not reachable)", "k": K,
              "model": embedder.name, "importer": str(args.importer or "this tree"), "pad": args.pad, "conversations": [s["sample_id"] for s in samples], **summary(rows)}  # fmt: skip
    print(
        json.dumps(
            {k: result[k] for k in ("all", "by_who_said_it", "lost", "lost_with_evidence_kept", "gained")}
        )
    )
    name = "import-recall" + (f"-{args.tag}" if args.tag else "")
    (args.work / f"{name}-rows.json").write_text(json.dumps(rows))  # each question's hits
    print(f"wrote {write_result(name, result)}")


if __name__ == "__main__":
    main()
