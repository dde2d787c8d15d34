"""AdamW with the learning-rate controls of the LRA recipes.

`AdamW` is `keras.optimizers.AdamW` on dense gradients (the same update
under TensorFlow as under JAX and PyTorch; see its docstring).
`ScheduledAdamW` is that AdamW plus three things the papers'
PyTorch trainers get from learning-rate schedulers and parameter groups:

- a plateau scale: a variable multiplying the rate, lowered by
  `lra_keras.callbacks.ReduceOnTrainingPlateau` (PyTorch
  `ReduceLROnPlateau` on the training loss, as in YCTFS A.2);
- a final decay: the rate times `final_decay_factor` from step
  `final_decay_step` on (YCTFS: the last 10% of the training steps);
- rate multipliers per variable name, for a separate rate of the SSM/EMA
  parameters (S4 `layer.lr`, S5 `ssm_lr`), which keep the global schedule's
  shape (warmup, decay, plateau) as a PyTorch parameter group does; a
  variable so scaled that decays decays at its own rate too.

`S5Schedule` is the rate that S5's training loop sets by hand, step by
step (its first step at the peak, its cosine counted from step 0).

The plateau state (scale, best loss, epochs without improvement) lives in
optimizer variables, so it is saved with the optimizer by `model.save`
and by `keras.callbacks.BackupAndRestore`, and under JAX it flows through
the jitted train step like the moment estimates.

One optimizer (rather than `keras.optimizers.MultiOptimizer` with one AdamW
per group) keeps `global_clipnorm` global over all gradients, as
`torch.nn.utils.clip_grad_norm_` over all parameters, keeps a single
`learning_rate` for callbacks and logs, and needs only one plateau state.

References:
- "You Can Train from Scratch" (anonymous ICLR submission), appendix A.2.
- Original files read: pablomiralles22/long-transformers
  configs/scheduler/train_plateau.yaml, configs/scheduler/
  constant_w_cooldown.yaml, src/training/scheduler_builder.py,
  src/training/trainer.py; keras/src/optimizers/base_optimizer.py,
  keras/src/optimizers/multi_optimizer.py (Keras 3.15); lindermanlab/S5
  s5/train.py, s5/train_helpers.py (`S5Schedule`).
"""

import math
import re

import keras

from lra_keras.backend_utils import dense_gradient
from lra_keras.schema import EPSILON_STYLES


