"""Reformer's LSH attention (Kitaev et al. 2020), in `keras.ops`.

https://arxiv.org/abs/2001.04451, section 2: queries and keys share one
projection (keys are the unit-normalised queries); each position is
hashed by a random rotation, `h(x) = argmax([x R; -x R])` over
`num_buckets` buckets, in `num_hashes` independent rounds; each round
sorts the positions by (bucket, position), cuts the sorted sequence into
chunks of `chunk_size` and lets every chunk attend to itself and to the
chunk before it. A position attends to itself only when nothing else is
available: its own score is replaced by -1e5 (the paper's "masking for
shared-QK attention"). The rounds are combined with weights
`softmax_r(logsumexp of round r's scores)`, which equals softmax attention
over the union of the rounds' windows when they do not overlap.
Memory O(num_hashes L chunk_size).

Not causal: which earlier keys share a query's window depends on the
later positions' buckets (they move the chunk boundaries), so masking
later keys would not keep the future out; `RotaryMultiHeadAttention`
refuses `causal=True` with it, as LRA never runs a causal Reformer
("We don't need causal reformer for any task YET",
`reformer_attention.py`).

LRA's Reformer (`lra_benchmarks/models/reformer/reformer_attention.py`,
at its defaults since `reformer.py` passes none: `n_hashes=1`,
`n_buckets=10`) departs from the paper: it multiplies the scores by
sqrt(d) instead of dividing (`dots = ... * (qdim ** 0.5)`, line 191),
does not normalise the keys (`length_norm=False`), masks neither the
query's own position nor padding, draws the same rotations at every call
and in every layer (`jax.random.PRNGKey(0)`, line 149), sorts its rounds
as one sequence (a round's first chunk looks back to the previous
round's last), pads its inputs by `chunk_len - L % chunk_len` zero
positions (`chunk_len` 10, lines 308-312), has no output projection, and
reshapes its (heads, L, d) output to (L, heads d) without moving the
heads (line 337), so that position p's features are `heads` consecutive
positions of one head. `lra_lsh_attention` computes that attention, the
layer's `reformer_variant="lra"` the rest (LRA's rows). `lsh_attention`
is the paper's: its chunking is LRA's with `chunk_size = L / n_buckets`
(the default below), its rotations a non-trainable weight drawn at build
(saved with the model, like the Performer's features), padded keys
masked and the scale 1/sqrt(d).
"""

import math

from keras import ops

from lra_keras.layers.efficient_attention import pad_to_blocks

# The score of a position with itself (Reformer section 2, "shared-QK").
SELF_SCORE = -1e5
_MASKED = -1e9


def lsh_buckets(vectors, rotations):
    """Angular LSH buckets: argmax over `[x R, -x R]`.

    Args:
        vectors: tensor (batch, L, heads, D).
        rotations: tensor (D, num_hashes, num_buckets // 2), or
            (D, num_hashes, 0) for a single bucket.

    Returns:
        int32 tensor (batch, heads, num_hashes, L).
    """
    if rotations.shape[-1] == 0:  # one bucket: every position in it
        shape = ops.shape(vectors)
        return ops.zeros((shape[0], shape[2], rotations.shape[1], shape[1]),
                         "int32")
    rotated = ops.einsum("blhd,dri->bhrli", vectors, rotations)
    rotated = ops.concatenate([rotated, -rotated], axis=-1)
    return ops.cast(ops.argmax(rotated, axis=-1), "int32")


def _gather_rows(x, order):
    """x (B, H, L, ...) gathered along L by order (B, H, R, L) -> (B, H,
    R, L, ...)."""
    index = order
    for _ in range(len(x.shape) - 3):
        index = index[..., None]
    return ops.take_along_axis(x[:, :, None], index, axis=3)


def _look_one_back(t, axis):
    """Each chunk along `axis` with the chunk before it appended along the
    next axis (the first chunk takes the last): LRA's `look_one_back`."""
    return ops.concatenate([t, ops.roll(t, 1, axis=axis)], axis=axis + 1)


