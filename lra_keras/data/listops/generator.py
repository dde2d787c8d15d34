"""The ListOps generator and evaluator, as the official LRA code.

ListOps sequences are nested prefix expressions over the digits 0-9 with the
operators `[MIN`, `[MAX`, `[MED` (median, truncated to an integer) and `[SM`
(sum modulo 10); `]` closes an operator. The label is the value of the
expression, so the task is 10-way classification. In the Long Range Arena the
sequences are 500-2000 tokens long and trees are up to 10 levels deep.

`generate()` draws trees from the same distribution as the official
generator and writes them in the same text form; `evaluate()` computes the
value of a source, in the official form or without parentheses.

Original files read: `lra_benchmarks/data/listops.py` of
google-research/long-range-arena (the generator).
"""

import itertools
import math

import numpy as np

from lra_keras.data._checks import available_cpus as _available_cpus
from lra_keras.data._checks import check_int as _check_int
from lra_keras.data._parallel import run_in_order
from lra_keras.data.listops.vocabulary import _DIGITS
from lra_keras.data.listops.vocabulary import _END_ID
from lra_keras.data.listops.vocabulary import _PARENS
from lra_keras.data.listops.vocabulary import _TOKEN_TO_ID
from lra_keras.data.listops.vocabulary import END
from lra_keras.data.listops.vocabulary import OPERATORS
from lra_keras.data.listops.vocabulary import _preview

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
    imported; they do not re-run the calling script, so no
    `if __name__ == "__main__":` guard is needed.

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
