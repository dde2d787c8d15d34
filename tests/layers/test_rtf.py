import keras
import numpy as np
import pytest

from lra_keras.layers.rtf import RTF
from lra_keras.layers.rtf import transfer_function_kernel
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import fit_one_step
from tests.testing import numpy_causal_conv
from tests.testing import numpy_gelu
from tests.testing import to_numpy
from tests.testing import value_and_grads


def impulse_response(b, a, h0, taps):
    """H = h0 + B / A by its difference equation, driven by x = delta,
    for `taps` steps (float64): w_n = sum_i b_i x_{n-i} - sum_i a_i
    w_{n-i}, y_n = h0 x_n + w_n."""
    n = len(a)
    x = np.zeros(taps)
    x[0] = 1.0
    w = np.zeros(taps)
    for t in range(taps):
        acc = 0.0
        for i in range(1, n + 1):
            if t - i >= 0:
                acc += b[i - 1] * x[t - i] - a[i - 1] * w[t - i]
        w[t] = acc
    return h0 * x + w


@pytest.mark.parametrize("points, length", [(16, 16), (24, 10), (7, 7)])
def test_kernel_is_the_impulse_response_folded_modulo_the_fft_length(
        points, length):
    # Stable denominators (small coefficients): the response decays, so
    # 40 periods of it give the fold to float64 precision.
    rng = np.random.default_rng(points)
    n, channels = 3, 4
    b = rng.normal(size=(channels, n))
    a = rng.uniform(-0.25, 0.25, size=(channels, n))
    h0 = rng.normal(size=(channels,))
    kernel = transfer_function_kernel(b.astype("float32"),
                                      a.astype("float32"),
                                      h0.astype("float32"), length, points)
    for c in range(channels):
        h = impulse_response(b[c], a[c], h0[c], 40 * points)
        folded = h.reshape(40, points).sum(0)[:length]
        assert_allclose(to_numpy(kernel)[c], folded, atol=1e-5, rtol=1e-4)


def numpy_kernel(b, a, h0, length, points):
    """`irfft(rfft([0, b]) / rfft([1, a]) + h_0)`'s first `length` taps,
    in float64 (the fold above, as the RTF code computes it)."""
    pad = [(0, 0)] * (b.ndim - 1) + [(1, 0)]
    b = np.pad(b, pad)
    a = np.pad(a, pad, constant_values=1.0)
    spectrum = np.fft.rfft(b, points) / np.fft.rfft(a, points)
    return np.fft.irfft(spectrum + h0[..., None], points)[..., :length]


@pytest.mark.parametrize("points, length", [(16, 16), (20, 13)])
def test_kernel_gradients_are_central_differences(points, length):
    # Two directions, one denominator shared by 3 channels (broadcast
    # over them, as the layer's), the gradients of sum(w * kernel) for
    # every coefficient against central differences of numpy's kernel.
    rng = np.random.default_rng(points)
    b = rng.normal(size=(2, 1, 3, 4))
    a = rng.uniform(-0.25, 0.25, size=(2, 1, 1, 4))
    h0 = rng.normal(size=(2, 1, 3))
    w = rng.normal(size=(2, 1, 3, length))
    value, grads = value_and_grads(
        lambda b, a, h0: keras.ops.sum(
            transfer_function_kernel(b, a, h0, length, points)
            * keras.ops.convert_to_tensor(w, "float32")),
        b, a, h0)
    args = [b, a, h0]
    assert_allclose(value, np.sum(numpy_kernel(*args, length, points) * w),
                    atol=1e-4, rtol=1e-5)
    step = 1e-6
    for i, (arg, grad) in enumerate(zip(args, grads)):
        expected = np.zeros_like(arg)
        for index in np.ndindex(arg.shape):
            moved = []
            for sign in (1, -1):
                shifted = [x.copy() for x in args]
                shifted[i][index] += sign * step
                moved.append(np.sum(
                    numpy_kernel(*shifted, length, points) * w))
            expected[index] = (moved[0] - moved[1]) / (2 * step)
        assert grad.shape == arg.shape
        assert_allclose(grad, expected, atol=1e-4, rtol=1e-4)


