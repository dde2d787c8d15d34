import keras
import numpy as np
import pytest

from lra_keras.backend_utils import barrier
from lra_keras.layers.lean_backward import LayerNormalization
from lra_keras.layers.lean_backward import activation
from lra_keras.layers.lean_backward import gelu
from lra_keras.layers.lean_backward import glu
from lra_keras.layers.lean_backward import softmax
from lra_keras.layers.sequence_norm import sequence_norm
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import numpy_layer_norm
from tests.testing import sequence_model
from tests.testing import to_numpy
from tests.testing import value_and_grads

EPSILON = 1e-5


def _data(seed=0, shape=(2, 7, 5)):
    rng = np.random.default_rng(seed)
    x = (3.0 * rng.normal(size=shape) + 1.0).astype("float32")
    gamma = rng.normal(size=shape[-1:]).astype("float32")
    beta = rng.normal(size=shape[-1:]).astype("float32")
    upstream = rng.normal(size=shape).astype("float32")
    return x, gamma, beta, upstream


def numpy_layer_norm_grads(x, gamma, upstream, epsilon=EPSILON):
    """d sum(upstream * LN(x)) / d (x, gamma, beta) in float64, by the
    closed form: x_hat = (x - mean) r, r = (var + eps)^-1/2, g = dy gamma,
    dx = r (g - mean(g) - x_hat mean(g x_hat))."""
    x, dy = x.astype("float64"), upstream.astype("float64")
    r = 1.0 / np.sqrt(x.var(-1, keepdims=True) + epsilon)
    x_hat = (x - x.mean(-1, keepdims=True)) * r
    g = dy * gamma
    dx = r * (g - g.mean(-1, keepdims=True)
              - x_hat * (g * x_hat).mean(-1, keepdims=True))
    rows = tuple(range(x.ndim - 1))
    return dx, (dy * x_hat).sum(rows), dy.sum(rows)


def _layer(gamma, beta, cls=LayerNormalization, **kwargs):
    layer = cls(epsilon=EPSILON, **kwargs)
    layer.build((None, None, gamma.shape[0]))
    layer.set_weights([gamma, beta])
    return layer


def _loss_grads(layer, x, gamma, beta, upstream):
    def loss(x, gamma, beta):
        out, _ = layer.stateless_call([gamma, beta], [], x)
        return keras.ops.sum(keras.ops.cast(out, "float32")
                             * keras.ops.convert_to_tensor(upstream))

    return value_and_grads(loss, x, gamma, beta)


def test_values_and_gradients_match_the_closed_form():
    x, gamma, beta, upstream = _data()
    layer = _layer(gamma, beta)
    assert_allclose(layer(x), numpy_layer_norm(x.astype("float64"), gamma,
                                               beta, EPSILON), atol=2e-6)
    _, grads = _loss_grads(layer, x, gamma, beta, upstream)
    for got, want in zip(grads, numpy_layer_norm_grads(x, gamma, upstream)):
        assert_allclose(got, want, atol=2e-5, rtol=1e-5)


@pytest.mark.parametrize("kwargs", [
    {}, {"axis": (1, 2)},
    # Deprecated by Keras (a warning), still a configuration it builds.
    pytest.param({"rms_scaling": True}, marks=pytest.mark.filterwarnings(
        "ignore:You passed `rms_scaling=True`")),
    {"center": False},
])
def test_equals_keras_layer_normalization(kwargs):
    # Every configuration, including those the custom gradient leaves to
    # Keras (several axes, rms scaling, no beta), gives Keras's values and
    # gradients; the weights are Keras's, by name and order.
    x, _, _, upstream = _data(seed=1)
    ours, theirs = (cls(epsilon=EPSILON, **kwargs) for cls in (
        LayerNormalization, keras.layers.LayerNormalization))
    for layer in (ours, theirs):
        layer.build(x.shape)
    assert ([w.name for w in ours.weights]
            == [w.name for w in theirs.weights])
    rng = np.random.default_rng(2)
    weights = [rng.normal(size=w.shape).astype("float32")
               for w in theirs.weights]
    for layer in (ours, theirs):
        layer.set_weights(weights)
    assert_allclose(ours(x), theirs(x), atol=2e-6)

    def grads(layer):
        def loss(x, *weights):
            out, _ = layer.stateless_call(list(weights), [], x)
            return keras.ops.sum(out * keras.ops.convert_to_tensor(upstream))

        return value_and_grads(loss, x, *weights)[1]

    for got, want in zip(grads(ours), grads(theirs)):
        assert_allclose(got, want, atol=2e-5, rtol=1e-5)


def test_mixed_bfloat16_computes_in_float32():
    x, gamma, beta, upstream = _data(seed=3)
    layer = _layer(gamma, beta, dtype="mixed_bfloat16")
    assert layer.gamma.dtype == "float32"
    out = layer(x)
    assert keras.backend.standardize_dtype(out.dtype) == "bfloat16"
    # The statistics of the input as rounded to bfloat16, in float32; the
    # output rounded once to bfloat16 (relative step 2^-8).
    rounded = to_numpy(keras.ops.cast(keras.ops.cast(x, "bfloat16"),
                                      "float32"))
    want = numpy_layer_norm(rounded.astype("float64"), gamma, beta, EPSILON)
    assert_allclose(keras.ops.cast(out, "float32"), want, atol=2e-2,
                    rtol=2**-8)


