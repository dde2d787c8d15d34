import keras
import numpy as np
import pytest
from keras import ops

from lra_keras.layers.multi_head_ema import MultiHeadEMA
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import to_numpy
from tests.testing import value_and_grads


def compiled(fn):
    """`fn`, compiled in one piece under JAX.

    JAX's eager mode compiles every op separately on first use, which makes
    a first layer call several times slower than one `jax.jit`; the other
    backends run `fn` as it is.
    """
    if keras.backend.backend() == "jax":
        import jax

        return jax.jit(fn)
    return fn


def call(layer, x, mask=None, **kwargs):
    """layer(x, padding_mask=mask, **kwargs) as numpy."""
    fn = compiled(lambda x, m: layer(x, padding_mask=m, **kwargs))
    return to_numpy(fn(x, mask))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def silu(x):
    return x * sigmoid(x)


def numpy_ema_parameters(layer):
    """(b, q, c, omega) of `h_t = q h_{t-1} + b x_t`, `y_t = c . h_t`."""
    alpha = sigmoid(to_numpy(layer.ema_alpha)[..., 0].astype("float64"))
    delta = sigmoid(to_numpy(layer.ema_delta)[..., 0].astype("float64"))
    beta = to_numpy(layer.ema_beta)[..., 0].astype("float64")
    gamma = to_numpy(layer.ema_gamma).astype("float64")
    b = alpha * beta
    q = 1.0 - alpha * delta
    c = gamma / np.sqrt(layer.ema_dim)
    return b, q, c, to_numpy(layer.ema_omega).astype("float64")


def numpy_recurrence(x, b, q, c, reverse=False):
    """The EMA recurrence, one step at a time: x (B, L, D) -> (B, L, D)."""
    batch, length, dim = x.shape
    h = np.zeros((batch, dim, b.shape[-1]))
    y = np.zeros_like(x, dtype="float64")
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for t in steps:
        h = q * h + b * x[:, t, :, None]
        y[:, t] = (h * c).sum(-1)
    return y


def numpy_ema(layer, x, mask=None):
    """The whole layer in numpy: masked input, EMA(s), residual, silu."""
    x = x.astype("float64")
    if mask is not None:
        x = x * mask[..., None]
    b, q, c, omega = numpy_ema_parameters(layer)
    d = x.shape[-1]
    y = numpy_recurrence(x, b[:d], q[:d], c[:d])
    if not layer.causal:
        # The backward EMA also sees the present token (lag 0 twice).
        y = y + numpy_recurrence(x, b[d:], q[d:], c[d:], reverse=True)
    return silu(y + omega * x)


def build_layer(dim=3, **kwargs):
    layer = MultiHeadEMA(**kwargs)
    layer.build((None, None, dim))
    return layer


def test_ema_kernel_matches_recurrence():
    layer = build_layer(dim=3, ema_dim=4, causal=False)
    b, q, c, _ = numpy_ema_parameters(layer)
    length = 16
    # Impulse response of each row's recurrence.
    impulse = np.zeros((1, length, b.shape[0]))
    impulse[:, 0] = 1.0
    expected = numpy_recurrence(impulse, b, q, c)[0].T  # (rows, L)
    kernel = compiled(lambda: layer.kernel(length))()
    assert_allclose(kernel, expected, atol=1e-6, rtol=1e-5)
    # ... and the closed form sum_n b c q^l.
    lags = np.arange(length)
    closed = np.einsum("dn,dnl->dl", b * c, q[..., None] ** lags)
    np.testing.assert_allclose(expected, closed, atol=1e-12)


def build_layer_like(layer):
    """A layer with the same weights and no truncation."""
    other = build_layer(
        dim=layer.hidden_dim, ema_dim=layer.ema_dim,
        causal=layer.causal,
    )
    for w, v in zip(other.weights, layer.weights):
        w.assign(v)
    return other


def test_ema_truncation_zeroes_long_lags():
    layer = build_layer(dim=3, ema_dim=4, truncation=4)
    other = build_layer_like(layer)
    full = to_numpy(compiled(lambda: other.kernel(16))())
    k = to_numpy(compiled(lambda: layer.kernel(16))())
    np.testing.assert_allclose(k[:, :4], full[:, :4], atol=1e-7)
    np.testing.assert_array_equal(k[:, 4:], 0.0)


@pytest.mark.parametrize("causal", [True, False])
def test_ema_matches_numpy_recurrence(causal):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 16, 3)).astype("float32")
    mask = np.ones((2, 16), "float32")
    mask[1, 11:] = 0
    layer = build_layer(dim=3, ema_dim=4, causal=causal)
    expected = numpy_ema(layer, x, mask)
    assert_allclose(call(layer, x, mask), expected, atol=2e-5)


