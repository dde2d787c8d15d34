"""Token ids of ListOps sources, as the LRA readers make them.

`tokenize()` and `tokenize_batch()` split a source on whitespace, drop `(`
and `)`, keep `]`, map the tokens to the ids of `VOCABULARY`, and truncate
or pad to `max_length`; `tokenize_batch()` does it for many rows at once
with vectorised byte operations.

Original files read: `lra_benchmarks/listops/input_pipeline.py` of
google-research/long-range-arena (the reader); `src/dataloaders/lra.py` of
state-spaces/s4 (the reader most later LRA work uses: it drops `(` `)` and
keeps `]`).
"""

import numpy as np

from lra_keras.data._checks import check_int as _check_int
from lra_keras.data.listops.vocabulary import _END_ID
from lra_keras.data.listops.vocabulary import _PARENS
from lra_keras.data.listops.vocabulary import _TOKEN_TO_ID
from lra_keras.data.listops.vocabulary import END
from lra_keras.data.listops.vocabulary import MAX_LENGTH
from lra_keras.data.listops.vocabulary import _preview


def tokenize(source, max_length=MAX_LENGTH):
    """Maps a ListOps source to token ids.

    Splits on whitespace, drops `(` and `)`, keeps `]`, and maps tokens to
    ids of `VOCABULARY` (digits 1-10, operators 11-14, `]` 15). Sequences
    longer than `max_length` are truncated to their first `max_length`
    tokens, as the LRA input pipeline does; shorter ones are padded with
    `PAD_ID` (0).

    Args:
        source: str. Space-separated tokens.
        max_length: int. Length of the returned array. Defaults to 2000.

    Returns:
        An int32 array of shape `(max_length,)`.

    Example:

    >>> tokenize("( ( ( [MAX 2 ) 9 ) ] )", max_length=6).tolist()
    [12, 3, 10, 15, 0, 0]
    """
    _check_int("max_length", max_length, minimum=1)
    ids = []
    for token in source.split():
        if token in _PARENS:
            continue
        token_id = _TOKEN_TO_ID.get(token)
        if token_id is None:
            raise ValueError(
                f"Unknown ListOps token {token!r}; known tokens: "
                f"{sorted(_TOKEN_TO_ID)} and parentheses. "
                f"Received: source={_preview(source)}"
            )
        ids.append(token_id)
        if len(ids) == max_length:
            break
    token_ids = np.zeros(max_length, np.int32)
    token_ids[: len(ids)] = ids
    return token_ids


def tokenize_batch(sources, max_length=MAX_LENGTH):
    """Maps many ListOps sources to a padded array of token ids.

    Gives the same result as `tokenize()` row by row, much faster: rows in
    the official form (single spaces) are tokenized with vectorised byte
    operations, other rows fall back to `tokenize()`.

    Args:
        sources: sequence of str or bytes. The sources.
        max_length: int. Sequence length of the result. Defaults to 2000.

    Returns:
        An int32 array of shape `(len(sources), max_length)`.
    """
    _check_int("max_length", max_length, minimum=1)
    rows = [s if isinstance(s, bytes) else s.encode("utf-8") for s in sources]
    return _tokenize_rows(rows, max_length, lambda i: f"row {i}")


# The fast path deletes these bytes from each row; what is left of a valid
# row is one byte per token: digits, "]", and the letter that tells an
# operator apart (I, A, E, S).
_SHRINK_DELETE = b"[MNXD ()"
_OPERATOR_LETTERS = b"IAES"  # order of OPERATORS
_BYTE_CODES = np.full(256, -1, np.int8)  # -1: not a token
_BYTE_CODES[np.frombuffer(b"0123456789", np.uint8)] = np.arange(1, 11)
_BYTE_CODES[np.frombuffer(_OPERATOR_LETTERS, np.uint8)] = np.arange(11, 15)
_BYTE_CODES[ord(END)] = _END_ID
_BLOCK_ROWS = 2048  # rows per vectorised block, bounds temporary memory


