"""The FFT convolution paths of the convolution-style mixers.

S4D, S4, DLR, S5, MEGA's EMA and the gMLP long convolution all reduce to a
per-channel convolution of the input with a kernel as long as the sequence.
The real ones call `fft_conv`; S5's and the LRU's complex states, `x_k = z
x_(k-1) + B u_k` for complex z, `complex_fft_conv` where their recurrence
is `"convolution"` (`ssm_kernels.stacked_recurrence`). The small-kernel
convolution's grouped layers (`ConvBlock`), which mix channels within each
group, call `grouped_fft_conv`.

References:
- S4 (bidirectional kernels, pad to 2L): https://arxiv.org/abs/2111.00396
- "You Can Train from Scratch", section 2 (SSMs and MEGA as long
  convolutions): https://openreview.net/forum?id=PdaPky8MUn
"""

import functools

from keras import ops

from lra_keras.backend_utils import channels_last
from lra_keras.backend_utils import conjugate
from lra_keras.backend_utils import irfft
from lra_keras.backend_utils import rfft
from lra_keras.backend_utils import stored_channels_last
from lra_keras.backend_utils import sum_of_conjugate_products
from lra_keras.backend_utils import sum_rows


def complex_multiply(a_real, a_imag, b_real, b_imag):
    """(a_real + i a_imag) * (b_real + i b_imag) on real/imaginary pairs.

    Keras has no complex dtype, so complex numbers travel as two real tensors.
    """
    return (
        a_real * b_real - a_imag * b_imag,
        a_real * b_imag + a_imag * b_real,
    )


def fft_conv(inputs, kernel, backward_kernel=None):
    """Long convolution along the time axis through `keras.ops.rfft`.

    `y[t, c] = sum_{s <= t} kernel[c, t - s] * u[s, c]` (causal), plus, when
    `backward_kernel` is given, `sum_{s > t} backward_kernel[c, s - t - 1] *
    u[s, c]`: a second kernel for the future, starting at lag 1 so that the
    present is counted once. Both are zero-padded to at least 2L before
    the FFT (`_fft_length`), so the result is a linear (not circular)
    convolution.

    The FFT runs in float32 whatever the input dtype; the result is cast
    back.

    Args:
        inputs: tensor (batch, length, channels).
        kernel: tensor (channels, length): the causal kernel, lag 0 first.
            It may also be (batch, channels, length).
        backward_kernel: optional tensor of the same shape: the kernel
            applied to future positions, lag 1 first.

    Returns:
        Tensor (batch, length, channels), the dtype of `inputs`.
    """
    dtype = inputs.dtype
    length = ops.shape(inputs)[1]
    # (B, C, L); a transposed view, which `rfft` copies into its padding
    u = ops.transpose(ops.cast(inputs, "float32"), (0, 2, 1))
    k = ops.cast(kernel, "float32")  # (C, L)
    n = _fft_length(length)
    if backward_kernel is not None:
        # Place the backward kernel, reversed, at the end of the
        # n-periodic kernel: index n - 1 - j holds lag -(j + 1).
        k_back = ops.flip(ops.cast(backward_kernel, "float32"), axis=-1)
        if isinstance(n, int) and n != 2 * length:  # zeros between
            k = ops.pad(k, [(0, 0)] * (len(k.shape) - 1)
                        + [(0, n - 2 * length)])
        k = ops.concatenate([k, k_back], axis=-1)  # (C, n)
    y = _convolve(u, k, length, n)  # (B, C, L)
    y = channels_last(y)  # (B, L, C)
    return ops.cast(y, dtype)


def _fft_length(length):
    """The transforms' length for a linear convolution of `length`
    positions with a kernel as long, each side of the present:
    `_fast_length(2 * length)`, or 2 * length where the length is known
    only at run time."""
    if not isinstance(length, int):
        return 2 * length
    return _fast_length(2 * length)


