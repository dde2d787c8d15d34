"""ListOps: generator, evaluator, tokenizer and reader of the LRA format.

ListOps sequences are nested prefix expressions over the digits 0-9 with the
operators `[MIN`, `[MAX`, `[MED` (median, truncated to an integer) and `[SM`
(sum modulo 10); `]` closes an operator. The label is the value of the
expression, so the task is 10-way classification. In the Long Range Arena the
sequences are 500-2000 tokens long and trees are up to 10 levels deep.

This module reproduces the official LRA data: `generate()` draws trees from the
same distribution as the official generator, writes them in the same text
form, and `read_tsv()` reads both generated files and the files of the LRA
release (`lra_release/listops-1000/basic_{train,val,test}.tsv`).

The module imports only numpy and the standard library (tqdm when a progress
bar is requested), so it is fast to import and independent of the Keras
backend.

References:
- Tay et al., "Long Range Arena: A Benchmark for Efficient Transformers",
  ICLR 2021, https://arxiv.org/abs/2011.04006
- Nangia & Bowman, "ListOps: A Diagnostic Dataset for Latent Tree Learning",
  NAACL SRW 2018, https://arxiv.org/abs/1804.06028

Original files read: `lra_benchmarks/data/listops.py` (generator) and
`lra_benchmarks/listops/input_pipeline.py` (reader) of
google-research/long-range-arena; `src/dataloaders/lra.py` of
state-spaces/s4 (the reader most later LRA work uses: it drops `(` `)` and
keeps `]`).
"""

import itertools
import json
import math
import pathlib

import numpy as np

from lra_keras._atomic import atomic_open
from lra_keras.data._checks import available_cpus as _available_cpus
from lra_keras.data._checks import check_int as _check_int
from lra_keras.data._parallel import run_in_order

# === Vocabulary ===

# The vocabulary is fixed (not built from the training data, as the LRA
# pipeline does) so that token ids mean the same thing for every split, every
# generated variant and every saved model.
VOCABULARY = (
    ["<pad>"]
    + [str(digit) for digit in range(10)]
    + ["[MIN", "[MAX", "[MED", "[SM", "]", "<mask>"]
)
PAD_ID = 0
MASK_ID = 16
VOCABULARY_SIZE = 17
MAX_LENGTH = 2000
NUM_CLASSES = 10

OPERATORS = ("[MIN", "[MAX", "[MED", "[SM")
END = "]"

# Tokens a source may contain. `<pad>` and `<mask>` are ids, never text.
_TOKEN_TO_ID = {token: i for i, token in enumerate(VOCABULARY)}
del _TOKEN_TO_ID["<pad>"], _TOKEN_TO_ID["<mask>"]
_PARENS = frozenset(("(", ")"))
_DIGITS = frozenset("0123456789")

_FILE_NAMES = {
    "train": "basic_train.tsv",
    "val": "basic_val.tsv",
    "test": "basic_test.tsv",
}
_HEADER = b"Source\tTarget"
_COMPLETE_MARKER = ".complete"

# === Generator ===

# Candidate trees drawn per chunk. Chunk `i` always draws the same trees for a
# given seed, whichever process runs it, so the output does not depend on the
# number of workers. Fixed, because changing it changes the data.
_CHUNK_DRAWS = 4096
# Starting worker processes costs from a fraction of a second to seconds (a
# fresh interpreter imports numpy and this package), so the pool is used only
# when more work than this is left after the first chunk.
_POOL_MIN_SECONDS = 2.0
# Consecutive chunks that add no new tree before generation gives up.
_MAX_STALE_CHUNKS = 50

# Ids of the generator's text buffer: vocabulary ids 1..15 for the tokens,
# then three ids used only while writing text.
_LPAREN, _RPAREN, _NEWLINE = 16, 17, 18
_DIGIT_OFFSET = _TOKEN_TO_ID["0"]
_OPERATOR_OFFSET = _TOKEN_TO_ID["[MIN"]
_END_ID = _TOKEN_TO_ID[END]


def _text_table():
    # Row i holds the bytes written for buffer id i, zero-padded to 5 bytes;
    # every token is followed by a space, and the tree separator by nothing.
    texts = {i: token + " " for token, i in _TOKEN_TO_ID.items()}
    texts.update({_LPAREN: "( ", _RPAREN: ") ", _NEWLINE: "\n"})
    table = np.zeros((_NEWLINE + 1, 5), np.uint8)
    for i, text in texts.items():
        table[i, : len(text)] = np.frombuffer(text.encode("ascii"), np.uint8)
    return table


