"""Tests of the Retrieval (AAN) TSV reader and loader."""

import numpy as np
import pytest

from lra_keras.data import retrieval
from lra_keras.data import text

pytestmark = pytest.mark.numpy_only


def reference_ids(raw, length):
    """LRA: cut to 10,000 bytes, byte + 1, cut to length, 0-pad."""
    ids = [b + 1 for b in raw[:10000]][:length]
    return ids + [0] * (length - len(ids))


def literal(paper):
    # The release stores each paper as a Python bytes literal.
    return repr(paper.encode("utf-8")).encode("ascii")


LONG_PAPER = "Attention " * 1500  # 15,000 bytes, 15,000+3 as a literal
ROWS = [
    (
        "1",
        "P05-1001",
        "W04-2002",
        literal("A paper.\nWith lines."),
        literal("Short"),
    ),
    ("0", "J93-1004", "P06-3008", literal(LONG_PAPER), literal("Ünïcode ✓")),
    ("1.0", "N03-1017", "P02-1040", literal('It\'s quoted "x"'), literal("y")),
    ("0.0", "C00-1", "C00-2", literal("t"), literal(LONG_PAPER[:20])),
]


def write_tsv(path, rows, newline="\n", trailing=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for row in rows:
        fields = [f if isinstance(f, bytes) else f.encode() for f in row]
        lines.append(b"\t".join(fields))
    data = newline.encode().join(lines) + newline.encode() + trailing.encode()
    path.write_bytes(data)
    return path


def test_constants_are_shared_with_text():
    assert retrieval.PAD_ID == text.PAD_ID == 0
    assert retrieval.MASK_ID == text.MASK_ID == 257
    assert retrieval.VOCABULARY_SIZE == text.VOCABULARY_SIZE == 258
    assert (retrieval.MAX_LENGTH, retrieval.MAX_BYTES) == (4000, 10000)


def test_read_tsv_parses_five_columns_and_encodes_both_papers(tmp_path):
    path = write_tsv(tmp_path / "new_aan_pairs.train.tsv", ROWS)
    x, y = retrieval.read_tsv(path, max_length=64)
    assert x.dtype == np.uint16 and x.shape == (4, 2, 64)
    assert y.dtype == np.int32 and y.tolist() == [1, 0, 1, 0]
    for i, row in enumerate(ROWS):
        assert x[i, 0].tolist() == reference_ids(row[3], 64)
        assert x[i, 1].tolist() == reference_ids(row[4], 64)
    # The literal syntax is kept, as LRA feeds the raw field bytes.
    assert bytes(int(v) - 1 for v in x[0, 0, :4]) == b"b'A "
    assert bytes(int(v) - 1 for v in x[0, 0, 10:14]) == b"\\nWi"


def test_default_length_is_4000_tokens_per_paper(tmp_path):
    path = write_tsv(tmp_path / "pairs.tsv", ROWS)
    x, _ = retrieval.read_tsv(path)
    assert x.shape == (4, 2, 4000)
    assert (x[1, 0] != 0).all()  # the long paper fills all 4000
    assert x[0, 1].tolist() == reference_ids(ROWS[0][4], 4000)


def test_10000_byte_cut_comes_before_the_token_cut(tmp_path):
    path = write_tsv(tmp_path / "pairs.tsv", ROWS)
    x, _ = retrieval.read_tsv(path, max_length=12000)
    assert len(ROWS[1][3]) > 12000
    real = np.count_nonzero(x[1, 0])
    assert real == 10000  # not 12000: LRA cuts at 10,000 bytes first
    assert x[1, 0].tolist() == reference_ids(ROWS[1][3], 12000)


def test_crlf_and_trailing_blank_lines(tmp_path):
    path = write_tsv(tmp_path / "a.tsv", ROWS, newline="\r\n", trailing="\n\n")
    x, y = retrieval.read_tsv(path, max_length=32)
    reference = retrieval.read_tsv(write_tsv(tmp_path / "b.tsv", ROWS), 32)
    np.testing.assert_array_equal(x, reference[0])
    np.testing.assert_array_equal(y, reference[1])
    # No newline after the last line.
    path = tmp_path / "c.tsv"
    path.write_bytes(b"1\ta\tb\tb'x'\tb'y'")
    assert retrieval.read_tsv(path, 4)[0].shape == (1, 2, 4)


def test_rows_are_encoded_across_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(retrieval, "_CHUNK_ROWS", 3)
    rows = ROWS * 2 + ROWS[:1]  # 9 rows: chunks of 3, 3, 3
    path = write_tsv(tmp_path / "pairs.tsv", rows)
    x, y = retrieval.read_tsv(path, max_length=16)
    assert x.shape == (9, 2, 16)
    for i, row in enumerate(rows):
        assert x[i, 0].tolist() == reference_ids(row[3], 16)
        assert x[i, 1].tolist() == reference_ids(row[4], 16)


@pytest.mark.parametrize(
    "bad_line, reason",
    [
        (b"1\tid1\tid2\tb'only four'", "expected 5 tab-separated fields"),
        (b"1\ta\tb\tc\td\te", "found 6"),
        (b"2\ta\tb\tb'x'\tb'y'", "label must be 0 or 1"),
        (b"yes\ta\tb\tb'x'\tb'y'", "label must be 0 or 1"),
        (b"1\ta\tb\t\tb'y'", r"empty field\(s\) \[4\]"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, bad_line, reason):
    path = tmp_path / "new_aan_pairs.test.tsv"
    good = b"0\ta\tb\tb'x'\tb'y'\n"
    path.write_bytes(good + bad_line + b"\n" + good)
    with pytest.raises(ValueError, match=reason) as error:
        retrieval.read_tsv(path)
    assert f"{path}, line 2" in str(error.value)


def test_blank_line_inside_the_data_is_an_error(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_bytes(b"0\ta\tb\tb'x'\tb'y'\n\n1\ta\tb\tb'x'\tb'y'\n")
    with pytest.raises(ValueError, match="line 2: blank line"):
        retrieval.read_tsv(path)
    path.write_bytes(b"")
    with pytest.raises(ValueError, match="no pairs"):
        retrieval.read_tsv(path)


@pytest.mark.parametrize(
    "layout",
    [
        "",
        "tsv_data",
        "lra_release/tsv_data",
        "lra_release/lra_release/tsv_data",
    ],
)
def test_load_retrieval_finds_release_layouts_and_maps_val_to_eval(
    tmp_path, layout
):
    folder = tmp_path / layout
    write_tsv(folder / "new_aan_pairs.train.tsv", ROWS)
    write_tsv(folder / "new_aan_pairs.eval.tsv", ROWS[1:3])
    write_tsv(folder / "new_aan_pairs.test.tsv", ROWS[3:])
    sizes = {
        split: retrieval.load_retrieval(
            split, tmp_path, max_length=8, progress=False
        )[0].shape
        for split in ("train", "val", "test")
    }
    assert sizes == {"train": (4, 2, 8), "val": (2, 2, 8), "test": (1, 2, 8)}


def test_missing_file_says_what_to_download_and_where(tmp_path):
    for data_dir, where in (
        (tmp_path, f"new_aan_pairs.eval.tsv not found in {tmp_path}"),
        (None, "data_dir=None"),
    ):
        with pytest.raises(FileNotFoundError) as error:
            retrieval.load_retrieval("val", data_dir)
        message = str(error.value)
        assert where in message
        assert "https://storage.googleapis.com/long-range-arena/" in message
        assert "lra_release/tsv_data/" in message and "--data-dir" in message


def test_argument_validation(tmp_path):
    with pytest.raises(ValueError, match="split"):
        retrieval.load_retrieval("eval", tmp_path)
    with pytest.raises(ValueError, match="max_length"):
        retrieval.load_retrieval("train", tmp_path, max_length=0)
