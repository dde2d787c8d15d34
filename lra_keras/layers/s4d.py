"""S4D: the diagonal structured state-space layer.

References:
- Gu, Gupta, Goel, Re. "On the Parameterization and Initialization of
  Diagonal State Space Models" (S4D), https://arxiv.org/abs/2206.11893
- Port of the minimal `s4d.py` of state-spaces/s4 (kernel, ZOH, inits), with
  the blocked kernel generation of `lra_keras.layers.ssm_kernels`.
"""

import functools
import math

import keras
import numpy as np
from keras import ops

from lra_keras.layers import hippo
from lra_keras.layers.fft_conv import complex_multiply
from lra_keras.layers.ssm_kernels import _block_positions
from lra_keras.layers.ssm_kernels import complex_exp
from lra_keras.layers.ssm_kernels import vandermonde_kernel
from lra_keras.layers.state_space import StateSpaceLayer


def complex_normal_part():
    """Initializer of the real or imaginary part of C ~ CN(0, 1)."""
    return keras.initializers.RandomNormal(stddev=math.sqrt(0.5))


def log_uniform_dt(dt_min, dt_max):
    """Initializer of log(dt), dt log-uniform in [dt_min, dt_max]."""
    return keras.initializers.RandomUniform(
        minval=math.log(dt_min), maxval=math.log(dt_max)
    )


def check_dt_range(dt_min, dt_max):
    if not 0 < dt_min <= dt_max:
        raise ValueError(
            "Expected 0 < dt_min <= dt_max. Received: "
            f"dt_min={dt_min}, dt_max={dt_max}"
        )


# How the trained weight w gives the step: dt = exp(w) or dt = softplus(w)
# (the S4 code base's `inv_dt` under `dt_transform: softplus`,
# configs/model/layer/s4.yaml; its `param_transform` / `inv_transform`,
# src/models/sequence/kernels/ssm.py lines 79-108 at d27bdf9). The weight
# is named `ssm_log_dt` either way, so that a family's declared dynamics
# and timescales do not depend on the option.
DT_TRANSFORMS = ("exp", "softplus")


def check_dt_transform(dt_transform):
    if dt_transform not in DT_TRANSFORMS:
        raise ValueError(
            f"`dt_transform` must be one of {DT_TRANSFORMS}. Received: "
            f"dt_transform={dt_transform!r}"
        )


def add_dt_weight(layer, hidden_dim, dt_transform, dt_min, dt_max, **kwargs):
    """The trained step `ssm_log_dt` of `layer`, (hidden_dim,).

    dt is log-uniform in [dt_min, dt_max] at init. With `"exp"` the weight
    is log(dt); with `"softplus"` it is `log(exp(dt) - 1)` of the same
    draw, dt clamped to >= 1e-4 first as the S4 code's `inv_transform`
    (ssm.py line 81) does; so both start at the same dt from the same seed.
    """
    log_dt = log_uniform_dt(dt_min, dt_max)
    initializer = log_dt
    if dt_transform == "softplus":

        def initializer(shape, dtype=None):
            dt = ops.maximum(ops.exp(log_dt(shape, dtype=dtype)), 1e-4)
            return ops.log(ops.expm1(dt))

    return layer.add_weight(
        name="ssm_log_dt", shape=(hidden_dim,), initializer=initializer,
        **kwargs,
    )


def check_B_clip(B_clip):
    if B_clip is not None and not float(B_clip) > 0:
        raise ValueError(
            f"`B_clip` must be None or > 0. Received: B_clip={B_clip!r}"
        )


def clip_B(b, B_clip):
    """B with its imaginary part clipped to [-B_clip, B_clip] (None: b).

    The S4 code's `hippo.nplr(..., B_clip=2.0)` (src/models/hippo/hippo.py
    lines 203 and 274-275 at d27bdf9), which its S4 and S4D-LegS
    initialisations call with that default. It acts on B in the
    eigenbasis of LegS's normal part, whose phases `numpy.linalg.eigh`
    gives as `torch.linalg.eigh` does at N = 64 (not at every N).
    """
    if B_clip is None:
        return b
    return b.real + 1j * np.clip(b.imag, -B_clip, B_clip)


def check_optional_count(name, value):
    """Raises unless `value` is None or an int >= 1."""
    if value is not None and (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or value < 1
    ):
        raise ValueError(
            f"`{name}` must be an int >= 1 or None. Received: "
            f"{name}={value!r}"
        )


