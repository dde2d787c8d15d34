import numpy as np
import pytest

from lra_keras.layers.scale_normalization import ScaleNormalization
from lra_keras.layers.sequence_norm import NORMS
from lra_keras.layers.sequence_norm import sequence_norm
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import sequence_model
from tests.testing import to_numpy


def numpy_scale_norm(x, gain, epsilon):
    # The MEGA code's ScaleNorm (fairseq/modules/scale_norm.py:27-33):
    # scalar * x * rsqrt(mean(x^2, -1) + eps).
    x = x.astype("float64")
    return gain * x / np.sqrt((x**2).mean(-1, keepdims=True) + epsilon)


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return (3.0 * rng.normal(size=(2, 7, 5)) + 1.0).astype("float32")


def test_scale_norm_matches_its_closed_form():
    x = _inputs()
    norm = ScaleNormalization(epsilon=1e-5)
    norm.build(x.shape)
    assert norm.gain.shape == () and to_numpy(norm.gain) == 1.0
    norm.gain.assign(1.7)
    assert_allclose(norm(x), numpy_scale_norm(x, 1.7, 1e-5), atol=1e-5)
    # Unlike LayerNorm it does not centre: a constant vector keeps its sign.
    ones = np.full((1, 1, 4), 2.0, "float32")
    assert_allclose(norm(ones), np.full((1, 1, 4), 1.7), atol=1e-4)


def test_scale_norm_gain_gets_its_gradient():
    # Loss mean((g n)^2), n = x / rms(x): dL/dg = 2 g mean(n^2), so one SGD
    # step of rate 0.1 from g = 1 gives g = 1 - 0.2 mean(n^2).
    import keras

    x = _inputs(seed=1)
    model = sequence_model(ScaleNormalization(), 5, with_mask=False)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    model.train_on_batch(x, np.zeros_like(x))
    n = numpy_scale_norm(x, 1.0, 1e-5)
    (gain,) = [to_numpy(w) for w in model.trainable_weights]
    assert float(gain) == pytest.approx(1 - 0.2 * (n**2).mean(), rel=1e-5)
    assert ScaleNormalization(scale=False).get_config()["scale"] is False


def test_scale_norm_round_trips(tmp_path):
    norm = ScaleNormalization(epsilon=1e-3)
    rebuilt = assert_config_round_trip(norm)
    assert rebuilt.epsilon == 1e-3
    model = sequence_model(ScaleNormalization(), 5, with_mask=False)
    assert_saving_round_trip(model, _inputs(seed=2), tmp_path)


def test_sequence_norm_builds_every_kind_and_refuses_others():
    for kind in NORMS:
        layer = sequence_norm(kind, f"{kind}_norm")
        assert layer.name == f"{kind}_norm"
    with pytest.raises(ValueError, match=r"`norm` must be one of"):
        sequence_norm("rms", "norm")
    with pytest.raises(ValueError, match="epsilon"):
        ScaleNormalization(epsilon=0.0)
