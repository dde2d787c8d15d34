"""Scaled dot-product attention that stays fast and lean on every backend.

`keras.ops.dot_product_attention` dispatches to a fused kernel where the
backend has one (PyTorch's `scaled_dot_product_attention` on CPU and GPU,
cuDNN under JAX on GPU). Under JAX and TensorFlow on CPU it materialises the
full (batch, heads, L, L) score tensor, and the autodiff keeps several of them
per layer for the backward pass: ~19 GB for a 4-layer model at L=2048, batch
16. `chunked_attention` below computes exactly the same function in blocks of
queries with a hand-written backward pass (the FlashAttention recurrences,
Dao et al. 2022, https://arxiv.org/abs/2205.14135, at query-block
granularity): the forward pass keeps only the output and the per-row
log-sum-exp, and the backward pass recomputes one block of probabilities at a
time. Peak memory is O(batch · heads · block · L) instead of
O(layers · batch · heads · L²).

References:
- FlashAttention: https://arxiv.org/abs/2205.14135
- Online softmax normaliser: https://arxiv.org/abs/1805.02867
"""

import math

import keras
from keras import ops

from lra_keras.backend_utils import on_accelerator

IMPLEMENTATIONS = ("auto", "fused", "chunked", "reference")

# Large finite negative bias for masked keys: keeps a fully masked row finite
# (uniform weights) instead of producing NaN from exp(-inf - -inf).
_MASK_BIAS = -1e9


def _mask_bias(dtype):
    """`_MASK_BIAS`, or half float16's largest finite value in float16
    scores, where -1e9 rounds to -inf and a fully masked row (a padded
    query whose attention windows hold only padding) would give NaN."""
    if keras.backend.standardize_dtype(dtype) == "float16":
        return -32752.0
    return _MASK_BIAS

# Target number of float32 score elements materialised per query block
# (2**22 floats = 16 MiB). Blocks of fewer than 64 queries waste the matmul.
_BLOCK_ELEMENTS = 2**22
_MIN_BLOCK = 64


# Under TensorFlow on CPU, "auto" keeps plain attention below this many keys
# and takes the chunked path from it on (see `resolve_implementation`).
TENSORFLOW_CHUNKED_FROM = 4096

# Under JAX on an accelerator, "auto" takes the chunked path when the fused
# call gets no flash kernel and its (batch, heads, Lq, Lk) scores would
# hold this many elements or more (see `resolve_implementation`).
JAX_ACCELERATOR_CHUNKED_FROM = 2**31


def flash_eligible(query, padding_mask=None):
    """Whether `keras.ops.dot_product_attention` can give these inputs a
    flash kernel: half-precision queries (float16 or bfloat16), a head
    size that is a multiple of 8, and no mask.

    These are the conditions of cuDNN's fused attention as Keras calls it
    under JAX (`keras.src.backend.jax.nn._can_use_flash_attention`; on an
    Ampere or newer GPU) and of PyTorch's FLASH backend. A mask, even an
    all-ones one, keeps both off it: on an H200, bf16, 4 heads of 32,
    65,536 tokens, JAX then ran XLA's path (16K: 51.0 ms and 40 GiB of
    temporaries a step against 8.6 ms and 0.06 GiB; 64K: its autotuning
    ran out of memory), PyTorch cuDNN's masked kernel (13.7 ms against
    9.3 ms) (`benchmarks/attention_dispatch.py`,
    docs/results/gpu_h200_dispatch).
    """
    dtype = keras.backend.standardize_dtype(query.dtype)
    return (padding_mask is None and dtype in ("float16", "bfloat16")
            and query.shape[-1] is not None and query.shape[-1] % 8 == 0)