def _unsort_and_combine(out, lse, order):
    """Rounds' outputs (B, H, R, L, Dv) and logsumexps (B, H, R, L) in
    sorted order back to position order, combined by the softmax of the
    logsumexps over the rounds: (B, H, L, Dv)."""
    undo = ops.cast(ops.argsort(order, axis=-1), "int32")
    out = ops.take_along_axis(out, undo[..., None], axis=3)
    if out.shape[2] == 1:
        return out[:, :, 0]  # one round: nothing to combine
    weights = ops.softmax(ops.take_along_axis(lse, undo, axis=3), axis=2)
    return ops.sum(out * weights[..., None], axis=2)


def lsh_attention(query, value, rotations, chunk_size=None,
                  padding_mask=None):
    """Reformer's multi-round LSH attention with shared queries and keys.

    Args:
        query: tensor (batch, L, heads, D); the keys are its rows
            normalised to unit length.
        value: tensor (batch, L, heads, Dv).
        rotations: tensor (D, num_hashes, num_buckets // 2) (`lsh_buckets`).
        chunk_size: int or None. Positions per chunk of a sorted round;
            None: `ceil(L / num_buckets)` (LRA's chunks).
        padding_mask: optional (batch, L), nonzero at real tokens. Padded
            positions sort after every real one, so the real positions'
            windows do not depend on the padding.

    Returns:
        Tensor (batch, L, heads, Dv).
    """
    q = ops.convert_to_tensor(query)
    v = ops.convert_to_tensor(value)
    length = ops.shape(q)[1]
    num_buckets = max(2 * rotations.shape[2], 1)
    if chunk_size is None:
        chunk_size = (length + num_buckets - 1) // num_buckets
    c = chunk_size
    (q, v), real, nc = pad_to_blocks((q, v), padding_mask, c)
    padded = nc * c
    depth = q.shape[-1]
    k = q / ops.sqrt(ops.sum(q * q, axis=-1, keepdims=True) + 1e-6)
    buckets = lsh_buckets(q, rotations)  # (B, H, R, L')
    buckets = ops.where(real[:, None, None, :], buckets, num_buckets)
    positions = ops.arange(padded, dtype="int32")
    # Sort each round by (bucket, position).
    order = ops.argsort(buckets * padded + positions, axis=-1)
    order = ops.cast(order, "int32")  # (B, H, R, L')
    qt, kt, vt = (ops.transpose(t, (0, 2, 1, 3)) for t in (q, k, v))
    sq, sk, sv = (_gather_rows(t, order) for t in (qt, kt, vt))
    spos = order  # sorted positions (B, H, R, L')
    sreal = _gather_rows(
        ops.broadcast_to(real[:, None], (ops.shape(real)[0], qt.shape[1],
                                         padded)), order)

    def chunks(t):  # (B, H, R, L', ...) -> (B, H, R, nc, c, ...)
        return ops.reshape(t, (*ops.shape(t)[:3], nc, c, *t.shape[4:]))

    cq = chunks(sq)
    ck, cv = _look_one_back(chunks(sk), 3), _look_one_back(chunks(sv), 3)
    qpos = chunks(spos)
    kpos = _look_one_back(chunks(spos), 3)
    kreal = _look_one_back(chunks(sreal), 3)
    scores = ops.einsum("bhrnqd,bhrnkd->bhrnqk", cq, ck) / math.sqrt(depth)
    allowed = kreal[..., None, :]
    is_self = kpos[..., None, :] == qpos[..., :, None]
    scores = ops.where(is_self, SELF_SCORE, scores)
    scores = ops.where(allowed, scores, _MASKED)
    # Normalised from the row's maximum: exp(score - logsumexp) loses the
    # sum's precision at the self score's magnitude (1e5) in float32.
    peak = ops.max(scores, axis=-1, keepdims=True)
    unnormalised = ops.where(allowed, ops.exp(scores - peak), 0.0)
    total = ops.sum(unnormalised, axis=-1, keepdims=True)
    probs = unnormalised / ops.maximum(total, 1e-30)
    lse = peak + ops.log(ops.maximum(total, 1e-30))
    out = ops.einsum("bhrnqk,bhrnkd->bhrnqd", probs, cv)
    out = ops.reshape(out, (*ops.shape(out)[:3], padded, out.shape[-1]))
    lse = ops.reshape(lse, (*ops.shape(lse)[:3], padded))
    # Back to the original order, then combine the rounds.
    out = _unsort_and_combine(out, lse, order)  # (B, H, L', Dv)
    return ops.transpose(out, (0, 2, 1, 3))[:, :length]


