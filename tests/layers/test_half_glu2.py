"""S5's output activations and their dropout placement (`StateSpaceLayer`).

lindermanlab/S5 `s5/layers.py` lines 68-82, with x the SSM output + D u:
  half_glu1: y = drop(gelu(x)); y * sigmoid(W y)        ("half_glu")
  half_glu2: y = drop(gelu(x)); x * sigmoid(W y)        ("half_glu2")
  gelu:      drop(gelu(x))                              (None)
each followed (GLU variants) by a second dropout, the residual block's.
"""

import numpy as np
import pytest
from keras import ops

from lra_keras.layers import S4D
from lra_keras.layers import S5
from tests.layers.test_s5 import numpy_gelu_tanh
from tests.layers.test_s5 import numpy_ssm
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import numpy_gelu
from tests.testing import to_numpy

RATE = 0.5


def _inputs(seed=0, batch=3, length=24, hidden=8):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(batch, length, hidden)).astype("float32")


def _s5(x, **kwargs):
    layer = S5(state_dim=16, num_blocks=2, dt_min=0.01, dt_max=0.5, **kwargs)
    layer.build(x.shape)
    return layer


def _pre_activation(layer, u):
    """x = SSM(u) + D u, as the layer computes it (float64)."""
    pre = layer.ssm_convolve(ops.convert_to_tensor(u))
    return to_numpy(pre).astype("float64") + u * to_numpy(layer.D)


def _diagonal_gate(layer, seed=1):
    """W diagonal (0.5..1) and a small bias: gate channel c reads only
    channel c, so a dropped channel can be told from the output."""
    rng = np.random.default_rng(seed)
    hidden = layer.hidden_dim
    w = rng.uniform(0.5, 1.0, hidden)
    b = rng.uniform(-0.2, 0.2, hidden)
    layer.output_dense.kernel.assign(np.diag(w).astype("float32"))
    layer.output_dense.bias.assign(b.astype("float32"))
    return w, b


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _tied_mask(out, kept, dropped):
    """The dropout mask, one 0/1 per (batch, channel) along the sequence:
    whichever of `kept` and `dropped` the channel's output is closer to.
    The caller then checks every position against it."""
    closer = (np.abs(out - kept).sum(axis=1, keepdims=True)
              < np.abs(out - dropped).sum(axis=1, keepdims=True))
    assert 0 < closer.mean() < 1  # 24 channels at rate 1/2: both occur
    return np.broadcast_to(closer, out.shape)


@pytest.mark.parametrize("causal", [True, False])
def test_half_glu2_is_x_times_sigmoid_of_w_gelu_x(causal):
    # S5 half_glu2 (s5/layers.py 76-80) against a numpy reference built
    # from the layer's weights: the S5 recurrence, D, tanh GELU, W, b.
    x = _inputs(seed=2)
    mask = np.ones(x.shape[:2], "float32")
    mask[1, 15:] = 0.0
    layer = _s5(x, causal=causal, output_activation="half_glu2")
    out = layer(x, padding_mask=mask)
    u = x * mask[..., None]
    pre = numpy_ssm(layer, u) + u * to_numpy(layer.D)
    kernel = to_numpy(layer.output_dense.kernel)
    bias = to_numpy(layer.output_dense.bias)
    expected = pre * _sigmoid(numpy_gelu_tanh(pre) @ kernel + bias)
    assert_allclose(out, expected, atol=1e-4, rtol=1e-4)
    # ... which is not half_glu1, gelu(x) * sigmoid(W gelu(x)).
    half_glu1 = numpy_gelu_tanh(pre) * _sigmoid(
        numpy_gelu_tanh(pre) @ kernel + bias)
    assert not np.allclose(to_numpy(out), half_glu1, atol=1e-2)


