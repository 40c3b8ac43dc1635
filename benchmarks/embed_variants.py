"""How the vectors of a first index are embedded fastest on this machine (issue 45: a 1,500-note
vault hybrid within 60 s on 2 cores): onnxruntime's threads, the batch size, the calls at once.

    python benchmarks/embed_variants.py [--notes 1500] [--texts 96] [--rounds 6]

The texts are those the memory service's fill embeds for a fresh synthetic vault (``synth.py``:
each note's title and body, one chunk, 60-160 words that tokenize to 18-256 tokens, median
242). One process, the real default model, every way in turn round by round (the order
reversed every other round; the machine is shared: paired ratios to ``before``, medians), each
through ``Indexer.embed_texts`` in the fill's steps of ``Watcher.FILL`` notes:

- ``before``: main's embedder: one fastembed call at a time, onnxruntime's default threads (one
  per core: 2 here), batch 4;
- ``2x1 bN``: ``FastEmbedder`` now: a session of one thread, two calls at once, batch N;
- ``1x1 b4``: one thread, one call at a time (the CPU cost of the model alone).

Measured per way: texts per second (wall), CPU milliseconds per text (this process's user +
system time: what the way costs a loaded machine), and whether every vector equals
``before``'s bit for bit. Results: results/embed-variants.json.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import WORK, parser, write_result
from benchmarks.synth import generate


class Before:
    """main's ``FastEmbedder._embed`` (before issue 45's change): one call at a time over a
    session with onnxruntime's default threads."""

    def __init__(self, batch_size: int):
        from fastembed import TextEmbedding

        from vaultmem.index.embed import DEFAULT_MODEL, cache_root, default_model_dir

        self.name, self.max_tokens, self.batch_size = DEFAULT_MODEL, 256, batch_size
        self.model = TextEmbedding(DEFAULT_MODEL, cache_dir=str(cache_root() / "fastembed"),
                                   specific_model_path=str(default_model_dir()))  # fmt: skip

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.asarray(list(self.model.embed(list(texts), batch_size=self.batch_size)), dtype=np.float32)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def cpu_seconds() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--notes", type=int, default=1500, help="synthetic vault the texts come from")
    ap.add_argument("--texts", type=int, default=96, help="texts embedded per way and round")
    ap.add_argument("--rounds", type=int, default=6)
    opts = ap.parse_args()
    from vaultmem.index.embed import FastEmbedder
    from vaultmem.index.indexer import Summary, chunk_texts
    from vaultmem.service.watch import Watcher
    from vaultmem.vault import Vault

    root = WORK / f"embed-variants-{opts.notes}"
    shutil.rmtree(root, ignore_errors=True)
    generate(root, opts.notes)
    ways: dict[str, Any] = {
        "before": Before(4),
        "2x1 b4": FastEmbedder(batch_size=4, threads=2),
        "2x1 b1": FastEmbedder(batch_size=1, threads=2),
        "2x1 b2": FastEmbedder(batch_size=2, threads=2),
        "1x1 b4": FastEmbedder(batch_size=4, threads=1),
    }
    vault = Vault(root, ways["2x1 b4"])
    vault.reindex(vectors=False)  # every note pending: what a first index through the service leaves
    paths = vault.pending_vectors()
    rows, texts = chunk_texts(
        [vault.store.read(p) for p in paths], vault.embedder, vault.max_chunks, Summary()
    )
    for way in ways.values():
        way.embed(["warm up"])
    rates: dict[str, list[float]] = {w: [] for w in ways}
    cpu: dict[str, list[float]] = {w: [] for w in ways}
    same = {w: True for w in ways}
    per_round = opts.texts  # in steps of the service's fill (Watcher.FILL texts), as it embeds them
    for r in range(opts.rounds):
        start = (r * per_round) % max(1, len(paths) - per_round)
        step_paths = paths[start : start + per_round]
        steps = [{h: texts[h] for p in step_paths[i : i + Watcher.FILL] for h in rows[p]}
                 for i in range(0, len(step_paths), Watcher.FILL)]  # fmt: skip
        got: dict[str, dict] = {}
        for name in list(ways) if r % 2 == 0 else list(ways)[::-1]:
            vault.indexer.embedder = ways[name]
            t, c = time.perf_counter(), cpu_seconds()
            got[name] = {h: v for step in steps for h, v in vault.indexer.embed_texts(step).items()}
            wall, used = time.perf_counter() - t, cpu_seconds() - c
            rates[name].append(len(got[name]) / wall)
            cpu[name].append(1000 * used / len(got[name]))
        for name in ways:
            same[name] &= got[name].keys() == got["before"].keys() and all(
                np.array_equal(got[name][h], got["before"][h]) for h in got["before"]
            )
        print(f"round {r}, load {os.getloadavg()[0]:.1f}: "
              + ", ".join(f"{w} {rates[w][-1]:.1f}/s {cpu[w][-1]:.0f} ms" for w in ways), flush=True)  # fmt: skip
    vault.close()
    shutil.rmtree(root, ignore_errors=True)
    result = {
        "texts_per_round": per_round, "rounds": opts.rounds, "load_avg": os.getloadavg(),
        "texts_per_s": {w: [round(x, 2) for x in v] for w, v in rates.items()},
        "median_texts_per_s": {w: round(statistics.median(v), 2) for w, v in rates.items()},
        "paired_ratio_to_before": {w: round(statistics.median(a / b for a, b in zip(v, rates["before"])), 3)
                                   for w, v in rates.items()},
        "median_cpu_ms_per_text": {w: round(statistics.median(v), 1) for w, v in cpu.items()},
        "paired_cpu_ratio_to_before": {w: round(statistics.median(a / b for a, b in zip(v, cpu["before"])), 3)
                                       for w, v in cpu.items()},
        "vectors_equal_to_before": same,
    }  # fmt: skip
    print(result)
    print(f"wrote {write_result('embed-variants', result)}")


if __name__ == "__main__":
    main()
