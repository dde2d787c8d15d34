"""The only backend-specific code in lra_keras, with keras.ops fallbacks.

- Keras lists devices through `keras.distribution.list_devices()`, which
  the PyTorch backend does not implement; there we ask torch directly.
- TensorFlow differentiates a gather (an `Embedding`) into a
  `tf.IndexedSlices`, one slice per occurrence of a row; `dense_gradient`
  sums them into the dense gradient JAX and PyTorch compute.
- Keras's PyTorch dropout draws from torch's global generator when its
  layer was given no seed (keras/src/backend/torch/random.py, "Fast
  path, unseeded"), not from the layer's seed generator, and so does every
  new `DataLoader` iterator (a base seed) that Keras makes: a resumed run
  needs that generator's state (`global_rng_state`), restored where the
  uninterrupted run stood, and a start that does not depend on how many
  iterators were made before (`seed_global_rng`).
- Keras's TensorFlow adapter fixes the tensor spec of a `PyDataset` from
  its first two batches; `fit_input` gives it one that fits every batch
  when those two happen to have one length and later batches another.
- Keras's `TensorBoard` callback writes through `tf.summary` under every
  backend; under JAX and PyTorch, `tensorboard_callback` keeps TensorFlow
  off the GPUs first, whose memory it would otherwise map when it starts.
- XLA's CPU code sums a float32 tensor over a short leading axis into
  many outputs 20-60x slower than the same sum as a product with ones
  (a (16, 1024, 1024) tensor into (1024, 1024): 91 ms against 1.5 ms, JAX
  on 2 cores), and that sum is the gradient of every weight broadcast
  over the batch: `add_shared` adds such a weight so that its gradient is
  the product, and `sum_rows` writes such a sum in a gradient that is
  written out (`fft_conv`'s kernel gradient) as the product.
- XLA's CPU code (YNNPACK's reduction fusions, on by default in jax
  0.10) runs a sum into which a product is fused 30-50x slower over a
  tensor with an axis of one row, e.g. a one-row batch's (1, L, channels)
  (36.7 against 0.39 ms at L = 16,384, width 128, as (L, channels)
  rows): `scale_channels` multiplies by a (channels,) weight on the
  rows, so that the weight's gradient is their sum, and `broadcast_to`'s
  gradient sums each broadcast axis as a product with ones.
- Keras's `rfft` returns a spectrum as its real and imaginary parts
  (Keras has no complex dtype), and its `irfft` joins them again: each
  complex product is then four real products and two sums, each its own
  pass over memory under TensorFlow and PyTorch, and each join a copy.
  `rfft`, `irfft` and `conjugate` keep a spectrum as the backend's own
  complex tensor, so that `fft_conv` and `grouped_fft_conv` multiply
  spectra in one pass.
- The blockwise attention's dropout masks (`hashed_keep`) are the same
  bits under every backend: uint32 words under JAX and TensorFlow, int32
  under PyTorch, which has no uint32 arithmetic, and there made in place,
  a slice at a time, since PyTorch runs the hash's integer operations one
  by one (8x faster than the same operations through `keras.ops`).
- JAX compiles a training step per batch shape in every new process (2-3 s
  each on a CPU for the quick S4D); `use_compilation_cache` keeps the
  compiled steps on disk for the next run and the next seed.
"""

import functools
import math

import keras


def list_devices():
    """Devices of the current backend, e.g. `["cpu:0"]` or `["gpu:0"]`."""
    if keras.backend.backend() == "torch":
        import torch

        if torch.cuda.is_available():
            return [f"gpu:{i}" for i in range(torch.cuda.device_count())]
        return ["cpu:0"]
    return list(keras.distribution.list_devices())


def on_accelerator():
    """Whether the current backend computes on something other than a CPU."""
    return any(not d.lower().startswith("cpu") for d in list_devices())


def xla_compiled():
    """Whether the code being traced now is compiled by XLA as a whole:
    always under JAX; under TensorFlow inside a `jit_compile=True`
    function (Keras's `jit_compile="auto"` turns XLA off on a machine
    with only CPUs); never under PyTorch. The TensorFlow check reads
    `control_flow_util.GraphOrParentsInXlaContext`, TensorFlow's own
    test of it (in `tensorflow.python`, outside its public API)."""
    backend = keras.backend.backend()
    if backend != "tensorflow":
        return backend == "jax"
    from tensorflow.python.framework import ops as tf_ops
    from tensorflow.python.ops import control_flow_util

    return bool(control_flow_util.GraphOrParentsInXlaContext(
        tf_ops.get_default_graph()))


