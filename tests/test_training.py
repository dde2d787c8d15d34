import csv
import json

import keras
import numpy as np
import pytest
from keras import ops

from lra_keras.data import listops
from lra_keras.hparams import get_hparams
from lra_keras.models import build_classifier
from lra_keras.models import classifier_kwargs
from lra_keras.saving import load_model
from lra_keras.training import make_batches
from lra_keras.training import make_optimizer
from lra_keras.training import make_schedule
from lra_keras.training import run
from lra_keras.training.resume import TrainingBackup
from tests.testing import RELEASE_TREES
from tests.testing import CountBatches
from tests.testing import to_numpy
from tests.testing import value_and_grads
from tests.testing import write_listops_release


def _easy_listops(n, seed=1):
    """Short, shallow ListOps: learnable in seconds."""
    rows = listops.generate(n, seed=seed, max_depth=3, max_args=4,
                            min_length=5, max_length=60, num_workers=1)
    x = listops.tokenize_batch([r[0] for r in rows], max_length=64)
    return x, np.array([r[1] for r in rows], np.int32)


@pytest.mark.one_backend
def test_model_learns_easy_listops():
    x, y = _easy_listops(3500)
    hp = get_hparams("listops", preset="quick", sequence_length=64,
                     epochs=3, bucket_step=16)
    model = build_classifier(**classifier_kwargs(hp))
    train = make_batches(x[:3000], y[:3000], hp, shuffle=True)
    test = make_batches(x[3000:], y[3000:], hp)
    model.compile(
        optimizer=make_optimizer(hp, len(train) * hp["epochs"]),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    model.fit(train, epochs=hp["epochs"], verbose=0)
    accuracy = model.evaluate(test, return_dict=True, verbose=0)["accuracy"]
    majority = np.bincount(y[3000:]).max() / 500
    assert accuracy > majority + 0.1, (accuracy, majority)


def test_schedule_warmup_then_cosine():
    hp = dict(learning_rate=1e-3, warmup_steps=10, schedule="cosine")
    lr = make_schedule(hp, total_steps=110)
    values = [float(to_numpy(lr(step))) for step in (0, 5, 10, 60, 110)]
    np.testing.assert_allclose(values, [0, 5e-4, 1e-3, 5e-4, 0], atol=1e-9)
    constant = make_schedule(dict(hp, schedule="constant"), total_steps=110)
    assert float(to_numpy(constant(50))) == pytest.approx(1e-3)
    assert make_schedule(dict(hp, warmup_steps=0, schedule="constant"),
                         10) == 1e-3
    with pytest.raises(ValueError, match="schedule"):
        make_schedule(dict(hp, schedule="step"), 10)


def test_weight_decay_skips_norms_and_biases():
    hp = dict(learning_rate=0.1, weight_decay=0.5, schedule="constant")
    inputs = keras.Input((4,))
    outputs = keras.layers.LayerNormalization()(
        keras.layers.Dense(3)(inputs))
    model = keras.Model(inputs, outputs)
    # A zero loss: Adam's step is 0, so only weight decay moves weights.
    model.compile(optimizer=make_optimizer(hp, 10),
                  loss=lambda y, p: keras.ops.sum(p) * 0.0)
    before = {w.path: to_numpy(w).copy() for w in model.weights}
    model.train_on_batch(np.ones((2, 4), "float32"), np.ones((2, 3)))
    for w in model.weights:
        old, new = before[w.path], to_numpy(w)
        if w.path.endswith("kernel"):
            np.testing.assert_allclose(new, old * (1 - 0.1 * 0.5), rtol=1e-5)
        else:
            np.testing.assert_array_equal(new, old)


def test_weight_decay_skips_ssm_dynamics():
    from lra_keras.layers import S4D

    hp = dict(learning_rate=0.1, weight_decay=0.5, schedule="constant")
    inputs = keras.Input((None, 4))
    model = keras.Model(inputs, S4D(state_dim=4)(inputs))
    model.compile(optimizer=make_optimizer(hp, 10),
                  loss=lambda y, p: keras.ops.sum(p) * 0.0)
    before = {w.path: to_numpy(w).copy() for w in model.weights}
    x = np.ones((1, 5, 4), "float32")
    model.train_on_batch(x, x)
    decayed = set()
    for w in model.weights:
        if not np.array_equal(to_numpy(w), before[w.path]):
            decayed.add(w.path.split("/")[-1])
    # C, D and the output kernel decay; log_dt, A, B and biases do not.
    assert decayed == {"C_real", "C_imag", "D", "kernel"}


@pytest.mark.parametrize("task, rate, decays", [
    ("listops", 1.0, True),  # layer lr/wd null: the global group
    ("text", 0.2, False),  # layer lr 0.001 (global 0.005), wd 0.0
])
def test_rtf_rows_train_the_layer_with_their_configs_rate_and_decay(
        task, rate, decays):
    # presets.rtf: the RTF configs' `model.layer.{lr, wd}`. A zero loss
    # moves weights by decay alone, w (1 - lr rate wd); a summed output
    # moves each by Adam's first step, lr rate sign(g).
    from lra_keras.layers import RTF

    hp = dict(get_hparams(task, "rtf"), schedule="constant", warmup_steps=0)
    lr, wd = hp["learning_rate"], hp["weight_decay"]
    x = np.random.default_rng(0).normal(size=(2, 6, 4)).astype("float32")
    for loss, hp_step in ((lambda y, p: ops.sum(p) * 0.0, hp),
                          (lambda y, p: ops.sum(p), dict(hp,
                                                         weight_decay=0.0))):
        keras.utils.set_random_seed(1)
        inputs = keras.Input((None, 4))
        model = keras.Model(inputs, RTF(state_dim=2, causal=False)(inputs))
        model.compile(optimizer=make_optimizer(hp_step, 10), loss=loss)
        before = {w.path.split("/")[-1]: to_numpy(w).copy()
                  for w in model.weights}
        model.train_on_batch(x, x)
        after = {w.path.split("/")[-1]: to_numpy(w) for w in model.weights}
        h0, kernel = "ssm_feedthrough", "kernel"
        if hp_step["weight_decay"]:
            np.testing.assert_allclose(
                after[h0], before[h0] * (1 - lr * rate * wd if decays else 1),
                rtol=1e-6)
            np.testing.assert_allclose(after[kernel],
                                       before[kernel] * (1 - lr * wd),
                                       rtol=1e-6)
        else:
            for name, step in ((h0, lr * rate), (kernel, lr)):
                np.testing.assert_allclose(
                    np.abs(after[name] - before[name]), step, rtol=1e-2)


def _tiny_listops(tmp_path, seed, **overrides):
    """A release of 60 generated trees (40 train, 10 val, 10 test) in
    `tmp_path / "data"` and a tiny quick Transformer row: `(data_dir,
    hp)`."""
    data_dir = tmp_path / "data"
    rows = listops.generate(60, seed=seed, min_length=10, max_length=60,
                            num_workers=1)
    write_listops_release(data_dir, rows)
    hp = get_hparams("listops", preset="quick", **{
        **dict(sequence_length=64, batch_size=8, hidden_dim=8, num_layers=1,
               intermediate_dim=16, bucket_step=None, **RELEASE_TREES),
        **overrides})
    return data_dir, hp


class _StopAfterFirstEpoch(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        raise KeyboardInterrupt


@pytest.mark.one_backend
def test_interrupted_run_resumes_from_last_epoch(tmp_path, capsys):
    data_dir, hp = _tiny_listops(tmp_path, seed=2, epochs=2)
    out = tmp_path / "run"
    kwargs = dict(data_dir=data_dir, out_dir=out, saved_models_dir=None,
                  verbose=0)
    with pytest.raises(KeyboardInterrupt):
        run("listops", hp, callbacks=[_StopAfterFirstEpoch()], **kwargs)
    assert len((out / "metrics.csv").read_text().strip().splitlines()) == 2
    assert (out / "backup").exists()
    _, metrics = run("listops", hp, **kwargs)
    assert "Resuming" in capsys.readouterr().out
    assert metrics["epochs_run"] == 2  # one before, one after the resume
    with open(out / "metrics.csv", newline="") as f:
        assert [int(r["epoch"]) for r in csv.DictReader(f)] == [0, 1]
    assert not (out / "backup").exists()
    # The saved model is the evaluated one: reloaded, it scores the test
    # accuracy that metrics.json reports.
    reported = json.loads((out / "metrics.json").read_text())
    model = load_model(out / "model.keras")
    model.compile(
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    x, y = listops.read_tsv(data_dir / "basic_test.tsv", max_length=64)
    test = model.evaluate(make_batches(x, y, hp), return_dict=True,
                          verbose=0)
    assert test["accuracy"] == pytest.approx(reported["test_accuracy"])


@pytest.mark.one_backend
def test_train_steps_counts_steps_across_an_interruption(tmp_path, capsys):
    # 40 training rows in batches of 8: 5 a epoch. 7 steps are a whole
    # epoch and 2 batches of the next, interrupted or not (LRA's trainers
    # count steps; `train_steps`).
    data_dir, hp = _tiny_listops(tmp_path, seed=3, epochs=50,
                                 train_steps=7)
    kwargs = dict(data_dir=data_dir, saved_models_dir=None, verbose=0)
    whole = CountBatches()
    _, metrics = run("listops", hp, out_dir=tmp_path / "whole",
                     callbacks=[whole], **kwargs)
    assert "training 7 steps: 2 epochs of 5 batches, the last cut short " \
        "at 2" in capsys.readouterr().out
    assert whole.batches == 7 and metrics["epochs_run"] == 2
    first, second = CountBatches(), CountBatches()
    with pytest.raises(KeyboardInterrupt):
        run("listops", hp, out_dir=tmp_path / "cut",
            callbacks=[first, _StopAfterFirstEpoch()], **kwargs)
    _, metrics = run("listops", hp, out_dir=tmp_path / "cut",
                     callbacks=[second], **kwargs)
    assert (first.batches, second.batches) == (5, 2)
    assert metrics["epochs_run"] == 2


class _InterruptLastValidation(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_test_begin(self, logs=None):
        if self.epoch == 1:
            raise KeyboardInterrupt


@pytest.mark.one_backend
def test_train_steps_resumed_within_the_last_epoch_trains_no_extra_step(
        tmp_path):
    # A backup after every batch, but none at the stopping batch (the
    # epoch's end writes one): interrupted during the last validation, the
    # run trains the stopping batch again, not one more.
    data_dir, hp = _tiny_listops(tmp_path, seed=3, train_steps=7)
    kwargs = dict(data_dir=data_dir, saved_models_dir=None, verbose=0,
                  out_dir=tmp_path / "run", backup_steps=1)
    with pytest.raises(KeyboardInterrupt):
        run("listops", hp, callbacks=[_InterruptLastValidation()], **kwargs)
    # The 7th batch is the 2nd of epoch 1: the last backup is after the
    # 1st (6 steps), and the resumed run trains the 7th again and stops.
    saved = TrainingBackup(tmp_path / "run" / "backup").read()
    assert (saved["epoch"], saved["step"]) == (1, 1)
    again = CountBatches()
    _, metrics = run("listops", hp, callbacks=[again], **kwargs)
    assert again.batches == 1
    assert metrics["epochs_run"] == 2


@pytest.mark.one_backend
def test_time_limit_ends_the_epoch_in_progress_and_finishes_the_run(
        tmp_path):
    # A budget shorter than one batch: the first batch ends the first of
    # 50 epochs, whose validation, checkpoint and test still run.
    data_dir, hp = _tiny_listops(tmp_path, seed=4, epochs=50,
                                 time_limit_minutes=1e-9)
    count = CountBatches()
    _, metrics = run("listops", hp, out_dir=tmp_path / "run",
                     data_dir=data_dir, saved_models_dir=None, verbose=0,
                     callbacks=[count])
    assert count.batches == 1
    assert metrics["epochs_run"] == 1 and metrics["stopped_at_time_limit"]
    assert (tmp_path / "run" / "best.weights.h5").exists()
    _, again = run("listops", dict(hp, time_limit_minutes=None),
                   out_dir=tmp_path / "free", data_dir=data_dir,
                   saved_models_dir=None, verbose=0,
                   callbacks=[CountBatches()])
    assert not again["stopped_at_time_limit"]


class _InterruptAtTrainEnd(keras.callbacks.Callback):
    def on_train_end(self, logs=None):
        raise KeyboardInterrupt


@pytest.mark.one_backend
def test_a_run_interrupted_after_its_time_limit_is_tested_not_retrained(
        tmp_path, capsys):
    # Interrupted after training stopped at the limit (its epoch's backup
    # and checkpoint written, the test not run): the restart trains no
    # batch and finishes the run.
    data_dir, hp = _tiny_listops(tmp_path, seed=5, epochs=50,
                                 time_limit_minutes=1e-9)
    kwargs = dict(out_dir=tmp_path / "run", data_dir=data_dir,
                  saved_models_dir=None, verbose=0)
    with pytest.raises(KeyboardInterrupt):
        run("listops", hp, callbacks=[_InterruptAtTrainEnd()], **kwargs)
    again = CountBatches()
    _, metrics = run("listops", hp, callbacks=[again], **kwargs)
    assert again.batches == 0
    assert "reached its time limit" in capsys.readouterr().out
    assert metrics["epochs_run"] == 1 and metrics["stopped_at_time_limit"]


def test_stop_after_time_reads_its_clock_after_every_batch(capsys):
    from lra_keras.callbacks import StopAfterTime

    ticks = iter([10.0, 11.0, 12.0, 12.4, 12.6])  # begin, then per batch
    timer = StopAfterTime(2.5, clock=lambda: next(ticks))
    timer.set_model(type("Model", (), {"stop_training": False})())
    timer.on_train_begin()
    timer.on_epoch_begin(3)
    stops = []
    for batch in range(4):
        timer.on_train_batch_end(batch)
        stops.append(timer.model.stop_training)
    assert stops == [False, False, False, True]  # 2.6 s >= 2.5 s
    assert timer.stopped_epoch == 3
    assert "after batch 4 of epoch 4" in capsys.readouterr().out
    with pytest.raises(ValueError, match="seconds"):
        StopAfterTime(0)


def test_stop_after_time_keeps_its_clock_across_the_fits_of_a_resume():
    # `resumable_fit` finishes an interrupted epoch with one `fit` and
    # trains the rest with another: one budget for both.
    from lra_keras.callbacks import StopAfterTime

    now = [0.0]
    stops = []
    timer = StopAfterTime(10.0, clock=lambda: now[0],
                          on_stop=lambda: stops.append(now[0]))
    timer.set_model(type("Model", (), {"stop_training": False})())
    timer.on_train_begin()
    timer.on_epoch_begin(0)
    now[0] = 6.0
    timer.on_train_batch_end(0)
    timer.on_train_begin()  # the second fit
    timer.on_epoch_begin(1)
    now[0] = 11.0
    timer.on_train_batch_end(0)
    assert timer.model.stop_training and stops == [11.0]
    timer.on_train_batch_end(1)  # on_stop is called once
    assert stops == [11.0]


def test_planned_steps_are_epochs_or_train_steps():
    from lra_keras.training.run import planned_steps

    assert planned_steps(dict(epochs=3, train_steps=None), 10) == (3, 30)
    assert planned_steps(dict(epochs=3, train_steps=25), 10) == (3, 25)
    assert planned_steps(dict(epochs=1, train_steps=5000), 3000) == (2, 5000)
    assert planned_steps(dict(epochs=9, train_steps=20), 10) == (2, 20)


def test_list_devices_names_a_cpu_or_accelerator():
    from lra_keras.backend_utils import list_devices
    from lra_keras.backend_utils import on_accelerator

    devices = list_devices()
    assert devices and all(":" in d for d in devices)
    assert on_accelerator() == any(not d.startswith("cpu") for d in devices)


@pytest.mark.parametrize("shared_shape", [(3, 4), (1, 3, 4)])
def test_add_shared_is_the_broadcast_sum_and_its_gradient(shared_shape):
    """`add_shared` (a product with ones under JAX) against numpy: the
    value is `x + shared` and the gradient of `shared` the sum over rows."""
    from lra_keras.backend_utils import add_shared

    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 3, 4)).astype("float32")
    shared = rng.normal(size=shared_shape).astype("float32")
    weights = rng.normal(size=(5, 3, 4)).astype("float32")
    got = to_numpy(add_shared(ops.convert_to_tensor(x),
                              ops.convert_to_tensor(shared)))
    np.testing.assert_allclose(got, x + shared, rtol=1e-6, atol=1e-6)
    value, (dx, dshared) = value_and_grads(
        lambda a, b: ops.sum(add_shared(a, b)
                             * ops.convert_to_tensor(weights)), x, shared)
    np.testing.assert_allclose(value, np.sum((x + shared) * weights),
                               rtol=1e-5)
    np.testing.assert_allclose(dx, weights, rtol=1e-6)
    np.testing.assert_allclose(
        dshared, weights.sum(0).reshape(shared_shape), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(16, 3, 5), (2, 7), (1, 4)])
def test_sum_rows_is_the_sum_over_the_first_axis_and_its_gradient(shape):
    """`sum_rows` (a product with ones under JAX) against numpy."""
    from lra_keras.backend_utils import sum_rows

    rng = np.random.default_rng(1)
    x = rng.normal(size=shape).astype("float32")
    weights = rng.normal(size=shape[1:]).astype("float32")
    got = to_numpy(sum_rows(ops.convert_to_tensor(x)))
    assert got.shape == shape[1:]
    np.testing.assert_allclose(got, x.sum(0), rtol=1e-5, atol=1e-6)
    value, (dx,) = value_and_grads(
        lambda a: ops.sum(sum_rows(a) * ops.convert_to_tensor(weights)), x)
    np.testing.assert_allclose(value, np.sum(x.sum(0) * weights),
                               rtol=1e-5)
    np.testing.assert_allclose(dx, np.broadcast_to(weights, shape),
                               rtol=1e-6)


@pytest.mark.parametrize("shape, target", [
    ((2, 1, 1, 5), (2, 1, 3, 5)), ((1, 4), (3, 4)),
    ((1, 1, 3), (2, 4, 3)), ((4,), (2, 3, 4)), ((3, 1), (2, 3, 5))])
def test_broadcast_to_and_its_gradient(shape, target):
    """`broadcast_to` (under JAX its gradient's sums products with ones)
    against numpy: the broadcast, and the gradient summed over every
    broadcast axis."""
    from lra_keras.backend_utils import broadcast_to

    rng = np.random.default_rng(2)
    x = rng.normal(size=shape).astype("float32")
    weights = rng.normal(size=target).astype("float32")
    got = to_numpy(broadcast_to(ops.convert_to_tensor(x), target))
    np.testing.assert_array_equal(got, np.broadcast_to(x, target))
    value, (dx,) = value_and_grads(
        lambda a: ops.sum(broadcast_to(a, target)
                          * ops.convert_to_tensor(weights)), x)
    np.testing.assert_allclose(value, np.sum(x * weights), rtol=1e-5)
    lead = len(target) - len(shape)
    summed = weights.sum(tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n != summed.shape[i])
    np.testing.assert_allclose(dx, summed.sum(axes, keepdims=True),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(1, 6, 3), (4, 5, 3)])
