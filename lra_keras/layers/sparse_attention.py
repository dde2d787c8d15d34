"""Block-sparse attentions of the Long Range Arena paper.

Three of LRA's efficient Transformers (Tay et al. 2021, section 3, Table
1) restrict softmax attention to a fixed pattern of keys per query. All
three are computed here by one function, `block_sparse_attention`: the
sequence is cut into blocks of `b` positions, each query block gathers a
few key blocks (a table of block indices) plus a set of "extra" key
positions shared by every query, a rule per (query, key) position decides
within them, and "global" query rows attend to every key. Memory is
O(L (m b + e)) for m gathered blocks and e extra keys, instead of the
O(L^2) of the dense mask LRA's code builds; the output equals dense
attention under the pattern's explicit mask (`pattern_mask`, the tests'
oracle).

- **Sparse Transformer** (Child et al. 2019,
  https://arxiv.org/abs/1904.10509), the "fixed" pattern as LRA runs it
  (`lra_benchmarks/models/sparse_transformer/sparse_attention.py`,
  `SparseAttention.apply` with the patterns `Fixed1Pattern(block_size=l)`
  or `Fixed2Pattern(block_size=l, c=c)`, merged for every head, lines
  47-52 and 77-93 of `_build_mask`; the encoder's defaults are l = 128,
  c = 32, and LRA's trainers pass l = 50, c = 10, `utils/train_utils.py`
  lines 73-78): key k is seen from query q iff `k <= q` and (k is in q's
  block of l, or `k mod l` is 0 or at least l - c), with LRA's CLS
  variant as an option (position 0 global). The pattern is causal in
  LRA's encoder too. The "summary" keys are the extra keys: L (c + 1) / l
  of them, so this one stays quadratic, at a fraction of dense
  attention's memory.
- **Longformer** (Beltagy et al. 2020, https://arxiv.org/abs/2004.05150)
  as LRA's code (`longformer/longformer_attention.py`,
  `_build_sliding_window_mask`): a sliding window of `window` positions,
  `window - window // 2` to the left including the query itself and
  `window // 2` to the right (512 in `longformer.py`), plus global
  positions that attend to and are attended by every position. LRA's
  classifiers pass no `global_mask`, so no position is global there
  (`num_global_tokens=0`); the paper makes the classification token
  global, `num_global_tokens=1`. LRA computes the global positions'
  attention with their own query, key and value projections; here they use
  the layer's (one projection set for every attention type).
- **BigBird** (Zaheer et al. 2020, https://arxiv.org/abs/2007.14062) as
  LRA's code (`bigbird/bigbird_attention.py`,
  `sparse_dot_product_attention` and `get_block_rand_mask`): blocks of 64;
  the first and last blocks are global; every other block attends to its
  own and both neighbouring blocks, to the two global blocks and to
  `num_random_blocks` (3) random blocks drawn, per head, among the middle
  blocks that are not its neighbours and, as LRA's `last_idx=min(L,
  1024)` does, only among the blocks before position 1024. LRA draws the
  table with numpy from a fixed `connectivity_seed` on every call; here it
  is drawn from a fixed integer seed by an integer hash on every call
  (`_hash_ranks`: the same table at every step, in every saved model and
  under every backend for a given length, but not numpy's table).
"""

import math

from keras import ops

from lra_keras.layers.attention_kernels import drop_weights
from lra_keras.layers.efficient_attention import masked_softmax
from lra_keras.layers.efficient_attention import pad_to_blocks


def _blocks(t, num_blocks, block_size):
    """(B, L', H, D) -> (B, H, n, b, D)."""
    t = ops.reshape(t, (-1, num_blocks, block_size, *t.shape[2:]))
    return ops.transpose(t, (0, 3, 1, 2, 4))