@keras.saving.register_keras_serializable(package="lra_keras")
class AdamW(keras.optimizers.AdamW):
    """`keras.optimizers.AdamW` on dense gradients, with PyTorch's epsilon.

    Under TensorFlow the gradient of an `Embedding` is a `tf.IndexedSlices`
    with one slice per occurrence of a token, and Keras's Adam squares the
    slices one by one: a token seen n times in a batch gets a second moment
    of sum(g_i^2) instead of (sum g_i)^2 (and global-norm clipping sums
    squares the same way), so its first step is up to sqrt(n) times the
    learning rate, where JAX and PyTorch (and the papers' PyTorch code)
    move it by the learning rate. This class sums the slices first
    (`backend_utils.dense_gradient`); under JAX and PyTorch it changes
    nothing. The embeddings of LRA are at most 258 rows, so the dense
    update costs nothing measurable.

    Where epsilon goes differs between the frameworks. At step t, with
    c1 = 1 - beta_1^t and c2 = 1 - beta_2^t:

    - `"keras"`: `lr * sqrt(c2) / c1 * m / (sqrt(v) + eps)`, Keras's Adam:
      epsilon is added before the bias correction, so it acts as
      `eps / sqrt(c2)` on the corrected moments (31.6 eps at the first
      step with beta_2 = 0.999, 7.1 eps with 0.98);
    - `"torch"`: `lr / c1 * m / (sqrt(v) / sqrt(c2) + eps)`, PyTorch's
      `torch.optim.AdamW` (`_single_tensor_adamw`) and optax's
      `scale_by_adam`: the optimisers of the S4, S5, YCTFS and NTFS code,
      and `make_optimizer`'s default (`adam_epsilon_style`). fairseq's
      own Adam, which trained MEGA, adds epsilon as Keras does
      (facebookresearch/mega `fairseq/optim/adam.py` 195-204).

    Under PyTorch the update runs as one `torch._foreach_*` call per
    operation over all variables (as Keras's own fused Adam does there),
    not one small update per variable.

    Args:
        epsilon_style: `"keras"` or `"torch"`. Defaults to `"keras"`,
            the update of `keras.optimizers.AdamW`.
        **kwargs: the arguments of `keras.optimizers.AdamW`.
    """

    def __init__(self, *args, epsilon_style="keras", **kwargs):
        super().__init__(*args, **kwargs)
        if epsilon_style not in EPSILON_STYLES:
            raise ValueError(
                f"`epsilon_style` must be one of {list(EPSILON_STYLES)}. "
                f"Received: epsilon_style={epsilon_style!r}"
            )
        self.epsilon_style = epsilon_style
        self._step_rate = None  # the rate of the step under way (PyTorch)

    def apply(self, grads, trainable_variables=None):
        grads = [None if g is None else dense_gradient(g) for g in grads]
        if keras.backend.backend() != "torch":
            return super().apply(grads, trainable_variables)
        # Keras asks for the rate twice a step, for the update and for the
        # weight decay (`TorchOptimizer._apply_weight_decay`; more with
        # `ScheduledAdamW`'s scaled decay), and under PyTorch each ask
        # runs the schedule's ops eagerly, where JAX and TensorFlow trace
        # them once into the step. One evaluation serves the step: the
        # iteration count does not move until its end.
        self._step_rate = self._get_current_learning_rate()
        try:
            return super().apply(grads, trainable_variables)
        finally:
            self._step_rate = None

    def _get_current_learning_rate(self):
        if self._step_rate is not None:
            return self._step_rate
        return self._rate()

    def _rate(self):
        """The rate at the present iteration, computed anew."""
        return super()._get_current_learning_rate()

    def _rate_multiplier(self, variable):
        """The variable's learning-rate multiplier (1 here)."""
        return 1.0

    def _step_factors(self, learning_rate, dtype):
        """(step size, sqrt(c2)): the update is step * m / (sqrt(v) / d +
        eps) with d = sqrt(c2) ("torch"), step * m / (sqrt(v) + eps) with
        d = 1 ("keras")."""
        ops = keras.ops
        lr = ops.cast(learning_rate, dtype)
        local_step = ops.cast(self.iterations + 1, dtype)
        c1 = 1 - ops.power(ops.cast(self.beta_1, dtype), local_step)
        root_c2 = ops.sqrt(
            1 - ops.power(ops.cast(self.beta_2, dtype), local_step))
        if self.epsilon_style == "torch":
            return lr / c1, root_c2
        return lr * root_c2 / c1, None

    def update_step(self, gradient, variable, learning_rate):
        ops = keras.ops
        multiplier = self._rate_multiplier(variable)
        if multiplier != 1.0:
            learning_rate = learning_rate * multiplier
        if self.epsilon_style == "keras":
            return super().update_step(gradient, variable, learning_rate)
        gradient = ops.cast(gradient, variable.dtype)
        index = self._get_variable_index(variable)
        m, v = self._momentums[index], self._velocities[index]
        step, root_c2 = self._step_factors(learning_rate, variable.dtype)
        self.assign_add(m, (gradient - m) * (1 - self.beta_1))
        self.assign_add(v, (ops.square(gradient) - v) * (1 - self.beta_2))
        if self.amsgrad:
            v_hat = self._velocity_hats[index]
            self.assign(v_hat, ops.maximum(v_hat, v))
            v = v_hat
        self.assign_sub(
            variable, m * step / (ops.sqrt(v) / root_c2 + self.epsilon))

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        if keras.backend.backend() != "torch":
            return super()._backend_update_step(
                grads, trainable_variables, learning_rate)
        return _torch_foreach_update(
            self, grads, trainable_variables, learning_rate)

    def get_config(self):
        config = super().get_config()
        config["epsilon_style"] = self.epsilon_style
        return config