_TEXT_BYTES = _text_table()


def generate(
    num_samples,
    seed=0,
    *,
    max_depth=10,
    max_args=10,
    min_length=500,
    max_length=2000,
    operator_probability=0.25,
    num_workers=None,
    progress=False,
):
    """Generates unique ListOps trees as in the Long Range Arena.

    Draws trees from the distribution of the official LRA generator and keeps
    those whose length `n` (tokens without parentheses) satisfies
    `min_length < n < max_length`, until `num_samples` distinct trees are
    collected. The defaults are the LRA parameters.

    A node at depth `d` (the root has depth 1) is an operator with
    probability `operator_probability` when `d < max_depth`, and a leaf
    otherwise: a leaf is therefore drawn with probability
    `1 - operator_probability` (0.75) below the maximum depth and always at
    it. This is the official code (`VALUE_P = 0.25`, leaf when
    `random() > VALUE_P`); descriptions that call 0.25 a "leaf probability"
    misread it. A leaf is a uniform digit; an operator is uniform over the
    four operators with a uniform number of arguments in `[2, max_args]`.

    The output is deterministic for a given seed (and numpy version), does
    not depend on `num_workers`, and the result for `n` samples is a prefix
    of the result for any larger `n`. Trees are drawn in fixed chunks, chunk
    `i` seeded by `np.random.SeedSequence([seed, i])`; repeated trees keep
    their first occurrence. The official script collects a `set`, so its
    order is arbitrary; this order is the order of generation.

    Cost: the LRA set (100k trees, 8% of draws accepted) takes about 12 s on
    one CPU core. Longer variants cost more per tree and depend on the
    acceptance rate of their window: with `max_depth=10` few trees exceed
    4000 tokens (0.04% of draws fall in (4000, 8000), about 190 trees/s),
    so an 8K variant should raise `max_depth` (12: 1.6%, about 1200
    trees/s). `benchmarks/listops_generator.py` measures the throughput.
    Worker processes are started with
    "spawn", which is safe when JAX, TensorFlow or PyTorch are already
    imported; as with any `multiprocessing` code, scripts must call this
    under `if __name__ == "__main__":`.

    Args:
        num_samples: int. Number of distinct trees to return.
        seed: int. Non-negative random seed. Defaults to 0.
        max_depth: int. Maximum depth of a tree; nodes at this depth are
            leaves. Defaults to 10.
        max_args: int. Maximum number of arguments of an operator, at least
            2. Defaults to 10.
        min_length: int. Trees must be strictly longer than this. Defaults
            to 500.
        max_length: int. Trees must be strictly shorter than this. Defaults
            to 2000.
        operator_probability: float. Probability that a node above the
            maximum depth is an operator (`VALUE_P` of the official code).
            Defaults to 0.25.
        num_workers: int or None. Worker processes; `None` uses every
            available CPU, 1 generates in this process. Defaults to `None`.
        progress: bool. Whether to show a tqdm progress bar. Defaults to
            `False`.

    Returns:
        A list of `num_samples` `(source, target)` tuples: `source` is the
        official text form, e.g. `"( ( ( [MAX 2 ) 9 ) ] )"`, and `target` the
        value of the expression, an int in `[0, 9]`.

    Example:

    >>> rows = generate(3, seed=0, min_length=5, max_length=20)
    >>> all(evaluate(source) == target for source, target in rows)
    True
    """
    _check_int("num_samples", num_samples, minimum=0)
    _check_int("seed", seed, minimum=0)
    params = _generator_params(
        max_depth=max_depth,
        max_args=max_args,
        min_length=min_length,
        max_length=max_length,
        operator_probability=operator_probability,
    )
    if num_workers is None:
        num_workers = _available_cpus()
    _check_int("num_workers", num_workers, minimum=1)

    bar = None
    if progress:
        # tqdm is imported only when a bar is requested.
        from tqdm.auto import tqdm

        bar = tqdm(total=num_samples, unit="tree", desc="ListOps")
    collector = _RowCollector(num_samples, bar)
    try:
        if num_samples:
            _run_chunks(collector, seed, params, num_workers)
    finally:
        if bar is not None:
            bar.close()
    return collector.rows


