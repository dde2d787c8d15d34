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

from keras import ops

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
    return k[..., :length]


def power_kernel(log_z_real, log_z_imag, length, block_size=None):
    """z^l = exp(log_z * l) for l < L, without a sum over states.

    Same block split as `vandermonde_kernel`: exponentials only at block
    starts and offsets, then one complex outer product.

    Args:
        log_z_real, log_z_imag: tensors (..., N).
        length: int or scalar int tensor L.
        block_size: int or None.

    Returns:
        A (real, imag) pair of tensors (..., N, L).
    """
    starts, offsets = _block_positions(length, block_size)
    log_z_real = ops.cast(log_z_real, "float32")[..., None, None]
    log_z_imag = ops.cast(log_z_imag, "float32")[..., None, None]
    p = complex_exp(
        log_z_real * starts[:, None], log_z_imag * starts[:, None]
    )  # (..., N, A, 1)
    q = complex_exp(
        log_z_real * offsets, log_z_imag * offsets
    )  # (..., N, 1, B)
    z_real, z_imag = complex_multiply(*p, *q)  # (..., N, A, B)
    shape = ops.shape(z_real)[:-2]
    z_real = ops.reshape(z_real, (*shape, -1))[..., :length]
    z_imag = ops.reshape(z_imag, (*shape, -1))[..., :length]
    return z_real, z_imag