def test_layer_is_its_kernels_convolution_without_a_d_term():
    # x = conv(u, k) (backward kernel from lag 1), GELU, GLU: no D u.
    rng = np.random.default_rng(1)
    u = rng.normal(size=(2, 12, 4)).astype("float32")
    layer = RTF(state_dim=3, num_denominators=2, causal=False)
    layer.build(u.shape)
    assert layer.D is None
    layer.numerator.assign(rng.normal(size=(2, 4, 3)) * 0.5)
    layer.denominator.assign(rng.uniform(-0.3, 0.3, size=(2, 2, 3)))
    k = to_numpy(layer.ssm_kernel(12))  # (2, 4, 12)
    # channels 0, 1 share denominator 0; channels 2, 3 denominator 1
    den = to_numpy(layer.denominator)
    for c in range(4):
        h = impulse_response(to_numpy(layer.numerator)[0, c],
                             den[0, c // 2], to_numpy(layer.feedthrough)[0,
                                                                         c],
                             40 * 12)
        assert_allclose(k[0, c], h.reshape(40, 12).sum(0), atol=1e-5)
    y = numpy_gelu(numpy_causal_conv(u, k[0], k[1]))
    z = y @ to_numpy(layer.output_dense.kernel) + to_numpy(
        layer.output_dense.bias)
    expected = z[..., :4] / (1.0 + np.exp(-z[..., 4:]))
    assert_allclose(layer(u), expected, atol=1e-4, rtol=1e-4)


def test_initialisation_is_the_rtf_codes_zeros():
    # a = b = 0: the kernel is h_0 at lag 0, h_0 ~ N(0, 1).
    keras.utils.set_random_seed(2)
    layer = RTF(state_dim=8)
    layer.build((1, 20, 256))
    k = to_numpy(layer.ssm_kernel(20))[0]
    h0 = to_numpy(layer.feedthrough)[0]
    assert_allclose(k[:, 0], h0, atol=1e-6)
    assert_allclose(k[:, 1:], np.zeros((256, 19)), atol=1e-6)
    assert abs(np.std(h0) - 1.0) < 0.15


@pytest.mark.parametrize(
    "kwargs, message",
    [(dict(num_denominators=0), "num_denominators"),
     (dict(state_dim=8, truncation=8), "truncation")])
def test_bad_arguments_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RTF(**kwargs)


def test_denominators_must_divide_the_width():
    with pytest.raises(ValueError, match="divide"):
        RTF(state_dim=2, num_denominators=3).build((1, 5, 4))


def test_causal_layer_ignores_the_future_and_saves(tmp_path):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 16, 4)).astype("float32")
    layer = RTF(state_dim=3, truncation=32)
    layer.build(x.shape)
    layer.numerator.assign(rng.normal(size=(1, 4, 3)))
    layer.denominator.assign(rng.uniform(-0.3, 0.3, size=(1, 4, 3)))
    x2 = x.copy()
    x2[:, 9:] = 5.0
    a, b = to_numpy(layer(x)), to_numpy(layer(x2))
    np.testing.assert_allclose(a[:, :9], b[:, :9], atol=1e-5)
    assert_config_round_trip(layer)
    model = keras.Sequential([keras.Input((16, 4)), layer])
    assert_saving_round_trip(model, x, tmp_path, atol=1e-5)


def test_fit_with_dynamic_lengths_updates_every_weight_but_a():
    # From a = b = 0 the denominators get no gradient at the first step
    # (dH/da = -B / A^2 = 0); the 4 other weights move.
    loss, changed = fit_one_step(RTF(state_dim=4, causal=False), 6)
    assert np.isfinite(loss) and changed == 0.8


@pytest.mark.parametrize("tie", [True, False])
def test_dropout_mask_is_tied_along_the_sequence_or_drawn_per_element(tie):
    # No output projection: y = dropout(gelu(conv(u))). With a = b = 0 and
    # h_0 = 1 the layer passes u; u = 1 gives gelu(1) everywhere, so the
    # dropped elements are the zeros of y.
    layer = RTF(state_dim=2, dropout=0.5, tie_dropout=tie,
                output_activation=None, causal=False)
    layer.build((16, 64, 16))
    layer.feedthrough.assign(np.ones((2, 16), "float32"))
    keras.utils.set_random_seed(0)
    kept = to_numpy(layer(np.ones((16, 64, 16), "float32"),
                          training=True)) != 0
    per_channel = kept.all(axis=1) | (~kept).all(axis=1)  # (batch, H)
    assert per_channel.all() == tie
    assert 0.35 < kept.mean() < 0.65  # 256 tied masks: 5 standard errors
    assert layer.get_config()["tie_dropout"] == tie
