"""Tests of the training techniques: multitask loss, SPT, augmentation.

The data side (`masking.denoising_targets`, the techniques' batch
transforms in `TechniqueBatches`, `training.inputs.run_batches`) is checked
in numpy; the model side against values
computed by hand from the model's outputs (the multitask and
pretraining losses), by perturbing inputs (causal pretrainers, the
two-tower token head), and end to end through `lra_keras.training.run` on
tiny generated ListOps written in the official TSV format (SPT carries the
encoder into the classifier; a multitask + augment run saves a classifier
that reloads in safe mode). The masking statistics and the label
invariance of the augmentations are tested in
tests/techniques/test_masking.py and tests/techniques/test_augmentations.py.
"""

import csv
import json

import keras
import numpy as np
import pytest

from lra_keras import techniques
from lra_keras.batching import LengthBucketedBatches
from lra_keras.data import listops
from lra_keras.hparams import get_hparams
from lra_keras.models import build_classifier
from lra_keras.models import build_pretrainer
from lra_keras.models import classifier_kwargs
from lra_keras.models import pretrainer_kwargs
from lra_keras.tasks import TASKS
from lra_keras.techniques import masking
from lra_keras.techniques.batches import TechniqueBatches
from lra_keras.techniques.multitask import MULTITASK
from lra_keras.techniques.multitask import MultitaskBatch
from lra_keras.techniques.spt import SPT
from lra_keras.techniques.spt import PretrainingBatch
from lra_keras.training import compile_pretrainer
from lra_keras.training import load_splits
from lra_keras.training import make_batches
from lra_keras.training import make_optimizer
from lra_keras.training import pretraining
from lra_keras.training import run
from lra_keras.training import run_batches
from lra_keras.training import run_directory
from lra_keras.training import run_name
from lra_keras.training import self_pretrain
from tests.testing import RELEASE_TREES
from tests.testing import to_numpy
from tests.testing import token_inputs
from tests.testing import write_listops_release

# A tiny Transformer on short sequences. Full-length batches (no length
# buckets) keep every step one shape, hence one compilation per backend.
TINY = dict(sequence_length=64, epochs=1, batch_size=8, hidden_dim=16,
            num_layers=1, num_heads=2, intermediate_dim=32, bucket_step=None)
# A constant rate and no weight decay: `learning_rate=0.0` then changes no
# weight.
CONSTANT = dict(warmup_steps=0, schedule="constant", weight_decay=0.0)


def _tiny_hp(task="listops", technique="none", augment=False, **overrides):
    release = RELEASE_TREES if task == "listops" else {}
    return get_hparams(task, "transformer", "quick", technique, augment,
                       **{**TINY, **release, **overrides})


def _listops_rows(n, seed):
    """Short, shallow ListOps trees (source, label): fast to generate."""
    return listops.generate(n, seed=seed, max_depth=3, max_args=4,
                            min_length=5, max_length=60, num_workers=1)


def _listops_arrays(n, seed, max_length=64):
    rows = _listops_rows(n, seed)
    x = listops.tokenize_batch([r[0] for r in rows], max_length=max_length)
    return x, np.array([r[1] for r in rows], np.int32)


def _write_listops(data_dir, seed=3):
    """40 / 10 / 10 rows in the official basic_<split>.tsv files.

    With `batch_size=10` every batch of every split has one shape: one
    compilation of each step.
    """
    rows = _listops_rows(60, seed)
    return write_listops_release(data_dir, rows)


def _ragged(rng, shape, low, high, padding_id=0):
    """Random ids right-padded to random lengths (one empty, one full)."""
    x = rng.integers(low, high, shape).astype(np.int32)
    rows = x.reshape(-1, shape[-1])
    lengths = rng.integers(0, shape[-1] + 1, len(rows))
    lengths[:2] = (0, shape[-1])
    rows[np.arange(shape[-1]) >= lengths[:, None]] = padding_id
    return rows.reshape(shape)


