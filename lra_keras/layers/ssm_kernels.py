"""Kernel generation for diagonal state-space and EMA layers.

A diagonal linear recurrence `x_l = z * x_{l-1} + b * u_l`, `y_l = Re(c x_l)`
is the convolution of `u` with the kernel `K_l = Re(sum_n c_n b_n z_n^l)`.
S4D, DLR, S5 and MEGA's EMA all produce their kernels this way; they differ
only in how `z`, `b` and `c` are parameterised. This module computes such
kernels cheaply and with little memory:

The plain Vandermonde product evaluates `exp(l * log z)` for every
(channel, state, position): H x N x L complex exponentials and an
H x N x L intermediate that autodiff keeps for the backward pass. That
made kernel generation 55-90% of an S4D training step. Here each position
is split as `l = a * B + b` with `B ~ sqrt(L)`:

    K[h, a*B + b] = Re(sum_n (c_n b_n z_n^(a B)) * z_n^b)

so only H x N x (L/B + B) exponentials are needed, and the sum over `n` is
one batched real matrix product (H, L/B, 2N) @ (H, 2N, B). Nothing of size
H x N x L is ever materialised.

Complex numbers are (real, imag) pairs of float32 tensors throughout
(Keras has no complex dtype).

References:
- S4D (diagonal kernels, ZOH): https://arxiv.org/abs/2206.11893
- "Never Train from Scratch", eq. 1-3: https://arxiv.org/abs/2310.02980
"""

import math

import keras
from keras import ops

from lra_keras.backend_utils import broadcast_to
from lra_keras.backend_utils import xla_compiled
from lra_keras.layers import projections
from lra_keras.layers.fft_conv import complex_fft_conv
from lra_keras.layers.fft_conv import complex_multiply


def complex_exp(real, imag):
    """exp(real + i imag) as a (real, imag) pair."""
    magnitude = ops.exp(real)
    return magnitude * ops.cos(imag), magnitude * ops.sin(imag)


def block_size_for(length):
    """The split `l = a * B + b` uses B = ceil(sqrt(length))."""
    if isinstance(length, int):
        return max(1, math.isqrt(max(length - 1, 0)) + 1)
    return ops.cast(ops.ceil(ops.sqrt(ops.cast(length, "float32"))), "int32")


def _block_positions(length, block_size):
    """Positions a * B of the block starts and b within a block (float32)."""
    if block_size is None:
        block_size = block_size_for(length)
    num_blocks = (length + block_size - 1) // block_size
    starts = ops.cast(ops.arange(num_blocks), "float32") * ops.cast(
        block_size, "float32"
    )  # (A,)
    offsets = ops.cast(ops.arange(block_size), "float32")  # (B,)
    return starts, offsets


def first_taps(x, length):
    """`x[..., :length]`, or `x` itself where its last axis is known to
    be `length` long already (static shapes): TensorFlow differentiates
    even a slice that keeps everything into a `StridedSliceGrad`, which
    writes a zero tensor and copies the slice into it: 0.2-0.3 ms a call
    on the (256, 1024) powers of a DLR block
    (`docs/results/tensorflow_graph_epyc/`)."""
    if isinstance(length, int) and x.shape[-1] == length:
        return x
    return x[..., :length]


