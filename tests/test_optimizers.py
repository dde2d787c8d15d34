"""The optimizers of `make_optimizer` take the same step under every backend
on an Embedding, whose TensorFlow gradient is sparse (`tf.IndexedSlices`).
"""

import keras
import numpy as np
import pytest

from lra_keras.optimizers import AdamW
from lra_keras.training import make_optimizer
from tests.testing import to_numpy

LR = 1e-2


def _embedding_sum_model():
    tokens = keras.Input((4,), dtype="int32")
    embedded = keras.layers.Embedding(
        4, 2, embeddings_initializer=keras.initializers.Constant(0.5),
        name="embedding",
    )(tokens)
    return keras.Model(tokens, keras.ops.sum(embedded, axis=1))


@pytest.mark.parametrize("schedule", ["constant", "plateau"])
def test_first_adam_step_on_repeated_tokens_is_the_learning_rate(schedule):
    # loss = mean |sum_t E[token_t]| over 2 outputs: dL/dE[r] = count(r)/2
    # per dimension. Adam's first step is lr * g / (|g| + eps) = lr for
    # every row that occurs, however often: token 1 (3 times) moves by lr
    # exactly like token 2 (once); rows 0 and 3 do not move. Summing the
    # squares of the three slices instead would move token 1 by
    # sqrt(3) * lr (Keras's TensorFlow path on sparse gradients).
    hp = dict(learning_rate=LR, warmup_steps=0, schedule=schedule,
              weight_decay=0.0, gradient_clipnorm=1.0)
    model = _embedding_sum_model()
    model.compile(optimizer=make_optimizer(hp, total_steps=10),
                  loss="mean_absolute_error")
    tokens = np.array([[1, 1, 1, 2]], np.int32)
    model.train_on_batch(tokens, np.zeros((1, 2), np.float32))
    table = to_numpy(model.get_layer("embedding").embeddings)
    expected = np.array([[0.5, 0.5], [0.5 - LR, 0.5 - LR],
                         [0.5 - LR, 0.5 - LR], [0.5, 0.5]])
    np.testing.assert_allclose(table, expected, atol=1e-6)


def test_plain_optimizer_class_per_backend():
    hp = dict(learning_rate=LR, weight_decay=0.01)
    optimizer = make_optimizer(hp, total_steps=10)
    if keras.backend.backend() == "torch":
        # Keras's exact class: its fused update (gradients are dense).
        assert type(optimizer).__module__.startswith("keras.")
    else:
        assert isinstance(optimizer, AdamW)


def test_adamw_round_trips_through_its_config():
    optimizer = AdamW(learning_rate=LR, weight_decay=0.01,
                      global_clipnorm=1.0)
    config = keras.optimizers.serialize(optimizer)
    assert config["registered_name"] == "lra_keras>AdamW"
    rebuilt = keras.optimizers.deserialize(config)
    assert type(rebuilt) is AdamW
    assert rebuilt.get_config() == optimizer.get_config()


@pytest.mark.parametrize("power", [1.0, 2.0])
def test_warmup_linear_decay_is_fairseqs_linear_schedule(power):
    # fairseq linear_decay_schedule.step_update with warmup_init_lr 0:
    # t^p * peak / w^p up to w, then peak * (T - t) / (T - w), 0 from T.
    from lra_keras.optimizers import WarmupLinearDecay

    peak, warmup, total = 0.01, 10, 50
    schedule = WarmupLinearDecay(peak, warmup, total, power)
    for t in (0, 3, 10, 11, 30, 49, 50, 80):
        if t <= warmup:
            expected = t**power * peak / warmup**power
        else:
            expected = peak * max(total - t, 0) / (total - warmup)
        assert float(to_numpy(schedule(t))) == pytest.approx(
            expected, rel=1e-5, abs=1e-9)
    # Without warmup the first step trains at the peak.
    assert float(to_numpy(WarmupLinearDecay(peak, 0, total)(0))) == \
        pytest.approx(peak)
    rebuilt = WarmupLinearDecay.from_config(schedule.get_config())
    assert rebuilt.get_config() == schedule.get_config()
    with pytest.raises(ValueError, match="decay_steps"):
        WarmupLinearDecay(peak, 10, 10)
