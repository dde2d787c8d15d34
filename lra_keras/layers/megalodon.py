"""MEGALODON: MEGA with a complex EMA, timestep normalisation, normalised
attention and a pre-norm block with a two-hop residual.

References:
- Ma et al. 2024, Megalodon: Efficient LLM Pretraining and Inference with
  Unlimited Context Length, sections 3.1-3.4:
  https://arxiv.org/abs/2404.08801
- The authors' code, XuezheMax/megalodon at cff8ba5 (read, not copied):
  `megalodon/modules/complex_exponential_moving_average.py` (CEMA),
  `megalodon/modules/timestep_norm.py` with the CUDA op
  `megalodon/csrc/ops/timestep_norm_kernel.cu` (timestep norm),
  `megalodon/modules/moving_average_gated_attention.py` (the attention
  block), `megalodon/modules/normalized_feedforward_network.py` and
  `megalodon/model/mega.py` (`MegaBlock`: the two-hop residual).

That repository is the language-model code: causal, without padding. For
the LRA tasks (bidirectional, padded rows) this module adds, as MEGA's LRA
encoders do, a second CEMA running backwards in time (`causal=False`) and
attention over every real key of a chunk; padded positions are zeroed
before the CEMA and skipped by the timestep norm's statistics.
"""

import math

import keras
import numpy as np
from keras import ops

from lra_keras.backend_utils import broadcast_to
from lra_keras.backend_utils import scale_channels
from lra_keras.layers.efficient_attention import pad_to_blocks
from lra_keras.layers.lean_backward import softmax
from lra_keras.layers.multi_head_ema import MultiHeadEMA
from lra_keras.layers.projections import Dense
from lra_keras.layers.rotary_attention import apply_rotary_across_heads

# Large finite negative score for masked keys (a chunk made only of padding
# stays finite).
_MASK_SCORE = -1e9


def _masked_scores(scores, allowed):
    """`scores` with the keys not `allowed` (0 there, 1 elsewhere,
    broadcast to the scores) at `_MASK_SCORE`, as an addition: at a masked
    key `score + _MASK_SCORE`, which is `_MASK_SCORE` itself in float32 for
    any |score| < 32 (its spacing there is 64), and whose weight is 0 in
    a row with any key allowed. Its gradient passes through unchanged;
    `where`'s, under JAX, was a select that XLA wrote transposed, a
    (16, 1024, 1024) copy of 32-65 ms a layer (L = 16,384, batch 1, 2
    cores; `docs/results/megalodon_sums_epyc/`)."""
    return scores + (1.0 - ops.cast(allowed, scores.dtype)) * _MASK_SCORE


def _he_normal():
    # The code's `init_mode='he'` (megalodon/utils.py get_init_fn):
    # kaiming_normal_(a=sqrt(5)), std = 1 / sqrt(3 fan_in); biases zero.
    return keras.initializers.VarianceScaling(
        scale=1.0 / 3.0, mode="fan_in", distribution="untruncated_normal")


def _dense(units, name, dtype, use_bias=True):
    return Dense(
        units, use_bias=use_bias, kernel_initializer=_he_normal(),
        bias_initializer="zeros", name=name, dtype=dtype)


def rms_normalize(x, weight=None, epsilon=1e-5):
    """`x / sqrt(mean(x^2) + eps)` over the last axis, times `weight + 1`.

    The code's `FusedRMSNorm` stores its gain as an offset from 1 (zeros at
    init, `weight + 1.0` applied), so weight decay pulls the gain to 1.
    """
    dtype = x.dtype
    x = ops.cast(x, "float32")
    x = x * ops.rsqrt(ops.mean(ops.square(x), axis=-1, keepdims=True)
                      + epsilon)
    if weight is not None:
        x = scale_channels(x, ops.cast(weight, "float32") + 1.0)
    return ops.cast(x, dtype)


def _check_count(name, value, optional=False):
    if value is None and optional:
        return None
    if value is None or int(value) < 1:
        raise ValueError(
            f"`{name}` must be {'None or ' if optional else ''}>= 1. "
            f"Received: {name}={value}")
    return int(value)


def _check_rate(name, value):
    if not 0.0 <= float(value) < 1.0:
        raise ValueError(
            f"`{name}` must be in [0, 1). Received: {name}={value}")
    return float(value)