def vandermonde_kernel(
    coeff_real, coeff_imag, log_z_real, log_z_imag, length, block_size=None
):
    """K[..., l] = Re(sum_n coeff[..., n] * exp(log_z[..., n] * l)).

    Args:
        coeff_real, coeff_imag: tensors (..., N): the products `c_n b_n`.
        log_z_real, log_z_imag: tensors (..., N): `log z_n` (for ZOH,
            `dt * A`). Same shape as `coeff`.
        length: int or scalar int tensor L.
        block_size: int. Positions per block; defaults to ceil(sqrt(L)).
            `block_size=1` is the plain H x N x L Vandermonde product,
            kept as the benchmark baseline.

    Returns:
        Tensor (..., L) float32.
    """
    starts, offsets = _block_positions(length, block_size)
    log_z_real = ops.cast(log_z_real, "float32")[..., None]  # (..., N, 1)
    log_z_imag = ops.cast(log_z_imag, "float32")[..., None]
    # c z^(a B): one exponential per block start.
    p_real, p_imag = complex_exp(log_z_real * starts, log_z_imag * starts)
    extra = len(coeff_real.shape) - len(log_z_real.shape) + 1
    if extra > 0:
        # Modes shared by the coefficients' leading axes (S4D's and DLR's
        # two directions): z^(aB) broadcast to them by `broadcast_to`,
        # whose gradient under JAX sums over them as a product with ones.
        # XLA's own sum of the (2, H, N, A) products over the directions
        # took 19 ms of S4D's step per block at L = 16,384 (H = 128, N =
        # 32, A = 128; 2 cores, `docs/results/batch_one_sums_epyc/`).
        target = (*ops.shape(coeff_real), ops.shape(p_real)[-1])
        p_real = broadcast_to(p_real, target)
        p_imag = broadcast_to(p_imag, target)
    p_real, p_imag = complex_multiply(
        ops.cast(coeff_real, "float32")[..., None],
        ops.cast(coeff_imag, "float32")[..., None],
        p_real,
        p_imag,
    )  # (..., N, A)
    # z^b: one exponential per offset inside a block.
    q_real, q_imag = complex_exp(
        log_z_real * offsets, log_z_imag * offsets
    )  # (..., N, B)
    # Re(P^T Q) = P_re^T Q_re - P_im^T Q_im: one real matmul over 2N.
    p = ops.concatenate([p_real, -p_imag], axis=-2)  # (..., 2N, A)
    q = ops.concatenate([q_real, q_imag], axis=-2)  # (..., 2N, B)
    k = ops.matmul(ops.swapaxes(p, -1, -2), q)  # (..., A, B)
    k = ops.reshape(k, (*ops.shape(k)[:-2], -1))  # (..., A * B)
    return first_taps(k, length)


def power_kernel(log_z_real, log_z_imag, length, block_size=None):
    """z^l = exp(log_z * l) for l < L, without a sum over states.

    Same block split as `vandermonde_kernel`: exponentials only at block
    starts (p = z^(aB)) and offsets (q = z^b), then their complex outer
    product, `z^(aB + b) = p_a q_b`.

    Where XLA compiles the code (`backend_utils.xla_compiled`: JAX, and
    TensorFlow under `jit_compile=True`) the product is one real matrix
    product per mode, whose contraction is the two parts of q: `[[Re p,
    -Im p], [Im p, Re p]] @ [Re q; Im q]`, so that p and q are made once.
    As an elementwise product XLA fused p's and q's sines and cosines
    into the product's loop and evaluated all 4 again for every element
    of z's real and imaginary parts: a 4-block DLR step at L = 1024 (N =
    256, 2 cores) spent 29 ms of its 520 ms of ops in those 4 products
    and 9 ms more in 16 backward ones that evaluated one each, 1.8 ms in
    all of its trigonometric functions with the matrix product
    (`jax.profiler`). Alone, the kernel's forward and backward with its
    readout (`shared_modes_kernel`, 2 x 128 channels) went 7.4-8.0 ->
    4.9-5.4 ms at N = 256, L = 1024 and 84-86 -> 47-48 ms at N = 1024, L
    = 2048; the paper's ListOps DLR step 2.38 -> 2.06-2.07 s
    (docs/results/like_for_like_xeon). TensorFlow's graphs and PyTorch
    run the ops as written, and there the elementwise product was the
    faster (TensorFlow 5.5-5.9 against 7.0-8.6 ms, PyTorch 9.8-9.9
    against 10.1-10.6 ms).

    Args:
        log_z_real, log_z_imag: tensors (..., N).
        length: int or scalar int tensor L.
        block_size: int or None.

    Returns:
        A (real, imag) pair of tensors (..., N, L).
    """
    starts, offsets = _block_positions(length, block_size)
    log_z_real = ops.cast(log_z_real, "float32")[..., None]
    log_z_imag = ops.cast(log_z_imag, "float32")[..., None]
    p_real, p_imag = complex_exp(
        log_z_real * starts, log_z_imag * starts)  # (..., N, A)
    q_real, q_imag = complex_exp(
        log_z_real * offsets, log_z_imag * offsets)  # (..., N, B)
    shape = ops.shape(p_real)[:-1]
    if xla_compiled():
        p = ops.stack([ops.stack([p_real, -p_imag], axis=-1),
                       ops.stack([p_imag, p_real], axis=-1)], axis=-3)
        q = ops.stack([q_real, q_imag], axis=-2)  # (..., N, 2, B)
        z = ops.matmul(ops.reshape(p, (*shape, -1, 2)), q)  # (.., N, 2A, B)
        z = ops.reshape(z, (*shape, 2, -1))[..., :length]  # (..., N, 2, L)
        return z[..., 0, :], z[..., 1, :]
    z_real, z_imag = complex_multiply(
        p_real[..., None], p_imag[..., None],
        q_real[..., None, :], q_imag[..., None, :])  # (..., N, A, B)
    z_real = first_taps(ops.reshape(z_real, (*shape, -1)), length)
    z_imag = first_taps(ops.reshape(z_imag, (*shape, -1)), length)
    return z_real, z_imag


