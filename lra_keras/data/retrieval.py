"""Retrieval (AAN): do two papers cite each other? Byte level, two towers.

Each example is a pair of papers of the ACL Anthology Network; the label
is 1 when they are linked by a citation. Both documents are encoded like
the Text task (UTF-8 byte + 1, `PAD_ID = 0`, constants shared with
`text.py`): each is cut to its first 10,000 bytes, then to `max_length`
tokens (4000 in LRA), and right-padded, giving `x` of shape `(N, 2, L)`.

File format (the LRA release, `lra_release/tsv_data/`): files
`new_aan_pairs.{train,eval,test}.tsv` (about 147k / 18k / 17k pairs),
no header, one pair per line, five tab-separated columns `label id1 id2
text1 text2`. LRA reads them with `tf.data.experimental.make_csv_dataset`
with `field_delim='\\t'`, `use_quote_delim=False` (quotes are ordinary
characters) and column types float32, string x 4, then casts the label to
int32. This reader does the same: it splits on tabs only, accepts labels
that parse as the numbers 0 or 1 (`0`, `1`, `1.0`, ...) and requires five
non-empty fields, as `make_csv_dataset` does for columns without defaults.

The text fields of the release hold each paper as a Python bytes literal
(`b'...'`, with escapes such as `\\n` spelled out); LRA feeds these raw
field bytes, literal syntax included, to the byte encoder, and so does this
reader. The 10,000-byte cut (`s.numpy()[:10000]`) therefore applies to the
literal text, before the `max_length` cut.

LRA batches its val and test sets with `drop_remainder=True`, which drops
the last partial batch; this reader returns every row.

References:
- Tay et al., "Long Range Arena: A Benchmark for Efficient Transformers",
  ICLR 2021, https://arxiv.org/abs/2011.04006
- Radev et al., "The ACL Anthology Network Corpus", 2013,
  https://doi.org/10.1007/s10579-012-9211-2

Original files read: `lra_benchmarks/matching/input_pipeline.py` (reader,
10,000-byte cut) and `configs/base_match_config.py` (`max_length = 4000`,
`tokenizer = 'char'`) of google-research/long-range-arena, and its
`dataset_setup.sh` (release layout); the `AAN` class of
`src/dataloaders/lra.py` in state-spaces/s4.
"""

import pathlib

import numpy as np

from lra_keras.data._checks import check_int as _check_int
from lra_keras.data.text import MASK_ID
from lra_keras.data.text import PAD_ID
from lra_keras.data.text import VOCABULARY_SIZE
from lra_keras.data.text import fill_byte_ids

__all__ = [
    "MASK_ID",
    "PAD_ID",
    "VOCABULARY_SIZE",
    "NUM_CLASSES",
    "MAX_LENGTH",
    "MAX_BYTES",
    "read_tsv",
    "load_retrieval",
]

NUM_CLASSES = 2
MAX_LENGTH = 4000
# LRA cuts each document to 10,000 bytes before encoding.
MAX_BYTES = 10000

_FILE_NAMES = {
    "train": "new_aan_pairs.train.tsv",
    "val": "new_aan_pairs.eval.tsv",
    "test": "new_aan_pairs.test.tsv",
}
_RELEASE_URL = "https://storage.googleapis.com/long-range-arena/lra_release.gz"
# Lines parsed before their tokens are written to `x`: bounds the memory
# held as Python bytes objects.
_CHUNK_ROWS = 4096


