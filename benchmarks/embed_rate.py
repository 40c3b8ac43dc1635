"""Embedding throughput: vaultmem's indexer against fastembed alone, on the same texts and batch
size (issue 45: the indexer must reach >= 0.9 of the model's own rate).

    python benchmarks/embed_rate.py [--notes 1500] [--texts 384] [--rounds 3] [--batch 4]

The texts are the chunk texts of a synthetic vault (``synth.py``; the indexer's own parse and
chunking). One process, one loaded model (the real default model), three ways, alternated
round by round (the machine is shared: paired ratios, medians):

- ``fastembed``: ``TextEmbedding.embed(texts, batch_size)`` over all the texts at once, in file
  order, with fastembed's own defaults (onnxruntime's threads: one per core): the model's own
  rate (vaultmem's session runs one thread a call, several calls at once: ``embed.py``);
- ``indexer``: ``Indexer.embed_texts`` as a sync embeds (shortest first, PROGRESS_STEP texts a
  model call, vectors normalised and kept by hash);
- ``fill``: ``Vault.embed_pending`` as the memory service fills a first index's vectors in
  (``Watcher.FILL`` notes a step: files read, chunked, looked up in the manifest, embedded).

Results: results/embed-rate.json (texts per second of each, the paired ratios, the load).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import WORK, parser, write_result
from benchmarks.synth import generate


def fill(vault: Any, paths: list[str]) -> int:
    """Texts embedded by the service's fill path for these pending notes, FILL a step."""
    from vaultmem.service.watch import Watcher

    return sum(
        len(vault.embed_pending(paths[i : i + Watcher.FILL]).vectors)
        for i in range(0, len(paths), Watcher.FILL)
    )


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--notes", type=int, default=1500, help="synthetic vault the texts come from")
    ap.add_argument("--texts", type=int, default=384, help="texts embedded per way and round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=4, help="the model's batch size (vaultmem's default: 4)")
    opts = ap.parse_args()
    from fastembed import TextEmbedding

    from vaultmem.index.embed import DEFAULT_MODEL, FastEmbedder, cache_root, default_model_dir
    from vaultmem.index.indexer import Summary, chunk_texts
    from vaultmem.vault import Vault

    root = WORK / f"embed-rate-{opts.notes}"
    shutil.rmtree(root, ignore_errors=True)
    generate(root, opts.notes)
    emb = FastEmbedder(DEFAULT_MODEL, opts.batch)
    model = TextEmbedding(DEFAULT_MODEL, cache_dir=str(cache_root() / "fastembed"),
                          specific_model_path=str(default_model_dir()))  # fmt: skip
    vault = Vault(root, emb)
    vault.reindex(vectors=False)  # every note pending: what a first index through the service leaves
    paths = vault.pending_vectors()
    notes = [vault.store.read(p) for p in paths]
    rows, by_hash = chunk_texts(notes, emb, vault.max_chunks, Summary())
    per_note = len(by_hash) / len(notes)
    emb.embed(["warm up"])
    rates: dict[str, list[float]] = {"fastembed": [], "indexer": [], "fill": []}
    take = max(1, round(opts.texts / per_note))  # notes a round: about --texts texts
    for r in range(opts.rounds):
        step_paths = paths[r * take : (r + 1) * take]  # the same texts every way
        part = [by_hash[h] for p in step_paths for h in rows[p]]

        ways = [
            ("fastembed", lambda part=part: len(list(model.embed(part, batch_size=opts.batch)))),
            (
                "indexer",
                lambda part=part, r=r: len(
                    vault.indexer.embed_texts({f"r{r}-{i}": t for i, t in enumerate(part)})
                ),
            ),
            ("fill", lambda step=step_paths: fill(vault, step)),
        ]
        for name, run in ways if r % 2 == 0 else reversed(ways):
            t = time.perf_counter()
            n = run()  # type: ignore[operator]
            rates[name].append(n / (time.perf_counter() - t))
            print(
                f"round {r}: {name} {rates[name][-1]:.1f} texts/s, load {os.getloadavg()[0]:.1f}", flush=True
            )
    vault.close()
    ratio = {w: [a / b for a, b in zip(rates[w], rates["fastembed"])] for w in ("indexer", "fill")}
    result = {
        "texts_per_round": opts.texts, "rounds": opts.rounds, "batch_size": opts.batch,
        "texts_per_note": round(per_note, 2), "load_avg": os.getloadavg(),
        "texts_per_s": {w: [round(x, 1) for x in v] for w, v in rates.items()},
        "median_texts_per_s": {w: round(statistics.median(v), 1) for w, v in rates.items()},
        "paired_ratio_to_fastembed": {w: round(statistics.median(v), 3) for w, v in ratio.items()},
    }  # fmt: skip
    print(result)
    print(f"wrote {write_result('embed-rate', result)}")


if __name__ == "__main__":
    main()