def test_scale_channels_and_its_gradient(shape):
    """`scale_channels` (under JAX on a (rows, channels) view) against
    numpy: the product, and the weights' gradient summed over every
    other axis."""
    from lra_keras.backend_utils import scale_channels

    rng = np.random.default_rng(3)
    x = rng.normal(size=shape).astype("float32")
    scale = rng.normal(size=shape[-1:]).astype("float32")
    weights = rng.normal(size=shape).astype("float32")
    got = to_numpy(scale_channels(ops.convert_to_tensor(x),
                                  ops.convert_to_tensor(scale)))
    np.testing.assert_allclose(got, x * scale, rtol=1e-6, atol=1e-6)
    value, (dx, dscale) = value_and_grads(
        lambda a, b: ops.sum(scale_channels(a, b)
                             * ops.convert_to_tensor(weights)), x, scale)
    np.testing.assert_allclose(value, np.sum(x * scale * weights),
                               rtol=1e-5)
    np.testing.assert_allclose(dx, scale * weights, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(dscale, (x * weights).sum((0, 1)),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(2, 1, 3, 5), (1, 4, 7), (6,)])
def test_inner_products_and_their_gradients(shape):
    """`inner_products` (an einsum where XLA compiles; under TensorFlow
    also inside an XLA-compiled function) against numpy: the sums of the
    products over the last axis, kept, and both gradients."""
    from lra_keras.backend_utils import inner_products

    rng = np.random.default_rng(4)
    a, b = (rng.normal(size=shape).astype("float32") for _ in range(2))
    weights = rng.normal(size=shape[:-1] + (1,)).astype("float32")
    expected = (a * b).sum(-1, keepdims=True)
    got = to_numpy(inner_products(ops.convert_to_tensor(a),
                                  ops.convert_to_tensor(b)))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        compiled = tf.function(inner_products, jit_compile=True)
        np.testing.assert_allclose(to_numpy(compiled(a, b)), expected,
                                   rtol=1e-5, atol=1e-6)
    value, (da, db) = value_and_grads(
        lambda x, y: ops.sum(inner_products(x, y)
                             * ops.convert_to_tensor(weights)), a, b)
    np.testing.assert_allclose(value, np.sum(expected * weights),
                               rtol=1e-5)
    np.testing.assert_allclose(da, b * weights, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(db, a * weights, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("length, fft_length", [(7, 14), (8, 8), (5, 9)])
def test_complex_spectra_are_numpys(length, fft_length):
    """`rfft`, `conjugate`, their product, `sum_rows` of it,
    `sum_of_conjugate_products` and `irfft` (the backend's own complex
    tensors) against numpy's."""
    from lra_keras.backend_utils import conjugate
    from lra_keras.backend_utils import irfft
    from lra_keras.backend_utils import rfft
    from lra_keras.backend_utils import sum_of_conjugate_products
    from lra_keras.backend_utils import sum_rows

    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(2, 3, 4, length)).astype("float32")
    a_hat = rfft(ops.convert_to_tensor(a), fft_length)
    b_hat = rfft(ops.convert_to_tensor(b), fft_length)
    want_a = np.fft.rfft(a, n=fft_length)
    assert tuple(a_hat.shape) == want_a.shape
    np.testing.assert_allclose(to_numpy(a_hat), want_a, rtol=1e-5,
                               atol=1e-5)
    product = conjugate(a_hat) * b_hat
    want = np.conj(want_a) * np.fft.rfft(b, n=fft_length)
    np.testing.assert_allclose(to_numpy(product), want, rtol=1e-5,
                               atol=1e-4)
    np.testing.assert_allclose(to_numpy(sum_rows(product)), want.sum(0),
                               rtol=1e-5, atol=1e-4)
    # the same sum without the product (`fft_conv`'s kernel gradient),
    # which may overwrite its second operand: it gets a copy
    np.testing.assert_allclose(
        to_numpy(sum_of_conjugate_products(a_hat, b_hat * 1)), want.sum(0),
        rtol=1e-5, atol=1e-4)
    got = to_numpy(irfft(product, fft_length))
    assert got.shape == (3, 4, fft_length)
    np.testing.assert_allclose(got, np.fft.irfft(want, n=fft_length),
                               rtol=1e-5, atol=1e-5)
    # a transposed view (`fft_conv`'s input), copied as it is laid out
    a_t = ops.transpose(ops.convert_to_tensor(a.transpose(0, 2, 1)),
                        (0, 2, 1))
    np.testing.assert_allclose(to_numpy(rfft(a_t, fft_length)), want_a,
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("length, fft_length",
                         [(7, 14), (8, 8), (5, 9), (4, 7), (10, 8), (1, 2)])
def test_rfft_gradient_is_the_transforms_adjoint(length, fft_length):
    """The gradient of `rfft` (written out under TensorFlow and PyTorch,
    `rfft_gradient`) against the transform's own matrix: for y_k =
    sum_t x_t exp(-2 pi i k t / n) and a loss sum(Re y r + Im y s),
    dx_t = sum_k r_k cos(2 pi k t / n) - s_k sin(2 pi k t / n), 0 past n
    (a cropped input). Even and odd n, padded, equal and cropped lengths;
    the imaginary parts of the first and last frequencies, which no real
    input moves, weigh in the loss too."""
    from lra_keras.backend_utils import rfft

    rng = np.random.default_rng(5)
    frequencies = fft_length // 2 + 1
    x = rng.normal(size=(3, 2, length)).astype("float32")
    r, s = rng.normal(size=(2, 3, 2, frequencies)).astype("float32")
    angle = (2 * np.pi / fft_length) * np.outer(np.arange(length),
                                                np.arange(frequencies))
    inside = (np.arange(length) < fft_length)[:, None]
    want = (r @ (np.cos(angle) * inside).T
            - s @ (np.sin(angle) * inside).T)

    def loss(x):
        y = rfft(x, fft_length)
        return ops.sum(ops.real(y) * ops.convert_to_tensor(r)
                       + ops.imag(y) * ops.convert_to_tensor(s))

    value, (dx,) = value_and_grads(loss, x)
    y = np.fft.rfft(x, n=fft_length)
    np.testing.assert_allclose(value, np.sum(y.real * r + y.imag * s),
                               rtol=1e-5)
    np.testing.assert_allclose(dx, want, rtol=1e-5, atol=2e-5)


@pytest.mark.one_backend
# (the weights files hold the run's optimizer; the test compiles another)
@pytest.mark.filterwarnings("ignore:Skipping variable loading for optimizer")
def test_a_run_with_swa_tests_the_best_checkpoint_and_the_weight_mean(
        tmp_path):
    # 3 epochs, SWA from epoch int(0.5 x 3) = 1 (0-based 0): the mean of
    # the weights at the starts of epochs 0-2.
    data_dir, hp = _tiny_listops(tmp_path, seed=3, epochs=3,
                                 swa_start_fraction=0.5,
                                 swa_learning_rate=0.01,
                                 swa_annealing_epochs=1)
    out = tmp_path / "run"
    _, metrics = run("listops", hp, data_dir=data_dir, out_dir=out,
                     saved_models_dir=None, verbose=0)
    assert 0.0 <= metrics["swa_test_accuracy"] <= 1.0
    reported = json.loads((out / "metrics.json").read_text())
    assert reported["swa_test_accuracy"] == metrics["swa_test_accuracy"]
    # model.keras holds the best checkpoint, swa.weights.h5 the mean:
    # each scores what metrics.json says.
    model = load_model(out / "model.keras")
    model.compile(
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    x, y = listops.read_tsv(data_dir / "basic_test.tsv", max_length=64)
    batches = make_batches(x, y, hp)
    best = model.evaluate(batches, return_dict=True, verbose=0)
    assert best["accuracy"] == pytest.approx(reported["test_accuracy"])
    model.load_weights(str(out / "swa.weights.h5"))
    mean = model.evaluate(batches, return_dict=True, verbose=0)
    assert mean["accuracy"] == pytest.approx(reported["swa_test_accuracy"])
    assert mean["loss"] == pytest.approx(reported["swa_test_loss"],
                                         rel=1e-5)


@pytest.mark.one_backend
@pytest.mark.filterwarnings("ignore:Skipping variable loading for optimizer")
def test_swa_mean_of_a_run_restarted_after_its_time_limit_is_tested(
        tmp_path):
    # Stopped by its time limit after the first batch of epoch 0 (SWA from
    # epoch 0), interrupted before its test: the restart trains nothing
    # and tests the mean its backup holds, as the uninterrupted run.
    data_dir, hp = _tiny_listops(tmp_path, seed=6, epochs=50,
                                 time_limit_minutes=1e-9,
                                 swa_start_fraction=0.02,
                                 swa_learning_rate=0.01,
                                 swa_annealing_epochs=1)
    kwargs = dict(data_dir=data_dir, saved_models_dir=None, verbose=0)
    _, plain = run("listops", hp, out_dir=tmp_path / "plain", **kwargs)
    out = tmp_path / "cut"
    with pytest.raises(KeyboardInterrupt):
        run("listops", hp, out_dir=out, callbacks=[_InterruptAtTrainEnd()],
            **kwargs)
    again = CountBatches()
    _, metrics = run("listops", hp, out_dir=out, callbacks=[again],
                     **kwargs)
    assert again.batches == 0 and metrics["stopped_at_time_limit"]
    assert metrics["swa_test_loss"] == pytest.approx(plain["swa_test_loss"],
                                                     rel=1e-5)
    assert (out / "swa.weights.h5").exists()


class _InterruptAtBatch(keras.callbacks.Callback):
    def __init__(self, epoch, batch):
        super().__init__()
        self.at = (epoch, batch)

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if (self.epoch, batch) == self.at:
            raise KeyboardInterrupt


@pytest.mark.one_backend
@pytest.mark.filterwarnings("ignore:Skipping variable loading for optimizer")
def test_swa_resumed_within_an_epoch_averages_as_uninterrupted(tmp_path):
    # Backed up after every batch and interrupted in the middle of epoch 2
    # (SWA from epoch 1, 0-based): the resumed run averages the same
    # weights, once each, and its mean scores the same.
    data_dir, hp = _tiny_listops(tmp_path, seed=4, epochs=3,
                                 swa_start_fraction=0.67,
                                 swa_learning_rate=0.01,
                                 swa_annealing_epochs=1)
    kwargs = dict(data_dir=data_dir, saved_models_dir=None, verbose=0,
                  backup_steps=1)
    _, plain = run("listops", hp, out_dir=tmp_path / "plain", **kwargs)
    out = tmp_path / "resumed"
    with pytest.raises(KeyboardInterrupt):
        run("listops", hp, out_dir=out, callbacks=[_InterruptAtBatch(2, 2)],
            **kwargs)
    _, resumed = run("listops", hp, out_dir=out, **kwargs)
    assert resumed["swa_test_loss"] == pytest.approx(plain["swa_test_loss"],
                                                     rel=1e-5)
    assert resumed["swa_test_accuracy"] == plain["swa_test_accuracy"]
    with open(out / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["epoch"]) for r in rows] == [0, 1, 2]
    assert all(r["learning_rate"] not in ("", None) for r in rows)
