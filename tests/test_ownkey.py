"""This install's signing key (``core.ownkey``): made once, whoever asks first."""

from __future__ import annotations

import threading

from vaultmem.core import ownkey


def test_threads_of_one_process_making_the_key_at_once_all_get_the_one_key(tmp_path, monkeypatch):
    """Two threads of one process (the CLI and its in-process service, a hook and its logger)
    made the key through one temp file named by the pid: one linked and removed it while the
    other still wrote it ("... .index.key.<pid>.tmp: No such file or directory", exit 1)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(ownkey, "_cache", {})
    start, keys, errors = threading.Barrier(8), [], []

    def make() -> None:
        start.wait()
        try:
            ownkey._create(ownkey.key_path())
            keys.append(ownkey._read(ownkey.key_path()))
        except OSError as e:
            errors.append(e)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(keys)) == 1 and keys[0]
    assert [p.name for p in ownkey.key_path().parent.iterdir()] == [ownkey.KEY_NAME]  # no temp file left
