"""Sub-quadratic attentions of the Long Range Arena paper.

LRA (Tay et al. 2021, section 3 and Table 1) compares the vanilla
Transformer with ten efficient ones. This module holds the attention
functions of six of them, each in `keras.ops` on the layout of
`keras.ops.dot_product_attention` (queries, keys, values `(batch, L,
heads, head_dim)`); `RotaryMultiHeadAttention(attention_type=...)` projects
the inputs and calls them.

- **Linear Transformer** (Katharopoulos et al. 2020,
  https://arxiv.org/abs/2006.16236): softmax(q k^T) replaced by
  `phi(q) phi(k)^T` with `phi = elu + 1`, so attention costs O(L) as
  `phi(Q) (phi(K)^T V)`. LRA's code:
  `lra_benchmarks/models/linear_transformer/linear_attention.py`
  (`linear_attention`: no 1/sqrt(d) scale, `eps` 1e-6 added to the
  normaliser).
- **Performer** (Choromanski et al. 2021, https://arxiv.org/abs/2009.14794):
  FAVOR+, positive orthogonal random features whose inner product
  estimates exp(q k^T / sqrt(d)) without bias. LRA's code:
  `lra_benchmarks/models/performer/performer_attention.py`
  (`nonnegative_softmax_kernel_feature_creator`: data scaled by
  d^(-1/4), features `exp(w^T x - |x|^2 / 2 - max) + 1e-4` over
  sqrt(m), the max per query row and over all keys of a head;
  `GaussianOrthogonalRandomMatrix`: square orthogonal blocks, rows scaled
  by the norms of Gaussian vectors (`scaling=0`) or by sqrt(d)).
- **Local attention** (LRA's "simple local attention baseline", section 3):
  the sequence cut into blocks of `block_size` positions, softmax attention
  within each block. LRA's code
  (`lra_benchmarks/models/local/local_attention.py`, `LocalAttention`:
  `jnp.reshape(query, (bs, block_size, num_query_blocks, ...))`, attention
  over axis 1) groups position `i * num_blocks + j` into group `j`: each
  group is strided (positions `j, j + n, j + 2n, ...` with `n = L /
  block_size`), not contiguous. Both are here: `layout="contiguous"` (the
  method as the paper describes it) and `layout="strided"` (what LRA's code
  computes; its padding mask is reshaped contiguously, so it masks other
  positions than the padded ones; here each layout masks its own padded
  keys).
- **Synthesizer** (Tay et al. 2021, https://arxiv.org/abs/2005.00743):
  attention logits synthesised without (or beside) token-token dot
  products: "random", a learned (heads, max_length, max_length) matrix;
  "factorized_random", its product of two rank-k factors; "dense", a
  per-position MLP of the input giving max_length logits. LRA's code
  (`lra_benchmarks/models/synthesizer/synthesizer_attention.py`) adds the
  synthetic logits to the dot products unless `ignore_dot_product`; its
  encoder's defaults (`synthesizer.py`: `synthesizer_mode='random'`,
  `ignore_dot_product=False`) are what every task runs, since the text
  config's `ignore_dot_product` and `synthesizer_mode` are not under
  `config.model`, the only part `train.py` passes to the model. Its dense
  mode reshapes (batch, L, heads, max_length) to (batch, heads, L,
  max_length) without a transpose, mixing heads and positions; here the
  axes are transposed. LRA masks padding only with the dot products; here
  padded keys are always masked.
- **Linformer** (Wang et al. 2020, https://arxiv.org/abs/2006.04768): keys
  and values projected along the length by a learned (max_length, k)
  matrix shared by both, then softmax attention over the k projected
  positions. LRA's code: `lra_benchmarks/models/linformer/
  linformer_attention.py` (one `lr_kernel` for keys and values, its
  first L rows used).

- **Sinkhorn Transformer** (Tay et al. 2020, https://arxiv.org/abs/
  2002.11296): blocks (of 50, strided as LRA's reshape forms them) also
  attend to a "sorted" block, a soft permutation of the key blocks learned
  from each block's summed keys. LRA's code
  (`lra_benchmarks/models/sinkhorn_transformer/sinkhorn_attention.py`,
  `sort_activation='softmax'` by default) sums the local and the sorted
  attention (two softmaxes). Its sorting einsum `'bskhd,bnhl->bsnhd'`
  (line 382) sums the key blocks (k) and the permutation's targets (l)
  apart, so that under softmax sorting every "sorted" block is the same,
  the sum of all key blocks, whatever the permutation, and the sorting
  network gets no gradient: `sorting="lra"` computes that, the LRA rows'
  setting; `sorting="permutation"` (the family's default) the method's
  sorted block l, `sum_k P[k, l] K_k`. Not causal (LRA's causal path is
  marked untested).

Departures from LRA's code, each for a stated reason:
- Padding, by default. LRA's linear, Performer and Linformer attentions
  ignore the padding mask (linformer_attention.py: "Does Linformer care
  about masks?"), so padded positions take part. Here, unless the layer
  is told to ignore it as they do (`mask_semantics="none"`, their LRA
  rows), padded keys contribute nothing: their features are zero
  (linear, Performer), their keys and values zero before the length
  projection (Linformer; a projected key still mixes real keys only).
  Outputs then do not depend on how much padding a batch carries, as
  every mixer of this library's under its default `mask_semantics`.
- Orthogonal blocks. `jnp.linalg.qr` returns Q with LAPACK's sign
  convention, under which the first column always has a negative first
  coordinate: the rows are not uniformly distributed and the estimate is
  biased. `gaussian_orthogonal_matrix` multiplies by the signs of R's
  diagonal (the Haar-distributed Q; Mezzadri 2007), which the
  unbiasedness test below needs.
- Redrawing. LRA's Performer redraws its random matrix on every call from
  a seed computed from the queries (`ceil(sum(query) * 1e7)`). Here a
  redrawing layer draws a fresh matrix on every training call from its
  seed generator and evaluates with the matrix drawn at build (saved with
  the weights), so that evaluation and an exported model are
  deterministic.
"""