def block_sparse_attention(query, key, value, block_size, key_blocks,
                           key_blocks_valid, rule, extra_keys=None,
                           extra_rule=None, global_rows=(0, 0),
                           padding_mask=None, weights_dropout=None):
    """Softmax attention over gathered key blocks, extra keys and global
    rows.

    With the length padded to `L' = n b` (the padded keys masked):

    - query block i attends the key blocks `key_blocks[h, i, :]` whose
      `key_blocks_valid` is true, position by position where
      `rule(q_pos, k_pos)` is true;
    - every query attends the `extra_keys` positions where
      `extra_rule(q_pos, k_pos)` is true and the key is not already seen
      through the blocks (each key counts once);
    - the first `global_rows[0]` and last `global_rows[1]` rows of the
      padded sequence attend every real key (`rule` still applies, so a
      causal rule stays causal).

    Args:
        query, key, value: tensors (batch, L, heads, head_dim).
        block_size: int b.
        key_blocks: int tensor (heads or 1, n, m): key block indices per
            query block, in `[0, n)`.
        key_blocks_valid: bool tensor like `key_blocks`.
        rule: callable `(q_pos, k_pos) -> bool tensor` on broadcastable
            int tensors of positions.
        extra_keys: optional int tensor (e,) of key positions in `[0,
            L')`.
        extra_rule: callable like `rule` for the extra keys; None: `rule`.
        global_rows: (first, last) numbers of global rows.
        padding_mask: optional (batch, L), nonzero at real tokens.
        weights_dropout: None, or a callable applied to the attention
            weights (`attention_kernels.drop_weights`), here blocked
            (batch, heads, n, b, keys) and, for the global rows, (batch,
            heads, rows, L').

    Returns:
        Tensor (batch, L, heads, head_dim).
    """
    q, k, v = (ops.convert_to_tensor(t) for t in (query, key, value))
    b = int(block_size)
    length = ops.shape(q)[1]
    (q, k, v), real, n = pad_to_blocks((q, k, v), padding_mask, b)
    heads, depth = q.shape[2], q.shape[3]
    scale = 1.0 / math.sqrt(depth)
    qb, kb, vb = (_blocks(t, n, b) for t in (q, k, v))  # (B, H, n, b, D)
    table = ops.convert_to_tensor(key_blocks, "int32")  # (Ht, n, m)
    table_heads, m = table.shape[0], table.shape[2]
    valid = ops.cast(key_blocks_valid, "bool")

    # Gather the key blocks: per head when the table is per head.
    def gather(t):  # (B, H, n, b, D) -> (B, H, n, m b, D)
        if table_heads == 1:
            out = ops.take(t, ops.reshape(table, (-1,)), axis=2)
        else:
            flat = ops.reshape(t, (-1, heads * n, b, t.shape[-1]))
            offsets = ops.arange(heads, dtype="int32")[:, None, None] * n
            out = ops.take(flat, ops.reshape(table + offsets, (-1,)), axis=1)
        return ops.reshape(out, (-1, heads, n, m * b, t.shape[-1]))

    k_gathered, v_gathered = gather(kb), gather(vb)
    offsets_in_block = ops.arange(b, dtype="int32")
    q_pos = ops.reshape(ops.arange(n * b, dtype="int32"), (n, b, 1))
    k_pos = ops.reshape(
        table[..., None] * b + offsets_in_block, (table_heads, n, 1, m * b)
    )  # (Ht, n, 1, m b)
    real_blocks = ops.reshape(real, (-1, n, b))
    k_real = ops.reshape(
        ops.take(real_blocks, ops.reshape(table, (-1,)), axis=1),
        (-1, table_heads, n, 1, m * b),
    )
    block_valid = ops.reshape(
        ops.repeat(valid[..., None], b, axis=-1), (table_heads, n, 1, m * b)
    )
    allowed = ops.logical_and(block_valid, rule(q_pos, k_pos))
    allowed = ops.logical_and(allowed[None], k_real)  # (B, Ht, n, b, m b)
    scores = ops.einsum("bhnqd,bhnkd->bhnqk", qb, k_gathered) * scale
    values = [v_gathered]
    masks = [allowed]
    score_parts = [scores]
    if extra_keys is not None:
        extra = ops.convert_to_tensor(extra_keys, "int32")  # (e,)
        extra_rule = rule if extra_rule is None else extra_rule
        e_pos = extra[None, None, None, :]  # (1, 1, 1, e)
        # Not seen through the blocks already: the extra key's block is
        # not among the valid gathered blocks, or the rule says no there.
        e_block = extra // b
        in_blocks = ops.any(ops.logical_and(
            table[..., None] == e_block, valid[..., None]), axis=2)
        seen = ops.logical_and(in_blocks[:, :, None, :],
                               rule(q_pos[None], e_pos))  # (Ht, n, b, e)
        extra_allowed = ops.logical_and(
            extra_rule(q_pos[None], e_pos), ops.logical_not(seen))
        e_real = ops.take(real, extra, axis=1)[:, None, None, None, :]
        masks.append(ops.logical_and(extra_allowed[None], e_real))
        k_extra = ops.transpose(ops.take(k, extra, axis=1), (0, 2, 1, 3))
        v_extra = ops.transpose(ops.take(v, extra, axis=1), (0, 2, 1, 3))
        score_parts.append(
            ops.einsum("bhnqd,bhkd->bhnqk", qb, k_extra) * scale)
        values.append(ops.broadcast_to(
            v_extra[:, :, None], (ops.shape(v_extra)[0], heads, n,
                                  ops.shape(v_extra)[2], depth)))
    scores = ops.concatenate(score_parts, axis=-1)
    mask = ops.concatenate(
        [ops.broadcast_to(t, (ops.shape(scores)[0], heads,
                              *ops.shape(t)[2:-1], ops.shape(t)[-1]))
         for t in masks], axis=-1)
    probs = drop_weights(masked_softmax(scores, mask), weights_dropout)
    out = ops.einsum("bhnqk,bhnkd->bhnqd", probs,
                     ops.concatenate(values, axis=3))
    out = ops.reshape(ops.transpose(out, (0, 2, 3, 1, 4)),
                      (-1, n * b, heads, depth))  # (B, L', H, D)
    # Global rows: attention over every key the rule allows. Where the
    # first and last rows overlap (one or two blocks) both give the same.
    rows_rule = rule if extra_rule is None else extra_rule
    first, last = global_rows
    if first:
        out = _replace_rows(out, q, k, v, real, rows_rule, 0, first,
                            weights_dropout)
    if last:
        out = _replace_rows(out, q, k, v, real, rows_rule, n * b - last,
                            last, weights_dropout)
    return out[:, :length]


