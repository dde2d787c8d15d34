import keras
import numpy as np
import pytest

from lra_keras.layers.ssm_kernels import block_size_for
from lra_keras.layers.ssm_kernels import first_taps
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


def test_first_taps_keeps_a_tensor_already_that_long():
    # The same tensor where nothing is cut (no slice, so no slice gradient
    # under TensorFlow); the first taps otherwise, as a plain slice.
    x = keras.ops.convert_to_tensor(
        np.arange(24, dtype="float32").reshape(2, 3, 4))
    assert first_taps(x, 4) is x
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(first_taps(x, 3)),
        np.arange(24, dtype="float32").reshape(2, 3, 4)[..., :3])
    length = keras.ops.convert_to_tensor(np.int32(4))  # not a Python int
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(first_taps(x, length)),
        keras.ops.convert_to_numpy(x))


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


@pytest.mark.parametrize("shape", [(4,), (2, 3)])
@pytest.mark.parametrize("length,block_size", [(1, None), (8, None),
                                               (30, None), (30, 4)])
def test_power_kernel_matches_powers(length, block_size, shape):
    # leading axes kept; a last block that runs past L cut off. Under
    # JAX the product is XLA's matrix product, under PyTorch and
    # TensorFlow's eager ops the elementwise one; TensorFlow under XLA
    # takes the matrix product too.
    _, log_z = _modes(shape)
    real, imag = power_kernel(log_z.real, log_z.imag, length, block_size)
    z = np.exp(log_z[..., None] * np.arange(length))
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        compiled = tf.function(power_kernel, jit_compile=True)
        xla_real, xla_imag = compiled(log_z.real.astype("float32"),
                                      log_z.imag.astype("float32"), length,
                                      block_size)
        assert_allclose(xla_real, z.real, atol=1e-5)
        assert_allclose(xla_imag, z.imag, atol=1e-5)
    assert_allclose(real, z.real, atol=1e-5)
    assert_allclose(imag, z.imag, atol=1e-5)


