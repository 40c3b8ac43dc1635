"""What an attacker plants in a vault's index folder, for the tests of issue 48: the gadget chain
that ran code through the old unpickler (``operator.methodcaller`` reached through ``whoosh.idsets``,
then a function's globals, their ``__import__``, ``os.system``), and a newest table of contents
whose segment list is that chain."""

from __future__ import annotations

from pathlib import Path


def chain(marker: Path) -> bytes:
    """A pickle that, if loaded by an unpickler that lets it, creates the file ``marker``."""

    def name(module: str, attr: str) -> bytes:
        return f"c{module}\n{attr}\n".encode()

    def call(fn: bytes, *args: bytes) -> bytes:
        return fn + b"(" + b"".join(args) + b"tR"

    def text(s: str) -> bytes:
        return b"S" + repr(s).encode() + b"\n"

    mc = name("whoosh.idsets", "operator.methodcaller")
    scope = call(call(mc, text("__getattribute__"), text("__globals__")), name("copyreg", "_reconstructor"))
    builtins = call(call(mc, text("get"), text("__builtins__")), scope)
    importer = call(call(mc, text("get"), text("__import__")), builtins)
    os_ = call(importer, text("os"))
    return b"\x80\x04" + call(call(mc, text("system"), text(f"touch {marker}")), os_) + b"."


def plant_toc(folder: Path, marker: Path, generation: int = 999) -> Path:
    """``_MAIN_<generation>.toc`` in ``folder`` (made if missing): whoosh's header and vaultmem's
    schema, then the chain where the list of segments should be."""
    from whoosh.filedb.filestore import FileStorage
    from whoosh.filedb.structfile import StructFile
    from whoosh.index import TOC

    from vaultmem.index.bm25 import schema

    folder.mkdir(parents=True, exist_ok=True)
    write_pickle = StructFile.write_pickle
    StructFile.write_pickle = lambda self, obj, protocol=-1: self.write(chain(marker))  # type: ignore[method-assign]
    try:
        TOC(schema(), [], generation).write(FileStorage(str(folder)), "MAIN")
    finally:
        StructFile.write_pickle = write_pickle  # type: ignore[method-assign]
    return folder / f"_MAIN_{generation}.toc"