def _cross_entropy(logits, labels):
    """Per-position sparse cross-entropy in float64."""
    logits = np.asarray(logits, np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return -np.take_along_axis(log_probs, labels[..., None], axis=-1)[..., 0]


def _inputs(x):
    return token_inputs(x, 0)


def _outputs(model, inputs):
    """The model's outputs on one batch, as numpy.

    Compiled: under JAX an eager call compiles every op on its own, which
    costs several times one compiled predict step.
    """
    return model.predict_on_batch(inputs)


def _encoder_weights(model):
    return [to_numpy(w).copy() for w in model.get_layer("encoder").weights]


def _assert_weights_equal(actual, expected):
    assert len(actual) == len(expected) > 0
    for a, b in zip(actual, expected):
        np.testing.assert_array_equal(a, b)


def _read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class _Spy:
    """Wraps a model builder and keeps every model it returns."""

    def __init__(self, builder):
        self.builder, self.models, self.initial = builder, [], []

    def __call__(self, *args, **kwargs):
        model = self.builder(*args, **kwargs)
        self.models.append(model)
        self.initial.append(_encoder_weights(model))
        return model


# === 1. The multitask loss ===


def test_multitask_loss_is_task_loss_plus_weighted_token_loss():
    hp = _tiny_hp(technique="multitask", multitask_loss_weight=0.5)
    model = MULTITASK.build(hp)
    optimizer = make_optimizer(hp, total_steps=10)
    assert MULTITASK.compile(model, optimizer, hp) == "logits_accuracy"
    rng = np.random.default_rng(0)
    x = _ragged(rng, (6, 20), 1, 16)
    x[0, :3] = (11, 5, 15)  # no empty row: every row has real tokens
    y = rng.integers(0, 10, 6).astype(np.int32)
    targets = rng.integers(1, 16, x.shape).astype(np.int32)
    # Unequal weights, zero at padding: a plain mean over positions, or a
    # division by the number of weighted positions, would differ.
    w = (rng.random(x.shape) * (x != 0)).astype(np.float32)
    inputs = _inputs(x)
    logs = model.test_on_batch(
        inputs,
        {"logits": y, "token_logits": targets},
        {"logits": np.ones(6, np.float32), "token_logits": w},
        return_dict=True,
    )
    out = _outputs(model, inputs)
    assert out["token_logits"].shape == (6, 20, hp["vocabulary_size"])
    task = _cross_entropy(out["logits"], y).mean()
    token = (w * _cross_entropy(out["token_logits"], targets)).sum() / w.sum()
    np.testing.assert_allclose(logs["logits_loss"], task, rtol=1e-5)
    np.testing.assert_allclose(logs["token_logits_loss"], token, rtol=1e-5)
    np.testing.assert_allclose(logs["loss"], task + 0.5 * token, rtol=1e-5)
    np.testing.assert_allclose(
        logs["logits_accuracy"], np.mean(out["logits"].argmax(-1) == y)
    )

    # A validation batch carries zero token weights: the loss is the task
    # loss alone (0 / 0 counts as 0, not NaN).
    logs = model.test_on_batch(
        inputs,
        {"logits": y, "token_logits": x},
        {"logits": np.ones(6, np.float32),
         "token_logits": np.zeros(x.shape, np.float32)},
        return_dict=True,
    )
    assert logs["token_logits_loss"] == 0.0
    np.testing.assert_allclose(logs["loss"], task, rtol=1e-5)


# === 2. The batches of each technique (numpy) ===


def _base_batches(x, y=None, batch_size=8, padding_id=0, shuffle=False):
    return LengthBucketedBatches(x, y, batch_size=batch_size,
                                 padding_id=padding_id, bucket_step=16,
                                 shuffle=shuffle, seed=0)


@pytest.mark.numpy_only
@pytest.mark.parametrize("loss_positions", ["real", "masked"])
def test_multitask_batches_corrupt_selected_tokens_and_weight_positions(
        loss_positions):
    rng = np.random.default_rng(1)
    x = _ragged(rng, (40, 64), 1, 16)
    y = rng.integers(0, 10, 40).astype(np.int32)
    base = _base_batches(x, y)
    batches = TechniqueBatches(
        base, "listops", seed=3,
        transform=MultitaskBatch("listops", loss_positions=loss_positions),
    )
    assert len(batches) == len(base)
    selected_total = masks = 0
    for i in range(len(batches)):
        clean, labels = base[i]
        inputs, targets, weights = batches[i]
        real = clean["token_ids"] != 0
        assert set(inputs) == {"token_ids", "padding_mask"}
        assert inputs["token_ids"].dtype == np.int32
        np.testing.assert_array_equal(inputs["padding_mask"], real)
        np.testing.assert_array_equal(targets["logits"], labels)
        np.testing.assert_array_equal(targets["token_logits"],
                                      clean["token_ids"])
        np.testing.assert_array_equal(weights["logits"], 1.0)
        token_weights = weights["token_logits"]
        assert token_weights.dtype == np.float32
        assert token_weights.shape == real.shape
        corrupted = inputs["token_ids"] != clean["token_ids"]
        assert not (corrupted & ~real).any()  # padding stays padding
        if loss_positions == "real":
            np.testing.assert_array_equal(token_weights, real)
        else:
            # The weights mark the selected tokens: 30% of each row's real
            # tokens, and every changed token among them.
            n = real.sum(axis=1)
            expected = np.where(n > 0, np.maximum(
                np.floor(0.3 * n + 0.5), 1), 0)
            np.testing.assert_array_equal(token_weights.sum(axis=1),
                                          expected)
            assert not (corrupted & (token_weights == 0)).any()
            selected_total += token_weights.sum()
            # A selected token is the mask token, an ordinary token (random
            # replacement) or, rarely, a random draw of itself.
            ids = inputs["token_ids"][token_weights == 1]
            assert ((ids == listops.MASK_ID)
                    | ((ids >= 1) & (ids < listops.MASK_ID))).all()
        masks += (inputs["token_ids"] == listops.MASK_ID).sum()
    assert masks > 0
    assert loss_positions == "real" or selected_total > 0


@pytest.mark.numpy_only
def test_without_random_replacements_the_mask_token_marks_the_selection():
    rng = np.random.default_rng(2)
    x = _ragged(rng, (16, 64), 1, 16)
    inputs, targets, weights = masking.denoising_targets(
        x, "listops", rng, "masked", mask_rate=0.5, random_fraction=0.0,
    )
    np.testing.assert_array_equal(targets, x)
    np.testing.assert_array_equal(inputs == listops.MASK_ID, weights == 1)
    np.testing.assert_array_equal(inputs[weights == 0], x[weights == 0])


@pytest.mark.numpy_only
@pytest.mark.parametrize(
    "task, shape, low, high",
    [("listops", (32, 64), 1, 16), ("text", (32, 64), 1, 257),
     ("retrieval", (16, 2, 64), 1, 257), ("image", (32, 64), 0, 256)],
)
def test_random_replacements_are_never_padding_or_mask(task, shape, low,
                                                       high):
    rng = np.random.default_rng(3)
    spec = TASKS[task]
    padding_id = spec.padding_id
    if padding_id is None:
        x = rng.integers(low, high, shape).astype(np.uint8)
        real = np.ones(shape, bool)
    else:
        x = _ragged(rng, shape, low, high)
        real = x != padding_id
    inputs, _, weights = masking.denoising_targets(
        x, task, rng, "multitask", mask_rate=1.0, random_fraction=1.0,
    )
    np.testing.assert_array_equal(weights, real)
    replaced = inputs[real]
    assert replaced.min() >= spec.ordinary_ids[0]
    assert replaced.max() < spec.ordinary_ids[1]
    assert not (replaced == spec.mask_id).any()
    if padding_id is not None:
        assert not (replaced == padding_id).any()
        np.testing.assert_array_equal(inputs[~real], padding_id)


@pytest.mark.numpy_only
@pytest.mark.parametrize("shape", [(8, 24), (4, 2, 24)])
def test_causal_targets_are_the_next_token_where_both_are_real(shape):
    rng = np.random.default_rng(4)
    x = _ragged(rng, shape, 1, 257)
    inputs, targets, weights = masking.denoising_targets(
        x, "text", rng, "causal", mask_rate=0.15, random_fraction=0.0,
    )
    np.testing.assert_array_equal(inputs, x)
    np.testing.assert_array_equal(targets[..., :-1], x[..., 1:])
    real = x != 0
    np.testing.assert_array_equal(weights[..., :-1],
                                  real[..., :-1] & real[..., 1:])
    np.testing.assert_array_equal(weights[..., -1], 0.0)
    assert weights.dtype == np.float32 and weights.sum() > 0


@pytest.mark.numpy_only
def test_pixel_targets_are_normalised_values_with_a_trailing_axis():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 256, (6, 64)).astype(np.uint8)
    x[0, :2] = (0, 255)
    inputs, targets, weights = masking.denoising_targets(
        x, "image", rng, "masked", mask_rate=0.5, random_fraction=0.0,
        pixel_targets=True,
    )
    assert targets.dtype == np.float32 and targets.shape == (6, 64, 1)
    np.testing.assert_allclose(targets[..., 0], x / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(weights.sum(axis=1), 32)
    # NTFS regresses the normalised value its encoder reads (CIFAR's
    # 122.6 / 255 and 61.0 / 255).
    mean, std = 122.6 / 255, 61.0 / 255
    _, normalised, _ = masking.denoising_targets(
        x, "image", np.random.default_rng(5), "masked", mask_rate=0.5,
        random_fraction=0.0, pixel_targets=True,
        pixel_normalization=(mean, std))
    np.testing.assert_allclose(normalised[..., 0], (x / 255.0 - mean) / std,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(inputs == 256, weights == 1)
    assert inputs.dtype == np.int32
    with pytest.raises(ValueError, match="pixel task"):
        masking.denoising_targets(
            _ragged(rng, (2, 8), 1, 16), "listops", rng, "masked",
            mask_rate=0.5, random_fraction=0.0, pixel_targets=True,
        )
    with pytest.raises(ValueError, match="objective"):
        masking.denoising_targets(x, "image", rng, "spt", mask_rate=0.5,
                                     random_fraction=0.0)
    with pytest.raises(ValueError, match="loss_positions"):
        masking.denoising_targets(x, "image", rng, "masked",
                                     mask_rate=0.5, random_fraction=0.0,
                                     loss_positions="all")


@pytest.mark.numpy_only
def test_validation_multitask_batches_are_clean_and_unaugmented():
    x, y = _listops_arrays(24, seed=6)
    hp = _tiny_hp(technique="multitask", augment=True, batch_size=8,
                  bucket_step=16)
    splits = {split: (x, y) for split in ("train", "val", "test")}
    augmentation = techniques.get_augmentation("listops")
    _, val, test = run_batches("listops", splits, hp, MULTITASK,
                               augmentation)
    base = _base_batches(x, y)
    for i in range(len(val)):
        clean, labels = base[i]
        inputs, targets, weights = val[i]
        np.testing.assert_array_equal(inputs["token_ids"],
                                      clean["token_ids"])
        np.testing.assert_array_equal(inputs["padding_mask"],
                                      clean["padding_mask"])
        np.testing.assert_array_equal(targets["logits"], labels)
        np.testing.assert_array_equal(weights["logits"], 1.0)
        np.testing.assert_array_equal(weights["token_logits"], 0.0)
        assert weights["token_logits"].shape == clean["token_ids"].shape
        # Test batches are plain, for the classifier alone.
        inputs, labels = test[i]
        np.testing.assert_array_equal(inputs["token_ids"],
                                      clean["token_ids"])
    # Pretraining batches corrupt their inputs, validation ones too.
    pretrain_val = TechniqueBatches(
        _base_batches(x), "listops",
        transform=PretrainingBatch("listops", "masked", mask_rate=0.5),
    )
    inputs, targets, weights = pretrain_val[0]
    assert weights.sum() > 0
    np.testing.assert_array_equal(inputs["token_ids"] == listops.MASK_ID,
                                  weights == 1)


@pytest.mark.numpy_only
def test_augmentation_applies_to_training_batches_only():
    x, y = _listops_arrays(32, seed=7)
    hp = _tiny_hp(augment=True, batch_size=8, bucket_step=16)
    splits = {split: (x, y) for split in ("train", "val", "test")}
    train, val, _ = run_batches("listops", splits, hp, techniques.NONE,
                                techniques.get_augmentation("listops"))
    # The same rows in the same order as the training batches.
    base = LengthBucketedBatches(x, y, batch_size=8, bucket_step=16,
                                 shuffle=True, seed=0)
    assert len(train) == len(base) == len(val)
    changed = 0
    for i in range(len(base)):
        clean, labels = base[i]
        (inputs, train_y), (val_inputs, val_y) = train[i], val[i]
        np.testing.assert_array_equal(train_y, labels)
        plain_inputs, plain_y = _base_batches(x, y)[i]
        np.testing.assert_array_equal(val_y, plain_y)
        np.testing.assert_array_equal(val_inputs["token_ids"],
                                      plain_inputs["token_ids"])
        ids = inputs["token_ids"]
        assert ids.dtype == np.int32
        np.testing.assert_array_equal(inputs["padding_mask"], ids != 0)
        # Operands move; each row keeps its tokens and its padding.
        np.testing.assert_array_equal(np.sort(ids, axis=1),
                                      np.sort(clean["token_ids"], axis=1))
        np.testing.assert_array_equal(ids == 0, clean["token_ids"] == 0)
        changed += (ids != clean["token_ids"]).any(axis=1).sum()
    assert changed > len(x) // 2


@pytest.mark.numpy_only
def test_masks_change_every_epoch_and_repeat_for_a_seed():
    rng = np.random.default_rng(8)
    x = _ragged(rng, (16, 64), 1, 16)
    x[:, 0] = 11

    def make(seed):
        return TechniqueBatches(
            _base_batches(x, batch_size=16), "listops", seed=seed,
            transform=PretrainingBatch("listops", "masked", mask_rate=0.3),
        )

    def arrays(batch):  # (inputs, targets, weights) -> three arrays
        return batch[0]["token_ids"], batch[1], batch[2]

    a, b, other = make(0), make(0), make(1)
    first = arrays(a[0])
    for got, want in zip(arrays(b[0]), first):
        np.testing.assert_array_equal(got, want)
    assert not np.array_equal(arrays(other[0])[2], first[2])
    a.on_epoch_end()
    assert a.epoch == 1
    second = arrays(a[0])
    np.testing.assert_array_equal(second[1], first[1])  # same clean batch
    assert not np.array_equal(second[2], first[2])  # another mask
    b.on_epoch_end()
    for got, want in zip(arrays(b[0]), second):
        np.testing.assert_array_equal(got, want)


@pytest.mark.numpy_only
def test_retrieval_pairs_mask_each_document_on_its_own():
    rng = np.random.default_rng(9)
    x = _ragged(rng, (12, 2, 64), 1, 257)
    y = rng.integers(0, 2, 12).astype(np.int32)
    base = _base_batches(x, y, batch_size=4)
    batches = TechniqueBatches(
        base, "retrieval",
        transform=MultitaskBatch("retrieval", loss_positions="masked"),
    )
    for i in range(len(batches)):
        clean, _ = base[i]
        inputs, targets, weights = batches[i]
        real = clean["token_ids"] != 0
        assert inputs["token_ids"].shape == real.shape
        assert real.ndim == 3 and real.shape[1] == 2
        np.testing.assert_array_equal(inputs["padding_mask"], real)
        np.testing.assert_array_equal(targets["token_logits"],
                                      clean["token_ids"])
        n = real.sum(axis=-1)  # (batch, 2): real tokens per document
        expected = np.where(n > 0, np.maximum(np.floor(0.3 * n + 0.5), 1), 0)
        np.testing.assert_array_equal(weights["token_logits"].sum(axis=-1),
                                      expected)
        assert not (weights["token_logits"].astype(bool) & ~real).any()


@pytest.mark.numpy_only
def test_bad_technique_arguments_raise():
    base = _base_batches(np.ones((4, 8), np.int32))
    with pytest.raises(ValueError, match="objective"):
        TechniqueBatches(base, "listops", transform=PretrainingBatch(
            "listops", "mlm", mask_rate=0.3))[0]
    with pytest.raises(ValueError, match="loss_positions"):
        labelled = _base_batches(np.ones((4, 8), np.int32),
                                 np.zeros(4, np.int32))
        TechniqueBatches(labelled, "listops", transform=MultitaskBatch(
            "listops", loss_positions="selected"))[0]
    with pytest.raises(ValueError, match="loss_positions"):
        get_hparams("listops", multitask_loss_positions="selected")
    with pytest.raises(ValueError, match="multitask"):
        techniques.get_augmentation("text")
    with pytest.raises(ValueError, match="Unknown technique"):
        techniques.get_technique("distill")
    augment = techniques.get_augmentation("pathfinder")
    assert augment.make(dict(augment_d4=False), seed=0) is None
    # YCTFS's flips and affine maps alone, or after a D4 symmetry
    images = np.random.default_rng(0).integers(1, 256, (6, 64))
    for d4 in (False, True):
        step = augment.make(dict(augment_d4=d4, augment_affine=True), seed=0)
        out = step(images, np.random.default_rng(0))
        assert out.shape == images.shape and not np.array_equal(out, images)


@pytest.mark.numpy_only
def test_multitask_token_targets_stay_ids_whatever_the_pretrain_loss():
    # The multitask token head is a classifier over ids (cross-entropy);
    # `pretrain_loss` belongs to self-pretraining. Pixel-value targets here
    # would be cast to ids 0 and 1 by the cross-entropy, silently.
    hp = _tiny_hp(task="image", technique="multitask", pretrain_loss="l1")
    rng = np.random.default_rng(17)
    x = rng.integers(0, 256, (8, 64)).astype(np.uint8)
    y = rng.integers(0, 10, 8).astype(np.int32)
    transform = MULTITASK.batch_transform("image", hp, training=True)
    _, targets, weights = make_batches(x, y, hp, transform=transform)[0]
    assert targets["token_logits"].shape == (8, 64)
    assert np.issubdtype(targets["token_logits"].dtype, np.integer)
    np.testing.assert_array_equal(targets["token_logits"], x)
    # The SPT objective of the same hyperparameters regresses the pixels.
    _, targets, _ = make_batches(
        x, None, hp, transform=SPT.pretraining_transform("image", hp))[0]
    assert targets.shape == (8, 64, 1) and targets.dtype == np.float32


# === 3. SPT carries the encoder into the classifier ===


@pytest.mark.one_backend
def test_spt_run_fine_tunes_from_the_pretrained_encoder_and_reuses_it(
        tmp_path, monkeypatch, capsys):
    spy = _Spy(build_pretrainer)
    monkeypatch.setattr(pretraining, "build_pretrainer", spy)
    data_dir = _write_listops(tmp_path / "data")
    out = tmp_path / "run"
    # A zero fine-tuning rate leaves the loaded encoder as it was saved.
    hp = _tiny_hp(technique="spt", learning_rate=0.0, pretrain_epochs=2,
                  pretrain_learning_rate=1e-2, batch_size=10, **CONSTANT)
    kwargs = dict(data_dir=data_dir, out_dir=out, saved_models_dir=None,
                  verbose=0)
    classifier, metrics = run("listops", hp, **kwargs)
    assert "Self-pretraining (masked, ce loss)" in capsys.readouterr().out
    assert metrics["technique"] == "spt" and metrics["pretrain_seconds"] > 0
    rows = _read_csv(out / "pretrain" / "metrics.csv")
    assert len(rows) == 2
    assert all(np.isfinite(float(r["loss"])) for r in rows)
    assert "val_token_accuracy" in rows[0]

    # The pretrainer trained its encoder, and the classifier holds it.
    (pretrainer,) = spy.models
    pretrained = _encoder_weights(pretrainer)
    assert any(not np.array_equal(a, b)
               for a, b in zip(pretrained, spy.initial[0]))
    _assert_weights_equal(_encoder_weights(classifier), pretrained)
    # So does any classifier that loads the saved encoder weights.
    saved = out / "pretrain" / "encoder.weights.h5"
    fresh = build_classifier(**classifier_kwargs(hp))
    assert any(not np.array_equal(a, b)
               for a, b in zip(_encoder_weights(fresh), pretrained))
    fresh.get_layer("encoder").load_weights(str(saved))
    _assert_weights_equal(_encoder_weights(fresh), pretrained)

    # Fine-tuning interrupted after the pretraining finished: only the
    # config and pretrain/ are left, and a rerun fine-tunes again from it.
    for name in ("metrics.json", "metrics.csv", "model.keras",
                 "best.weights.h5"):
        (out / name).unlink()
    classifier, _ = run("listops", hp, **kwargs)
    assert "Self-pretraining already done" in capsys.readouterr().out
    assert len(spy.models) == 1  # no second pretrainer
    _assert_weights_equal(_encoder_weights(classifier), pretrained)

    # The saved pretraining belongs to these hyperparameters only.
    with pytest.raises(ValueError, match="pretrain_learning_rate"):
        run("listops", dict(hp, pretrain_learning_rate=1e-3), **kwargs)


# === 4. Causal SPT ===


@pytest.mark.one_backend
@pytest.mark.parametrize("model", ["transformer", "s4d"])
def test_causal_pretrainer_output_ignores_later_tokens(model):
    sizes = dict(sequence_length=32, hidden_dim=16, num_layers=1)
    family = (dict(num_heads=2, intermediate_dim=32)
              if model == "transformer" else dict(state_dim=8))
    hp = get_hparams("listops", model, "quick", "spt",
                     pretrain_objective="causal", **sizes, **family)
    assert hp["causal"] is True
    masked = get_hparams("listops", model, "quick", "spt", **sizes, **family)
    assert masked["causal"] is False
    rng = np.random.default_rng(12)
    x = rng.integers(1, 16, (2, 24)).astype(np.int32)
    later = x.copy()
    t = 9
    later[:, t + 1:] = rng.integers(1, 16, (2, 24 - t - 1))
    for config, causal in ((hp, True), (masked, False)):
        pretrainer = build_pretrainer(**pretrainer_kwargs(config))
        a = _outputs(pretrainer, _inputs(x))
        b = _outputs(pretrainer, _inputs(later))
        # a logit per token id, the S4 rows' end token included
        assert config["vocabulary_size"] == 18
        assert a.shape == (2, 24, 18)
        if causal:
            np.testing.assert_allclose(a[:, :t + 1], b[:, :t + 1],
                                       atol=1e-5, rtol=0)
        else:  # the check can fail: a non-causal model looks ahead
            assert np.abs(a[:, :t + 1] - b[:, :t + 1]).max() > 1e-4
        assert np.abs(a[:, t + 1:] - b[:, t + 1:]).max() > 1e-4


# === 5. Pretraining losses ===


@pytest.mark.one_backend
def test_l1_pixel_pretraining_runs_and_its_loss_is_the_weighted_mae(
        tmp_path, monkeypatch):
    spy = _Spy(build_pretrainer)
    monkeypatch.setattr(pretraining, "build_pretrainer", spy)
    hp = _tiny_hp(task="image", technique="spt", pretrain_loss="l1",
                  pretrain_epochs=1)
    assert hp["pretrain_loss"] == "l1" and hp["padding_id"] is None
    rng = np.random.default_rng(13)
    x_train = rng.integers(0, 256, (24, 64)).astype(np.uint8)
    x_val = rng.integers(0, 256, (8, 64)).astype(np.uint8)
    path = self_pretrain("image", hp, x_train, x_val, tmp_path / "pt",
                         verbose=0)
    assert path.is_file()
    (row,) = _read_csv(tmp_path / "pt" / "metrics.csv")
    assert np.isfinite(float(row["loss"])) and float(row["loss"]) > 0
    assert np.isfinite(float(row["val_loss"]))
    assert spy.models[0].output_shape == (None, None, 1)
    assert json.loads((tmp_path / "pt" / "metrics.json").read_text())[
        "loss"] == "l1"

    # The pretrainer, as `compile_pretrainer` compiled it, on one batch.
    model = spy.models[0]
    inputs, targets, weights = make_batches(
        x_val, None, hp, transform=SPT.pretraining_transform("image", hp))[0]
    assert targets.shape == (8, 64, 1)
    np.testing.assert_array_equal(inputs["token_ids"] == 256, weights == 1)
    np.testing.assert_array_equal(weights.sum(axis=1), 32)
    logs = model.test_on_batch(inputs, targets, weights, return_dict=True)
    p = _outputs(model, inputs)
    expected = (weights * np.abs(targets - p)[..., 0]).sum() / weights.sum()
    np.testing.assert_allclose(logs["loss"], expected, rtol=1e-5)


def test_ce_pretraining_loss_is_the_mean_over_masked_tokens():
    hp = _tiny_hp(technique="spt")
    model = build_pretrainer(**pretrainer_kwargs(hp))
    compile_pretrainer(model, hp, total_steps=10)
    x, _ = _listops_arrays(8, seed=14)
    inputs, targets, weights = make_batches(
        x, None, hp, transform=SPT.pretraining_transform("listops", hp))[0]
    # NTFS masks without random replacements; the loss is at the masks.
    assert weights.sum() > 0
    np.testing.assert_array_equal(inputs["token_ids"] == listops.MASK_ID,
                                  weights == 1)
    logs = model.test_on_batch(inputs, targets, weights, return_dict=True)
    logits = _outputs(model, inputs)
    ce = _cross_entropy(logits, targets)
    np.testing.assert_allclose(
        logs["loss"], (weights * ce).sum() / weights.sum(), rtol=1e-5)
    hits = logits.argmax(-1) == targets
    np.testing.assert_allclose(
        logs["token_accuracy"], (weights * hits).sum() / weights.sum(),
        rtol=1e-6)


# === 6. Multitask on retrieval pairs ===


def test_two_tower_token_head_equals_each_document_encoded_alone():
    hp = get_hparams("retrieval", "transformer", "quick", "multitask",
                     sequence_length=32, hidden_dim=16, num_layers=1,
                     num_heads=2, intermediate_dim=32, batch_size=4)
    model = MULTITASK.build(hp)
    MULTITASK.compile(model, make_optimizer(hp, total_steps=1), hp)
    rng = np.random.default_rng(15)
    x = _ragged(rng, (4, 2, 32), 1, 257)
    x[:, :, 0] = 66  # no empty document
    y = rng.integers(0, 2, 4).astype(np.int32)
    inputs, targets, weights = make_batches(
        x, y, hp,
        transform=MULTITASK.batch_transform("retrieval", hp, training=True),
    )[0]
    out = _outputs(model, inputs)
    assert out["logits"].shape == (4, 1)  # the YCTFS row's binary_logit
    assert out["token_logits"].shape == (4, 2, 32, 258)
    # The model's own encoder and token head on one document at a time.
    encoder = model.get_layer("encoder")
    head = model.get_layer("token_logits")
    alone = keras.Model(encoder.input, head(encoder.output))
    for document in (0, 1):
        expected = _outputs(alone, {
            "token_ids": inputs["token_ids"][:, document],
            "padding_mask": inputs["padding_mask"][:, document],
        })
        np.testing.assert_allclose(out["token_logits"][:, document],
                                   expected, atol=1e-5, rtol=1e-5)

    # The token loss of a batch of pairs: every document's real tokens.
    w = weights["token_logits"]
    assert w.shape == (4, 2, 32)
    np.testing.assert_array_equal(w, inputs["padding_mask"])
    logs = model.test_on_batch(inputs, targets, weights, return_dict=True)
    ce = _cross_entropy(out["token_logits"], targets["token_logits"])
    np.testing.assert_allclose(logs["token_logits_loss"],
                               (w * ce).sum() / w.sum(), rtol=1e-5)


# === 7. Guards of run() and the technique hyperparameters ===


def test_resuming_with_other_hyperparameters_names_the_keys(tmp_path):
    hp = _tiny_hp()
    out = tmp_path / "run"
    (out / "backup").mkdir(parents=True)  # an interrupted run
    config = json.dumps(dict(hparams=hp, seed=0, data_dir=str(tmp_path)),
                        default=str)
    (out / "config.json").write_text(config)
    # its own settings resume
    assert run_directory.prepare(out, hp, data_dir=tmp_path) is None
    changed = dict(hp, learning_rate=0.5, hidden_dim=8)
    with pytest.raises(run_directory.RunDirectoryError,
                       match=r"differing: hidden_dim, learning_rate\)"):
        run("listops", changed, data_dir=tmp_path, out_dir=out,
            saved_models_dir=None, verbose=0)
    assert (out / "config.json").read_text() == config  # left untouched


@pytest.mark.numpy_only
def test_run_name_and_technique_hyperparameter_checks():
    assert run_name(get_hparams("listops")) == "listops_transformer"
    assert run_name(get_hparams(
        "listops", "s4d", "quick", "multitask", augment=True
    )) == "listops_s4d_multitask_augment_quick"
    assert run_name(get_hparams("text", technique="spt")) == (
        "text_transformer_spt")
    assert run_name(get_hparams("image", augment=True)) == (
        "image_transformer_augment")
    with pytest.raises(ValueError, match="augmentation"):
        get_hparams("text", augment=True)
    with pytest.raises(ValueError, match="pixel task"):
        get_hparams("listops", technique="spt", pretrain_loss="l1")
    with pytest.raises(ValueError, match="technique 'spt'"):
        get_hparams("text", compute_tied_epochs=30, pretrain_share=0.2)
    for share in (None, 1.0, -0.1):
        with pytest.raises(ValueError, match="pretrain_share"):
            get_hparams("text", technique="spt", compute_tied_epochs=30,
                        pretrain_share=share)
    with pytest.raises(ValueError, match="compute_tied_epochs"):
        get_hparams("text", technique="spt", compute_tied_epochs=2.5,
                    pretrain_share=0.2)
    hp = get_hparams("text", technique="spt", compute_tied_epochs=30,
                     pretrain_share=0.2)
    assert (hp["pretrain_epochs"], hp["epochs"]) == (6, 24)
    hp = get_hparams("text", technique="spt", compute_tied_epochs=30,
                     pretrain_share=0.0)
    assert (hp["pretrain_epochs"], hp["epochs"]) == (0, 30)


@pytest.mark.numpy_only
def test_a_pretrain_share_without_a_compute_budget_is_an_error():
    # Without `compute_tied_epochs` the share would be ignored silently and
    # the run would pretrain and fine-tune for the full epochs.
    with pytest.raises(ValueError, match="compute_tied_epochs"):
        get_hparams("text", technique="spt", pretrain_share=0.2)


@pytest.mark.numpy_only
def test_pathfinder_augment_trains_on_all_three_difficulties(
        tmp_path, monkeypatch):
    monkeypatch.setenv("LRA_KERAS_DATA", str(tmp_path))
    hp = get_hparams("pathfinder", "transformer", "quick", augment=True,
                     num_samples=20)
    assert hp["train_difficulty"] == "all" and hp["difficulty"] == "hard"
    splits = load_splits("pathfinder", hp)
    from lra_keras.data import pathfinder

    parts = [pathfinder.load_pathfinder("train", difficulty=d,
                                        num_samples=20, progress=False)
             for d in pathfinder.DIFFICULTIES]
    x, y = splits["train"]
    assert x.shape == (3 * 16, 1024)  # 80% of 20 from each set
    np.testing.assert_array_equal(x, np.concatenate([p[0] for p in parts]))
    np.testing.assert_array_equal(y, np.concatenate([p[1] for p in parts]))
    # YCTFS's code validates and tests on the three sets pooled
    assert hp["eval_difficulty"] == "all" and hp["augment_affine"]
    for split in ("val", "test"):
        pooled = [pathfinder.load_pathfinder(split, difficulty=d,
                                             num_samples=20, progress=False)
                  for d in pathfinder.DIFFICULTIES]
        np.testing.assert_array_equal(
            splits[split][0], np.concatenate([p[0] for p in pooled]))
    # eval_difficulty None: the hard set's
    hp["eval_difficulty"] = None
    hard = pathfinder.load_pathfinder("val", difficulty="hard",
                                      num_samples=20, progress=False)
    np.testing.assert_array_equal(
        load_splits("pathfinder", hp)["val"][0], hard[0])


def _write_cifar_binary(directory, rng, per_batch=4):
    """CIFAR-10 binary batches: per record a label byte, R, G, B planes."""
    folder = directory / "cifar-10-batches-bin"
    folder.mkdir(parents=True)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    for name in names:
        labels = rng.integers(0, 10, (per_batch, 1)).astype(np.uint8)
        planes = rng.integers(0, 256, (per_batch, 3 * 32 * 32), np.uint8)
        (folder / f"{name}.bin").write_bytes(
            np.concatenate([labels, planes], axis=1).tobytes())
    return directory


@pytest.mark.numpy_only
def test_image_augment_loads_colour_training_images(tmp_path):
    from lra_keras.data import image

    data_dir = _write_cifar_binary(tmp_path, np.random.default_rng(16))
    hp = get_hparams("image", "transformer", "quick", augment=True)
    splits = load_splits("image", hp, data_dir)
    rgb, y = image.load_cifar10_rgb("train", data_dir)
    assert rgb.shape == (18, 32, 32, 3)  # 20 images, the last 10% are val
    np.testing.assert_array_equal(splits["train"][0],
                                  rgb.reshape(len(rgb), -1))
    np.testing.assert_array_equal(splits["train"][1], y)
    for split in ("val", "test"):
        x, labels = image.load_image(split, data_dir)
        np.testing.assert_array_equal(splits[split][0], x)
        np.testing.assert_array_equal(splits[split][1], labels)
    assert splits["val"][0].shape == (2, 1024)
    plain = load_splits("image", get_hparams("image", "transformer",
                                              "quick"), data_dir)
    assert plain["train"][0].shape == (18, 1024)


# Under JAX the colour policy's eager ops compile one by one (about 10 s
# for a first batch); the other backends take well under a second.
_LARGE_UNDER_JAX = (pytest.mark.large if keras.backend.backend() == "jax"
                    else lambda test: test)


@_LARGE_UNDER_JAX
def test_image_augment_feeds_grayscale_training_batches(tmp_path):
    from lra_keras.data import image

    data_dir = _write_cifar_binary(tmp_path, np.random.default_rng(16))
    hp = get_hparams("image", "transformer", "quick", augment=True,
                     batch_size=32)
    splits = load_splits("image", hp, data_dir)
    augment = techniques.get_augmentation("image").make(hp, seed=0)
    batches = make_batches(*splits["train"], hp, shuffle=True,
                           augment=augment)
    assert len(batches) == 1
    inputs, labels = batches[0]
    ids = inputs["token_ids"]
    assert ids.shape == (18, 1024) and ids.dtype == np.int32
    assert ids.min() >= 0 and ids.max() <= 255
    assert inputs["padding_mask"].all()
    np.testing.assert_array_equal(np.sort(labels), np.sort(splits["train"][1]))
    # Validation batches are the plain grayscale sequences.
    inputs, _ = make_batches(*splits["val"], hp)[0]
    np.testing.assert_array_equal(inputs["token_ids"],
                                  image.load_image("val", data_dir)[0])


# === 8. Multitask end to end ===


@pytest.mark.one_backend
def test_multitask_augmented_run_saves_a_single_output_classifier(tmp_path):
    data_dir = _write_listops(tmp_path / "data")
    out = tmp_path / "run"
    # Equal batches: on TensorFlow, Keras averages the per-output losses
    # over batches unweighted (their batch size is not static in the traced
    # step) and the total loss weighted by batch size.
    hp = _tiny_hp(technique="multitask", augment=True, epochs=2,
                  batch_size=10)
    classifier, metrics = run("listops", hp, data_dir=data_dir, out_dir=out,
                              saved_models_dir=None, verbose=0)
    assert (metrics["technique"], metrics["augment"]) == ("multitask", True)
    assert metrics["epochs_run"] == 2
    rows = _read_csv(out / "metrics.csv")
    assert len(rows) == 2
    assert {"val_logits_accuracy", "token_logits_loss",
            "val_token_logits_loss"} <= set(rows[0])
    for row in rows:
        # Validation batches carry no token loss.
        assert float(row["val_token_logits_loss"]) == 0.0
        np.testing.assert_allclose(float(row["val_loss"]),
                                   float(row["val_logits_loss"]), rtol=1e-5)
        assert float(row["token_logits_loss"]) > 0
    assert not isinstance(classifier.output, dict)
    assert "token_logits" not in [layer.name for layer in classifier.layers]

    x, y = listops.read_tsv(data_dir / "basic_test.tsv", max_length=64)
    inputs = token_inputs(x, hp["padding_id"])
    expected = _outputs(classifier, inputs)
    assert expected.shape == (10, 10)
    # The test accuracy is the saved classifier's on the whole test split.
    assert metrics["test_accuracy"] == pytest.approx(
        np.mean(expected.argmax(-1) == y))
    loaded = keras.saving.load_model(out / "model.keras", safe_mode=True)
    np.testing.assert_allclose(_outputs(loaded, inputs),
                               expected, atol=1e-5, rtol=1e-5)


def test_pretraining_takes_its_own_schedule_and_warmup():
    # NTFS's -mlm files pretrain with constant_warmup and their own warmup
    # where fine-tuning is cosine (s4-lra-imdb-mlm.yaml line 48: 1000;
    # the fine-tuning file's cosine warms up 5000).
    from lra_keras.training.optimization import make_schedule
    from lra_keras.training.pretraining import pretraining_hparams

    hp = get_hparams("text", "s4", technique="spt")
    assert (hp["schedule"], hp["warmup_steps"]) == ("cosine", 5000)
    pt = pretraining_hparams(hp)
    assert (pt["schedule"], pt["warmup_steps"]) == ("constant", 1000)
    assert pt["learning_rate"] == hp["pretrain_learning_rate"]
    peak = pt["learning_rate"]
    schedule = make_schedule(pt, 100000)
    rates = [float(keras.ops.convert_to_numpy(schedule(t)))
             for t in (500, 1000, 60000)]
    np.testing.assert_allclose(rates, [peak / 2, peak, peak], rtol=1e-5)
    # Unset, the fine-tuning's (and the quick preset keeps its own).
    plain = pretraining_hparams(dict(hp, pretrain_schedule=None,
                                     pretrain_warmup_steps=None))
    assert (plain["schedule"], plain["warmup_steps"]) == ("cosine", 5000)
    # The fine-tuning's step count and time limit stay the fine-tuning's.
    cut = pretraining_hparams(dict(hp, train_steps=150,
                                   time_limit_minutes=2.0))
    assert (cut["train_steps"], cut["time_limit_minutes"]) == (None, None)
    quick = get_hparams("text", "s4", "quick", technique="spt")
    assert quick["pretrain_schedule"] is None


@pytest.mark.parametrize("technique", ["none", "multitask", "spt"])
def test_jit_compile_reaches_every_phase(technique):
    # None leaves Keras's "auto": XLA under JAX, eager under PyTorch and
    # under TensorFlow on a CPU; True and False are passed as they are.
    auto = keras.backend.backend() == "jax"
    for jit, expected in ((None, auto), (True, True), (False, False)):
        hp = get_hparams("listops", "s4d", technique=technique,
                         hidden_dim=8, num_layers=1, sequence_length=16,
                         jit_compile=jit)
        if technique == "spt":
            model = build_pretrainer(**pretrainer_kwargs(hp))
            compile_pretrainer(model, hp, total_steps=4)
        else:
            tech = techniques.get_technique(technique)
            model = tech.build(hp)
            tech.compile(model, "adam", hp)
        assert model.jit_compile is expected, (technique, jit)


def test_a_compiled_step_equals_the_eager_one():
    # Under PyTorch `jit_compile=True` is `torch.compile`; under JAX and
    # TensorFlow, XLA against eager execution. Same weights, same batches:
    # the same three losses.
    losses = {}
    for jit in (False, True):
        keras.utils.set_random_seed(0)
        hp = get_hparams("listops", "s4d", hidden_dim=16, num_layers=1,
                         sequence_length=32, dropout=0.0, jit_compile=jit)
        tech = techniques.get_technique("none")
        model = tech.build(hp)
        tech.compile(model, keras.optimizers.AdamW(1e-2), hp)
        rng = np.random.default_rng(0)
        x = {"token_ids": rng.integers(1, 17, (4, 32)).astype("int32"),
             "padding_mask": np.ones((4, 32), bool)}
        y = rng.integers(0, 10, (4,))
        losses[jit] = [float(model.train_on_batch(x, y)[0])
                       for _ in range(3)]
    np.testing.assert_allclose(losses[True], losses[False], rtol=1e-5)
    assert losses[True][2] < losses[True][0]  # it trains