def _generator_params(
    max_depth, max_args, min_length, max_length, operator_probability
):
    _check_int("max_depth", max_depth, minimum=1)
    _check_int("max_args", max_args, minimum=2)
    _check_int("min_length", min_length, minimum=0)
    _check_int("max_length", max_length, minimum=1)
    if max_length - min_length < 2:
        raise ValueError(
            "No length fits strictly between `min_length` and `max_length`; "
            "`max_length` must be at least `min_length + 2`. Received: "
            f"min_length={min_length}, max_length={max_length}"
        )
    if (
        isinstance(operator_probability, bool)
        or not isinstance(operator_probability, (int, float, np.floating))
        or not 0.0 <= operator_probability <= 1.0
    ):
        raise ValueError(
            "`operator_probability` must be a number in [0, 1]. "
            f"Received: operator_probability={operator_probability!r}"
        )
    # The longest tree has every node above max_depth an operator with
    # max_args arguments; stop once it passes min_length (it can be huge).
    longest = 1
    for _ in range(max_depth - 1):
        longest = 2 + max_args * longest
        if longest > min_length:
            break
    if longest <= min_length:
        raise ValueError(
            f"No tree of depth <= {max_depth} with <= {max_args} arguments "
            f"per operator is longer than min_length={min_length} (the "
            f"longest has {longest} tokens). Received: max_depth={max_depth}"
            f", max_args={max_args}, min_length={min_length}"
        )
    return dict(
        max_depth=int(max_depth),
        max_args=int(max_args),
        min_length=int(min_length),
        max_length=int(max_length),
        operator_probability=float(operator_probability),
    )


class _RowCollector:
    """Merges chunks in chunk order, dropping repeated trees."""

    def __init__(self, num_samples, bar):
        self.num_samples = num_samples
        self.bar = bar
        self.rows = []
        self.seen = set()
        self.stale_chunks = 0

    @property
    def done(self):
        return len(self.rows) >= self.num_samples

    def add(self, chunk_rows):
        before = len(self.rows)
        for source, target in chunk_rows:
            if self.done:
                break
            if source not in self.seen:
                self.seen.add(source)
                self.rows.append((source, target))
        added = len(self.rows) - before
        if self.bar is not None:
            self.bar.update(added)
        self.stale_chunks = 0 if added else self.stale_chunks + 1
        if self.stale_chunks >= _MAX_STALE_CHUNKS:
            raise RuntimeError(
                f"The last {_MAX_STALE_CHUNKS} chunks of {_CHUNK_DRAWS} draws "
                f"added no new tree after {len(self.rows)} of "
                f"{self.num_samples}: the length window admits too few "
                "distinct trees, or too rare ones, for these parameters. "
                "Widen the window or change max_depth/max_args/"
                "operator_probability."
            )


def _run_chunks(collector, seed, params, num_workers):
    def remaining():  # chunks still needed, judged by the first one
        rows_per_chunk = max(len(collector.rows), 1)
        missing = collector.num_samples - len(collector.rows)
        return math.ceil(missing / rows_per_chunk)

    run_in_order(
        _generate_chunk,
        ((seed, index, params) for index in itertools.count()),
        collector.add,
        num_workers,
        remaining,
        done=lambda: collector.done,
        pool_min_seconds=_POOL_MIN_SECONDS,
    )


def _generate_chunk(seed, chunk_index, params):
    rng = np.random.default_rng(np.random.SeedSequence([seed, chunk_index]))
    return _draw_trees(rng, _CHUNK_DRAWS, **params)


