"""A deterministic synthetic memory vault for scale tests.

    python benchmarks/synth.py OUT_DIR --notes 10000 [--seed 7]

Notes belong to projects (each with a ``Project: P<n>`` anchor) and topics; each has a
type, status, importance, tags, created/updated times, 60-160 words drawn from its topic's
vocabulary plus common words, and links to 1-4 notes of the same topic and to its anchor.
The same arguments always produce byte-identical files.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

TYPES = ["decision", "fact", "lesson", "pattern", "gotcha", "bug_fix", "discovery", "progress",
         "session_summary", "architecture", "tech_context", "preference", "handoff"]  # fmt: skip
COMMON = ("the a of to and in for on with is was we it this that be as by use when from after "
          "before should because not only then also need needs run runs make made").split()  # fmt: skip
SYLLABLES = "ka lo mi ne sa tu ri po ve da zo fi gu he ja ku ly mo".split()


def topic_words(rng: random.Random, n: int) -> list[str]:
    return ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(n)]


def generate(out: Path, notes: int, seed: int = 7) -> list[dict]:
    """Write the vault; returns (title, path, topic words) of each note for query sampling."""
    rng = random.Random(seed)
    n_topics = max(10, notes // 50)
    n_projects = max(2, notes // 500)
    topics = [topic_words(rng, 40) for _ in range(n_topics)]
    (out / ".vaultmem").mkdir(parents=True, exist_ok=True)
    meta = []
    for p in range(n_projects):
        _write(out / "projects" / f"Project - P{p}.md",
               f'---\nid: prj{p:05d}\ntitle: "Project: P{p}"\ntype: project\ntags: [anchor]\nimportance: 9\n---\n'
               f"# Project: P{p}\n\nAnchor of synthetic project P{p}.\n")  # fmt: skip
    topic_of = [rng.randrange(n_topics) for _ in range(notes)]
    by_topic: dict[int, list[str]] = {}
    for i, t in enumerate(topic_of):
        by_topic.setdefault(t, []).append(f"Note {i}")
    for i in range(notes):
        t = topic_of[i]
        words = topics[t]
        body_words = [
            rng.choice(words) if rng.random() < 0.45 else rng.choice(COMMON)
            for _ in range(rng.randint(60, 160))
        ]
        links = rng.sample(by_topic[t], k=min(len(by_topic[t]), rng.randint(1, 4)))
        project = i % n_projects
        type_ = rng.choice(TYPES)
        status = "resolved" if rng.random() < 0.08 else "active"
        day = 1 + (i * 7919) % 300
        title = f"Note {i} {words[i % len(words)]} {words[(i * 3) % len(words)]}"
        text = (
            f'---\nid: n{i:07d}\ntitle: "{title}"\ntype: {type_}\nstatus: {status}\n'
            f"importance: {1 + (i * 31) % 10}\ntags: [topic{t}, {type_}]\n"
            f"created: 2026-{1 + day // 31:02d}-{1 + day % 28:02d}T10:00:00Z\n"
            f"updated: 2026-{1 + day // 31:02d}-{1 + day % 28:02d}T12:00:00Z\n---\n"
            f"# {title}\n\n{' '.join(body_words)}.\n\nProject: [[Project: P{project}]]. "
            + "Related: "
            + ", ".join(f"[[n{int(x.split()[1]):07d}]]" for x in links if x != f"Note {i}")
            + "\n"
        )
        _write(out / type_ / f"Note {i}.md", text)
        meta.append({"title": title, "path": f"{type_}/Note {i}.md", "words": body_words})
    return meta


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    generate(args.out, args.notes, args.seed)
    print(f"wrote {args.notes} notes to {args.out}")


if __name__ == "__main__":
    main()
