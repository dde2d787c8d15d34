"""Scaled dot-product attention that stays fast and lean on every backend.

`keras.ops.dot_product_attention` dispatches to a fused kernel where the
backend has one (PyTorch's `scaled_dot_product_attention` on CPU and GPU,
cuDNN under JAX on GPU). Under JAX and TensorFlow on CPU it materialises the
full (batch, heads, L, L) score tensor, and the autodiff keeps several of them
per layer for the backward pass: ~19 GB for a 4-layer model at L=2048, batch
16. `chunked_attention` below computes exactly the same function in blocks
of (batch, head) rows x queries, against every key, with a hand-written
backward pass (the FlashAttention recurrences, Dao et al. 2022,
https://arxiv.org/abs/2205.14135, at query-block granularity): the forward
pass keeps only the output and the per-row log-sum-exp, and the backward
pass recomputes one block of probabilities at a time. Peak memory is
O(batch · heads · L · D + block · L) instead of O(layers · batch · heads ·
L²). Dropout on the attention weights (LRA's `attention_dropout_rate`)
happens inside the blocks too: each block's mask is a hash of the weights'
positions keyed by a seed and the block (`backend_utils.hashed_keep`),
drawn again in the backward pass, as FlashAttention drops its weights.

References:
- FlashAttention: https://arxiv.org/abs/2205.14135
- Online softmax normaliser: https://arxiv.org/abs/1805.02867
"""

import functools
import math

import keras
from keras import ops

from lra_keras.backend_utils import barrier
from lra_keras.backend_utils import hashed_keep
from lra_keras.backend_utils import inner_products
from lra_keras.backend_utils import on_accelerator
from lra_keras.backend_utils import xla_compiled
from lra_keras.distribute import replica_seed
from lra_keras.layers.lean_backward import softmax

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

# Block layout of the chunked path. Where each loop step costs a kernel
# launch or a copy of the loop's buffers (an accelerator; TensorFlow's
# graph without XLA, whose while loop copies the output blocks it updates,
# which `attention` avoids on a CPU, see `_chunked_function`) a block
# holds every (batch, head) row and as many queries as keep its float32
# scores near `_BLOCK_ELEMENTS` (2**22 = 16 MiB), at least `_MIN_BLOCK`:
# few, large blocks. Under XLA on a CPU a block holds `_CPU_BLOCK_QUERIES`
# queries of as many rows as keep its scores near `_CPU_BLOCK_ELEMENTS`
# (2**21 = 8 MiB), so that they stay in cache between the products and
# the exponentials that read them; so does PyTorch's Python loop on a
# CPU, with fewer queries where 512 of one row exceed that: one forward +
# backward with LRA's dropout and pair mask (4 heads of 32, 2 cores,
# 2026-12-07, docs/results/torch_blockwise_epyc/layouts.txt) took
# 0.99-1.16 s in blocks of 4 x 512 against 1.37-1.89 s in blocks of every
# row x 64 at L = 1024, batch 16; 3.8-4.1 against 4.5-5.6 s (1 x 512,
# 16 x 64) at 4096, batch 4; at 16384, batch 1, 22.6 s in blocks of
# 1 x 128, as 21.7 s in blocks of 4 x 64, against 38.5 s in blocks of
# 1 x 512, whose 32 MiB tensors glibc maps and faults in anew each time;
# under JAX on 2 cores (32 MiB of L3), batch 32, 4 heads of 16, L = 1024,
# one forward + backward of the attention alone took 148 ms in blocks of
# 4 rows x 256 queries against 482-905 ms in blocks of all 128 rows x 64
# queries; at L = 4096 (batch 16, 4 heads of 32) 2.07 s in blocks of 1 x
# 256 against 4.85 s. TensorFlow without XLA at that 4K shape took 8.9 s
# in blocks of 1 x 256 and 3.8 s in blocks of 64 x 64 (a `tf.function` of
# the attention alone, 2026-12-04). The block was 256 queries near 2**20
# scores until 2026-12-05; on a 2-core Xeon with 2 MiB of L2 a core
# (batch 16, 4 heads of 32, under JAX) the present one took 262, 932 and
# 3,838 ms at L = 1024, 2048 and 4096 against 307, 1,076 and 4,147 ms:
# fewer loop steps of larger products. The best of the layouts tried
# there (1-16 rows x 64-1024 queries) was within 6% of it.
_BLOCK_ELEMENTS = 2**22
_MIN_BLOCK = 64
_CPU_BLOCK_ELEMENTS = 2**21
_CPU_BLOCK_QUERIES = 512