@keras.saving.register_keras_serializable(package="lra_keras")
class ComplexEMA(MultiHeadEMA):
    """MEGALODON's complex exponential moving average (CEMA).

    MEGA's damped EMA (`MultiHeadEMA`) with a rotating decay: each of the
    `ema_dim` dimensions of channel d runs
    `h_t = alpha * x_t + q * h_{t-1}` with the complex
    `q = (1 - alpha * delta) * exp(i * theta_n)`, `theta_n = n * sigmoid(
    theta_d) * 2 pi / ema_dim` (n = 1 .. ema_dim, one phase per channel),
    and the output is `Re(sum_n gamma_n h_t[n]) / sqrt(ema_dim) + omega x_t`
    with a complex `gamma` and no activation. There is no `beta`: the
    input enters through `alpha` alone. Trained as the convolution with
    `k[d, l] = Re(sum_n alpha gamma q^l) / sqrt(ema_dim)`
    (`vandermonde_kernel`, the CUDA op `ema_parameters` of the code).

    Initialisation as `_reset_parameters` of the code (lines 18-39; the
    coefficients as `_calc_coeffs`, lines 100-117): alpha, delta ~
    N(0, 0.2); theta the logit of the frequencies `exp(-k log(D) / D)`,
    k = 1 .. D, in a random order over the channels (D the channels; D = 1
    would give logit(1) = inf and is clipped); gamma ~ N(0, 1) with a zero
    imaginary part; omega ~ N(0, 0.25) truncated to [-1, 1].

    With `causal=False` a second, independent set of parameters runs the
    recurrence backwards in time, as `MultiHeadEMA` does (MEGA's
    `bidirectional=True`; the MEGALODON code is causal only).

    Weights (rows = D, or 2D with the forward rows first when not causal),
    named `cema_*` for the optimizer's dynamics: `cema_alpha`, `cema_delta`
    (rows, ema_dim, 1), `cema_theta` (rows, 1, 1), `cema_gamma` (rows,
    ema_dim, 2) as (real, imag), `cema_omega` (D,).

    Args:
        ema_dim: int. EMA dimensions per channel (the code's `ndim`).
            Defaults to 16.
        causal: bool. Whether position t reads only inputs <= t. Defaults
            to `True`.
        truncation: int or None. Kernel length cap. Defaults to `None`.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).
        padding_mask: optional (batch, length) tensor, nonzero at real
            tokens; padded inputs are zeroed first.
        training: unused.
        use_fft: bool. `True`: the FFT convolution; `False`: the
            recurrence step by step (`keras.ops.scan`).

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> cema = ComplexEMA(ema_dim=4, causal=False)
    >>> cema(keras.random.normal((2, 50, 8))).shape
    (2, 50, 8)
    """

    def build(self, input_shape):
        hidden_dim = input_shape[-1]
        if hidden_dim is None:
            raise ValueError(
                "The last input dimension must be known. Received: "
                f"input_shape={input_shape}")
        self.hidden_dim = int(hidden_dim)
        directions = 1 if self.causal else 2
        rows = directions * self.hidden_dim
        normal = keras.initializers.RandomNormal
        self.cema_alpha = self._ema_weight(
            "cema_alpha", (rows, self.ema_dim, 1), normal(stddev=0.2))
        self.cema_delta = self._ema_weight(
            "cema_delta", (rows, self.ema_dim, 1), normal(stddev=0.2))
        self.cema_theta = self._ema_weight(
            "cema_theta", (rows, 1, 1), self._theta_initializer)
        self.cema_gamma = self._ema_weight(
            "cema_gamma", (rows, self.ema_dim, 2), self._gamma_initializer)
        self.cema_omega = self._ema_weight(
            "cema_omega", (self.hidden_dim,), self._omega_initializer)
        self.built = True

    def _theta_initializer(self, shape, dtype=None):
        d = self.hidden_dim
        freqs = np.exp(-np.arange(1, d + 1) * math.log(d) / d)
        freqs = np.clip(freqs, 1e-6, 1.0 - 1e-6)
        logits = ops.convert_to_tensor(
            np.log(freqs / (1.0 - freqs)).astype("float32"))  # (D,)
        # One random order of the frequencies per direction.
        rows = [keras.random.shuffle(logits)
                for _ in range(shape[0] // d)]
        return ops.reshape(ops.concatenate(rows, 0), shape)

    @staticmethod
    def _gamma_initializer(shape, dtype=None):
        gamma = keras.random.normal(shape)
        return gamma * ops.convert_to_tensor([1.0, 0.0])  # imag = 0

    @staticmethod
    def _omega_initializer(shape, dtype=None):
        # torch's trunc_normal_(std=0.25, a=-1, b=1): the inverse normal CDF
        # of a uniform draw between the CDF's values at -4 and 4 sigma.
        low = 0.5 * (1.0 + math.erf(-4.0 / math.sqrt(2.0)))
        u = keras.random.uniform(shape, minval=low, maxval=1.0 - low)
        return 0.25 * math.sqrt(2.0) * ops.erfinv(2.0 * u - 1.0)

    def coefficients(self):
        """The recurrence `h_t = p x_t + q h_{t-1}`, `y_t = Re(c . h_t)`.

        Returns:
            `(p, q_real, q_imag, c_real, c_imag)`, float32 tensors (rows,
            ema_dim): p real, q and c complex (c includes 1 / sqrt(
            ema_dim)).
        """
        alpha = ops.sigmoid(self.cema_alpha[..., 0])  # (rows, N)
        delta = ops.sigmoid(self.cema_delta[..., 0])  # (rows, N)
        radius = 1.0 - alpha * delta  # (rows, N)
        angle = self._angles()  # (rows, N)
        gamma = self.cema_gamma * self.scale  # (rows, N, 2)
        return (alpha, radius * ops.cos(angle), radius * ops.sin(angle),
                gamma[..., 0], gamma[..., 1])

    def _angles(self):
        wavelets = ops.arange(1, self.ema_dim + 1, dtype="float32")  # (N,)
        phase = ops.sigmoid(self.cema_theta[:, 0]) * (
            2.0 * math.pi / self.ema_dim)  # (rows, 1)
        return phase * wavelets  # (rows, N)

    def _kernel_terms(self):
        alpha = ops.sigmoid(self.cema_alpha[..., 0])  # (rows, N)
        delta = ops.sigmoid(self.cema_delta[..., 0])  # (rows, N)
        gamma = self.cema_gamma * self.scale  # (rows, N, 2)
        log_radius = ops.log1p(-alpha * delta)  # (rows, N)
        return (alpha * gamma[..., 0], alpha * gamma[..., 1], log_radius,
                self._angles())

    def _omega(self):
        return self.cema_omega

    @staticmethod
    def _activate(x):
        return x  # CEMA's output goes to an RMS norm, not an activation.

    def _complex_scan(self, u, rows, reverse):
        p, q_re, q_im, c_re, c_im = (t[rows] for t in
                                     self.coefficients())
        xs = ops.transpose(ops.cast(u, "float32"), (1, 0, 2))  # (L, B, D)

        def step(h, x_t):
            h_re, h_im = h[..., 0], h[..., 1]  # (B, D, N)
            new_re = q_re * h_re - q_im * h_im + p * x_t[..., None]
            new_im = q_re * h_im + q_im * h_re
            h = ops.stack([new_re, new_im], -1)  # (B, D, N, 2)
            return h, h

        h0 = ops.zeros_like(xs[0])[..., None, None] * ops.zeros_like(
            self.cema_gamma[rows])  # (B, D, N, 2)
        _, hs = ops.scan(step, h0, xs, reverse=reverse)  # (L, B, D, N, 2)
        ys = ops.sum(hs[..., 0] * c_re - hs[..., 1] * c_im, -1)  # (L, B, D)
        return ops.cast(ops.transpose(ys, (1, 0, 2)), u.dtype)

    def _step_path(self, u):
        d = self.hidden_dim
        y = self._complex_scan(u, slice(0, d), reverse=False)
        if not self.causal:
            y = y + self._complex_scan(u, slice(d, 2 * d), reverse=True)
        return y

    def step(self, inputs, state=None):
        """One step of the causal recurrence, for decoding.

        Args:
            inputs: tensor (batch, hidden_dim), the input at time t.
            state: tensor (batch, hidden_dim, ema_dim, 2), the complex state
                after t - 1 as (real, imag), or None at t = 0.

        Returns:
            `(outputs, state)`: outputs (batch, hidden_dim) equal to the
            layer's output at t, and the new state.
        """
        if not self.causal:
            raise ValueError(
                "`step` needs a causal EMA. Received: causal=False")
        inputs = ops.convert_to_tensor(inputs)  # (B, D)
        p, q_re, q_im, c_re, c_im = self.coefficients()  # (D, N)
        x = ops.cast(inputs, "float32")[..., None]  # (B, D, 1)
        h_re, h_im = p * x, ops.zeros_like(p * x)  # (B, D, N)
        if state is not None:
            h_re = h_re + q_re * state[..., 0] - q_im * state[..., 1]
            h_im = h_im + q_re * state[..., 1] + q_im * state[..., 0]
        y = ops.sum(h_re * c_re - h_im * c_im, -1)  # (B, D)
        y = ops.cast(y, inputs.dtype) + ops.cast(
            self.cema_omega, inputs.dtype) * inputs
        return y, ops.stack([h_re, h_im], -1)


def _per_channel(statistic, grouped):
    """A (B, L, G) statistic per channel of `grouped` (B, L, G, size):
    under JAX `backend_utils.broadcast_to`, whose gradient sums each
    group's channels as a product with ones; elsewhere by broadcasting.
    As XLA's sum over the last axis of 4, fused with the products of the
    gradient, it took 15 ms at (1, 16384, 32, 4): `TimestepNorm` forward
    and backward at (1, 16384, 128) in 32 groups took 53.7 against 36.7
    ms, at (16, 1024, 128) 46.1 against 35.6 ms (2 cores, jax 0.10.2,
    `docs/results/megalodon_sums_epyc/timestep_norm.txt`)."""
    if keras.backend.backend() != "jax":
        return statistic[..., None]
    return broadcast_to(statistic[..., None], ops.shape(grouped))


@keras.saving.register_keras_serializable(package="lra_keras")
class TimestepNorm(keras.layers.Layer):
    """MEGALODON's timestep normalisation: a group norm whose statistics
    accumulate along the sequence.

    The channels are split into `num_groups` groups; position t is
    normalised by the mean and (biased) variance of its group over every
    real position <= t (and a learned prior of `prior_count` pseudo-steps),
    then scaled by `weight + 1` and shifted by `bias` per channel. Position
    t never reads the future, so the norm is causal. Padded positions
    leave the statistics unchanged and output 0 (the CUDA op's
    `padding_mask`). This is the closed form of the code's running Welford
    merge (`ColwiseCumMoments*Kernel` in
    `megalodon/csrc/ops/timestep_norm_kernel.cu`): every step counts once,
    with its group mean and variance.

    Args:
        num_groups: int or None. Groups of channels; None: one per channel
            (then, as the code asserts, `prior_count` must be > 1).
        prior_count: int. Pseudo-steps of the prior; 0 (the code's default
            and what its models use): no prior. With a prior its mean and
            log-variance per group are trained (`prior_mean`,
            `prior_logv`).
        epsilon: float. Added to the variance. Defaults to 1e-5.

    Call arguments:
        inputs: tensor (batch, length, channels).
        padding_mask: optional (batch, length) tensor, nonzero at real
            tokens.

    Returns:
        Tensor of the shape of `inputs`.

    Example:
    >>> norm = TimestepNorm(num_groups=2)
    >>> norm(keras.random.normal((2, 10, 8))).shape
    (2, 10, 8)
    """

    # `sequence_norm.normalize` passes it the padding mask.
    reads_padding_mask = True

    def __init__(self, num_groups=None, prior_count=0, epsilon=1e-5,
                 **kwargs):
        super().__init__(**kwargs)
        self.num_groups = _check_count("num_groups", num_groups,
                                       optional=True)
        if int(prior_count) < 0:
            raise ValueError(
                f"`prior_count` must be >= 0. Received: prior_count="
                f"{prior_count}")
        self.prior_count = int(prior_count)
        self.epsilon = float(epsilon)

    def build(self, input_shape):
        channels = input_shape[-1]
        groups = self.num_groups or channels
        if channels % groups:
            raise ValueError(
                "`num_groups` must divide the channels. Received: "
                f"num_groups={groups}, channels={channels}")
        if groups == channels and self.prior_count <= 1:
            raise ValueError(
                "With one group per channel the first step's variance is 0; "
                "set `num_groups` below the channels or `prior_count` > 1 "
                f"(as the MEGALODON code asserts). Received: num_groups="
                f"{self.num_groups}, prior_count={self.prior_count}")
        self.channels, self.groups = int(channels), int(groups)
        self.weight = self.add_weight(
            name="weight", shape=(channels,), initializer="zeros")
        self.bias = self.add_weight(
            name="bias", shape=(channels,), initializer="zeros")
        if self.prior_count:
            self.prior_mean = self.add_weight(
                name="prior_mean", shape=(groups,), initializer="zeros")
            self.prior_logv = self.add_weight(
                name="prior_logv", shape=(groups,), initializer="zeros")
        self.built = True

    def call(self, inputs, padding_mask=None):
        dtype = inputs.dtype
        x = ops.cast(inputs, "float32")  # (B, L, D)
        shape = ops.shape(x)
        size = self.channels // self.groups
        grouped = ops.reshape(x, (shape[0], shape[1], self.groups, size))
        step_mean = ops.mean(grouped, -1)  # (B, L, G)
        step_var = ops.mean(ops.square(
            grouped - _per_channel(step_mean, grouped)), -1)  # (B, L, G)
        if padding_mask is None:
            real = ops.ones_like(step_mean[..., :1])  # (B, L, 1)
        else:
            real = ops.cast(padding_mask, "float32")[..., None]
        # Sums relative to a constant per row (the first step's mean), which
        # cancels exactly and keeps E[x^2] - E[x]^2 away from cancellation.
        shift = ops.stop_gradient(step_mean[:, :1])  # (B, 1, G)
        centred = step_mean - shift
        count = ops.cumsum(real, axis=1)  # (B, L, 1)
        first = ops.cumsum(real * centred, axis=1)  # (B, L, G)
        second = ops.cumsum(real * (step_var + ops.square(centred)), axis=1)
        if self.prior_count:
            prior_centred = ops.cast(self.prior_mean, "float32") - shift
            prior_var = ops.exp(ops.cast(self.prior_logv, "float32"))
            count = count + self.prior_count
            first = first + self.prior_count * prior_centred
            second = second + self.prior_count * (
                prior_var + ops.square(prior_centred))
        count = ops.maximum(count, 1.0)
        mean = first / count  # (B, L, G), relative to `shift`
        var = ops.maximum(second / count - ops.square(mean), 0.0)
        y = (grouped - _per_channel(mean + shift, grouped)) * _per_channel(
            ops.rsqrt(var + self.epsilon), grouped)
        y = ops.reshape(y, shape)
        y = scale_channels(y, ops.cast(self.weight, "float32") + 1.0) + (
            ops.cast(self.bias, "float32"))
        return ops.cast(y * real, dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(num_groups=self.num_groups,
                      prior_count=self.prior_count, epsilon=self.epsilon)
        return config


@keras.saving.register_keras_serializable(package="lra_keras")
class MegalodonAttention(keras.layers.Layer):
    """MEGALODON's moving-average gated attention, with its residual.

    `x` -> timestep norm `t` -> CEMA -> RMS norm `m`; the shared query/key
    `z = W_z m` is RMS-normalised per head without a gain ("normalised
    attention") and turned into queries and keys by `(gamma + 1) /
    sqrt(head_dim)` and `beta` (zeros at init), with rotary positions per
    head (interleaved pairs, base `max_wavelength`); values `silu(W_v t)`,
    a reset gate `r = silu(W_r m)`; the output is
    `x + dropout(W_h1 m + W_h2 dropout(r * attention))`, a plain residual
    (no update gate, unlike MEGA). Scores are `q . k` without a further
    scale, softmax over the real keys of a chunk (`chunk_size`, None: the
    whole sequence; future keys too when not causal). As
    `MovingAverageGatedAttention` in `megalodon/modules/
    moving_average_gated_attention.py` (`__init__` lines 150-245,
    `forward` lines 275-348; the chunked softmax in `_InnerAttention`,
    lines 72-140), the projections He-normal (`init_mode='he'`) with zero
    biases.

    Args:
        key_dim: int. Width of z (the code's `zdim`), split over the heads;
            `key_dim / num_heads` must be even (rotary pairs).
        intermediate_dim: int or None. Value width (`hdim`); None:
            2 * hidden_dim.
        num_heads: int. Attention heads. Defaults to 1.
        ema_dim: int. CEMA dimensions per channel. Defaults to 16.
        causal: bool. Causal CEMA and attention (the code's language
            model); `False`: CEMA both ways and every key. Defaults to
            `False`.
        chunk_size: int or None. Attention within chunks of this length.
        truncation: int or None. CEMA kernel length cap.
        norm_groups: int or None. Groups of the timestep norm (the code's
            `norm_num_groups`, 32 in its models).
        norm_epsilon: float. Epsilon of the timestep and RMS norms.
        max_wavelength: float. Rotary base (the code's `rope_base`,
            10000 when unset).
        dropout: float. Dropout on the block's output branch.
        attention_dropout: float. Dropout on the attention weights.
        hidden_dropout: float. Dropout on `m` and on `r * attention`.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).
        padding_mask: optional (batch, length) tensor, nonzero at real
            tokens.
        training: bool, for dropout.

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> layer = MegalodonAttention(key_dim=8, num_heads=2, ema_dim=4,
    ...                            norm_groups=2)
    >>> layer(keras.random.normal((2, 20, 8))).shape
    (2, 20, 8)
    """

    def __init__(self, key_dim=64, intermediate_dim=None, num_heads=1,
                 ema_dim=16, causal=False, chunk_size=None, truncation=None,
                 norm_groups=None, norm_epsilon=1e-5, max_wavelength=10000,
                 dropout=0.0, attention_dropout=0.0, hidden_dropout=0.0,
                 **kwargs):
        super().__init__(**kwargs)
        self.key_dim = _check_count("key_dim", key_dim)
        self.intermediate_dim = _check_count(
            "intermediate_dim", intermediate_dim, optional=True)
        self.num_heads = _check_count("num_heads", num_heads)
        self.ema_dim = _check_count("ema_dim", ema_dim)
        self.causal = bool(causal)
        self.chunk_size = _check_count("chunk_size", chunk_size,
                                       optional=True)
        self.truncation = _check_count("truncation", truncation,
                                       optional=True)
        self.norm_groups = _check_count("norm_groups", norm_groups,
                                        optional=True)
        self.norm_epsilon = float(norm_epsilon)
        self.max_wavelength = float(max_wavelength)
        self.dropout = _check_rate("dropout", dropout)
        self.attention_dropout = _check_rate("attention_dropout",
                                             attention_dropout)
        self.hidden_dropout = _check_rate("hidden_dropout", hidden_dropout)
        head_dim, rest = divmod(self.key_dim, self.num_heads)
        if rest or head_dim % 2:
            raise ValueError(
                "`key_dim` must split into `num_heads` heads of an even "
                f"width (rotary pairs). Received: key_dim={key_dim}, "
                f"num_heads={num_heads}")
        self.head_dim = head_dim

    def build(self, input_shape):
        hidden_dim = int(input_shape[-1])
        hdim = self.intermediate_dim or 2 * hidden_dim
        if hdim % self.num_heads:
            raise ValueError(
                "The value width must split into `num_heads` heads. "
                f"Received: intermediate_dim={hdim}, "
                f"num_heads={self.num_heads}")
        self.hdim = hdim
        dtype = self.dtype_policy
        self.timenorm = TimestepNorm(
            num_groups=self.norm_groups, epsilon=self.norm_epsilon,
            name="timenorm", dtype=dtype)
        self.cema = ComplexEMA(
            ema_dim=self.ema_dim, causal=self.causal,
            truncation=self.truncation, name="cema", dtype=dtype)
        self.rms_weight = self.add_weight(
            name="rms_weight", shape=(hidden_dim,), initializer="zeros")
        self.wv = _dense(hdim, "wv", dtype)
        self.wz = _dense(self.key_dim, "wz", dtype)
        self.wr = _dense(hdim, "wr", dtype)
        self.wh1 = _dense(hidden_dim, "wh1", dtype)
        self.wh2 = _dense(hidden_dim, "wh2", dtype, use_bias=False)
        self.qk_gamma = self.add_weight(
            name="qk_gamma", shape=(2, self.key_dim), initializer="zeros")
        self.qk_beta = self.add_weight(
            name="qk_beta", shape=(2, self.key_dim), initializer="zeros")
        self.dropout_layer = keras.layers.Dropout(self.dropout, dtype=dtype)
        self.attention_dropout_layer = keras.layers.Dropout(
            self.attention_dropout, dtype=dtype)
        self.hidden_dropout_layer = keras.layers.Dropout(
            self.hidden_dropout, dtype=dtype)
        for sublayer in (self.timenorm, self.cema, self.wv, self.wz,
                         self.wr, self.wh1):
            sublayer.build(input_shape)
        self.wh2.build((*input_shape[:-1], hdim))
        self.built = True

    def _split(self, x, chunk, width):
        """(B, K * C, heads * width) -> (B * K, C, heads, width)."""
        return ops.reshape(x, (-1, chunk, self.num_heads, width))

    def _rotate(self, x):
        # Rotary per head over interleaved pairs (the code's
        # apply_rotary_emb): each head as a one-head "model" width.
        n, c = ops.shape(x)[0], ops.shape(x)[1]
        x = ops.reshape(ops.transpose(x, (0, 2, 1, 3)),
                        (-1, c, 1, self.head_dim))
        x = apply_rotary_across_heads(x, self.max_wavelength)
        x = ops.reshape(x, (n, self.num_heads, c, self.head_dim))
        return ops.transpose(x, (0, 2, 1, 3))  # (N, C, H, d)

    def _attend(self, q, k, v, padding_mask, training):
        batch, length = ops.shape(v)[0], ops.shape(v)[1]
        chunk = self.chunk_size or length
        # The last chunk completed with positions that are not real keys.
        (q, k, v), real, _ = pad_to_blocks(
            (ops.cast(q, "float32"), ops.cast(k, "float32"), v),
            padding_mask, chunk)
        q = self._rotate(self._split(q, chunk, self.head_dim))  # (N,C,H,d)
        k = self._rotate(self._split(k, chunk, self.head_dim))
        v = self._split(v, chunk, self.hdim // self.num_heads)
        # No padding mask and chunks that tile the rows: every key is real,
        # and the scores are not masked (as `MovingAverageGatedAttention`).
        every_key_real = padding_mask is None and isinstance(
            length, int) and length % chunk == 0
        allowed = None if every_key_real else ops.reshape(
            ops.cast(real, "float32"), (-1, 1, 1, chunk))  # (N, 1, 1, C)
        if self.causal:
            positions = ops.arange(chunk)
            past = ops.cast(positions[None, :] <= positions[:, None],
                            "float32")  # (C, C)
            allowed = past if allowed is None else allowed * past
        scores = ops.einsum("nihd,njhd->nhij", q, k)  # (N, H, C, C)
        if allowed is not None:
            scores = _masked_scores(scores, allowed)
        weights = softmax(scores, axis=-1)
        weights = self.attention_dropout_layer(
            ops.cast(weights, v.dtype), training=training)
        h = ops.einsum("nhij,njhe->nihe", weights, v)  # (N, C, H, e)
        h = ops.reshape(h, (batch, -1, self.hdim))  # (B, K * C, E)
        return h[:, :length]

    def call(self, inputs, padding_mask=None, training=None):
        t = self.timenorm(inputs, padding_mask=padding_mask)  # (B, L, D)
        m = rms_normalize(self.cema(t, padding_mask=padding_mask),
                          self.rms_weight, self.norm_epsilon)
        m = self.hidden_dropout_layer(m, training=training)
        z = self.wz(m)  # (B, L, Z)
        z_shape = ops.shape(z)
        z = rms_normalize(
            ops.reshape(z, (z_shape[0], z_shape[1], self.num_heads,
                            self.head_dim)),
            epsilon=self.norm_epsilon)
        z = ops.reshape(z, z_shape)
        gamma = (ops.cast(self.qk_gamma, z.dtype) + 1.0) / math.sqrt(
            self.head_dim)  # (2, Z)
        beta = ops.cast(self.qk_beta, z.dtype)
        q = scale_channels(z, gamma[0]) + beta[0]
        k = scale_channels(z, gamma[1]) + beta[1]
        v = ops.silu(self.wv(t))  # (B, L, E)
        r = ops.silu(self.wr(m))  # (B, L, E)
        attention = self._attend(q, k, v, padding_mask, training)
        attention = self.hidden_dropout_layer(attention * r,
                                              training=training)
        h = self.dropout_layer(self.wh1(m) + self.wh2(attention),
                               training=training)
        return inputs + h

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            key_dim=self.key_dim, intermediate_dim=self.intermediate_dim,
            num_heads=self.num_heads, ema_dim=self.ema_dim,
            causal=self.causal, chunk_size=self.chunk_size,
            truncation=self.truncation, norm_groups=self.norm_groups,
            norm_epsilon=self.norm_epsilon,
            max_wavelength=self.max_wavelength, dropout=self.dropout,
            attention_dropout=self.attention_dropout,
            hidden_dropout=self.hidden_dropout)
        return config


@keras.saving.register_keras_serializable(package="lra_keras")
class MegalodonEncoder(keras.layers.Layer):
    """One MEGALODON block: attention, then the normalised FFN with the
    two-hop residual.

    `y = MegalodonAttention(x)` (its own residual: `y = x + h`), then
    `out = x + s * dropout(W_2 dropout(silu(W_1 LN(y))))`: the FFN reads
    the attention's output but adds back the block's *input* x, the
    "pre-norm with two-hop residual" of the paper (section 3.4; `MegaBlock.
    forward` calls `self.nffn(y, x)`, `megalodon/model/mega.py` line 87).
    The LayerNorm's gain is `weight + 1` (zeros at init); W_1, W_2 (and W_3 of
    the SwiGLU variant, `silu(W_1 y) * W_3 y`) have no bias; `s` is the
    optional per-channel rescale (`ffn_rescale`, started at the given
    value: the code's `rescale_nffn` starts block i at 0.1 * 0.5^i).
    As `NormalizedFeedForwardNetwork`
    (`megalodon/modules/normalized_feedforward_network.py`).

    Args:
        key_dim, intermediate_dim, num_heads, ema_dim, causal, chunk_size,
        truncation, norm_groups, norm_epsilon, max_wavelength, dropout,
        attention_dropout, hidden_dropout: as in `MegalodonAttention`
            (`dropout` and `hidden_dropout` also in the FFN).
        ffn_intermediate_dim: int or None. FFN width; None: 2 * hidden_dim.
        swiglu: bool. The SwiGLU FFN. Defaults to `False`.
        ffn_rescale: float or None. Initial per-channel rescale of the FFN
            branch; None: none.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).
        padding_mask: optional (batch, length) tensor.
        training: bool, for dropout.

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> block = MegalodonEncoder(key_dim=8, ema_dim=4, norm_groups=2)
    >>> block(keras.random.normal((2, 20, 8))).shape
    (2, 20, 8)
    """

    def __init__(self, key_dim=64, intermediate_dim=None,
                 ffn_intermediate_dim=None, num_heads=1, ema_dim=16,
                 causal=False, chunk_size=None, truncation=None,
                 norm_groups=None, norm_epsilon=1e-5, max_wavelength=10000,
                 dropout=0.0, attention_dropout=0.0, hidden_dropout=0.0,
                 swiglu=False, ffn_rescale=None, **kwargs):
        super().__init__(**kwargs)
        self.attention_config = dict(
            key_dim=key_dim, intermediate_dim=intermediate_dim,
            num_heads=num_heads, ema_dim=ema_dim, causal=causal,
            chunk_size=chunk_size, truncation=truncation,
            norm_groups=norm_groups, norm_epsilon=norm_epsilon,
            max_wavelength=max_wavelength, dropout=dropout,
            attention_dropout=attention_dropout,
            hidden_dropout=hidden_dropout)
        # Checks the arguments now, not at build.
        MegalodonAttention(**self.attention_config)
        self.ffn_intermediate_dim = _check_count(
            "ffn_intermediate_dim", ffn_intermediate_dim, optional=True)
        self.swiglu = bool(swiglu)
        if ffn_rescale is not None and not float(ffn_rescale) > 0:
            raise ValueError(
                "`ffn_rescale` must be None or > 0. Received: "
                f"ffn_rescale={ffn_rescale}")
        self.ffn_rescale = None if ffn_rescale is None else float(
            ffn_rescale)

    def build(self, input_shape):
        hidden_dim = int(input_shape[-1])
        ffn_dim = self.ffn_intermediate_dim or 2 * hidden_dim
        dtype = self.dtype_policy
        self.attention = MegalodonAttention(
            **self.attention_config, name="megalodon_attention", dtype=dtype)
        self.ffn_norm_weight = self.add_weight(
            name="ffn_norm_weight", shape=(hidden_dim,), initializer="zeros")
        self.ffn_norm_bias = self.add_weight(
            name="ffn_norm_bias", shape=(hidden_dim,), initializer="zeros")
        self.fc1 = _dense(ffn_dim, "fc1", dtype, use_bias=False)
        self.fc2 = _dense(hidden_dim, "fc2", dtype, use_bias=False)
        self.fc3 = (_dense(ffn_dim, "fc3", dtype, use_bias=False)
                    if self.swiglu else None)
        if self.ffn_rescale is not None:
            self.ffn_scale = self.add_weight(
                name="ffn_scale", shape=(hidden_dim,),
                initializer=keras.initializers.Constant(self.ffn_rescale))
        dropout = self.attention_config["dropout"]
        hidden_dropout = self.attention_config["hidden_dropout"]
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=dtype)
        self.hidden_dropout_layer = keras.layers.Dropout(
            hidden_dropout, dtype=dtype)
        self.attention.build(input_shape)
        self.fc1.build(input_shape)
        if self.fc3 is not None:
            self.fc3.build(input_shape)
        self.fc2.build((*input_shape[:-1], ffn_dim))
        self.built = True

    def _layer_norm(self, x):
        dtype = x.dtype
        x = ops.cast(x, "float32")
        mean = ops.mean(x, -1, keepdims=True)
        var = ops.mean(ops.square(x - mean), -1, keepdims=True)
        x = (x - mean) * ops.rsqrt(
            var + self.attention_config["norm_epsilon"])
        x = scale_channels(
            x, ops.cast(self.ffn_norm_weight, "float32") + 1.0) + ops.cast(
                self.ffn_norm_bias, "float32")
        return ops.cast(x, dtype)

    def call(self, inputs, padding_mask=None, training=None):
        y = self.attention(inputs, padding_mask=padding_mask,
                           training=training)  # (B, L, D)
        h = self._layer_norm(y)
        hidden = ops.silu(self.fc1(h))  # (B, L, F)
        if self.fc3 is not None:
            hidden = hidden * self.fc3(h)
        hidden = self.hidden_dropout_layer(hidden, training=training)
        h = self.dropout_layer(self.fc2(hidden), training=training)
        if self.ffn_rescale is not None:
            h = scale_channels(h, self.ffn_scale)
        return inputs + h  # the two-hop residual: x, not y

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(self.attention_config)
        config.update(ffn_intermediate_dim=self.ffn_intermediate_dim,
                      swiglu=self.swiglu, ffn_rescale=self.ffn_rescale)
        return config
