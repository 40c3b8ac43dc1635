"""Every value of `.vaultmem.toml` (synced between clones on purpose) is checked: a bad one is a
one-line error naming the key in every command, never a traceback; doctor reports an exclude
that hides every note."""

from __future__ import annotations

import json

import pytest
from helpers import vaultmem

from vaultmem.core.config import DEFAULTS, check

BAD = [
    ('[recall]\nbm25_weight = "high"\n', "recall.bm25_weight"),
    ("[recall]\nbm25_weight = nan\n", "recall.bm25_weight"),
    ("[recall]\nbm25_weight = inf\n", "recall.bm25_weight"),
    ("[embedding]\nbatch_size = 0\n", "embedding.batch_size"),
    ("[embedding]\nbatch_size = 2.5\n", "embedding.batch_size"),
    ("[vault]\nexclude = 5\n", "vault.exclude"),
    ("[vault]\nexclude = [1, 2]\n", "vault.exclude"),
    ("recall = [1, 2]\n", "[recall]"),
    ('[recall]\ncombine = "magic"\n', "recall.combine"),
    ("[recall]\nk = -3\n", "recall.k"),
    ("[recall]\nsubject = 1\n", "recall.subject"),
    ("[folders]\ndecision = 7\n", "folders.decision"),
    ("[lifecycle]\nduplicate = 2.5\n", "lifecycle.duplicate"),
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
]


def _vault(tmp_path, capsys, text: str):
    root = tmp_path / "v"
    assert vaultmem(capsys, "init", str(root)).returncode == 0
    (root / "Note.md").write_text("---\ntitle: Note\n---\nSome text about otters.\n")
    cfg = root / ".vaultmem.toml"
    cfg.write_text(text + '\n[embedding]\nmodel = "none"\n' if "[embedding]" not in text else text.replace(
        "[embedding]\n", '[embedding]\nmodel = "none"\n'))  # fmt: skip
    return root


@pytest.mark.parametrize("text,key", BAD[:3] + BAD[5:6] + BAD[7:8] + BAD[-1:])
def test_a_bad_value_is_a_one_line_error_naming_the_key(tmp_path, capsys, text, key):
    """Through the console entry, in this process (an uncaught error fails the test as a
    traceback would fail it in a process)."""
    root = _vault(tmp_path, capsys, text)
    for args in (["recall", "otters"], ["doctor"]):
        proc = vaultmem(capsys, *args, "--vault", str(root))
        assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and key in lines[0] and ".vaultmem.toml" in lines[0], proc.stderr


@pytest.mark.parametrize("text,key", BAD)
def test_check_names_each_bad_key(text, key):
    import tomllib

    try:
        data = tomllib.loads(text)
    except RecursionError:
        return  # read_file reports it (the CLI test above)
    problem = check(data)
    assert problem and key in problem, problem


def test_the_defaults_and_good_values_pass():
    assert check(DEFAULTS) is None
    assert check({"recall": {"bm25_weight": 1, "k": 3, "combine": "learned"}, "vault": {"exclude": ["drafts/"]},
                  "embedding": {"batch_size": 16}, "folders": {"recipe": "recipes"}, "future": {"x": 1}}) is None  # fmt: skip


def test_doctor_reports_an_exclude_hiding_every_note(tmp_path, capsys):
    root = _vault(tmp_path, capsys, '[vault]\nexclude = ["*"]\n')
    proc = vaultmem(capsys, "doctor", "--json", "--vault", str(root))
    found = [f for f in json.loads(proc.stdout)["findings"] if f["check"] == "exclude_hides_all"]
    assert proc.returncode != 0 and found and "hides every note" in found[0]["message"], proc.stdout
