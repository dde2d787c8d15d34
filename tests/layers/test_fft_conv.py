import numpy as np
import pytest

from lra_keras.layers.fft_conv import _fast_length
from lra_keras.layers.fft_conv import _fft_length
from lra_keras.layers.fft_conv import complex_multiply
from lra_keras.layers.fft_conv import fft_conv
from tests.testing import assert_allclose
from tests.testing import numpy_causal_conv
from tests.testing import value_and_grads


def _data(length, channels=3, batch=2, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(batch, length, channels)).astype("float32")
    k = rng.normal(size=(channels, length)).astype("float32")
    k_back = rng.normal(size=(channels, length)).astype("float32")
    return u, k, k_back


def test_transform_lengths_are_the_next_even_five_smooth_numbers():
    # The smallest even 2^a 3^b 5^c at least the points asked for, found
    # by brute force: every power of two itself, 2 x 1,184 = 2,368 ->
    # 2,400, 2 x 16,385 = 32,770 -> 33,750 (not the odd 32,805). The
    # direct convolutions and the gradients below run at lengths past 2L
    # (17, 33, 13), so they check the padding; `_fft_length` of a length
    # known only at run time is 2L.
    def smooth(n):
        for p in (2, 3, 5):
            while n % p == 0:
                n //= p
        return n == 1

    for points in range(1, 1200):
        n = points
        while n % 2 or not smooth(n):
            n += 1
        assert _fast_length(points) == n, points
    assert [_fft_length(x) for x in (13, 17, 1184, 1025, 16384, 16385)] == [
        30, 36, 2400, 2160, 32768, 33750]


@pytest.mark.parametrize("length", [1, 2, 17, 64])
def test_fft_conv_matches_direct_convolution(length):
    u, k, _ = _data(length)
    expected = np.stack(
        [np.stack([np.convolve(u[b, :, c], k[c])[:length]
                   for c in range(u.shape[2])], -1)
         for b in range(u.shape[0])]
    )
    assert_allclose(fft_conv(u, k), expected, atol=1e-4)


@pytest.mark.parametrize("length", [1, 5, 17, 33])
def test_bidirectional_fft_conv_matches_direct_convolution(length):
    u, k, k_back = _data(length)
    assert_allclose(fft_conv(u, k, k_back),
                    numpy_causal_conv(u, k, k_back), atol=1e-4)


def test_causal_fft_conv_ignores_future():
    u, k, _ = _data(32)
    u2 = u.copy()
    u2[:, 20:] = 100.0
    y, y2 = fft_conv(u, k), fft_conv(u2, k)
    assert_allclose(y[:, :20], y2[:, :20], atol=1e-3)


def test_kernel_with_batch_axis():
    u, k, _ = _data(9, batch=2)
    kb = np.stack([k, 2 * k])  # (batch, C, L)
    y = fft_conv(u, kb)
    assert_allclose(y[0], fft_conv(u[:1], k)[0], atol=1e-4)
    assert_allclose(y[1], fft_conv(u[1:], 2 * k)[0], atol=1e-4)


def test_fft_conv_keeps_dtype():
    import keras
    from keras import ops

    u, k, _ = _data(8)
    y = fft_conv(ops.cast(u, "float16"), k)
    assert keras.backend.standardize_dtype(y.dtype) == "float16"


@pytest.mark.parametrize("batch, per_example, bidirectional", [
    (1, False, True), (3, False, True), (3, False, False), (2, True, True),
])
def test_fft_conv_gradients_match_direct_convolution(batch, per_example,
                                                      bidirectional):
    # d/du and d/dk of sum(y * w) equal the adjoint convolutions (the
    # correlations `fft_conv` writes out): a kernel shared by the batch
    # sums its examples' gradients, a kernel per example does not.
    # 13 positions: transforms of 30 points, past 2L (`_fft_length`)
    u, k, k_back = _data(13, channels=2, batch=batch)
    rng = np.random.default_rng(1)
    if per_example:
        k = rng.normal(size=(batch, *k.shape)).astype("float32")
        k_back = rng.normal(size=k.shape).astype("float32")
    if not bidirectional:
        k_back = None
    w = rng.normal(size=u.shape).astype("float32")

    def loss(u, k, *k_back):
        from keras import ops

        return ops.sum(fft_conv(u, k, *k_back) * ops.convert_to_tensor(w))

    _, grads = value_and_grads(loss, u, k, *([] if k_back is None
                                             else [k_back]))
    length = u.shape[1]
    kernels = k if per_example else np.broadcast_to(k, (batch, *k.shape))
    backs = None if k_back is None else (
        k_back if per_example else np.broadcast_to(k_back,
                                                    (batch, *k_back.shape)))
    ref_du = np.zeros(u.shape)
    ref_dk = np.zeros(kernels.shape)
    ref_dkb = None if backs is None else np.zeros(backs.shape)
    # y[b, t, c] = sum_{s <= t} k[b, c, t - s] u[b, s, c]
    #            + sum_{s > t} k_back[b, c, s - t - 1] u[b, s, c]
    for b in range(batch):
        for t in range(length):
            for s in range(length):
                if s <= t:
                    ref_du[b, s] += w[b, t] * kernels[b, :, t - s]
                    ref_dk[b, :, t - s] += w[b, t] * u[b, s]
                elif backs is not None:
                    ref_du[b, s] += w[b, t] * backs[b, :, s - t - 1]
                    ref_dkb[b, :, s - t - 1] += w[b, t] * u[b, s]
    if not per_example:
        ref_dk = ref_dk.sum(0)
        ref_dkb = None if ref_dkb is None else ref_dkb.sum(0)
    assert_allclose(grads[0], ref_du, atol=1e-4)
    assert_allclose(grads[1], ref_dk, atol=1e-4)
    if ref_dkb is not None:
        assert_allclose(grads[2], ref_dkb, atol=1e-4)