def shared_modes_kernel(coeff_real, coeff_imag, log_z_real, log_z_imag,
                        length, block_size=None):
    """K[..., l] = Re(sum_n coeff[..., n] z_n^l) for modes shared by all
    of `coeff`'s rows.

    Where every channel has its own modes, `vandermonde_kernel` makes the
    powers per channel; here `z` is one (N,) vector (DLR's `omega`
    parameterisation, one Lambda per mode for all channels), so its
    powers are made once, (N, L) by `power_kernel`, and the sum over
    modes is one real matrix product (..., 2N) @ (2N, L), as the "Never
    Train from Scratch" code's `einsum('chn,nl->chl', W, S)`
    (IdoAmos/not-from-scratch src/models/sequence/ss/dss.py line 525).

    Args:
        coeff_real, coeff_imag: tensors (..., N).
        log_z_real, log_z_imag: tensors (N,).
        length: int or scalar int tensor L.
        block_size: int or None (see `power_kernel`).

    Returns:
        Tensor (..., L) float32.
    """
    z_real, z_imag = power_kernel(log_z_real, log_z_imag, length,
                                  block_size)  # (N, L)
    coeff = ops.concatenate([ops.cast(coeff_real, "float32"),
                             -ops.cast(coeff_imag, "float32")], axis=-1)
    return ops.matmul(coeff, ops.concatenate([z_real, z_imag], axis=0))


def diagonal_recurrence(v, log_z, causal=True, recurrence="chunked"):
    """States of `x_k = z x_{k-1} + v_k` (x_{-1} = 0), complex.

    `x_k = sum_{j <= k} z^(k - j) v_j`, and with `causal=False` also the
    reverse-time states `x'_k = z x'_{k+1} + v_k`, `sum_{j >= k} z^(j - k)
    v_j`, computed as `recurrence` says (`stacked_recurrence`). S5 and the
    LRU compute their recurrences this way.

    Args:
        v: (real, imag) pair of tensors (batch, L, N): the inputs `B u`.
        log_z: (real, imag) pair of tensors (N,): `log z` per mode.
        causal: bool. False adds the reverse-time states.
        recurrence: `"chunked"`, `"convolution"` or `"scan"` (see
            `stacked_recurrence`).

    Returns:
        A list of one (causal) or two (forward, reverse) (real, imag)
        pairs of tensors (batch, L, N).
    """
    states = stacked_recurrence(ops.concatenate(v, -1), log_z, causal,
                                recurrence)
    parts = ops.split(states, 2 if causal else 4, axis=-1)
    return [tuple(parts[j:j + 2]) for j in range(0, len(parts), 2)]


