"""The two races behind a lost editor save in the sync fault test (issue 24), reproduced directly:
two processes on one note, vaultmem's checked rewrite (``wait_settled``, read, ``atomic_write``
with ``unchanged=``, as sync's move and ``vaultmem edit`` do) appending its lines, and an editor
appending its own (stat, read, stat, then a rename-save or a truncate-and-write).

    nice python benchmarks/replace_race.py [--saves 3000] [--settle 0.01] [--pause 0.01] [--code PATH]

An editor line missing at the end was overwritten by vaultmem after its check (race A, vaultmem's
loss: must be 0). A vaultmem line missing was wiped by an editor save that wrote over a file
replaced after the editor read it (race B, the editor's loss, as with any editor); the editor's
rename is an exchange, so every such save is seen and what it wiped is compared with what is
missing. ``--code`` runs another checkout's vaultmem (e.g. main before the fix).
Writes benchmarks/results/replace-race.json.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.common import WORK, parser, write_result  # noqa: E402


def _vaultmem(path: Path, saves: int, settle: float, code: str, out) -> None:
    sys.path.insert(0, code)
    from vaultmem.core.store import BeingWritten, atomic_write, wait_settled

    acked, refused = [], 0
    for i in range(saves):
        try:
            sig = wait_settled(path, "note", settle=settle, limit=1.0)
            text = path.read_text(encoding="utf-8")
            line = f"vaultmem line {i}."
            atomic_write(path, text + line + "\n", unchanged=sig, label="note", durable=False)
            acked.append(line)
        except BeingWritten:
            refused += 1
    import vaultmem

    out.put(("vaultmem", acked, refused, [str(Path(vaultmem.__file__).parent.parent)]))


def _editor(path: Path, saves: int, mode: str, pause: float, seed: int, out) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    rng = random.Random(seed)
    acked, wiped, overwrote = [], [], 0
    for i in range(saves):
        line = f"editor line {i}."
        for _ in range(50):
            before = os.stat(path)
            text = path.read_text(encoding="utf-8")
            now = os.stat(path)
            if (now.st_ino, now.st_size, now.st_mtime_ns) != (
                before.st_ino,
                before.st_size,
                before.st_mtime_ns,
            ):
                continue
            new = text + line + "\n"
            if mode == "rename":
                tmp = path.with_name(".note.editor-tmp")
                tmp.write_text(new, encoding="utf-8")
                if libc.renameat2(-100, os.fsencode(tmp), -100, os.fsencode(path), 2) != 0:
                    raise OSError(ctypes.get_errno(), "renameat2")
                gone = os.stat(tmp)
                if (gone.st_ino, gone.st_size, gone.st_mtime_ns) != (
                    now.st_ino,
                    now.st_size,
                    now.st_mtime_ns,
                ):
                    overwrote += 1
                    wiped += sorted(set(tmp.read_text(encoding="utf-8").splitlines()) - set(new.splitlines()))
                tmp.unlink()
            else:
                with open(path, "w", encoding="utf-8") as f:
                    overwrote += os.fstat(f.fileno()).st_ino != now.st_ino
                    f.write(new)
            acked.append(line)
            break
        time.sleep(rng.uniform(0, 2 * pause))
    out.put(("editor", acked, overwrote, wiped))


def run(saves: int, mode: str, settle: float, pause: float, code: str, seed: int) -> dict:
    WORK.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="replace-race-", dir=WORK) as tmp:
        note = Path(tmp) / "note.md"
        note.write_text("# Note\n", encoding="utf-8")
        out = mp.Queue()
        procs = [mp.Process(target=_vaultmem, args=(note, saves, settle, code, out)),
                 mp.Process(target=_editor, args=(note, saves, mode, pause, seed, out))]  # fmt: skip
        started = time.perf_counter()
        for p in procs:
            p.start()
        res = {name: rest for name, *rest in (out.get(), out.get())}
        for p in procs:
            p.join()
        final = set(note.read_text(encoding="utf-8").splitlines())
    vm_acked, refused, (imported,) = res["vaultmem"]
    ed_acked, overwrote, wiped = res["editor"]
    vm_lost = [ln for ln in vm_acked if ln not in final]
    return {"mode": mode, "settle": settle, "pause": pause, "code": imported, "seconds": round(time.perf_counter() - started, 1),
            "editor_saves": len(ed_acked), "editor_lines_lost_A": sum(ln not in final for ln in ed_acked),
            "vaultmem_writes": len(vm_acked), "vaultmem_refused": refused,
            "editor_overwrote_newer_B": overwrote, "vaultmem_lines_lost": len(vm_lost),
            "vaultmem_lines_lost_not_wiped_by_the_editor": len(set(vm_lost) - set(wiped)) if mode == "rename" else None}  # fmt: skip


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--saves", type=int, default=3000, help="saves by each side (default 3000)")
    ap.add_argument(
        "--settle", type=float, default=0.01, help="vaultmem's settle window in seconds (default 0.01)"
    )
    ap.add_argument(
        "--pause", type=float, default=0.01, help="mean pause of the editor between saves (default 0.01)"
    )
    ap.add_argument("--modes", default="rename", help="editor save modes, rename and/or truncate (default rename; "
                    "a truncate-and-write editor stalled longer than --settle between truncating and writing "
                    "loses its save whatever vaultmem does: the settle window's limit, not these races)")  # fmt: skip
    ap.add_argument(
        "--code", default=str(HERE.parent), help="checkout whose vaultmem runs (default this one)"
    )
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rows = [run(args.saves, m, args.settle, args.pause, str(Path(args.code).resolve()), args.seed)
            for m in args.modes.split(",")]  # fmt: skip
    for row in rows:
        print(row)
    path = write_result("replace-race", {"runs": rows})
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
