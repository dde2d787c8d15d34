import numpy as np
import pytest

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


@pytest.mark.parametrize("length", [1, 2, 17, 64])
def test_fft_conv_matches_direct_convolution(length):
    u, k, _ = _data(length)
    expected = np.stack(
        [np.stack([np.convolve(u[b, :, c], k[c])[:length]
                   for c in range(u.shape[2])], -1)
         for b in range(u.shape[0])]
    )
    assert_allclose(fft_conv(u, k), expected, atol=1e-4)


@pytest.mark.parametrize("length", [1, 5, 33])
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


def test_fft_conv_gradients_match_direct_convolution():
    # d/du and d/dk of sum(y * w) equal the adjoint convolutions.
    u, k, k_back = _data(11, channels=2, batch=1)
    w = np.random.default_rng(1).normal(size=u.shape).astype("float32")

    def loss(u, k, k_back):
        from keras import ops

        return ops.sum(fft_conv(u, k, k_back) * ops.convert_to_tensor(w))

    _, (du, dk, dkb) = value_and_grads(loss, u, k, k_back)
    length = u.shape[1]
    eye = np.eye(length)
    # y is linear in u: du[s] = sum_t w[t] * kernel(t - s)
    ref_du = np.zeros_like(u, dtype="float64")
    ref_dk = np.zeros_like(k, dtype="float64")
    ref_dkb = np.zeros_like(k_back, dtype="float64")
    for s in range(length):
        ref_du[:, s] = (numpy_causal_conv(eye[None, :, s, None].repeat(
            2, -1), k, k_back) * w).sum(1)
    for t in range(length):
        for s in range(length):
            if s <= t:
                ref_dk[:, t - s] += (w[0, t] * u[0, s])
            else:
                ref_dkb[:, s - t - 1] += (w[0, t] * u[0, s])
    assert_allclose(du, ref_du, atol=1e-4)
    assert_allclose(dk, ref_dk, atol=1e-4)
    assert_allclose(dkb, ref_dkb, atol=1e-4)


def test_complex_multiply():
    a = np.array([1.0 + 2.0j, -0.5 + 0.1j])
    b = np.array([3.0 - 1.0j, 2.0 + 2.0j])
    real, imag = complex_multiply(a.real, a.imag, b.real, b.imag)
    np.testing.assert_allclose(np.asarray(real), (a * b).real)
    np.testing.assert_allclose(np.asarray(imag), (a * b).imag)
