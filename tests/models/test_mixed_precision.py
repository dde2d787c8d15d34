"""Every family under Keras's mixed precision policies, against float32.

The same weights are run in float32 and under the mixed policy; the logits
must agree within a stated share of their float32 scale (every family),
and a training step under the mixed policy must give a finite loss (one
family per kind of mixer: attention, SSM, MEGA). bfloat16 keeps 8
significant bits (rounding error 2^-9, 0.2%), float16 11 bits (0.05%);
the tiny one-block models here accumulate a few dozen such roundings.
"""

import keras
import numpy as np
import pytest

from lra_keras.models import build_classifier
from lra_keras.models import classifier_kwargs
from lra_keras.models import dtype_policy_scope
from lra_keras.training import make_optimizer
from tests.models.test_builders import FAMILY_ROWS
from tests.models.test_builders import _batch
from tests.models.test_builders import tiny_hparams
from tests.testing import to_numpy

# Largest |mixed - float32| logit difference, as a share of the largest
# float32 logit (measured: at most 0.7% and 0.17% over the families and
# backends, with the SSM parameters read in float32; LRA's xformer rows,
# N(0, 1) embeddings and a class token, up to 1.5% and 0.23%; the
# ListOps Performer under TensorFlow on an AVX2 CPU, whose bfloat16
# products differ from AVX-512's, 1.7% with its FAVOR+ attention in
# float32 and 2.2% before it was).
TOLERANCE = dict(mixed_bfloat16=0.02, mixed_float16=0.005)


def _mixed_and_float32_logits(task, model, policy, train=False):
    """(logits under `policy`, float32 logits, the loss of a training step
    under `policy` or None), the same weights in both models."""
    hp = tiny_hparams(task, model)
    x, y = _batch(hp)
    keras.utils.set_random_seed(0)
    reference = build_classifier(**classifier_kwargs(hp))
    if model == "reformer":
        # The LSH hash is discrete: a rounding that moves a query across a
        # hash boundary changes the keys it sees (measured: 10% of the
        # logit scale under JAX with LRA's ListOps row). Zero rotations
        # put every position in the first bucket under both precisions;
        # the sort, the chunks and the rounds' combination remain.
        for w in reference.weights:
            if w.path.endswith("lsh_rotations"):
                w.assign(np.zeros(w.shape, "float32"))
    expected = to_numpy(reference(x))
    loss = None
    with dtype_policy_scope(policy):
        net = build_classifier(**classifier_kwargs(hp))
        net.set_weights(reference.get_weights())
        logits = net(x)
        assert keras.backend.standardize_dtype(logits.dtype) == "float32"
        if train:
            # Under mixed_float16, Keras wraps the optimizer in a
            # LossScaleOptimizer.
            net.compile(
                optimizer=make_optimizer(hp, total_steps=10),
                loss=keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True),
            )
            loss = net.train_on_batch(x, y)
    return to_numpy(logits), expected, loss


def _assert_near(got, expected, policy):
    error = np.abs(got - expected).max()
    assert error <= TOLERANCE[policy] * np.abs(expected).max(), (
        error, np.abs(expected).max())


@pytest.mark.one_backend
@pytest.mark.parametrize("task, model", FAMILY_ROWS)
def test_mixed_bfloat16_logits_stay_near_float32(task, model):
    got, expected, _ = _mixed_and_float32_logits(task, model,
                                                 "mixed_bfloat16")
    _assert_near(got, expected, "mixed_bfloat16")


@pytest.mark.one_backend
@pytest.mark.parametrize("model", ["transformer", "s4d", "mega"])
@pytest.mark.parametrize("policy", list(TOLERANCE))
def test_mixed_precision_trains_with_a_finite_loss(policy, model):
    got, expected, loss = _mixed_and_float32_logits("listops", model,
                                                    policy, train=True)
    _assert_near(got, expected, policy)
    assert np.isfinite(loss)


def test_the_policy_is_restored_and_a_bad_one_refused():
    before = keras.config.dtype_policy().name
    with dtype_policy_scope("mixed_bfloat16"):
        assert keras.config.dtype_policy().name == "mixed_bfloat16"
    assert keras.config.dtype_policy().name == before
    with pytest.raises(ValueError, match="dtype_policy"):
        with dtype_policy_scope("float64"):
            pass