def _tokenize_rows(rows, max_length, describe_row):
    token_ids = np.zeros((len(rows), max_length), np.int32)
    for begin in range(0, len(rows), _BLOCK_ROWS):
        block = rows[begin : begin + _BLOCK_ROWS]
        out = token_ids[begin : begin + len(block)]
        if _tokenize_block_fast(block, out, max_length):
            continue
        out[:] = 0
        for i, row in enumerate(block, start=begin):
            try:
                out[i - begin] = tokenize(
                    row.decode("utf-8", errors="replace"), max_length
                )
            except ValueError as error:
                raise ValueError(f"{describe_row(i)}: {error}") from None
    return token_ids


def _tokenize_block_fast(rows, out, max_length):
    """Tokenizes rows of single-space-separated tokens, or returns False.

    Deleting spaces, parentheses and the bytes "[MNXD" leaves one byte per
    kept token. The checks below prove that the rows are exactly valid
    tokens separated by single spaces; anything else (unknown tokens, other
    whitespace, empty rows) returns False and the caller falls back to
    `tokenize()`.
    """
    if not all(rows):
        return False
    joined = b"\n".join(rows)
    # numpy rather than bytes methods: much faster on these short patterns.
    # `padded` puts a row break around the block.
    padded = np.frombuffer(b"\n" + joined + b"\n" * 4, np.uint8)
    space = padded == ord(" ")
    row_break = padded == ord("\n")
    if (
        np.count_nonzero(row_break) != len(rows) + 4
        or (space[1:] & (space[:-1] | row_break[:-1])).any()
        or (row_break[1:] & space[:-1]).any()
    ):
        return False
    # Now each row has (its spaces + 1) tokens, none empty.
    num_spaces = np.count_nonzero(space)
    num_parens = np.count_nonzero((padded == ord("(")) | (padded == ord(")")))
    shrunk = [row.translate(None, _SHRINK_DELETE) for row in rows]
    counts = np.fromiter(map(len, shrunk), np.int64, len(rows))  # (rows,)
    codes = _BYTE_CODES[np.frombuffer(b"".join(shrunk), np.uint8)]
    if codes.size and codes.min() < 0:
        return False
    # Count the operators spelled out after each "[": each leaves its letter
    # and loses 3 bytes ("[MIN" loses "[", "M", "N") or 2 ("[SM"). If the
    # letters left are exactly those of the spelled operators and the bytes
    # deleted exactly theirs, no token is made of deleted bytes only, so
    # each token leaves at least one byte or parenthesis; the last count
    # then says exactly one. So every token is a digit, "]", a lone
    # parenthesis or a whole operator: "5[MIN" or "((" fail that count.
    following = padded[
        np.flatnonzero(padded == ord("["))[:, None] + np.arange(1, 4)
    ]  # (brackets, 3) the bytes after each "["
    spelled = [
        (following == np.frombuffer(name, np.uint8)).all(axis=1)
        for name in (b"MIN", b"MAX", b"MED")
    ]
    spelled.append((following[:, :2] == np.frombuffer(b"SM", np.uint8)).all(1))
    operators = [int(np.count_nonzero(s)) for s in spelled]
    letters = [int(np.count_nonzero(codes == i)) for i in range(11, 15)]
    deleted = (
        len(joined) - (len(rows) - 1) - codes.size - num_spaces - num_parens
    )
    if (
        letters != operators
        or deleted != 3 * sum(operators[:3]) + 2 * operators[3]
        or codes.size + num_parens != num_spaces + len(rows)
    ):
        return False
    if counts.max() > max_length:
        # Truncation: keep the first max_length tokens of each row.
        position = np.arange(codes.size) - np.repeat(
            np.cumsum(counts) - counts, counts
        )
        codes = codes[position < max_length]
        counts = np.minimum(counts, max_length)
    # Row-major boolean assignment fills each row's first counts[r] slots.
    out[np.arange(max_length) < counts[:, None]] = codes
    return True