def test_sequence_norm_layer_is_this_layer_and_round_trips(tmp_path):
    norm = sequence_norm("layer", name="norm")
    assert type(norm) is LayerNormalization
    assert_config_round_trip(norm)
    x, _, _, _ = _data(seed=4, shape=(2, 6, 8))
    model = sequence_model(norm, 8, with_mask=False)
    assert_saving_round_trip(model, x, tmp_path)


def test_barrier_returns_its_inputs():
    a = np.arange(6, dtype="float32").reshape(2, 3)
    b = np.float32(2.5)
    got = barrier(keras.ops.convert_to_tensor(a),
                  keras.ops.convert_to_tensor(b))
    assert len(got) == 2
    assert_allclose(got[0], a, atol=0)
    assert_allclose(got[1], b, atol=0)


@pytest.mark.parametrize("axis", [-1, 1, 2])
def test_softmax_values_and_gradient_match_the_closed_form(axis):
    # y = softmax(x), d sum(u y) / dx = y (u - sum(u y)) along `axis`.
    rng = np.random.default_rng(5)
    x = (4.0 * rng.normal(size=(2, 6, 5))).astype("float32")
    upstream = rng.normal(size=x.shape).astype("float32")
    e = np.exp(x - x.max(axis, keepdims=True)).astype("float64")
    y = e / e.sum(axis, keepdims=True)
    assert_allclose(softmax(keras.ops.convert_to_tensor(x), axis=axis), y,
                    atol=1e-6)

    def loss(x):
        return keras.ops.sum(softmax(x, axis=axis)
                             * keras.ops.convert_to_tensor(upstream))

    _, (grad,) = value_and_grads(loss, x)
    assert_allclose(grad, y * (upstream - (upstream * y).sum(
        axis, keepdims=True)), atol=1e-6)


def test_gelu_value_and_gradient_match_the_closed_form():
    # gelu(x) = x Phi(x), d/dx = Phi(x) + x phi(x) (the exact, erf form)
    from math import erf

    rng = np.random.default_rng(6)
    x = (3.0 * rng.normal(size=(3, 7, 4))).astype("float32")
    upstream = rng.normal(size=x.shape).astype("float32")
    x64 = x.astype("float64")
    cdf = 0.5 * (1.0 + np.vectorize(erf)(x64 / np.sqrt(2.0)))
    pdf = np.exp(-0.5 * x64**2) / np.sqrt(2.0 * np.pi)
    assert_allclose(gelu(keras.ops.convert_to_tensor(x)), x64 * cdf,
                    atol=1e-5)
    _, (grad,) = value_and_grads(
        lambda x: keras.ops.sum(gelu(x) * keras.ops.convert_to_tensor(
            upstream)), x)
    assert_allclose(grad, upstream * (cdf + x64 * pdf), atol=1e-5)


def test_gelu_tails_stay_within_float32_rounding():
    # Under JAX and TensorFlow Phi is (1 + erf(x / sqrt 2)) / 2 (PyTorch's
    # form) where jax.nn.gelu and tf.nn.gelu take erfc: on a fine grid
    # over [-10, 10], tails
    # included, the value and the derivative stay within a few float32
    # roundings of float64's, under every backend.
    from math import erf

    x = np.linspace(-10.0, 10.0, 4001).astype("float32")
    x64 = x.astype("float64")
    cdf = 0.5 * (1.0 + np.vectorize(erf)(x64 / np.sqrt(2.0)))
    pdf = np.exp(-0.5 * x64**2) / np.sqrt(2.0 * np.pi)
    assert_allclose(gelu(keras.ops.convert_to_tensor(x)), x64 * cdf,
                    atol=3e-6, rtol=3e-7)
    _, (grad,) = value_and_grads(lambda x: keras.ops.sum(gelu(x)), x)
    assert_allclose(grad, cdf + x64 * pdf, atol=1e-6)
    # and beside Keras's own exact gelu
    assert_allclose(gelu(keras.ops.convert_to_tensor(x)),
                    keras.activations.gelu(keras.ops.convert_to_tensor(x),
                                           approximate=False),
                    atol=3e-6, rtol=3e-7)


@pytest.mark.parametrize("axis", [-1, 1])
def test_glu_value_and_gradient_match_the_closed_form(axis):
    # glu(x) = a sigmoid(b) of x's halves along `axis`
    rng = np.random.default_rng(7)
    x = (2.0 * rng.normal(size=(2, 6, 8))).astype("float32")
    a, b = np.split(x.astype("float64"), 2, axis=axis)
    gate = 1.0 / (1.0 + np.exp(-b))
    upstream = rng.normal(size=a.shape).astype("float32")
    assert_allclose(glu(keras.ops.convert_to_tensor(x), axis=axis),
                    a * gate, atol=1e-6)
    _, (grad,) = value_and_grads(
        lambda x: keras.ops.sum(glu(x, axis=axis)
                                * keras.ops.convert_to_tensor(upstream)), x)
    expected = np.concatenate(
        [upstream * gate, upstream * a * gate * (1.0 - gate)], axis=axis)
    assert_allclose(grad, expected, atol=1e-6)


def test_activation_swaps_in_the_lean_gelu_only():
    assert activation(keras.activations.gelu) is gelu
    assert activation(keras.activations.relu) is keras.activations.relu
    # the layers' "gelu", Keras's exact one
    assert activation(keras.activations.get("gelu")) is gelu
