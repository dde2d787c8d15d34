"""Atomic writes: the destination holds the old file or the whole new one."""

import json
import os
import pathlib
import re

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