def add_shared(x, shared):
    """`x + shared`, for `shared` the same for every row of `x`.

    `x` (n, ...) and `shared` (...) or (1, ...), e.g. a relative-position
    bias or learned attention logits added to the scores of every row.
    Under JAX the sum is written as `x + ones((n, 1)) @ shared.reshape(1,
    -1)`, reshaped: the gradient of `shared` is then a product with ones
    instead of XLA's slow sum over the leading axis (the module's
    docstring); a training step of 4 MEGA blocks at L = 1024, batch 16,
    went from 0.76x to 0.84-0.87x of fairseq MEGA's tokens/s on 2 CPU
    cores (`benchmarks/reference_speed.py --models mega`), with the same
    gradients to the last bit in a test of the attention alone.
    TensorFlow and PyTorch add it as it is.
    """
    from keras import ops

    shared = ops.cast(shared, x.dtype)
    if keras.backend.backend() != "jax":
        return x + shared
    flat = ops.reshape(x, (ops.shape(x)[0], -1))
    copies = ops.matmul(ops.ones_like(flat[:, :1]),
                        ops.reshape(shared, (1, -1)))
    return x + ops.reshape(copies, ops.shape(x))


def sum_rows(x):
    """`sum(x, axis=0)`; under JAX as `ones((1, n)) @ x.reshape(n, -1)`,
    reshaped, which XLA's CPU code runs many times faster than its sum
    over a short leading axis (the module's docstring). E.g. `fft_conv`'s
    kernel gradient, (16, 128, 1025) into (128, 1025) twice a block: 11.4
    ms a sum as XLA's reduction, 91 of a 4-block DLR step's 428 ms (L =
    1024, batch 16, 2 cores). TensorFlow and PyTorch sum as they are.
    """
    from keras import ops

    if keras.backend.backend() != "jax":
        return ops.sum(x, axis=0)
    rows = ops.shape(x)[0]
    flat = ops.reshape(x, (rows, -1))
    total = ops.matmul(ops.ones((1, rows), x.dtype), flat)
    return ops.reshape(total, ops.shape(x)[1:])


def broadcast_to(x, shape):
    """`x` broadcast to `shape` (numpy's rules: missing leading axes
    added); under JAX its gradient sums each broadcast axis as a product
    with ones.

    XLA's CPU code runs the sum it would otherwise take, over an axis
    other than the last and fused with the elementwise ops that make it,
    many times slower than the product (YNNPACK's reduction fusions, on
    by default in jax 0.10): the gradient of RTF's complex division,
    whose (2, 1, 1, 8193) denominator spectrum is broadcast over 128
    channels, took 212 ms as XLA's sum and 16 ms with this (2 cores,
    `docs/results/batch_one_sums_epyc/`). TensorFlow and PyTorch
    broadcast as they are.
    """
    from keras import ops

    if keras.backend.backend() != "jax":
        return ops.broadcast_to(x, shape)
    import jax
    import jax.numpy as jnp

    shape = tuple(shape)
    given = tuple(x.shape)
    lead = len(shape) - len(given)
    axes = [i for i, n in enumerate((1,) * lead + given) if n != shape[i]]

    @jax.custom_vjp
    def spread(x):
        return jnp.broadcast_to(x, shape)

    def backward(_, g):
        for axis in axes:
            ones = jnp.ones((shape[axis],), g.dtype)
            g = jnp.expand_dims(
                jnp.tensordot(ones, g, axes=([0], [axis])), axis)
        return (jnp.reshape(g, given),)

    spread.defvjp(lambda x: (spread(x), None), backward)
    return spread(x)


def scale_channels(x, weights):
    """`x * weights` for `weights` of shape (channels,), `x`'s last
    axis; under JAX on `x` viewed as (rows, channels).

    The gradient of `weights` is then a sum over the rows. Over `x`'s
    own axes, for a batch of one row, (1, L, channels), XLA takes it as a
    sum over the length alone, which its CPU code (YNNPACK's reduction
    fusions, on by default in jax 0.10) runs about 100 times slower when
    a product is fused into it: 35 ms at L = 16,384, width 128, against
    0.3 ms (2 cores, `docs/results/batch_one_sums_epyc/`). TensorFlow and
    PyTorch multiply as they are.
    """
    from keras import ops

    weights = ops.cast(weights, x.dtype)
    if keras.backend.backend() != "jax":
        return x * weights
    rows = ops.reshape(x, (-1, x.shape[-1]))
    return ops.reshape(rows * weights, ops.shape(x))