def lra_lsh_attention(query, value, rotations):
    """LRA's `lsh_attention_single_head` over every batch row and head
    (google-research/long-range-arena
    `models/reformer/reformer_attention.py` lines 128-215).

    Each of the R rounds sorts the positions by (bucket, position); the R
    sorted rounds, one after another, are cut into `R * n_buckets`
    chunks of `L / n_buckets`, each attending to itself and to the chunk
    before it (`look_one_back`: the first chunk of a round to the last
    of the round before, the very first to the very last). The keys are
    the queries themselves (not normalised), the scores `q . k * sqrt(d)`,
    no position masked (not its own, not padding); the rounds are
    combined by the softmax of their logsumexps (lines 199-212). The
    scores, unbounded (|q|^2 sqrt(d)), are formed in float32 whatever the
    inputs' dtype, so that a float16 policy does not overflow them.

    Args:
        query: tensor (batch, L, heads, D), L a multiple of the number of
            buckets (LRA's inputs are padded to a multiple of 10).
        value: tensor (batch, L, heads, Dv).
        rotations: tensor (D, num_hashes, num_buckets // 2).

    Returns:
        Tensor (batch, heads, L, Dv): LRA's layout before its reshape.
    """
    q = ops.convert_to_tensor(query)
    v = ops.convert_to_tensor(value)
    length = ops.shape(q)[1]
    rounds, buckets_per_round = rotations.shape[1], 2 * rotations.shape[2]
    if buckets_per_round < 2 or (isinstance(length, int)
                                 and length % buckets_per_round):
        raise ValueError(
            "LRA's LSH attention cuts each sorted round into one chunk per "
            "bucket: it needs an even number of buckets dividing the "
            f"length. Received: {buckets_per_round} buckets, length "
            f"{length}")
    chunk = length // buckets_per_round
    heads, depth, value_depth = q.shape[2], q.shape[-1], v.shape[-1]
    buckets = lsh_buckets(q, rotations)  # (B, H, R, L)
    positions = ops.arange(length, dtype="int32")
    order = ops.cast(ops.argsort(buckets * length + positions, axis=-1),
                     "int32")
    qt, vt = (ops.transpose(t, (0, 2, 1, 3)) for t in (q, v))
    sq, sv = _gather_rows(qt, order), _gather_rows(vt, order)

    def chunks(t, size):  # (B, H, R, L, d) -> (B, H, R n_buckets, c, d)
        return ops.reshape(t, (-1, heads, rounds * buckets_per_round,
                               chunk, size))

    cq = ops.cast(chunks(sq, depth), "float32")
    cv = _look_one_back(ops.cast(chunks(sv, value_depth), "float32"), 2)
    scores = ops.einsum("bhnqd,bhnkd->bhnqk", cq, _look_one_back(cq, 2))
    scores = scores * math.sqrt(depth)
    lse = ops.logsumexp(scores, axis=-1, keepdims=True)
    out = ops.einsum("bhnqk,bhnkd->bhnqd", ops.exp(scores - lse), cv)
    out = ops.reshape(out, (-1, heads, rounds, length, value_depth))
    lse = ops.reshape(lse, (-1, heads, rounds, length))
    return ops.cast(_unsort_and_combine(out, lse, order), v.dtype)