def resolve_implementation(implementation="auto", key_length=None, *,
                           scores=None, flash=False):
    """Picks the attention path used by `attention` on this backend.

    `"auto"` is the fastest exact path that fits in memory, measured on
    2 CPU cores (`benchmarks/attention.py`, and a training step of the
    quick Transformer: batch 32, width 64, 4 heads, 2 blocks) and on an
    H200 (`benchmarks/attention_dispatch.py`):
    - torch: `"fused"` (PyTorch's fused kernels stream their scores on
      CPU and GPU: flash, memory-efficient or cuDNN); TensorFlow on an
      accelerator too (not measured);
    - jax on an accelerator: `"fused"` when it gets cuDNN's flash kernel
      (`flash`, see `flash_eligible`) or its `scores` (batch x heads x
      Lq x Lk) stay under `JAX_ACCELERATOR_CHUNKED_FROM`; `"chunked"`
      otherwise. XLA's fused path materialises the scores: on an H200 at
      L = 4096, batch 16, 4 heads of 32 (2**30 scores), float32, it took
      12.9 ms and 12 GiB of temporaries a step against the chunked path's
      23.0 ms and 0.28 GiB; at L = 16384, batch 4 (2**32 scores) it asked
      for 48 GiB and ran out of memory alone, and inside a 4-block model
      it returned in 5.7 ms, faster than the arithmetic allows, i.e. not a
      valid step; chunked: 90.5 ms, 0.28 GiB, its error 0;
    - jax on CPU: `"chunked"`: 1.5 s a step at L = 1024 against 2.7 s for
      `"reference"` and 7.1 s for `"fused"` (XLA's CPU path materialises
      and re-reads L x L scores);
    - tensorflow on CPU: `"reference"` below `TENSORFLOW_CHUNKED_FROM`
      keys (1.1 s a step at L = 1024 and 4.1 s at 2048, against 1.8 s and
      7.1 s chunked: XLA compiles TensorFlow's while loop over small
      blocks poorly) and when the length is unknown while tracing;
      `"chunked"` from it on, whose memory is linear in L: plain attention
      keeps several (batch, heads, L, L) tensors per layer, over 20 GB for
      four layers at L = 4096, batch 16.

    Args:
        implementation: one of `IMPLEMENTATIONS`; any but `"auto"` is
            returned as it is.
        key_length: int or None. Keys per sequence (None: unknown while
            tracing).
        scores: int or None. Elements of the (batch, heads, Lq, Lk) score
            tensor (None: unknown).
        flash: bool. Whether the fused call can take a flash kernel
            (`flash_eligible`).
    """
    if implementation not in IMPLEMENTATIONS:
        raise ValueError(
            f"`implementation` must be one of {IMPLEMENTATIONS}. "
            f"Received: implementation={implementation!r}"
        )
    if implementation != "auto":
        return implementation
    backend = keras.backend.backend()
    if backend == "jax" and on_accelerator():
        if flash or (scores is not None
                     and scores < JAX_ACCELERATOR_CHUNKED_FROM):
            return "fused"
        return "chunked"
    if backend == "torch" or on_accelerator():
        return "fused"
    if backend == "tensorflow" and (key_length is None
                                    or key_length < TENSORFLOW_CHUNKED_FROM):
        return "reference"
    return "chunked"


def _key_bias(padding_mask, dtype):
    """(batch, L) mask of real keys -> additive bias (batch, 1, 1, L)."""
    if padding_mask is None:
        return None
    bias = ops.where(ops.cast(padding_mask, "bool"), 0.0, _mask_bias(dtype))
    return ops.cast(bias[:, None, None, :], dtype)


def _causal_bias(start, size, length, dtype):
    """Additive bias (size, length) for queries start .. start + size - 1:
    key j > query i is masked. `start` may be a traced scalar."""
    rows = start + ops.arange(size, dtype="int32")[:, None]
    cols = ops.arange(length, dtype="int32")[None, :]
    return ops.cast(ops.where(cols > rows, _mask_bias(dtype), 0.0), dtype)


def _block_bias(bias, causal, start, size, length, dtype):
    block = bias
    if causal:
        c = _causal_bias(start, size, length, dtype)
        block = c if block is None else block + c
    return block