def inner_products(a, b):
    """`sum(a * b, axis=-1, keepdims=True)`; where XLA compiles
    (`xla_compiled`), as an einsum, which XLA runs as a batched product.
    As a sum of the products over a tensor with an axis of one row (the
    blockwise attention's delta over blocks of one (batch, head) row, as
    MEGA's one head makes them), XLA's CPU code
    (YNNPACK's reduction fusions) took 46 ms against 1 ms for the einsum
    at (32, 1, 512, 256), per layer at L = 16,384 (2 cores,
    `docs/results/batch_one_sums_epyc/`). Elsewhere the sum: TensorFlow
    ran the einsum 3x slower (eagerly, at (32, 4, 512, 64))."""
    from keras import ops

    if xla_compiled():
        return ops.einsum("...j,...j->...", a, b)[..., None]
    return ops.sum(a * b, axis=-1, keepdims=True)


# Chris Wellons's `lowbias32` (https://nullprogram.com/blog/2018/07/31/,
# its constants found by his hash-prospector): a bijection of 32-bit words
# whose every output bit flips with probability 0.5 +- 0.0009 when one
# input bit flips.
_MIX_SHIFTS = (16, 15, 16)
_MIX_FACTORS = (0x7FEB352D, 0x846CA68B)
# Odd constants that separate the words a key is made of (the golden
# ratio's and MurmurHash3's finaliser's).
_KEY_SALTS = (0x9E3779B9, 0x85EBCA6B, 0xC2B2AE35)


def _signed():
    """Whether 32-bit words are int32 (PyTorch, which has no uint32
    arithmetic: Keras casts uint32 to int64 there, whose masked words
    took 10x as long) rather than uint32: the same bits, products and
    sums wrapping alike, with `_shift_right` and `_at_least` making up
    for the sign."""
    return keras.backend.backend() == "torch"


def _int32(value):
    """The int32 with the bits of the word `value` in [0, 2**32)."""
    return value - 2**32 if value >= 2**31 else value


def _word(value):
    """The word of `value` in [0, 2**32), as a tensor."""
    from keras import ops

    if _signed():
        return ops.convert_to_tensor(_int32(value), dtype="int32")
    return ops.convert_to_tensor(value, dtype="uint32")


def words(x):
    """Integers (a seed's, a step) as 32-bit words, modulo 2**32."""
    from keras import ops

    return ops.cast(x, "int32" if _signed() else "uint32")


def _shift_right(x, bits):
    """The logical right shift of words (int32's is arithmetic)."""
    from keras import ops

    shifted = ops.right_shift(x, _word(bits))
    if _signed():
        shifted = ops.bitwise_and(shifted, _word(2**(32 - bits) - 1))
    return shifted


def _at_least(x, threshold):
    """Whether words `x` >= `threshold` as unsigned integers."""
    from keras import ops

    if _signed():  # the order of unsigned words: their sign bit flipped
        return ops.bitwise_xor(x, _word(2**31)) >= _word(
            threshold ^ 2**31)
    return x >= _word(threshold)


def mix32(x):
    """`lowbias32` of 32-bit words (`words`): x ^= x >> 16; x *= 0x7feb352d;
    x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16, modulo 2**32."""
    from keras import ops

    for i, shift in enumerate(_MIX_SHIFTS):
        x = ops.bitwise_xor(x, _shift_right(x, shift))
        if i < len(_MIX_FACTORS):
            x = x * _word(_MIX_FACTORS[i])
    return x


