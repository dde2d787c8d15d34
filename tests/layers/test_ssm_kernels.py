import numpy as np
import pytest

from lra_keras.layers.ssm_kernels import block_size_for
from lra_keras.layers.ssm_kernels import power_kernel
from lra_keras.layers.ssm_kernels import shared_modes_kernel
from lra_keras.layers.ssm_kernels import vandermonde_kernel
from tests.testing import assert_allclose
from tests.testing import value_and_grads


def _modes(shape=(3, 5), seed=0):
    rng = np.random.default_rng(seed)
    coeff = rng.normal(size=shape) + 1j * rng.normal(size=shape)
    log_z = -np.abs(rng.normal(size=shape)) * 0.05 + 1j * rng.normal(
        size=shape)
    return coeff, log_z


def numpy_vandermonde(coeff, log_z, length):
    positions = np.arange(length)
    return np.real(
        np.einsum("...n,...nl->...l", coeff,
                  np.exp(log_z[..., None] * positions))
    )


@pytest.mark.parametrize("length", [1, 2, 10, 37, 100])
def test_blocked_vandermonde_matches_direct_product(length):
    coeff, log_z = _modes()
    k = vandermonde_kernel(coeff.real, coeff.imag, log_z.real, log_z.imag,
                           length)
    assert_allclose(k, numpy_vandermonde(coeff, log_z, length), atol=1e-4)


@pytest.mark.parametrize("block_size", [1, 3, 64])
def test_every_block_size_gives_the_same_kernel(block_size):
    coeff, log_z = _modes()
    k = vandermonde_kernel(coeff.real, coeff.imag, log_z.real, log_z.imag,
                           50, block_size=block_size)
    assert_allclose(k, numpy_vandermonde(coeff, log_z, 50), atol=1e-4)


def test_vandermonde_broadcasts_leading_axes():
    coeff, log_z = _modes((2, 3, 4))
    k = vandermonde_kernel(coeff.real, coeff.imag, log_z[0].real,
                           log_z[0].imag, 9)
    expected = numpy_vandermonde(coeff, np.broadcast_to(log_z[0], (2, 3, 4)),
                                 9)
    assert_allclose(k, expected, atol=1e-4)


@pytest.mark.parametrize("length", [1, 2, 37, 100])
def test_shared_modes_kernel_matches_direct_product(length):
    # DLR's omega: one set of modes (N,) for every (direction, channel)
    coeff, log_z = _modes((2, 3, 5), seed=1)
    k = shared_modes_kernel(coeff.real, coeff.imag, log_z[0, 0].real,
                            log_z[0, 0].imag, length)
    expected = numpy_vandermonde(
        coeff, np.broadcast_to(log_z[0, 0], coeff.shape), length)
    assert tuple(k.shape) == (2, 3, length)
    assert_allclose(k, expected, atol=1e-4)


def test_shared_modes_kernel_gradients_match_the_direct_product():
    import keras

    coeff, log_z = _modes((2, 3, 6), seed=2)
    weights = (coeff.real, coeff.imag, log_z[0, 0].real, log_z[0, 0].imag)
    upstream = np.random.default_rng(3).normal(size=(2, 3, 40))

    def loss(kernel):
        return keras.ops.sum(
            kernel * keras.ops.convert_to_tensor(upstream, "float32"))

    def shared(c_re, c_im, z_re, z_im):
        return loss(shared_modes_kernel(c_re, c_im, z_re, z_im, 40))

    def per_channel(c_re, c_im, z_re, z_im):
        z_re, z_im = (keras.ops.broadcast_to(z, (2, 3, 6))
                      for z in (z_re, z_im))
        return loss(vandermonde_kernel(c_re, c_im, z_re, z_im, 40))

    (value, got), (expected, want) = (
        value_and_grads(fn, *weights) for fn in (shared, per_channel))
    assert_allclose(value, expected, rtol=1e-5, atol=1e-4)
    for g, w in zip(got, want):
        assert_allclose(g, w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("length", [1, 8, 30])
def test_power_kernel_matches_powers(length):
    _, log_z = _modes((4,))
    real, imag = power_kernel(log_z.real, log_z.imag, length)
    z = np.exp(log_z[:, None] * np.arange(length))
    assert_allclose(real, z.real, atol=1e-5)
    assert_allclose(imag, z.imag, atol=1e-5)


def test_block_size_covers_length():
    for length in (1, 2, 3, 4, 5, 99, 100, 101, 16384):
        b = block_size_for(length)
        assert b * ((length + b - 1) // b) >= length
        assert (b - 1) ** 2 < length


@pytest.mark.parametrize("causal", [True, False])
def test_fft_recurrence_gradients_match_the_scans(causal):
    # `diagonal_recurrence`'s written-out gradients (complex_fft_conv: the
    # reverse states as a correlation) against autodiff of the parallel
    # scan, for every input: v's two parts and log z's.
    import keras

    from lra_keras.layers.ssm_kernels import diagonal_recurrence
    from lra_keras.layers.ssm_kernels import diagonal_recurrence_scan

    rng = np.random.default_rng(4)
    batch, length, modes = 2, 23, 3
    v_real, v_imag = rng.normal(size=(2, batch, length, modes))
    log_z_real = -np.abs(rng.normal(size=modes)) * 0.2
    log_z_imag = rng.normal(size=modes)
    upstream = rng.normal(size=(2, 2, batch, length, modes))

    def loss(recurrence):
        def fn(v_re, v_im, z_re, z_im):
            total = 0.0
            for d, pair in enumerate(recurrence((v_re, v_im), (z_re, z_im),
                                                causal=causal)):
                for part, x in enumerate(pair):
                    total = total + keras.ops.sum(x * keras.ops.cast(
                        upstream[d, part], "float32"))
            return total
        return fn

    args = (v_real, v_imag, log_z_real, log_z_imag)
    value, grads = value_and_grads(loss(diagonal_recurrence), *args)
    expected, want = value_and_grads(loss(diagonal_recurrence_scan), *args)
    assert_allclose(value, expected, rtol=1e-4, atol=1e-4)
    for got, ref in zip(grads, want):
        assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
