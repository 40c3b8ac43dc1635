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