def hashed_keep(seed, step, shape, rate):
    """A dropout mask drawn from `seed` for block `step`: a float32
    tensor of `shape` (static or dynamic), 0 where an entry is dropped
    (probability `rate`) and 1 / (1 - rate) where it is kept.

    Counter-based, as FlashAttention drops its weights (Dao et al. 2022,
    Appendix B, Algorithms 2 and 4: the generator's state kept, the mask
    drawn again in the backward pass): entry n (row-major) of the block is kept
    when `mix32(n * a + b) >= round(rate * 2**32)`, where the block's key
    (a odd, b) is `mix32` of the seed's two words and `step`. The same
    (seed, step, shape) gives the same mask on every backend, so that a
    pass that recomputes a block's weights (the blockwise attention's
    backward) drops the same ones, and nothing of the mask is kept.
    Its few integer operations an entry cost less than the random
    bits of the backends' generators: at (128, 1024, 1024) under JAX on
    2 cores, the mask and its select took 190-220 ms against 2,200 ms for
    `jax.random.bernoulli`'s threefry bits; at (128, 32, 1024) under
    PyTorch 17 ms in int32 words through `keras.ops`, as long as
    `torch.rand` with a generator takes for as many entries (18 ms),
    against 160 ms in the int64 ones Keras makes of uint32 there
    (2026-12-06), and 5-6 ms for as many entries made in place as
    PyTorch now makes them (`_torch_keep`, a (64, 64, 1024) mask,
    2026-12-07). `seed`: two integers (a `SeedGenerator`'s draw); `step`:
    an integer, traced or not.
    """
    from keras import ops

    seed = words(seed)
    base = mix32(ops.bitwise_xor(
        mix32(ops.bitwise_xor(seed[0], _word(_KEY_SALTS[0]))), seed[1]))
    a = ops.bitwise_or(
        mix32(base + words(step) * _word(_KEY_SALTS[1])), _word(1))
    b = mix32(ops.bitwise_xor(a, _word(_KEY_SALTS[2])))
    threshold = min(round(rate * 2**32), 2**32 - 1)
    if keras.backend.backend() == "torch":
        return _torch_keep(a, b, shape, threshold, 1.0 / (1.0 - rate))
    index = _word(0)
    for axis, size in enumerate(shape):
        along = words(ops.arange(size, dtype="int32"))
        along = ops.reshape(along, (-1,) + (1,) * (len(shape) - axis - 1))
        index = index * words(size) + along if axis else along
    bits = mix32(index * a + b)
    return ops.where(_at_least(bits, threshold), 1.0 / (1.0 - rate), 0.0)


# `_torch_keep` makes its words this many entries at a time, in buffers
# that stay in the cache (12 MiB). A (64, 64, 1024) mask took 5.1-6.4 ms
# in slices of 2**20 against 5.5-9.3 and 8.0-10.6 in slices of 2**18 and
# 2**17 (more operations, each with PyTorch's overhead) and 6.3-8.2 in
# slices of 2**21; a (4, 512, 16384) one 72-76 ms against 80-83 and 82-89
# in slices of 2**18 and 2**21 (2 cores, 2026-12-07,
# docs/results/torch_blockwise_epyc/keep_slices.txt).
_TORCH_KEEP_SLICE = 2**20


def _torch_keep(a, b, shape, threshold, scale):
    """`hashed_keep`'s mask under PyTorch from the block's key (a, b):
    the same words, made in place in slices of `_TORCH_KEEP_SLICE`
    entries. PyTorch runs each of the hash's dozen integer operations on
    its own, each writing a new tensor as large as the block; in place on
    buffers that stay in the cache, a (64, 64, 1024) mask took 5-6 ms
    against 47 ms (2 cores, 2026-12-07)."""
    import torch
    from keras import ops

    size = math.prod(int(s) for s in shape)
    step = min(size, _TORCH_KEEP_SLICE)
    counter = ops.arange(step, dtype="int32")  # on Keras's device
    a = a.to(counter.device)
    offset = b.to(counter.device).clone()  # start a + b, modulo 2**32
    stride = a * step
    counter.mul_(a)  # j a
    x, spare = torch.empty_like(counter), torch.empty_like(counter)
    keep = torch.empty(size, dtype=torch.float32, device=counter.device)
    factors = [_int32(f) for f in _MIX_FACTORS]
    for start in range(0, size, step):
        n = min(step, size - start)
        # entry start + j: (start + j) a + b = j a + (start a + b)
        torch.add(counter[:n], offset, out=x[:n])
        offset.add_(stride)
        for i, shift in enumerate(_MIX_SHIFTS):  # `mix32`, in place
            torch.bitwise_right_shift(x[:n], shift, out=spare[:n])
            spare[:n].bitwise_and_(2**(32 - shift) - 1)  # logical shift
            x[:n].bitwise_xor_(spare[:n])
            if i < len(factors):
                x[:n].mul_(factors[i])
        x[:n].bitwise_xor_(_int32(2**31))  # `_at_least`'s sign bit flip
        torch.ge(x[:n], _int32(threshold ^ 2**31),
                 out=keep[start:start + n]).mul_(scale)
    return keep.reshape(shape)


