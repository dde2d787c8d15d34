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
            sequence_length=32, state_dim=8, blocks=2, zdim=8, ndim=2,
            ffn_intermediate_dim=16, kernel_size=5, num_kernel_channels=2)


def tiny_hparams(task, model):
    """The family's hyperparameters shrunk by every TINY key it has."""
    known = get_hparams(task, model)
    return get_hparams(
        task, model, warmup_steps=0,
        **{k: v for k, v in TINY.items() if k in known}
    )


def _batch(hp, batch=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(1, hp["vocabulary_size"], size=(batch, 32))
    x[:, 20:] = 0
    return model_inputs(x.astype("int32"), hp), rng.integers(0, 10, batch)


@pytest.mark.parametrize("task, model", sorted(HPARAMS))
def test_one_training_step_changes_weights(task, model):
    hp = tiny_hparams(task, model)
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
    # MEGA's query/key scale and offset get ~1e-17 gradients at init
    # (queries and keys come from N(0, 0.02) projections, as in MEGA), so
    # their first Adam step vanishes in float32; every other weight moves.
    names = [w.path.split("/")[-1] for w in net.trainable_weights]
    changed = [not np.allclose(a, b) for a, b, name
               in zip(before, after, names) if name not in ("qk_gamma",
                                                           "qk_beta")]
    assert sum(changed) >= len(changed) - 1  # all but a padding row


@pytest.mark.parametrize("task, model", sorted(HPARAMS))
def test_padded_tokens_do_not_change_logits(task, model):
    hp = tiny_hparams(task, model)
    net = build_classifier(**hp)
    x, _ = _batch(hp)
    x2 = {k: v.copy() for k, v in x.items()}
    x2["token_ids"][:, 20:] = 5  # padding_mask still says "padding"
    np.testing.assert_allclose(to_numpy(net(x)), to_numpy(net(x2)),
                               atol=1e-5)


@pytest.mark.parametrize("task, model", sorted(HPARAMS))
def test_keras_file_round_trip(task, model, tmp_path):
    hp = tiny_hparams(task, model)
    net = build_classifier(**hp)
    x, _ = _batch(hp)
    assert_saving_round_trip(net, x, tmp_path)


def test_output_shape_and_names():
    hp = tiny_hparams("listops", "transformer")
    net = build_classifier(**hp)
    assert net.output_shape == (None, 10)
    assert sorted(net.input) == ["padding_mask", "token_ids"]


class _TwoLengths(keras.utils.PyDataset):
    """Two batches of different lengths: under TensorFlow the second one
    runs the model with a symbolic (unknown) length."""

    def __init__(self, vocabulary_size):
        super().__init__()
        rng = np.random.default_rng(0)
        self.batches = []
        for length in (12, 19):
            x = rng.integers(1, vocabulary_size, size=(2, length))
            x[1, length - 3:] = 0
            self.batches.append((model_inputs(x.astype("int32"),
                                              {"padding_id": 0}),
                                 rng.integers(0, 10, 2)))

    def __len__(self):
        return len(self.batches)

    def __getitem__(self, index):
        return self.batches[index]


@pytest.mark.parametrize("task, model", sorted(HPARAMS))
def test_fit_on_batches_of_different_lengths(task, model):
    hp = tiny_hparams(task, model)
    net = build_classifier(**hp)
    net.compile(
        optimizer=make_optimizer(hp, total_steps=10),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    history = net.fit(_TwoLengths(hp["vocabulary_size"]), epochs=1,
                      verbose=0)
    assert np.isfinite(history.history["loss"][-1])