@pytest.mark.parametrize("spacing", [1024, 1000])
def test_channels_last_is_the_transpose_with_its_gradient(spacing):
    # A (B, C, L) slice of rows `spacing` floats apart, as a transform's
    # output is: 1,024 (4 KiB) takes PyTorch's copy through padded rows,
    # 1,000 the direct copy. Both give the transpose, laid out in its own
    # order under PyTorch, and the transposed upstream as the gradient.
    import keras
    from keras import ops

    from lra_keras.backend_utils import _aliased_rows
    from lra_keras.backend_utils import channels_last

    rng = np.random.default_rng(5)
    full = rng.normal(size=(2, 3, spacing)).astype("float32")
    length = 700
    w = rng.normal(size=(2, length, 3)).astype("float32")
    x = ops.convert_to_tensor(full)[..., :length]
    y = channels_last(x)
    assert_allclose(y, np.transpose(full[..., :length], (0, 2, 1)),
                    atol=0)
    if keras.backend.backend() == "torch":
        assert _aliased_rows(x) == (spacing == 1024)
        assert y.is_contiguous()

    def loss(full):
        return ops.sum(channels_last(full[..., :length])
                       * ops.convert_to_tensor(w))

    _, (grad,) = value_and_grads(loss, full)
    expected = np.zeros_like(full)
    expected[..., :length] = np.transpose(w, (0, 2, 1))
    assert_allclose(grad, expected, atol=0)


@pytest.mark.parametrize("spacing", [1024, 1000])
def test_stored_channels_last_keeps_the_values(spacing):
    # Under PyTorch, rows 4 KiB apart come back stored as their transpose
    # (a (B, L, C) tensor seen transposed); other rows as they are.
    import keras
    from keras import ops

    from lra_keras.backend_utils import stored_channels_last

    full = np.random.default_rng(6).normal(
        size=(2, 3, spacing)).astype("float32")
    x = ops.convert_to_tensor(full)[..., :700]
    stored = stored_channels_last(x)
    assert_allclose(stored, full[..., :700], atol=0)
    if keras.backend.backend() == "torch":
        assert stored.transpose(1, 2).is_contiguous() == (spacing == 1024)


@pytest.mark.parametrize("bidirectional", [True, False])
def test_fft_conv_gradients_with_transforms_of_1024_points(bidirectional):
    # 512 positions: transforms of 1,024 points, whose rows lie 4 KiB
    # apart, so that under PyTorch the output and the input's gradient
    # take `channels_last`'s padded rows. The convolution as Toeplitz
    # matrices, y[b, :, c] = T_c u[b, :, c]: du = T_c^T w, and dk[c, j] =
    # sum over b, t of w[b, t, c] u[b, t - j, c].
    from keras import ops

    length = 512
    u, k, k_back = _data(length, channels=2, batch=2)
    w = np.random.default_rng(2).normal(size=u.shape).astype("float32")
    lags = np.arange(length)[:, None] - np.arange(length)[None, :]  # t - s
    toeplitz = np.where(lags[None] >= 0, k[:, np.clip(lags, 0, None)], 0.0)
    if bidirectional:
        toeplitz = toeplitz + np.where(
            lags[None] < 0, k_back[:, np.clip(-lags - 1, 0, None)], 0.0)
    backs = [k_back] if bidirectional else []

    def loss(u, k, *k_back):
        return ops.sum(fft_conv(u, k, *k_back) * ops.convert_to_tensor(w))

    value, grads = value_and_grads(loss, u, k, *backs)
    y = np.einsum("cts,bsc->btc", toeplitz, u.astype("float64"))
    assert_allclose(value, np.sum(y * w), rtol=1e-4)
    assert_allclose(grads[0], np.einsum("cts,btc->bsc", toeplitz, w),
                    atol=1e-3)
    # correlations of w with u, lag j >= 0 and (backward) -(j + 1)
    corr = np.stack([np.einsum("btc,btc->c", w[:, j:], u[:, :length - j])
                     for j in range(length)], -1)
    assert_allclose(grads[1], corr, atol=1e-3)
    if bidirectional:
        back = np.stack([np.einsum("btc,btc->c", w[:, :length - j - 1],
                                   u[:, j + 1:]) for j in range(length)], -1)
        assert_allclose(grads[2], back, atol=1e-3)


def test_complex_multiply():
    a = np.array([1.0 + 2.0j, -0.5 + 0.1j])
    b = np.array([3.0 - 1.0j, 2.0 + 2.0j])
    real, imag = complex_multiply(a.real, a.imag, b.real, b.imag)
    np.testing.assert_allclose(np.asarray(real), (a * b).real)
    np.testing.assert_allclose(np.asarray(imag), (a * b).imag)