def _replace_rows(out, q, k, v, real, rule, start, count,
                  weights_dropout=None):
    """`out` (B, L', H, D) with rows `start .. start + count - 1` replaced
    by attention over every real key allowed by `rule` (O(count L))."""
    positions = ops.arange(ops.shape(q)[1], dtype="int32")
    rows = ops.slice(q, (0, start, 0, 0),
                     (ops.shape(q)[0], count, q.shape[2], q.shape[3]))
    row_pos = start + ops.arange(count, dtype="int32")
    scores = ops.einsum("bqhd,bkhd->bhqk", rows, k) / math.sqrt(q.shape[-1])
    allowed = ops.logical_and(
        rule(row_pos[:, None], positions[None, :])[None, None],
        real[:, None, None, :])
    probs = drop_weights(masked_softmax(scores, allowed), weights_dropout)
    full = ops.einsum("bhqk,bkhd->bqhd", probs, v)
    return ops.concatenate(
        [out[:, :start], full, out[:, start + count:]], axis=1)


def _num_blocks(length, block_size):
    """Blocks of `block_size` covering `length` (the last one padded)."""
    return (length + (-length) % block_size) // block_size


def _neighbour_blocks(num_blocks, after=1):
    """Each block's index with the one before and `after` after it (n, 2
    + after), the ones outside the sequence clipped and marked invalid."""
    table = (ops.arange(num_blocks, dtype="int32")[:, None]
             + ops.arange(-1, after + 1, dtype="int32"))
    valid = ops.logical_and(table >= 0, table < num_blocks)
    return ops.clip(table, 0, num_blocks - 1), valid


def _causal_rule(causal):
    if causal:
        return lambda q_pos, k_pos: k_pos <= q_pos
    return lambda q_pos, k_pos: ops.ones_like(q_pos + k_pos, dtype="bool")


def _and_causal(rule, causal):
    if not causal:
        return rule
    return lambda q_pos, k_pos: ops.logical_and(rule(q_pos, k_pos),
                                                k_pos <= q_pos)


