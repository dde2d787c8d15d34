"""The three backends agree: outputs, one training step, saved weights and
SavedModel export, for every family and head.

`tests/backend_parity_worker.py` runs each backend in its own process (the
backend is fixed at import) on the same `.weights.h5` files and inputs;
this module compares what they wrote. It runs once per suite, not once
per backend (`cross_backend`).

Tolerances (float32):
- outputs: max abs difference <= OUTPUT_RTOL x max(1, largest |output|),
  for the weights saved by each backend, loaded under each backend
  (measured: at most 5e-6);
- one optimizer step (AdamW at a rate of 1e-3, the library's compile),
  updated weights: at least STEP_SHARE of each model's elements agree
  within STEP_ATOL_TYPICAL, and all within STEP_ATOL, a tenth of one step.
  Adam's first step is lr * g / (|g| + eps), ill-conditioned where a
  gradient is near eps (1e-7): there a rounding difference of 1e-8 in the
  gradient moves the weight by a few percent of the step. Measured: at
  most 0.8% of a model's elements beyond 1e-6, none beyond 3.4e-5. (Before
  `lra_keras.optimizers.AdamW`, TensorFlow's embedding rows differed by
  up to 1.7e-3: sparse gradients, see its docstring.) A weight whose
  gradient is zero in exact arithmetic (`_rounding_noise_gradient`) is
  held only to Adam's bound: its first step, |lr g / (|g| + eps)| < lr,
  follows the rounding noise, so two backends end within 2 lr of each
  other (measured: Sinkhorn's sorting network 5.2e-5 at e6e86e5, 1.01e-4
  at 1b45868; MEGA's last FFN bias before a final BatchNorm 9.5e-5 at
  12cd9b5, 1.09e-4 at d584e8f);
- SavedModel `serve` outputs (served by a process without Keras) against
  the Keras model under the backend that saved it: as outputs.
"""

import numpy as np
import pytest

from tests import backend_parity_worker as worker

pytestmark = pytest.mark.cross_backend

OUTPUT_RTOL = 1e-5
STEP_ATOL = 1e-4
STEP_ATOL_TYPICAL = 1e-6
STEP_SHARE = 0.98
STEP_LEARNING_RATE = worker.TINY["learning_rate"]
PAIRS = worker.PAIRS


def _rounding_noise_gradient(case, names):
    """Which of the weights `names` of `case` have a zero gradient in exact
    arithmetic, so that what autodiff gives them is rounding noise.

    LRA's Sinkhorn sorting (`sinkhorn_sorting="lra"`, softmax sort): each
    sorted block is weighted by the sum of its softmax over the targets,
    1 for any logits, so the sorting network's kernel changes no output
    (`efficient_attention.sinkhorn_attention`); autodiff through that sum
    gives it rounding noise.

    A pre-norm stack that ends in a final BatchNorm (`norm="batch"`,
    `final_norm`), trained on the batch's statistics: the bias of the
    last block's last residual branch, added to every position alike
    (MEGA's `ffn_outer`), is removed again by the BatchNorm's mean, so
    the loss does not depend on it. In `mega/causal_pixel_pretrainer`
    the three backends' first steps of that bias had opposite signs
    (jax -4.9e-5, tensorflow +4.6e-5 on one element at 12cd9b5), at
    9.5e-5 and, once the pixel tasks' blocks got no mask, 1.09e-4 apart.
    """
    hp = worker.case_hparams(case)
    lra_sorting = (hp.get("sinkhorn_sorting") == "lra"
                   and hp.get("sinkhorn_sort") == "softmax")
    last = f"_block_{hp['num_layers'] - 1}/ffn_outer/bias"
    batch_norm_last = (hp.get("norm") == "batch" and hp.get("prenorm")
                       and hp.get("final_norm"))
    return np.array([(lra_sorting and name.endswith("sort_kernel"))
                     or (batch_norm_last and name.endswith(last))
                     for name in names], bool)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return worker.run_all(tmp_path_factory.mktemp("parity"))


def _assert_close(actual, expected, what):
    scale = max(1.0, float(np.max(np.abs(expected))))
    diff = float(np.max(np.abs(actual - expected)))
    assert actual.shape == expected.shape, what
    assert diff <= OUTPUT_RTOL * scale, (
        f"{what}: max abs difference {diff:.3g} (output scale {scale:.3g})"
    )


@pytest.mark.parametrize("case", list(worker.CASES))
def test_weights_from_every_backend_give_the_same_outputs(results, case):
    names = worker.output_names(results, case)
    assert names
    for source in worker.BACKENDS:
        for name in names:
            saved = results["keras"][source][f"{case}|{name}"]
            assert np.all(np.isfinite(saved))
            for backend in worker.BACKENDS:
                loaded = results["run"][backend][f"{case}|{source}|{name}"]
                _assert_close(
                    loaded, saved,
                    f"{case} {name}: weights saved under {source}, "
                    f"loaded under {backend}",
                )


@pytest.mark.parametrize("case", list(worker.CASES))
def test_one_optimizer_step_gives_the_same_weights(results, case):
    names = {b: results["names"][b][case] for b in worker.BACKENDS}
    assert names["jax"] == names["tensorflow"] == names["torch"]
    losses = [results["run"][b][f"{case}|loss"][0] for b in worker.BACKENDS]
    np.testing.assert_allclose(losses, losses[0], rtol=1e-5)
    noise = _rounding_noise_gradient(case, names["jax"])
    for a, b in PAIRS:
        diffs = [np.abs(results["run"][a][f"{case}|step|{i}"]
                        - results["run"][b][f"{case}|step|{i}"]).ravel()
                 for i in range(len(names["jax"]))]
        for i in np.flatnonzero(noise):
            assert diffs[i].max() < 2 * STEP_LEARNING_RATE, (
                f"{case} {names['jax'][i]}: {a} vs {b} after one step: "
                f"{diffs[i].max():.3g}, beyond Adam's bound")
        checked = np.flatnonzero(~noise)
        worst = checked[np.argmax([diffs[i].max() for i in checked])]
        assert diffs[worst].max() <= STEP_ATOL, (
            f"{case} {names['jax'][worst]}: {a} vs {b} after one step: "
            f"{diffs[worst].max():.3g}"
        )
        close = np.mean(np.concatenate([diffs[i] for i in checked])
                        <= STEP_ATOL_TYPICAL)
        assert close >= STEP_SHARE, (
            f"{case}: {a} vs {b}: only {close:.2%} of the weights within "
            f"{STEP_ATOL_TYPICAL} after one step"
        )
    # The step did something: most weights moved from where they started.
    moved = [
        not np.allclose(results["run"]["jax"][f"{case}|step|{i}"],
                        results["run"]["jax"][f"{case}|start|{i}"])
        for i in range(len(names["jax"]))
    ]
    assert np.mean(moved) > 0.5


@pytest.mark.parametrize("source", worker.BACKENDS)
@pytest.mark.parametrize("case", worker.EXPORTED)
def test_saved_model_serves_the_keras_outputs(results, case, source):
    for name in worker.output_names(results, case):
        _assert_close(
            results["serve"][f"{case}|{source}|{name}"],
            results["keras"][source][f"{case}|{name}"],
            f"{case} {name}: SavedModel exported from {source}",
        )