import math

import keras
from keras import ops

from lra_keras.backend_utils import add_shared
from lra_keras.layers.attention_kernels import _at_least_float32
from lra_keras.layers.attention_kernels import _block_bias
from lra_keras.layers.attention_kernels import _key_bias
from lra_keras.layers.attention_kernels import _mask_bias
from lra_keras.layers.attention_kernels import drop_weights
from lra_keras.layers.attention_kernels import pad_to_blocks
from lra_keras.layers.attention_kernels import reference_attention
from lra_keras.layers.attention_kernels import uniform_masked_rows
from lra_keras.layers.lean_backward import softmax
from lra_keras.schema import SINKHORN_SORTINGS

# Queries per block of the causal kernelized attention: the within-block
# part is quadratic in it, the state carried between blocks is
# (features x head_dim) per block.
CAUSAL_CHUNK = 64


def elu_feature_map(x):
    """`elu(x) + 1`, the Linear Transformer's positive feature map."""
    return ops.elu(x) + 1.0


def relu_feature_map(x, epsilon=1e-3):
    """`relu(x) + epsilon`, the features of LRA's default Performer.

    LRA's Performer encoder defaults to `attention_fn_cls="generalized"`
    (`lra_benchmarks/models/performer/performer.py` line 31), whose
    `make_fast_generalized_attention` takes `features_type=
    "deterministic"`, `kernel_fn=jax.nn.relu` and `kernel_epsilon=0.001`
    (`performer_attention.py` lines 263-309): no random projection, the
    kernel applied to the queries and keys as they are
    (`generalized_kernel_feature_creator`, lines 181-186, `normalize_data`
    False), renormalised. Only its ListOps config asks for the softmax
    kernel (`listops/configs/performer_base.py` lines 25-27).
    """
    return ops.relu(x) + epsilon


def _exclusive_cumsum(x):
    """Sum of the blocks before each block, along axis 1."""
    total = ops.cumsum(x, axis=1)
    return ops.concatenate([ops.zeros_like(total[:, :1]), total[:, :-1]],
                           axis=1)


