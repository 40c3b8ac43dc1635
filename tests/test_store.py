"""Safe file I/O: names, paths, atomic and guarded writes, trash, vault discovery and init."""

from __future__ import annotations

import os
import stat
import unicodedata
from pathlib import Path

import pytest

from vaultmem.core import store as storemod
from vaultmem.core.errors import Conflict, NoteParseError, VaultError, VaultNotFound
from vaultmem.core.note import content_hash
from vaultmem.core.scaffold import init_vault
from vaultmem.core.store import Store, atomic_write, find_vault, new_id, safe_filename


@pytest.fixture
def store(tmp_path) -> Store:
    root = tmp_path / "vault"
    root.mkdir()
    return Store(root)


def write(root: Path, rel: str, text: str = "x\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def files(root: Path) -> list[str]:
    """Every file under root (temp files included), vault-relative."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink())


# ------------------------------------------------------------------ safe names


@pytest.mark.parametrize(
    "title, expected",
    [
        ("Use Redis locks", "Use Redis locks"),
        ("Project: Tidewater", "Project - Tidewater"),
        ("a/b\\c", "a b c"),
        ("../../etc/passwd", "etc passwd"),
        ('What * is ? "this" <x> | y', "What is this x y"),
        ("C# and [[links]] ^block", "C and links block"),
        ("tab\there\nnewline\x00nul\x7f\x85", "tab here newline nul"),
        ("  .hidden.  ", "hidden"),
        ("a..b", "a.b"),
        ("CON", "note CON"),
        ("nul", "note nul"),
        ("com1.backup", "note com1.backup"),
        ("console", "console"),
        ("", "note"),
        ("...", "note"),
        (":", "-"),
    ],
)
def test_safe_filename(title, expected):
    assert safe_filename(title) == expected


def test_safe_filename_keeps_unicode_in_nfc():
    decomposed = unicodedata.normalize("NFD", "Café 日本語 🚤")
    assert safe_filename(decomposed) == "Café 日本語 🚤"
    assert unicodedata.is_normalized("NFC", safe_filename(decomposed))


@pytest.mark.parametrize("char", ["x", "界", "🚤"])
def test_long_titles_are_truncated_to_a_safe_byte_length(char, tmp_path):
    name = safe_filename(char * 400)
    assert 0 < len(name.encode("utf-8")) <= 180 and set(name) == {char}
    atomic_write(tmp_path / f"{name} 99.md", "fits")  # the name and its temp file fit on disk


# ------------------------------------------------------------------ unique paths


def test_unique_path_adds_numbers_case_insensitively(store):
    assert store.unique_path("decisions", "Use Redis") == "decisions/Use Redis.md"
    write(store.root, "decisions/use redis.md")
    assert store.unique_path("decisions", "Use Redis") == "decisions/Use Redis 2.md"
    write(store.root, "decisions/USE REDIS 2.md")
    assert store.unique_path("/decisions/", "Use Redis") == "decisions/Use Redis 3.md"


def test_unique_path_at_root_and_with_unsafe_title(store):
    assert store.unique_path("", "a/../b: c") == "a . b - c.md"


def test_unique_path_refuses_folders_outside(store):
    with pytest.raises(VaultError):
        store.unique_path("../elsewhere", "Title")


# ------------------------------------------------------------------ abspath


def test_abspath_inside(store):
    assert store.abspath("a/b.md") == store.root / "a" / "b.md"
    assert store.abspath("a/../b.md") == store.root / "b.md"


@pytest.mark.parametrize("rel", ["../x.md", "a/../../x.md", "/etc/passwd", "", "a\x00b.md"])
def test_abspath_refuses_paths_leading_out(store, rel):
    with pytest.raises(VaultError):
        store.abspath(rel)


def test_abspath_refuses_symlinks_out_of_the_vault(store, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (store.root / "link").symlink_to(outside, target_is_directory=True)
    (store.root / "file.md").symlink_to(write(outside, "secret.md"))
    for rel in ("link/x.md", "file.md"):
        with pytest.raises(VaultError, match="outside"):
            store.abspath(rel)
    with pytest.raises(VaultError):
        store.create("link/new.md", "x")
    assert not (outside / "new.md").exists()


def test_symlink_out_of_the_vault_is_not_listed(store, tmp_path):
    write(store.root, "real.md")
    (store.root / "escape.md").symlink_to(write(tmp_path, "outside.md"))
    (store.root / "inside.md").symlink_to(store.root / "real.md")
    assert store.list_paths() == ["inside.md", "real.md"]
    assert [p for p in ("escape.md", "inside.md", "real.md", "../real.md") if store.is_note(p)] == [
        "inside.md",
        "real.md",
    ]


# ------------------------------------------------------------------ atomic writes and the guard


def test_atomic_write_content_and_no_temp_files(tmp_path):
    path = tmp_path / "sub" / "n.md"
    atomic_write(path, "héllo\r\n")
    atomic_write(path, "second")
    assert path.read_bytes() == b"second"
    assert files(tmp_path) == ["sub/n.md"]


def test_atomic_write_keeps_permissions(tmp_path):
    path = tmp_path / "n.md"
    atomic_write(path, "new", create_only=True)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    path.chmod(0o640)
    atomic_write(path, "changed")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_create_never_clobbers(store):
    assert store.create("facts/A.md", "first") == "facts/A.md"
    with pytest.raises(Conflict):
        store.create("facts/A.md", "second")
    assert (store.root / "facts/A.md").read_text() == "first"
    assert files(store.root) == ["facts/A.md"]


def test_create_without_hard_links_still_refuses_to_clobber(store, monkeypatch):
    def no_links(src, dst):
        raise PermissionError("hard links not supported")

    monkeypatch.setattr(storemod.os, "link", no_links)
    store.create("A.md", "first")
    with pytest.raises(Conflict):
        store.create("A.md", "second")
    assert (store.root / "A.md").read_text() == "first"
    assert files(store.root) == ["A.md"]


def test_replace_with_the_hash_that_was_read(store):
    write(store.root, "n.md", "old")
    store.replace("n.md", "new", content_hash("old"))
    assert (store.root / "n.md").read_text() == "new"
    assert files(store.root) == ["n.md"]


def test_replace_refuses_when_the_file_changed_since_read(store):
    write(store.root, "n.md", "old")
    seen = content_hash(store.read_text("n.md"))
    write(store.root, "n.md", "changed by someone else")
    with pytest.raises(Conflict, match="changed on disk"):
        store.replace("n.md", "mine", seen)
    assert (store.root / "n.md").read_text() == "changed by someone else"
    assert files(store.root) == ["n.md"]


def test_replace_refuses_when_the_file_is_gone(store):
    with pytest.raises(Conflict):
        store.replace("gone.md", "x", content_hash("x"))
    assert files(store.root) == []


def test_failed_write_leaves_no_temp_file_and_the_old_content(store, monkeypatch):
    write(store.root, "n.md", "old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(storemod.os, "replace", broken_replace)
    monkeypatch.setattr(storemod, "_exchange", broken_replace)  # a checked rewrite swaps (renameat2)
    with pytest.raises(OSError, match="disk full"):
        store.replace("n.md", "new", content_hash("old"))
    assert (store.root / "n.md").read_text() == "old"
    assert files(store.root) == ["n.md"]


def test_byte_order_mark_survives_a_rewrite(store):
    write(store.root, "n.md", "\ufeff# Title\n")
    text = store.read_text("n.md")
    store.replace("n.md", text + "more\n", content_hash(text))
    assert (store.root / "n.md").read_bytes() == b"\xef\xbb\xbf# Title\nmore\n"


def test_read_refuses_binary_and_non_utf8(store):
    (store.root / "bin.md").write_bytes(b"abc\x00def")
    (store.root / "latin.md").write_bytes("caf\xe9".encode("latin-1"))
    for rel in ("bin.md", "latin.md"):
        with pytest.raises(NoteParseError) as err:
            store.read(rel)
        assert err.value.path == rel


def test_read_fills_type_from_folder(tmp_path):
    root = tmp_path / "v"
    write(root, "decisions/A.md", "# A\n")
    write(root, "decisions/B.md", "---\ntype: fact\n---\n")
    s = Store(root, folder_types={"decisions": "decision"})
    assert (s.read("decisions/A.md").type, s.read("decisions/B.md").type) == ("decision", "fact")


# ------------------------------------------------------------------ trash


def test_trash_keeps_folders_and_makes_names_unique(store):
    for _ in range(3):
        write(store.root, "decisions/sub/Note.md", "x")
        store.trash("decisions/sub/Note.md")
    assert files(store.root) == [
        ".trash/.vaultmem-trash.jsonl",  # where each came from and when (vaultmem restore)
        ".trash/decisions/sub/Note 2.md",
        ".trash/decisions/sub/Note 3.md",
        ".trash/decisions/sub/Note.md",
    ]


def test_trash_returns_the_new_path_and_hides_the_note(store):
    write(store.root, "Top.md", "x")
    assert store.trash("Top.md") == ".trash/Top.md"
    assert store.list_paths() == []


def test_trash_moves_a_symlink_not_its_target(store):
    target = write(store.root, "real/Target.md", "keep me")
    (store.root / "Link.md").symlink_to(target)
    store.trash("Link.md")
    assert target.read_text() == "keep me"
    assert (store.root / ".trash/Link.md").is_symlink()


def test_trash_refuses_paths_outside(store):
    with pytest.raises(VaultError):
        store.trash("../x.md")


# ------------------------------------------------------------------ ids


def test_new_id_format_and_uniqueness():
    ids = {new_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(len(i) == 8 and i.isalnum() and i.islower() and not i.isdigit() for i in ids)
    assert not any(set(i) & set("ilou") for i in ids)


# ------------------------------------------------------------------ vault discovery


def test_find_vault_explicit_path(tmp_path):
    assert find_vault(tmp_path) == tmp_path.resolve()
    with pytest.raises(VaultNotFound, match="no vault folder"):
        find_vault(tmp_path / "missing")


def test_find_vault_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("VAULTMEM_VAULT", str(tmp_path))
    assert find_vault(cwd=tmp_path / "anywhere") == tmp_path.resolve()
    other = tmp_path / "other"
    other.mkdir()
    assert find_vault(other) == other.resolve()  # an explicit path wins


def test_find_vault_walks_up_to_the_state_folder(empty_vault):
    nested = empty_vault / "decisions" / "deeper"
    nested.mkdir(parents=True)
    assert find_vault(cwd=nested) == empty_vault.resolve()


def test_find_vault_walks_up_from_the_current_folder(empty_vault, monkeypatch):
    monkeypatch.chdir(empty_vault / ".vaultmem")
    assert find_vault() == empty_vault.resolve()


def test_no_vault_found_says_what_to_do(tmp_path):
    with pytest.raises(VaultNotFound) as err:
        find_vault(cwd=tmp_path)
    assert "--vault" in str(err.value) and "VAULTMEM_VAULT" in str(err.value) and "init" in str(err.value)


# ------------------------------------------------------------------ init


def test_init_creates_state_config_readme_and_a_state_folder_that_ignores_itself(tmp_path):
    root = tmp_path / "new" / "vault"
    created = init_vault(root)
    assert (root / ".vaultmem.toml").is_file()
    assert "vaultmem" in (root / "README.md").read_text().lower()
    assert (root / ".vaultmem/.gitignore").read_text() == "*\n" and not (root / ".gitignore").exists()
    assert created == [".vaultmem/", ".vaultmem.toml", "README.md"]


def test_init_is_idempotent(tmp_path):
    init_vault(tmp_path)
    before = {p: (tmp_path / p).read_bytes() for p in files(tmp_path)}
    assert init_vault(tmp_path) == []
    assert {p: (tmp_path / p).read_bytes() for p in files(tmp_path)} == before


def test_init_never_changes_the_readme_config_or_gitignore(tmp_path):
    """Before (issue 48): init and `vaultmem index` appended .vaultmem/ and .vaultmem-usage/ to the
    folder's own .gitignore, a user's file changed unasked."""
    write(tmp_path, "README.md", "my own readme\n")
    write(tmp_path, ".vaultmem/config.toml", "# mine\n")
    write(tmp_path, ".gitignore", "*.log")
    created = init_vault(tmp_path)
    assert (tmp_path / "README.md").read_text() == "my own readme\n"
    assert (tmp_path / ".vaultmem/config.toml").read_text() == "# mine\n"
    assert (tmp_path / ".gitignore").read_text() == "*.log"
    assert created == []


def test_config_lives_beside_the_notes_an_older_one_is_still_read(tmp_path, fake_model):
    """``.vaultmem/`` can be deleted without losing settings: the config is ``.vaultmem.toml``;
    a vault made before keeps reading ``.vaultmem/config.toml``; both at once is refused."""
    from typer.testing import CliRunner

    from vaultmem.cli.app import app
    from vaultmem.core import config

    write(tmp_path, ".vaultmem/config.toml", "[recall]\nk = 3\n")
    assert config.load(tmp_path)["recall"]["k"] == 3
    write(tmp_path, ".vaultmem.toml", "[recall]\nk = 4\n")
    result = CliRunner().invoke(app, ["recall", "x", "--vault", str(tmp_path)])
    assert result.exit_code == 2 and result.stderr.startswith("vaultmem: two config files:")
    (tmp_path / ".vaultmem" / "config.toml").unlink()
    import shutil

    shutil.rmtree(tmp_path / ".vaultmem")
    assert config.load(tmp_path)["recall"]["k"] == 4
    assert init_vault(tmp_path) == [".vaultmem/", "README.md"]
    assert (tmp_path / ".vaultmem.toml").read_text() == "[recall]\nk = 4\n"


def test_a_state_folder_that_lost_its_gitignore_gets_it_back_and_one_of_the_users_is_kept(tmp_path):
    init_vault(tmp_path)
    (tmp_path / ".vaultmem/.gitignore").unlink()
    init_vault(tmp_path)
    assert (tmp_path / ".vaultmem/.gitignore").read_text() == "*\n"
    write(tmp_path, ".vaultmem/.gitignore", "index/\n")
    init_vault(tmp_path)
    assert (tmp_path / ".vaultmem/.gitignore").read_text() == "index/\n"


def test_init_refuses_a_file(tmp_path):
    write(tmp_path, "file.md")
    with pytest.raises(VaultError, match="not a folder"):
        init_vault(tmp_path / "file.md")
    write(tmp_path, "v/.vaultmem")
    with pytest.raises(VaultError, match="not a folder"):
        init_vault(tmp_path / "v")


def test_a_note_that_keeps_changing_while_it_is_swapped_is_kept_beside_whole(tmp_path, monkeypatch):
    """Someone appending to whatever file is at the note's path before every swap: vaultmem swaps
    back and forth a bounded number of times, then keeps the file it took off beside the note;
    every line the person wrote is in one of the two files and no temp file is left."""
    import time as _time

    from vaultmem.core.store import BeingWritten, wait_settled

    note = tmp_path / "n.md"
    note.write_text("start\n")
    past = _time.time() - 10
    os.utime(note, (past, past))
    sig = wait_settled(note, "n.md")
    real, saves = storemod._exchange, []

    def busy(a, b):
        saves.append(f"save {len(saves)}")
        with open(b, "a") as f:
            f.write(saves[-1] + "\n")
        return real(a, b)

    monkeypatch.setattr(storemod, "_exchange", busy)
    with pytest.raises(BeingWritten, match=r"kept as n \(kept 1\)\.md"):
        atomic_write(note, "vaultmem's text\n", unchanged=sig)
    assert files(tmp_path) == ["n (kept 1).md", "n.md"]
    text = note.read_text() + (tmp_path / "n (kept 1).md").read_text()
    assert len(saves) > 2 and all(s in text for s in saves) and "start" in text