def uniform_masked_rows(scores, query_mask):
    """LRA's flax pair mask on scores (batch, heads, Lq, Lk) that already
    carry the key bias: the logits of a padded query all set to 0, so it
    attends uniformly to every key, the padded ones included.

    Flax's `SelfAttention` (google-research/long-range-arena
    `models/transformer/transformer.py` line 59) masks a (query, key)
    pair unless both are real (`make_padding_mask`) and adds -1e10 to
    the masked logits: a padded query's logits all become -1e10 (float32
    rounds away any logit below 512 in size), whose softmax is uniform.
    `query_mask` None: every query is real.
    """
    if query_mask is None:
        return scores
    rows = ops.cast(query_mask, "bool")[:, None, :, None]
    return ops.where(rows, scores, ops.zeros_like(scores))


def uniform_masked_outputs(out, value, query_mask, weights_dropout=None):
    """The outputs (batch, Lq, heads, D) of padded queries replaced by
    uniform attention over every value: `uniform_masked_rows` for kernels
    that do not form every (query, key) weight. Without
    `weights_dropout`, the mean of the values; with it, the uniform
    weights (batch, heads, Lq, Lk) formed and dropped as flax drops every
    weight (memory quadratic in L, as LRA's dense masks are)."""
    if query_mask is None:
        return out
    rows = ops.cast(query_mask, "bool")[:, :, None, None]
    value = ops.cast(value, out.dtype)
    if weights_dropout is None:
        uniform = ops.broadcast_to(
            ops.mean(value, axis=1, keepdims=True), ops.shape(out))
    else:
        batch, q_len, heads = (ops.shape(out)[i] for i in range(3))
        k_len = ops.shape(value)[1]
        weights = ops.ones((batch, heads, q_len, k_len), out.dtype) / (
            ops.cast(k_len, out.dtype))
        uniform = ops.einsum("bhqk,bkhd->bqhd",
                             drop_weights(weights, weights_dropout), value)
    return ops.where(rows, out, uniform)


def drop_weights(probs, weights_dropout):
    """`weights_dropout(probs)`, or `probs` when it is None: the dropout
    on the attention weights (after the softmax, before the values) that
    every kernel taking `weights_dropout` applies."""
    return probs if weights_dropout is None else weights_dropout(probs)


def reference_attention(query, key, value, padding_mask=None, causal=False,
                        weights_dropout=None, query_mask=None,
                        pair_mask=None):
    """Plain softmax attention, materialising all scores (the test oracle).

    Shapes as `keras.ops.dot_product_attention`: query (batch, Lq, heads, D),
    key/value (batch, Lk, heads, D), padding_mask (batch, Lk) of real keys.
    `weights_dropout`: None, or a callable applied to the attention
    weights (batch, heads, Lq, Lk) before they weigh the values
    (`drop_weights`). `query_mask`: None, or (batch, Lq) of real queries,
    the padded ones attending uniformly to every key
    (`uniform_masked_rows`). `pair_mask`: None, or (Lq, Lk) boolean,
    True at the (query, key) pairs allowed (`windowed_attention`'s
    windows at a length known only at run time).
    """
    scale = 1.0 / math.sqrt(query.shape[-1])
    q = ops.transpose(query, (0, 2, 1, 3))  # (B, H, Lq, D)
    k = ops.transpose(key, (0, 2, 3, 1))  # (B, H, D, Lk)
    v = ops.transpose(value, (0, 2, 1, 3))  # (B, H, Lk, D)
    scores = ops.matmul(q * scale, k)  # (B, H, Lq, Lk)
    q_len, k_len = ops.shape(scores)[2], ops.shape(scores)[3]
    bias = _block_bias(
        _key_bias(padding_mask, scores.dtype), causal, 0, q_len, k_len,
        scores.dtype,
    )
    if bias is not None:
        scores = scores + bias
    if pair_mask is not None:
        scores = scores + ops.cast(ops.where(
            pair_mask, 0.0, _mask_bias(scores.dtype)), scores.dtype)
    scores = uniform_masked_rows(scores, query_mask)
    probs = drop_weights(ops.softmax(scores, axis=-1), weights_dropout)
    return ops.transpose(ops.matmul(probs, v), (0, 2, 1, 3))