@functools.cache
def _fast_length(points):
    """The smallest even 2^a 3^b 5^c at least `points`: twice the next
    5-smooth number at least points / 2, so every power of two is itself.
    Lengths with a larger prime factor transform slower, and odd ones
    slower under PyTorch. An `rfft` and `irfft` pair of (32, 64) rows of
    1,025 positions took 19.1 / 28.2 / 19.2 ms at 2,050 = 2 x 5^2 x 41
    points and 14.0-19.6 / 9.7-10.6 / 11.9-14.7 ms at 2,160 = 2^4 3^3 5
    (TensorFlow / PyTorch / JAX on 2 cores); (2, 64) rows of 16,385 took
    38.6 ms under PyTorch at 33,750 = 2 x 3^3 x 5^4 points, 68-73 ms at
    the odd 32,805 = 3^8 x 5 (`scipy.fft.next_fast_len(32770,
    real=True)`) and 113 ms at 32,770 (docs/results/fft_lengths_epyc/).
    Cached: PyTorch's eager steps ask for it in every convolution.
    """
    half = -(-points // 2)
    while not _five_smooth(half):
        half += 1
    return 2 * half


def _five_smooth(n):
    """Whether `n` has no prime factor above 5."""
    for p in (2, 3, 5):
        while n % p == 0:
            n //= p
    return n == 1


def _convolve(u, k, length, fft_length):
    """The first `length` taps of the `fft_length`-periodic convolution
    of `u` (B, C, L) with `k` ((C or B, C), L or `fft_length`), both
    zero-padded to `fft_length` (at least 2L, `_fft_length`), with
    its gradients written out in the frequency domain: for the output
    gradient g (zero past L), `du = irfft(rfft(g) conj(rfft(k)))` and `dk
    = irfft(sum over the batch of conj(rfft(u)) rfft(g))`, the correlations
    that the chain rule gives. One forward and one inverse transform of
    the batch each way. Autodiff through the transforms did more:
    PyTorch's backward of `rfft` ran a full complex transform (0.9 ms a
    call at (32, 64, 192), two a step of the quick S4D), and the quick
    S4D's step is 28% faster with this under TensorFlow, 9% under JAX
    (`benchmarks/preset_step.py`). The spectra are the backend's own
    complex tensors (`backend_utils.rfft`), a product one pass where
    Keras's real and imaginary parts took six and a join: a 4-block step
    at L = 4096, batch 16, width 128 on 2 cores went 3.47 -> 2.61 s (RTF),
    3.57 -> 2.79 s (S4D) under PyTorch, 0.93 -> 0.85 s and 0.93 -> 0.87 s
    under TensorFlow, and stayed 1.4-1.5 s under JAX, whose XLA fuses the
    parts' arithmetic either way (`benchmarks/mixers.py`)."""
    taps = ops.shape(k)[-1]
    shared = len(k.shape) == 2  # one kernel for the whole batch

    @ops.custom_gradient
    def convolve(u, k):
        u_hat = rfft(u, fft_length)  # (B, C, L + 1), complex
        k_hat = rfft(k, fft_length)  # (C, L + 1)
        y = irfft(u_hat * k_hat, fft_length)  # (B, C, fft_length)

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            g_hat = rfft(upstream, fft_length)
            du = irfft(g_hat * conjugate(k_hat), fft_length)
            if shared:  # g_hat is overwritten under PyTorch
                dk_hat = sum_of_conjugate_products(u_hat, g_hat)
            else:
                dk_hat = conjugate(u_hat) * g_hat
            dk = irfft(dk_hat, fft_length)
            # u is a transposed view of (B, L, C) activations
            return stored_channels_last(du[..., :length]), dk[..., :taps]

        return y[:, :, :length], grad

    return convolve(u, k)


def complex_fft_conv(v, z_real, z_imag, causal=True):
    """Complex per-channel convolutions of `v` with `z`, causal and, with
    `causal=False`, anti-causal too, through complex FFTs.

    `x[k] = sum_{m <= k} z[k - m] v[m]` and `x'[k] = sum_{m >= k} z[m - k]
    v[m]` (the states of `x_k = z x_(k-1) + v_k` run forwards and
    backwards in time, for `z[l]` the powers of a mode; both without
    conjugation). Padded to P >= 2L points (`_fft_length`), with V and Z
    the transforms of the complex `v` and `z`: `X = V Z`, and `x'`, the
    correlation of `v` with `z`, is `X'[j] = V[j] Z[-j]`. A direction is
    one complex product and one inverse transform, the transform of `v`
    shared: a forward pass in both directions transforms N complex
    channels three times (and the kernel), where `fft_conv`'s four real
    convolutions per direction, the reverse one of the reversed sequence,
    transformed 16 real ones of N channels (a complex transform costs
    about two real ones). The gradients are written out in the frequency
    domain, as `fft_conv`'s: for the output gradients g, h (as complex numbers,
    `d/d re + i d/d im`), `dV = G conj(Z) + H conj(Z[-j])`, `dZ = sum over
    the batch of G conj(V) + (conj(V) H)[-j]`.

    Complex numbers are stacked on the last axis, real parts first, so
    that the products into and out of the states are one matrix product
    each (`S5`).

    Args:
        v: tensor (batch, L, 2N): the real parts, then the imaginary.
        z_real, z_imag: tensors (N, L), lag 0 first.
        causal: bool. False adds the anti-causal states.

    Returns:
        A float32 tensor (batch, L, 2N) (causal) or (batch, L, 4N): the
        causal states' real and imaginary parts, then the anti-causal
        ones'.
    """
    length = ops.shape(v)[1]
    w = ops.transpose(ops.cast(v, "float32"), (0, 2, 1))  # (B, 2N, L)
    k = ops.concatenate([ops.cast(z_real, "float32"),
                         ops.cast(z_imag, "float32")], 0)  # (2N, L)
    points = _fft_length(length)  # P, at least 2L
    scale = 1.0 / ops.cast(points, "float32")

    def transform(x):  # (..., 2M, L) real parts over imaginary -> (.., M, P)
        x = ops.pad(x, [(0, 0)] * (len(x.shape) - 1)
                    + [(0, points - length)])
        m = ops.shape(x)[-2] // 2
        return ops.fft((x[..., :m, :], x[..., m:, :]))

    def inverse(a_conj, parts=1):
        """The first L positions of the inverse transform of A, given
        conj(A) / P (Keras has no inverse complex FFT: it is the
        conjugate of the transform of the conjugate), as (..., 2M, L) real
        parts over imaginary, `parts` groups of channels in turn."""
        re, im = ops.fft(a_conj)
        m = ops.shape(re)[-2] // parts
        return ops.concatenate(
            [t for j in range(parts) for t in (
                re[..., j * m:(j + 1) * m, :length],
                -im[..., j * m:(j + 1) * m, :length])], -2)

    def mul(a, b, conj_a=False, conj_b=False):
        return complex_multiply(a[0], -a[1] if conj_a else a[1],
                                b[0], -b[1] if conj_b else b[1])

    def negated_frequencies(a):  # a[-j] for the P-periodic spectrum
        return tuple(ops.concatenate([t[..., :1], ops.flip(t[..., 1:], -1)],
                                     -1) for t in a)

    def scaled(a, c):
        return a[0] * c, a[1] * c

    def added(a, b):
        return a[0] + b[0], a[1] + b[1]

    def stacked(*parts):
        return (ops.concatenate([a[0] for a in parts], -2),
                ops.concatenate([a[1] for a in parts], -2))

    def split(a, count):
        m = ops.shape(a[0])[-2] // count
        return [tuple(t[..., j * m:(j + 1) * m, :] for t in a)
                for j in range(count)]

    @ops.custom_gradient
    def convolve(w, k):
        v_hat = transform(w)
        z_hat = scaled(transform(k), scale)  # Z / P
        z_neg = None if causal else negated_frequencies(z_hat)
        # conj(X) / P = conj(V) conj(Z) / P, per direction
        parts = [mul(v_hat, z_hat, conj_a=True, conj_b=True)]
        if not causal:
            parts.append(mul(v_hat, z_neg, conj_a=True, conj_b=True))
        x = inverse(stacked(*parts), len(parts))  # (B, 2N or 4N, L)

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            n = ops.shape(upstream)[-2] // (2 * len(parts))
            g = transform(ops.concatenate(  # per direction: re over im
                [upstream[..., (2 * d + part) * n:(2 * d + part + 1) * n, :]
                 for part in (0, 1) for d in range(len(parts))], -2))
            g = split(g, len(parts))
            # conj(dV) / P = conj(G) Z / P (+ conj(H) Z[-j] / P)
            dv = mul(g[0], z_hat, conj_a=True)
            # conj(dZ) = sum over the batch of conj(G) V (+ (V conj(H))[-j])
            dz = mul(g[0], v_hat, conj_a=True)
            dz = (sum_rows(dz[0]), sum_rows(dz[1]))
            if not causal:
                dv = added(dv, mul(g[1], z_neg, conj_a=True))
                back = mul(v_hat, g[1], conj_b=True)
                dz = added(dz, negated_frequencies(
                    (sum_rows(back[0]), sum_rows(back[1]))))
            # w is a transposed view of (B, L, 2N) activations
            return (stored_channels_last(inverse(dv)),
                    inverse(scaled(dz, scale)))

        return x, grad

    return channels_last(convolve(w, k))


def grouped_fft_conv(inputs, kernel, groups, left):
    """A grouped convolution (`keras.ops.conv`'s) computed through the FFT.

    `y[t, h] = sum_j sum_c kernel[j, c, h] * u[t + j - left, g * C + c]`
    for output channel h of group g = h // (H / groups), the C = D / groups
    input channels of that group, taps j = 0..K-1, and `u` zero outside
    0..L-1: "same" padding with `left` positions on the past side (K // 2
    centred, K - 1 causal) and K - 1 - left on the future side. The sum
    over each group's input channels is taken in the frequency domain, so
    one transform of the input and one inverse transform of the output are
    all the FFTs; its cost does not grow with K.

    Why: grouped convolutions are slow on a CPU everywhere but in
    PyTorch's kernels. A training step of a `ConvBlock` at YCTFS's
    Pathfinder layer (32 groups, K = 61, width 64 to 128, batch 32, L =
    1024, 2 cores) took 57 s under TensorFlow, 1.5 s under JAX and 0.22 s
    under PyTorch with `keras.ops.conv`, and 0.14, 0.24 and 0.17 s with
    this function (`benchmarks/conv_block.py`). With its spectra the
    backend's own complex tensors (`backend_utils.rfft`) in place of
    Keras's real and imaginary parts, that benchmark's FFT step went 0.101
    -> 0.056 s under JAX and 0.079 -> 0.057 s under PyTorch, but 0.058
    -0.059 -> 0.065-0.071 s under TensorFlow (three runs of each).

    The transforms run in float32 whatever the input dtype; the result is
    cast back. Gradients are the backends' autodiff of the transforms.

    Args:
        inputs: tensor (batch, length, D).
        kernel: tensor (K, D / groups, H), `keras.layers.Conv1D`'s layout.
        groups: int, dividing D and H.
        left: int in 0..K-1: the taps that reach into the past.

    Returns:
        Tensor (batch, length, H), the dtype of `inputs`.
    """
    dtype = inputs.dtype
    taps, per_group, out_dim = kernel.shape
    batch, length = ops.shape(inputs)[0], ops.shape(inputs)[1]
    out_per_group = out_dim // groups
    # Linear, not circular: lags run from -(K - 1 - left) to left and
    # positions from 0 to L - 1, so L + K - 1 points suffice; rounded up
    # to a faster transform length (`_fast_length`; a multiple of 64 where
    # the length is known only at run time).
    if isinstance(length, int):
        fft_length = _fast_length(length + taps - 1)
    else:
        fft_length = (length + taps - 1 + 63) // 64 * 64
    k = ops.cast(kernel, "float32")
    k = ops.transpose(ops.reshape(k, (taps, per_group, groups,
                                      out_per_group)), (2, 1, 3, 0))
    # (G, C, O, K) -> the fft_length-periodic kernel: lag p >= 0 (tap
    # left - p) at index p, lag -q (tap left + q) at index fft_length - q.
    past = ops.flip(k[..., :left + 1], axis=-1)
    future = ops.flip(k[..., left + 1:], axis=-1)
    k = ops.concatenate(
        [ops.pad(past, ((0, 0), (0, 0), (0, 0), (0, fft_length - taps))),
         future], axis=-1)
    k_hat = rfft(k, fft_length)  # (G, C, O, F), complex
    u = ops.transpose(ops.cast(inputs, "float32"), (0, 2, 1))
    u = ops.reshape(u, (batch, groups, per_group, length))
    u_hat = rfft(u, fft_length)[:, :, :, None]  # (B, G, C, 1, F)
    y = irfft(ops.sum(u_hat * k_hat, axis=2),
              fft_length)  # (B, G, O, fft_length)
    y = ops.reshape(y[..., :length], (batch, out_dim, length))
    return ops.cast(channels_last(y), dtype)