def _numpy_like():
    """The backend's module with numpy's FFT names and signatures
    (`torch` or `jax.numpy`: `fft.rfft(x, n=...)`, `conj`), or None under
    TensorFlow, whose `tf.signal` names them otherwise."""
    backend = keras.backend.backend()
    if backend == "torch":
        import torch

        return torch
    if backend == "jax":
        import jax.numpy as jnp

        return jnp
    return None


def rfft(x, fft_length):
    """The spectrum of the real `x` along its last axis, zero-padded to
    `fft_length` (`fft_length // 2 + 1` frequencies), as the backend's own
    complex64 tensor, which `*`, `conjugate`, `sum_rows` and `irfft`
    take (the module's docstring). Under a (16, 128, 8192) transform, the
    forward and backward passes of a PyTorch `fft_conv` spent 790 ms of a
    4-block RTF step's 3.4 s on the real and imaginary parts' products,
    sums and joins (`torch.profiler`, L = 4096, 2 cores).

    Under TensorFlow and PyTorch its gradient is written out
    (`rfft_gradient`): one inverse transform of the upstream gradient's
    half spectrum. TensorFlow's own took that transform and five passes
    over the padded length for the terms the half spectrum leaves out;
    PyTorch's a complex transform of the whole period. Forward and
    backward of a (256, 65) input over 16,384 points (an RTF layer's
    numerators) took 23.3 -> 14.9 ms under TensorFlow and 63.6 -> 30.4
    ms under PyTorch, and RTF's 4-block step at L = 16,384, batch 1,
    1.07x and 1.14x as fast, paired in one process on 2 cores
    (docs/results/rfft_gradient_epyc/). JAX's is already this
    transform."""
    backend = keras.backend.backend()
    if backend == "jax":
        import jax.numpy as jnp

        return jnp.fft.rfft(x, n=fft_length)
    if backend == "torch":
        return _torch_rfft(x, fft_length)
    return _tensorflow_rfft(x, fft_length)


def rfft_gradient(upstream, fft_length, length, ops_module):
    """The gradient of `rfft(x, fft_length)` for a real `x` of `length`
    positions, from the upstream gradient of its spectrum (d/d Re +
    i d/d Im, TensorFlow's and PyTorch's convention).

    With y_k = sum_t x_t exp(-2 pi i k t / n), dx_t = sum_k Re(g_k exp(2 pi
    i k t / n)) over the n // 2 + 1 frequencies kept. `irfft` of n points
    counts each frequency but the first and (n even) the last twice,
    divided by n, so dx = (n / 2) irfft(w g) with w = 2 at those two
    and 1 elsewhere; the imaginary parts there, which no real x moves,
    `irfft` ignores. Positions past n (a cropped `x`) get 0.

    `ops_module` names the backend's own functions: "tensorflow" or
    "torch".
    """
    if ops_module == "torch":
        import torch

        frequencies = upstream.shape[-1]
        k = torch.arange(frequencies, device=upstream.device)
        ends = (k == 0) | (2 * k == fft_length)
        w = (ends.to(torch.float32) + 1.0) * (fft_length / 2)
        dx = torch.fft.irfft(upstream * w.to(upstream.real.dtype),
                             fft_length)
        if length > fft_length:
            return torch.nn.functional.pad(dx, (0, length - fft_length))
        return dx[..., :length]
    import tensorflow as tf

    real = upstream.dtype.real_dtype
    k = tf.range(tf.shape(upstream)[-1])
    n = tf.cast(fft_length, k.dtype)
    ends = tf.logical_or(tf.equal(k, 0), tf.equal(2 * k, n))
    w = (tf.cast(ends, real) + 1.0) * (tf.cast(n, real) / 2.0)
    dx = tf.signal.irfft(upstream * tf.cast(w, upstream.dtype),
                         fft_length=[fft_length])
    if isinstance(length, int) and isinstance(fft_length, int) and (
            length <= fft_length):
        return dx[..., :length]
    dx = dx[..., :length]
    return tf.pad(dx, [[0, 0]] * (len(dx.shape) - 1)
                  + [[0, length - tf.shape(dx)[-1]]])


