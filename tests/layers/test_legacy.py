"""Layers saved with the argument names before the renames still load."""

import numpy as np
import pytest

from lra_keras.layers import S4D
from lra_keras.layers import S5
from lra_keras.layers import MegaEncoder
from lra_keras.layers import MultiHeadEMA
from lra_keras.layers.legacy import upgrade_config


def _old(layer, **old_names):
    """`layer`'s config as a release before the renames wrote it."""
    config = layer.get_config()
    for new in ("causal", "key_dim", "ema_dim", "num_blocks", "trainable_B"):
        config.pop(new, None)
    config.update(old_names)
    return config


def test_ssm_bidirectional_becomes_not_causal():
    for bidirectional in (True, False):
        layer = S4D.from_config(_old(S4D(state_dim=4, trainable_B=False),
                                     bidirectional=bidirectional,
                                     learn_B=False))
        assert layer.causal is (not bidirectional)
        assert layer.trainable_B is False
    layer = S5.from_config(_old(S5(state_dim=8, num_blocks=2),
                                bidirectional=True, blocks=2))
    assert (layer.causal, layer.num_blocks) == (False, 2)


def test_mega_names_and_both_direction_flags():
    old = _old(MegaEncoder(key_dim=6, ema_dim=3), zdim=6, ndim=3,
               bidirectional=True, causal=False)
    layer = MegaEncoder.from_config(old)
    assert (layer.key_dim, layer.ema_dim, layer.causal) == (6, 3, False)
    # The causal MEGA of the old builder: one-way EMA, causal attention.
    old.update(bidirectional=False, causal=True)
    assert MegaEncoder.from_config(old).causal is True
    ema = MultiHeadEMA.from_config(_old(MultiHeadEMA(ema_dim=4), ndim=4,
                                        bidirectional=False))
    assert (ema.ema_dim, ema.causal) == (4, True)
    # A one-way EMA with full attention has no spelling now.
    old.update(bidirectional=False, causal=False)
    with pytest.raises(ValueError, match="bidirectional=False"):
        MegaEncoder.from_config(old)


def test_current_configs_pass_through_unchanged():
    config = S4D(state_dim=4, causal=False).get_config()
    assert upgrade_config(config) == config


def test_a_model_saved_with_old_names_loads(tmp_path):
    # A whole .keras file whose layer config uses the old names, as a
    # model saved before the renames: the rewritten file loads and equals
    # the model.
    import json
    import zipfile

    import keras

    inputs = keras.Input((None, 4))
    model = keras.Model(inputs, S4D(state_dim=4, causal=False)(inputs))
    path = tmp_path / "new.keras"
    model.save(path)
    old_path = tmp_path / "old.keras"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(old_path, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "config.json":
                config = json.loads(data)
                for layer in config["config"]["layers"]:
                    if layer["class_name"] == "S4D":
                        layer["config"]["bidirectional"] = not layer[
                            "config"].pop("causal")
                        layer["config"]["learn_B"] = layer["config"].pop(
                            "trainable_B")
                data = json.dumps(config).encode()
            dst.writestr(item, data)
    loaded = keras.saving.load_model(old_path)
    x = np.random.default_rng(0).normal(size=(2, 7, 4)).astype("float32")
    np.testing.assert_allclose(keras.ops.convert_to_numpy(loaded(x)),
                               keras.ops.convert_to_numpy(model(x)),
                               atol=1e-6)
