"""ListOps TSV files in the LRA format: `write_tsv()` and `read_tsv()`.

`read_tsv()` reads both generated files and the files of the LRA release
(`lra_release/listops-1000/basic_{train,val,test}.tsv`), and tokenizes the
sources as `tokenize()`.

Original files read: `lra_benchmarks/listops/input_pipeline.py` of
google-research/long-range-arena (the reader).
"""

import pathlib

import numpy as np

from lra_keras._atomic import atomic_open
from lra_keras.data._checks import check_int as _check_int
from lra_keras.data.listops.tokenizer import _tokenize_rows
from lra_keras.data.listops.vocabulary import MAX_LENGTH
from lra_keras.data.listops.vocabulary import NUM_CLASSES
from lra_keras.data.listops.vocabulary import _preview

_HEADER = b"Source\tTarget"


def write_tsv(path, rows):
    """Writes `(source, target)` rows in the official LRA ListOps format.

    A header `Source<TAB>Target`, then one `source<TAB>target` line per row,
    with LF line endings. The file is written to a temporary file in the
    same directory and renamed, so an interrupted write never leaves a
    partial file at `path`.

    Args:
        path: str or path-like. Destination, e.g. `"basic_train.tsv"`.
        rows: iterable of `(source, target)`; `source` a str without tabs or
            line breaks, `target` an int in `[0, 9]`.
    """
    with atomic_open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("Source\tTarget\n")
        for i, (source, target) in enumerate(rows):
            if any(c in source for c in "\t\r\n"):
                raise ValueError(
                    f"Row {i}: a source may not contain tabs or line "
                    f"breaks. Received: source={_preview(source)}"
                )
            if (
                isinstance(target, bool)
                or not isinstance(target, (int, np.integer))
                or not 0 <= target < NUM_CLASSES
            ):
                raise ValueError(
                    f"Row {i}: the target must be an int in [0, 9]. "
                    f"Received: target={target!r}"
                )
            f.write(f"{source}\t{int(target)}\n")


def read_tsv(path, max_length=MAX_LENGTH):
    """Reads a ListOps TSV file of the LRA format.

    Reads both the files of the LRA release and those written by
    `write_tsv()`: the header `Source<TAB>Target`, LF or CRLF line endings,
    blank lines only at the end. Sources are tokenized as by `tokenize()`
    (parentheses dropped, `]` kept, truncated or padded to `max_length`).

    Args:
        path: str or path-like. The TSV file.
        max_length: int. Sequence length of `x`. Defaults to 2000.

    Returns:
        A tuple `(x, y)`: `x` int32 of shape `(N, max_length)`, 0-padded,
        and `y` int32 of shape `(N,)` with values in `[0, 9]`.

    Raises:
        ValueError: if the header is missing, no row follows it, or a row
            is malformed (not two tab-separated fields, a target that is
            not an int in `[0, 9]`, an unknown token); the message names the
            file and line.
    """
    _check_int("max_length", max_length, minimum=1)
    path = pathlib.Path(path)
    sources, targets, line_numbers = [], [], []
    blank_line = None  # first blank line seen, an error if data follows

    def fail(line_number, reason, line):
        raise ValueError(
            f"Malformed ListOps TSV {path}, line {line_number}: {reason}. "
            f"Received: {_preview(line.decode('utf-8', errors='replace'))}"
        )

    with open(path, "rb") as f:
        header = f.readline().rstrip(b"\n").removesuffix(b"\r")
        if header != _HEADER:
            fail(1, "expected the header 'Source<TAB>Target'", header)
        for line_number, line in enumerate(f, start=2):
            line = line.rstrip(b"\n").removesuffix(b"\r")
            if not line.strip():
                blank_line = blank_line or line_number
                continue
            if blank_line is not None:
                fail(blank_line, "blank line before the end of the data", b"")
            fields = line.split(b"\t")
            if len(fields) != 2:
                fail(
                    line_number,
                    "expected 2 tab-separated fields (Source, Target), "
                    f"found {len(fields)}",
                    line,
                )
            source, target = fields
            if not source.strip():
                fail(line_number, "empty Source", line)
            target = target.strip()
            if not target.isdigit() or not 0 <= int(target) < NUM_CLASSES:
                fail(line_number, "Target must be an int in [0, 9]", line)
            sources.append(source)
            targets.append(int(target))
            line_numbers.append(line_number)
    if not sources:
        # A file cut right after its header (no split of LRA is empty).
        raise ValueError(f"ListOps TSV {path} holds no rows.")
    x = _tokenize_rows(
        sources,
        max_length,
        lambda i: f"Malformed ListOps TSV {path}, line {line_numbers[i]}",
    )
    return x, np.asarray(targets, np.int32)
