"""Note parsing speed: python-frontmatter's own ``parse`` against vaultmem's ``note.parse``.

    python benchmarks/parse_bench.py [--notes 5000] [--repeats 5] [--base main]

The corpus is the demo vault's notes repeated to ``--notes`` texts plus as many synthetic
notes (benchmarks/synth.py), 10k notes by default. Timed per note, median of ``--repeats`` runs:

- ``frontmatter.parse``: the library's split and its default loader (libyaml's CSafeLoader);
- ``split+yaml@BASE`` / ``split+yaml``: the same stage in vaultmem at git revision BASE (hand
  split, pure-Python SafeLoader) and in the working tree (hand split, python-frontmatter's
  YAML handler with the bounded libyaml safe loader);
- ``note.parse@BASE`` / ``note.parse``: the whole parse (normalised fields, links, tags, hash).

It also counts the notes where the library's split gives another body than vaultmem's
(it strips the text and the body, takes ``----`` as a fence, no ``...`` close, no BOM).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import frontmatter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import write_result  # noqa: E402
from benchmarks.synth import generate  # noqa: E402
from vaultmem.core import note  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def corpus(n: int) -> list[tuple[str, str]]:
    """(path, text) of ``n`` demo notes (repeated) and ``n`` synthetic notes."""
    demo = sorted((REPO / "vaults" / "demo").rglob("*.md"))
    demo_texts = [(p.name, p.read_text(encoding="utf-8")) for p in demo if p.name != "README.md"]
    out = [demo_texts[i % len(demo_texts)] for i in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp), n)
        synth = sorted(p for p in Path(tmp).rglob("*.md") if ".vaultmem" not in p.parts)
        out += [(p.name, p.read_text(encoding="utf-8")) for p in synth[:n]]
    return out


def module_at(rev: str):
    """vaultmem's note module as it is at git revision ``rev``."""
    src = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:vaultmem/note.py"],
                         check=True, capture_output=True, text=True).stdout  # fmt: skip
    spec = importlib.util.spec_from_loader(f"vaultmem._note_{rev}", loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = "vaultmem"
    sys.modules[spec.name] = mod  # dataclasses look their module up
    exec(compile(src, f"{rev}:vaultmem/note.py", "exec"), mod.__dict__)
    return mod


def _split_load(mod, text: str, path: str) -> dict:
    """The frontmatter stage of ``mod.parse`` alone: split, then load the YAML."""
    fm = mod.split_frontmatter(text)[0]
    return mod.load_yaml(fm, path) if fm is not None else {}


def per_note_us(variants: dict, texts: list[tuple[str, str]], repeats: int) -> dict[str, float]:
    """Median microseconds per note of each variant; the variants take turns in every repeat."""
    runs: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, fn in variants.items():
            t = time.perf_counter()
            for path, text in texts:
                fn(text, path)
            runs[name].append((time.perf_counter() - t) / len(texts) * 1e6)
    return {name: round(statistics.median(r), 1) for name, r in runs.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=5000, help="demo notes and as many synthetic ones")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--base", default="main")
    args = ap.parse_args()
    texts = corpus(args.notes)
    old = module_at(args.base)
    variants = {
        "frontmatter.parse": lambda text, path: frontmatter.parse(text),
        f"split+yaml@{args.base}": lambda text, path: _split_load(old, text, path),
        "split+yaml": lambda text, path: _split_load(note, text, path),
        f"note.parse@{args.base}": old.parse,
        "note.parse": note.parse,
    }
    times = per_note_us(variants, texts, args.repeats)
    body_differs = sum(frontmatter.parse(t)[1] != note.parse(t, p).body for p, t in texts)
    meta_differs = sum(frontmatter.parse(t)[0] != note.parse(t, p).meta for p, t in texts)
    result = {"notes": len(texts), "repeats": args.repeats, "per_note_us_median": times,
              "library_split_body_differs": body_differs, "library_split_meta_differs": meta_differs}  # fmt: skip
    print(write_result("parse", result))
    print(result)


if __name__ == "__main__":
    main()
