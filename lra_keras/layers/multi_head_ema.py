"""MEGA's multi-dimensional damped exponential moving average (EMA).

References:
- Mega: Moving Average Equipped Gated Attention, eq. 2-3:
  https://arxiv.org/abs/2209.10655
- "You Can Train from Scratch", eq. 4 (the EMA as a diagonal linear
  recurrence): https://openreview.net/forum?id=PdaPky8MUn
- Port of `MultiHeadEMA` in facebookresearch/mega,
  `fairseq/modules/exponential_moving_average.py` (the version that counts
  lag 0 in both directions of the non-causal kernel).
"""

import math

import keras
import numpy as np
from keras import ops

from lra_keras.backend_utils import scale_channels
from lra_keras.layers.fft_conv import fft_conv
from lra_keras.layers.legacy import upgrade_config
from lra_keras.layers.ssm_kernels import vandermonde_kernel
from lra_keras.layers.state_space import masked


@keras.saving.register_keras_serializable(package="lra_keras")
class MultiHeadEMA(keras.layers.Layer):
    """Multi-dimensional damped EMA along the sequence, as a long convolution.

    Each of the `hidden_dim` channels is expanded into `ema_dim` EMA
    dimensions
    by `beta`, each runs the damped recurrence
    `h_t = alpha * beta * x_t + (1 - alpha * delta) * h_{t-1}` and they are
    projected back by `gamma`; `alpha`, `delta` are in (0, 1) through a
    sigmoid. The outputs are `silu(EMA(x) + omega * x)`. For training the
    recurrence is unrolled into its kernel
    `k[d, l] = sum_n alpha beta gamma / sqrt(ema_dim) (1 - alpha delta)^l`,
    generated with `vandermonde_kernel` and applied with `fft_conv`; a
    step-by-step path (`use_fft=False`, `step`) runs the recurrence itself.
    This is the EMA sub-layer of MEGA (Ma et al. 2023,
    https://arxiv.org/abs/2209.10655).

    With `causal=False` a second, independent set of parameters runs
    the recurrence backwards in time and the two outputs are added; as in
    the reference implementation both directions see the present token, so
    lag 0 is counted twice.

    Weights (for `hidden_dim` = D channels; 2D rows when not causal, the
    forward direction first) are named `ema_*` so that the optimizer can
    exclude them from weight decay: `ema_delta`, `ema_alpha`, `ema_beta`
    (2D, ema_dim, 1) and `ema_gamma` (2D, ema_dim); `ema_omega` (D,) is the
    residual weight.

    Args:
        ema_dim: int. EMA dimensions per channel (MEGA's `ndim`).
            Defaults to 16.
        causal: bool. Whether position t reads only inputs <= t. False
            adds an EMA running backwards in time (MEGA's
            `bidirectional=True`). Defaults to `True`, as MEGA's.
        truncation: int or None. Kernel length cap: lags >= `truncation`
            get zero weight. Defaults to `None` (as long as the sequence).

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).
        padding_mask: optional (batch, length) tensor, nonzero at real
            tokens (padding only at the end of rows). Padded positions are
            zeroed before the convolution.
        training: unused; for the layer contract.
        use_fft: bool. `True` (default): FFT convolution. `False`: the
            recurrence, step by step with `keras.ops.scan` (for checking and
            for decoding; slow to train).

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> ema = MultiHeadEMA(ema_dim=4, causal=False)
    >>> ema(keras.random.normal((2, 100, 8))).shape
    (2, 100, 8)
    """

    def __init__(self, ema_dim=16, causal=True, truncation=None, **kwargs):
        super().__init__(**kwargs)
        if int(ema_dim) < 1:
            raise ValueError(
                f"`ema_dim` must be >= 1. Received: ema_dim={ema_dim}"
            )
        if truncation is not None and int(truncation) < 1:
            raise ValueError(
                "`truncation` must be None or >= 1. Received: "
                f"truncation={truncation}"
            )
        self.ema_dim = int(ema_dim)
        self.causal = bool(causal)
        self.truncation = None if truncation is None else int(truncation)
        self.scale = math.sqrt(1.0 / self.ema_dim)

    def _ema_weight(self, name, shape, initializer):
        # The EMA dynamics stay float32 under mixed precision: q^l for long
        # l is not representable in float16.
        return self.add_weight(
            name=name, shape=shape, initializer=initializer, autocast=False
        )

    def build(self, input_shape):
        hidden_dim = input_shape[-1]
        if hidden_dim is None:
            raise ValueError(
                "The last input dimension must be known. Received: "
                f"input_shape={input_shape}"
            )
        self.hidden_dim = int(hidden_dim)
        rows = self.hidden_dim if self.causal else 2 * self.hidden_dim
        shape = (rows, self.ema_dim, 1)
        normal = keras.initializers.RandomNormal
        self.ema_delta = self._ema_weight(
            "ema_delta", shape, normal(stddev=0.2)
        )
        self.ema_alpha = self._ema_weight(
            "ema_alpha", shape, normal(stddev=0.2)
        )
        self.ema_beta = self._ema_weight(
            "ema_beta", shape, normal(stddev=0.02)
        )
        # beta ~ N(+-1, 0.02) with signs +1, -1, +1, ... over the EMA
        # dimensions ("seems more stable" in the reference code).
        signs = np.where(np.arange(self.ema_dim) % 2 == 0, 1.0, -1.0)
        self.ema_beta.assign(
            self.ema_beta + signs.astype("float32")[None, :, None]
        )
        self.ema_gamma = self._ema_weight(
            "ema_gamma", (rows, self.ema_dim), normal(stddev=1.0)
        )
        self.ema_omega = self._ema_weight(
            "ema_omega", (self.hidden_dim,), normal(stddev=1.0)
        )
        self.built = True

    def coefficients(self):
        """The recurrence `h_t = q * h_{t-1} + b * x_t`, `y_t = c . h_t`.

        Returns:
            `(b, q, c)`, float32 tensors (rows, ema_dim); rows is
            hidden_dim, or 2 * hidden_dim (forward rows first) when not
            causal.
        """
        alpha = ops.sigmoid(self.ema_alpha[..., 0])  # (rows, N)
        delta = ops.sigmoid(self.ema_delta[..., 0])  # (rows, N)
        q = 1.0 - alpha * delta  # (rows, N) damped decay, in (0, 1)
        b = alpha * self.ema_beta[..., 0]  # (rows, N)
        c = self.ema_gamma * self.scale  # (rows, N)
        return b, q, c

    def _log_decay(self):
        # log(1 - alpha delta) without the cancellation of log(q).
        alpha = ops.sigmoid(self.ema_alpha[..., 0])  # (rows, N)
        delta = ops.sigmoid(self.ema_delta[..., 0])  # (rows, N)
        return ops.log1p(-alpha * delta)  # (rows, N)

    def _kernel_terms(self):
        """`(coeff_real, coeff_imag, log_q_real, log_q_imag)`, each (rows,
        N): the kernel is `Re(sum_n coeff_n q_n^l)` (`vandermonde_kernel`).
        """
        b, _, c = self.coefficients()
        log_q = self._log_decay()  # (rows, N)
        zeros = ops.zeros_like(log_q)
        return b * c, zeros, log_q, zeros

    def kernel(self, length):
        """EMA kernel `k[d, l] = sum_n b c q^l` for lags `l < length`.

        Args:
            length: int or scalar int tensor.

        Returns:
            float32 tensor (rows, length); rows as in `coefficients`.
        """
        k = vandermonde_kernel(*self._kernel_terms(), length)
        if self.truncation is not None:
            # Same as a kernel of length min(truncation, L), zero-padded.
            lags = ops.arange(length)
            k = k * ops.cast(lags < self.truncation, k.dtype)[None, :]
        return k  # (rows, L)

    def _fft_path(self, u, length):
        k = self.kernel(length)  # (rows, L)
        if self.causal:
            return fft_conv(u, k)
        d = self.hidden_dim
        k1, k2 = k[:d], k[d:]  # (D, L) forward, backward
        # Both directions include the present token: lag 0 gets k1 + k2.
        forward = ops.concatenate([k1[:, :1] + k2[:, :1], k1[:, 1:]], -1)
        # fft_conv's backward kernel starts at lag 1.
        backward = ops.concatenate([k2[:, 1:], ops.zeros_like(k2[:, :1])], -1)
        return fft_conv(u, forward, backward)

    def _scan(self, u, b, q, c, reverse):
        xs = ops.transpose(ops.cast(u, "float32"), (1, 0, 2))  # (L, B, D)

        def step(h, x_t):
            h = q * h + b * x_t[..., None]  # (B, D, N)
            # TensorFlow's scan wants outputs shaped like the carry, so the
            # states are stacked and projected by c after the loop.
            return h, h

        h0 = ops.zeros_like(xs[0])[..., None] * ops.zeros_like(q)  # (B,D,N)
        _, hs = ops.scan(step, h0, xs, reverse=reverse)  # (L, B, D, N)
        ys = ops.sum(hs * c, axis=-1)  # (L, B, D)
        return ops.cast(ops.transpose(ys, (1, 0, 2)), u.dtype)

    def _step_path(self, u):
        b, q, c = self.coefficients()
        d = self.hidden_dim
        y = self._scan(u, b[:d], q[:d], c[:d], reverse=False)
        if not self.causal:
            y = y + self._scan(u, b[d:], q[d:], c[d:], reverse=True)
        return y

    def call(self, inputs, padding_mask=None, training=None, use_fft=True):
        # Padding must not leak into real positions through the backward
        # kernel.
        u = masked(inputs, padding_mask)  # (B, L, D)
        if use_fft:
            y = self._fft_path(u, ops.shape(u)[1])  # (B, L, D)
        else:
            y = self._step_path(u)  # (B, L, D)
        # omega's gradient a sum over rows (`scale_channels`).
        return self._activate(y + scale_channels(u, self._omega()))

    def _omega(self):
        return self.ema_omega

    @staticmethod
    def _activate(x):
        # MEGA's EMA output: silu(EMA(x) + omega x).
        return ops.silu(x)

    def step(self, inputs, state=None):
        """One step of the causal recurrence, for decoding.

        Args:
            inputs: tensor (batch, hidden_dim): the input at time t.
            state: tensor (batch, hidden_dim, ema_dim), the EMA state after
                t - 1, or None at t = 0.

        Returns:
            `(outputs, state)`: outputs (batch, hidden_dim) equal to the
            layer's output at t; the new state (batch, hidden_dim,
            ema_dim).
        """
        if not self.causal:
            raise ValueError(
                "`step` needs a causal EMA. Received: causal=False"
            )
        inputs = ops.convert_to_tensor(inputs)  # (B, D)
        b, q, c = self.coefficients()  # (D, N)
        x = ops.cast(inputs, "float32")  # (B, D)
        h = b * x[..., None]  # (B, D, N)
        if state is not None:
            h = h + q * state
        y = ops.cast(ops.sum(h * c, axis=-1), inputs.dtype)  # (B, D)
        omega = ops.cast(self.ema_omega, inputs.dtype)
        return ops.silu(y + omega * inputs), h

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            ema_dim=self.ema_dim,
            causal=self.causal,
            truncation=self.truncation,
        )
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(upgrade_config(config))
