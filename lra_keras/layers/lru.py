"""LRU: the Linear Recurrent Unit.

References:
- Orvieto, Smith, Gu, Fernando, Gulcehre, Pascanu, De. "Resurrecting
  Recurrent Neural Networks for Long Sequences", ICML 2023,
  https://arxiv.org/abs/2303.06349 (section 3 and appendix A, whose JAX
  listing this layer follows).
- NicolasZucchet/minimal-LRU, `lru/model.py` lines 22-94 at bbd71b1: the
  same listing as a flax module (`nu_init`, `theta_init`,
  `gamma_log_init`, `LRU.__call__`) and its block (`SequenceLayer`, lines
  115-128: GELU, dropout, GLU, dropout, residual); `lru/train_helpers.py`
  lines 91-105: `nu_log`, `theta_log`, `gamma_log`, `B_re` and `B_im`
  train at the SSM rate, without weight decay.
"""

import math

import keras
from keras import ops

from lra_keras.layers.ssm_kernels import RECURRENCES
from lra_keras.layers.ssm_kernels import diagonal_ssm
from lra_keras.layers.state_space import StateSpaceLayer
from lra_keras.layers.state_space import skip_term


def ring_initializers(r_min, r_max, max_phase):
    """Initializers of `nu_log` and `theta_log`: eigenvalues uniform on a
    ring sector.

    The LRU paper's ring initialisation (Lemma 3.2, appendix A): `lambda =
    r e^(i theta)` uniform on `{r_min <= |lambda| <= r_max, 0 <= arg <=
    max_phase}`, so `r^2 ~ U[r_min^2, r_max^2]` and `theta ~ U[0,
    max_phase]`; stored as `nu_log = log(-log r)` and `theta_log = log
    theta` (the exponential parameterisation, `lambda = exp(-exp(nu_log)
    + i exp(theta_log))`). Unseeded Keras initializers, one per weight:
    `keras.utils.set_random_seed` fixes them.
    """
    modulus_draw = keras.initializers.RandomUniform(0.0, 1.0)
    phase_draw = keras.initializers.RandomUniform(0.0, 1.0)

    def nu_log(shape, dtype=None):
        u = modulus_draw(shape, dtype=dtype)
        return ops.log(-0.5 * ops.log(u * (r_max**2 - r_min**2) + r_min**2))

    def theta_log(shape, dtype=None):
        return ops.log(max_phase * phase_draw(shape, dtype=dtype))

    return nu_log, theta_log