# Under TensorFlow on CPU without XLA, "auto" keeps plain attention below
# this many keys and takes the chunked path from it on (see
# `resolve_implementation`).
TENSORFLOW_CHUNKED_FROM = 1024

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
    - jax on CPU, and tensorflow on CPU under XLA (`jit_compile=True`):
      `"chunked"`, in cache-sized blocks (`_CPU_BLOCK_ELEMENTS`), faster
      than either plain path there and linear in L in memory. One
      forward + backward of the attention layer (`benchmarks/attention.py
      --batch 32 --hidden 64 --heads 4`, docs/results/attention_cpu_blocks)
      at L = 256 / 1024 / 2048: JAX 28 / 231 / 826 ms chunked against
      66 / 1155 / 4929 reference and 82 / 2152 / 10444 fused; TensorFlow
      under XLA 22 / 203 / 733 ms against 30 / 484 / 1736 and
      38 / 478 / 1822; PyTorch's fused kernel, for comparison,
      27 / 299 / 1090 ms;
    - tensorflow on CPU without XLA (Keras's `jit_compile="auto"` there):
      `"reference"` below `TENSORFLOW_CHUNKED_FROM` keys, `"chunked"` from
      it on, its two loops compiled by XLA on their own
      (`_tensorflow_chunked_attention`), its memory
      linear in L (plain attention keeps several (batch, heads, L, L)
      tensors per layer, over 20 GB for four layers at L = 4096, batch
      16). At batch 16, 4 heads of 16 (`benchmarks/attention.py
      --no-xla`): L = 1024 116 ms against 142 ms plain; 4096 1.7 s and
      0.4 GB against 2.3 s and 17 GB; below 1024, with heads of 32 or
      64, plain attention is the faster (paired, batch 16, 4 heads of
      32: 0.81-0.86x the chunked path's time at L = 512, 0.78-0.88x at
      1000), with heads of 16 the chunked path by 5-26% at 512-768 keys,
      within the noise of repeated runs
      (docs/results/attention_limits_epyc/threshold.txt);
    - a length unknown while tracing (an exported SavedModel's signature,
      TensorFlow's `fit` after several lengths): `"chunked"` wherever the
      chunked path would be taken at some length, its blocks laid out at
      run time (`_run_time_layout`); under TensorFlow on a CPU without
      XLA, `attention` then takes, at run time, one dense block below
      `TENSORFLOW_CHUNKED_FROM` keys (plain attention's arithmetic,
      `_dense_passes`) and the compiled loops from it on, as for a length
      known while tracing. Plain attention there kept a
      SavedModel's memory quadratic in L: a 4-block Transformer of width
      128 served one sequence of 16,384 tokens in 5.1 GB of resident set,
      1.1 GB now (docs/results/tensorflow_run_time_lengths_epyc/).

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
    if (backend == "tensorflow" and key_length is not None
            and key_length < TENSORFLOW_CHUNKED_FROM and not xla_compiled()):
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


class WeightsDropout:
    """The attention weights' dropout of a `keras.layers.Dropout` `layer`,
    in a form that the blockwise attention can apply without forming
    the weights.

    Called on weights, it is `layer(probs, training=True)`: its rate,
    its seed generator, its inverted scaling (`drop_weights`, in every
    kernel that forms the weights). `attention`'s chunked path takes
    its `rate` and a seed of two integers (`draw_seed`) instead, and
    drops each block's weights by `hashed_keep`: the same distribution
    (each weight kept with probability 1 - rate, scaled by
    1 / (1 - rate)), drawn from another generator.
    """

    def __init__(self, layer):
        self.layer = layer

    @property
    def rate(self):
        return float(self.layer.rate)

    def __call__(self, probs):
        return self.layer(probs, training=True)

    def draw_seed(self):
        """Two integers: the next draw of the layer's seed generator, or
        under PyTorch, for a layer given no seed, of torch's global
        generator, which Keras's PyTorch dropout then draws from
        (keras/src/backend/torch/random.py, "Fast path, unseeded"), so
        that a run resumed with that generator's state
        (`backend_utils.global_rng_state`) draws the masks the
        uninterrupted one would have. Within several replicas of a
        TensorFlow `MirroredStrategy`, each replica's own
        (`distribute.replica_seed`), as Keras's dropout draws there under
        `--distribute`."""
        if keras.backend.backend() == "torch" and self.layer.seed is None:
            import torch

            return ops.convert_to_tensor(torch.randint(
                0, 2**31 - 1, (2,), dtype=torch.int64))
        return replica_seed(self.layer.seed_generator.next())


def drop_weights(probs, weights_dropout):
    """`weights_dropout(probs)`, or `probs` when it is None: the dropout
    on the attention weights (after the softmax, before the values) that
    every kernel taking `weights_dropout` applies."""
    return probs if weights_dropout is None else weights_dropout(probs)


def reference_attention(query, key, value, padding_mask=None, causal=False,
                        weights_dropout=None, query_mask=None):
    """Plain softmax attention, materialising all scores (the test oracle).

    Shapes as `keras.ops.dot_product_attention`: query (batch, Lq, heads, D),
    key/value (batch, Lk, heads, D), padding_mask (batch, Lk) of real keys.
    `weights_dropout`: None, or a callable applied to the attention
    weights (batch, heads, Lq, Lk) before they weigh the values
    (`drop_weights`). `query_mask`: None, or (batch, Lq) of real queries,
    the padded ones attending uniformly to every key
    (`uniform_masked_rows`).
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
    scores = uniform_masked_rows(scores, query_mask)
    probs = drop_weights(softmax(scores, axis=-1), weights_dropout)
    return ops.transpose(ops.matmul(probs, v), (0, 2, 1, 3))


def _block_layout(rows, heads, q_len, k_len, block_size, block_rows,
                  wide_values=False):
    """(rows per block, queries per block) of the chunked path.

    `rows` is batch x heads, None when the batch is unknown while tracing
    (TensorFlow's `fit`); then a block's rows divide `heads`, or where
    blocks are few and large it holds every row (rows per block None).
    See `_CPU_BLOCK_ELEMENTS`; under XLA on a CPU (and PyTorch's loop
    there, not measured) values wider than the queries (`wide_values`,
    MEGA's: 256 against 64) take one row a block:
    a forward + backward of `chunked_attention` under JAX on 2 cores, one
    head, took 236-258 ms in blocks of one row against 262 and 282 ms in
    blocks of 2 and 4 at 1024 keys (batch 16), 406-427 against 550 ms
    in blocks of 2 at 2048 (batch 8) (2026-12-05). On a CPU the queries
    are shared evenly between the blocks (`_even_blocks`). `block_size`
    and `block_rows`, when given, fix the queries and the rows of a
    block; the rows must divide batch x heads.
    """
    divisible = rows or heads  # what a block's rows must divide
    if block_rows is not None:
        if int(block_rows) < 1 or divisible % int(block_rows):
            raise ValueError(
                "`block_rows` must divide batch x heads (heads while the "
                f"batch is unknown). Received: block_rows={block_rows}, "
                f"batch x heads={rows}, heads={heads}")
        block_rows = int(block_rows)
    python_loop = _python_loop()
    if on_accelerator() or not (xla_compiled() or python_loop):
        if block_rows is None:
            block_rows = rows
        size = (int(block_size) if block_size is not None else max(
            _MIN_BLOCK, _BLOCK_ELEMENTS // ((block_rows or 1) * k_len)))
        return block_rows, min(size, q_len)
    size = min(int(block_size or _CPU_BLOCK_QUERIES), q_len)
    if python_loop and block_size is None:
        # Fewer queries where 512 of one row exceed _CPU_BLOCK_ELEMENTS
        # scores: each of PyTorch's operations writes a new block, and
        # glibc's malloc maps anew (and faults in) every one over 32 MiB.
        size = min(size, max(_MIN_BLOCK, _CPU_BLOCK_ELEMENTS // k_len))
    if block_size is None:
        size = _even_blocks(q_len, size)
    if block_rows is None:
        # The most rows that divide `rows` and keep the block near
        # _CPU_BLOCK_ELEMENTS scores (at least one row).
        most = 1 if wide_values else max(
            1, _CPU_BLOCK_ELEMENTS // (size * k_len))
        block_rows = max(r for r in range(1, min(most, divisible) + 1)
                         if divisible % r == 0)
    return block_rows, size


def _run_time_layout(heads, q_len, block_size, block_rows):
    """(rows per block, queries per block) of the chunked path when a
    length is known only at run time (TensorFlow: an export's signature,
    `fit`'s shapes relaxed after several lengths): `block_rows` (a
    divisor of the heads) or one row, and `block_size` queries, at most
    `q_len` (a tensor), or up to `_CPU_BLOCK_QUERIES` shared evenly
    between the blocks (`_even_blocks`). That is
    `_block_layout`'s rule on a CPU wherever 512 queries of one row hold
    `_CPU_BLOCK_ELEMENTS` scores or more (from 4,096 keys), and where
    the length is known it gives more rows to a block below that. Under
    TensorFlow on 2 cores (`docs/results/tensorflow_run_time_lengths_epyc/`)
    one forward + backward took as long in blocks of one row as of four
    at 1,024 keys (245 ms, batch 16, 4 heads of 32), less at 4,096 (batch
    4: 0.98 against 1.17 s in blocks of 4 x 128), and the forward alone
    at 16,384 (batch 1: 1.29 against 1.73 s in blocks of 4 x 64).
    """
    if block_rows is not None and (int(block_rows) < 1
                                   or heads % int(block_rows)):
        raise ValueError(
            "`block_rows` must divide the heads when a sequence length is "
            f"unknown while tracing. Received: block_rows={block_rows}, "
            f"heads={heads}")
    size = (_even_blocks(q_len, _CPU_BLOCK_QUERIES) if block_size is None
            else ops.minimum(int(block_size), q_len))
    return int(block_rows or 1), size


def _even_blocks(q_len, most):
    """Queries per block when a block takes at most `most`: as few
    blocks as that allows, their queries as even as multiples of 8 let
    them be, so that the last block pads few queries (`queries_in`).
    Blocks of `most` queries padded 1,025 queries to 1,536 (LRA's Image
    rows: 1,024 pixels and a class token), 640 to 1,024; JAX on 2 cores
    ran a forward + backward of the chunked attention 1.38x / 1.26x /
    1.29x as fast at 1,025 / 640 / 768 queries in the even blocks (batch
    16, 4 heads of 32; docs/results/attention_limits_epyc/). `q_len` may
    be a tensor (a length known at run time alone)."""
    count = (q_len + most - 1) // most
    size = (q_len + count - 1) // count
    rounded = (size + 7) // 8 * 8
    if isinstance(size, int):
        return size if count == 1 else min(most, rounded)
    return ops.where(count > 1, ops.minimum(most, rounded), size)


def _python_loop():
    """Whether the chunked path's loop is Python's, each operation run on
    its own (PyTorch's `fori_loop`)."""
    return keras.backend.backend() == "torch"


def _groups(block_rows):
    """Leading (groups, rows) of a reshape into groups of `block_rows`
    (batch, head) rows; one group of every row when it is None."""
    return (1, -1) if block_rows is None else (-1, block_rows)


def _dims(x):
    """`x`'s shape, a tensor for each dimension unknown while tracing."""
    return tuple(ops.shape(x)[i] if d is None else d
                 for i, d in enumerate(x.shape))


def _grouped(x, block_rows):
    """(batch, heads, ...) -> (groups, block_rows, ...)."""
    return ops.reshape(x, _groups(block_rows) + _dims(x)[2:])


def _to_blocks(x, block_rows, num_blocks, size):
    """(batch, heads, num_blocks * size, D) -> (groups * num_blocks,
    block_rows, size, D): block g * num_blocks + j holds queries
    j * size .. of the g-th group of rows."""
    depth = x.shape[-1]
    x = ops.reshape(x, _groups(block_rows) + (num_blocks, size, depth))
    x = ops.transpose(x, (0, 2, 1, 3, 4))
    if block_rows is None:
        return ops.reshape(x, (num_blocks, -1, size, depth))
    return ops.reshape(x, (-1, block_rows, size, depth))


def _from_blocks(x, heads, num_blocks):
    """Inverse of `_to_blocks`."""
    rows = x.shape[1]
    size, depth = _dims(x)[2:]
    x = ops.reshape(x, (_groups(rows)[0], num_blocks, rows or -1, size,
                        depth))
    x = ops.transpose(x, (0, 2, 1, 3, 4))
    return ops.reshape(x, (-1, heads, num_blocks * size, depth))


def _at_least_float32(x):
    """`x` in float32 when it is in a half precision; else as it is."""
    return ops.cast(x, keras.backend.result_type(x.dtype, "float32"))


def _make_chunked(num_blocks, size, causal, length, dropout_rate=0.0,
                  rows_masked=False, keyed=True):
    """Builds the custom-gradient attention for a fixed block layout, and
    its two passes.

    Keys and values are in (groups, rows, Lk, D) and (groups, rows, Lk,
    Dv) layout (`_grouped`), the query already scaled, padded to
    `num_blocks * size` and cut by `_to_blocks`; `bias` is an additive
    (groups, rows, 1, Lk) key bias, read only when `keyed` (any tensor
    otherwise: no key is masked). `attend` may
    take, last, an additive bias of the scores
    (num_blocks, size, Lk) that every row shares, block j
    holding queries j * size .., and returns its gradient, summed over the
    rows in the backward loop. With `rows_masked`, `attend` takes after
    `bias` the blocks' real queries, (steps, rows, size, 1) of 1 and 0: a
    padded query's scores are all 0 (`uniform_masked_rows`). With a
    `dropout_rate`, it takes after them a seed (two integers): block i's
    weights are dropped by `hashed_keep(seed, i, ...)`, in the forward
    pass and again in the backward, where the block's weights are
    recomputed (FlashAttention's dropout, Dao et al. 2022, Appendix B,
    Algorithms 2 and 4): the dropped weights P' weigh the values, and since
    sum_j P_ij dP_ij = sum_j P'_ij dP'_ij, the softmax's backward keeps
    its delta <dO_i, O_i>. Both passes walk the blocks with
    `keras.ops.fori_loop` (`lax.fori_loop`, `tf.while_loop`, a Python loop
    under PyTorch), so one block's scores exist at a time: an unrolled
    loop lets XLA schedule every block at once (measured: 23 GB for two
    layers at L = 16K under JAX).

    Every product is one whose contraction runs over its left operand's
    last axis or its right operand's second-last: dK and dV accumulate
    transposed, (rows, D, Lk) = (rows, D, C) @ (rows, C, Lk). XLA's CPU
    backend runs a product that contracts the scores' query axis in place,
    P^T @ dO, 5x slower (188 against 36 ms a layer at L = 1024, batch 32,
    4 heads of 16, in blocks of 2 x 512).

    Returns `(attend, forward, backward)`: `forward(q_blocks, k, v, bias,
    *extra)` is `attend`'s forward loop, giving the output blocks and the
    queries' log-sum-exps (steps, rows, size, 1); `backward(do_blocks,
    delta_blocks, lse_blocks, q_blocks, k, v, bias, *extra)` its backward
    loop, giving a gradient for each of `attend`'s inputs from the
    output's (`do_blocks`) and each query's <dO_i, O_i> (`delta_blocks`,
    float32 at least, laid out as the log-sum-exps). `_tensorflow_passes`
    runs the two on their own.
    """

    def scores(q_b, k_t, bias, start, shared, real):
        # In float32 at least from here: the softmax's statistics.
        s = _at_least_float32(ops.matmul(q_b, k_t))  # (rows, C, Lk)
        block = _block_bias(None if bias is None else ops.cast(bias, s.dtype),
                            causal, start, size, length, s.dtype)
        if block is not None:  # the keys' mask, the causal one
            s = s + block
        if shared is not None:
            s = s + ops.cast(shared, s.dtype)  # (C, Lk), every row
        if real is not None:  # a padded query's scores: 0
            s = s * ops.cast(real, s.dtype)
        return s

    def put(blocks, i, block):
        start = (i,) + (0,) * (len(blocks.shape) - 1)
        return ops.slice_update(blocks, start, block[None])

    def add(blocks, g, block):
        return put(blocks, g, blocks[g] + block)

    def unpack(extra):
        """(real query blocks or None, seed or None, shared bias blocks)."""
        real_blocks = extra[0] if rows_masked else None
        seed = extra[int(rows_masked)] if dropout_rate else None
        return real_blocks, seed, extra[int(rows_masked) + bool(dropout_rate):]

    def block_scores(i, q_b, k_t, bias, real_blocks, shared_blocks):
        return scores(q_b, k_t[i // num_blocks],
                      bias[i // num_blocks] if keyed else None,
                      (i % num_blocks) * size,
                      shared_blocks[0][i % num_blocks] if shared_blocks
                      else None,
                      None if real_blocks is None else real_blocks[i])

    def kept(seed, i, p):
        """The dropout's 0 or 1 / (1 - rate) of block i's weights."""
        if not dropout_rate:
            return None
        return hashed_keep(seed, i, ops.shape(p), dropout_rate)

    def forward(q_blocks, k, v, bias, *extra):
        real_blocks, seed, shared_blocks = unpack(extra)
        k_t = ops.transpose(k, (0, 1, 3, 2))  # (groups, rows, D, Lk)
        dtype = q_blocks.dtype

        def forward_block(i, carry):
            out_blocks, lse_blocks = carry
            g = i // num_blocks
            s = block_scores(i, q_blocks[i], k_t, bias, real_blocks,
                             shared_blocks)
            m = ops.max(s, axis=-1, keepdims=True)  # (rows, C, 1)
            p = ops.exp(s - m)
            denom = ops.sum(p, axis=-1, keepdims=True)
            keep = kept(seed, i, p)
            dropped = p if keep is None else p * keep
            out = _at_least_float32(ops.matmul(ops.cast(dropped, dtype),
                                               v[g]))
            return (put(out_blocks, i, ops.cast(out / denom, dtype)),
                    put(lse_blocks, i, m + ops.log(denom)))

        steps = ops.shape(q_blocks)[0]  # groups x num_blocks
        out0 = ops.zeros_like(q_blocks)
        if v.shape[-1] != q_blocks.shape[-1]:  # values of their own width
            out0 = ops.zeros(ops.shape(q_blocks)[:-1] + (v.shape[-1],),
                             dtype)
        return ops.fori_loop(
            0, steps, forward_block,
            (out0, _at_least_float32(ops.zeros_like(q_blocks[..., :1]))),
        )

    def backward(do_blocks, delta_blocks, lse_blocks, q_blocks, k, v, bias,
                 *extra):
        real_blocks, seed, shared_blocks = unpack(extra)
        dtype = q_blocks.dtype
        # The transposes and the zeros the loop starts from are made
        # after the upstream gradient exists (see `barrier`); the
        # zeros are 0 x one of its elements, which XLA cannot fold
        # (were that element NaN or inf, the gradients would be NaN,
        # as that element's block's already are).
        do_blocks, k_b, v_b = barrier(do_blocks, k, v)
        k_t, v_t = (ops.transpose(x, (0, 1, 3, 2))
                    for x in (k_b, v_b))  # (groups, rows, D, Lk)
        zero = do_blocks[0, 0, 0, 0] * 0
        dq0 = ops.zeros_like(q_blocks) + zero
        # dK and dV accumulate over the query blocks in float32 at
        # least, as the softmax's statistics are kept.
        dk0, dv0 = (_at_least_float32(ops.zeros_like(x) + zero)
                    for x in (k_t, v_t))
        # The shared bias's gradient sums over the rows and groups
        # (float32 at least, as dK and dV).
        dshared0 = tuple(_at_least_float32(ops.zeros_like(x) + zero)
                         for x in shared_blocks)

        def backward_block(i, carry):
            dq_blocks, dk_t, dv_t, *dshared = carry
            g = i // num_blocks
            q_b, do_b = q_blocks[i], do_blocks[i]
            s = block_scores(i, q_b, k_t, bias, real_blocks, shared_blocks)
            p = ops.exp(s - lse_blocks[i])  # (rows, C, Lk)
            keep = kept(seed, i, p)
            dropped = p if keep is None else p * keep
            dv_t = add(dv_t, g, _at_least_float32(ops.matmul(
                ops.transpose(do_b, (0, 2, 1)), ops.cast(dropped, dtype))))
            dp = _at_least_float32(ops.matmul(do_b, v_t[g]))
            if keep is not None:  # dL/dP from dL/dP' of P' = P keep
                dp = dp * keep
            ds = p * (dp - delta_blocks[i])  # dL/d(scores), float32
            if real_blocks is not None:  # a padded query's are 0
                ds = ds * ops.cast(real_blocks[i], ds.dtype)
            dshared = [add(d, i % num_blocks, ops.sum(ds, axis=0))
                       for d in dshared]
            ds = ops.cast(ds, dtype)
            dk_t = add(dk_t, g, _at_least_float32(ops.matmul(
                ops.transpose(q_b, (0, 2, 1)), ds)))
            return (put(dq_blocks, i, ops.matmul(ds, k[g])), dk_t, dv_t,
                    *dshared)

        steps = ops.shape(q_blocks)[0]
        dq_blocks, dk_t, dv_t, *dshared = ops.fori_loop(
            0, steps, backward_block, (dq0, dk0, dv0, *dshared0))
        return (dq_blocks,
                ops.cast(ops.transpose(dk_t, (0, 1, 3, 2)), dtype),
                ops.cast(ops.transpose(dv_t, (0, 1, 3, 2)), dtype),
                ops.zeros_like(bias),
                *((ops.zeros_like(real_blocks),) if rows_masked else ()),
                *((None,) if dropout_rate else ()),
                *(ops.cast(d, x.dtype)
                  for d, x in zip(dshared, shared_blocks)))

    @ops.custom_gradient
    def attend(q_blocks, k, v, bias, *extra):
        out_blocks, lse_blocks = forward(q_blocks, k, v, bias, *extra)

        def grad(*args, upstream=None):
            do_blocks = args[0] if upstream is None else upstream
            # delta_i = sum_j P_ij dP_ij = <dO_i, O_i>
            delta_blocks = inner_products(_at_least_float32(do_blocks),
                                          _at_least_float32(out_blocks))
            return backward(do_blocks, delta_blocks, lse_blocks, q_blocks,
                            k, v, bias, *extra)

        return out_blocks, grad

    return attend, forward, backward


class _Blocks:
    """One call's block layout of the chunked path (`_block_layout`), its
    passes (`_make_chunked`), and the moves of tensors into and out of
    it."""

    def __init__(self, query, key, value, causal, block_size, block_rows,
                 dropout_rate, dropout_seed, rows_masked, keyed=True):
        batch, q_len, heads, depth = query.shape
        k_len = key.shape[1]
        run_time = q_len is None or k_len is None
        if run_time and keras.backend.backend() != "tensorflow":
            raise ValueError(
                "chunked_attention needs static sequence lengths outside "
                f"TensorFlow. Received: query.shape={query.shape}, "
                f"key.shape={key.shape}"
            )
        if causal and None not in (q_len, k_len) and q_len != k_len:
            raise ValueError(
                "causal attention needs equal query and key lengths. "
                f"Received: query.shape={query.shape}, key.shape={key.shape}"
            )
        if not 0.0 <= dropout_rate < 1.0 or (dropout_rate
                                             and dropout_seed is None):
            raise ValueError(
                "`dropout_rate` must be in [0, 1), and a rate above 0 needs "
                f"a `dropout_seed`. Received: dropout_rate={dropout_rate}, "
                f"dropout_seed={dropout_seed}")
        # A length unknown while tracing is a tensor from here on, and so
        # are the queries per block and the blocks' count.
        q_len = ops.shape(query)[1] if q_len is None else q_len
        k_len = ops.shape(key)[1] if k_len is None else k_len
        self.heads, self.q_len, self.k_len = heads, q_len, k_len
        self.scale = 1.0 / math.sqrt(depth)
        self.dropout_rate = float(dropout_rate)
        rows = None if batch is None else batch * heads
        if run_time:
            self.block_rows, self.size = _run_time_layout(
                heads, q_len, block_size, block_rows)
        else:
            self.block_rows, self.size = _block_layout(
                rows, heads, q_len, k_len, block_size, block_rows,
                value.shape[-1] > depth)
        self.num_blocks = (q_len + self.size - 1) // self.size
        self.attend, self.forward, self.backward = _make_chunked(
            self.num_blocks, self.size, causal, k_len, self.dropout_rate,
            rows_masked, keyed)

    def queries_in(self, x):
        """(batch, Lq, heads, D) -> blocks (steps, rows, size, D). Zero
        query rows pad the last block; their outputs are dropped and
        their zero upstream gradient adds nothing to dK or dV."""
        x = ops.transpose(x, (0, 2, 1, 3))  # (B, H, Lq, D)
        padding = self.num_blocks * self.size - self.q_len
        if not isinstance(padding, int) or padding:
            x = ops.pad(x, ((0, 0), (0, 0), (0, padding), (0, 0)))
        return _to_blocks(x, self.block_rows, self.num_blocks, self.size)

    def queries_out(self, blocks):
        """Inverse of `queries_in`."""
        x = _from_blocks(blocks, self.heads, self.num_blocks)
        return ops.transpose(x[:, :, :self.q_len], (0, 2, 1, 3))

    def keys_in(self, x):
        """(batch, Lk, heads, D) -> (groups, rows, Lk, D)."""
        return _grouped(ops.transpose(x, (0, 2, 1, 3)), self.block_rows)

    def keys_out(self, x):
        """Inverse of `keys_in`."""
        x = ops.reshape(x, (-1, self.heads) + _dims(x)[2:])
        return ops.transpose(x, (0, 2, 1, 3))

    def inputs(self, query, key, value, padding_mask=None, score_bias=None,
               query_mask=None, dropout_seed=None):
        """`attend`'s inputs: (q_blocks, k, v, bias, *extra)."""
        q_blocks = self.queries_in(query) * self.scale
        k, v = self.keys_in(key), self.keys_in(value)
        bias = _key_bias(padding_mask, query.dtype)  # (B, 1, 1, Lk)
        if bias is None:  # not read (`_make_chunked`'s `keyed`): zeros
            # of every key were an input XLA cannot drop from the loop
            # when the length is known at run time alone, one more pass
            # over each block's scores
            bias = ops.zeros((1, 1, 1, 1), query.dtype)
        else:  # (B, 1, 1, Lk) -> (B, H, 1, Lk) -> (groups, rows, 1, Lk)
            bias = _grouped(
                bias + ops.zeros((1, self.heads, 1, 1), bias.dtype),
                self.block_rows)
        extra = []
        if query_mask is not None:  # (B, Lq) -> (steps, rows, size, 1)
            real = ops.cast(query_mask, query.dtype)[:, :, None, None]
            extra.append(self.queries_in(ops.repeat(real, self.heads,
                                                    axis=2)))
        if self.dropout_rate:
            extra.append(dropout_seed)
        if score_bias is not None:  # (Lq, Lk) -> (num_blocks, size, Lk)
            score_bias = ops.pad(
                score_bias,
                ((0, self.num_blocks * self.size - self.q_len), (0, 0)))
            extra.append(ops.reshape(score_bias,
                                     (self.num_blocks, self.size,
                                      self.k_len)))
        return (q_blocks, k, v, bias, *extra)


def chunked_attention(
    query, key, value, padding_mask=None, causal=False, block_size=None,
    block_rows=None, score_bias=None, query_mask=None, dropout_rate=0.0,
    dropout_seed=None,
):
    """Exact softmax attention in blocks with a recomputing backward.

    Same contract as `reference_attention` (its `query_mask` too), and
    three more: `value` may have a width of its own, (batch, Lk, heads,
    Dv); `score_bias`, a (Lq, Lk) tensor, is added to every row's scaled
    scores before the softmax, a trainable bias the gradient reaches
    (MEGA's relative positions, `MovingAverageGatedAttention`); and
    instead of a `weights_dropout` callable, a `dropout_rate` in [0, 1)
    and a `dropout_seed` (two integers, a `SeedGenerator`'s draw): each
    block's weights are dropped by `hashed_keep(dropout_seed, block,
    ...)`, the same mask recomputed in the backward pass, so that no
    (batch, heads, Lq, Lk) tensor is formed. A block is `block_rows` of the
    batch x heads rows (a divisor of it) by `block_size` queries, against
    every key; by default under XLA on a CPU 512 queries of as many rows
    as keep its scores near 8 MiB, elsewhere every row and as many queries
    as keep them near 16 MiB, at least 64 (see `_CPU_BLOCK_ELEMENTS`).
    Under TensorFlow the lengths may be unknown while tracing (an export's
    signature); the blocks are then laid out at run time
    (`_run_time_layout`: one row of up to 512 queries by default), and
    `block_rows` must divide the heads.

    Under a half precision the products take the inputs' dtype, and the
    softmax (the scores' maxima, exponentials, sums and log-sum-exps)
    and the dK and dV sums over the query blocks are float32, as in
    flash attention: at L = 512, bf16, the gradients' error against
    float64 fell from 4.0e-2 of their largest entry to 0.7e-2 under JAX
    and 1.7e-2 under TensorFlow and PyTorch, whose bf16 products round
    the scores (`test_chunked_attention_in_bfloat16_keeps_its_softmax_in
    _float32`).
    """
    blocks = _Blocks(query, key, value, causal, block_size, block_rows,
                     dropout_rate, dropout_seed, query_mask is not None,
                     padding_mask is not None)
    out = blocks.attend(*blocks.inputs(query, key, value, padding_mask,
                                       score_bias, query_mask, dropout_seed))
    return blocks.queries_out(out)  # (B, Lq, H, Dv)


# `chunked_attention`'s optional tensors, in the order
# `_tensorflow_passes` takes them.
_OPTIONAL = ("padding_mask", "score_bias", "query_mask", "dropout_seed")


@functools.cache
def _tensorflow_passes(causal, block_size, block_rows, dropout_rate, given):
    """The forward and the backward pass of `chunked_attention`, each a
    TensorFlow function XLA compiles, made once per configuration (each
    traces once per input signature). `given` names the optional tensors
    (of `_OPTIONAL`) both take after the query, key and value:

        forward(query, key, value, *optional) -> (output, lse_blocks)
        backward(query, key, value, *optional, output, lse_blocks,
                 d_output) -> the query's, key's and value's gradients,
                 and the score bias's where it is given.

    The backward recomputes the blocks' inputs from the query, key and
    value (transposes and a scale), and takes <dO_i, O_i> from the output
    in its own layout, which the next layer keeps anyway.
    """
    import tensorflow as tf

    def blocks_of(query, key, value, optional):
        named = dict(zip(given, optional))
        blocks = _Blocks(query, key, value, causal, block_size, block_rows,
                         dropout_rate, named.get("dropout_seed"),
                         "query_mask" in named, "padding_mask" in named)
        return blocks, blocks.inputs(query, key, value, **named)

    def forward(query, key, value, *optional):
        blocks, inputs = blocks_of(query, key, value, optional)
        out_blocks, lse_blocks = blocks.forward(*inputs)
        return blocks.queries_out(out_blocks), lse_blocks

    def backward(query, key, value, *rest):
        *optional, out, lse_blocks, d_out = rest
        blocks, inputs = blocks_of(query, key, value, optional)
        delta = inner_products(_at_least_float32(d_out),
                               _at_least_float32(out))  # (B, Lq, H, 1)
        grads = blocks.backward(blocks.queries_in(d_out),
                                blocks.queries_in(delta), lse_blocks,
                                *inputs)
        d = [blocks.queries_out(grads[0]) * blocks.scale,
             blocks.keys_out(grads[1]), blocks.keys_out(grads[2])]
        if "score_bias" in given:  # (num_blocks, size, Lk) -> (Lq, Lk)
            d.append(ops.reshape(grads[-1], (-1, blocks.k_len))[
                :blocks.q_len])
        return tuple(d)

    return (tf.function(forward, jit_compile=True),
            tf.function(backward, jit_compile=True))


def _dense_passes(causal, dropout_rate, given):
    """`chunked_attention`'s function as one block of every query
    against every key, in TensorFlow's graph: the forward pass keeps the
    weights, as autodiff of plain attention does, and the backward pass
    reads them. Inputs and outputs as `_tensorflow_passes`', with the
    weights, (batch, heads, Lq, Lk) in float32 at least, in place of the
    log-sum-exps:

        forward(query, key, value, *optional) -> (output, weights)
        backward(query, key, value, *optional, output, weights,
                 d_output) -> the query's, key's and value's gradients,
                 and the score bias's where it is given.

    A dropout's mask is `hashed_keep`'s for one block of the weights'
    shape: under another block layout other weights drop, with the same
    distribution.
    """
    import tensorflow as tf

    def heads_first(x):  # (B, L, H, D) <-> (B, H, L, D)
        return tf.transpose(x, (0, 2, 1, 3))

    def kept(named, p):
        """The dropout's 0 or 1 / (1 - rate) of the weights, or None."""
        if not dropout_rate:
            return None
        return tf.cast(hashed_keep(named["dropout_seed"], 0, ops.shape(p),
                                   dropout_rate), p.dtype)

    def forward(query, key, value, *optional):
        named = dict(zip(given, optional))
        q = heads_first(query) * (1.0 / math.sqrt(query.shape[-1]))
        s = _at_least_float32(tf.matmul(q, tf.transpose(key, (0, 2, 3, 1))))
        bias = _block_bias(_key_bias(named.get("padding_mask"), s.dtype),
                           causal, 0, tf.shape(query)[1], tf.shape(key)[1],
                           s.dtype)
        if bias is not None:  # the keys' mask, the causal one
            s = s + bias
        if "score_bias" in named:
            s = s + tf.cast(named["score_bias"], s.dtype)
        p = tf.nn.softmax(uniform_masked_rows(s, named.get("query_mask")))
        keep = kept(named, p)
        dropped = p if keep is None else p * keep
        out = tf.matmul(tf.cast(dropped, query.dtype), heads_first(value))
        return heads_first(out), p

    def backward(query, key, value, *rest):
        *optional, _, p, d_out = rest
        named = dict(zip(given, optional))
        dtype = query.dtype
        scale = 1.0 / math.sqrt(query.shape[-1])
        do = heads_first(d_out)
        keep = kept(named, p)
        dropped = tf.cast(p if keep is None else p * keep, dtype)
        dp = _at_least_float32(tf.matmul(do, heads_first(value),
                                         transpose_b=True))
        if keep is not None:  # dL/dP from dL/dP' of P' = P keep
            dp = dp * keep
        ds = p * (dp - tf.reduce_sum(p * dp, axis=-1, keepdims=True))
        if "query_mask" in named:  # a padded query's are 0
            ds = ds * tf.cast(named["query_mask"], ds.dtype)[:, None, :,
                                                               None]
        d_s = tf.cast(ds, dtype)
        d = [heads_first(tf.matmul(d_s, heads_first(key)) * scale),
             heads_first(tf.matmul(d_s, heads_first(query) * scale,
                                   transpose_a=True)),
             heads_first(tf.matmul(dropped, do, transpose_a=True))]
        if "score_bias" in named:  # every row's
            d.append(tf.cast(tf.reduce_sum(ds, axis=(0, 1)),
                             named["score_bias"].dtype))
        return tuple(d)

    return forward, backward


def _tensorflow_chunked_attention(
    query, key, value, padding_mask=None, causal=False, block_size=None,
    block_rows=None, score_bias=None, query_mask=None, dropout_rate=0.0,
    dropout_seed=None, dense_below=None,
):
    """`chunked_attention` under TensorFlow on a CPU outside XLA: its
    forward and backward loops each compiled by XLA on its own
    (`_tensorflow_passes`, as Keras compiles the convolutions
    TensorFlow's CPU kernels get wrong), joined by a `tf.custom_gradient`
    in TensorFlow's graph. TensorFlow's graph runs the loops op by op and
    copies the blocks it updates: at L = 4096, batch 16, 4 heads of 32, a
    forward + backward took 3.9 s in the graph and 2.2 s compiled (a
    `tf.function` of the attention alone, 2026-12-04).

    The gradient is outside the compiled code so that only what the
    backward reads is kept, the query, key and value as they come, the
    output and its log-sum-exps. One compiled function holding
    `chunked_attention`'s `custom_gradient` kept twice as much: its
    forward returned, for TensorFlow's gradient of the call, the blocks
    on both sides of the `IdentityN` that `custom_gradient` routes them
    through, each a buffer of its own inside XLA, eight tensors of the
    query's size a layer where the backward reads four
    (docs/results/tensorflow_attention_memory_epyc/).

    `dense_below`: None, or a number of keys below which both passes are
    `_dense_passes`' instead, one block of every query in TensorFlow's
    graph (for a length known only at run time: `tf.cond` on it in each
    pass, where plain attention in a `tf.cond` under the gradient tape
    failed with the custom gradient in the other branch, and with the
    chunked path in a `tf.function` there TensorFlow warned that type
    inference had failed). At short lengths they are close to plain
    attention, where the compiled loops are not: one forward + backward
    (4 heads of 16, medians of 11 rounds in one process,
    docs/results/tensorflow_run_time_lengths_epyc/) took 6.9 ms plain
    (the length known while tracing), 8.5 ms dense and 12.4 ms in the
    compiled loops at L = 128, batch 32; 26-31, 30-35 and 35-42 ms at
    256; at 512, batch 16, 48, 55 and 44 ms.
    """
    import tensorflow as tf

    named = dict(padding_mask=padding_mask, score_bias=score_bias,
                 query_mask=query_mask, dropout_seed=dropout_seed)
    given = tuple(name for name in _OPTIONAL if named[name] is not None)
    forward, backward = _tensorflow_passes(
        bool(causal), block_size, block_rows, float(dropout_rate), given)
    if dense_below is not None:
        dense = ops.shape(key)[1] < dense_below
        dense_forward, dense_backward = _dense_passes(
            bool(causal), float(dropout_rate), given)
        blocked_forward, blocked_backward = forward, backward

        def forward(*args):
            return tf.cond(dense, lambda: dense_forward(*args),
                           lambda: blocked_forward(*args))

        def backward(*args):
            return tf.cond(dense, lambda: dense_backward(*args),
                           lambda: blocked_backward(*args))

    @tf.custom_gradient
    def attend(query, key, value, *optional):
        # Through `stop_gradient` the tape does not record `forward`'s
        # call; recorded, TensorFlow would build the call's own gradient
        # (which fails: the loop's XlaDynamicUpdateSlice has none) and
        # make the call return what that gradient reads.
        out, saved = forward(*(tf.stop_gradient(x) for x in (
            query, key, value, *optional)))

        def grad(d_out):
            grads = backward(query, key, value, *optional, out, saved,
                             d_out)
            d_bias = iter(grads[3:])
            return [*grads[:3], *(next(d_bias) if name == "score_bias"
                                  else None for name in given)]

        return out, grad

    return attend(*(tf.convert_to_tensor(x) for x in (
        query, key, value, *(named[name] for name in given))))


def _chunked_function():
    """`chunked_attention`, or under TensorFlow on a CPU outside XLA its
    two passes compiled by XLA (`_tensorflow_chunked_attention`)."""
    if (keras.backend.backend() != "tensorflow" or xla_compiled()
            or on_accelerator()):
        return chunked_attention
    return _tensorflow_chunked_attention


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
    block_rows=None,
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
            (`chunked_attention`; under JAX and PyTorch, whose lengths
            are known while tracing, `"fused"` if one is not) or
            `"reference"`.
        block_size: queries per block of the chunked path.
        weights_dropout: None, a `WeightsDropout`, or another callable
            applied to the attention weights (`drop_weights`). A
            `WeightsDropout` goes where `implementation` says, but to the
            chunked path for `"fused"` (no fused call takes it; `"auto"`
            where it would be fused, the reference path where a length
            is unknown while tracing outside TensorFlow); any other
            callable takes the
            reference path, which alone forms the weights (memory
            quadratic in L).
        query_mask: optional (batch, Lq) boolean tensor, True at real
            queries: a padded query attends uniformly to every key, as
            under LRA's flax pair mask (`uniform_masked_rows`), future
            keys included when `causal` (flax's masks combine so; real
            queries never see a padded one).
        block_rows: (batch, head) rows per block of the chunked path.

    Returns:
        Tensor (batch, Lq, heads, head_dim).
    """
    scores = None
    if None not in (query.shape[:3] + key.shape[1:2]):
        scores = (query.shape[0] * query.shape[2] * query.shape[1]
                  * key.shape[1])
    blockwise = isinstance(weights_dropout, WeightsDropout)
    impl = ("reference" if weights_dropout is not None and not blockwise
            else resolve_implementation(
                implementation, key.shape[1], scores=scores,
                flash=flash_eligible(query, padding_mask)))
    if blockwise and impl == "fused":
        impl = "chunked"
    run_time = None in (query.shape[1], key.shape[1])
    if (impl == "chunked" and run_time
            and keras.backend.backend() != "tensorflow"):
        # Lengths unknown while tracing: blocks are laid out at run time
        # under TensorFlow alone (`_run_time_layout`).
        impl = "fused" if weights_dropout is None else "reference"
    if impl == "reference":
        return reference_attention(query, key, value, padding_mask, causal,
                                   weights_dropout, query_mask)
    if impl == "chunked":
        options = {}
        if blockwise:  # the padded queries' uniform weights drop in the
            # blocks too: `query_mask` goes in, not to the outputs below
            options = dict(query_mask=query_mask,
                           dropout_rate=weights_dropout.rate,
                           dropout_seed=weights_dropout.draw_seed())
            query_mask = None
        chunked = _chunked_function()
        if (chunked is _tensorflow_chunked_attention and run_time
                and implementation == "auto"):
            # A length known at run time alone: there, as for a length
            # known while tracing, plain attention's arithmetic (one
            # dense block) below TENSORFLOW_CHUNKED_FROM keys, the
            # compiled loops from it on.
            options.update(dense_below=TENSORFLOW_CHUNKED_FROM)
        out = chunked(
            query, key, value, padding_mask, causal, block_size, block_rows,
            **options)
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
    both 256 and 512). A length unknown while tracing (TensorFlow: an
    export's signature, `fit`'s relaxed shapes) takes the batch of
    windows too, as many as the length turns out to hold, the last
    padded; it was one mask over all (L, L) pairs until 2026-12-07,
    memory quadratic in L.

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
        length = ops.shape(query)[1]
        (query, key, value), real, _ = pad_to_blocks(
            (query, key, value), padding_mask, window)
        return _windows_batched(
            query, key, value, window, look_backward, look_forward, real,
            implementation, block_size, weights_dropout)[:, :length]
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
    length, heads, dim = _dims(query)[1:]
    count = length // window
    span = look_backward + 1 + look_forward

    def around(x):
        # (batch, L, ...) -> (batch * windows, span * window, ...): window
        # w's neighbours w - look_backward .. w + look_forward, zeros
        # where there is none.
        tail = _dims(x)[2:]
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
