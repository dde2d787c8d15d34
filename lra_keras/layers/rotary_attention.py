"""Multi-head self-attention with rotary position embeddings.

References:
- RoFormer (rotary position embedding): https://arxiv.org/abs/2104.09864
- "You Can Train from Scratch", Table 5 (rotary Transformer on LRA,
  "Rotary base freq", "Rotary disable half") and Table 4 (position
  ablation: rotary vs. summed embeddings, for which `use_rotary=False`).
- The YCTFS code (pablomiralles22/long-transformers, branch lra-paper):
  `src/models/modules/rotary_multihead_attention.py` (forward: rotary on
  the projected queries and keys (batch, L, d_model) before
  `separate_heads`) and `src/utils/rotary_embedding.py`
  (`__build_rotation_matrix`: `thetas = exp(-2 log(freq) i / D)` for
  `i < D/2` with D the model width, `thetas[::2] = 0` for
  `disable_half`; `apply`: pairs of adjacent channels `(2i, 2i+1)`,
  positions from 0). `apply_rotary_across_heads` is that rotation.
"""

import functools
import math

import keras
import numpy as np
from keras import ops

from lra_keras.backend_utils import add_shared
from lra_keras.backend_utils import xla_compiled
from lra_keras.layers.attention_kernels import IMPLEMENTATIONS
from lra_keras.layers.attention_kernels import WeightsDropout
from lra_keras.layers.attention_kernels import attention
from lra_keras.layers.attention_kernels import pad_to_blocks
from lra_keras.layers.attention_kernels import uniform_masked_outputs
from lra_keras.layers.attention_kernels import windowed_attention
from lra_keras.layers.dense_init import check_dense_init
from lra_keras.layers.dense_init import dense_initializers
from lra_keras.layers.efficient_attention import LOCAL_LAYOUTS
from lra_keras.layers.efficient_attention import SYNTHESIZER_MODES
from lra_keras.layers.efficient_attention import gaussian_orthogonal_matrix
from lra_keras.layers.efficient_attention import linear_attention
from lra_keras.layers.efficient_attention import linformer_attention
from lra_keras.layers.efficient_attention import local_attention
from lra_keras.layers.efficient_attention import performer_attention
from lra_keras.layers.efficient_attention import relu_kernel_attention
from lra_keras.layers.efficient_attention import sinkhorn_attention
from lra_keras.layers.efficient_attention import synthesizer_attention
from lra_keras.layers.lsh_attention import lra_lsh_attention
from lra_keras.layers.lsh_attention import lsh_attention
from lra_keras.layers.masked_batch_normalization import up_to_longest_row
from lra_keras.layers.projections import EinsumDense
from lra_keras.layers.sparse_attention import bigbird_attention
from lra_keras.layers.sparse_attention import longformer_attention
from lra_keras.layers.sparse_attention import sparse_transformer_attention
from lra_keras.layers.sparse_attention import strided_sparse_attention
from lra_keras.schema import LRA_BLOCKED
from lra_keras.schema import MASK_SEMANTICS
from lra_keras.schema import REFORMER_VARIANTS
from lra_keras.schema import SINKHORN_SORTINGS

# Where the rotary frequencies range: within every head (each head gets the
# whole range, `apply_rotary`), or over the model width before the heads
# are split (each head gets its own band, `apply_rotary_across_heads`).
ROTARY_SCOPES = ("head", "model")

# What computes the attention from the projected queries, keys and values:
# exact softmax (`attention_kernels.attention`) or one of LRA's efficient
# attentions (`efficient_attention`).
ATTENTION_TYPES = ("softmax", "linear", "performer", "linformer", "local",
                   "synthesizer", "sparse_transformer", "longformer",
                   "bigbird", "reformer", "sinkhorn")
# The arguments that choose and configure the attention, with their
# defaults; `TransformerEncoder` passes them through.
ATTENTION_OPTIONS = dict(
    attention_type="softmax",
    attention_dropout=0.0,
    num_random_features=256,
    performer_kernel="softmax",
    orthogonal_scaling=0,
    feature_redraw=True,
    projection_dim=16,
    max_length=None,
    local_block_size=50,
    local_layout="contiguous",
    synthesizer_mode="random",
    synthesizer_rank=32,
    synthesizer_dot_product=True,
    sparse_block_size=128,
    sparse_summary_size=32,
    sparse_cls_token=False,
    sparse_pattern="fixed",
    longformer_window=512,
    longformer_global_tokens=0,
    bigbird_block_size=64,
    bigbird_random_blocks=3,
    bigbird_seed=0,
    reformer_buckets=10,
    reformer_hashes=1,
    reformer_chunk_size=None,
    reformer_variant="paper",
    sinkhorn_sort="softmax",
    sinkhorn_iterations=1,
    sinkhorn_sorting="permutation",
    sinkhorn_max_blocks=None,
    mask_semantics="keys",
    attention_window=None,
    window_look_backward=1,
    window_look_forward=1,
)
SINKHORN_SORTS = ("softmax", "sinkhorn")
# The Sparse Transformer's patterns (Child et al. 2019, section 4.2).
SPARSE_PATTERNS = ("fixed", "strided")
# LRA's Reformer pads its inputs to a multiple of its `chunk_len`, 10
# (reformer_attention.py lines 242 and 308-312; never passed).
LRA_REFORMER_CHUNK = 10
# The attentions that never form attention weights (the kernelised ones),
# and the LSH attention, whose kernel (`lsh_attention`) takes no weights
# dropout (LRA's Reformer drops none either): `attention_dropout` is
# refused there.
_NO_WEIGHTS_DROPOUT = ("linear", "performer", "reformer")
# The attentions whose padded queries `mask_semantics="pairs"` defines:
# those whose LRA code masks a dense (query, key) grid, where a padded
# query's logits are all -1e10: the exact softmax and the Synthesizer,
# and the Sparse Transformer and Longformer, whose LRA code runs dense
# attention under their pattern and the pair mask (`sparse_attention.py`
# lines 176-222, `longformer_attention.py` lines 85-135).
_PAIR_MASKED = ("softmax", "synthesizer", "sparse_transformer",
                "longformer")
PERFORMER_KERNELS = ("softmax", "relu")
# The options that are counts of positions or blocks, each >= its minimum.
_COUNT_OPTIONS = dict(sparse_block_size=1, sparse_summary_size=0,
                      longformer_window=1, longformer_global_tokens=0,
                      bigbird_block_size=1, bigbird_random_blocks=0)


# Rotary tables of at most this many angles are made with numpy where
# XLA compiles the step (8 MiB a table; L = 16,384 at width 256).
NUMPY_TABLE_ANGLES = 1 << 21