def _torch_foreach_update(optimizer, grads, variables, learning_rate):
    """`AdamW.update_step` over all variables at once, under PyTorch."""
    import torch

    with torch.no_grad():
        values = [v.value for v in variables]
        step, root_c2 = optimizer._step_factors(
            learning_rate, values[0].dtype)
        indices = [optimizer._get_variable_index(v) for v in variables]
        ms = [optimizer._momentums[i].value for i in indices]
        vs = [optimizer._velocities[i].value for i in indices]
        torch._foreach_lerp_(ms, grads, 1 - optimizer.beta_1)
        torch._foreach_mul_(vs, optimizer.beta_2)
        torch._foreach_addcmul_(vs, grads, grads, value=1 - optimizer.beta_2)
        if optimizer.amsgrad:
            v_hats = [optimizer._velocity_hats[i].value for i in indices]
            torch._foreach_maximum_(v_hats, vs)
            vs = v_hats
        denominators = torch._foreach_sqrt(vs)
        if root_c2 is not None:
            torch._foreach_div_(denominators, root_c2)
        torch._foreach_add_(denominators, optimizer.epsilon)
        updates = torch._foreach_div(ms, denominators)
        torch._foreach_mul_(updates, step)
        multipliers = [optimizer._rate_multiplier(v) for v in variables]
        if any(m != 1.0 for m in multipliers):
            torch._foreach_mul_(updates, multipliers)
        torch._foreach_sub_(values, updates)


