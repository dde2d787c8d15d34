import keras
import numpy as np
import pytest

from lra_keras.layers import SequencePooling
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import to_numpy


def _data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 7, 4)).astype("float32")
    mask = np.array(
        [[1] * 7, [1] * 4 + [0] * 3, [1] + [0] * 6], dtype=bool
    )
    return x, mask


def numpy_pool(x, mask, mode):
    out = []
    for row, m in zip(x, mask):
        real = row[m]
        out.append({"mean": real.mean(0), "max": real.max(0),
                    "first": row[0], "last": real[-1]}[mode])
    return np.stack(out)


@pytest.mark.parametrize("mode", ["mean", "max", "first", "last"])
def test_pooling_matches_numpy(mode):
    x, mask = _data()
    assert_allclose(SequencePooling(mode)(x, padding_mask=mask),
                    numpy_pool(x, mask, mode), atol=1e-6)


@pytest.mark.parametrize("mode", ["mean", "max", "last"])
def test_padding_never_changes_pooled_output(mode):
    x, mask = _data()
    x2 = x.copy()
    x2[~mask] = 1e4
    layer = SequencePooling(mode)
    np.testing.assert_allclose(
        to_numpy(layer(x, padding_mask=mask)),
        to_numpy(layer(x2, padding_mask=mask)),
    )


@pytest.mark.parametrize("batch", [3, 1])
def test_mean_gradient_is_the_mask_over_the_count(batch):
    # The mean's gradient, for a batch of one row too, against the
    # closed form.
    from tests.testing import value_and_grads

    x, mask = _data()
    x, mask = x[:batch], mask[:batch]
    w = np.random.default_rng(1).normal(size=(batch, 4)).astype("float32")
    value, (dx,) = value_and_grads(
        lambda a: keras.ops.sum(SequencePooling("mean")(
            a, padding_mask=mask) * keras.ops.convert_to_tensor(w)), x)
    np.testing.assert_allclose(
        value, np.sum(numpy_pool(x, mask, "mean") * w), rtol=1e-5)
    share = mask / mask.sum(1, keepdims=True)
    np.testing.assert_allclose(dx, share[..., None] * w[:, None, :],
                               rtol=1e-6, atol=1e-7)


def test_no_mask_means_all_positions():
    x, _ = _data()
    assert_allclose(SequencePooling("mean")(x), x.mean(1), atol=1e-6)


def test_fully_padded_row_pools_to_zero():
    x, _ = _data()
    mask = np.zeros((3, 7), bool)
    for mode in ("mean", "max", "last"):
        assert_allclose(SequencePooling(mode)(x, padding_mask=mask),
                        np.zeros((3, 4)))


def test_round_trips(tmp_path):
    layer = SequencePooling("max")
    assert_config_round_trip(layer)
    x, mask = _data()
    inputs = {"x": keras.Input((7, 4)), "m": keras.Input((7,), dtype="bool")}
    model = keras.Model(inputs, layer(inputs["x"], padding_mask=inputs["m"]))
    assert_saving_round_trip(model, {"x": x, "m": mask}, tmp_path)


def test_bad_mode_is_rejected():
    with pytest.raises(ValueError, match="mode"):
        SequencePooling("median")
