"""DLR: the diagonal linear RNN of "Never Train from Scratch", eq. 3.

References:
- Gupta, Mehta, Berant. "Simplifying and Understanding State Space Models
  with Diagonal Linear RNNs", https://arxiv.org/abs/2212.00768
- Amos, Berant, Gupta. "Never Train from Scratch", section 3.3 and C.1.3
  (DLR with state size 1024, structured or random init),
  https://arxiv.org/abs/2310.02980
"""

import math

import keras
import numpy as np

from lra_keras.layers.s4d import check_dt_range
from lra_keras.layers.ssm_kernels import shared_modes_kernel
from lra_keras.layers.ssm_kernels import vandermonde_kernel
from lra_keras.layers.state_space import StateSpaceLayer

INITS = ("structured", "random", "omega")


@keras.saving.register_keras_serializable(package="lra_keras")
class DLR(StateSpaceLayer):
    """Diagonal linear RNN: `x_n = Lambda x_{n-1} + 1 u_n`, `y_n = Re(C x_n)`.

    No continuous-time parameterisation and no discretisation: `Lambda` is
    learned directly through its logarithm, `log Lambda = -exp(nu) + i
    theta`, so `|Lambda| < 1`, and B is the all-ones vector (eq. 3 of
    "Never Train from Scratch", https://arxiv.org/abs/2310.02980). The
    convolution kernel is `K_l = Re(sum_n C_n Lambda_n^l)` over N complex
    modes (not conjugate pairs, unlike S4D). The rest of the layer (D skip,
    GELU, GLU output) is shared with the other SSMs (`StateSpaceLayer`).

    Initialisation: `"structured"` sets `log Lambda = dt (-1/2 + i pi n)`,
    the DLR authors' default (S4D-Lin modes at a step dt log-uniform in
    `[dt_min, dt_max]` per channel); `"random"` draws `nu`, `theta`, `C` from
    N(0, 0.1^2), the random initialisation of "Never Train from Scratch"
    C.1.3.

    `"omega"` is the kernel of the "Never Train from Scratch" code as its
    LRA configs run it (`DLRKernel` with `Lambda_init: omega`,
    IdoAmos/not-from-scratch src/models/sequence/ss/dss.py lines 406-537
    at f919137, configs/model/layer/dlr.yaml): its parameterisation too,
    not only its start. One Lambda per mode, shared by all channels,
    `log Lambda_n = -x_n^2 + i theta_n` (weights `ssm_Lambda_x`,
    `ssm_theta`, shape (N,)), started at `-dt_n / 2 + 2 pi i n / N` with
    dt_n log-uniform in `[dt_min, dt_max]` per mode (lines 457-466); the
    output weights W (`ssm_W_real`, `ssm_W_imag`, (directions, H, N)) with
    real and imaginary parts N(0, 1/N^2) (`W_scale` 1/N, lines 434, 470),
    named as dynamics so that the family's SSM rate and weight decay act
    on them as the code's `lr.W` (1e-4) and `wd: 0` do.

    Args:
        state_dim: int. Number of complex modes N. The paper uses 1024.
        init: `"structured"`, `"random"` or `"omega"` (see above).
        dt_min: float. Defaults to 0.0001.
        dt_max: float. Defaults to 0.1.
        causal, activation, output_activation, dropout: see
            `StateSpaceLayer`.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).
        padding_mask: optional (batch, length), nonzero at real tokens.
        training: bool, for dropout.

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> layer = DLR(state_dim=256)
    >>> layer(keras.random.normal((2, 512, 16))).shape
    (2, 512, 16)
    """

    def __init__(
        self,
        state_dim=1024,
        init="structured",
        dt_min=0.0001,
        dt_max=0.1,
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
        if init not in INITS:
            raise ValueError(
                f"`init` must be one of {INITS}. Received: init={init!r}"
            )
        check_dt_range(dt_min, dt_max)
        self.init = init
        self.dt_min = dt_min
        self.dt_max = dt_max

    def build_ssm(self, hidden_dim):
        if self.init == "omega":
            self._build_omega(hidden_dim)
            return
        shape = (hidden_dim, self.state_dim)
        c_shape = (self.directions, hidden_dim, self.state_dim)
        # A new initializer per weight: an unseeded Keras initializer
        # called twice returns the same values.
        if self.init == "random":
            def lambda_init():
                return keras.initializers.RandomNormal(stddev=0.1)
            c_init = lambda_init
        else:
            def lambda_init():
                return "zeros"

            def c_init():
                return keras.initializers.RandomNormal(stddev=math.sqrt(0.5))
        self.log_neg_real = self.add_weight(
            name="ssm_log_neg_real", shape=shape, initializer=lambda_init()
        )
        self.theta = self.add_weight(
            name="ssm_theta", shape=shape, initializer=lambda_init()
        )
        self.C_real = self.add_weight(
            name="C_real", shape=c_shape, initializer=c_init()
        )
        self.C_imag = self.add_weight(
            name="C_imag", shape=c_shape, initializer=c_init()
        )
        if self.init == "structured":
            log_dt = keras.random.uniform(
                (hidden_dim, 1), math.log(self.dt_min), math.log(self.dt_max)
            )
            dt = np.exp(keras.ops.convert_to_numpy(log_dt))  # (H, 1)
            n = np.arange(self.state_dim)[None, :]
            self.log_neg_real.assign(
                np.broadcast_to(np.log(0.5 * dt), shape).astype("float32")
            )
            self.theta.assign((np.pi * n * dt).astype("float32"))

    def _build_omega(self, hidden_dim):
        n = self.state_dim
        dt = np.exp(keras.ops.convert_to_numpy(keras.random.uniform(
            (n,), math.log(self.dt_min), math.log(self.dt_max))))
        self.Lambda_x = self.add_weight(
            name="ssm_Lambda_x", shape=(n,), initializer="zeros")
        self.Lambda_x.assign(np.sqrt(0.5 * dt).astype("float32"))
        self.theta = self.add_weight(
            name="ssm_theta", shape=(n,), initializer="zeros")
        self.theta.assign(
            ((2 * np.pi * np.arange(n) / n) % (2 * np.pi)).astype("float32"))
        shape = (self.directions, hidden_dim, n)
        self.C_real, self.C_imag = (
            self.add_weight(name=f"ssm_W_{part}", shape=shape,
                            initializer=keras.initializers.RandomNormal(
                                stddev=1.0 / n))
            for part in ("real", "imag"))

    def ssm_kernel(self, length):
        if self.init == "omega":
            # One Lambda per mode for every channel: its powers are made
            # once, (N, L), not per channel.
            return shared_modes_kernel(
                self.C_real, self.C_imag, -keras.ops.square(self.Lambda_x),
                self.theta, length)
        log_lambda_real = -keras.ops.exp(self.log_neg_real)  # (H, N)
        return vandermonde_kernel(
            self.C_real, self.C_imag, log_lambda_real, self.theta, length
        )  # (dirs, H, L)

    def get_config(self):
        config = super().get_config()
        config.update(init=self.init, dt_min=self.dt_min, dt_max=self.dt_max)
        return config