def _segment_starts(counts):
    # Index of the first element of each segment of a ragged array.
    starts = np.zeros(counts.size, np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    return starts


def _draw_trees(
    rng,
    num_draws,
    max_depth,
    max_args,
    min_length,
    max_length,
    operator_probability,
):
    """Draws `num_draws` trees and returns the accepted ones as text rows.

    All trees of the batch are grown together, one depth level at a time,
    with vectorised draws; this is the official recursive generator
    reorganised breadth-first, with the same distribution per tree. The
    children of the operators of one level are contiguous, in operator
    order, in the next level.
    """
    # === Draw the structure, level by level ===
    tree = np.arange(num_draws)  # (nodes,) tree of each node of this level
    length = np.zeros(num_draws, np.int64)  # tokens (no parens) so far
    alive = np.ones(num_draws, bool)
    levels = []
    for depth in range(1, max_depth + 1):
        num_nodes = tree.size
        if num_nodes == 0:
            break
        if depth < max_depth:
            # Official: leaf when random() > VALUE_P, operator otherwise.
            is_operator = rng.random(num_nodes) <= operator_probability
        else:
            is_operator = np.zeros(num_nodes, bool)
        num_operators = int(np.count_nonzero(is_operator))
        num_args = rng.integers(2, max_args + 1, num_operators)
        operator = rng.integers(0, len(OPERATORS), num_operators)
        digit = rng.integers(0, 10, num_nodes - num_operators)
        # A leaf is one token; an operator adds its own token and "]".
        length += np.bincount(tree, minlength=num_draws)
        length += np.bincount(tree[is_operator], minlength=num_draws)
        child_tree = np.repeat(tree[is_operator], num_args)
        # Every child still to be drawn adds at least one token, so a tree
        # whose lower bound reaches max_length would be rejected anyway:
        # stop growing it. This changes which random numbers later trees
        # use, not their distribution, so the accepted trees are distributed
        # exactly as in the official generator, which grows every tree to
        # the end before rejecting it.
        pending = np.bincount(child_tree, minlength=num_draws)
        alive &= length + pending < max_length
        levels.append((tree, is_operator, num_args, operator, digit))
        tree = child_tree[alive[child_tree]]
    accepted = alive & (length > min_length)
    if not accepted.any():
        return []

    kept = []
    for tree, is_operator, num_args, operator, digit in levels:
        keep = accepted[tree]
        keep_operator = keep[is_operator]
        kept.append(
            (
                is_operator[keep],
                num_args[keep_operator],
                operator[keep_operator],
                digit[keep[~is_operator]],
            )
        )

    # === Values and text sizes, bottom-up ===
    # The text of an operator with k arguments is k + 1 "(", the operator,
    # each argument followed by ")", then "] )": 2k + 4 tokens plus the
    # arguments. A leaf is one token.
    values, sizes = [], []
    child_value = child_size = None
    for is_operator, num_args, operator, digit in reversed(kept):
        value = np.empty(is_operator.size, np.int64)
        size = np.empty(is_operator.size, np.int64)
        value[~is_operator] = digit
        size[~is_operator] = 1
        if num_args.size:
            first = _segment_starts(num_args)
            segment = np.repeat(np.arange(num_args.size), num_args)
            # Sort the arguments inside each segment (digits < 16).
            ordered = np.sort(segment * 16 + child_value) & 15
            low = ordered[first + (num_args - 1) // 2]
            high = ordered[first + num_args // 2]
            value[is_operator] = np.choose(
                operator,
                [
                    np.minimum.reduceat(child_value, first),
                    np.maximum.reduceat(child_value, first),
                    # int(np.median(args)) truncates; args are >= 0.
                    (low + high) // 2,
                    np.add.reduceat(child_value, first) % 10,
                ],
            )
            size[is_operator] = (
                2 * num_args + 4 + np.add.reduceat(child_size, first)
            )
        values.append(value)
        sizes.append(size)
        child_value, child_size = value, size
    values.reverse()
    sizes.reverse()

    # === Write the text, top-down ===
    # One buffer for all accepted trees, each followed by a separator.
    root_size = sizes[0]
    start = _segment_starts(root_size + 1)  # (trees,) first token of a root
    buffer = np.full(int(root_size.sum()) + root_size.size, _LPAREN, np.int8)
    buffer[start + root_size] = _NEWLINE
    # Every position not written below is a "(".
    for depth, (is_operator, num_args, operator, digit) in enumerate(kept):
        buffer[start[~is_operator]] = digit + _DIGIT_OFFSET
        if not num_args.size:
            continue
        operator_start = start[is_operator]
        operator_size = sizes[depth][is_operator]
        buffer[operator_start + num_args + 1] = operator + _OPERATOR_OFFSET
        buffer[operator_start + operator_size - 2] = _END_ID
        buffer[operator_start + operator_size - 1] = _RPAREN
        span = sizes[depth + 1] + 1  # (children,) argument and its ")"
        offset = np.cumsum(span) - span
        first = _segment_starts(num_args)
        start = (
            np.repeat(operator_start + num_args + 2 - offset[first], num_args)
            + offset
        )
        buffer[start + span - 1] = _RPAREN
    text_bytes = _TEXT_BYTES[buffer].ravel()
    text = text_bytes[text_bytes != 0].tobytes().decode("ascii")
    # Each source ends with the space written after its last token.
    sources = [line[:-1] for line in text.split("\n")[:-1]]
    return list(zip(sources, values[0].tolist()))


# === Evaluation ===


def _apply(operator, args):
    if operator == "[MIN":
        return min(args)
    if operator == "[MAX":
        return max(args)
    if operator == "[MED":
        # As the official code: the median, truncated to an int.
        return int(np.median(args))
    return sum(args) % 10


def evaluate(source):
    """Evaluates a ListOps expression.

    A stack-based evaluator over the tokens; parentheses are ignored, so it
    accepts the official form (`"( ( ( [MAX 2 ) 9 ) ] )"`) and the bare form
    (`"[MAX 2 9 ]"`). `[MED` is the median truncated to an int (so the
    median of 1 2 3 4 is 2) and `[SM` the sum modulo 10, as in LRA.

    Args:
        source: str. Space-separated tokens.

    Returns:
        The value, an int in `[0, 9]`.

    Example:

    >>> evaluate("[SM 7 [MED 1 2 3 4 ] 5 ]")
    4
    """
    stack = []  # open operators: (operator, arguments so far)
    result = None
    for token in source.split():
        if token in _PARENS:
            continue
        if token in OPERATORS:
            stack.append((token, []))
            continue
        if token == END:
            if not stack:
                raise ValueError(
                    f"Unmatched {END!r} in ListOps source. "
                    f"Received: source={_preview(source)}"
                )
            operator, args = stack.pop()
            if not args:
                raise ValueError(
                    f"Operator {operator!r} has no arguments. "
                    f"Received: source={_preview(source)}"
                )
            value = _apply(operator, args)
        elif token in _DIGITS:
            value = int(token)
        else:
            raise ValueError(
                f"Unknown ListOps token {token!r}. "
                f"Received: source={_preview(source)}"
            )
        if stack:
            stack[-1][1].append(value)
        elif result is None:
            result = value
        else:
            raise ValueError(
                "ListOps source holds more than one expression. "
                f"Received: source={_preview(source)}"
            )
    if stack or result is None:
        raise ValueError(
            "Incomplete ListOps expression (an operator is not closed, or "
            f"the source is empty). Received: source={_preview(source)}"
        )
    return result


def _preview(text, limit=80):
    return repr(text if len(text) <= limit else text[:limit] + "...")


# === Tokenization ===


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


# === Files ===


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
        ValueError: if the header is missing or a row is malformed (not two
            tab-separated fields, a target that is not an int in `[0, 9]`,
            an unknown token); the message names the file and line.
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
    x = _tokenize_rows(
        sources,
        max_length,
        lambda i: f"Malformed ListOps TSV {path}, line {line_numbers[i]}",
    )
    return x, np.asarray(targets, np.int32)


def load_listops(
    split,
    data_dir=None,
    max_length=MAX_LENGTH,
    seed=0,
    num_train=96000,
    num_val=2000,
    num_test=2000,
    **generator_params,
):
    """Loads a split of ListOps, reading the LRA files or generating them.

    With `data_dir`, reads `basic_<split>.tsv` of the LRA release from
    `data_dir` (or from `data_dir/listops-1000` or
    `data_dir/lra_release/listops-1000`). Without it, generates the data
    once with `generate()` into `cache_dir()/listops/<name>` (`seed0` for
    the LRA parameters; the name records the seed and every non-default
    parameter), in the official files, and reads them; later calls only
    read. The split is in generation order: the first `num_train` trees
    are train, the next `num_val` val, the next `num_test` test.

    Args:
        split: str. One of `"train"`, `"val"`, `"test"`.
        data_dir: str, path-like or None. Directory of the LRA files; `None`
            generates them. Defaults to `None`.
        max_length: int. Sequence length of `x`; sources are truncated or
            padded to it. When generating, it is also the generator's
            `max_length`: trees are strictly shorter. Defaults to 2000.
        seed: int. Generator seed; ignored with `data_dir`. Defaults to 0.
        num_train: int. Generated train size. Defaults to 96000.
        num_val: int. Generated validation size. Defaults to 2000.
        num_test: int. Generated test size. Defaults to 2000.
        **generator_params: other arguments of `generate()`: `max_depth`,
            `max_args`, `min_length`, `operator_probability` (part of the
            cache name) and `num_workers` (not).

    Returns:
        A tuple `(x, y)` as returned by `read_tsv()`.
    """
    if split not in _FILE_NAMES:
        raise ValueError(
            f"Unknown split; expected one of {list(_FILE_NAMES)}. "
            f"Received: split={split!r}"
        )
    allowed = {"max_depth", "max_args", "min_length", "operator_probability"}
    unknown = set(generator_params) - allowed - {"num_workers"}
    if unknown:
        raise ValueError(
            f"Unknown ListOps options {sorted(unknown)}; expected "
            "data_dir, max_length, seed, num_train, num_val, num_test, "
            f"num_workers or {sorted(allowed)}. "
            f"Received: {sorted(generator_params)}"
        )
    if data_dir is not None:
        if set(generator_params) & allowed:
            raise ValueError(
                "Generator options apply only to generated data "
                "(data_dir=None). Received: data_dir="
                f"{str(data_dir)!r}, "
                f"{sorted(set(generator_params) & allowed)}"
            )
        return read_tsv(_find_release_file(data_dir, split), max_length)

    num_workers = generator_params.pop("num_workers", None)
    sizes = dict(num_train=num_train, num_val=num_val, num_test=num_test)
    for name, value in sizes.items():
        _check_int(name, value, minimum=0)
    _check_int("seed", seed, minimum=0)
    params = _generator_params(
        **{**_GENERATOR_DEFAULTS, **generator_params, "max_length": max_length}
    )
    directory = _cache_directory(seed, sizes, params)
    if not (directory / _COMPLETE_MARKER).exists():
        _generate_files(directory, seed, sizes, params, num_workers)
    return read_tsv(directory / _FILE_NAMES[split], max_length)


_GENERATOR_DEFAULTS = dict(
    max_depth=10,
    max_args=10,
    min_length=500,
    max_length=MAX_LENGTH,
    operator_probability=0.25,
)
_SIZE_DEFAULTS = dict(num_train=96000, num_val=2000, num_test=2000)


def _cache_directory(seed, sizes, params):
    # Imported here: the package imports this module.
    from lra_keras.data import cache_dir

    settings = {**sizes, **params}
    defaults = {**_SIZE_DEFAULTS, **_GENERATOR_DEFAULTS}
    name = f"seed{seed}" + "".join(
        f"-{key}{settings[key]}"
        for key in sorted(settings)
        if settings[key] != defaults[key]
    )
    return cache_dir() / "listops" / name


def _generate_files(directory, seed, sizes, params, num_workers):
    total = sum(sizes.values())
    print(f"Generating {total} ListOps trees into {directory}", flush=True)
    rows = generate(
        total, seed, **params, num_workers=num_workers, progress=True
    )
    begin = 0
    for split, size in zip(_FILE_NAMES, sizes.values()):
        write_tsv(directory / _FILE_NAMES[split], rows[begin : begin + size])
        begin += size
    # Written last: a directory without it is regenerated, never half-read.
    marker = {"seed": seed, **sizes, **params}
    with atomic_open(
        directory / _COMPLETE_MARKER, "w", encoding="utf-8", newline="\n"
    ) as f:
        json.dump(marker, f, indent=2, sort_keys=True)


def _find_release_file(data_dir, split):
    data_dir = pathlib.Path(data_dir).expanduser()
    name = _FILE_NAMES[split]
    candidates = [
        data_dir / name,
        data_dir / "listops-1000" / name,
        data_dir / "lra_release" / "listops-1000" / name,
    ]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"ListOps file {name} not found in {data_dir} (also looked in "
        "listops-1000/ and lra_release/listops-1000/ below it). Download "
        "the LRA release lra_release.gz (linked from the README of "
        "https://github.com/google-research/long-range-arena), extract it, "
        "and pass the folder lra_release/listops-1000/ (which holds "
        "basic_train.tsv, basic_val.tsv and basic_test.tsv) as data_dir. "
        "Or omit data_dir (--data-dir) to generate the data locally."
    )


# === Utilities ===