def recurrence_chunk(length):
    """`chunked_recurrence`'s positions per chunk T for sequences of
    `length` (an int, or None when not known until run): 32 up to 2048
    positions; beyond, the largest power of two whose square is at most
    `length`, at least 64 (64 up to 16,383 positions, 128 up to 65,535,
    256 from 65,536 on); 64 when the length is unknown.

    The work within chunks grows with T (L T per mode) and the carry
    across them with the square of their number C = L / T: its (N, 2C,
    2C) matrices of powers are built, and differentiated, whatever the
    batch. At Path-X's 16K in batches of one, chunks of 64 (C = 256) made
    that matrix about a quarter of the step's operations (cosines, sines
    and concatenations of its size, 358 of 1,473 ms in a `jax.profiler`
    trace of the S5 stack's step; the products took 612); chunks of
    128 ran the 4-block steps of width 128 1.15x (S5) and 1.13x (LRU) as
    fast under JAX, 1.12x and 1.18x under TensorFlow and 1.03x (S5)
    under PyTorch (paired in one process, the median of 8 rounds'
    ratios); at 8K (batch 2) they were slower than 64 (JAX's S5: 0.94x).
    Lengths past 16K are not measured. At 1K and 4K: S5 and LRU steps
    (`chunked_recurrence`'s docstring)."""
    if length is None:
        return 64
    if length <= 2048:
        return 32
    return max(64, 2 ** (math.isqrt(length).bit_length() - 1))


def _complex_block(real, imag):
    """The real (..., 2K, 2M) matrix by which row vectors of K complex
    numbers, real parts then imaginary, are multiplied by the complex
    (..., K, M) matrix `real + i imag`."""
    return ops.concatenate([ops.concatenate([real, imag], -1),
                            ops.concatenate([-imag, real], -1)], -2)


def _lagged_powers(log_z_real, log_z_imag, size, step=1, shift=0):
    """(N, size, size) complex matrices whose [s, t] is `z^(step * (t - s
    - shift))` where `t - s >= shift`, 0 elsewhere, for the (N,) `log z`:
    what carries position s of a sequence to position t of it."""
    position = ops.arange(size)
    lag = position[None, :] - position[:, None] - shift  # [s, t]
    kept = ops.cast(lag >= 0, "float32")
    lag = ops.cast(ops.maximum(lag, 0) * step, "float32")
    real, imag = complex_exp(log_z_real[:, None, None] * lag,
                             log_z_imag[:, None, None] * lag)
    return real * kept, imag * kept