@keras.saving.register_keras_serializable(package="lra_keras")
class ScheduledAdamW(AdamW):
    """AdamW with a plateau scale, a final decay and per-group rates.

    The rate at step `t` is `learning_rate(t) * scale`, times
    `final_decay_factor` once `t >= final_decay_step`. A variable whose
    path matches a pattern of `rate_multipliers` takes its Adam step with
    that rate times the multiplier, and its weight decay too (unless
    `weight_decay_excluded` excludes it): `w * weight_decay * rate *
    multiplier`, as in a PyTorch parameter group with its own `lr` and in
    optax's `adamw` of one `multi_transform` group (S5's "BandCdecay" B,
    s5/train_helpers.py lines 188-189).

    Args:
        learning_rate: float or `LearningRateSchedule`. The rate before
            the plateau scale and the final decay.
        rate_multipliers: dict `{regex: float}`. Patterns searched
            (`re.search`) in `variable.path`; the first match sets the
            variable's rate multiplier. Defaults to `None` (all 1).
        final_decay_step: int or `None`. First step of the final decay.
            Defaults to `None` (no final decay).
        final_decay_factor: float. Rate multiplier of the final decay.
            Defaults to 1.0.
        final_decay_resets: bool. Whether the final decay forgets the
            plateau reductions made before it (the YCTFS code's cooldown;
            `callbacks.ReduceOnTrainingPlateau` resets the scale when it
            starts) rather than multiplying the reduced rate. Defaults to
            False.
        weight_decay_excluded: list of regex. Variable names that get no
            weight decay (`exclude_from_weight_decay(var_names=...)`),
            kept in the config so that a loaded model keeps them.
        swa: bool. Whether to hold the state of stochastic weight
            averaging (`callbacks.StochasticWeightAveraging`): a running
            mean of every trained variable (`swa_averages`, one slot per
            variable), the number of weights averaged (`swa_count`), the
            last epoch averaged (`swa_epoch`), the rate when averaging
            began (`swa_base_rate`) and `swa_rate`, which, once >= 0,
            replaces the schedule's rate, its plateau scale and final decay
            (the per-variable multipliers still apply). Defaults to False.
        **kwargs: the arguments of `keras.optimizers.AdamW`.

    Example:

    ```python
    optimizer = ScheduledAdamW(
        learning_rate=1e-3, weight_decay=0.05,
        rate_multipliers={"(^|/)ssm_": 0.1},
        weight_decay_excluded=["bias", "(^|/)ssm_"],
        final_decay_step=900, final_decay_factor=0.1,
    )
    ```
    """

    def __init__(
        self,
        learning_rate=0.001,
        rate_multipliers=None,
        final_decay_step=None,
        final_decay_factor=1.0,
        final_decay_resets=False,
        weight_decay_excluded=None,
        swa=False,
        **kwargs,
    ):
        super().__init__(learning_rate=learning_rate, **kwargs)
        rate_multipliers = dict(rate_multipliers or {})
        for pattern, multiplier in rate_multipliers.items():
            re.compile(pattern)
            if not float(multiplier) > 0:
                raise ValueError(
                    "Rate multipliers must be positive. Received: "
                    f"rate_multipliers={rate_multipliers}"
                )
        if final_decay_step is not None and int(final_decay_step) < 0:
            raise ValueError(
                "`final_decay_step` must be >= 0 or None. "
                f"Received: final_decay_step={final_decay_step}"
            )
        if not float(final_decay_factor) > 0:
            raise ValueError(
                "`final_decay_factor` must be positive. "
                f"Received: final_decay_factor={final_decay_factor}"
            )
        self.rate_multipliers = rate_multipliers
        self.final_decay_step = (
            None if final_decay_step is None else int(final_decay_step)
        )
        self.final_decay_factor = float(final_decay_factor)
        self.final_decay_resets = bool(final_decay_resets)
        self.weight_decay_excluded = list(weight_decay_excluded or [])
        if self.weight_decay_excluded:
            self.exclude_from_weight_decay(
                var_names=self.weight_decay_excluded
            )
        # Created here, not in build(), so that a fresh optimizer and a
        # restored one list the same variables in the same order.
        self.plateau_scale = keras.Variable(
            1.0, name="plateau_scale", trainable=False, dtype="float32"
        )
        self.plateau_best = keras.Variable(
            float("inf"), name="plateau_best", trainable=False,
            dtype="float32",
        )
        self.plateau_wait = keras.Variable(
            0.0, name="plateau_wait", trainable=False, dtype="float32"
        )
        self.swa = bool(swa)
        self.swa_averages = []
        if self.swa:
            for name, value in (("swa_rate", -1.0), ("swa_base_rate", 0.0),
                                ("swa_count", 0.0), ("swa_epoch", -1.0)):
                setattr(self, name, keras.Variable(
                    value, name=name, trainable=False, dtype="float32"))

    def _rate(self):
        rate = keras.ops.multiply(
            super()._rate(),
            keras.ops.cast(self.plateau_scale, "float32"),
        )
        if self.final_decay_step is not None and self.final_decay_factor != 1:
            decayed = keras.ops.greater_equal(
                self._iterations, self.final_decay_step
            )
            rate = keras.ops.where(
                decayed, rate * self.final_decay_factor, rate
            )
        if not self.swa:
            return rate
        swa_rate = keras.ops.cast(self.swa_rate, "float32")
        return keras.ops.where(swa_rate >= 0, swa_rate, rate)

    def build(self, variables):
        super().build(variables)
        if self.swa:
            self.swa_averages = [
                self.add_variable_from_reference(v, "swa_average")
                for v in variables
            ]
        # By index: under TensorFlow, update_step receives the backend
        # variable, which has no Keras path.
        self._rate_multipliers_by_index = [
            next(
                (float(m) for p, m in self.rate_multipliers.items()
                 if re.search(p, v.path)),
                1.0,
            )
            for v in variables
        ]

    def _rate_multiplier(self, variable):
        return self._rate_multipliers_by_index[
            self._get_variable_index(variable)
        ]

    def _apply_weight_decay(self, variables):
        scaled = [v for v in variables if self._rate_multiplier(v) != 1.0]
        if not scaled or not self.weight_decay:
            return super()._apply_weight_decay(variables)
        super()._apply_weight_decay(
            [v for v in variables if self._rate_multiplier(v) == 1.0])
        for variable in scaled:
            if self._use_weight_decay(variable):
                # decoupled decay at the variable's own rate
                rate = keras.ops.cast(self.learning_rate, variable.dtype)
                decay = keras.ops.cast(
                    self.weight_decay * self._rate_multiplier(variable),
                    variable.dtype)
                variable.assign(variable - variable * decay * rate)

    def get_config(self):
        config = super().get_config()
        config.update(
            rate_multipliers=dict(self.rate_multipliers),
            final_decay_step=self.final_decay_step,
            final_decay_factor=self.final_decay_factor,
            final_decay_resets=self.final_decay_resets,
            weight_decay_excluded=list(self.weight_decay_excluded),
            swa=self.swa,
        )
        return config