def _tensorflow_rfft(x, fft_length):
    import tensorflow as tf

    @tf.custom_gradient
    def transform(x):
        def grad(upstream):
            length = x.shape[-1]
            return rfft_gradient(
                upstream, fft_length,
                tf.shape(x)[-1] if length is None else int(length),
                "tensorflow")

        return tf.signal.rfft(x, fft_length=[fft_length]), grad

    return transform(x)


def _torch_rfft(x, fft_length):
    import torch

    if torch.is_grad_enabled() and x.requires_grad:
        return _torch_rfft_function().apply(x, fft_length)
    return _torch_rfft_forward(x, fft_length)


def _torch_rfft_forward(x, fft_length):
    if fft_length > x.shape[-1]:
        return _torch_padded_rfft(x, fft_length)
    import torch

    return torch.fft.rfft(x, n=fft_length)


def _torch_padded_rfft(x, fft_length):
    """PyTorch's `rfft` of `x` zero-padded to `fft_length`, the padding
    written by us: `x` is copied into the first positions of a new buffer,
    in whatever layout it has (a transposed view needs no copy of its
    own), and only the positions past it are zeroed. `torch.fft.rfft(x,
    n=...)` zeroes the whole buffer and copies `x` in after, and a
    transposed input took a `.contiguous()` copy before that. A 4-block
    DLR step (L = 1024, batch 16, width 128, 2 cores) spent 20.8 ms of
    its ops' 224 ms in them, and 15.9 ms in the copy and zeroing here
    (each op timed under a `TorchDispatchMode`); its wall time moved
    within this machine's noise."""
    import torch

    length = x.shape[-1]
    padded = x.new_empty((*x.shape[:-1], fft_length))
    padded[..., length:].zero_()
    padded[..., :length].copy_(x)
    return torch.fft.rfft(padded)


@functools.cache
def _torch_rfft_function():
    """`rfft` as a `torch.autograd.Function` with `rfft_gradient`."""
    import torch

    class Rfft(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, fft_length):
            ctx.fft_length, ctx.length = fft_length, x.shape[-1]
            return _torch_rfft_forward(x, fft_length)

        @staticmethod
        def backward(ctx, upstream):
            return (rfft_gradient(upstream, ctx.fft_length, ctx.length,
                                  "torch"), None)

    return Rfft


def irfft(spectrum, fft_length):
    """The real signal of length `fft_length` whose spectrum is the
    complex `spectrum` (`rfft`'s inverse)."""
    np_like = _numpy_like()
    if np_like is not None:
        return np_like.fft.irfft(spectrum, n=fft_length)
    import tensorflow as tf

    return tf.signal.irfft(spectrum, fft_length=[fft_length])


def conjugate(spectrum):
    """The complex conjugate of a complex tensor from `rfft`."""
    np_like = _numpy_like()
    if np_like is not None:
        return np_like.conj(spectrum)
    import tensorflow as tf

    return tf.math.conj(spectrum)


def sum_of_conjugate_products(a, b):
    """`sum_rows(conjugate(a) * b)` of two complex tensors from `rfft`,
    the sum over their leading axis (a batch's correlation spectra).

    Under PyTorch it is computed in `b`, which the caller gives up: `b`
    is conjugated in place, multiplied by `a` in place, and the sum
    conjugated (`conj(a) b = conj(a conj(b))`). PyTorch copies a
    conjugated operand before a product, so `conj(a) * b` made two new
    tensors of the batch's spectra: at (16, 128, 1025), complex64 (16.8
    MiB), 2.95 ms against 1.49 ms in place, each call (best of ten).
    """
    if keras.backend.backend() == "torch":
        import torch

        torch.conj_physical_(b)
        return torch.conj_physical(torch.sum(b.mul_(a), 0))
    return sum_rows(conjugate(a) * b)


def use_compilation_cache(path, replace=True):
    """Turns JAX's persistent compilation cache on at `path`, or off.

    A run compiles its training and evaluation steps once per batch shape
    (each length bucket); with the cache on, a later run of the same model
    and shapes, or the next seed of a `--seeds` run, loads them instead.
    Only under JAX: TensorFlow and PyTorch have no such cache.

    Args:
        path: str, path-like or None (the cache off).
        replace: bool. False keeps a cache already set
            (`JAX_COMPILATION_CACHE_DIR`, or an earlier
            `jax.config.update("jax_compilation_cache_dir", ...)`).

    Returns:
        The cache directory in use, as a string, or None.
    """
    if keras.backend.backend() != "jax":
        return None
    import jax

    current = jax.config.jax_compilation_cache_dir
    if current and not replace:
        return current
    if path is None:
        jax.config.update("jax_enable_compilation_cache", False)
        return None
    jax.config.update("jax_enable_compilation_cache", True)
    jax.config.update("jax_compilation_cache_dir", str(path))
    return str(path)


