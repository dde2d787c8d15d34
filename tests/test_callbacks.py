"""The plateau schedule, the SSM learning rate and their optimizer; the
progress bar's run ETA."""

import keras
import numpy as np
import pytest

from lra_keras.callbacks import ReduceOnTrainingPlateau
from lra_keras.callbacks import RunProgress
from lra_keras.callbacks import StochasticWeightAveraging
from lra_keras.callbacks import format_duration
from lra_keras.callbacks import swa_annealed_rate
from lra_keras.callbacks import swa_start_epoch
from lra_keras.callbacks import swa_weights
from lra_keras.optimizers import ScheduledAdamW
from lra_keras.training import make_callbacks
from lra_keras.training import make_optimizer
from tests.test_run_guards import _InterruptAfterEpoch
from tests.testing import to_numpy


@keras.saving.register_keras_serializable(package="lra_keras_tests")
class _TwoWeights(keras.layers.Layer):
    """p = sum(x * ssm_w) + 2 sum(x * kernel): constant gradients.

    `ssm_w` takes the name of a declared dynamics weight (S4D's
    `ssm_log_dt`): a model built by hand gets every family's dynamics.
    """

    def build(self, input_shape):
        self.ssm_w = self.add_weight(name="ssm_log_dt", shape=(3,),
                                     initializer="ones")
        self.kernel = self.add_weight(name="kernel", shape=(3,),
                                      initializer="ones")

    def call(self, x):
        return (keras.ops.sum(x * self.ssm_w, axis=-1, keepdims=True)
                + 2 * keras.ops.sum(x * self.kernel, axis=-1, keepdims=True))


@keras.saving.register_keras_serializable(package="lra_keras_tests")
def _output_as_loss(y, p):
    return keras.ops.mean(p)


def _model(optimizer):
    inputs = keras.Input((3,))
    model = keras.Model(inputs, _TwoWeights(name="two")(inputs))
    model.compile(optimizer=optimizer, loss=_output_as_loss)
    return model


X = np.array([[3.0, 0.0, 4.0]], "float32")  # grads: ssm 3,0,4; kernel 6,0,8
Y = np.zeros((1, 1), "float32")


def _weights(model):
    layer = model.get_layer("two")
    return to_numpy(layer.ssm_w).copy(), to_numpy(layer.kernel).copy()


def _hp(**overrides):
    hp = dict(learning_rate=0.01, weight_decay=0.0, schedule="constant",
              warmup_steps=0, ssm_learning_rate=None,
              gradient_clipnorm=None)
    hp.update(overrides)
    return hp


def test_ssm_weights_train_at_ssm_rate_without_weight_decay():
    lr, ssm_lr, wd = 0.01, 0.001, 0.5
    model = _model(make_optimizer(
        _hp(learning_rate=lr, ssm_learning_rate=ssm_lr, weight_decay=wd),
        100))
    model.train_on_batch(X, Y)
    ssm, kernel = _weights(model)
    # First AdamW step: every weight with a gradient moves by its rate
    # (m/sqrt(v) = sign(g)); decay is w * wd * lr, on the kernel only.
    np.testing.assert_allclose(1 - ssm, [ssm_lr, 0, ssm_lr], rtol=1e-4)
    np.testing.assert_allclose(
        1 - kernel, [lr + wd * lr, wd * lr, lr + wd * lr], rtol=1e-4)
    # Without ssm_learning_rate both move by the global rate.
    model = _model(make_optimizer(_hp(learning_rate=lr), 100))
    model.train_on_batch(X, Y)
    ssm, kernel = _weights(model)
    np.testing.assert_allclose(1 - ssm, [lr, 0, lr], rtol=1e-4)
    np.testing.assert_allclose(1 - kernel, [lr, 0, lr], rtol=1e-4)