def _check_warmup(warmup_steps, end_name, end_steps):
    """A schedule's warmup: >= 0 steps, ending before `end_steps`."""
    if int(warmup_steps) < 0 or int(end_steps) <= int(warmup_steps):
        raise ValueError(
            f"`warmup_steps` must be >= 0 and `{end_name}` larger. "
            f"Received: warmup_steps={warmup_steps}, "
            f"{end_name}={end_steps}"
        )


@keras.saving.register_keras_serializable(package="lra_keras")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """A polynomial warmup to `peak`, then a linear decay to 0.

    `initial + (peak - initial) * (step / warmup_steps) ** warmup_power` up
    to `warmup_steps`, then `peak * (decay_steps - step) / (decay_steps -
    warmup_steps)`, 0 from `decay_steps` on: fairseq's linear schedule of
    the MEGA LRA runs (facebookresearch/mega,
    `fairseq/optim/lr_scheduler/linear_decay_schedule.py`, `step_update`
    with `num_updates` = the steps taken, lines 73-80; its warmup starts at
    `--warmup-init-lr`, 1e-7 in every MEGA LRA command).

    Args:
        peak: float. The rate at the end of the warmup.
        warmup_steps: int >= 0.
        decay_steps: int > warmup_steps. The step where the rate is 0.
        warmup_power: float > 0. 1 for a linear warmup (fairseq's
            `--warmup-power`; MEGA's Path-X run uses 2).
        initial: float in [0, peak). The rate of step 0 when there is a
            warmup (fairseq's `--warmup-init-lr`). Defaults to 0.
    """

    def __init__(self, peak, warmup_steps, decay_steps, warmup_power=1.0,
                 initial=0.0):
        _check_warmup(warmup_steps, "decay_steps", decay_steps)
        if not float(warmup_power) > 0:
            raise ValueError(
                "`warmup_power` must be positive. Received: "
                f"warmup_power={warmup_power}"
            )
        if not 0.0 <= float(initial) < float(peak):
            raise ValueError(
                "`initial` must be in [0, peak). Received: "
                f"initial={initial}, peak={peak}"
            )
        self.peak = float(peak)
        self.warmup_steps = int(warmup_steps)
        self.decay_steps = int(decay_steps)
        self.warmup_power = float(warmup_power)
        self.initial = float(initial)

    def __call__(self, step):
        step = keras.ops.cast(step, "float32")
        warmup = float(max(self.warmup_steps, 1))
        rising = self.initial + (self.peak - self.initial) * keras.ops.power(
            keras.ops.minimum(step / warmup, 1.0), self.warmup_power)
        falling = self.peak * keras.ops.clip(
            (self.decay_steps - step)
            / float(self.decay_steps - self.warmup_steps), 0.0, 1.0)
        # Both give `peak` at the warmup's end; without warmup, step 0
        # trains at `peak` (fairseq's warmup_init_lr = lr then).
        return keras.ops.where(step < self.warmup_steps, rising, falling)

    def get_config(self):
        return dict(peak=self.peak, warmup_steps=self.warmup_steps,
                    decay_steps=self.decay_steps,
                    warmup_power=self.warmup_power, initial=self.initial)