def channels_last(x):
    """`ops.transpose(x, (0, 2, 1))` of a (B, C, L) tensor, laid out in
    memory in its own axis order under PyTorch (a copy), so that the
    elementwise ops after it, and their backward, run on matching layouts
    (a strided GELU backward there took 1.4 ms against 0.08 ms at (32,
    96, 64), `benchmarks/preset_step.py`). JAX and TensorFlow tensors have
    no strides to mend: the transpose as it is.

    The convolutions' (B, C, L) outputs are the first L positions of
    their transforms' rows, 2L long: rows a power of two apart in memory
    where L is one. On a CPU, PyTorch's copy into the transposed order
    then reads C rows at a time whose addresses fall in the same cache
    sets: (16, 128, 1024) took 6.6 ms, against 1.4 ms from rows 1,000
    apart (a first-generation AMD EPYC, 2 threads). Where the rows lie a
    multiple of 4 KiB apart, the copy goes through a buffer whose rows
    are 16 elements longer than L: 2.1-2.3 ms at (16, 128, 1024), (4,
    128, 4096) and (1, 128, 16384), against 6.6, 6.8 and 12.9 ms
    (docs/results/transposes_zen1/). Other strides, where that buffer
    was the slower (2.5 against 1.4 ms at rows 1,000 apart), copy
    directly."""
    if keras.backend.backend() == "torch":
        if _aliased_rows(x):
            return _torch_channels_last_function().apply(x)
        return x.transpose(1, 2).contiguous()
    return keras.ops.transpose(x, (0, 2, 1))


def stored_channels_last(x):
    """A (B, C, L) tensor equal to `x`, stored under PyTorch as its (B,
    L, C) transpose (`channels_last`, seen through a transposed view): a
    gradient for a (B, C, L) view of (B, L, C) activations, which the
    chain rule transposes back into the activations' layout and adds to
    their other gradients. Stored as `x` is, its rows 4 KiB apart,
    that addition read it in the slow order of `channels_last` (a
    strided `add_` of 5.9 ms at (16, 1024, 128), against 3.5 ms through
    this). Elsewhere, and for other strides, `x` as it is."""
    if keras.backend.backend() == "torch" and _aliased_rows(x):
        return _torch_channels_last_function().apply(x).transpose(1, 2)
    return x


def _aliased_rows(x):
    """Whether the PyTorch tensor `x` (B, C, L) is a CPU tensor whose
    rows, each contiguous, begin a multiple of 4 KiB apart."""
    return (x.device.type == "cpu" and x.stride(2) == 1
            and x.shape[1] > 1
            and x.stride(1) * x.element_size() % 4096 == 0)


