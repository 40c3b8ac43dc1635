"""README's first recall (issue 38): the memory service answers a vault's first index from
keywords at once and fills its vectors in behind, through the real service (the small hash
embedder in its processes, ``service_site``)."""

from __future__ import annotations

import json
import sqlite3
import time

from test_service import QUERY, cli  # noqa: F401  (fixture)

from vaultmem.index.layout import index_dir


def test_a_first_index_answers_from_keywords_and_fills_the_vectors_in_behind(cli, demo_copy):  # noqa: F811
    vault = ["--vault", str(demo_copy)]
    first = cli("recall", QUERY, *vault)
    assert "keywords first: this vault's first index" in first.stderr, first.stderr
    assert first.stdout.splitlines()[0].startswith(" 1. Use Postgres advisory locks for job leasing"), (
        first.stdout
    )
    made = cli(
        "remember", "fact", "Otters nap at noon", "The harbour otters nap at noon.", *vault
    )  # meanwhile
    assert "facts/Otters nap at noon.md" in made.stdout
    assert cli("wake", "--budget", "300", *vault).stdout.startswith("[MEMORY ")
    deadline = time.monotonic() + 120
    while True:  # later recalls answer at once (keywords) until the vectors are in, then hybrid
        later = json.loads(cli("recall", QUERY, "--json", *vault).stdout)
        if not later.get("degraded") or time.monotonic() > deadline:
            break
        assert later["degraded"] == "first-index"
        time.sleep(0.5)
    assert (
        not later.get("degraded")
        and later["results"][0]["title"] == "Use Postgres advisory locks for job leasing"
    )
    db = sqlite3.connect(index_dir(demo_copy) / "manifest.db")
    try:
        model = db.execute("SELECT value FROM state WHERE key='model'").fetchone()[0]
        chunks, vectors = (
            db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("chunks", "embeddings")
        )
    finally:
        db.close()
    assert model != "none" and chunks >= 69 and vectors >= 1
    status = json.loads(cli("status", "--json", *vault).stdout)
    assert status["in_sync"] and status["notes_indexed"] == 69