def test_half_glu2_works_on_every_state_space_layer():
    # The activation lives in StateSpaceLayer: S4D (exact GELU) too.
    x = _inputs(seed=3)
    layer = S4D(state_dim=8, causal=False, output_activation="half_glu2")
    layer.build(x.shape)
    out = to_numpy(layer(x))
    pre = _pre_activation(layer, x)
    kernel = to_numpy(layer.output_dense.kernel)
    bias = to_numpy(layer.output_dense.bias)
    expected = pre * _sigmoid(numpy_gelu(pre) @ kernel + bias)
    assert_allclose(out, expected, atol=1e-4, rtol=1e-4)
    assert tuple(layer.output_dense.kernel.shape) == (8, 8)
    rebuilt = assert_config_round_trip(layer)
    assert rebuilt.output_activation == "half_glu2"


def test_half_glu2_drops_only_the_gate_input():
    # x1 = drop(gelu(x)); out = x * sigmoid(W x1): x is never dropped (no
    # zeros in the output), the gate reads gelu(x) / (1 - rate) or 0, with
    # one mask per (batch, channel) along the sequence (S5's
    # broadcast_dims=[0] over a (length, H) sequence).
    x = _inputs(seed=4)
    layer = _s5(x, causal=False, output_activation="half_glu2",
                dropout=RATE)
    w, b = _diagonal_gate(layer)
    out = to_numpy(layer(x, training=True)).astype("float64")
    pre = _pre_activation(layer, x)
    assert np.all(out != 0.0)
    gate = out / pre
    kept = pre * _sigmoid(w * numpy_gelu_tanh(pre) / (1.0 - RATE) + b)
    dropped = pre * _sigmoid(b)
    expected = np.where(_tied_mask(out, kept, dropped), kept, dropped)
    assert_allclose(out, expected, atol=1e-4, rtol=1e-4)
    assert np.all((gate > 0) & (gate < 1))
    # Inference: no dropout.
    out = to_numpy(layer(x, training=False))
    expected = pre * _sigmoid(w * numpy_gelu_tanh(pre) + b)
    assert_allclose(out, expected, atol=1e-4, rtol=1e-4)


def test_half_glu1_drops_the_gated_and_the_gating_activation():
    # S5 half_glu1 (s5/layers.py 72-75): x = drop(gelu(x)); x *
    # sigmoid(W x): a dropped channel is 0 in the output.
    x = _inputs(seed=5)
    layer = _s5(x, causal=False, output_activation="half_glu",
                dropout=RATE)
    w, b = _diagonal_gate(layer)
    out = to_numpy(layer(x, training=True)).astype("float64")
    g = numpy_gelu_tanh(_pre_activation(layer, x)) / (1.0 - RATE)
    kept = g * _sigmoid(w * g + b)
    expected = np.where(_tied_mask(out, kept, 0.0), kept, 0.0)
    assert_allclose(out, expected, atol=1e-4, rtol=1e-4)


def test_s5_without_projection_leaves_its_one_dropout_to_the_block():
    # S5 "gelu" (s5/layers.py 81-82) drops once, after the GELU: the
    # residual block's dropout of the mixer output. S5 alone: none.
    x = _inputs(seed=6)
    layer = _s5(x, causal=False, output_activation=None, dropout=RATE)
    out = layer(x, training=True)
    assert_allclose(out, numpy_gelu_tanh(_pre_activation(layer, x)),
                    atol=1e-4, rtol=1e-4)
    # The other SSM layers keep theirs (a tied mask, scaled by 1/(1-p)).
    s4d = S4D(state_dim=8, causal=False, output_activation=None,
              dropout=RATE)
    s4d.build(x.shape)
    out = to_numpy(s4d(x, training=True)).astype("float64")
    kept = numpy_gelu(_pre_activation(s4d, x)) / (1.0 - RATE)
    expected = np.where(_tied_mask(out, kept, 0.0), kept, 0.0)
    assert_allclose(out, expected, atol=1e-4, rtol=1e-4)


def test_half_glu2_gate_width_and_bad_names():
    x = _inputs()
    layer = _s5(x, output_activation="half_glu2")
    assert tuple(layer.output_dense.kernel.shape) == (8, 8)
    with pytest.raises(ValueError, match="output_activation"):
        S5(output_activation="half_glu3")