def ssm_copies(num_ssms, hidden_dim):
    """How many independent (A, B) sets a layer of `hidden_dim` channels
    trains: `num_ssms` (the S4 code's `n_ssm`), None: one per channel."""
    if num_ssms is None:
        return hidden_dim
    if hidden_dim % num_ssms:
        raise ValueError(
            f"`num_ssms` ({num_ssms}) must divide the number of channels "
            f"({hidden_dim}). Received: num_ssms={num_ssms}"
        )
    return num_ssms


def tile_ssms(x, hidden_dim):
    """(S, ...) -> (H, ...): channel h reads copy h mod S, as the S4 code
    repeats its (A, B) sets, `repeat(A, 't n -> (v t) n', v=H // S)`
    (src/models/sequence/kernels/ssm.py lines 540-541 at d27bdf9)."""
    copies = ops.shape(x)[0]
    if copies == hidden_dim:
        return x
    return ops.tile(x, (hidden_dim // copies,) + (1,) * (len(x.shape) - 1))


def step_size(layer):
    """dt (H,) of a layer whose `add_dt_weight` is `layer.log_dt`."""
    if layer.dt_transform == "exp":
        return ops.exp(layer.log_dt)
    return ops.softplus(layer.log_dt)


def torch_s4d_kernel(dt, log_a_real, a_imag, b_real, b_imag, c_real, c_imag,
                     length):
    """S4D's ZOH kernel under PyTorch, as one autograd function: K[..., l] =
    2 Re(sum_n C_n B_bar_n z_n^l), `z = exp(dt A)`, `A = -exp(log_a_real)
    + i a_imag`, `B_bar = (z - 1) / A * B`, with `vandermonde_kernel`'s
    block split `l = alpha S + beta` (S = `block_size_for(length)`,
    `_block_positions`).

    The backward pass is written out. With `g_x` the conjugate of PyTorch's
    gradient for a complex x and G the kernel's (real) gradient, both sums
    over l come from one complex matrix product on the same blocks:

        g_coeff = 2 sum_l G_l z^l,   g_(dt A) = sum_dirs coeff 2 sum_l G_l l z^l
        g_C = g_coeff B_bar,          g_B_bar = sum_dirs g_coeff C
        g_B = g_B_bar (z - 1) / A
        g_A = g_(dt A) dt + g_B_bar B (dt z - (z - 1) / A) / A
        dL/d dt = sum_n Re(g_(dt A) A + g_B_bar B z)

    (coeff = C B_bar). Under PyTorch every operation runs on its own.
    For the S4D layer of the quick ListOps preset ((2, 64) channels, 16
    modes), forward and backward through autograd on complex tensors
    took 152 operations, written out 105; paired in one process on 2
    cores (docs/results/s4d_function_torch_epyc/), 1.10 -> 0.86 ms at L =
    32 and 2.89 -> 2.46 ms at L = 1024. JAX and TensorFlow keep the
    (real, imaginary) pairs of `S4D.discretize`: XLA fuses them, and
    TensorFlow's complex operations were slower (a layer's kernel 1.8
    against 1.2 ms, e187b46).

    Args:
        dt: tensor (H,), the step sizes.
        log_a_real, a_imag, b_real, b_imag: tensors (H, N).
        c_real, c_imag: tensors (directions, H, N).
        length: int L.

    Returns:
        A float32 tensor (directions, H, L).
    """
    return _torch_s4d_kernel_function().apply(
        dt, log_a_real, a_imag, b_real, b_imag, c_real, c_imag, length)


@functools.cache
def _torch_block_positions(length, dtype, device):
    """`ssm_kernels._block_positions(length)` (alpha S for each of the A
    blocks, beta within a block) as torch tensors of `dtype` on `device`,
    and the (2, A, S) weights 2 and 2 l of the backward's two sums."""
    import torch

    starts, offsets = (positions.to(dtype=dtype, device=device)
                       for positions in _block_positions(length, None))
    steps = starts[:, None] + offsets  # l = alpha S + beta, (A, S)
    weights = torch.stack([torch.full_like(steps, 2.0), 2.0 * steps])
    return starts, offsets, weights


def _torch_exp_of(real, imag):
    """exp(real + i imag), a complex tensor, as `exp(real) (cos(imag) + i
    sin(imag))` from the parts.

    PyTorch's `exp` of a complex tensor took 3.4-9.2x as long on 2
    cores, paired in one process (2.75 against 0.30 ms at (128, 32, 32),
    224 against 53-67 us at (64, 16, 12): the blocks' exponentials of a
    1K S4D layer, and of the quick preset's at L = 128). The kernel's
    forward and backward went 1.76-1.82x as fast at 1K, and the 4-block
    S4D stack's step 1.05-1.13x at 1K-16K
    (`docs/results/s4d_exp_torch_epyc/`).
    """
    import torch

    magnitude = torch.exp(real)
    return torch.complex(magnitude * torch.cos(imag),
                         magnitude * torch.sin(imag))


@functools.cache
def _torch_s4d_kernel_function():
    """The `torch.autograd.Function` of `torch_s4d_kernel`, made on first
    use: torch is imported only under PyTorch."""
    import torch

    class S4DKernel(torch.autograd.Function):
        @staticmethod
        def forward(ctx, dt, log_a_real, a_imag, b_real, b_imag, c_real,
                    c_imag, length):
            starts, offsets, _ = _torch_block_positions(
                length, dt.dtype, dt.device)
            blocks, size = starts.shape[0], offsets.shape[0]
            a_real = -torch.exp(log_a_real)
            a = torch.complex(a_real, a_imag)  # (H, N)
            dt = dt[:, None]
            # dt A's parts, real tensors: the exponentials below are
            # taken on them (`_torch_exp_of`), not on complex tensors.
            dta_real, dta_imag = a_real * dt, a_imag * dt
            z = _torch_exp_of(dta_real, dta_imag)
            ratio = (z - 1.0) / a
            b = torch.complex(b_real, b_imag)
            bbar = ratio * b  # ZOH
            c = torch.complex(c_real, c_imag)  # (dirs, H, N)
            coeff = c * bbar
            z_starts, z_offsets = (
                _torch_exp_of(dta_real[..., None] * positions,
                              dta_imag[..., None] * positions)
                for positions in (starts, offsets))  # (H, N, A), (H, N, S)
            k = torch.matmul((coeff[..., None] * z_starts).mT, z_offsets)
            k = torch.mul(k.real, 2.0)  # (dirs, H, A, S)
            ctx.save_for_backward(dt, a_real, a, z, ratio, b, bbar, c, coeff,
                                  z_starts, z_offsets)
            ctx.blocks, ctx.size, ctx.length = blocks, size, length
            return k.reshape(*k.shape[:-2], -1)[..., :length]

        @staticmethod
        def backward(ctx, grad):
            (dt, a_real, a, z, ratio, b, bbar, c, coeff, z_starts,
             z_offsets) = ctx.saved_tensors
            blocks, size = ctx.blocks, ctx.size
            _, _, weights = _torch_block_positions(ctx.length, grad.dtype,
                                                   grad.device)
            if blocks * size != ctx.length:
                grad = torch.nn.functional.pad(
                    grad, (0, blocks * size - ctx.length))
            grad = grad.reshape(*grad.shape[:-1], 1, blocks, size)
            # (dirs, H, 2, A, S): 2 G and 2 G l, summed over S by one
            # product, then over A.
            weighted = (grad * weights).to(z_offsets.dtype)
            sums = torch.matmul(weighted, z_offsets[:, None].mT)
            sums = (sums * z_starts[:, None].mT).sum(-2)  # (dirs, H, 2, N)
            g_coeff, g_moments = sums.unbind(-2)
            g_dta = (coeff * g_moments).sum(0)
            g_c = g_coeff * bbar
            g_bbar = (g_coeff * c).sum(0)
            g_b = g_bbar * ratio
            g_bbar_b = g_bbar * b
            g_a = g_dta * dt + g_bbar_b * (dt * z - ratio) / a
            grad_dt = (g_dta * a + g_bbar_b * z).real.sum(-1)
            # PyTorch's gradients are the conjugates: (Re g, -Im g).
            grad_a_real, grad_a_imag = conjugate_parts(g_a)
            return (grad_dt, grad_a_real * a_real, grad_a_imag,
                    *conjugate_parts(g_b), *conjugate_parts(g_c), None)

    def conjugate_parts(g):
        return torch.view_as_real(g.conj_physical()).unbind(-1)

    return S4DKernel


@keras.saving.register_keras_serializable(package="lra_keras")
class S4D(StateSpaceLayer):
    """Diagonal state-space layer with a ZOH-discretised kernel.

    Each of the H channels runs an independent SSM with N/2 complex modes
    (conjugate pairs, hence `2 Re`): `A = -exp(log_A_real) + i A_imag`,
    `dt = exp(log_dt)` (or `softplus(log_dt)`, see `dt_transform`)
    sampled log-uniformly in `[dt_min, dt_max]`, ZOH
    `B_bar = (exp(dt A) - 1) / A * B` and the convolution kernel
    `K_l = 2 Re(sum_n C_n B_bar_n exp(dt A_n l))`, applied with one FFT
    convolution. Then `+ D u`, GELU and the GLU output of the S4 LRA blocks
    (see `StateSpaceLayer`). This is the S4D of "Never Train from Scratch"
    (https://arxiv.org/abs/2310.02980) section 3.

    Args:
        state_dim: int. State size N (N/2 complex modes). Defaults to 64.
        init: `"legs"` (S4D-LegS), `"lin"` (S4D-Lin) or `"inv"` (S4D-Inv),
            the paper's diag-legs / diag-lin / diag-inv, or `"dfout"`
            (S4D-DFouT, Solozabal et al. 2025: each channel's poles on a
            discrete Fourier grid, `hippo.dfout_poles`, which says what of
            it is this library's reading; it places poles per channel, so
            it takes no `num_ssms`). Defaults to `"legs"`.
        dt_min: float. Smallest initial step. Defaults to 0.001.
        dt_max: float. Largest initial step. Defaults to 0.1.
        dt_transform: how the weight `ssm_log_dt` gives dt: `"exp"` (it
            is log dt, this library's and the minimal `s4d.py`'s
            parameterisation) or `"softplus"` (it is softplus^-1(dt), the
            S4 code's `inv_dt` under the LRA configs' `dt_transform:
            softplus`, `configs/model/layer/s4.yaml`; the name stays).
            Both start from the same dt; they differ in how a gradient
            step moves dt. Defaults to `"exp"`.
        B_clip: float or None. Clip the imaginary part of the initial B to
            `[-B_clip, B_clip]` (see `clip_B`): the S4 code's S4D-LegS
            uses 2.0 (11 of the 32 modes of LegS-64 are clipped, where
            |Im B| reaches 40.8); None (the default) keeps LegS's B.
            `"lin"` and `"inv"` have a real B, which no clip changes.
        trainable_B: bool. Whether B is trained (else fixed at its
            init). Defaults to True.
        num_ssms: int or None. The number of independent (A, B) sets, S;
            channel h uses set h mod S (the S4 code's `n_ssm`: its CIFAR
            config ties the 512 channels to 2 sets, `configs/experiment/
            lra/s4-lra-cifar.yaml` line 25). dt and C stay per channel.
            Must divide the number of channels. None (the default): one
            set per channel.
        causal, activation, output_activation, dropout: see
            `StateSpaceLayer`.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).
        padding_mask: optional (batch, length), nonzero at real tokens.
        training: bool, for dropout.

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> layer = S4D(state_dim=64, causal=False)
    >>> layer(keras.random.normal((2, 1024, 32))).shape
    (2, 1024, 32)
    """

    def __init__(
        self,
        state_dim=64,
        init="legs",
        dt_min=0.001,
        dt_max=0.1,
        trainable_B=True,
        dt_transform="exp",
        B_clip=None,
        num_ssms=None,
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
        if self.state_dim < 2 or self.state_dim % 2:
            raise ValueError(
                "`state_dim` must be even (conjugate pairs). Received: "
                f"state_dim={state_dim}"
            )
        inits = hippo.INITS + hippo.DISCRETE_INITS
        if init not in inits:
            raise ValueError(
                f"`init` must be one of {inits}. Received: init={init!r}"
            )
        if init in hippo.DISCRETE_INITS and num_ssms is not None:
            raise ValueError(
                f"`init={init!r}` places each channel's poles from its own "
                "step, so the (A, B) sets cannot be shared: `num_ssms` must "
                f"be None. Received: num_ssms={num_ssms!r}"
            )
        check_dt_range(dt_min, dt_max)
        check_dt_transform(dt_transform)
        check_B_clip(B_clip)
        check_optional_count("num_ssms", num_ssms)
        self.init = init
        self.dt_min = dt_min
        self.dt_max = dt_max
        self.trainable_B = bool(trainable_B)
        self.dt_transform = dt_transform
        self.B_clip = None if B_clip is None else float(B_clip)
        self.num_ssms = None if num_ssms is None else int(num_ssms)

    def build_ssm(self, hidden_dim):
        half = self.state_dim // 2
        self.log_dt = add_dt_weight(
            self, hidden_dim, self.dt_transform, self.dt_min, self.dt_max
        )
        if self.init in hippo.DISCRETE_INITS:
            # Placed from the step each channel just drew (as DLR's
            # structured init does), one row of A per channel.
            dt = ops.convert_to_numpy(step_size(self))
            a, b = hippo.dfout_poles(self.state_dim, dt)  # (H, N/2)
        else:
            a, b = hippo.diagonal_init(self.init, self.state_dim)  # (N/2,)
        b = clip_B(b, self.B_clip)

        shape = (ssm_copies(self.num_ssms, hidden_dim), half)

        def constant(name, value, trainable=True):
            weight = self.add_weight(
                name=name,
                shape=shape,
                initializer="zeros",
                trainable=trainable,
            )
            value = np.asarray(value, "float32")
            weight.assign(np.broadcast_to(value, shape))
            return weight

        # Real parts stay negative through -exp(.), so every mode decays.
        self.log_A_real = constant("ssm_log_A_real", np.log(-a.real))
        self.A_imag = constant("ssm_A_imag", a.imag)
        self.B_real = constant("ssm_B_real", b.real, self.trainable_B)
        self.B_imag = constant("ssm_B_imag", b.imag, self.trainable_B)
        # C ~ CN(0, 1): independent real and imaginary parts with variance
        # 1/2 each (the S4 code's `torch.randn(..., dtype=torch.cfloat)`).
        # One initializer per part: an unseeded Keras initializer keeps the
        # seed it drew when made, so sharing one gave C_imag == C_real.
        shape = (self.directions, hidden_dim, half)
        self.C_real = self.add_weight(
            name="C_real", shape=shape, initializer=complex_normal_part()
        )
        self.C_imag = self.add_weight(
            name="C_imag", shape=shape, initializer=complex_normal_part()
        )

    def discretize(self):
        """(C B_bar, dt A) as (real, imag) pairs: C (dirs, H, N/2)."""
        dt = step_size(self)[:, None]  # (H, 1)
        H = ops.shape(dt)[0]
        a_real = tile_ssms(-ops.exp(self.log_A_real), H)  # (H, N/2)
        a_imag = tile_ssms(self.A_imag, H)
        dta_real, dta_imag = a_real * dt, a_imag * dt  # (H, N/2)
        # ZOH: B_bar = (exp(dt A) - 1) / A * B
        e_real, e_imag = complex_exp(dta_real, dta_imag)
        denom = a_real**2 + a_imag**2
        num_real, num_imag = complex_multiply(
            e_real - 1.0, e_imag, a_real, -a_imag
        )
        bbar = complex_multiply(
            num_real / denom,
            num_imag / denom,
            tile_ssms(self.B_real, H),
            tile_ssms(self.B_imag, H),
        )  # (H, N/2)
        coeff = complex_multiply(self.C_real, self.C_imag, *bbar)
        return coeff, (dta_real, dta_imag)

    def ssm_kernel(self, length):
        if keras.backend.backend() == "torch":
            return self._torch_kernel(length)
        (c_real, c_imag), (dta_real, dta_imag) = self.discretize()
        # Conjugate pairs: K = 2 Re(sum_n ...).
        return 2.0 * vandermonde_kernel(
            c_real, c_imag, dta_real, dta_imag, length
        )  # (dirs, H, L)

    def _torch_kernel(self, length):
        """`discretize` and the kernel as one PyTorch autograd function
        (`torch_s4d_kernel` says why)."""

        def weight(variable, H):
            return tile_ssms(ops.convert_to_tensor(variable), H)

        dt = step_size(self)  # (H,)
        H = ops.shape(dt)[0]
        return torch_s4d_kernel(
            dt, weight(self.log_A_real, H), weight(self.A_imag, H),
            weight(self.B_real, H), weight(self.B_imag, H),
            ops.convert_to_tensor(self.C_real),
            ops.convert_to_tensor(self.C_imag), length)

    def get_config(self):
        config = super().get_config()
        config.update(
            init=self.init,
            dt_min=self.dt_min,
            dt_max=self.dt_max,
            trainable_B=self.trainable_B,
            dt_transform=self.dt_transform,
            B_clip=self.B_clip,
            num_ssms=self.num_ssms,
        )
        return config