def sparse_transformer_attention(query, key, value, block_size=128,
                                 summary_size=32, padding_mask=None,
                                 cls_token=False, weights_dropout=None):
    """The Sparse Transformer's fixed pattern, as LRA runs it (causal).

    Key k is seen from query q iff `k <= q` and (`k // l == q // l`, or
    `k mod l == 0`, or `k mod l >= l - c`), l = `block_size`, c =
    `summary_size`: the union of LRA's `Fixed1Pattern` and
    `Fixed2Pattern`. Shapes as `attention_kernels.reference_attention`,
    `weights_dropout` as `block_sparse_attention`.

    With `cls_token`, LRA's variant for a classification token at
    position 0 (`SparseAttention.apply` with `use_cls_token`, lines
    185-190): the pattern is built over positions 1.. (counted from 0
    there) and padded with a first row and column of ones, so position 0
    attends to and is attended by every position. LRA's encoders set it
    whenever they pool "CLS", the dual encoder of Retrieval too, where no
    token is prepended and a document's first token takes the role
    (`sparse_transformer.py` lines 156-162).
    """
    block, c = int(block_size), int(summary_size)
    shift = 1 if cls_token else 0
    # The pattern's blocks start at `shift`: a query's own pattern block
    # lies within its physical block and the one before.
    num_blocks = _num_blocks(ops.shape(query)[1], block)
    # The summary positions of every block: its first and its last c.
    within = ops.concatenate([ops.zeros((1,), "int32"),
                              ops.arange(block - c, block, dtype="int32")])
    extra = ops.reshape(
        ops.arange(num_blocks, dtype="int32")[:, None] * block + within,
        (-1,)) + shift
    if not cls_token:
        table = ops.reshape(ops.arange(num_blocks, dtype="int32"),
                            (1, num_blocks, 1))
        return block_sparse_attention(
            query, key, value, block, table,
            ops.ones_like(table, dtype="bool"), rule=_causal_rule(True),
            extra_keys=extra, padding_mask=padding_mask,
            weights_dropout=weights_dropout)
    # Shifted by one, the last block's last summary position falls past
    # the padded length: dropped. Position 0 is an extra key of every
    # query.
    if c or block == 1:
        extra = extra[:-1]
    extra = ops.concatenate([ops.zeros((1,), "int32"), extra])
    table, valid = _neighbour_blocks(num_blocks, after=0)  # (n, 2)
    table, valid = table[None], valid[None]

    def same_block(q_pos, k_pos):  # causal, within a pattern block
        return ops.logical_and(
            k_pos <= q_pos,
            ops.logical_or(k_pos == 0, (k_pos - 1) // block
                           == (q_pos - 1) // block))

    def summary(q_pos, k_pos):  # causal, and position 0 sees every key
        return ops.logical_or(k_pos <= q_pos, q_pos == 0)

    return block_sparse_attention(
        query, key, value, block, table, valid, rule=same_block,
        extra_keys=extra, extra_rule=summary, global_rows=(1, 0),
        padding_mask=padding_mask, weights_dropout=weights_dropout)


def strided_sparse_attention(query, key, value, stride, padding_mask=None,
                             weights_dropout=None):
    """The Sparse Transformer's strided pattern (causal).

    Child et al. 2019 (https://arxiv.org/abs/1904.10509), section 4.2:
    one head attends to the previous l positions, `A(1)_i = {t, ..., i}`,
    t = max(0, i - l), the other to every l-th one, `A(2)_i = {j : (i - j)
    mod l = 0}`; here one head takes their union, as LRA merges the fixed
    pattern's two. Key k is seen from query q iff `k <= q` and (`q - k <=
    l` or `(q - k) mod l == 0`), l = `stride` (for images, the row width:
    the previous row's pixels and the column above).

    With the length padded to `L' = n l`, the keys within l are in the
    query's own block of l and the one before (`(B, H, n, l, 2 l)`
    scores); the strided ones are the query's column of the (n, l) grid
    (`(B, H, l, n, n)` scores, the two nearest rows left to the first
    part), one softmax over both. Memory O(L (l + L / l)), O(L^1.5) at l
    = sqrt(L). Shapes as `attention_kernels.reference_attention`;
    `weights_dropout` applied to the (batch, heads, n, l, 2 l + n)
    weights.
    """
    q, k, v = (ops.convert_to_tensor(t) for t in (query, key, value))
    b = int(stride)
    length = ops.shape(q)[1]
    (q, k, v), real, n = pad_to_blocks((q, k, v), padding_mask, b)
    depth = q.shape[3]
    scale = 1.0 / math.sqrt(depth)
    qb, kb, vb = (_blocks(t, n, b) for t in (q, k, v))  # (B, H, n, b, D)
    # The near keys: the block before and the query's own.
    table, valid = _neighbour_blocks(n, after=0)  # (n, 2)

    def near(t):  # (B, H, n, b, D) -> (B, H, n, 2 b, D)
        out = ops.take(t, ops.reshape(table, (-1,)), axis=2)
        return ops.reshape(out, (-1, t.shape[1], n, 2 * b, t.shape[-1]))

    k_near, v_near = near(kb), near(vb)
    q_pos = ops.reshape(ops.arange(n * b, dtype="int32"), (n, b, 1))
    k_pos = ops.reshape(table[..., None] * b + ops.arange(b, dtype="int32"),
                        (n, 1, 2 * b))
    gap = q_pos - k_pos
    near_valid = ops.reshape(ops.repeat(valid[..., None], b, axis=-1),
                             (n, 1, 2 * b))
    real_blocks = ops.reshape(real, (-1, n, b))
    k_real = ops.reshape(ops.take(real_blocks, ops.reshape(table, (-1,)),
                                  axis=1), (-1, 1, n, 1, 2 * b))
    near_allowed = ops.logical_and(
        ops.logical_and(near_valid, ops.logical_and(gap >= 0, gap <= b))[
            None, None], k_real)  # (B, 1, n, b, 2 b)
    near_scores = ops.einsum("bhnqd,bhnkd->bhnqk", qb, k_near) * scale
    # The far keys: rows a' <= a - 2 of the query's column (a' = a - 1 is
    # q - l, already near).
    qc, kc, vc = (ops.transpose(t, (0, 1, 3, 2, 4)) for t in (qb, kb, vb))
    rows = ops.arange(n, dtype="int32")
    far_rows = (rows[:, None] - rows[None, :]) >= 2  # (n, n)
    column_real = ops.transpose(real_blocks, (0, 2, 1))  # (B, b, n)
    far_allowed = ops.logical_and(
        far_rows[None, None, None],
        column_real[:, None, :, None, :])  # (B, 1, b, n, n)
    far_scores = ops.einsum("bhcad,bhced->bhcae", qc, kc) * scale
    # One softmax per query over both: (B, H, n, b, 2 b + n).
    to_rows = (0, 1, 3, 2, 4)
    scores = ops.concatenate(
        [near_scores, ops.transpose(far_scores, to_rows)], axis=-1)
    allowed = ops.concatenate(
        [ops.broadcast_to(near_allowed, (ops.shape(real)[0], 1, n, b,
                                         2 * b)),
         ops.transpose(far_allowed, to_rows)], axis=-1)
    probs = drop_weights(masked_softmax(scores, allowed), weights_dropout)
    out = ops.einsum("bhnqk,bhnkd->bhnqd", probs[..., :2 * b], v_near)
    far = ops.einsum("bhcae,bhced->bhcad",
                     ops.transpose(probs[..., 2 * b:], to_rows), vc)
    out = out + ops.transpose(far, to_rows)  # (B, H, n, b, D)
    out = ops.reshape(ops.transpose(out, (0, 2, 3, 1, 4)),
                      (-1, n * b, q.shape[2], depth))
    return out[:, :length]


def longformer_attention(query, key, value, window=512, num_global_tokens=0,
                         padding_mask=None, causal=False,
                         weights_dropout=None):
    """Sliding-window attention with global first tokens (Longformer).

    Query q sees key k iff `-(w // 2) <= q - k <= w - w // 2 - 1` (LRA's
    `_build_sliding_window_mask`: the left side one longer for an even
    window, the query itself included), or either is among the first
    `num_global_tokens` positions; `causal` also requires `k <= q`.
    Blocks of `max(w - w // 2, w // 2)` positions, each attending its own
    and both neighbouring blocks; a sequence of known length no longer than
    that is one block. Shapes as
    `attention_kernels.reference_attention`, `weights_dropout` as
    `block_sparse_attention`.
    """
    right = int(window) // 2
    left = int(window) - right
    block = max(left, right, 1)
    length = query.shape[1]
    if length is not None and length <= block:
        # The window spans the whole sequence: one block of the sequence's
        # own length, gathered alone (dense attention's cost), rather than
        # the sequence padded to a window-sized block and three of them
        # gathered (LRA's Longformer, w = 512, on ListOps' short trees:
        # 12 times the scores of L = 128).
        block = max(int(length), 1)
        table = ops.zeros((1, 1, 1), "int32")
        valid = ops.ones((1, 1, 1), "bool")
    else:
        table, valid = _neighbour_blocks(
            _num_blocks(ops.shape(query)[1], block))
        table, valid = table[None], valid[None]

    def band(q_pos, k_pos):
        d = q_pos - k_pos
        return ops.logical_and(d >= -right, d <= left - 1)

    rule = _and_causal(band, causal)
    extra = None
    extra_rule = None
    g = int(num_global_tokens)
    if g:
        extra = ops.arange(g, dtype="int32")
        extra_rule = _causal_rule(causal)
    return block_sparse_attention(
        query, key, value, block, table, valid, rule=rule, extra_keys=extra,
        extra_rule=extra_rule, global_rows=(g, 0),
        padding_mask=padding_mask, weights_dropout=weights_dropout)


def bigbird_random_blocks(num_blocks, num_heads, num_random_blocks,
                          max_random_position, block_size, seed):
    """BigBird's random key blocks per (head, middle query block).

    For query block i in `[1, n - 2]`: `num_random_blocks` distinct blocks
    drawn among `[1, n - 2]` without i - 1, i, i + 1, and only blocks
    before `max_random_position` (LRA: `last_idx=min(L, 1024)`, the
    candidates below `last_idx // b - 1`). Fewer candidates than draws:
    the surplus entries are invalid. Drawn from the integer `seed` by
    `_hash_ranks`: the same table at every call, under every backend, for
    a given length.

    Returns:
        (table, valid): int32 and bool tensors (heads, n, r).
    """
    n, r = num_blocks, int(num_random_blocks)
    candidates = ops.arange(n, dtype="int32")[None, :]  # (1, n)
    rows = ops.arange(n, dtype="int32")[:, None]  # (n, 1)
    last = ops.maximum(max_random_position // block_size - 1, 1)
    allowed = (
        (candidates >= 1) & (candidates <= n - 2)
        & (ops.abs(candidates - rows) > 1) & (candidates < last)
    )  # (n, n)
    # Rank the allowed candidates of each row by a hash; the disallowed
    # (and r always-invalid extra columns) after them.
    ranks = _hash_ranks(seed, num_heads, n)  # (H, n, n), distinct per row
    worst = _PRIME * n + n
    keys = ops.where(allowed[None], ranks, worst)
    keys = ops.concatenate(
        [keys, ops.full((num_heads, n, r), worst + 1, dtype="int32")], -1)
    # (reshaped so that r stays static when n is not: TensorFlow)
    order = ops.reshape(ops.argsort(keys, axis=-1)[..., :r],
                        (num_heads, n, r))
    valid = ops.reshape(ops.sort(keys, axis=-1)[..., :r] < worst,
                        (num_heads, n, r))
    return ops.clip(ops.cast(order, "int32"), 0, n - 1), valid


# A prime whose square fits in int32: the hash below never overflows.
_PRIME = 46337


def _hash_ranks(seed, heads, n):
    """Pseudo-random ranks (heads, n, n), int32, distinct within a row.

    A quadratic map modulo a prime, fed the seed, head, row and column in
    turn: exact integer arithmetic, so every backend draws the same table
    (`keras.random` streams differ between backends, and the random blocks
    are part of the function, not weights). The column index breaks ties:
    `rank = hash * n + column`.
    """
    head = ops.arange(heads, dtype="int32")[:, None, None]
    row = ops.arange(n, dtype="int32")[None, :, None]
    column = ops.arange(n, dtype="int32")[None, None, :]
    x = ops.zeros((heads, n, n), "int32") + (int(seed) % _PRIME)
    for value in (head, row, column, head, row, column):
        x = (x + value + 1) % _PRIME
        x = (x * x + 12345) % _PRIME
    return x * n + column


def bigbird_attention(query, key, value, block_size=64, num_random_blocks=3,
                      seed=0, padding_mask=None, causal=False,
                      weights_dropout=None):
    """BigBird's internal-transformer-construction pattern, as LRA's code.

    Blocks of `block_size`; the first and last (padded) blocks are global;
    every other block sees its own and neighbouring blocks, the global
    blocks and `num_random_blocks` random blocks per head
    (`bigbird_random_blocks`). `causal` also requires `k <= q`. Shapes as
    `attention_kernels.reference_attention`, `weights_dropout` as
    `block_sparse_attention`.
    """
    b = int(block_size)
    length = ops.shape(query)[1]
    n = _num_blocks(length, b)
    heads = query.shape[2]
    window, window_valid = _neighbour_blocks(n)  # (n, 3)
    random, random_valid = bigbird_random_blocks(
        n, heads, num_random_blocks, ops.minimum(length, 1024), b, seed)
    table = ops.concatenate(
        [ops.broadcast_to(window[None], (heads, n, 3)), random], axis=-1)
    valid = ops.concatenate(
        [ops.broadcast_to(window_valid[None], (heads, n, 3)), random_valid],
        axis=-1)
    extra = ops.concatenate([ops.arange(b, dtype="int32"),
                             ops.arange((n - 1) * b, n * b, dtype="int32")])
    rule = _causal_rule(causal)
    return block_sparse_attention(
        query, key, value, b, table, valid, rule=rule, extra_keys=extra,
        global_rows=(b, b), padding_mask=padding_mask,
        weights_dropout=weights_dropout)
