import keras
import numpy as np
import pytest

from lra_keras.hparams import HPARAMS
from lra_keras.hparams import get_hparams
from lra_keras.models import build_classifier
from lra_keras.training import make_optimizer
from lra_keras.training import model_inputs
from tests.testing import assert_saving_round_trip
from tests.testing import to_numpy

TINY = dict(hidden_dim=8, num_layers=1, num_heads=2, intermediate_dim=16,
            sequence_length=32)


def _batch(hp, batch=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(1, hp["vocabulary_size"], size=(batch, 32))
    x[:, 20:] = 0
    return model_inputs(x.astype("int32"), hp), rng.integers(0, 10, batch)


@pytest.mark.parametrize("task, model", sorted(HPARAMS))
def test_one_training_step_changes_weights(task, model):
    hp = get_hparams(task, model, **TINY)
    net = build_classifier(**hp)
    net.compile(
        optimizer=make_optimizer(hp, total_steps=10),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    x, y = _batch(hp)
    before = [to_numpy(w).copy() for w in net.trainable_weights]
    loss = net.train_on_batch(x, y)
    assert np.isfinite(loss)
    after = [to_numpy(w) for w in net.trainable_weights]
    changed = [not np.allclose(a, b) for a, b in zip(before, after)]
    assert sum(changed) >= len(changed) - 1  # all but a padding row


@pytest.mark.parametrize("task, model", sorted(HPARAMS))
def test_padded_tokens_do_not_change_logits(task, model):
    hp = get_hparams(task, model, **TINY)
    net = build_classifier(**hp)
    x, _ = _batch(hp)
    x2 = {k: v.copy() for k, v in x.items()}
    x2["token_ids"][:, 20:] = 5  # padding_mask still says "padding"
    np.testing.assert_allclose(to_numpy(net(x)), to_numpy(net(x2)),
                               atol=1e-5)


@pytest.mark.parametrize("task, model", sorted(HPARAMS))
def test_keras_file_round_trip(task, model, tmp_path):
    hp = get_hparams(task, model, **TINY)
    net = build_classifier(**hp)
    x, _ = _batch(hp)
    assert_saving_round_trip(net, x, tmp_path)


def test_output_shape_and_names():
    hp = get_hparams("listops", **TINY)
    net = build_classifier(**hp)
    assert net.output_shape == (None, 10)
    assert sorted(net.input) == ["padding_mask", "token_ids"]