def read_tsv(path, max_length=MAX_LENGTH, progress=False):
    """Reads an AAN pairs file of the LRA release.

    Args:
        path: str or path-like. A `new_aan_pairs.<split>.tsv` file.
        max_length: int. Tokens per document, after the 10,000-byte cut.
            Defaults to 4000.
        progress: bool. Whether to show a progress bar. Defaults to False.

    Returns:
        A tuple `(x, y)`: `x` uint16 of shape `(N, 2, max_length)`, ids
        `byte + 1` right-padded with `PAD_ID`, `x[:, 0]` the first paper
        (`text1`) and `x[:, 1]` the second; `y` int32 `(N,)` in {0, 1}.

    Raises:
        ValueError: if a line does not have 5 tab-separated non-empty
            fields or its label is not 0 or 1; the message names the file
            and line.
    """
    _check_int("max_length", max_length, minimum=1)
    path = pathlib.Path(path)
    keep = min(MAX_BYTES, max_length)
    # One pass to size `x` (a line count is an upper bound: blank lines
    # at the end are trimmed), so the largest array is never copied.
    num_lines = _count_lines(path)
    x = np.zeros((num_lines, 2, max_length), np.uint16)
    y = np.zeros(num_lines, np.int32)
    first, second = [], []
    num_rows = 0
    blank_line = None

    def flush():
        begin = num_rows - len(first)
        fill_byte_ids(x[begin:num_rows, 0], first)
        fill_byte_ids(x[begin:num_rows, 1], second)
        first.clear()
        second.clear()

    with open(path, "rb") as f:
        lines = enumerate(f, start=1)
        if progress:
            from tqdm.auto import tqdm

            lines = tqdm(lines, total=num_lines, desc=path.name, unit="pair")
        for line_number, line in lines:
            line = line.rstrip(b"\n").removesuffix(b"\r")
            if not line.strip():
                blank_line = blank_line or line_number
                continue
            if blank_line is not None:
                _fail(path, blank_line, "blank line before the data ends", b"")
            fields = line.split(b"\t")
            if len(fields) != 5:
                _fail(
                    path,
                    line_number,
                    "expected 5 tab-separated fields (label, id1, id2, "
                    f"text1, text2), found {len(fields)}",
                    line,
                )
            if not all(fields):
                empty = [i + 1 for i, field in enumerate(fields) if not field]
                _fail(path, line_number, f"empty field(s) {empty}", line)
            y[num_rows] = _parse_label(path, line_number, fields[0], line)
            # The byte cut, then the token cut, as LRA does.
            first.append(fields[3][:MAX_BYTES][:keep])
            second.append(fields[4][:MAX_BYTES][:keep])
            num_rows += 1
            if len(first) == _CHUNK_ROWS:
                flush()
    flush()
    if num_rows == 0:
        raise ValueError(f"AAN file {path} holds no pairs.")
    return x[:num_rows], y[:num_rows]


def _count_lines(path):
    count = 0
    last = b"\n"
    with open(path, "rb") as f:
        while block := f.read(1 << 24):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")  # a last line without a newline


def _parse_label(path, line_number, field, line):
    try:
        value = float(field)
    except ValueError:
        value = None
    if value not in (0.0, 1.0):
        _fail(path, line_number, "the label must be 0 or 1", line)
    return int(value)


def _fail(path, line_number, reason, line):
    text = line.decode("utf-8", errors="replace")
    preview = text if len(text) <= 80 else text[:77] + "..."
    raise ValueError(
        f"Malformed AAN TSV {path}, line {line_number}: {reason}. "
        f"Received: {preview!r}"
    )


def load_retrieval(split, data_dir=None, max_length=MAX_LENGTH, progress=True):
    """Loads a split of the LRA Retrieval task (AAN document pairs).

    Reads `new_aan_pairs.{train,eval,test}.tsv` (val reads `eval`) from
    `data_dir`, or from `data_dir/tsv_data`, `data_dir/lra_release/tsv_data`
    or `data_dir/lra_release/lra_release/tsv_data` (the release archive
    nests the folder once or twice depending on how it is extracted).

    Args:
        split: str. One of `"train"`, `"val"`, `"test"`.
        data_dir: str or path-like. Directory of the LRA files (required:
            the data cannot be generated and has no TFDS copy).
        max_length: int. Tokens per document, after the 10,000-byte cut.
            Defaults to 4000.
        progress: bool. Whether to show a progress bar. Defaults to True.

    Returns:
        A tuple `(x, y)` as returned by `read_tsv()`: `x` uint16
        `(N, 2, max_length)`, `y` int32 `(N,)`.

    Raises:
        FileNotFoundError: if the file is missing; the message says what
            to download and where to put it.
    """
    if split not in _FILE_NAMES:
        raise ValueError(
            f"Unknown split; expected one of {list(_FILE_NAMES)}. "
            f"Received: split={split!r}"
        )
    _check_int("max_length", max_length, minimum=1)
    path = _find_release_file(data_dir, split)
    return read_tsv(path, max_length=max_length, progress=progress)


def _find_release_file(data_dir, split):
    name = _FILE_NAMES[split]
    instructions = (
        f"Download the LRA release {_RELEASE_URL} ("
        "linked from https://github.com/google-research/long-range-arena), "
        "extract it (tar xzf lra_release.gz), and pass the folder "
        "lra_release/tsv_data/ (which holds new_aan_pairs.train.tsv, "
        "new_aan_pairs.eval.tsv and new_aan_pairs.test.tsv) as "
        "--data-dir DIR."
    )
    if data_dir is None:
        raise FileNotFoundError(
            "The Retrieval task (AAN) reads files of the LRA release and "
            f"needs data_dir; received data_dir=None. {instructions}"
        )
    data_dir = pathlib.Path(data_dir).expanduser()
    candidates = [
        data_dir / name,
        data_dir / "tsv_data" / name,
        data_dir / "lra_release" / "tsv_data" / name,
        data_dir / "lra_release" / "lra_release" / "tsv_data" / name,
    ]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"AAN file {name} not found in {data_dir} (also looked in "
        "tsv_data/, lra_release/tsv_data/ and "
        f"lra_release/lra_release/tsv_data/ below it). {instructions}"
    )