def _inverse_frequencies(xp, scope, *sizes_and_options):
    """The rotation frequencies, (D/2,) for `scope="head"` (`apply_rotary`)
    or (heads, hd/2) for `"model"` (`apply_rotary_across_heads`), in
    float32, computed by `xp`: `keras.ops`, or numpy."""
    if scope == "head":
        depth, max_wavelength, disable_half = sizes_and_options
        half = depth // 2
        exponent = xp.arange(half, dtype="float32") * (2.0 / depth)
        inv_freq = xp.power(max_wavelength, -exponent)  # (D/2,)
        if disable_half:
            # Frequencies fall with the index: zeroing the tail keeps the
            # fast rotations (fine, local position) and turns the slowest
            # ones, which change least along a sequence, into
            # position-free channels.
            keep = xp.arange(half) < half - half // 2  # (D/2,)
            inv_freq = xp.where(keep, inv_freq, 0.0)
        return inv_freq
    heads, depth, max_wavelength, disable_half = sizes_and_options
    half = heads * depth // 2  # pairs over the whole width
    index = xp.arange(half, dtype="float32")  # (D/2,)
    inv_freq = xp.exp(index * (-2.0 * math.log(max_wavelength) / (2 * half)))
    if disable_half:
        inv_freq = xp.where(xp.arange(half) % 2 == 0, 0.0, inv_freq)
    return xp.reshape(inv_freq, (heads, depth // 2))  # (heads, hd/2)


@functools.lru_cache(maxsize=32)
def _numpy_rotary_tables(length, start_index, frequencies):
    inv_freq = _inverse_frequencies(np, *frequencies).astype("float32")
    positions = np.arange(length, dtype="float32") + np.float32(start_index)
    angles = positions.reshape((-1,) + (1,) * inv_freq.ndim) * inv_freq
    return np.cos(angles), np.sin(angles)


def _rotary_tables(length, start_index, frequencies):
    """cos and sin of `position * frequency`, (L, *frequencies' shape),
    for the positions `start_index ...` and the frequencies
    `_inverse_frequencies(*frequencies)`.

    Where XLA compiles the step (`xla_compiled`) and L and `start_index`
    are known when traced, the tables are numpy constants, made once
    (and kept for the next call). Computed in the step, XLA fused their
    sines and cosines into each rotation's loop and evaluated them again
    for every element of the batch: the 41 fusions of a JAX 4-block
    Transformer step (L = 1024, batch 16, width 128, 2 cores) that held
    them took 223 ms of its 1,972 ms of ops (`jax.profiler`), and the
    step went 1.54-1.61 -> 1.49-1.50 s with the constants. Elsewhere
    they are computed as ops, once a call.
    """
    # the frequencies' count: D/2 ("head") or heads * hd/2 ("model")
    count = math.prod(frequencies[1:-2]) // 2
    if (isinstance(length, int) and isinstance(start_index, int)
            and length * count <= NUMPY_TABLE_ANGLES and xla_compiled()):
        return _numpy_rotary_tables(length, start_index, frequencies)
    inv_freq = _inverse_frequencies(ops, *frequencies)
    positions = ops.arange(length, dtype="float32") + ops.cast(
        start_index, "float32")
    angles = ops.reshape(
        positions, (-1,) + (1,) * len(inv_freq.shape)) * inv_freq
    return ops.cos(angles), ops.sin(angles)


def apply_rotary(x, max_wavelength=10000, start_index=0, disable_half=False):
    """Rotates channel pairs of `x` by position-dependent angles.

    Channel `i` of the first half is paired with channel `i + D/2` (the
    "rotate half" layout of GPT-NeoX and keras-hub) and rotated by
    `position * max_wavelength ** (-2i / D)`. A dot product of two rotated
    vectors then depends on their positions only through their difference.

    With `disable_half=True` ("Rotary disable half" of "You Can Train from
    Scratch", Table 5) the `D/4` lowest frequencies (the last `D // 4` of
    the `D/2` frequencies, rounded down) are set to 0: pairs `i` with
    `i >= D/2 - D // 4` are not rotated and carry position-free content,
    while the fast, local rotations are kept. The remaining frequencies keep
    their values (they are not re-spaced).

    Args:
        x: tensor (batch, length, heads, head_dim), head_dim even.
        max_wavelength: float. Base of the geometric frequency sequence.
        start_index: int or scalar tensor. Position of the first element,
            for token-by-token decoding.
        disable_half: bool. Whether the lowest half of the frequencies is
            set to 0. Defaults to `False`.

    Returns:
        Tensor of the same shape and dtype as `x`.
    """
    x = ops.convert_to_tensor(x)
    length, depth = ops.shape(x)[1], x.shape[-1]
    cos, sin = _rotary_tables(
        length, start_index, ("head", depth, float(max_wavelength),
                              bool(disable_half)))  # (L, D/2)
    cos = ops.cast(cos, x.dtype)[None, :, None, :]  # (1, L, 1, D/2)
    sin = ops.cast(sin, x.dtype)[None, :, None, :]
    # A split, not two slices: TensorFlow's gradient of a slice writes a
    # zero tensor of the input's shape and copies the slice into it, that
    # of a split is one concatenation (`apply_rotary_across_heads`).
    x1, x2 = ops.split(x, 2, axis=-1)
    return ops.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)


def apply_rotary_across_heads(x, max_wavelength=10000, disable_half=False):
    """Rotary positions over the whole width, as the YCTFS code applies them.

    The heads of `x` are read as one vector of width `D = heads *
    head_dim` (head `h` holds channels `h * head_dim ...`), as the YCTFS
    rotary attention rotates the projected queries and keys before it
    splits them into heads. Adjacent channels `(2i, 2i + 1)` form pair `i`,
    rotated by `position * max_wavelength ** (-2i / D)` for `i < D/2`: head
    `h` holds pairs `h * head_dim / 2 ...`, so every head gets its own band
    of frequencies (the first head the fastest ones). With
    `disable_half=True` every other frequency is 0 (`thetas[::2] = 0`, the
    pairs of even `i` are not rotated), so every head keeps rotated and
    position-free channels. Under PyTorch (float32, eager) and under
    TensorFlow (float32, outside XLA) the pairs are rotated as complex
    numbers (`_torch_rotate_pairs`, `_tensorflow_rotate_pairs`), the same
    arithmetic. Source: pablomiralles22/long-transformers,
    branch lra-paper, `src/utils/rotary_embedding.py` and
    `src/models/modules/rotary_multihead_attention.py`.

    Args:
        x: tensor (batch, length, heads, head_dim), head_dim even.
        max_wavelength: float. Base of the frequencies (YCTFS's `freq`).
        disable_half: bool. Whether every other frequency is 0.

    Returns:
        Tensor of the same shape and dtype as `x`.
    """
    x = ops.convert_to_tensor(x)
    length = ops.shape(x)[1]
    heads, depth = x.shape[-2], x.shape[-1]
    cos, sin = _rotary_tables(
        length, 0, ("model", heads, depth, float(max_wavelength),
                    bool(disable_half)))  # (L, heads, hd/2)
    if _torch_eager_float32(x):
        return _torch_rotate_pairs(x, cos, sin)
    if _tensorflow_graph_float32(x):
        return _tensorflow_rotate_pairs(x, cos, sin)
    cos = ops.cast(cos, x.dtype)[None, ..., None]
    sin = ops.cast(sin, x.dtype)[None, ..., None]
    # (1, L, heads, hd/2, 1); the pair (x0, x1) becomes (x0 cos - x1 sin,
    # x1 cos + x0 sin): the pair times cos plus the swapped pair (x1, x0)
    # times (-sin, sin). A flip of the pairs, not their slices or an
    # unstack and a stack: TensorFlow's gradient of a slice writes a zero
    # tensor of the input's shape and copies the slice into it: 16 such
    # gradients took 140 ms of thread time a 4-block step at L = 1024,
    # batch 16, width 128 (a 0.85-1.3 s step), the 16 flips 35-47 ms, in
    # its profiler traces.
    signed_sin = ops.concatenate([-sin, sin], -1)  # (1, L, heads, hd/2, 2)
    shape = ops.shape(x)
    pairs = ops.reshape(x, (shape[0], shape[1], heads, depth // 2, 2))
    rotated = pairs * cos + ops.flip(pairs, -1) * signed_sin
    return ops.reshape(rotated, shape)


def _torch_eager_float32(x):
    """Whether `x` is a float32 PyTorch tensor outside `torch.compile`,
    where `_torch_rotate_pairs` runs (Inductor generates no code for
    complex operators and fuses the real form)."""
    if keras.backend.backend() != "torch":
        return False
    import torch

    return (x.dtype == torch.float32
            and not torch.compiler.is_compiling())


def _torch_rotate_pairs(x, cos, sin):
    """`apply_rotary_across_heads`'s rotation under PyTorch in float32,
    outside `torch.compile`: the pair (x0, x1) read as the complex number
    x0 + i x1 (a view of `x`), times cos + i sin, which is the same
    arithmetic, (x0 cos - x1 sin, x1 cos + x0 sin), in one kernel; its
    gradient is one more (the upstream gradient times cos - i sin), and
    its backward keeps only the table. The real form's products, flip
    and sum take four kernels forwards and four backwards, each writing
    a tensor of x's size. A query's or key's rotation, forward and
    backward, at (16, 1024, 4, 32) took 9.5 ms that way and 1.1 ms this
    way, equal to the bit; the 4-block Transformer step of
    `benchmarks/mixers.py` (width 128, 16,384 tokens, 2 cores) went
    0.87-0.93 -> 0.79-0.88 s at L = 1024 and 2.33-2.38 -> 2.22-2.26 s at
    4096 (`docs/results/rotary_complex_torch/`).
    """
    import torch

    shape = x.shape
    pairs = x.reshape(*shape[:-1], shape[-1] // 2, 2)
    if pairs.storage_offset() % 2 or any(
            stride % 2 for stride in pairs.stride()[:-1]):
        pairs = pairs.contiguous()  # a complex view needs even strides
    turn = torch.complex(cos, sin)[None]  # (1, L, heads, hd/2)
    rotated = torch.view_as_complex(pairs) * turn
    return torch.view_as_real(rotated).reshape(shape)


def _tensorflow_graph_float32(x):
    """Whether `x` is a float32 TensorFlow tensor outside XLA (eager, or
    the graph Keras runs on a machine with only CPUs), where
    `_tensorflow_rotate_pairs` runs; XLA keeps the real form, which it
    fuses."""
    if keras.backend.backend() != "tensorflow":
        return False
    return x.dtype == "float32" and not xla_compiled()


def _tensorflow_rotate_pairs(x, cos, sin):
    """`apply_rotary_across_heads`'s rotation under TensorFlow in float32
    outside XLA: `_torch_rotate_pairs`'s complex product, the pairs read
    as complex64 by `tf.bitcast` (a reinterpretation of the same
    memory), with its gradient written out (the upstream gradient times
    cos - i sin; `Bitcast` has none). The real form is four operations
    forwards and more backwards, each a pass over a tensor of x's size
    in TensorFlow's graph: a query's or key's rotation, forward and
    backward with a product and a sum, at (16, 1024, 4, 32) took 11.7-12.4
    ms that way and 3.3-4.3 ms this way, equal to the bit
    (`docs/results/tensorflow_graph_epyc/`)."""
    import tensorflow as tf

    shape = tf.shape(x)
    heads, depth = x.shape[-2], x.shape[-1]
    turn = tf.complex(cos, sin)[None]  # (1, L, heads, hd/2)

    def as_complex(t):  # (B, L, heads, hd) -> (B, L, heads, hd/2)
        pairs = tf.reshape(t, (shape[0], shape[1], heads, depth // 2, 2))
        return tf.bitcast(pairs, tf.complex64)

    def as_real(z):
        return tf.reshape(tf.bitcast(z, tf.float32), shape)

    @tf.custom_gradient
    def rotate(t):
        def grad(upstream):
            return as_real(as_complex(upstream) * tf.math.conj(turn))

        return as_real(as_complex(t) * turn), grad

    return rotate(x)


@keras.saving.register_keras_serializable(package="lra_keras")
class RotaryMultiHeadAttention(keras.layers.Layer):
    """Multi-head self-attention with rotary positions on queries and keys.

    Rotary embeddings encode relative position inside the attention scores
    only; values and the residual stream stay position-free. This is the
    attention of the rotary Transformer that reaches state-of-the-art LRA
    accuracy in "You Can Train from Scratch"
    (https://openreview.net/forum?id=PdaPky8MUn). With `use_rotary=False`
    it is plain multi-head attention, for the paper's Table 4 ablation with
    summed (learned or sinusoidal) position embeddings.

    The softmax attention itself goes through
    `lra_keras.layers.attention_kernels.attention`: `"auto"` picks the fused
    kernel under torch and on any accelerator (under JAX on a GPU while it
    gets a flash kernel or its scores stay small), and an exact chunked
    kernel with a recomputing backward pass, memory linear in L, under JAX
    on CPU and under TensorFlow on CPU inside XLA and from 1024 keys
    outside it (plain attention, faster there, below;
    `attention_kernels.resolve_implementation`). The `"fused"` path calls
    `keras.ops.dot_product_attention` without a `flash_attention` argument,
    i.e. with `flash_attention=None` ("use it where possible"): the backend
    takes a flash kernel whenever its own check passes. JAX: cuDNN on
    Ampere or newer GPUs, for float16/bfloat16 inputs (e.g. a
    `"mixed_bfloat16"` policy) and head sizes that are multiples of 8.
    torch: the FLASH SDPA backend, which takes no mask, so padded batches
    run PyTorch's memory-efficient fused kernel instead. This layer cannot
    force flash attention on.

    Args:
        num_heads: int. Number of attention heads.
        key_dim: int. Size of each head's queries and keys (even when
            `use_rotary=True`).
        value_dim: int. Size of each head's values. Defaults to `key_dim`.
        max_wavelength: float. Rotary base frequency ("Rotary base freq").
            Defaults to 10000.
        causal: bool. Whether position i attends only to j <= i.
        use_bias: bool. Whether the projections have biases.
        attention_implementation: `"auto"`, `"fused"`, `"chunked"` or
            `"reference"`; see `attention_kernels.attention`.
        block_size: int or None. Queries per block of the chunked kernel.
        use_rotary: bool. Whether queries and keys are rotated. `False`
            gives position-free multi-head attention (positions must then be
            summed into the inputs). Defaults to `True`.
        rotary_disable_half: bool. Whether half of the rotary frequencies
            are set to 0, so those channels are not rotated ("Rotary
            disable half"): with `rotary_scope="head"` the lowest half of
            every head's (`apply_rotary`), with `"model"` every other one
            over the width, as the YCTFS code (`apply_rotary_across_heads`).
            Defaults to `False`.
        rotary_scope: `"head"` (default): every head rotates its queries and
            keys over the full frequency range (RoFormer, keras-hub).
            `"model"`: the frequencies range over all heads' channels
            together and each head gets its own band, as the YCTFS code,
            whose rotary Transformer presets use it.
        dense_init: `"keras"`, `"torch"` or `"lecun"`: how the four
            projections start (`lra_keras.layers.dense_init`), with the
            fan-in of a `Linear(hidden_dim, ...)` for query, key and value
            and of a `Linear(num_heads * value_dim, hidden_dim)` for the
            output. Defaults to `"keras"`.
        attention_type: `"softmax"` (default, exact), `"linear"` (the
            Linear Transformer's elu + 1 features), `"performer"` (FAVOR+
            random features), `"linformer"` (length projection, not
            causal), `"local"` (softmax within blocks) or `"synthesizer"`
            (learned synthetic logits), see
            `lra_keras.layers.efficient_attention`; or one of the
            block-sparse patterns of `lra_keras.layers.sparse_attention`:
            `"sparse_transformer"` (the fixed pattern, causal whatever
            `causal` says, as LRA's), `"longformer"` (sliding window and
            global first tokens), `"bigbird"` (window, global and random
            blocks); or `"reformer"` (LSH attention with shared queries
            and keys, `lra_keras.layers.lsh_attention`: no key
            projection); or `"sinkhorn"` (sorted blocks, not causal,
            needs `max_length`).
        attention_dropout: float in [0, 1). Dropout on the attention
            weights in training (after the softmax, before the values; an
            independent mask per batch element, head and query, as LRA's
            `broadcast_dropout=False`). The exact softmax attention then
            takes its reference path, which forms the (L, L) weights,
            whatever `attention_implementation` says. Refused (nonzero)
            for `"linear"` and `"performer"`, which form no weights, and
            for `"reformer"`, whose LSH kernel takes no weights dropout
            (LRA's drops none either). Defaults to 0.
        num_random_features: int. Performer: random features per head
            (LRA's `nb_features`). Defaults to 256.
        performer_kernel: `"softmax"` (FAVOR+: positive random features
            estimating the softmax kernel; LRA's ListOps config) or
            `"relu"` (`relu(x) + 1e-3` on the queries and keys, no random
            features: LRA's default `"generalized"` Performer, every other
            task; `efficient_attention.relu_feature_map`). Defaults to
            `"softmax"`.
        orthogonal_scaling: 0 or 1. Performer: the rows of the random
            matrix scaled by Gaussian norms (0) or by sqrt(key_dim) (1),
            LRA's `ortho_scaling`. Defaults to 0.
        feature_redraw: bool. Performer: draw a new random matrix on every
            training call (evaluation uses the one drawn at build, saved
            with the weights). Defaults to `True`.
        projection_dim: int. Linformer: the projected length k (LRA's
            `low_rank_features`). Defaults to 16.
        max_length: int or None. Linformer and Synthesizer: the longest
            input (rows of the length projection, size of the synthetic
            logits). Required for them.
        local_block_size: int. Local and Sinkhorn: positions per block
            (LRA's `block_size`, 50 in `local.py` and `sinkhorn_attention
            .py`). Defaults to 50.
        local_layout: `"contiguous"` (default) or `"strided"` (the groups
            LRA's local and Sinkhorn code forms); see `local_attention`.
        synthesizer_mode: `"random"` (default, LRA's), `"factorized_random"`,
            `"dense"` or `"dense+random"`.
        synthesizer_rank: int. The k of `"factorized_random"`. Defaults
            to 32.
        synthesizer_dot_product: bool. Whether the dot products are added
            to the synthetic logits (LRA's `ignore_dot_product=False`).
            Defaults to `True`.
        sparse_block_size, sparse_summary_size: ints. Sparse Transformer:
            the block l and the summary positions c per block (LRA's
            `Fixed1Pattern(128)`, `Fixed2Pattern(128, c=32)`).
        sparse_cls_token: bool. Sparse Transformer: position 0 attends to
            and is attended by every position, the pattern over the rest
            (LRA's `use_cls_token`, set when its encoders pool "CLS").
            Defaults to `False`.
        sparse_pattern: `"fixed"` (default; LRA's) or `"strided"` (the
            previous `sparse_block_size` positions and every
            `sparse_block_size`-th one before: `strided_sparse_attention`;
            `sparse_summary_size` unused, `sparse_cls_token` refused).
        longformer_window, longformer_global_tokens: ints. Longformer:
            the sliding window (LRA's 512) and how many first positions
            are global (LRA's classifiers: 0).
        bigbird_block_size, bigbird_random_blocks, bigbird_seed: ints.
            BigBird: the block (LRA's 64), random blocks per query block
            (3) and the seed of the random table (LRA's encoder: the
            layer's index).
        reformer_buckets, reformer_hashes, reformer_chunk_size: Reformer:
            LSH buckets (1 or even; LRA's 10), hash rounds (LRA's 1) and
            positions per chunk (None: L / buckets, LRA's chunks).
        reformer_variant: Reformer: `"paper"` (default; unit-normalised
            keys, 1/sqrt(d) scale, the own position and padded keys
            masked, an output projection) or `"lra"`, LRA's code
            (`lsh_attention.lra_lsh_attention`: inputs padded by 10 - L %
            10 zeros (to a multiple of 10 and the buckets), unnormalised
            keys scored `q . k sqrt(d)`, nothing masked, the same
            rotations in every layer, the heads' outputs reshaped into
            positions without a transpose, no output projection:
            `num_heads * value_dim` must be the input width; with
            `mask_semantics="none"`). `reformer_chunk_size` is then
            L / buckets.
        sinkhorn_sort, sinkhorn_iterations: Sinkhorn: how the block
            permutation is normalised, `"softmax"` (LRA's default) or
            `"sinkhorn"` (that many row/column normalisations).
        sinkhorn_sorting: Sinkhorn: `"permutation"` (default, the
            method's sorted blocks) or `"lra"` (LRA's einsum, one sum of
            every block); see `efficient_attention.sinkhorn_attention`.
        sinkhorn_max_blocks: int or None. Sinkhorn: the sort logits per
            block (LRA's `max_num_blocks`, 25); None: one per block of
            `max_length`, which `"permutation"` needs.
        mask_semantics: what the padding mask does, as LRA's code of
            each attention treats its `padding_mask`. `"keys"` (default):
            padded keys get no weight. `"pairs"` (`"softmax"` and
            `"synthesizer"`, `"sparse_transformer"` and `"longformer"`):
            flax's pair mask, padded keys get no weight from real
            queries and a padded query attends uniformly to every key,
            outside its pattern too (LRA's `SelfAttention`, Synthesizer,
            and its Sparse Transformer and Longformer, dense attention
            under their pattern masks;
            `attention_kernels.uniform_masked_rows`).
            `"none"`: the mask is ignored, every key attends (LRA's
            linear, Performer, Linformer and Reformer code takes a
            `padding_mask` argument and never reads it:
            `linear_attention.py` lines 137-141, `performer.py`'s
            attention function drops the bias, `linformer_attention.py`,
            `reformer_attention.py`).
            `"longest"`: every key before the end of the batch's
            longest row gets weight, padding of the shorter rows
            included, the keys after it none (under a TensorFlow
            `MirroredStrategy` the whole batch's longest row in training,
            as on one device and under JAX's `DataParallel`; in inference
            each replica's own, as the code's DDP pads each device's
            batch, so that a strategy's validation can differ from one
            device's where a replica holds only rows shorter than the
            batch's longest: an all-reduce there failed on the uneven
            last batch of the test split, measured): the S4 code
            base's Transformers, which pad each batch to its longest
            row and pass their attention no mask (IdoAmos/not-from-
            scratch `src/models/sequence/mha.py`,
            `MultiheadAttentionFlash.forward` lines 128-164: no
            `key_padding_mask`, the `lengths` absorbed unread), so that a
            batch padded longer attends as that shorter batch
            (`masked_batch_normalization.up_to_longest_row`).
            `"lra_blocks"` (`"local"`, `"bigbird"` and `"sinkhorn"`): LRA's
            code of these; the first two pad their inputs with `b - L % b`
            zero positions counted real (`attention_kernels.pad_to_blocks(...,
            whole_block=True)`; their keys and values are the
            projections' biases). The local attention then gives each
            group the pair mask of the contiguous block of the same index
            (`efficient_attention.local_attention`), not of its own
            positions under the strided layout: real queries of the first
            groups attend to padding, and the groups whose block holds
            only padding attend uniformly. BigBird masks the padded keys
            and zeroes the padded queries' outputs before the output
            projection (google-research/long-range-arena
            `models/bigbird/bigbird_attention.py` lines 312 and 632).
            `"sinkhorn"` pads nothing (LRA's needs a multiple of the
            block; any other length is padded to one with masked
            positions): its own groups take those contiguous pair masks
            too, the sorted ones their union over the blocks, and keys
            are summed and sorted padding included
            (`efficient_attention.sinkhorn_attention(block_pairs=True)`).

        attention_window: int or None. The exact softmax (`"softmax"`)
            within windows of this many positions, each query attending
            to its window and `window_look_backward` /
            `window_look_forward` whole windows on each side
            (`attention_kernels.windowed_attention`): the NTFS code's
            Path-X attention (`mhfla`, `window_size` 4096, 8192 at
            Path-X-256, one neighbour per side). None (default): every
            key. Not with `causal` nor `mask_semantics="pairs"`.
        window_look_backward, window_look_forward: ints >= 0. Defaults
            to 1.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).
        padding_mask: optional (batch, length) tensor, nonzero at real
            tokens. Padded keys get no attention weight (see
            `mask_semantics`).
        training: bool. The Performer redraws its features and
            `attention_dropout` drops weights when `True`.

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> layer = RotaryMultiHeadAttention(num_heads=4, key_dim=16)
    >>> layer(keras.random.normal((2, 128, 64))).shape
    (2, 128, 64)
    """

    def __init__(
        self,
        num_heads,
        key_dim,
        value_dim=None,
        max_wavelength=10000,
        causal=False,
        use_bias=True,
        attention_implementation="auto",
        block_size=None,
        use_rotary=True,
        rotary_disable_half=False,
        rotary_scope="head",
        dense_init="keras",
        attention_type="softmax",
        attention_dropout=0.0,
        num_random_features=256,
        performer_kernel="softmax",
        orthogonal_scaling=0,
        feature_redraw=True,
        projection_dim=16,
        max_length=None,
        local_block_size=50,
        local_layout="contiguous",
        synthesizer_mode="random",
        synthesizer_rank=32,
        synthesizer_dot_product=True,
        sparse_block_size=128,
        sparse_summary_size=32,
        sparse_cls_token=False,
        sparse_pattern="fixed",
        longformer_window=512,
        longformer_global_tokens=0,
        bigbird_block_size=64,
        bigbird_random_blocks=3,
        bigbird_seed=0,
        reformer_buckets=10,
        reformer_hashes=1,
        reformer_chunk_size=None,
        reformer_variant="paper",
        sinkhorn_sort="softmax",
        sinkhorn_iterations=1,
        sinkhorn_sorting="permutation",
        sinkhorn_max_blocks=None,
        mask_semantics="keys",
        attention_window=None,
        window_look_backward=1,
        window_look_forward=1,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if attention_window is not None and (
                attention_type != "softmax" or causal
                or mask_semantics == "pairs" or int(attention_window) < 1
                or int(window_look_backward) < 0
                or int(window_look_forward) < 0):
            raise ValueError(
                "`attention_window` restricts the exact softmax attention "
                "(attention_type='softmax', not causal, mask_semantics "
                "other than 'pairs') to windows of >= 1 positions and >= 0 "
                "neighbours. Received: "
                f"attention_window={attention_window!r}, "
                f"window_look_backward={window_look_backward!r}, "
                f"window_look_forward={window_look_forward!r}, "
                f"attention_type={attention_type!r}, causal={causal!r}, "
                f"mask_semantics={mask_semantics!r}"
            )
        if mask_semantics not in MASK_SEMANTICS or (
                mask_semantics == "pairs"
                and attention_type not in _PAIR_MASKED) or (
                mask_semantics == "lra_blocks"
                and attention_type not in LRA_BLOCKED):
            raise ValueError(
                f"`mask_semantics` must be one of {MASK_SEMANTICS}; "
                f"\"pairs\" only for the attentions {_PAIR_MASKED} (the "
                "others' padded queries are not defined that way here), "
                f"\"lra_blocks\" only for {LRA_BLOCKED}. "
                f"Received: mask_semantics={mask_semantics!r}, "
                f"attention_type={attention_type!r}"
            )
        counts = dict(sparse_block_size=sparse_block_size,
                      sparse_summary_size=sparse_summary_size,
                      longformer_window=longformer_window,
                      longformer_global_tokens=longformer_global_tokens,
                      bigbird_block_size=bigbird_block_size,
                      bigbird_random_blocks=bigbird_random_blocks)
        for name, value in counts.items():
            if int(value) < _COUNT_OPTIONS[name]:
                raise ValueError(
                    f"`{name}` must be >= {_COUNT_OPTIONS[name]}. "
                    f"Received: {name}={value}"
                )
        if (int(reformer_buckets) < 1
                or (int(reformer_buckets) > 1 and int(reformer_buckets) % 2)
                or int(reformer_hashes) < 1
                or (reformer_chunk_size is not None
                    and int(reformer_chunk_size) < 1)):
            raise ValueError(
                "`reformer_buckets` must be 1 or even, `reformer_hashes` "
                ">= 1 and `reformer_chunk_size` None or >= 1. Received: "
                f"reformer_buckets={reformer_buckets}, "
                f"reformer_hashes={reformer_hashes}, "
                f"reformer_chunk_size={reformer_chunk_size}"
            )
        if sparse_pattern not in SPARSE_PATTERNS or (
                sparse_pattern == "strided" and sparse_cls_token):
            raise ValueError(
                f"`sparse_pattern` must be one of {SPARSE_PATTERNS}, and "
                "\"strided\" has no class-token variant (LRA's "
                "`use_cls_token` is the fixed pattern's). Received: "
                f"sparse_pattern={sparse_pattern!r}, "
                f"sparse_cls_token={sparse_cls_token!r}"
            )
        if (sparse_pattern == "fixed"
                and int(sparse_summary_size) >= int(sparse_block_size)):
            raise ValueError(
                "`sparse_summary_size` must be < `sparse_block_size`. "
                f"Received: sparse_summary_size={sparse_summary_size}, "
                f"sparse_block_size={sparse_block_size}"
            )
        if synthesizer_mode not in SYNTHESIZER_MODES:
            raise ValueError(
                f"`synthesizer_mode` must be one of {SYNTHESIZER_MODES}. "
                f"Received: synthesizer_mode={synthesizer_mode!r}"
            )
        if local_layout not in LOCAL_LAYOUTS or int(local_block_size) < 1:
            raise ValueError(
                f"`local_layout` must be one of {LOCAL_LAYOUTS} and "
                "`local_block_size` >= 1. Received: "
                f"local_layout={local_layout!r}, "
                f"local_block_size={local_block_size}"
            )
        self.dense_init = check_dense_init(dense_init)
        if attention_type not in ATTENTION_TYPES:
            raise ValueError(
                f"`attention_type` must be one of {ATTENTION_TYPES}. "
                f"Received: attention_type={attention_type!r}"
            )
        if not 0.0 <= float(attention_dropout) < 1.0 or (
                float(attention_dropout) > 0
                and attention_type in _NO_WEIGHTS_DROPOUT):
            raise ValueError(
                "`attention_dropout` must be in [0, 1), and 0 for the "
                f"attentions {_NO_WEIGHTS_DROPOUT} (the first two never "
                "form the attention weights; the LSH kernel drops none, "
                "as LRA's Reformer). Received: "
                f"attention_dropout={attention_dropout}, "
                f"attention_type={attention_type!r}"
            )
        if attention_type == "linformer" and (causal or not max_length):
            raise ValueError(
                "The Linformer attention projects the whole length: it "
                "cannot be causal and needs `max_length`. Received: "
                f"causal={causal}, max_length={max_length}"
            )
        if sinkhorn_sort not in SINKHORN_SORTS or int(
                sinkhorn_iterations) < 1:
            raise ValueError(
                f"`sinkhorn_sort` must be one of {SINKHORN_SORTS} and "
                "`sinkhorn_iterations` >= 1. Received: "
                f"sinkhorn_sort={sinkhorn_sort!r}, "
                f"sinkhorn_iterations={sinkhorn_iterations}"
            )
        if attention_type == "sinkhorn" and (causal or not max_length):
            raise ValueError(
                "The Sinkhorn attention sorts blocks of the whole sequence "
                "(not causal) and sizes its sorting network by "
                f"`max_length`. Received: causal={causal}, "
                f"max_length={max_length}"
            )
        if sinkhorn_sorting not in SINKHORN_SORTINGS or (
                sinkhorn_max_blocks is not None
                and int(sinkhorn_max_blocks) < 1):
            raise ValueError(
                f"`sinkhorn_sorting` must be one of {SINKHORN_SORTINGS} and "
                "`sinkhorn_max_blocks` None or >= 1. Received: "
                f"sinkhorn_sorting={sinkhorn_sorting!r}, "
                f"sinkhorn_max_blocks={sinkhorn_max_blocks!r}"
            )
        if (attention_type == "sinkhorn" and sinkhorn_sorting == "permutation"
                and sinkhorn_max_blocks is not None
                and int(sinkhorn_max_blocks)
                < -(-int(max_length) // int(local_block_size))):
            raise ValueError(
                "sinkhorn_sorting='permutation' sorts every block of "
                "`max_length`: it needs a sort logit per block "
                "(sinkhorn_max_blocks=None sizes the network so). Received: "
                f"sinkhorn_max_blocks={sinkhorn_max_blocks}, "
                f"max_length={max_length}, "
                f"local_block_size={local_block_size}"
            )
        if reformer_variant not in REFORMER_VARIANTS or (
                attention_type == "reformer" and reformer_variant == "lra"
                and (mask_semantics != "none"
                     or reformer_chunk_size is not None
                     or int(reformer_buckets) < 2)):
            raise ValueError(
                f"`reformer_variant` must be one of {REFORMER_VARIANTS}; "
                "'lra' reads no padding mask and cuts each round into one "
                "chunk per bucket of an even number, as LRA's code: set "
                "mask_semantics='none', reformer_chunk_size=None and "
                "reformer_buckets >= 2. Received: "
                f"reformer_variant={reformer_variant!r}, "
                f"mask_semantics={mask_semantics!r}, "
                f"reformer_chunk_size={reformer_chunk_size!r}, "
                f"reformer_buckets={reformer_buckets}"
            )
        if attention_type == "reformer" and causal:
            raise ValueError(
                "The Reformer's LSH windows depend on every position's "
                "bucket, later ones included: it cannot be causal (see "
                "lra_keras.layers.lsh_attention). Received: causal=True"
            )
        if attention_type == "synthesizer" and not max_length:
            raise ValueError(
                "The Synthesizer's logits are sized by `max_length`. "
                f"Received: max_length={max_length}"
            )
        if int(num_random_features) < 1 or int(projection_dim) < 1:
            raise ValueError(
                "`num_random_features` and `projection_dim` must be >= 1. "
                f"Received: num_random_features={num_random_features}, "
                f"projection_dim={projection_dim}"
            )
        if performer_kernel not in PERFORMER_KERNELS:
            raise ValueError(
                f"`performer_kernel` must be one of {PERFORMER_KERNELS}. "
                f"Received: performer_kernel={performer_kernel!r}"
            )
        if orthogonal_scaling not in (0, 1):
            raise ValueError(
                "`orthogonal_scaling` must be 0 or 1. Received: "
                f"orthogonal_scaling={orthogonal_scaling!r}"
            )
        if rotary_scope not in ROTARY_SCOPES:
            raise ValueError(
                f"`rotary_scope` must be one of {ROTARY_SCOPES}. Received: "
                f"rotary_scope={rotary_scope!r}"
            )
        if int(num_heads) < 1:
            raise ValueError(
                f"`num_heads` must be >= 1. Received: num_heads={num_heads}"
            )
        if int(key_dim) < 1 or (use_rotary and int(key_dim) % 2):
            raise ValueError(
                "`key_dim` must be positive, and even when `use_rotary` "
                f"(rotary pairs channels). Received: key_dim={key_dim}, "
                f"use_rotary={use_rotary}"
            )
        if attention_implementation not in IMPLEMENTATIONS:
            raise ValueError(
                f"`attention_implementation` must be one of "
                f"{IMPLEMENTATIONS}. Received: "
                f"attention_implementation={attention_implementation!r}"
            )
        if max_wavelength <= 0:
            raise ValueError(
                "`max_wavelength` must be positive. Received: "
                f"max_wavelength={max_wavelength}"
            )
        self.num_heads = int(num_heads)
        self.key_dim = int(key_dim)
        self.value_dim = int(value_dim) if value_dim else self.key_dim
        self.max_wavelength = max_wavelength
        self.causal = bool(causal)
        self.use_bias = bool(use_bias)
        self.attention_implementation = attention_implementation
        self.block_size = block_size
        self.use_rotary = bool(use_rotary)
        self.rotary_disable_half = bool(rotary_disable_half)
        self.rotary_scope = rotary_scope
        self.attention_type = attention_type
        self.attention_dropout = float(attention_dropout)
        # The attention weights' dropout (`keras.layers.Dropout`: its own
        # seed generator, inverted scaling), applied by the kernels
        # (`attention_kernels.drop_weights`).
        self.weights_dropout_layer = (
            keras.layers.Dropout(self.attention_dropout,
                                 name="weights_dropout",
                                 dtype=self.dtype_policy)
            if self.attention_dropout else None)
        self.num_random_features = int(num_random_features)
        self.performer_kernel = performer_kernel
        self.orthogonal_scaling = int(orthogonal_scaling)
        self.feature_redraw = bool(feature_redraw)
        self.projection_dim = int(projection_dim)
        self.max_length = int(max_length) if max_length else None
        self.local_block_size = int(local_block_size)
        self.local_layout = local_layout
        self.synthesizer_mode = synthesizer_mode
        self.synthesizer_rank = int(synthesizer_rank)
        self.synthesizer_dot_product = bool(synthesizer_dot_product)
        self.sparse_block_size = int(sparse_block_size)
        self.sparse_summary_size = int(sparse_summary_size)
        self.sparse_cls_token = bool(sparse_cls_token)
        self.sparse_pattern = sparse_pattern
        self.longformer_window = int(longformer_window)
        self.longformer_global_tokens = int(longformer_global_tokens)
        self.bigbird_block_size = int(bigbird_block_size)
        self.bigbird_random_blocks = int(bigbird_random_blocks)
        self.bigbird_seed = int(bigbird_seed)
        self.reformer_buckets = int(reformer_buckets)
        self.reformer_hashes = int(reformer_hashes)
        self.reformer_chunk_size = (None if reformer_chunk_size is None
                                    else int(reformer_chunk_size))
        self.reformer_variant = reformer_variant
        self.sinkhorn_sort = sinkhorn_sort
        self.sinkhorn_iterations = int(sinkhorn_iterations)
        self.sinkhorn_sorting = sinkhorn_sorting
        self.sinkhorn_max_blocks = (None if sinkhorn_max_blocks is None
                                    else int(sinkhorn_max_blocks))
        self.mask_semantics = mask_semantics
        self.attention_window = (None if attention_window is None
                                 else int(attention_window))
        self.window_look_backward = int(window_look_backward)
        self.window_look_forward = int(window_look_forward)
        self.supports_masking = False
        if attention_type == "performer":
            self.seed_generator = keras.random.SeedGenerator(
                seed=None, name="feature_seed")

    @property
    def _lra_reformer(self):
        return (self.attention_type == "reformer"
                and self.reformer_variant == "lra")

    def _projection(self, name, size, hidden_dim):
        return EinsumDense(
            "bld,dhk->blhk",
            output_shape=(None, self.num_heads, size),
            bias_axes="hk" if self.use_bias else None,
            name=name,
            dtype=self.dtype_policy,
            **dense_initializers(self.dense_init, hidden_dim),
        )

    def build(self, input_shape):
        hidden_dim = input_shape[-1]
        self.query_dense = self._projection("query", self.key_dim, hidden_dim)
        # The Reformer shares queries and keys: no key projection.
        self.key_dense = None
        if self.attention_type != "reformer":
            self.key_dense = self._projection("key", self.key_dim,
                                              hidden_dim)
        self.value_dense = self._projection("value", self.value_dim,
                                            hidden_dim)
        for dense in (self.query_dense, self.key_dense, self.value_dense):
            if dense is not None:
                dense.build(input_shape)
        self.output_dense = None
        if self._lra_reformer:
            # LRA's Reformer returns its heads as the block's width, with
            # no output projection (reformer_attention.py lines 335-339)
            if self.num_heads * self.value_dim != hidden_dim:
                raise ValueError(
                    "reformer_variant='lra' has no output projection: its "
                    "heads must make the width, num_heads * value_dim == "
                    "hidden_dim (LRA's qkv_features is the input width). "
                    f"Received: num_heads={self.num_heads}, "
                    f"value_dim={self.value_dim}, hidden_dim={hidden_dim}")
        else:
            self.output_dense = EinsumDense(
                "blhk,hkd->bld",
                output_shape=(None, hidden_dim),
                bias_axes="d" if self.use_bias else None,
                name="attention_output",
                dtype=self.dtype_policy,
                **dense_initializers(self.dense_init,
                                     self.num_heads * self.value_dim),
            )
            self.output_dense.build((input_shape[0], input_shape[1],
                                     self.num_heads, self.value_dim))
        if (self.attention_type == "performer"
                and self.performer_kernel == "softmax"):
            # Non-trainable, saved with the weights: evaluation and export
            # use the matrix drawn here.
            self.random_features = self.add_weight(
                name="random_features",
                shape=(self.num_random_features, self.key_dim),
                initializer="zeros",
                trainable=False,
            )
            self.random_features.assign(self._draw_features())
        elif self.attention_type == "linformer":
            # LRA's `lr_kernel`: one (max_len, k) matrix for keys and values,
            # xavier_uniform as the LRA block passes `kernel_init`.
            self.length_projection = self.add_weight(
                name="length_projection",
                shape=(self.max_length, self.projection_dim),
                initializer="glorot_uniform",
            )
        elif self.attention_type == "synthesizer":
            self._build_synthesizer(hidden_dim)
        elif self.attention_type == "sinkhorn":
            # LRA's sorting network: a Dense from a block's summed keys to
            # the logits of its target blocks, one per head dimension
            # (sinkhorn_attention.py lines 356-362), xavier as its block
            # passes `kernel_init`, with a bias as the projections (LRA's
            # blocks: none); sized by `sinkhorn_max_blocks` (LRA's
            # `max_num_blocks`, 25) or the most blocks.
            blocks = self.sinkhorn_max_blocks or -(
                -self.max_length // self.local_block_size)
            self.sort_kernel = self.add_weight(
                name="sort_kernel", shape=(self.key_dim, blocks),
                initializer="glorot_uniform")
            self.sort_bias = None if not self.use_bias else self.add_weight(
                name="sort_bias", shape=(blocks,), initializer="zeros")
        elif self.attention_type == "reformer":
            # The LSH rotations, drawn once and saved with the weights;
            # LRA's draws the same ones at every call and in every layer
            # (PRNGKey(0)): under its variant a seeded draw, the same in
            # every layer.
            self.lsh_rotations = self.add_weight(
                name="lsh_rotations",
                shape=(self.key_dim, self.reformer_hashes,
                       self.reformer_buckets // 2),
                initializer=keras.initializers.RandomNormal(
                    stddev=1.0, seed=0 if self._lra_reformer else None),
                trainable=False,
            )
        self.built = True

    def _build_synthesizer(self, hidden_dim):
        """LRA's synthetic-logit weights, xavier_uniform as its block
        passes `kernel_init` (Keras's glorot fans of a 3-D kernel equal
        flax's)."""
        heads, length = self.num_heads, self.max_length
        if "random" in self.synthesizer_mode:
            if self.synthesizer_mode == "factorized_random":
                rank = self.synthesizer_rank
                self.random_left = self.add_weight(
                    name="random_left", shape=(heads, length, rank),
                    initializer="glorot_uniform")
                self.random_right = self.add_weight(
                    name="random_right", shape=(heads, rank, length),
                    initializer="glorot_uniform")
            else:
                self.random_logits = self.add_weight(
                    name="random_logits", shape=(heads, length, length),
                    initializer="glorot_uniform")
        if "dense" in self.synthesizer_mode:
            self.dense_hidden = EinsumDense(
                "bld,dhk->blhk", output_shape=(None, heads, self.key_dim),
                activation="relu", name="dense_synthesizer",
                dtype=self.dtype_policy)
            self.dense_logits = EinsumDense(
                "blhk,km->blhm", output_shape=(None, heads, length),
                name="dense_synthesizer_logits", dtype=self.dtype_policy)
            self.dense_hidden.build((None, None, hidden_dim))
            self.dense_logits.build((None, None, heads, self.key_dim))

    def _check_max_length(self, inputs, what):
        if inputs.shape[1] is not None and inputs.shape[1] > self.max_length:
            raise ValueError(
                f"{what} needs inputs no longer than its `max_length`. "
                f"Received: inputs.shape={inputs.shape}, "
                f"max_length={self.max_length}"
            )

    def _synthetic_logits(self, inputs):
        """(batch or 1, heads, L, L) logits of the synthesizer modes."""
        self._check_max_length(inputs, "The Synthesizer")
        length = ops.shape(inputs)[1]
        logits = None
        if "random" in self.synthesizer_mode:
            if self.synthesizer_mode == "factorized_random":
                full = ops.einsum("hlk,hkm->hlm", self.random_left,
                                  self.random_right)
            else:
                full = ops.convert_to_tensor(self.random_logits)
            logits = full[None, :, :length, :length]
        if "dense" in self.synthesizer_mode:
            dense = self.dense_logits(self.dense_hidden(inputs))
            dense = ops.transpose(dense, (0, 2, 1, 3))  # (B, H, L, max)
            dense = dense[..., :length]
            logits = (dense if logits is None
                      else add_shared(dense, logits[0]))
        return logits

    def _draw_features(self):
        return gaussian_orthogonal_matrix(
            self.num_random_features, self.key_dim, seed=self.seed_generator,
            scaling=self.orthogonal_scaling)

    def _weights_dropout(self, training):
        """The attention weights' dropout in training (a `WeightsDropout`,
        which the blockwise attention applies block by block), or None."""
        if not (training and self.weights_dropout_layer is not None):
            return None
        return WeightsDropout(self.weights_dropout_layer)

    def _attend(self, q, k, v, padding_mask, training, inputs):
        drop = self._weights_dropout(training)
        query_mask = None
        if self.mask_semantics == "none":
            padding_mask = None
        elif self.mask_semantics == "longest" and padding_mask is not None:
            padding_mask = up_to_longest_row(
                padding_mask, across_replicas=bool(training))
        elif self.mask_semantics == "pairs":
            query_mask = padding_mask
        if self.attention_type == "linear":
            return linear_attention(q, k, v, padding_mask, self.causal)
        if self.attention_type == "performer":
            if self.performer_kernel == "relu":
                return relu_kernel_attention(q, k, v, padding_mask,
                                             self.causal)
            features = self.random_features
            if training and self.feature_redraw:
                features = self._draw_features()
            return performer_attention(q, k, v, features, padding_mask,
                                       self.causal)
        if self.attention_type == "linformer":
            return linformer_attention(q, k, v, self.length_projection,
                                       padding_mask, drop)
        if self.attention_type == "synthesizer":
            return synthesizer_attention(
                q, k, v, self._synthetic_logits(inputs), padding_mask,
                self.causal, self.synthesizer_dot_product, drop, query_mask)
        if self.attention_type == "local":
            return local_attention(
                q, k, v, self.local_block_size, padding_mask, self.causal,
                self.local_layout, drop,
                block_pairs=self.mask_semantics == "lra_blocks")
        if (self.attention_type == "sparse_transformer"
                and self.sparse_pattern == "strided"):
            return uniform_masked_outputs(strided_sparse_attention(
                q, k, v, self.sparse_block_size, padding_mask, drop), v,
                query_mask, drop)
        if self.attention_type == "sparse_transformer":
            return uniform_masked_outputs(sparse_transformer_attention(
                q, k, v, self.sparse_block_size, self.sparse_summary_size,
                padding_mask, self.sparse_cls_token, drop), v, query_mask,
                drop)
        if self.attention_type == "longformer":
            return uniform_masked_outputs(longformer_attention(
                q, k, v, self.longformer_window,
                self.longformer_global_tokens, padding_mask, self.causal,
                drop), v, query_mask, drop)
        if self.attention_type == "sinkhorn":
            self._check_max_length(q, "The Sinkhorn attention")
            return sinkhorn_attention(
                q, k, v, self.sort_kernel, self.sort_bias,
                self.local_block_size, padding_mask, self.local_layout,
                self.sinkhorn_sort, self.sinkhorn_iterations, drop,
                block_pairs=self.mask_semantics == "lra_blocks",
                sorting=self.sinkhorn_sorting)
        if self.attention_type == "reformer":
            return lsh_attention(q, v, self.lsh_rotations,
                                 self.reformer_chunk_size, padding_mask)
        if self.attention_type == "bigbird":
            out = bigbird_attention(
                q, k, v, self.bigbird_block_size, self.bigbird_random_blocks,
                self.bigbird_seed, padding_mask, self.causal, drop)
            if self.mask_semantics == "lra_blocks":  # padded queries: 0
                out = out * ops.cast(padding_mask, out.dtype)[:, :, None,
                                                              None]
            return out
        if self.attention_window is not None:
            return windowed_attention(
                q, k, v, self.attention_window, self.window_look_backward,
                self.window_look_forward, padding_mask,
                self.attention_implementation, self.block_size, drop)
        return attention(
            q,
            k,
            v,
            padding_mask=padding_mask,
            causal=self.causal,
            implementation=self.attention_implementation,
            block_size=self.block_size,
            weights_dropout=drop,
            query_mask=query_mask,
        )

    def _rotate(self, t):
        """`t` (batch, length, heads, dim) rotated when `use_rotary`."""
        if not self.use_rotary:
            return t
        rotate = (apply_rotary if self.rotary_scope == "head"
                  else apply_rotary_across_heads)
        return rotate(t, self.max_wavelength,
                      disable_half=self.rotary_disable_half)

    def _call_lra_reformer(self, inputs):
        """LRA's `ReformerAttention.apply` (reformer_attention.py lines
        301-339): inputs padded by `10 - L % 10` zero positions (its
        `chunk_len`; with a bucket count other than LRA's 10, to a
        multiple of both, which LRA's reshape would need), shared queries
        and keys, `lra_lsh_attention`, the (batch, heads, L, d) output
        reshaped to (batch, L, heads d) without moving the heads, cut to
        L; no output projection."""
        length = ops.shape(inputs)[1]
        (inputs,), _, _ = pad_to_blocks(
            (inputs,), None, math.lcm(LRA_REFORMER_CHUNK,
                                      self.reformer_buckets),
            whole_block=True)
        q = self._rotate(self.query_dense(inputs))
        out = lra_lsh_attention(q, self.value_dense(inputs),
                                self.lsh_rotations)
        out = ops.reshape(out, (-1, ops.shape(inputs)[1],
                                self.num_heads * self.value_dim))
        return out[:, :length]

    def call(self, inputs, padding_mask=None, training=None):
        if self._lra_reformer:
            return self._call_lra_reformer(inputs)
        length = None
        if (self.mask_semantics == "lra_blocks"
                and self.attention_type != "sinkhorn"):
            length = ops.shape(inputs)[1]
            (inputs,), padding_mask, _ = pad_to_blocks(
                (inputs,), padding_mask, self.local_block_size
                if self.attention_type == "local"
                else self.bigbird_block_size, whole_block=True)
        # (batch, length, heads, key_dim); shared keys rotated once
        q = self._rotate(self.query_dense(inputs))
        k = q if self.key_dense is None else self._rotate(
            self.key_dense(inputs))
        v = self.value_dense(inputs)  # (batch, length, heads, value_dim)
        out = self._attend(q, k, v, padding_mask, training, inputs)
        out = self.output_dense(out)  # out: (batch, length, heads, value)
        return out if length is None else out[:, :length]

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            num_heads=self.num_heads,
            key_dim=self.key_dim,
            value_dim=self.value_dim,
            max_wavelength=self.max_wavelength,
            causal=self.causal,
            use_bias=self.use_bias,
            attention_implementation=self.attention_implementation,
            block_size=self.block_size,
            use_rotary=self.use_rotary,
            rotary_disable_half=self.rotary_disable_half,
            rotary_scope=self.rotary_scope,
            dense_init=self.dense_init,
            attention_type=self.attention_type,
            attention_dropout=self.attention_dropout,
            num_random_features=self.num_random_features,
            performer_kernel=self.performer_kernel,
            orthogonal_scaling=self.orthogonal_scaling,
            feature_redraw=self.feature_redraw,
            projection_dim=self.projection_dim,
            max_length=self.max_length,
            local_block_size=self.local_block_size,
            local_layout=self.local_layout,
            synthesizer_mode=self.synthesizer_mode,
            synthesizer_rank=self.synthesizer_rank,
            synthesizer_dot_product=self.synthesizer_dot_product,
            sparse_block_size=self.sparse_block_size,
            sparse_summary_size=self.sparse_summary_size,
            sparse_cls_token=self.sparse_cls_token,
            sparse_pattern=self.sparse_pattern,
            longformer_window=self.longformer_window,
            longformer_global_tokens=self.longformer_global_tokens,
            bigbird_block_size=self.bigbird_block_size,
            bigbird_random_blocks=self.bigbird_random_blocks,
            bigbird_seed=self.bigbird_seed,
            reformer_buckets=self.reformer_buckets,
            reformer_hashes=self.reformer_hashes,
            reformer_chunk_size=self.reformer_chunk_size,
            reformer_variant=self.reformer_variant,
            sinkhorn_sort=self.sinkhorn_sort,
            sinkhorn_iterations=self.sinkhorn_iterations,
            sinkhorn_sorting=self.sinkhorn_sorting,
            sinkhorn_max_blocks=self.sinkhorn_max_blocks,
            mask_semantics=self.mask_semantics,
            attention_window=self.attention_window,
            window_look_backward=self.window_look_backward,
            window_look_forward=self.window_look_forward,
        )
        return config
