"""Atomic writes: the destination holds the old file or the whole new one."""

import json
import os
import pathlib
import re
import time

import pytest

from lra_keras._atomic import atomic_open
from lra_keras._atomic import atomic_path
from lra_keras._atomic import write_json

pytestmark = pytest.mark.numpy_only


def test_file_appears_only_when_complete(tmp_path):
    path = tmp_path / "sub" / "dir" / "data.bin"  # parents are created
    with atomic_open(path, "wb") as f:
        f.write(b"first half ")
        f.flush()
        # Mid-write: nothing at the destination, one hidden temporary
        # beside it (same directory, so the rename is atomic).
        assert not path.exists()
        (temporary,) = path.parent.iterdir()
        assert temporary.name.startswith(".data.bin.")
        assert temporary.name.endswith(".tmp")
        f.write(b"second half")
    assert path.read_bytes() == b"first half second half"
    assert os.listdir(path.parent) == ["data.bin"]

    with atomic_open(path, "wb") as f:
        f.write(b"new")
        f.flush()
        assert path.read_bytes() == b"first half second half"
    assert path.read_bytes() == b"new"
    assert os.listdir(path.parent) == ["data.bin"]


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_failure_keeps_the_old_file_and_no_temporary(tmp_path, error):
    path = tmp_path / "rows.tsv"
    path.write_text("old\n")
    with pytest.raises(error):
        with atomic_open(path, "w", encoding="utf-8") as f:
            f.write("partial")
            raise error("interrupted")
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["rows.tsv"]

    # The same with a writer that saves to the temporary path itself.
    with pytest.raises(error):
        with atomic_path(path) as temporary:
            temporary.write_text("partial")
            raise error("interrupted")
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["rows.tsv"]

    # A block that fails before writing anything leaves nothing either.
    with pytest.raises(error):
        with atomic_path(tmp_path / "new.tsv"):
            raise error("interrupted")
    assert os.listdir(tmp_path) == ["rows.tsv"]


def test_keras_suffix_for_writers_that_check_the_extension(tmp_path):
    def save(filepath):
        # As keras.Model.save: a .keras file or an error.
        filepath = pathlib.Path(filepath)
        if filepath.suffix != ".keras":
            raise ValueError(f"not a .keras path: {filepath}")
        filepath.write_bytes(b"archive")

    path = tmp_path / "model.keras"
    with pytest.raises(ValueError, match="not a .keras path"):
        with atomic_path(path) as temporary:
            save(temporary)
    assert not path.exists() and not list(tmp_path.iterdir())
    with atomic_path(path, suffix=".keras") as temporary:
        assert temporary.parent == tmp_path
        assert temporary.name.startswith(".model.keras.")
        assert temporary.name.endswith(".tmp.keras")
        save(temporary)
    assert path.read_bytes() == b"archive"
    assert os.listdir(tmp_path) == ["model.keras"]


def test_temporaries_are_unique(tmp_path):
    with atomic_path(tmp_path / "a") as first:
        with atomic_path(tmp_path / "a") as second:
            assert first != second
            second.write_text("inner")
        first.write_text("outer")
    assert (tmp_path / "a").read_text() == "outer"


def test_write_json_is_indented_with_a_final_newline(tmp_path):
    path = tmp_path / "run" / "metrics.json"
    write_json(path, {"accuracy": 0.5, "dir": tmp_path})
    text = path.read_text()
    assert text.endswith("}\n") and '\n  "accuracy": 0.5' in text
    assert json.loads(text) == {"accuracy": 0.5, "dir": str(tmp_path)}
    assert os.listdir(path.parent) == ["metrics.json"]


def test_atomic_open_accepts_only_write_modes(tmp_path):
    for mode in ("a", "r+", "x", "w+"):
        expected = re.escape(f"Received: mode='{mode}'")
        with pytest.raises(ValueError, match=expected):
            with atomic_open(tmp_path / "f", mode):
                pass
    assert not list(tmp_path.iterdir())


def test_write_json_is_strict_json(tmp_path):
    # NaN and infinities are not JSON: they are written as null.
    path = tmp_path / "metrics.json"
    write_json(path, dict(loss=float("nan"), best=[1.0, float("inf")], n=2))
    assert json.loads(path.read_text(), parse_constant=lambda c: 1 / 0) == (
        dict(loss=None, best=[1.0, None], n=2))


def test_temporaries_of_killed_writers_are_removed(tmp_path):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; "
                           "print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    path = tmp_path / "basic_train.tsv"
    orphan = tmp_path / f".basic_train.tsv.{dead}.0a1b2c3d.tmp"
    recent = tmp_path / f".basic_train.tsv.{dead}.99999999.tmp"
    alive = tmp_path / f".basic_train.tsv.{os.getpid()}.0a1b2c3d.tmp"
    other = tmp_path / f".basic_val.tsv.{dead}.0a1b2c3d.tmp"
    old = time.time() - 3600
    for each in (orphan, recent, alive, other):
        each.write_bytes(b"partial")
        if each is not recent:
            os.utime(each, (old, old))
    with atomic_open(path, "w") as f:
        f.write("done")
    assert path.read_text() == "done"
    assert not orphan.exists()  # a dead writer's, untouched for an hour
    assert recent.exists()  # maybe another machine's, still being written
    assert alive.exists() and other.exists()
