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


def test_complex_multiply():
    a = np.array([1.0 + 2.0j, -0.5 + 0.1j])
    b = np.array([3.0 - 1.0j, 2.0 + 2.0j])
    real, imag = complex_multiply(a.real, a.imag, b.real, b.imag)
    np.testing.assert_allclose(np.asarray(real), (a * b).real)
    np.testing.assert_allclose(np.asarray(imag), (a * b).imag)