def test_block_size_covers_length():
    for length in (1, 2, 3, 4, 5, 99, 100, 101, 16384):
        b = block_size_for(length)
        assert b * ((length + b - 1) // b) >= length
        assert (b - 1) ** 2 < length


def numpy_recurrence(v, log_z, causal):
    """x_k = z x_(k-1) + v_k by a loop in complex128, and x'_k = z x'_(k+1)
    + v_k after it unless `causal`; stacked as `stacked_recurrence`'s."""
    n = v.shape[-1] // 2
    v = v[..., :n] + 1j * v[..., n:]
    z = np.exp(log_z[0] + 1j * log_z[1])
    out = []
    for order in [range(v.shape[1])] + ([] if causal else [
            range(v.shape[1] - 1, -1, -1)]):
        x, states = np.zeros(v[:, 0].shape, complex), np.zeros(v.shape,
                                                               complex)
        for k in order:
            x = z * x + v[:, k]
            states[:, k] = x
        out += [states.real, states.imag]
    return np.concatenate(out, -1)


@pytest.mark.parametrize("chunk", [None, 4])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("length", [1, 4, 5, 37])
def test_chunked_recurrence_matches_a_loop(length, causal, chunk):
    # Chunks of 4 positions: up to 10 chunks, the states carried across
    # them; the default (32) one or two. |z| up to 0.9999.
    from lra_keras.layers.ssm_kernels import chunked_recurrence

    rng = np.random.default_rng(length)
    n = 6
    log_z = (np.log(np.linspace(0.3, 0.9999, n)).astype("float32"),
             rng.uniform(-np.pi, np.pi, n).astype("float32"))
    v = rng.normal(size=(3, length, 2 * n)).astype("float32")
    x = chunked_recurrence(v, log_z, causal, chunk=chunk)
    expected = numpy_recurrence(v, log_z, causal)
    assert tuple(x.shape) == expected.shape
    assert_allclose(x, expected, atol=2e-5 * np.abs(expected).max())


@pytest.mark.parametrize("length,chunk", [
    (None, 64), (1, 32), (1024, 32), (2048, 32), (2049, 64), (4000, 64),
    (8192, 64), (16383, 64), (16384, 128), (65535, 128), (65536, 256)])
def test_recurrence_chunk_by_length(length, chunk):
    from lra_keras.layers.ssm_kernels import recurrence_chunk

    assert recurrence_chunk(length) == chunk


def test_chunked_recurrence_at_path_x_length_matches_a_loop():
    # Path-X's 16K positions: the default chunks of 128, 128 chunks
    # carried across, both directions; |z| up to 0.9999. The float32
    # phases of lags up to 16K put the slowest mode's states 4.1e-4 to
    # 4.8e-4 of the largest state from float64's with chunks of 32, 64
    # or 128 alike (2026-12-06).
    from lra_keras.layers.ssm_kernels import chunked_recurrence

    rng = np.random.default_rng(16)
    n = 3
    log_z = (np.log(np.array([0.5, 0.99, 0.9999])).astype("float32"),
             rng.uniform(-np.pi, np.pi, n).astype("float32"))
    v = rng.normal(size=(1, 16384, 2 * n)).astype("float32")
    x = chunked_recurrence(v, log_z, causal=False)
    expected = numpy_recurrence(v, log_z, False)
    assert_allclose(x, expected, atol=1e-3 * np.abs(expected).max())


def test_chunked_recurrence_runs_at_lengths_known_only_when_called():
    # A model whose length axis is None: under TensorFlow `predict` traces
    # it again with the length unknown once a third length comes.
    import keras

    from lra_keras.layers.ssm_kernels import chunked_recurrence

    n = 3
    log_z = (np.full(n, -0.1, "float32"), np.linspace(-1, 1, n, dtype=
                                                     "float32"))
    inputs = keras.Input((None, 2 * n))
    model = keras.Model(inputs, keras.layers.Lambda(
        lambda v: chunked_recurrence(v, log_z, False, chunk=4))(inputs))
    rng = np.random.default_rng(0)
    for length in (5, 9, 14, 3):
        v = rng.normal(size=(2, length, 2 * n)).astype("float32")
        assert_allclose(model.predict(v, verbose=0),
                        numpy_recurrence(v, log_z, False), atol=1e-4)


@pytest.mark.parametrize("recurrence", ["convolution", "chunked"])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("length", [70, 1024])
def test_recurrence_gradients_match_the_scans(causal, recurrence, length):
    # The gradients of `diagonal_recurrence` by FFT (written out,
    # complex_fft_conv: the reverse states as a correlation) and by
    # chunks (autodiff through the products) against autodiff of the
    # parallel scan, for every input: v's two parts and log z's.
    import functools

    import keras

    from lra_keras.layers.ssm_kernels import diagonal_recurrence
    from lra_keras.layers.ssm_kernels import diagonal_recurrence_scan

    rng = np.random.default_rng(4)
    # 70 positions: three chunks of the default 32. 1,024: the FFT's
    # states come out in rows 4 KiB apart, which under PyTorch take
    # `channels_last`'s padded rows, their gradient `stored_channels_last`.
    batch, modes = 2, 3
    v_real, v_imag = rng.normal(size=(2, batch, length, modes))
    log_z_real = -np.abs(rng.normal(size=modes)) * 0.2
    log_z_imag = rng.normal(size=modes)
    upstream = rng.normal(size=(2, 2, batch, length, modes))

    def loss(states):
        def fn(v_re, v_im, z_re, z_im):
            total = 0.0
            for d, pair in enumerate(states((v_re, v_im), (z_re, z_im),
                                            causal=causal)):
                for part, x in enumerate(pair):
                    total = total + keras.ops.sum(x * keras.ops.cast(
                        upstream[d, part], "float32"))
            return total
        return fn

    args = (v_real, v_imag, log_z_real, log_z_imag)
    value, grads = value_and_grads(loss(functools.partial(
        diagonal_recurrence, recurrence=recurrence)), *args)
    expected, want = value_and_grads(loss(diagonal_recurrence_scan), *args)
    assert_allclose(value, expected, rtol=1e-4, atol=1e-4)
    for got, ref in zip(grads, want):
        assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