def chunked_recurrence(v, log_z, causal=True, chunk=None):
    """`stacked_recurrence`'s states by matrix products, without FFTs.

    The sequence is cut into chunks of T = `chunk` positions. Within a
    chunk, each mode's states are its inputs times a T x T lower-
    triangular matrix of powers, `x_t = sum_{s <= t} z^(t - s) v_s`: one
    matrix product per mode over every chunk of every row. The state a
    chunk hands on is the last of those; the states entering each chunk
    are these, carried across the chunks before by the powers of `z^T`
    (a product with a C x C matrix, C chunks), and reach position t of
    the chunk times `z^(t + 1)`: two more columns of the same product.
    The reverse-time states use the transposed matrices, the first
    position's state and `z^(T - t)`. The work is O(L T) per mode
    instead of the FFT's O(L log L), but all of it dense matrix products,
    no complex transforms or passes over spectra; the gradients are
    autodiff's, through the products.

    4-block steps of width 128 (`benchmarks/mixers.py --models s5 lru
    --lengths 1024 4096`, the FFT path's commit and this one run one after
    the other, twice for the LRU; `docs/results/
    reference_speed_chunked_recurrence_cpu/`), FFT -> chunks:

    - S5, P = 64, 1K, batch 64: PyTorch 2.77-3.09 -> 1.70 s, TensorFlow
      1.33 -> 0.94 s, JAX 1.27 -> 1.24 s;
    - S5, 4K, batch 16: 2.71 -> 1.91 s, 1.42 -> 0.98 s, 1.50 -> 1.31 s;
    - LRU, N = 64, 1K, batch 16: 0.61-1.03 -> 0.43 s, 0.52-0.53 -> 0.36
      s, 0.50 -> 0.55-0.56 s;
    - LRU, 4K, batch 4: 0.66-0.70 -> 0.55-0.56 s, 0.61-0.62 -> 0.42 s,
      0.66-0.67 -> 0.63 s.

    The LRU at 1K under JAX is the one step it slows (XLA's FFTs are
    fast there). Chunks of 32 were 3-10% faster than 64 at 1K (S5, all
    three backends, two runs each), 64 faster at 4K (PyTorch: 1.68
    against 1.86 s; 128: 1.92 s); hence `recurrence_chunk`.

    Args:
        v: tensor (batch, L, 2N): the real parts, then the imaginary.
        log_z: (real, imag) pair of tensors (N,).
        causal: bool. False adds the reverse-time states.
        chunk: int T, positions per chunk. Defaults to
            `recurrence_chunk` of the length.

    Returns:
        A float32 tensor (batch, L, 2N), or (batch, L, 4N) with the
        reverse-time states after.
    """
    t = chunk or recurrence_chunk(v.shape[1])
    v = ops.cast(v, "float32")
    n = v.shape[-1] // 2
    batch, length = ops.shape(v)[0], ops.shape(v)[1]
    chunks = (length + t - 1) // t
    rows = batch * chunks
    v = ops.pad(v, [(0, 0), (0, chunks * t - length), (0, 0)])
    # (N, rows, 2T): each mode's chunks, real parts then imaginary.
    v = ops.transpose(ops.reshape(v, (batch, chunks, t, 2, n)),
                      (4, 0, 1, 3, 2))
    v = ops.reshape(v, (n, rows, 2 * t))
    log_real = ops.cast(log_z[0], "float32")
    log_imag = ops.cast(log_z[1], "float32")
    within = _lagged_powers(log_real, log_imag, t)  # z^(t - s)
    across = _lagged_powers(log_real, log_imag, chunks, t, 1)  # z^T(c-1-c')
    offset = ops.cast(ops.arange(1, t + 1), "float32")
    into = complex_exp(log_real[:, None] * offset,
                       log_imag[:, None] * offset)  # z^(t + 1), (N, T)
    directions = [(within, across, into, t - 1)]
    if not causal:
        directions.append((
            [ops.swapaxes(a, -1, -2) for a in within],
            [ops.swapaxes(a, -1, -2) for a in across],
            [ops.flip(a, -1) for a in into], 0))
    products, entering, carried = [], [], []
    for powers, chunk_powers, entry, last in directions:
        product = _complex_block(*powers)  # (N, 2T, 2T)
        products.append(product)
        # The state each chunk hands on (real, imag), then those entering
        # each chunk, as (N, batch, 2C) for the product across chunks.
        ends = ops.matmul(v, ops.take(product, [last, t + last], axis=2))
        ends = ops.reshape(ops.transpose(
            ops.reshape(ends, (n, batch, chunks, 2)), (0, 1, 3, 2)),
            (n, batch, 2 * chunks))
        into_chunk = ops.matmul(ends, _complex_block(*chunk_powers))
        entering.append(ops.reshape(ops.transpose(
            ops.reshape(into_chunk, (n, batch, 2, chunks)), (0, 1, 3, 2)),
            (n, rows, 2)))
        carried.append(_complex_block(entry[0][:, None], entry[1][:, None]))
    # [v, entering...] @ [[within..], [into, 0], [0, into']]: every
    # direction's states in one product.
    zeros = ops.zeros((n, 2, 2 * t))
    matrix = ops.concatenate(
        [ops.concatenate(products, -1)]
        + [ops.concatenate([c if j == i else zeros
                            for j in range(len(carried))], -1)
           for i, c in enumerate(carried)], -2)
    x = ops.matmul(ops.concatenate([v, *entering], -1), matrix)
    x = ops.reshape(x, (n, batch, chunks, 2 * len(directions), t))
    x = ops.reshape(ops.transpose(x, (1, 2, 4, 3, 0)),
                    (batch, chunks * t, 2 * len(directions) * n))
    return x[:, :length]


RECURRENCES = ("chunked", "convolution", "scan")


def stacked_recurrence(v, log_z, causal=True, recurrence="chunked"):
    """`diagonal_recurrence` on complex numbers stacked on the last axis:
    `v` (batch, L, 2N), real parts first, and the states (batch, L, 2N),
    or (batch, L, 4N) with `causal=False` (the reverse-time ones after).
    `diagonal_ssm` projects into and out of them with one matrix product
    each.

    `recurrence` (the same states each way, to rounding):

    - `"chunked"`: matrix products over chunks of the sequence
      (`chunked_recurrence`), the fastest on a CPU under every backend;
    - `"convolution"`: the causal convolution of `v` with the kernel `z^l`
      (`power_kernel`) by complex FFTs (`fft_conv.complex_fft_conv`), the
      reverse-time states the correlation with it, from the same
      transform of `v`;
    - `"scan"`: `keras.ops.associative_scan`, the parallel scan of the S5
      and LRU papers (`diagonal_recurrence_scan`).
    """
    if recurrence not in RECURRENCES:
        raise ValueError(
            f"`recurrence` must be one of {RECURRENCES}. Received: "
            f"recurrence={recurrence!r}"
        )
    if recurrence == "chunked":
        return chunked_recurrence(v, log_z, causal)
    if recurrence == "scan":
        return ops.concatenate([part for pair in diagonal_recurrence_scan(
            tuple(ops.split(v, 2, axis=-1)), log_z, causal) for part in pair],
            -1)
    z_real, z_imag = power_kernel(*log_z, ops.shape(v)[1])  # (N, L)
    return complex_fft_conv(v, z_real, z_imag, causal)