def _block_size(batch, heads, length, block_size):
    if block_size is not None:
        return int(block_size)
    per_query = max(1, batch * heads * length)
    return max(_MIN_BLOCK, _BLOCK_ELEMENTS // per_query)


def _split_blocks(x, num_blocks, size):
    """(B, H, num_blocks * size, D) -> (num_blocks, B, H, size, D)."""
    heads, depth = x.shape[1], x.shape[3]
    x = ops.reshape(x, (-1, heads, num_blocks, size, depth))
    return ops.transpose(x, (2, 0, 1, 3, 4))


def _merge_blocks(x):
    """(num_blocks, B, H, size, D) -> (B, H, num_blocks * size, D)."""
    num_blocks, _, heads, size, depth = x.shape
    x = ops.transpose(x, (1, 2, 0, 3, 4))
    return ops.reshape(x, (-1, heads, num_blocks * size, depth))


def _make_chunked(num_blocks, size, causal, length):
    """Builds the custom-gradient attention for a fixed block layout.

    Inputs are in (batch, heads, L, D) layout with the query already scaled
    and padded to `num_blocks * size` rows; `bias` is an additive
    (batch, 1, 1, Lk) key bias (zeros when unmasked). Both passes walk the
    query blocks with `keras.ops.fori_loop` (`lax.fori_loop`,
    `tf.while_loop`, a Python loop under PyTorch), so one block's scores
    exist at a time: an unrolled loop lets XLA schedule every block at once
    (measured: 23 GB for two layers at L = 16K under JAX).
    """

    def scores(q_b, k_t, bias, start):
        s = ops.matmul(q_b, k_t)  # (B, H, C, Lk)
        return s + _block_bias(bias, causal, start, size, length, s.dtype)

    def put(blocks, i, block):
        return ops.slice_update(blocks, (i, 0, 0, 0, 0), block[None])

    @ops.custom_gradient
    def attend(q, k, v, bias):
        k_t = ops.transpose(k, (0, 1, 3, 2))  # (B, H, D, Lk)
        q_blocks = _split_blocks(q, num_blocks, size)  # (n, B, H, C, D)

        def forward_block(i, carry):
            out_blocks, lse_blocks = carry
            s = scores(q_blocks[i], k_t, bias, i * size)
            m = ops.max(s, axis=-1, keepdims=True)  # (B, H, C, 1)
            p = ops.exp(s - m)
            denom = ops.sum(p, axis=-1, keepdims=True)
            return (put(out_blocks, i, ops.matmul(p, v) / denom),
                    put(lse_blocks, i, m + ops.log(denom)))

        out_blocks, lse_blocks = ops.fori_loop(
            0, num_blocks, forward_block,
            (ops.zeros_like(q_blocks), ops.zeros_like(q_blocks[..., :1])),
        )
        out = _merge_blocks(out_blocks)  # (B, H, Lq, D)

        def grad(*args, upstream=None):
            d_out = args[0] if upstream is None else upstream  # (B,H,Lq,D)
            do_blocks = _split_blocks(d_out, num_blocks, size)
            # delta_i = sum_j P_ij dP_ij = <dO_i, O_i>
            delta_blocks = ops.sum(do_blocks * out_blocks, axis=-1,
                                   keepdims=True)
            v_t = ops.transpose(v, (0, 1, 3, 2))  # (B, H, D, Lk)

            def backward_block(i, carry):
                dq_blocks, dk, dv = carry
                q_b, do_b = q_blocks[i], do_blocks[i]
                s = scores(q_b, k_t, bias, i * size)
                p = ops.exp(s - lse_blocks[i])  # (B, H, C, Lk)
                dv = dv + ops.matmul(ops.transpose(p, (0, 1, 3, 2)), do_b)
                ds = p * (ops.matmul(do_b, v_t) - delta_blocks[i])
                dk = dk + ops.matmul(ops.transpose(ds, (0, 1, 3, 2)), q_b)
                return put(dq_blocks, i, ops.matmul(ds, k)), dk, dv

            dq_blocks, dk, dv = ops.fori_loop(
                0, num_blocks, backward_block,
                (ops.zeros_like(q_blocks), ops.zeros_like(k),
                 ops.zeros_like(v)),
            )
            return _merge_blocks(dq_blocks), dk, dv, ops.zeros_like(bias)

        return out, grad

    return attend


def chunked_attention(
    query, key, value, padding_mask=None, causal=False, block_size=None
):
    """Exact softmax attention in query blocks with a recomputing backward.

    Same contract as `reference_attention`; `block_size` is the number of
    queries per block (default: as many as keep one block of scores near
    16 MiB, at least 64).
    """
    batch, q_len, heads, depth = query.shape
    k_len = key.shape[1]
    if q_len is None or k_len is None:
        raise ValueError(
            "chunked_attention needs static sequence lengths. "
            f"Received: query.shape={query.shape}, key.shape={key.shape}"
        )
    if causal and q_len != k_len:
        raise ValueError(
            "causal attention needs equal query and key lengths. "
            f"Received: query.shape={query.shape}, key.shape={key.shape}"
        )
    size = min(_block_size(batch or 1, heads, k_len, block_size), q_len)
    num_blocks = -(-q_len // size)
    attend = _make_chunked(num_blocks, size, causal, k_len)
    scale = 1.0 / math.sqrt(depth)
    q = ops.transpose(query, (0, 2, 1, 3)) * scale  # (B, H, Lq, D)
    if num_blocks * size > q_len:
        # Zero query rows pad the last block; their outputs are dropped and
        # their zero upstream gradient adds nothing to dK or dV.
        q = ops.pad(q, ((0, 0), (0, 0), (0, num_blocks * size - q_len),
                        (0, 0)))
    k = ops.transpose(key, (0, 2, 1, 3))  # (B, H, Lk, D)
    v = ops.transpose(value, (0, 2, 1, 3))
    bias = _key_bias(padding_mask, q.dtype)
    if bias is None:
        bias = ops.zeros_like(k[:, :1, None, :, 0])  # (B, 1, 1, Lk)
    out = attend(q, k, v, bias)[:, :, :q_len]
    return ops.transpose(out, (0, 2, 1, 3))  # (B, Lq, H, D)


def attention(
    query,
    key,
    value,
    padding_mask=None,
    causal=False,
    implementation="auto",
    block_size=None,
    weights_dropout=None,
    query_mask=None,
):
    """Multi-head softmax attention through the fastest exact path.

    Args:
        query: tensor (batch, Lq, heads, head_dim).
        key: tensor (batch, Lk, heads, head_dim).
        value: tensor (batch, Lk, heads, head_dim).
        padding_mask: optional (batch, Lk) boolean tensor, True at real keys.
        causal: bool. Query i attends only to keys j <= i.
        implementation: `"auto"`, `"fused"`
            (`keras.ops.dot_product_attention`), `"chunked"`
            (`chunked_attention`; falls back to `"fused"` when a sequence
            length is unknown at trace time) or `"reference"`.
        block_size: queries per block of the chunked path.
        weights_dropout: None, or a callable applied to the attention
            weights (`drop_weights`). Only the reference path forms them:
            given one, the attention takes it whatever `implementation`
            says (memory quadratic in L).
        query_mask: optional (batch, Lq) boolean tensor, True at real
            queries: a padded query attends uniformly to every key, as
            under LRA's flax pair mask (`uniform_masked_rows`), future
            keys included when `causal` (flax's masks combine so; real
            queries never see a padded one).

    Returns:
        Tensor (batch, Lq, heads, head_dim).
    """
    scores = None
    if None not in (query.shape[:3] + key.shape[1:2]):
        scores = (query.shape[0] * query.shape[2] * query.shape[1]
                  * key.shape[1])
    impl = ("reference" if weights_dropout is not None
            else resolve_implementation(
                implementation, key.shape[1], scores=scores,
                flash=flash_eligible(query, padding_mask)))
    if impl == "chunked" and None in (query.shape[1], key.shape[1]):
        # Lengths unknown while tracing (TensorFlow relaxes shapes after
        # retracing for several lengths): blocks cannot be laid out.
        impl = "fused"
    if impl == "reference":
        return reference_attention(query, key, value, padding_mask, causal,
                                   weights_dropout, query_mask)
    if impl == "chunked":
        out = chunked_attention(
            query, key, value, padding_mask, causal, block_size
        )
    else:
        mask = None
        if padding_mask is not None:
            mask = ops.cast(padding_mask, "bool")[:, None, None, :]
        out = ops.dot_product_attention(
            query, key, value, mask=mask, is_causal=causal
        )
    return uniform_masked_outputs(out, value, query_mask)


def pad_to_blocks(tensors, padding_mask, b, whole_block=False):
    """(B, L, ...) tensors zero-padded to L' = n b, the next multiple of
    `b`; with the real-token mask (B, L') (the added positions not real)
    and n.

    `whole_block=True` pads as LRA's local and BigBird attentions pad
    their inputs: `b - L % b` positions, a whole block when `b` divides
    L, marked real (google-research/long-range-arena
    `models/local/local_attention.py` lines 228-237 and
    `models/bigbird/bigbird_attention.py` lines 484-490: the boolean mask
    is padded with -1e9, which is True; the outputs are cut back to L,
    lines 413 and 654). Padded before the projections, their keys and
    values are the projections' biases.
    """
    length = ops.shape(tensors[0])[1]
    pad = b - length % b if whole_block else (-length) % b
    if padding_mask is None:
        padding_mask = ops.ones(ops.shape(tensors[0])[:2], dtype="bool")
    real = ops.pad(ops.cast(padding_mask, "bool"), ((0, 0), (0, pad)),
                   constant_values=whole_block)
    padded = tuple(
        ops.pad(t, ((0, 0), (0, pad)) + ((0, 0),) * (len(t.shape) - 2))
        for t in tensors)
    return padded, real, (length + pad) // b


def windowed_attention(query, key, value, window, look_backward=1,
                       look_forward=1, padding_mask=None,
                       implementation="auto", block_size=None,
                       weights_dropout=None):
    """Softmax attention within windows and their neighbours.

    The positions are cut into windows of `window`; a query of window `w`
    attends to every key of windows `w - look_backward` to
    `w + look_forward` (those that exist), as the NTFS code's Path-X
    Transformers attend (`mhfla`: `LocalFlashAttention`,
    IdoAmos/not-from-scratch `local_attention/local_attention.py` lines
    259-398, whose `look_around` pads the missing neighbours with a value
    it then masks; `exact_windowsize=False`: whole windows, not a band).
    Each window is one exact `attention` over its keys' slice (the
    chunked path for long ones), so no (L, L) score matrix is formed.
    A sequence of at most one window is plain attention. The NTFS code
    takes only whole numbers of windows (no `autopad`); here a trailing
    part window is allowed, its missing positions padded as masked keys
    (a class token's extra position, a bucketed batch). Up to
    `LOOPED_WINDOWS` windows (the paper rows: 4 and 8) each is its own
    attention call over its keys' slice; more windows are one call over
    a batch of windows (`_windows_batched`), as the NTFS code's
    `look_around` lays them out, the missing neighbours of the first and
    last windows masked: one call per window traced 64 calls for 16K
    positions in windows of 256 and spent more time between them than
    in them (the small Path-X Transformer's step: 9.8 s under PyTorch at
    both 256 and 512). A length unknown while tracing
    (an export's, TensorFlow's relaxed shapes) takes the same windows as
    one mask over all (L, L) pairs (`_windows_by_mask`: memory quadratic
    in L, as the plain attention it replaces there).

    Args:
        query, key, value: tensors (batch, L, heads, head_dim), one
            length.
        window: int. Positions per window.
        look_backward, look_forward: ints >= 0. Neighbouring windows
            attended on each side.
        padding_mask: optional (batch, L) boolean tensor, True at real
            keys.
        implementation, block_size, weights_dropout: as `attention`.

    Returns:
        Tensor (batch, L, heads, head_dim).
    """
    length = query.shape[1]
    if length is None:
        return _windows_by_mask(query, key, value, window, look_backward,
                                look_forward, padding_mask, weights_dropout)
    if length <= window:
        return attention(query, key, value, padding_mask,
                         implementation=implementation,
                         block_size=block_size,
                         weights_dropout=weights_dropout)
    if length % window:
        (query, key, value), real, _ = pad_to_blocks(
            (query, key, value), padding_mask, window)
        return windowed_attention(
            query, key, value, window, look_backward, look_forward, real,
            implementation, block_size, weights_dropout)[:, :length]
    if length // window > LOOPED_WINDOWS:
        return _windows_batched(query, key, value, window, look_backward,
                                look_forward, padding_mask, implementation,
                                block_size, weights_dropout)
    outputs = []
    for w in range(length // window):
        start = max(0, (w - look_backward) * window)
        end = min(length, (w + 1 + look_forward) * window)
        mask = None if padding_mask is None else padding_mask[:, start:end]
        outputs.append(attention(
            query[:, w * window:(w + 1) * window], key[:, start:end],
            value[:, start:end], mask, implementation=implementation,
            block_size=block_size, weights_dropout=weights_dropout))
    return ops.concatenate(outputs, axis=1)


# `windowed_attention` calls `attention` once per window up to this many
# windows, and once over a batch of windows beyond.
LOOPED_WINDOWS = 8


def _windows_batched(query, key, value, window, look_backward, look_forward,
                     padding_mask, implementation, block_size,
                     weights_dropout):
    """`windowed_attention` over a whole number of windows as one
    `attention` call: the queries (batch * windows, window, heads, dim)
    against their windows' keys laid side by side (batch * windows,
    (look_backward + 1 + look_forward) * window, heads, dim), the
    neighbours the first and last windows lack padded and masked. A
    query whose keys are all masked (padding only) attends uniformly to
    those padded neighbours too, not only to its windows' keys: its
    output is padding either way."""
    length, heads, dim = query.shape[1], query.shape[2], query.shape[3]
    count = length // window
    span = look_backward + 1 + look_forward

    def around(x):
        # (batch, L, ...) -> (batch * windows, span * window, ...): window
        # w's neighbours w - look_backward .. w + look_forward, zeros
        # where there is none.
        tail = tuple(x.shape[2:])
        x = ops.reshape(x, (-1, count, window) + tail)
        x = ops.pad(x, [(0, 0), (look_backward, look_forward)]
                    + [(0, 0)] * (1 + len(tail)))
        x = ops.concatenate([x[:, o:o + count] for o in range(span)],
                            axis=2)
        return ops.reshape(x, (-1, span * window) + tail)

    real = (ops.ones_like(query[:, :, 0, 0], dtype="int32")
            if padding_mask is None
            else ops.cast(padding_mask, "int32"))
    mask = around(real) > 0 if span > 1 or padding_mask is not None else None
    out = attention(
        ops.reshape(query, (-1, window, heads, dim)), around(key),
        around(value), mask, implementation=implementation,
        block_size=block_size, weights_dropout=weights_dropout)
    return ops.reshape(out, (-1, length, heads, dim))


def _windows_by_mask(query, key, value, window, look_backward,
                     look_forward, padding_mask=None, weights_dropout=None):
    """`windowed_attention` as one masked softmax over every (query, key)
    pair (`reference_attention` under the windows' pair mask), for
    lengths known only at run time."""
    index = ops.arange(ops.shape(query)[1], dtype="int32") // window
    gap = index[None, :] - index[:, None]  # key window - query window
    near = ops.logical_and(gap >= -look_backward, gap <= look_forward)
    return reference_attention(query, key, value, padding_mask,
                               weights_dropout=weights_dropout,
                               pair_mask=near)
