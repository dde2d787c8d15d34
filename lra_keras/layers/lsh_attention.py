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
`n_buckets=10`) departs from the paper in ways not taken here, each
noted: it multiplies the scores by sqrt(d) instead of dividing
(`dots = ... * (qdim ** 0.5)`), does not normalise the keys
(`length_norm=False`), masks neither the query's own position nor padding,
draws the same rotations at every call and in every layer
(`jax.random.PRNGKey(0)`), and has no output projection. Its chunking is
the one here with `chunk_size = L / n_buckets` (it cuts the `n_hashes L`
sorted positions into `n_hashes n_buckets` chunks), the default below.
Here the rotations are a non-trainable weight drawn at build (saved with
the model, like the Performer's features), padded keys are masked and the
scale is 1/sqrt(d).
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

    def with_previous(t):  # chunk and the one before it (the last wraps)
        previous = ops.concatenate([t[:, :, :, -1:], t[:, :, :, :-1]], 3)
        return ops.concatenate([t, previous], axis=4)

    cq = chunks(sq)
    ck, cv = with_previous(chunks(sk)), with_previous(chunks(sv))
    qpos = chunks(spos)
    kpos = with_previous(chunks(spos))
    kreal = with_previous(chunks(sreal))
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
    undo = ops.cast(ops.argsort(order, axis=-1), "int32")
    out = ops.take_along_axis(out, undo[..., None], axis=3)  # (B,H,R,L',Dv)
    lse = ops.take_along_axis(lse, undo, axis=3)  # (B, H, R, L')
    if rotations.shape[1] == 1:
        out = out[:, :, 0]  # one round: nothing to combine
    else:
        weights = ops.softmax(lse, axis=2)[..., None]
        out = ops.sum(out * weights, axis=2)  # (B, H, L', Dv)
    return ops.transpose(out, (0, 2, 1, 3))[:, :length]