@functools.cache
def _torch_channels_last_function():
    """`channels_last`'s copy through padded rows as a
    `torch.autograd.Function` whose backward is the transposed view of
    the gradient, as the plain copy's is (autograd would otherwise
    record the copy into a buffer and copy the gradient out again)."""
    import torch

    class ChannelsLast(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            batch, channels, length = x.shape
            rows = x.new_empty((batch, channels, length + 16))
            rows = rows[..., :length]
            rows.copy_(x)
            return rows.transpose(1, 2).contiguous()

        @staticmethod
        def backward(ctx, gradient):
            return gradient.transpose(1, 2)

    return ChannelsLast


def barrier(*xs):
    """`xs` as they are, computed before anything that uses the result,
    under JAX through `jax.lax.optimization_barrier`; elsewhere unchanged.

    XLA's CPU backend schedules values that depend only on the weights
    (a gain broadcast to the activations' shape, the zeros a backward
    loop starts from) as early as it can, so each stays allocated from
    the forward pass to its use in the backward; and it keeps the
    broadcast a residual was computed from rather than the residual.
    Passing the upstream gradient through the barrier with them ties them
    to the backward pass; passing the residuals pins what is kept.
    """
    if keras.backend.backend() != "jax":
        return xs
    import jax

    return jax.lax.optimization_barrier(xs)


def dense_gradient(gradient):
    """The gradient as a dense tensor: a `tf.IndexedSlices` (TensorFlow)
    becomes the dense sum of its slices, duplicate rows added; anything
    else (every gradient under JAX and PyTorch) is returned unchanged."""
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        if isinstance(gradient, tf.IndexedSlices):
            return tf.convert_to_tensor(gradient)
    return gradient


def fit_input(dataset, like=None):
    """`dataset` as `fit` should receive it under the current backend.

    JAX and PyTorch: `dataset` itself. TensorFlow: a `tf.data.Dataset` of
    the same batches whose spec leaves free the batch dimension and every
    dimension in which the first two batches of `dataset` and of `like`
    (a dataset of batches of the same structure, or None) differ. Keras
    would take the spec of the first two batches alone, and a later batch
    of another length would then be refused: `LengthBucketedBatches` puts
    two lengths first for that reason, but a part of an epoch
    (`batching.RemainingBatches`) may start with two of one length. With
    the whole epoch as `like`, the traced step is the one an uninterrupted
    run traced.
    """
    if keras.backend.backend() != "tensorflow":
        return dataset
    import tensorflow as tf

    batches = [source[i] for source in (dataset, like)
               if source is not None for i in range(min(2, len(source)))]
    if not batches:
        raise ValueError("The dataset has no batches.")

    def spec(*leaves):
        shapes = {tuple(leaf.shape) for leaf in leaves}
        if len({len(shape) for shape in shapes}) != 1:
            raise ValueError(
                f"Batches differ in rank: shapes {sorted(shapes)}."
            )
        # The batch dimension free, as Keras leaves it (the step's traced
        # code reads it: per-output loss trackers weigh a batch by it).
        shape = [None] + [dims[0] if len(set(dims)) == 1 else None
                          for dims in list(zip(*shapes))[1:]]
        return tf.TensorSpec(shape, tf.as_dtype(leaves[0].dtype))

    signature = tuple(keras.tree.map_structure(spec, *batches))

    def generate():
        for i in range(len(dataset)):
            yield tuple(dataset[i])

    tf_dataset = tf.data.Dataset.from_generator(
        generate, output_signature=signature
    )
    tf_dataset = tf_dataset.apply(
        tf.data.experimental.assert_cardinality(len(dataset))
    )
    return tf_dataset.prefetch(tf.data.AUTOTUNE)


def global_rng_state():
    """The state of the backend's global random generators, as numpy
    arrays by name: torch's CPU generator and each CUDA device's under
    PyTorch; nothing under JAX and TensorFlow, whose Keras ops draw from
    the layers' seed generators only."""
    if keras.backend.backend() != "torch":
        return {}
    import torch

    state = {"torch_cpu": torch.get_rng_state().numpy()}
    if torch.cuda.is_available():
        for i, cuda in enumerate(torch.cuda.get_rng_state_all()):
            state[f"torch_cuda_{i}"] = cuda.numpy()
    return state


def seed_global_rng(seed):
    """Seeds the backend's global generators (torch's, under PyTorch)."""
    if keras.backend.backend() == "torch":
        import torch

        torch.manual_seed(int(seed))


def set_global_rng_state(state):
    """Restores what `global_rng_state` returned."""
    if keras.backend.backend() != "torch" or not state:
        return
    import torch

    torch.set_rng_state(torch.from_numpy(state["torch_cpu"]))
    cuda = [state[f"torch_cuda_{i}"] for i in range(len(state) - 1)]
    if cuda and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([torch.from_numpy(c) for c in cuda])


def tensorboard_callback(log_dir):
    """`keras.callbacks.TensorBoard(log_dir)`, TensorFlow kept off GPUs.

    Under JAX and PyTorch the callback's summaries still go through
    TensorFlow, which by default maps nearly all the memory of every GPU
    it sees when it starts (tensorflow.org/guide/gpu) and so would take it
    from the training backend; writing summaries needs no GPU.
    """
    if keras.backend.backend() != "tensorflow":
        import tensorflow as tf

        try:
            tf.config.set_visible_devices([], "GPU")
        except RuntimeError:
            pass  # TensorFlow has started already (TFDS read the data)
    return keras.callbacks.TensorBoard(log_dir=str(log_dir))