def test_two_way_kernel_counts_lag_zero_in_both_directions():
    # An independent formulation: direct two-sided convolution with the
    # closed-form kernels, lag 0 weighted k1[0] + k2[0].
    rng = np.random.default_rng(1)
    length, dim = 16, 3
    x = rng.normal(size=(1, length, dim))
    layer = build_layer(dim=dim, ema_dim=4, causal=False)
    b, q, c, omega = numpy_ema_parameters(layer)
    lags = np.arange(length)
    k = np.einsum("dn,dnl->dl", b * c, q[..., None] ** lags)  # (2D, L)
    k1, k2 = k[:dim], k[dim:]
    y = np.zeros((length, dim))
    for t in range(length):
        for s in range(length):
            if s < t:
                y[t] += k1[:, t - s] * x[0, s]
            elif s > t:
                y[t] += k2[:, s - t] * x[0, s]
            else:
                y[t] += (k1[:, 0] + k2[:, 0]) * x[0, s]
    expected = silu(y + omega * x[0])
    assert_allclose(call(layer, x.astype("float32"))[0], expected, atol=2e-5)


@pytest.mark.parametrize("causal", [True, False])
def test_ema_fft_path_matches_step_path(causal):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 16, 3)).astype("float32")
    mask = np.ones((2, 16), "float32")
    mask[0, 15:] = 0
    layer = build_layer(dim=3, ema_dim=4, causal=causal)
    fft = call(layer, x, mask)
    steps = call(layer, x, mask, use_fft=False)
    assert_allclose(fft, steps, atol=1e-5)


def test_ema_step_by_step_decoding_equals_full_call():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 16, 3)).astype("float32")
    layer = build_layer(dim=3, ema_dim=4)
    full = call(layer, x)
    state = None
    for t in range(16):
        y, state = layer.step(x[:, t], state)
        np.testing.assert_allclose(to_numpy(y), full[:, t], atol=1e-5)
    with pytest.raises(ValueError, match="causal"):
        build_layer(dim=3, causal=False).step(x[:, 0])


def test_causal_ema_ignores_future_tokens():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 16, 3)).astype("float32")
    x2 = x.copy()
    x2[:, 9:] = rng.normal(size=(2, 7, 3)) * 10
    layer = build_layer(dim=3, ema_dim=4, causal=True)
    a, b = call(layer, x), call(layer, x2)
    np.testing.assert_allclose(a[:, :9], b[:, :9], atol=1e-5)
    assert not np.allclose(a[:, 9:], b[:, 9:])


def test_padding_does_not_change_real_positions():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 16, 3)).astype("float32")
    mask = np.ones((2, 16), bool)
    mask[0, 10:] = False
    mask[1, 13:] = False
    x2 = np.where(mask[..., None], x, rng.normal(size=x.shape) * 100)
    layer = build_layer(dim=3, ema_dim=4, causal=False)
    a = call(layer, x, mask)
    b = call(layer, x2.astype("float32"), mask)
    np.testing.assert_allclose(a[mask], b[mask], atol=1e-5)
    # Same as the unpadded sequence cut at its length.
    short = call(layer, x[:, :10])
    np.testing.assert_allclose(a[0, :10], short[0], atol=1e-5)


def test_initial_values_and_weight_names():
    layer = build_layer(dim=64, ema_dim=6, causal=False)
    names = sorted(w.name for w in layer.weights)
    assert names == [
        "ema_alpha", "ema_beta", "ema_delta", "ema_gamma", "ema_omega"
    ]
    assert layer.ema_delta.shape == (128, 6, 1)
    assert layer.ema_gamma.shape == (128, 6)
    assert layer.ema_omega.shape == (64,)
    beta = to_numpy(layer.ema_beta)[..., 0]
    signs = np.array([1, -1, 1, -1, 1, -1], "float32")
    np.testing.assert_allclose(beta.mean(0), signs, atol=0.02)
    assert 0.01 < np.std(beta - signs) < 0.03
    assert 0.15 < np.std(to_numpy(layer.ema_alpha)) < 0.25
    assert 0.15 < np.std(to_numpy(layer.ema_delta)) < 0.25


@pytest.mark.parametrize(
    "kwargs, match",
    [(dict(ema_dim=0), "ema_dim"), (dict(truncation=0), "truncation")],
)
def test_bad_arguments_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MultiHeadEMA(**kwargs)


def test_gradients_are_finite():
    layer = build_layer(dim=3, ema_dim=4, causal=False)
    x = np.random.default_rng(6).normal(size=(2, 16, 3))
    mask = np.ones((2, 16), "float32")
    mask[1, 10:] = 0

    def loss(x):
        return ops.sum(layer(x, padding_mask=mask) ** 2)

    value, (grad,) = value_and_grads(compiled(loss), x)
    assert np.isfinite(value) and np.all(np.isfinite(grad))
    assert np.abs(grad).sum() > 0
    np.testing.assert_array_equal(grad[1, 10:], 0.0)


def test_serialization_round_trips_and_fit(tmp_path):
    layer = MultiHeadEMA(ema_dim=4, causal=False, truncation=30)
    assert_config_round_trip(layer)
    inputs = keras.Input((None, 3))
    model = keras.Model(inputs, layer(inputs))
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 16, 3)).astype("float32")
    assert_saving_round_trip(model, x, tmp_path, atol=1e-6)
    model.compile(optimizer="adam", loss="mse")
    before = [to_numpy(w).copy() for w in model.trainable_weights]
    history = model.fit(x, np.zeros_like(x), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    after = [to_numpy(w) for w in model.trainable_weights]
    assert all(not np.allclose(a, b) for a, b in zip(before, after))
    # Dynamic length: another length after compiling.
    assert model.predict(x[:, :10], verbose=0).shape == (2, 10, 3)