def diagonal_ssm(u, b, log_z, c, causal=True, recurrence="chunked"):
    """`y = Re(sum_d C_d x_d)` for the states `x_k = z x_(k-1) + B u_k` of
    each direction d (one, or forwards and backwards with `causal=False`):
    the readout of S5 and the LRU. The products into and out of the
    states are one matrix product each, on the complex numbers stacked
    real parts first (`stacked_recurrence`).

    Args:
        u: tensor (batch, L, H).
        b: (real, imag) pair of tensors (N, H).
        log_z: (real, imag) pair of tensors (N,).
        c: (real, imag) pair of tensors (directions, H, N).
        causal: bool.
        recurrence: `"chunked"`, `"convolution"` or `"scan"` (see
            `stacked_recurrence`).

    Returns:
        Tensor (batch, L, H) float32.
    """
    u = ops.cast(u, "float32")
    v = projections.matmul(
        u, ops.transpose(ops.concatenate(b, 0)))  # (B, L, 2N)
    states = stacked_recurrence(v, log_z, causal, recurrence)
    c_real, c_imag = c
    # Re(C x) = C_re x_re - C_im x_im, every direction in one product
    readout = ops.concatenate(
        [part for d in range(1 if causal else 2) for part in (
            ops.transpose(c_real[d]), -ops.transpose(c_imag[d]))], 0)
    return projections.matmul(states, readout)


def _recurrence_step(earlier, later):
    """The associative operator of `x_k = z_k x_{k-1} + v_k` on
    (z_real, z_imag, x_real, x_imag) tuples: apply `earlier`, then
    `later`."""
    a_real, a_imag, x_real, x_imag = earlier
    b_real, b_imag, y_real, y_imag = later
    z = complex_multiply(b_real, b_imag, a_real, a_imag)
    x = complex_multiply(b_real, b_imag, x_real, x_imag)
    return (*z, x[0] + y_real, x[1] + y_imag)


def diagonal_recurrence_scan(v, log_z, causal=True):
    """`diagonal_recurrence` by `keras.ops.associative_scan` (same output).

    The parallel scan of the LRU and S5 papers: O(L log L) work on
    (batch, L, N) tensors, no FFT. `keras.ops.associative_scan` (Keras
    3.15) needs the length known when traced under TensorFlow, so the
    chunked products are the layers' default; this one is a reference
    the tests compare them with, and an option where the scan is faster
    (GPUs).
    """
    v_real, v_imag = v
    if keras.backend.backend() == "tensorflow" and v_real.shape[1] is None:
        raise ValueError(
            "The scan (`keras.ops.associative_scan`) needs the sequence "
            "length known when traced under TensorFlow, and it is not "
            f"here (shape {v_real.shape}). Use `recurrence='chunked'` "
            "or `'convolution'`, or inputs of a fixed length."
        )
    z_real, z_imag = complex_exp(*log_z)  # (N,)
    z_real = ops.broadcast_to(z_real, ops.shape(v_real))
    z_imag = ops.broadcast_to(z_imag, ops.shape(v_real))
    elems = (z_real, z_imag, v_real, v_imag)
    states = []
    for reverse in (False,) if causal else (False, True):
        out = ops.associative_scan(
            _recurrence_step, elems, reverse=reverse, axis=1
        )
        # TensorFlow's scan loses the static shape: restore it.
        shape = ops.shape(v_real)
        states.append((ops.reshape(out[2], shape),
                       ops.reshape(out[3], shape)))
    return states
