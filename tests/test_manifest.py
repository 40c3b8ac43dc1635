def test_record_fields_follow_the_column_order():
    """``Record.from_row`` builds records by position, so the two orders must agree."""
    from dataclasses import fields

    from vaultmem.index.manifest import NOTE_COLUMNS, Record

    assert tuple(f.name for f in fields(Record)) == NOTE_COLUMNS