def kernelized_attention(query_features, key_features, value,
                         padding_mask=None, causal=False, eps=1e-6,
                         chunk_size=CAUSAL_CHUNK):
    """Attention whose weights are the inner products of feature maps.

    `out_i = sum_j (phi(q_i) . phi(k_j)) v_j / (sum_j phi(q_i) . phi(k_j)
    + eps)`, over the real keys `j` (and `j <= i` when causal), computed
    as `phi(Q) (phi(K)^T V)` in O(L m d). The causal sum runs in blocks of
    `chunk_size` queries: within a block the masked products, from earlier
    blocks their prefix sums of `phi(k) v^T`.

    Args:
        query_features: tensor (batch, L, heads, m), nonnegative.
        key_features: tensor (batch, L, heads, m), nonnegative.
        value: tensor (batch, L, heads, head_dim).
        padding_mask: optional (batch, L) tensor, nonzero at real keys.
        causal: bool. Query i attends only to keys j <= i.
        eps: float. Added to the normaliser.
        chunk_size: int. Queries per block of the causal sum.

    Returns:
        Tensor (batch, L, heads, head_dim).
    """
    q, k, v = (ops.convert_to_tensor(t)
               for t in (query_features, key_features, value))
    if padding_mask is not None:
        k = k * ops.cast(padding_mask, k.dtype)[:, :, None, None]
    if not causal:
        kv = ops.einsum("blhm,blhd->bhmd", k, v)  # (B, H, m, D)
        k_sum = ops.sum(k, axis=1)  # (B, H, m)
        numerator = ops.einsum("blhm,bhmd->blhd", q, kv)
        denominator = ops.einsum("blhm,bhm->blh", q, k_sum)
        return numerator / (denominator[..., None] + eps)
    length = q.shape[1]
    if length is None:
        raise ValueError(
            "Causal kernelized attention needs a static sequence length. "
            f"Received: query_features.shape={q.shape}"
        )
    size = min(int(chunk_size), length)
    blocks = -(-length // size)
    pad = blocks * size - length
    if pad:
        q, k, v = (ops.pad(t, ((0, 0), (0, pad), (0, 0), (0, 0)))
                   for t in (q, k, v))

    def split(t):  # (B, L', H, C) -> (B, n, size, H, C)
        return ops.reshape(t, (-1, blocks, size, t.shape[2], t.shape[3]))

    q, k, v = split(q), split(k), split(v)
    lower = ops.cast(ops.tril(ops.ones((size, size))), q.dtype)
    scores = ops.einsum("bnchm,bnshm->bnhcs", q, k) * lower  # (B,n,H,C,C)
    numerator = ops.einsum("bnhcs,bnshd->bnchd", scores, v)
    denominator = ops.transpose(ops.sum(scores, axis=-1), (0, 1, 3, 2))
    kv_before = _exclusive_cumsum(
        ops.einsum("bnchm,bnchd->bnhmd", k, v))  # (B, n, H, m, D)
    k_before = _exclusive_cumsum(ops.sum(k, axis=2))  # (B, n, H, m)
    numerator = numerator + ops.einsum("bnchm,bnhmd->bnchd", q, kv_before)
    denominator = denominator + ops.einsum("bnchm,bnhm->bnch", q, k_before)
    out = numerator / (denominator[..., None] + eps)  # (B, n, size, H, D)
    out = ops.reshape(out, (-1, blocks * size, out.shape[3], out.shape[4]))
    return out[:, :length]


def linear_attention(query, key, value, padding_mask=None, causal=False,
                     eps=1e-6):
    """The Linear Transformer's attention: `elu + 1` features, unscaled.

    Shapes as `attention_kernels.reference_attention`.
    """
    return kernelized_attention(elu_feature_map(query), elu_feature_map(key),
                                value, padding_mask, causal, eps)


def relu_kernel_attention(query, key, value, padding_mask=None,
                          causal=False, eps=1e-6):
    """LRA's default Performer attention: `relu + 1e-3` features,
    unscaled, renormalised (`relu_feature_map`). Shapes as
    `attention_kernels.reference_attention`.
    """
    return kernelized_attention(relu_feature_map(query),
                                relu_feature_map(key), value, padding_mask,
                                causal, eps)


def gaussian_orthogonal_matrix(num_features, dim, seed=None, scaling=0,
                               dtype="float32"):
    """FAVOR+'s random projection: (num_features, dim), orthogonal blocks.

    Stacks `ceil(num_features / dim)` Haar-random orthogonal (dim, dim)
    blocks (QR of a Gaussian matrix, Q's columns multiplied by the signs of
    R's diagonal) and keeps the first `num_features` rows; row i is then
    scaled by the norm of a Gaussian vector (`scaling=0`, so that every row
    is marginally N(0, I)) or by sqrt(dim) (`scaling=1`).

    Args:
        num_features: int. Rows (the number of random features m).
        dim: int. Columns (the head size d).
        seed: int, None or `keras.random.SeedGenerator` (a generator
            inside a traced function: an int seeds a new one here).
        scaling: 0 or 1.
        dtype: str.

    Returns:
        Tensor (num_features, dim).
    """
    if scaling not in (0, 1):
        raise ValueError(f"`scaling` must be 0 or 1. Received: "
                         f"scaling={scaling!r}")
    if not isinstance(seed, keras.random.SeedGenerator):
        # One generator for every draw: an int passed to each call would
        # give every block the same matrix.
        seed = keras.random.SeedGenerator(seed)
    blocks = []
    for _ in range(-(-int(num_features) // int(dim))):
        gaussian = keras.random.normal((dim, dim), seed=seed, dtype=dtype)
        q, r = ops.qr(gaussian)
        signs = ops.where(ops.diagonal(r) < 0, -1.0, 1.0)
        blocks.append(ops.transpose(q * ops.cast(signs, dtype)[None, :]))
    matrix = ops.concatenate(blocks, axis=0)[:num_features]
    if scaling == 0:
        norms = ops.norm(keras.random.normal((num_features, dim), seed=seed,
                                             dtype=dtype), axis=1)
    else:
        norms = ops.full((num_features,), math.sqrt(dim), dtype=dtype)
    return matrix * norms[:, None]


def softmax_kernel_features(x, projection, is_query, eps=1e-4,
                            stabilize=True, padding_mask=None):
    """FAVOR+ positive features: `phi(q) . phi(k)` estimates
    `exp(q . k / sqrt(d))`.

    `phi(x) = (exp(w_i^T x' - |x'|^2 / 2 - c) + eps) / sqrt(m)` with `x' =
    x d^(-1/4)`, `w_i` the rows of `projection` and `c` a stabiliser: the
    row maximum for a query, the maximum over all keys and features of a
    head for a key (both cancel in the normalised attention, up to `eps`).

    Args:
        x: tensor (batch, L, heads, d).
        projection: tensor (m, d).
        is_query: bool. Which stabiliser.
        eps: float. Added to every feature (LRA's 1e-4).
        stabilize: bool. `False` (with `eps=0`) gives the plain estimator.
        padding_mask: optional (batch, L), nonzero at real positions: a
            key's stabiliser is the maximum over real keys only, so that
            padded content cannot change the real keys' features.

    Returns:
        Tensor (batch, L, heads, m).
    """
    depth = x.shape[-1]
    x = x * (float(depth) ** -0.25)
    projection = ops.cast(projection, x.dtype)
    x_dash = ops.einsum("blhd,md->blhm", x, projection)
    norm = ops.sum(ops.square(x), axis=-1, keepdims=True) / 2.0
    if stabilize:
        axes = -1 if is_query else (1, 3)
        real = x_dash
        if padding_mask is not None and not is_query:
            keep = ops.cast(padding_mask, "bool")[:, :, None, None]
            real = ops.where(keep, x_dash, ops.min(x_dash))
        x_dash = x_dash - ops.max(real, axis=axes, keepdims=True)
    scale = 1.0 / math.sqrt(projection.shape[0])
    return scale * (ops.exp(x_dash - norm) + eps)


def performer_attention(query, key, value, projection, padding_mask=None,
                        causal=False, eps=1e-6):
    """FAVOR+ attention with the random matrix `projection` (m, d).

    A key's stabiliser is the maximum over all (real) keys of its head, so
    a causal layer adds no `eps` to the key features and only 1e-30 (not
    `eps`) to the normaliser: the stabiliser then cancels exactly between
    the weights and their sum, and later keys cannot change earlier
    outputs through it (LRA's unidirectional Performer adds 1e-4 to the
    features and 2e-6 to a normaliser below 1e-6, through which they
    can).

    Shapes as `attention_kernels.reference_attention`. In a half
    precision the features, their sums and the normalised output are
    computed in float32 and the output cast back.
    """
    dtype = ops.convert_to_tensor(query).dtype
    query, key, value = (_at_least_float32(ops.convert_to_tensor(t))
                         for t in (query, key, value))
    out = kernelized_attention(
        softmax_kernel_features(query, projection, is_query=True),
        softmax_kernel_features(key, projection, is_query=False,
                                eps=0.0 if causal else 1e-4,
                                padding_mask=padding_mask),
        value, padding_mask, causal, 1e-30 if causal else eps)
    return ops.cast(out, dtype)


SYNTHESIZER_MODES = ("random", "factorized_random", "dense", "dense+random")


def synthesizer_attention(query, key, value, synthetic_logits,
                          padding_mask=None, causal=False,
                          dot_product=True, weights_dropout=None,
                          query_mask=None):
    """Softmax attention over synthetic logits (plus the dot products).

    `softmax(S + [Q K^T / sqrt(d)]) V` with `S` the synthetic logits
    (batch or 1, heads, Lq, Lk); padded keys (and later keys, when
    causal) masked. Quadratic in L, as the Synthesizer is.

    Shapes, `weights_dropout` and `query_mask` (LRA's pair mask: the
    code's `make_padding_mask` and -1e10 bias, `synthesizer_attention.py`
    lines 390-422) as `attention_kernels.reference_attention`.
    """
    q, k, v = (ops.convert_to_tensor(t) for t in (query, key, value))
    scores = ops.cast(synthetic_logits, q.dtype)
    if dot_product:
        dots = ops.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(q.shape[-1])
        # Logits shared by the batch (the random modes): added so that
        # their gradient is fast under JAX (`add_shared`).
        scores = (add_shared(dots, scores[0]) if scores.shape[0] == 1
                  else scores + dots)
    # The masks as the exact kernels add them (`attention_kernels`).
    q_len, k_len = ops.shape(scores)[2], ops.shape(scores)[3]
    bias = _block_bias(_key_bias(padding_mask, scores.dtype), causal, 0,
                       q_len, k_len, scores.dtype)
    if bias is not None:
        scores = scores + bias
    scores = uniform_masked_rows(scores, query_mask)
    probs = drop_weights(softmax(scores, axis=-1), weights_dropout)
    return ops.einsum("bhqk,bkhd->bqhd", probs, v)


LOCAL_LAYOUTS = ("contiguous", "strided")


def local_attention(query, key, value, block_size, padding_mask=None,
                    causal=False, layout="contiguous", weights_dropout=None,
                    block_pairs=False):
    """Softmax attention within groups of `block_size` positions.

    The length is padded to a multiple of `block_size` (the extra keys
    masked). `layout="contiguous"`: group j holds positions `j * b ...
    j * b + b - 1`; `"strided"`: group j holds positions `j, j + n, ...`
    with `n` the number of groups (LRA's code). Causal: within a group,
    only earlier positions (both layouts keep the order).

    `block_pairs=True` masks as LRA's local attention does
    (google-research/long-range-arena `models/local/local_attention.py`
    lines 318-323, 342-356 and 379-381): the padding mask is cut into
    contiguous blocks of `b` whatever the layout, and group j takes block
    j's pair mask: query i and key k of group j attend iff positions
    `j b + i` and `j b + k` are both real; a query with none attends
    uniformly to its group. Under the strided layout that mask does not
    line up with the group's own positions. The length must then be a
    multiple of `b` (`pad_to_blocks(..., whole_block=True)` pads it
    as that code does).

    Shapes and `weights_dropout` as `attention_kernels
    .reference_attention` (the weights here (B, n, H, b, b)); O(L b)
    memory.
    """
    if layout not in LOCAL_LAYOUTS:
        raise ValueError(f"`layout` must be one of {LOCAL_LAYOUTS}. "
                         f"Received: layout={layout!r}")
    q, k, v = (ops.convert_to_tensor(t) for t in (query, key, value))
    length = ops.shape(q)[1]
    b = int(block_size)
    if block_pairs and isinstance(length, int) and length % b:
        raise ValueError(
            "`lra_blocks` masks whole blocks: the length must be a "
            f"multiple of block_size={b} (`pad_to_blocks`). Received: "
            f"length {length}")
    (qg, kg, vg), real, ungroup, padded_real = _grouped(
        q, k, v, padding_mask, b, layout)
    scores = ops.einsum("bnqhd,bnkhd->bnhqk", qg, kg) / math.sqrt(
        q.shape[-1])
    if block_pairs:
        allowed = _block_pairs(padded_real, ops.shape(qg)[1], b)
    else:
        allowed = real[:, :, None, None, :]  # (B, n, 1, 1, b)
    if causal:
        allowed = ops.logical_and(
            allowed, ops.cast(ops.tril(ops.ones((b, b))), "bool"))
    # finite in float16 too: a query with no key allowed attends uniformly
    probs = drop_weights(masked_softmax(scores, allowed, uniform_empty=True),
                         weights_dropout)
    out = ops.einsum("bnhqk,bnkhd->bnqhd", probs, vg)
    return ungroup(out)[:, :length]


def masked_softmax(scores, allowed, uniform_empty=False):
    """Softmax over the last axis of the `allowed` scores; the others get
    weight 0, also in a row with none allowed, which `uniform_empty=True`
    makes uniform instead (LRA's -1e10 bias; finite in float16)."""
    probs = ops.softmax(
        ops.where(allowed, scores, _mask_bias(scores.dtype)), axis=-1)
    return probs if uniform_empty else ops.where(allowed, probs, 0.0)


def _grouped(q, k, v, padding_mask, b, layout):
    """q, k, v (B, L, H, D) padded to a multiple of `b` and cut into
    groups (B, n, b, H, D) per `layout`; the groups' real-key mask (B, n,
    b); the function taking (B, n, b, H, D) back to (B, L', H, D); and
    the real-token mask (B, L') of the padded length (`_block_pairs`)."""
    (q, k, v), real, groups = pad_to_blocks((q, k, v), padding_mask, b)
    heads = q.shape[2]

    def group(t):  # (B, L', ...) -> (B, n, b, ...)
        if layout == "contiguous":
            return ops.reshape(t, (-1, groups, b, *t.shape[2:]))
        t = ops.reshape(t, (-1, b, groups, *t.shape[2:]))
        return ops.swapaxes(t, 1, 2)

    def ungroup(t):  # (B, n, b, H, D) -> (B, L', H, D)
        if layout == "strided":
            t = ops.swapaxes(t, 1, 2)
        return ops.reshape(t, (-1, groups * b, heads, t.shape[-1]))

    return (group(q), group(k), group(v)), group(real), ungroup, real


def _block_pairs(real, groups, b):
    """LRA's masks within blocks: the real-token mask (B, L') cut into
    contiguous blocks of `b`, whatever the layout of the groups, and each
    block's pair mask (B, n, 1, b, b): query i and key k of block j both
    real (`local_attention.py` lines 318-323, `sinkhorn_attention.py`
    lines 401-417, flax's `make_padding_mask`)."""
    blocks = ops.reshape(real, (-1, groups, b))
    return ops.logical_and(blocks[:, :, None, :, None],
                           blocks[:, :, None, None, :])


def sinkhorn_attention(query, key, value, sort_kernel, sort_bias,
                       block_size, padding_mask=None, layout="strided",
                       sort_activation="softmax", sinkhorn_iterations=1,
                       weights_dropout=None, block_pairs=False,
                       sorting="permutation"):
    """Sparse Sinkhorn attention: a block's own keys plus a sorted block.

    The sequence is cut into n groups of `block_size` (`layout` as
    `local_attention`; LRA's reshape makes them strided). Each key
    group's summary, the sum of its keys, gives sort logits over the
    target blocks, `s = sum_k @ sort_kernel + sort_bias` (n, n; no bias
    when `sort_bias` is None, as in LRA's blocks, which pass
    `bias=False`); a soft permutation `P = softmax(s)` over the targets
    (LRA's default `sort_activation='softmax'`) or `sinkhorn`
    normalisation in log space (`sinkhorn_iterations` rounds of row then
    column normalisation, Tay et al. 2020 eq. 3). The sorted groups:
    - `sorting="permutation"`, the method's: `K'_l = sum_k P[k, l] K_k`
      (and V');
    - `sorting="lra"`, LRA's einsum `'bskhd,bnhl->bsnhd'`
      (`sinkhorn_attention.py` lines 382-383), which sums k and l apart:
      `K'_n = (sum_l P[n, l]) sum_k K_k`, one sum over every group for
      all (times 1 under softmax sorting), `sort_kernel` may then have
      fewer columns than n (LRA's `max_num_blocks` 25, lines 216 and
      358-366: the logits are cut to them).
    Output, as LRA's code: softmax attention of each query group over its
    own group plus softmax attention over its sorted group (two
    softmaxes, summed); `weights_dropout` (as `attention_kernels
    .reference_attention`) applies to each softmax's weights, a mask
    drawn for each (LRA's two calls pass `dropout_rng=None`, lines 474
    and 487, and each draws its own key with flax's `make_rng`).

    Padding (`padding_mask`, the length padded to a multiple of the
    block with masked positions):
    - `block_pairs=False`: padded keys and values are zero, ignored by
      both softmaxes; a sorted slot is a key where a real key was mixed
      into it;
    - `block_pairs=True`, LRA's masks (`sinkhorn_attention.py` lines
      401-420, 441-463): the keys are summed and sorted as they are,
      padding included; group j's own attention takes the pair mask of
      contiguous block j (as `local_attention(block_pairs=True)`), the
      sorted attention the einsum `'bksj,bnhl->bnsj'` of those pair
      masks, positive, so allowed where any contiguous block has both
      positions real; a query with nothing allowed attends uniformly
      (LRA's -1e10 bias).

    Shapes as `attention_kernels.reference_attention`; `sort_kernel`
    (head_dim, max_blocks) and `sort_bias` (max_blocks,) or None,
    max_blocks >= n under `sorting="permutation"`.
    """
    if layout not in LOCAL_LAYOUTS or sorting not in SINKHORN_SORTINGS:
        raise ValueError(
            f"`layout` must be one of {LOCAL_LAYOUTS} and `sorting` one "
            f"of {SINKHORN_SORTINGS}. Received: layout={layout!r}, "
            f"sorting={sorting!r}")
    q, k, v = (ops.convert_to_tensor(t) for t in (query, key, value))
    length = ops.shape(q)[1]
    b = int(block_size)
    (qg, kg, vg), real, ungroup, padded_real = _grouped(
        q, k, v, padding_mask, b, layout)
    n = ops.shape(qg)[1]
    if (sorting == "permutation" and isinstance(n, int)
            and sort_kernel.shape[-1] < n):
        raise ValueError(
            "The sorted blocks of `sorting='permutation'` need a sort "
            f"logit per block: {n} blocks of {b}, the sorting network "
            f"has {sort_kernel.shape[-1]} (`max_blocks`)")
    realf = ops.cast(real, kg.dtype)
    if not block_pairs:  # padded keys and values: zero
        kg = kg * realf[..., None, None]
        vg = vg * realf[..., None, None]
    scale = 1.0 / math.sqrt(q.shape[-1])
    summary = ops.sum(kg, axis=2)  # (B, n, H, D)
    logits = ops.einsum("bkhd,dm->bkhm", summary, sort_kernel)
    if sort_bias is not None:
        logits = logits + sort_bias
    logits = logits[..., :n]  # (B, n_k, H, n_l)
    if sort_activation == "sinkhorn":
        for _ in range(int(sinkhorn_iterations)):
            logits = logits - ops.logsumexp(logits, axis=3, keepdims=True)
            logits = logits - ops.logsumexp(logits, axis=1, keepdims=True)
        permutation = ops.exp(logits)
    else:
        permutation = ops.softmax(logits, axis=-1)
    if sorting == "permutation":
        sorted_k = ops.einsum("bkhl,bkshd->blshd", permutation, kg)
        sorted_v = ops.einsum("bkhl,bkshd->blshd", permutation, vg)
        # a sorted slot is a key where some real key was mixed into it
        sorted_real = ops.einsum("bkhl,bks->blhs", permutation, realf) > 1e-9
    else:
        weight = ops.sum(permutation, axis=-1)  # (B, n, H)
        sorted_k = weight[:, :, None, :, None] * ops.sum(kg, axis=1,
                                                          keepdims=True)
        sorted_v = weight[:, :, None, :, None] * ops.sum(vg, axis=1,
                                                          keepdims=True)
        sorted_real = ops.logical_and(  # (B, n, H, b)
            ops.any(real, axis=1)[:, None, None, :], weight[..., None] > 0)

    def attend(keys, values, allowed):  # allowed (B, n, H|1, 1|b, b)
        scores = ops.einsum("bnqhd,bnkhd->bnhqk", qg, keys) * scale
        # LRA's masks: a row with nothing allowed attends uniformly
        probs = masked_softmax(scores, allowed, uniform_empty=block_pairs)
        return ops.einsum("bnhqk,bnkhd->bnqhd",
                          drop_weights(probs, weights_dropout), values)

    if block_pairs:
        own = _block_pairs(padded_real, n, b)
        to_sorted = ops.any(own, axis=1, keepdims=True)
    else:
        own, to_sorted = (real[:, :, None, None, :],
                          sorted_real[:, :, :, None, :])
    out = attend(kg, vg, own) + attend(sorted_k, sorted_v, to_sorted)
    return ungroup(out)[:, :length]


def linformer_attention(query, key, value, projection, padding_mask=None,
                        weights_dropout=None):
    """Softmax attention over keys and values projected along the length.

    `K' = E^T K`, `V' = E^T V` with `E` the first L rows of `projection`
    (max_length, k); then softmax(Q K'^T / sqrt(d)) V'. Padded keys and
    values are zeroed before the projection. Not causal: every projected
    position mixes the whole sequence.

    Shapes and `weights_dropout` (on the weights over the k projected
    keys) as `attention_kernels.reference_attention`; `projection`
    (max_length, k) with max_length >= L.
    """
    if key.shape[1] is not None and key.shape[1] > projection.shape[0]:
        raise ValueError(
            "Linformer needs inputs no longer than its projection "
            f"(`max_length`). Received: key.shape={key.shape}, "
            f"projection.shape={tuple(projection.shape)}"
        )
    length = ops.shape(key)[1]  # traced when the length is not static
    key, value = ops.convert_to_tensor(key), ops.convert_to_tensor(value)
    if padding_mask is not None:
        keep = ops.cast(padding_mask, key.dtype)[:, :, None, None]
        key, value = key * keep, value * keep
    e = ops.cast(projection[:length], key.dtype)  # (L, k)
    key = ops.einsum("blhd,lr->brhd", key, e)  # (B, k, H, D)
    value = ops.einsum("blhd,lr->brhd", value, e)
    return reference_attention(query, key, value,
                               weights_dropout=weights_dropout)
