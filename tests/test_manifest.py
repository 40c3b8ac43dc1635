def test_record_fields_follow_the_column_order():
    """``Record.from_row`` builds records by position, so the two orders must agree."""
    from dataclasses import fields

    from vaultmem.index.manifest import NOTE_COLUMNS, Record

    assert tuple(f.name for f in fields(Record)) == NOTE_COLUMNS


def test_a_read_of_a_manifest_a_first_index_just_created_waits_for_its_schema(tmp_path, monkeypatch):
    """Issue 45's seam: ``status`` polled while a first index began read the new, still empty
    manifest.db and said "not a vaultmem index (no such table: state)", exit 1. A read now waits
    for the schema; a database that never gets one is still refused in one line."""
    import threading

    import pytest

    from vaultmem.core.errors import VaultError
    from vaultmem.index import manifest as mf

    path = tmp_path / "manifest.db"
    path.touch()  # the file exists, the schema not yet (what sqlite3.connect leaves at first)
    looked = threading.Event()
    real_empty = mf.Manifest._empty

    def empty(self):  # the reader has seen the empty database once: the writer may go on
        looked.set()
        return real_empty(self)

    writer = threading.Thread(target=lambda: looked.wait(10) and mf.Manifest(path).close())
    monkeypatch.setattr(mf.Manifest, "_empty", empty)
    writer.start()
    try:
        reader = mf.Manifest(path, readonly=True)
    finally:
        writer.join()
    assert reader.get("schema") == mf.SCHEMA_VERSION
    reader.close()
    other = tmp_path / "other.db"
    other.touch()
    monkeypatch.setattr(mf, "SCHEMA_WAIT", 0.0)
    with pytest.raises(VaultError, match="not a vaultmem index"):
        mf.Manifest(other, readonly=True)


def test_a_manifest_another_opener_is_creating_is_waited_for_never_set_aside(tmp_path, monkeypatch):
    """The big vault's flake (``vaultmem index --json`` said 240 added of 120 notes): two openers
    of a new manifest at once (the service's ``status`` and its watcher's first index) and the
    second saw the first's tables before its claim (or its switch to WAL said "database is
    locked"), took the database for foreign and set it aside; the first index went on in the set
    aside file and its notes were counted again in the new one. The tables and the claim now come
    in one transaction, and an opener waits for another's."""
    import threading

    from vaultmem.index import manifest as mf

    path = tmp_path / "manifest.db"
    signing, go = threading.Event(), threading.Event()
    real_sign = mf.ownkey.sign

    def sign(body):  # the first opener pauses in its claim, its tables written
        if not signing.is_set():
            signing.set()
            go.wait(10)
        return real_sign(body)

    monkeypatch.setattr(mf.ownkey, "sign", sign)
    opened: dict[str, mf.Manifest] = {}
    first = threading.Thread(target=lambda: opened.setdefault("first", mf.Manifest(path)))
    second = threading.Thread(target=lambda: opened.setdefault("second", mf.Manifest(path)))
    first.start()
    assert signing.wait(10)
    second.start()
    second.join(0.3)  # the second opener's turn while the first is half-way (it waits now)
    go.set()
    first.join(30)
    second.join(30)
    assert not list(tmp_path.glob("*.foreign*"))
    assert opened["first"].get("nonce") == opened["second"].get("nonce") is not None
    assert opened["second"]._claimed()
    for manifest in opened.values():
        manifest.close()


def test_a_vault_opens_its_manifest_once_when_two_threads_ask_at_once(empty_vault, open_vault, monkeypatch):
    """The service asked a vault's manifest from a request thread (``status``) while its watcher
    opened it for the first index: two Manifests of one file, the second setting the first
    aside. A vault now opens its indexes once, whichever thread asks first."""
    import threading

    from vaultmem import vault as vaultmod

    inside, go = threading.Event(), threading.Event()
    made: list[object] = []
    real = vaultmod.Manifest

    def manifest(path, readonly=False):
        made.append(path)
        if len(made) == 1:  # the first opener is held on its way in
            inside.set()
            go.wait(10)
        return real(path, readonly=readonly)

    monkeypatch.setattr(vaultmod, "Manifest", manifest)
    vault = open_vault(empty_vault)
    got: dict[str, object] = {}
    first = threading.Thread(target=lambda: got.setdefault("first", vault.manifest))
    second = threading.Thread(target=lambda: got.setdefault("second", vault.manifest))
    first.start()
    assert inside.wait(10)
    second.start()
    second.join(0.3)  # the second thread's turn while the first opens it (it waits now)
    go.set()
    first.join(30)
    second.join(30)
    assert len(made) == 1 and got["first"] is got["second"] is vault.manifest
