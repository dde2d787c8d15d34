"""The optimizers of `make_optimizer` take the same step under every backend
on an Embedding, whose TensorFlow gradient is sparse (`tf.IndexedSlices`).
"""

import keras
import numpy as np
import pytest

from lra_keras.optimizers import AdamW
from lra_keras.optimizers import ScheduledAdamW
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


def test_plain_optimizer_is_ours_with_pytorchs_epsilon():
    optimizer = make_optimizer(dict(learning_rate=LR, weight_decay=0.01),
                               total_steps=10)
    assert type(optimizer) is AdamW
    assert optimizer.epsilon_style == "torch"


def _adamw_reference(params, grads, lr, multipliers, weight_decay, beta_1,
                     beta_2, eps, style):
    """AdamW in numpy: PyTorch's `_single_tensor_adamw` ("torch") or
    Keras's `Adam.update_step` ("keras"), decay at the global rate. `lr`
    is a number or a function of the step (0 first)."""
    params = [p.astype(np.float64) for p in params]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    rate_at = lr if callable(lr) else (lambda step: lr)
    for t, step_grads in enumerate(grads, start=1):
        c1, c2 = 1 - beta_1**t, 1 - beta_2**t
        lr = rate_at(t - 1)
        for i, g in enumerate(step_grads):
            params[i] *= 1 - lr * weight_decay[i]
            m[i] = beta_1 * m[i] + (1 - beta_1) * g
            v[i] = beta_2 * v[i] + (1 - beta_2) * g * g
            rate = lr * multipliers[i]
            if style == "torch":
                params[i] -= rate / c1 * m[i] / (np.sqrt(v[i]) / np.sqrt(c2)
                                                 + eps)
            else:
                params[i] -= rate * np.sqrt(c2) / c1 * m[i] / (
                    np.sqrt(v[i]) + eps)
    return params


@pytest.mark.parametrize("style", ["torch", "keras"])
@pytest.mark.parametrize("scheduled", [False, True])
def test_adamw_step_is_the_frameworks_formula(style, scheduled):
    # Gradients of the size of epsilon, where its placement matters: at
    # step 1 "keras" acts as eps / sqrt(1 - 0.98) = 7.1 eps.
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (5,)]
    params = [rng.normal(size=s).astype("float32") for s in shapes]
    grads = [[(rng.normal(size=s) * 1e-6).astype("float32") for s in shapes]
             for _ in range(4)]
    eps, lr = 1e-6, 0.01
    kwargs = dict(learning_rate=lr, weight_decay=0.1, beta_1=0.9,
                  beta_2=0.98, epsilon=eps, epsilon_style=style)
    if scheduled:
        # The second variable at 0.1 times the rate and without decay (S4's
        # SSM group).
        optimizer = ScheduledAdamW(rate_multipliers={"ssm": 0.1},
                                   weight_decay_excluded=["ssm"], **kwargs)
        multipliers, decay = [1.0, 0.1], [0.1, 0.0]
    else:
        optimizer = AdamW(**kwargs)
        multipliers, decay = [1.0, 1.0], [0.1, 0.1]
    variables = [keras.Variable(p, name=n)
                 for p, n in zip(params, ("kernel", "ssm_A"))]
    for step_grads in grads:
        optimizer.apply([keras.ops.convert_to_tensor(g) for g in step_grads],
                        variables)
    expected = _adamw_reference(params, grads, lr, multipliers, decay, 0.9,
                                0.98, eps, style)
    other = _adamw_reference(params, grads, lr, multipliers, decay, 0.9,
                             0.98, eps, "keras" if style == "torch"
                             else "torch")
    for variable, want, not_want in zip(variables, expected, other):
        got = to_numpy(variable)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
        # The two placements differ by far more than the tolerance here.
        assert np.max(np.abs(want - not_want)) > 1e-4


class _CountedSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """0.01 / (step + 1), counting its evaluations."""

    def __init__(self):
        self.calls = 0

    def __call__(self, step):
        self.calls += 1
        return 0.01 / (keras.ops.cast(step, "float32") + 1.0)


@pytest.mark.parametrize("scheduled", [False, True])
def test_a_changing_rate_serves_the_update_and_the_decay_of_its_step(
        scheduled):
    # Under PyTorch the rate is evaluated once a step and used by both
    # the update and the weight decay; a rate kept from the step before,
    # or read after the count moved, would put the decay or the update at
    # 0.01 / t instead of 0.01 / (t + 1) and miss the formula by far more
    # than the tolerance (the gradients are as large as the weights).
    rng = np.random.default_rng(1)
    shapes = [(3, 4), (5,)]
    params = [rng.normal(size=s).astype("float32") for s in shapes]
    grads = [[rng.normal(size=s).astype("float32") for s in shapes]
             for _ in range(3)]
    schedule = _CountedSchedule()
    kwargs = dict(learning_rate=schedule, weight_decay=0.5, beta_1=0.9,
                  beta_2=0.98, epsilon=1e-6, epsilon_style="torch")
    if scheduled:
        # The second variable at half the rate, decaying at its own rate.
        optimizer = ScheduledAdamW(rate_multipliers={"ssm": 0.5}, **kwargs)
        multipliers, decay = [1.0, 0.5], [0.5, 0.25]
    else:
        optimizer = AdamW(**kwargs)
        multipliers, decay = [1.0, 1.0], [0.5, 0.5]
    variables = [keras.Variable(p, name=n)
                 for p, n in zip(params, ("kernel", "ssm_A"))]
    optimizer.build(variables)
    calls = []
    for step_grads in grads:
        before = schedule.calls
        optimizer.apply([keras.ops.convert_to_tensor(g) for g in step_grads],
                        variables)
        calls.append(schedule.calls - before)
    expected = _adamw_reference(params, grads, lambda step: 0.01 / (step + 1),
                                multipliers, decay, 0.9, 0.98, 1e-6, "torch")
    for variable, want in zip(variables, expected):
        np.testing.assert_allclose(to_numpy(variable), want, rtol=1e-5,
                                   atol=1e-6)
    if keras.backend.backend() == "torch":
        assert calls == [1, 1, 1]
    # Outside a step the rate is the schedule's at the present count.
    np.testing.assert_allclose(
        float(to_numpy(optimizer.learning_rate)), 0.01 / 4, rtol=1e-6)