@keras.saving.register_keras_serializable(package="lra_keras")
class RsqrtDecay(keras.optimizers.schedules.LearningRateSchedule):
    """LRA's `constant * linear_warmup * rsqrt_decay`.

    The rate of step `t` (counted from 0, the first update at 0) is
    `constant * min(1, t / warmup_steps) / sqrt(max(t, warmup_steps))`:
    a linear warmup to `constant / sqrt(warmup_steps)`, then a decay as
    `1 / sqrt(t)` (google-research/long-range-arena
    `lra_benchmarks/utils/train_utils.py` lines 123-147,
    `create_learning_rate_scheduler`; the ListOps, Text and Retrieval
    trainers call it with the step of `optimizer.state.step`, 0 at the
    first update, `listops/train.py` line 117). LRA's `learning_rate` (0.05
    in every text config) is the `constant`: the largest rate taken is
    0.05 / sqrt(1000) = 1.6e-3 on ListOps, 0.05 / sqrt(8000) = 5.6e-4 on
    Text and Retrieval.

    Args:
        constant: float. LRA's `base_learning_rate`.
        warmup_steps: int >= 1.
    """

    def __init__(self, constant, warmup_steps):
        if int(warmup_steps) < 1:
            raise ValueError(
                "`warmup_steps` must be >= 1: the rate divides by "
                "sqrt(max(step, warmup_steps)). Received: "
                f"warmup_steps={warmup_steps}"
            )
        self.constant = float(constant)
        self.warmup_steps = int(warmup_steps)

    def __call__(self, step):
        ops = keras.ops
        t = ops.cast(step, "float32")
        warmup = float(self.warmup_steps)
        return (self.constant * ops.minimum(1.0, t / warmup)
                / ops.sqrt(ops.maximum(t, warmup)))

    def get_config(self):
        return dict(constant=self.constant, warmup_steps=self.warmup_steps)


@keras.saving.register_keras_serializable(package="lra_keras")
class S5Schedule(keras.optimizers.schedules.LearningRateSchedule):
    """The rate of each step of S5's training loop.

    S5 sets the rate by hand. The optimizer starts at the peak
    (`create_train_state` injects `learning_rate=lr`, s5/train_helpers.py
    lines 161-163, 188-191, 216-218); after the update of step `s`
    (counted from 0) the loop sets the rate of step `s + 1` to `f(s)`
    (`update_learning_rate_per_step`, lines 49-65, called after each
    `train_step`, lines 355-356), where `f` is the epoch's function
    (s5/train.py lines 167-180): `linear_warmup`, `peak (s + 1) / W`,
    in the `warmup_end` epochs (W steps), then `cosine_annealing(s, peak,
    D)` with `D = T - W`, `peak (1 + cos(pi min(s, D) / D)) / 2`
    (train_helpers.py lines 12-21; `lr_min` 0, `run_train.py`'s default,
    which no run script changes). Its phase counts from step 0, not from
    the warmup's end: the cosine starts below the peak and reaches 0 at
    step `T - W`, W steps before the last. The rate of step `t` is thus

        peak                                    t = 0
        peak t / W                              1 <= t <= W
        peak (1 + cos(pi min(t - 1, D) / D)) / 2    t > W

    (`cosine=False`: `peak` for t > W, `constant_lr`). Keras's
    `CosineDecay` with a warmup gives 0 at t = 0, the same warmup, and
    the phase `(t - W) / D`.

    Args:
        peak: float. The rate after the warmup (S5's `lr`).
        warmup_steps: int >= 0. W, `warmup_end` epochs of steps.
        total_steps: int > warmup_steps. T, `epochs` epochs of steps.
        cosine: bool. S5's `--cosine_anneal`. Defaults to True.
    """

    def __init__(self, peak, warmup_steps, total_steps, cosine=True):
        _check_warmup(warmup_steps, "total_steps", total_steps)
        self.peak = float(peak)
        self.warmup_steps = int(warmup_steps)
        self.total_steps = int(total_steps)
        self.cosine = bool(cosine)

    def __call__(self, step):
        ops = keras.ops
        t = ops.cast(step, "float32")
        W = float(self.warmup_steps)
        D = float(self.total_steps - self.warmup_steps)
        warm = self.peak * t / max(W, 1.0)
        if self.cosine:
            phase = ops.clip(t - 1.0, 0.0, D) / D
            after = self.peak * 0.5 * (1.0 + ops.cos(math.pi * phase))
        else:
            after = self.peak + 0.0 * t
        rate = ops.where(t <= W, warm, after)
        return ops.where(t < 1.0, self.peak, rate)

    def get_config(self):
        return dict(peak=self.peak, warmup_steps=self.warmup_steps,
                    total_steps=self.total_steps, cosine=self.cosine)