def test_global_clipnorm_clips_over_both_groups():
    # A huge epsilon makes Keras's Adam step linear in the (clipped)
    # gradient: lr * sqrt(1 - beta_2) * g / eps on the first step.
    lr = eps = 1e4
    clip = 1.0
    model = _model(ScheduledAdamW(
        learning_rate=lr, epsilon=eps, global_clipnorm=clip,
        weight_decay=0.0, rate_multipliers={"(^|/)ssm_": 0.5},
    ))
    model.train_on_batch(X, Y)
    ssm, kernel = _weights(model)
    step = lr * np.sqrt(1 - 0.999) / eps
    scale = clip / np.sqrt(3**2 + 4**2 + 6**2 + 8**2)  # one global norm
    g_ssm, g_kernel = np.array([3, 0, 4]), np.array([6, 0, 8])
    np.testing.assert_allclose(
        (1 - ssm) / step, 0.5 * g_ssm * scale, rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(
        (1 - kernel) / step, g_kernel * scale, rtol=1e-3, atol=1e-6)
    assert make_optimizer(_hp(gradient_clipnorm=0.5), 10).global_clipnorm \
        == 0.5


class _Record(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.kernels, self.rates = [], []

    def on_epoch_end(self, epoch, logs=None):
        self.kernels.append(_weights(self.model)[1][0])
        self.rates.append(logs["learning_rate"])


def test_final_decay_over_the_last_tenth_of_the_steps():
    lr, epochs, steps = 0.01, 10, 3
    hp = _hp(learning_rate=lr, schedule="plateau", final_decay_factor=0.1,
             plateau_patience=100)
    model = _model(make_optimizer(hp, epochs * steps))
    record = _Record()
    x, y = np.repeat(X, steps, 0), np.repeat(Y, steps, 0)
    model.fit(x, y, batch_size=1, epochs=epochs, shuffle=False, verbose=0,
              callbacks=make_callbacks(hp) + [record])
    moved = -np.diff(np.concatenate([[1.0], record.kernels]))
    # Steps 0..26 at lr, steps 27..29 (epoch 9) at 0.1 lr; Adam's step
    # is the rate itself for a constant gradient.
    np.testing.assert_allclose(moved, [3 * lr] * 9 + [0.3 * lr], rtol=1e-3)
    # The rate logged at an epoch's end is the next step's.
    np.testing.assert_allclose(record.rates, [lr] * 8 + [0.1 * lr] * 2,
                               rtol=1e-6)


def _constant_loss_model(hp, total_steps=100):
    # Zero gradient, constant loss 1: never improves after epoch 0.
    inputs = keras.Input((3,))
    model = keras.Model(inputs, _TwoWeights(name="two")(inputs))
    model.compile(optimizer=make_optimizer(hp, total_steps),
                  loss=lambda y, p: keras.ops.mean(p) * 0.0 + 1.0)
    return model


def test_plateau_reduces_after_patience_epochs_without_improvement():
    lr = 0.01
    hp = _hp(learning_rate=lr, schedule="plateau", plateau_factor=0.2,
             plateau_patience=2, final_decay_fraction=0.0,
             final_decay_factor=1.0)
    model = _constant_loss_model(hp)
    history = model.fit(X, Y, epochs=7, verbose=0,
                        callbacks=make_callbacks(hp))
    # Epoch 0 improves on inf; 1, 2 do not -> x0.2 at the end of 2, ...
    np.testing.assert_allclose(
        history.history["learning_rate"],
        lr * np.array([1, 1, 0.2, 0.2, 0.04, 0.04, 0.008]), rtol=1e-5)


@pytest.mark.parametrize("style, factors", [
    # The YCTFS code's cooldown: from step 6 the initial rate x 0.1, the
    # earlier reductions forgotten, then reduced again on plateaus.
    ("reset", [1, 1, 0.2, 0.2, 0.04, 0.1, 0.02, 0.02]),
    ("multiply", [1, 1, 0.2, 0.2, 0.04, 0.004, 0.0008, 0.0008]),
])
def test_final_decay_resets_or_multiplies_the_plateau_rate(style, factors):
    # One step an epoch, 8 steps, the final decay from step 6; a loss that
    # never improves after epoch 0 reduces every second epoch. The rate
    # logged at an epoch's end is the next step's.
    lr = 0.01
    hp = _hp(learning_rate=lr, schedule="plateau", plateau_factor=0.2,
             plateau_patience=2, final_decay_fraction=0.25,
             final_decay_factor=0.1, final_decay_style=style)
    model = _constant_loss_model(hp, total_steps=8)
    history = model.fit(X, Y, epochs=8, verbose=0,
                        callbacks=make_callbacks(hp))
    np.testing.assert_allclose(history.history["learning_rate"],
                               lr * np.array(factors), rtol=1e-5)


def test_plateau_counts_on_a_scripted_loss_sequence():
    model = _model(ScheduledAdamW(learning_rate=1.0))
    callback = ReduceOnTrainingPlateau(factor=0.5, patience=3,
                                       min_learning_rate=0.2)
    callback.set_model(model)
    callback.on_train_begin()
    losses = [5, 4, 4, 4.0001, 3.9999, 3.9999, 3.9999, 1, 2, 2, 2, 2, 2, 2,
              2, 2, 2]
    rates = []
    for epoch, loss in enumerate(losses):
        logs = {"loss": loss}
        callback.on_epoch_end(epoch, logs)
        rates.append(logs["learning_rate"])
    # 3.9999 < 4 * (1 - 1e-4) is no improvement (relative threshold); the
    # floor of 0.2 caps the third reduction.
    expected = [1] * 4 + [0.5] * 6 + [0.25] * 3 + [0.2] * 4
    np.testing.assert_allclose(rates, expected, rtol=1e-6)
    with pytest.raises(ValueError, match="patience"):
        ReduceOnTrainingPlateau(patience=0)
    plain = _model(keras.optimizers.AdamW())
    callback.set_model(plain)
    with pytest.raises(TypeError, match="ScheduledAdamW"):
        callback.on_train_begin()


class _Interrupt(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        if epoch == 3:
            raise KeyboardInterrupt


def test_plateau_state_survives_backup_and_restore(tmp_path):
    lr = 0.01
    hp = _hp(learning_rate=lr, schedule="plateau", plateau_patience=2,
             final_decay_fraction=0.0, final_decay_factor=1.0)
    backup = str(tmp_path / "backup")

    def callbacks():
        return make_callbacks(hp) + [keras.callbacks.BackupAndRestore(
            backup)]

    with pytest.raises(KeyboardInterrupt):
        _constant_loss_model(hp).fit(
            X, Y, epochs=6, verbose=0, callbacks=callbacks() + [_Interrupt()])
    keras.utils.clear_session()
    model = _constant_loss_model(hp)
    history = model.fit(X, Y, epochs=6, verbose=0, callbacks=callbacks())
    # Epochs 4 and 5 only; one wait was left from epoch 3, so epoch 4 is
    # the second bad epoch in a row and reduces again.
    np.testing.assert_allclose(history.history["learning_rate"],
                               [0.04 * lr, 0.04 * lr], rtol=1e-5)


def test_a_reset_final_decay_survives_backup_and_restore(tmp_path):
    # Interrupted after epoch 5, whose step reached the final decay (the
    # scale reset then): resumed, epochs 6 and 7 run as without the
    # interruption (test_final_decay_resets_or_multiplies_the_plateau_rate).
    lr = 0.01
    hp = _hp(learning_rate=lr, schedule="plateau", plateau_factor=0.2,
             plateau_patience=2, final_decay_fraction=0.25,
             final_decay_factor=0.1, final_decay_style="reset")
    backup = str(tmp_path / "backup")

    def callbacks():
        return make_callbacks(hp) + [keras.callbacks.BackupAndRestore(
            backup)]

    with pytest.raises(KeyboardInterrupt):
        _constant_loss_model(hp, total_steps=8).fit(
            X, Y, epochs=8, verbose=0,
            callbacks=callbacks() + [_InterruptAfterEpoch(5)])
    keras.utils.clear_session()
    history = _constant_loss_model(hp, total_steps=8).fit(
        X, Y, epochs=8, verbose=0, callbacks=callbacks())
    np.testing.assert_allclose(history.history["learning_rate"],
                               [0.02 * lr, 0.02 * lr], rtol=1e-5)


def test_optimizer_state_and_config_survive_keras_file(tmp_path):
    hp = _hp(schedule="plateau", ssm_learning_rate=1e-3, weight_decay=0.1,
             warmup_steps=5)
    model = _model(make_optimizer(hp, 50))
    model.train_on_batch(X, Y)
    model.optimizer.plateau_scale.assign(0.2)
    model.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras")
    optimizer = loaded.optimizer
    assert isinstance(optimizer, ScheduledAdamW)
    assert optimizer.get_config() == model.optimizer.get_config()
    assert float(to_numpy(optimizer.plateau_scale)) == pytest.approx(0.2)
    assert optimizer.final_decay_step == 45
    assert not optimizer._use_weight_decay(loaded.get_layer("two").ssm_w)


def test_dynamics_are_the_declared_weights_of_the_row_family():
    from lra_keras.models import FAMILIES

    hp = _hp(ssm_learning_rate=1e-3)
    s4d = make_optimizer(dict(hp, model="s4d"), 10)
    assert set(s4d.rate_multipliers) == set(
        FAMILIES["s4d"].dynamics_patterns())
    # A family without dynamics: nothing gets the SSM rate.
    transformer = make_optimizer(dict(hp, model="transformer"), 10)
    assert not getattr(transformer, "rate_multipliers", {})
    # A weight named like a dynamics weight but not declared is decayed.
    model = _model(make_optimizer(_hp(weight_decay=0.5), 10))
    assert not model.optimizer._use_weight_decay(
        model.get_layer("two").ssm_w)
    undeclared = keras.Variable(np.ones(3, "float32"), name="ssm_w")
    assert model.optimizer._use_weight_decay(undeclared)


def test_dt_trains_at_the_global_rate_with_dt_learning_rate_global():
    # S4's `lr: {dt: null, A: 0.001, B: 0.001}`: the step size (S4D's
    # declared timescale `ssm_log_dt`) at the global rate, the other
    # dynamics at the SSM rate, neither decayed.
    from lra_keras.models import FAMILIES

    lr, ssm_lr, wd = 0.01, 0.001, 0.5
    hp = _hp(model="s4d", learning_rate=lr, ssm_learning_rate=ssm_lr,
             weight_decay=wd, dt_learning_rate="global")
    model = _model(make_optimizer(hp, 100))
    model.train_on_batch(X, Y)
    ssm, kernel = _weights(model)
    np.testing.assert_allclose(1 - ssm, [lr, 0, lr], rtol=1e-4)
    np.testing.assert_allclose(
        1 - kernel, [lr + wd * lr, wd * lr, lr + wd * lr], rtol=1e-4)
    multipliers = model.optimizer.rate_multipliers
    s4d = FAMILIES["s4d"]
    assert set(multipliers) == set(s4d.dynamics_patterns()) - set(
        s4d.dynamics_patterns(s4d.timescales))
    assert list(multipliers.values()) == pytest.approx(
        [ssm_lr / lr] * len(multipliers))


def _decayed(decay_on, names):
    hp = _hp(model="s4d", weight_decay=0.1, weight_decay_on=decay_on)
    optimizer = make_optimizer(hp, 10)
    # All alive at once: the optimizer caches its answer by variable id.
    variables = [keras.Variable(np.ones(2, "float32"), name=name)
                 for name in names]
    return {v.name: optimizer._use_weight_decay(v) for v in variables}


@pytest.mark.parametrize(
    "decay_on, decayed",
    [
        ("all", {"kernel", "bias", "gamma", "embeddings", "spatial_kernel",
                 "ssm_log_dt", "C_real", "qk_beta"}),
        # The S4 code: all but the registered SSM parameters.
        ("all_but_dynamics", {"kernel", "bias", "gamma", "embeddings",
                              "spatial_kernel", "C_real", "qk_beta"}),
        ("all_but_norms_biases_dynamics", {"kernel", "embeddings",
                                           "spatial_kernel", "C_real"}),
        # YCTFS's filter: matrices only.
        ("kernels", {"kernel", "spatial_kernel"}),
    ],
)
def test_weight_decay_on_chooses_the_decayed_weights(decay_on, decayed):
    names = ("kernel", "bias", "gamma", "embeddings", "spatial_kernel",
             "ssm_log_dt", "C_real", "qk_beta")
    got = _decayed(decay_on, names)
    assert {name for name, used in got.items() if used} == decayed


def test_decay_choices_are_the_schema_choices():
    from lra_keras.schema import WEIGHT_DECAY_ON
    from lra_keras.training.optimization import DECAY_EXCLUSIONS

    assert tuple(DECAY_EXCLUSIONS) == WEIGHT_DECAY_ON


def test_adam_moments_and_epsilon_come_from_the_row():
    optimizer = make_optimizer(
        _hp(adam_beta_1=0.8, adam_beta_2=0.98, adam_epsilon=1e-6), 10)
    assert (optimizer.beta_1, optimizer.beta_2, optimizer.epsilon) == (
        0.8, 0.98, 1e-6)
    # Without them: PyTorch's defaults, every source's (not Keras's 1e-7).
    optimizer = make_optimizer(_hp(), 10)
    assert (optimizer.beta_1, optimizer.beta_2, optimizer.epsilon) == (
        0.9, 0.999, 1e-8)


def test_cosine_reaches_zero_at_schedule_steps():
    # S4's cosine_warmup: 0.5 (1 + cos(pi (t - w) / (T - w))) with T the
    # config's num_training_steps, which may lie past the run's last step.
    from lra_keras.training import make_schedule

    hp = _hp(schedule="cosine", warmup_steps=10, learning_rate=1.0)
    for steps, horizon in ((100, 100), (100, 160)):
        rate = make_schedule(dict(hp, schedule_steps=horizon), steps)
        for t in (10, 40, 99):
            expected = 0.5 * (1 + np.cos(np.pi * (t - 10) / (horizon - 10)))
            assert float(to_numpy(rate(t))) == pytest.approx(expected,
                                                             abs=1e-6)


def _epoch_lines(text):
    return [line for line in text.splitlines() if line.startswith("Epoch")]


def test_run_eta_is_the_mean_epoch_time_times_the_epochs_left(capsys):
    now = [0.0]
    progress = RunProgress(clock=lambda: now[0])
    progress.set_params(dict(verbose=1, epochs=4, steps=2))
    progress.on_train_begin()
    for epoch, seconds in ((0, 30.0), (1, 90.0)):
        progress.on_epoch_begin(epoch)
        now[0] += seconds
        progress.on_train_batch_end(1, {"loss": 1.0})
        progress.on_epoch_end(epoch, {"loss": 1.0})
    progress.on_epoch_begin(2)
    assert _epoch_lines(capsys.readouterr().out) == [
        "Epoch 1/4",
        # 30 s per epoch, epochs 2-4 left.
        "Epoch 2/4 - run ETA 1 min 30 s (30 s per epoch)",
        # (30 + 90) / 2 = 60 s per epoch, epochs 3-4 left.
        "Epoch 3/4 - run ETA 2 min 0 s (1 min 0 s per epoch)",
    ]


def test_run_eta_counts_a_last_epoch_cut_short_for_its_part(capsys):
    # 25 steps of epochs of 10: 2 whole epochs and 5 steps of the third.
    now = [0.0]
    progress = RunProgress(clock=lambda: now[0], total_steps=25)
    progress.set_params(dict(verbose=1, epochs=3, steps=10))
    progress.on_train_begin()
    progress.on_epoch_begin(0)
    now[0] += 40.0
    progress.on_epoch_end(0, {"loss": 1.0})
    progress.on_epoch_begin(1)
    # 40 s per epoch x 1.5 epochs of steps left.
    assert _epoch_lines(capsys.readouterr().out)[-1] == (
        "Epoch 2/3 - run ETA 1 min 0 s (40 s per epoch)")


def test_run_eta_is_the_time_limit_when_that_comes_first(capsys):
    now = [100.0]
    progress = RunProgress(clock=lambda: now[0], time_limit=150.0)
    progress.set_params(dict(verbose=1, epochs=40, steps=2))
    progress.on_train_begin()
    for epoch in (0, 1):
        progress.on_epoch_begin(epoch)
        now[0] += 60.0
        progress.on_epoch_end(epoch, {"loss": 1.0})
    progress.on_epoch_begin(2)
    assert _epoch_lines(capsys.readouterr().out) == [
        "Epoch 1/40 - time limit in 2 min 30 s",
        # 39 epochs x 60 s left, but only 150 - 60 = 90 s of the limit.
        "Epoch 2/40 - run ETA 1 min 30 s (time limit; 1 min 0 s per epoch)",
        "Epoch 3/40 - run ETA 30 s (time limit; 1 min 0 s per epoch)",
    ]


def test_an_epoch_resumed_in_its_middle_is_left_out_of_the_mean(capsys):
    now = [0.0]
    progress = RunProgress(clock=lambda: now[0])
    progress.set_params(dict(verbose=1, epochs=5, steps=2))
    # As resumable_fit does: the rest of epoch 3 from batch 5, then on.
    progress.step_offset = 5
    progress.on_epoch_begin(2)
    now[0] += 10.0
    progress.on_epoch_end(2, {"loss": 1.0})
    progress.step_offset = 0
    for epoch in (3, 4):
        progress.on_epoch_begin(epoch)
        now[0] += 40.0
        progress.on_epoch_end(epoch, {"loss": 1.0})
    assert _epoch_lines(capsys.readouterr().out) == [
        "Epoch 3/5 - resumed after batch 5",
        "Epoch 4/5",
        "Epoch 5/5 - run ETA 40 s (40 s per epoch)",
    ]
    assert progress.epoch_seconds == [40.0, 40.0]


@pytest.mark.one_backend
@pytest.mark.parametrize("seconds, text", [
    (0.4, "0 s"), (41, "41 s"), (59.6, "1 min 0 s"), (190, "3 min 10 s"),
    (4920, "1 h 22 min"), (90061, "25 h 1 min"),
])
def test_durations_read_in_the_units_a_person_reads(seconds, text):
    assert format_duration(seconds) == text


def test_the_progress_bar_replaces_keras_own_in_fit(capsys):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x, y = np.ones((8, 3), "float32"), np.zeros((8, 1), "float32")
    model.fit(x, y, epochs=3, batch_size=4, verbose=1,
              callbacks=[RunProgress()])
    out = capsys.readouterr().out
    lines = _epoch_lines(out)
    # One announcement per epoch (not Keras's "Epoch k/3" beside it), the
    # ETA from the second on, and Keras's bar itself.
    assert [line[:9] for line in lines] == ["Epoch 1/3", "Epoch 2/3",
                                            "Epoch 3/3"]
    assert lines[0] == "Epoch 1/3"
    assert all(" - run ETA " in line for line in lines[1:])
    assert "2/2" in out and "loss:" in out
    model.fit(x, y, epochs=2, verbose=0, callbacks=[RunProgress()])
    assert capsys.readouterr().out == ""


# === S5's optimizer groups and schedule (lindermanlab/S5) ===

# S5's `--opt_config` and `--dt_global` as row keys.
OPT_CONFIGS = {
    "standard": {},
    "BandCdecay": dict(B_weight_decay=True),
    "BfastandCdecay": dict(B_learning_rate="global", B_weight_decay=True),
}
DT_GLOBAL = dict(dt_learning_rate="global", dt_weight_decay=True)
# The parameter of S5's code that each S5 layer variable holds.
S5_NAMES = {"ssm_Lambda_real": "Lambda_re", "ssm_Lambda_imag": "Lambda_im",
            "ssm_log_dt": "log_step", "ssm_B_real": "B", "ssm_B_imag": "B",
            "C_real": "C", "C_imag": "C", "D": "D", "kernel": "kernel",
            "bias": "bias"}


def _s5_group(opt_config, dt_global, name, lr, ssm_lr, wd):
    """(Adam rate, decay as a fraction of the weight) of S5's parameter
    `name`, as s5/train_helpers.py lines 141-222 and 60-63 group it: Adam
    "ssm" at ssm_lr; "none" (BandCdecay's B) AdamW at ssm_lr; every other
    leaf (flax's "norm" is a module, never a leaf) AdamW "regular" at lr.
    optax's AdamW decays by lr * wd * w."""
    ssm = {"B", "Lambda_re", "Lambda_im", "log_step"}
    if opt_config != "standard":
        ssm.discard("B")
    if dt_global:
        ssm.discard("log_step")
    if name in ssm:
        return ssm_lr, 0.0
    if opt_config == "BandCdecay" and name == "B":
        return ssm_lr, wd * ssm_lr
    return lr, wd * lr


@pytest.mark.one_backend
@pytest.mark.parametrize("dt_global", [False, True])
@pytest.mark.parametrize("opt_config", list(OPT_CONFIGS))
def test_s5_weights_train_and_decay_as_s5s_opt_config_says(opt_config,
                                                            dt_global):
    from lra_keras.layers import S5

    lr, ssm_lr, wd = 0.01, 0.001, 0.5
    layer = S5(state_dim=4, num_blocks=1, causal=False,
               output_activation="half_glu")
    layer.build((None, 8, 3))
    variables = layer.trainable_variables
    assert {v.name for v in variables} == set(S5_NAMES)
    hp = _hp(model="s5", learning_rate=lr, ssm_learning_rate=ssm_lr,
             weight_decay=wd, weight_decay_on="all_but_dynamics",
             **OPT_CONFIGS[opt_config], **(DT_GLOBAL if dt_global else {}))
    start = [to_numpy(v).copy() for v in variables]
    moved = {}
    for grad in (0.0, 1.0):
        for v, w in zip(variables, start):
            v.assign(w)
        optimizer = make_optimizer(hp, 10)
        optimizer.apply([keras.ops.full(v.shape, grad) for v in variables],
                        variables)
        moved[grad] = [w - to_numpy(v) for v, w in zip(variables, start)]
    for v, w, decay, step in zip(variables, start, moved[0.0], moved[1.0]):
        rate, decay_rate = _s5_group(opt_config, dt_global, S5_NAMES[v.name],
                                     lr, ssm_lr, wd)
        # A zero gradient makes Adam's step 0: only the decay is left.
        np.testing.assert_allclose(decay, w * decay_rate, rtol=1e-3,
                                   atol=1e-7, err_msg=v.name)
        # A unit gradient adds Adam's first step, the rate itself.
        np.testing.assert_allclose(step - decay, rate, rtol=1e-3,
                                   err_msg=v.name)


# The scripts' --opt_config and --dt_global (bin/run_experiments/
# run_lra_<task>.sh of lindermanlab/S5).
S5_SCRIPTS = {"listops": ("BfastandCdecay", False),
              "text": ("standard", True),
              "retrieval": ("standard", True),
              "image": ("BfastandCdecay", False),
              "pathfinder": ("standard", False),
              "pathx": ("BandCdecay", False)}


@pytest.mark.one_backend
@pytest.mark.parametrize("task", list(S5_SCRIPTS))
def test_s5_rows_set_their_scripts_opt_config(task):
    from lra_keras.hparams import get_hparams

    opt_config, dt_global = S5_SCRIPTS[task]
    expected = dict(B_learning_rate="ssm", B_weight_decay=False,
                    dt_learning_rate="ssm", dt_weight_decay=False)
    expected.update(OPT_CONFIGS[opt_config], **(DT_GLOBAL if dt_global
                                                 else {}))
    hp = get_hparams(task, "s5")
    assert {key: hp[key] for key in expected} == expected
    assert hp["schedule_style"] == "s5"


def test_moving_b_needs_a_family_that_declares_it():
    for model in ("transformer", "s4"):
        with pytest.raises(ValueError, match="input_matrix"):
            make_optimizer(_hp(model=model, ssm_learning_rate=1e-3,
                               B_learning_rate="global"), 10)
    with pytest.raises(ValueError, match="kernels"):
        make_optimizer(_hp(model="s5", weight_decay_on="kernels",
                           B_weight_decay=True), 10)


def test_schema_rejects_b_keys_that_cannot_apply():
    from lra_keras.hparams import get_hparams

    with pytest.raises(ValueError, match="B_weight_decay"):
        get_hparams("listops", "s5", weight_decay_on="kernels")
    with pytest.raises(ValueError, match="B_learning_rate"):
        get_hparams("listops", "s5", B_learning_rate="fast")


def _s5_loop_rates(peak, steps_per_epoch, epochs, warmup_end, cosine):
    """The rate of every step as S5's loop sets it, in numpy:
    `create_train_state` injects the peak (s5/train_helpers.py line 218);
    each epoch picks its function (s5/train.py lines 166-180); after each
    step the rate becomes that function of the step just taken
    (train_helpers.py lines 49-65, 355-356; `linear_warmup` and
    `cosine_annealing` lines 12-21, lr_min 0)."""

    def linear_warmup(step, end_step):
        return peak * (step + 1) / end_step

    def cosine_annealing(step, end_step):
        count = np.minimum(step, end_step)
        return peak * 0.5 * (1 + np.cos(np.pi * count / end_step))

    rates, rate, step = [], peak, 0
    for epoch in range(epochs):
        if epoch < warmup_end:
            fn, end = linear_warmup, steps_per_epoch * warmup_end
        elif cosine:
            fn = cosine_annealing
            end = steps_per_epoch * epochs - steps_per_epoch * warmup_end
        else:
            fn, end = (lambda step, end_step: peak), None
        for _ in range(steps_per_epoch):
            rates.append(rate)
            rate = fn(step, end)
            step += 1
    return np.array(rates)


@pytest.mark.one_backend
@pytest.mark.parametrize("cosine", [True, False])
@pytest.mark.parametrize("warmup_end", [0, 1, 2])
def test_s5_schedule_style_is_s5s_loop(warmup_end, cosine):
    from lra_keras.training import make_schedule

    peak, per_epoch, epochs = 0.003, 5, 6
    total = per_epoch * epochs
    hp = _hp(learning_rate=peak, schedule="cosine" if cosine else "constant",
             warmup_steps=per_epoch * warmup_end, schedule_style="s5")
    rate = make_schedule(hp, total)
    steps = np.arange(total)
    np.testing.assert_allclose(
        to_numpy(rate(steps)),
        _s5_loop_rates(peak, per_epoch, epochs, warmup_end, cosine),
        rtol=1e-5, atol=1e-10)
    # A technique's "plateau" over an S5 row keeps its own shape.
    s5, keras_style = (
        make_schedule(dict(hp, schedule="plateau", schedule_style=style),
                      total) for style in ("s5", "keras"))
    for t in (0, 1, 5, total - 1):
        assert (float(to_numpy(s5(t))) if callable(s5) else s5) == (
            float(to_numpy(keras_style(t))) if callable(keras_style)
            else keras_style)


def test_s5_first_step_trains_at_the_peak():
    # Keras's warmup starts at 0; S5's loop runs its first step at the
    # injected peak (s5/train_helpers.py line 218).
    lr = 0.01
    moved = {}
    for style in ("keras", "s5"):
        hp = _hp(learning_rate=lr, schedule="cosine", warmup_steps=10,
                 schedule_style=style)
        model = _model(make_optimizer(hp, 100))
        model.train_on_batch(X, Y)
        moved[style] = 1 - _weights(model)[1]
    np.testing.assert_allclose(moved["keras"], 0.0, atol=1e-7)
    np.testing.assert_allclose(moved["s5"], [lr, 0, lr], rtol=1e-4)


def test_stop_at_step_ends_the_epoch_that_makes_the_count():
    from lra_keras.callbacks import StopAtStep

    model = _model(keras.optimizers.SGD(0.01))
    x, y = np.ones((20, 3), "float32"), np.zeros((20, 1), "float32")
    history = model.fit(x, y, batch_size=4, epochs=10, verbose=0,
                        validation_data=(x, y),
                        callbacks=[StopAtStep(7, 5)])  # 5 batches an epoch
    assert int(to_numpy(model.optimizer.iterations)) == 7
    # the cut epoch is validated and logged
    assert len(history.history["val_loss"]) == 2
    # A resumed epoch: 1 batch of epoch 1 done before (`resumable_fit`
    # sets the offset), the remaining 4 given; the 7th batch in all is the
    # first of them, whatever the optimizer has counted.
    model = _model(keras.optimizers.SGD(0.01))
    stop = StopAtStep(7, 5)
    stop.step_offset = 1
    model.fit(x[4:], y[4:], batch_size=4, initial_epoch=1, epochs=10,
              verbose=0, callbacks=[stop])
    assert int(to_numpy(model.optimizer.iterations)) == 1
    with pytest.raises(ValueError, match="`steps` must be an integer"):
        StopAtStep(0, 5)


# === Stochastic weight averaging (YCTFS's text row, Lightning's callback)


@pytest.mark.parametrize("annealing", ["cos", "linear"])
@pytest.mark.parametrize("annealing_epochs", [0, 1, 4])
def test_swa_rate_is_pytorch_swalr_as_lightning_builds_it(annealing,
                                                         annealing_epochs):
    torch = pytest.importorskip("torch")
    from torch.optim.swa_utils import SWALR

    base, swa, max_epochs = 0.002, 0.01, 80
    parameter = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([parameter], lr=base)
    # Lightning's StochasticWeightAveraging.on_train_epoch_start (2.3.3):
    # initial_lr set to the SWA rate, last_epoch=max_epochs for "cos".
    optimizer.param_groups[0]["initial_lr"] = swa
    scheduler = SWALR(optimizer, swa_lr=swa, anneal_epochs=annealing_epochs,
                      anneal_strategy=annealing,
                      last_epoch=max_epochs if annealing == "cos" else -1)
    rates = []
    for _ in range(8):  # the rate of each SWA epoch, stepped at its end
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    ours = [swa_annealed_rate(base, swa, k, annealing_epochs, annealing)
            for k in range(8)]
    np.testing.assert_allclose(ours, rates, rtol=1e-12)


def test_swa_start_epoch_is_lightnings():
    # int(fraction x max_epochs), counted from 1: YCTFS text, epoch 60.
    assert swa_start_epoch(0.75, 80) == 59
    assert swa_start_epoch(0.5, 8) == 3
    assert swa_start_epoch(0.0, 8) == 0
    assert swa_start_epoch(0.1, 5) == 0


def _swa_hp(**overrides):
    return _hp(learning_rate=0.01, swa_start_fraction=0.5,
               swa_learning_rate=0.05, swa_annealing_epochs=2,
               swa_annealing="cos", **overrides)


class _RecordSwa(keras.callbacks.Callback):
    """The kernel at each epoch's start (after the callbacks before this
    one) and the rate each epoch trains at."""

    def on_train_begin(self, logs=None):
        self.kernels, self.rates = [], []

    def on_epoch_begin(self, epoch, logs=None):
        self.kernels.append(_weights(self.model)[1].copy())
        self.rates.append(float(to_numpy(self.model.optimizer.learning_rate)))


def test_swa_anneals_the_rate_and_averages_the_epoch_start_weights():
    # 8 epochs of one step; SWA from epoch int(0.5 x 8) = 4, 0-based 3.
    # Adam moves a weight with a constant gradient by the rate.
    hp, epochs = _swa_hp(), 8
    model = _model(make_optimizer(hp, epochs))
    record = _RecordSwa()
    history = model.fit(X, Y, epochs=epochs, verbose=0, shuffle=False,
                        callbacks=make_callbacks(hp, epochs) + [record])
    lr, swa = 0.01, 0.05
    # epochs 0-3 at the schedule's rate (epoch 3: alpha(0) = 0), epoch 4
    # halfway (cos(pi / 2)), then the SWA rate
    expected = [lr] * 4 + [(lr + swa) / 2] + [swa] * 3
    np.testing.assert_allclose(record.rates, expected, rtol=1e-6)
    # Logged at every epoch's end: the next epoch's rate.
    np.testing.assert_allclose(history.history["learning_rate"],
                               expected[1:] + [swa], rtol=1e-6)
    kernels = np.array(record.kernels)
    np.testing.assert_allclose(
        1.0 - kernels[:, 0], np.cumsum([0.0] + expected[:-1]) * 1.0,
        rtol=1e-4)
    optimizer = model.optimizer
    assert float(to_numpy(optimizer.swa_count)) == 5.0
    averaged = dict((v.path, value) for v, value in swa_weights(optimizer))
    kernel_path = model.get_layer("two").kernel.path
    # The starts of epochs 3..7: the last epoch's own step never joins.
    np.testing.assert_allclose(averaged[kernel_path],
                               kernels[3:].mean(axis=0), rtol=1e-6)


def test_swa_starts_from_the_plateau_rate_and_replaces_the_plateau():
    # A loss that never improves after epoch 0, patience 2: the plateau
    # makes 0.2 lr for epoch 3, where SWA starts; its later reductions no
    # longer act.
    lr = 0.01
    hp = _swa_hp(schedule="plateau", plateau_factor=0.2, plateau_patience=2,
                 final_decay_fraction=0.0, final_decay_factor=1.0)
    model = _constant_loss_model(hp, total_steps=8)
    record = _RecordSwa()
    model.fit(X, Y, epochs=8, verbose=0,
              callbacks=make_callbacks(hp, 8) + [record])
    base = 0.2 * lr
    expected = [lr] * 3 + [base, (base + 0.05) / 2] + [0.05] * 3
    np.testing.assert_allclose(record.rates, expected, rtol=1e-5)


def test_swa_state_survives_backup_and_restore(tmp_path):
    # Interrupted at the end of epoch 4, inside the averaging: resumed, the
    # rates, weights and mean are those of an uninterrupted run.
    hp, epochs = _swa_hp(), 8
    plain = _model(make_optimizer(hp, epochs))
    plain.fit(X, Y, epochs=epochs, verbose=0,
              callbacks=make_callbacks(hp, epochs))
    expected = [value for _, value in swa_weights(plain.optimizer)]
    backup = str(tmp_path / "backup")

    def callbacks():
        return make_callbacks(hp, epochs) + [
            keras.callbacks.BackupAndRestore(backup)]

    keras.utils.clear_session()
    with pytest.raises(KeyboardInterrupt):
        _model(make_optimizer(hp, epochs)).fit(
            X, Y, epochs=epochs, verbose=0,
            callbacks=callbacks() + [_InterruptAfterEpoch(4)])
    keras.utils.clear_session()
    model = _model(make_optimizer(hp, epochs))
    model.fit(X, Y, epochs=epochs, verbose=0, callbacks=callbacks())
    assert float(to_numpy(model.optimizer.swa_count)) == 5.0
    for ours, theirs in zip(swa_weights(model.optimizer), expected):
        np.testing.assert_allclose(ours[1], theirs, rtol=1e-6)
    np.testing.assert_allclose(_weights(model)[1], _weights(plain)[1],
                               rtol=1e-6)


def test_swa_refuses_bad_settings():
    with pytest.raises(ValueError, match="annealing"):
        StochasticWeightAveraging(3, 0.01, annealing="step")
    with pytest.raises(ValueError, match="learning_rate"):
        StochasticWeightAveraging(3, 0.0)
    callback = StochasticWeightAveraging(0, 0.01)
    callback.set_model(_model(ScheduledAdamW(learning_rate=1.0)))
    with pytest.raises(TypeError, match="swa=True"):
        callback.on_train_begin()
    # A pretraining fit (no `epochs`) gets no averaging.
    assert not any(isinstance(c, StochasticWeightAveraging)
                   for c in make_callbacks(_swa_hp()))


def test_plateau_and_swa_reach_the_optimizer_a_loss_scale_wraps():
    # Keras wraps the optimizer in a LossScaleOptimizer under
    # "mixed_float16": the callbacks act on the one inside.
    from lra_keras.models import dtype_policy_scope

    hp = _swa_hp(schedule="plateau", final_decay_fraction=0.0,
                 final_decay_factor=1.0)
    with dtype_policy_scope("mixed_float16"):
        model = _model(make_optimizer(hp, 8))
        assert isinstance(model.optimizer,
                          keras.optimizers.LossScaleOptimizer)
        model.fit(X, Y, epochs=8, verbose=0,
                  callbacks=make_callbacks(hp, 8))
    assert float(to_numpy(model.optimizer.inner_optimizer.swa_count)) == 5
    assert len(swa_weights(model.optimizer)) == 2
