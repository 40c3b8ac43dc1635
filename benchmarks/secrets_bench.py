"""Secret detection before writes (vaultmem/core/secrets.py): cost per note and false positives.

    python benchmarks/secrets_bench.py [--scifact N] [--repeats 3] [--data PATH]

Corpora: the demo vault's notes and SciFact's title + abstract (``--data``, default
../shared/data/scifact; all 5,183 documents are scanned for false positives, the first
``--scifact`` are timed). Every finding on these corpora is a false positive (they hold no
secret), and is printed with its kind. Timed per note: the best of ``--repeats`` calls to
``redact`` (median, p95 and max over the notes), with and without the per-detector prefilter,
and once over the generated positive cases of tests/test_secrets.py (ms per case). Also
measured: the one-off import of detect-secrets on the first scan (a fresh process).

Results: benchmarks/results/secrets.json.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
from benchmarks.common import parser, write_result  # noqa: E402
from vaultmem.core import secrets  # noqa: E402


def demo_notes() -> list[tuple[str, str]]:
    root = REPO / "vaults" / "demo"
    return [
        (p.relative_to(root).as_posix(), p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.md"))
    ]


def scifact_docs(data: Path) -> list[tuple[str, str]]:
    docs = []
    with open(data / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            docs.append((d["_id"], f"{d['title']}\n\n{d['text']}"))
    return docs


def per_note_ms(texts: list[str], repeats: int, prefilter: bool = True) -> list[float]:
    out = []
    for text in texts:
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            secrets.scan_spans(text, prefilter=prefilter)
            best = min(best, time.perf_counter() - t)
        out.append(best * 1000)
    return out


def summary(ms: list[float]) -> dict[str, float]:
    s = sorted(ms)
    return {"median_ms": round(statistics.median(s), 4), "p95_ms": round(s[int(0.95 * (len(s) - 1))], 4),
            "max_ms": round(s[-1], 4)}  # fmt: skip


def false_positives(docs: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [
        {"doc": ident, "kind": f.kind, "line": f.line} for ident, text in docs for f in secrets.scan(text)
    ]


def import_ms() -> float:
    code = ("import time; t = time.perf_counter(); from vaultmem.core import secrets; "
            "secrets.scan('aws key AKIA' + 'ABCDEFGHIJKLMNOP'); "  # a text one of its plugins may match: it loads
            "print((time.perf_counter() - t) * 1000)")  # fmt: skip
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                 cwd=REPO, env={"PYTHONPATH": str(REPO)}).stdout) for _ in range(3)]  # fmt: skip
    return round(statistics.median(runs), 1)


def main() -> None:
    ap = parser(__doc__, data=("scifact", "BEIR SciFact folder"))
    ap.add_argument("--scifact", type=int, default=2000, help="SciFact documents to time (all are scanned)")
    ap.add_argument("--repeats", type=int, default=3, help="calls per note; the best one counts")
    args = ap.parse_args()

    import test_secrets as cases

    demo, sci = demo_notes(), scifact_docs(args.data)
    secrets.scan("warm up")
    result: dict = {"detect_secrets_import_ms": import_ms(), "corpora": {}}
    for name, docs, timed in (("demo", demo, demo), ("scifact", sci, sci[: args.scifact])):
        texts = [t for _, t in timed]
        fps = false_positives(docs)
        result["corpora"][name] = {
            "docs": len(docs), "timed": len(texts), "median_chars": int(statistics.median(len(t) for t in texts)),
            "false_positives": len(fps), "false_positive_examples": fps[:10],
            "with_prefilter": summary(per_note_ms(texts, args.repeats)),
            "without_prefilter": summary(per_note_ms(texts, args.repeats, prefilter=False)),
        }  # fmt: skip
        print(
            f"{name}: {len(docs)} docs, {len(fps)} false positives, {result['corpora'][name]['with_prefilter']}"
        )
    positives = [text for _, text, _, _ in cases.POSITIVE]
    missed = [
        name for name, text, kind, _ in cases.POSITIVE if kind not in {f.kind for f in secrets.scan(text)}
    ]
    flagged = [name for name, text in cases.NEGATIVE if secrets.scan(text)]
    result["cases"] = {"positives": len(positives), "missed": missed, "near_misses": len(cases.NEGATIVE),
                       "near_misses_flagged": flagged, **summary(per_note_ms(positives, args.repeats))}  # fmt: skip
    print(f"cases: {len(positives)} positives ({len(missed)} missed), {len(cases.NEGATIVE)} near-misses "
          f"({len(flagged)} flagged); import of detect-secrets {result['detect_secrets_import_ms']} ms")  # fmt: skip
    print(f"wrote {write_result('secrets', result)}")


if __name__ == "__main__":
    main()