def test_adamw_rejects_an_unknown_epsilon_style():
    with pytest.raises(ValueError, match="epsilon_style"):
        AdamW(epsilon_style="optax")


def test_adamw_round_trips_through_its_config():
    optimizer = AdamW(learning_rate=LR, weight_decay=0.01,
                      global_clipnorm=1.0, epsilon_style="torch")
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
    # fairseq's --warmup-init-lr (1e-7 in the MEGA runs): init + t^p *
    # (peak - init) / w^p up to w (linear_decay_schedule.py:35, 75).
    init = 1e-7
    started = WarmupLinearDecay(peak, warmup, total, power, initial=init)
    for t in (0, 3, 10, 11, 30):
        expected = (init + t**power * (peak - init) / warmup**power
                    if t <= warmup else peak * (total - t) / (total - warmup))
        assert float(to_numpy(started(t))) == pytest.approx(
            expected, rel=1e-5, abs=1e-12)
    assert float(to_numpy(started(0))) == pytest.approx(1e-7, rel=1e-5)
    with pytest.raises(ValueError, match=r"`initial` must be in \[0, peak\)"):
        WarmupLinearDecay(peak, warmup, total, initial=peak)
    # Without warmup the first step trains at the peak.
    assert float(to_numpy(WarmupLinearDecay(peak, 0, total)(0))) == \
        pytest.approx(peak)
    rebuilt = WarmupLinearDecay.from_config(started.get_config())
    assert rebuilt.get_config() == started.get_config()
    with pytest.raises(ValueError, match="decay_steps"):
        WarmupLinearDecay(peak, 10, 10)


def test_rsqrt_decay_is_lras_schedule():
    # lra_benchmarks/utils/train_utils.py create_learning_rate_scheduler
    # with "constant * linear_warmup * rsqrt_decay", written out in numpy.
    from lra_keras.optimizers import RsqrtDecay
    from lra_keras.training import make_schedule

    def lra(step, base, warmup):
        ret = base
        ret *= np.minimum(1.0, step / warmup)
        ret /= np.sqrt(np.maximum(step, warmup))
        return ret

    schedule = RsqrtDecay(0.05, 1000)
    for t in (0, 1, 500, 999, 1000, 1001, 4000, 20000):
        assert float(to_numpy(schedule(t))) == pytest.approx(
            lra(t, 0.05, 1000), rel=1e-5, abs=1e-12)
    # the largest rate is at the warmup's end: 0.05 / sqrt(1000)
    assert float(to_numpy(schedule(1000))) == pytest.approx(
        0.05 / 1000**0.5, rel=1e-6)
    made = make_schedule(dict(learning_rate=0.05, warmup_steps=8000,
                              schedule="rsqrt"), 123)
    assert isinstance(made, RsqrtDecay)
    assert float(to_numpy(made(16000))) == pytest.approx(
        lra(16000, 0.05, 8000), rel=1e-5)
    config = keras.optimizers.schedules.serialize(schedule)
    assert config["registered_name"] == "lra_keras>RsqrtDecay"
    rebuilt = keras.optimizers.schedules.deserialize(config)
    assert rebuilt.get_config() == schedule.get_config()
    with pytest.raises(ValueError, match="`warmup_steps` must be >= 1"):
        RsqrtDecay(0.05, 0)


def test_s5_schedule_round_trips_and_rejects_a_short_run():
    from lra_keras.optimizers import S5Schedule

    schedule = S5Schedule(0.003, 10, 50, cosine=False)
    config = keras.optimizers.schedules.serialize(schedule)
    assert config["registered_name"] == "lra_keras>S5Schedule"
    rebuilt = keras.optimizers.schedules.deserialize(config)
    assert rebuilt.get_config() == schedule.get_config()
    with pytest.raises(ValueError, match="total_steps"):
        S5Schedule(0.003, 10, 10)


def test_every_warmup_starts_at_warmup_initial_learning_rate():
    # Keras's CosineDecay warmup (cosine, constant) rises linearly from it;
    # S5's own warmup takes none.
    from lra_keras.training import make_schedule

    row = dict(learning_rate=0.01, warmup_steps=10,
               warmup_initial_learning_rate=1e-4)
    for name in ("cosine", "constant", "linear"):
        schedule = make_schedule(dict(row, schedule=name), 50)
        assert float(to_numpy(schedule(0))) == pytest.approx(1e-4, rel=1e-5)
        assert float(to_numpy(schedule(5))) == pytest.approx(
            1e-4 + 0.5 * (0.01 - 1e-4), rel=1e-5)
        assert float(to_numpy(schedule(10))) == pytest.approx(0.01, rel=1e-5)
    with pytest.raises(ValueError, match="takes no "
                       "`warmup_initial_learning_rate`"):
        make_schedule(dict(row, schedule="cosine", schedule_style="s5"), 50)