@keras.saving.register_keras_serializable(package="lra_keras")
class LRU(StateSpaceLayer):
    """Linear Recurrent Unit: a diagonal complex linear recurrence.

    `x_k = lambda * x_{k-1} + gamma * (B u_k)`, `y_k = Re(C x_k) + D u_k`,
    with N complex states, `B` (N, H) and `C` (H, N) complex and:

    - exponential parameterisation: `lambda = exp(-exp(nu_log) + i
      exp(theta_log))`, so |lambda| < 1 whatever the weights;
    - ring initialisation (`ring_init`): |lambda| in `[r_min, r_max]`,
      phase in `[0, max_phase]`;
    - gamma normalisation: `gamma = exp(gamma_log)`, trained, started at
      `sqrt(1 - |lambda|^2)` so that white noise in gives states of the
      input's scale however close |lambda| is to 1;
    - `B` parts N(0, 1 / (2 H)), `C` parts N(0, 1 / N), `D` N(0, 1)
      (the paper's appendix A).

    Unlike S4D and S5 nothing is discretised and there are no conjugate
    pairs: the N states are N free complex numbers and the output is their
    real part. Then GELU, dropout and the output projection (`"glu"`: the
    `out1(y) * sigmoid(out2(y))` of the LRU block) as in
    `StateSpaceLayer`. `causal=False` adds a reverse-time recurrence with
    the same lambda, gamma and B and its own C, like S5's `bidirectional`.

    Args:
        state_dim: int. Number of complex states N (the paper's N,
            minimal-LRU's `d_hidden`). Defaults to 64.
        r_min: float. Smallest initial |lambda|, in [0, r_max). Defaults
            to 0.0.
        r_max: float. Largest initial |lambda|, in (r_min, 1). Defaults to
            0.99.
        max_phase: float. Largest initial phase of lambda, in (0, 2 pi].
            Defaults to 2 pi.
        recurrence: how the states are computed
            (`ssm_kernels.stacked_recurrence`): `"chunked"` (matrix
            products over chunks of the sequence, the fastest on a CPU),
            `"convolution"` (an FFT convolution with `lambda^l`) or
            `"scan"` (the paper's parallel scan, `keras.ops.
            associative_scan`, which under TensorFlow needs a length
            known when traced). The three give the same output to
            rounding. Defaults to `"chunked"`.
        causal, activation, output_activation, dropout, dense_init: see
            `StateSpaceLayer`.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).
        padding_mask: optional (batch, length), nonzero at real tokens.
        training: bool, for dropout.

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> layer = LRU(state_dim=64, r_min=0.9, r_max=0.999)
    >>> layer(keras.random.normal((2, 1024, 32))).shape
    (2, 1024, 32)
    """

    def __init__(
        self,
        state_dim=64,
        r_min=0.0,
        r_max=0.99,
        max_phase=2 * math.pi,
        recurrence="chunked",
        causal=True,
        activation="gelu",
        output_activation="glu",
        dropout=0.0,
        **kwargs,
    ):
        super().__init__(
            state_dim=state_dim,
            causal=causal,
            activation=activation,
            output_activation=output_activation,
            dropout=dropout,
            **kwargs,
        )
        if not 0.0 <= float(r_min) < float(r_max) < 1.0:
            raise ValueError(
                "Expected 0 <= r_min < r_max < 1. Received: "
                f"r_min={r_min}, r_max={r_max}"
            )
        if not 0.0 < float(max_phase) <= 2 * math.pi + 1e-6:
            raise ValueError(
                "`max_phase` must be in (0, 2 pi]. Received: "
                f"max_phase={max_phase}"
            )
        if recurrence not in RECURRENCES:
            raise ValueError(
                f"`recurrence` must be one of {RECURRENCES}. Received: "
                f"recurrence={recurrence!r}"
            )
        self.r_min = float(r_min)
        self.r_max = float(r_max)
        self.max_phase = float(max_phase)
        self.recurrence = recurrence

    def build_ssm(self, hidden_dim):
        n = self.state_dim
        nu_log, theta_log = ring_initializers(
            self.r_min, self.r_max, self.max_phase
        )
        self.nu_log = self.add_weight(
            name="ssm_nu_log", shape=(n,), initializer=nu_log
        )
        self.theta_log = self.add_weight(
            name="ssm_theta_log", shape=(n,), initializer=theta_log
        )
        # gamma = sqrt(1 - |lambda|^2), |lambda|^2 = exp(-2 exp(nu_log))
        modulus_squared = ops.exp(-2.0 * ops.exp(self.nu_log))
        self.gamma_log = self.add_weight(
            name="ssm_gamma_log", shape=(n,), initializer="zeros"
        )
        self.gamma_log.assign(0.5 * ops.log1p(-modulus_squared))

        def normal(name, shape, stddev):
            # One initializer per weight: an unseeded Keras initializer
            # keeps the seed it drew when made.
            return self.add_weight(
                name=name, shape=shape,
                initializer=keras.initializers.RandomNormal(stddev=stddev),
            )

        b_std = 1.0 / math.sqrt(2 * hidden_dim)
        self.B_real = normal("ssm_B_real", (n, hidden_dim), b_std)
        self.B_imag = normal("ssm_B_imag", (n, hidden_dim), b_std)
        shape = (self.directions, hidden_dim, n)
        c_std = 1.0 / math.sqrt(n)
        self.C_real = normal("C_real", shape, c_std)
        self.C_imag = normal("C_imag", shape, c_std)

    def log_lambda(self):
        """log lambda = -exp(nu_log) + i exp(theta_log), a (real, imag)
        pair of (N,) tensors."""
        return -ops.exp(self.nu_log), ops.exp(self.theta_log)

    def ssm_convolve(self, u, skip=None):
        gamma = ops.exp(self.gamma_log)[:, None]  # (N, 1)
        # y = Re(C x) of the states of gamma B u
        y = diagonal_ssm(u, (self.B_real * gamma, self.B_imag * gamma),
                         self.log_lambda(), (self.C_real, self.C_imag),
                         self.causal, self.recurrence)
        y = ops.cast(y, self.compute_dtype)  # (batch, L, H)
        return skip_term(y, u, skip)

    def get_config(self):
        config = super().get_config()
        config.update(
            r_min=self.r_min,
            r_max=self.r_max,
            max_phase=self.max_phase,
            recurrence=self.recurrence,
        )
        return config
