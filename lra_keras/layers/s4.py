"""S4: the diagonal-plus-low-rank (NPLR / DPLR) structured state-space layer.

The kernel is computed exactly in the time domain, without the Cauchy kernel
of the S4 code base:

1. Bilinear discretisation in closed form. `A = Lambda - P P^*` is diagonal
   minus rank 1, so `(I - dt/2 A)^{-1}` follows from the Woodbury identity
   and `A_bar` is again diagonal minus rank 1. It is assembled as a dense
   real (N, N) matrix per channel (see below for why real and N, not N/2).
2. `K_l = C_bar A_bar^l B_bar` with the split `l = a * B + b`, `B = 2^m ~
   sqrt(L)`: `V[:, b] = A_bar^b B_bar` (b < B) and `W[a] = C_bar A_bar^(aB)`
   (a < L/B), each by log2 doubling steps of batched matmuls (`V <- [V,
   A_bar^(2^i) V]`, `A_bar^(2^(i+1)) = (A_bar^(2^i))^2`), then `K[aB + b] =
   W[a] . V[:, b]` as one batched matmul (H, L/B, N) @ (H, N, B). The
   largest intermediates are H x N x sqrt(L) and H x N x N (the Cauchy
   kernel at the roots of unity materialises H x N x L, the intermediate
   that `ssm_kernels` removed from S4D); the cost is
   O(H N^3 log L + H N L). With `Q = P` the Hermitian part of `A` is
   `Re Lambda - P P^* <= 0`, so `A_bar` (its Cayley transform) is a
   contraction: the repeated squaring cannot overflow, and float32 matches
   a complex128 recurrence to ~1e-5 relative at N = 64, L = 16384.

Why a real state of size N. The S4 code base stores one mode of each
conjugate pair (N/2 complex modes), but its low-rank term couples the pairs:
in the full eigenbasis `A = diag(Lambda, conj Lambda) - [P; conj P][P;
conj P]^*` (`_conj(p)` in `_step_state_linear`, `cauchy_naive(conj=True)`
in the Woodbury terms of the state-spaces/s4 `SSKernelNPLR`). The half state
`x` then evolves as `x' = Lambda x - 2 P Re(P^* x) + B u`, which is linear
over the reals but not over the complex numbers; in real coordinates
`(Re x, Im x)` it is the real (N, N) matrix
`[[Re L, -Im L], [Im L, Re L]] - 2 q q^T`, q = (Re P, Im P), and the output
is `2 Re(C x) = (2 Re C, -2 Im C) . (Re x, Im x)`. Only this full coupling
reproduces HiPPO-LegS at initialisation (an (N/2, N/2) complex
`Lambda - P P^*` has other eigenvalues); the tests check it against
`hippo.legs`.

Training C~ (`C_parameterization="c_tilde"`). The S4 code base does not
train C: on the first forward call, `SSMKernelDPLR._setup_C` (ssm.py lines
673-700 at d27bdf9, called from `forward`, lines 783-794) overwrites its
parameter with `C~ = C (I - A_bar^L)`, L = `l_max` (the kernel length), and
from then on the kernel is the truncated generating function evaluated at
the L-th roots of unity from C~ (lines 795-870), i.e. `K_l = C~ (I -
A_bar^L)^{-1} A_bar^l B_bar` for l < L. The outputs are those of C, but the
gradients of C, dt, A and P differ, and weight decay acts on C~. With
`"c_tilde"` the weights are C~ and the layer forms `C = C~ (I - A_bar^L)^{-1}`
in the real coordinates of the state (`c = c~ M^{-1}`, `M = I - A_bar^L`,
`A_bar^L` by repeated squaring, then the doubling series of `(I -
A_bar^L)^{-1}`, matmuls only: `c_from_c_tilde`), then the kernel as with
C.
The initial C~ is `C0 (I - A_bar0^L)` from C0 ~ CN(0, 1) and the initial
dynamics, as the reference's first call makes it. Inputs longer than L are
an error: the reference would double L in place (`_setup_C`, lines
683-700), a stateful change of the trained parameter that a functional
Keras layer does not make. Computing the longer kernel from the same C
would match the reference's outputs for that call but not its training
from then on, so we refuse rather than diverge silently; our lengths are
fixed per task and `kernel_length` is the task's longest length
(`lra_keras.schema` checks `kernel_length >= sequence_length`, which also
covers TensorFlow's symbolic lengths, unchecked here).

Dynamic lengths. The doubling counts are Python ints derived from the
length. Where the length is a symbolic tensor (TensorFlow graphs traced with
an unknown length, as `model.fit` does for batches of varying length), the
block size is fixed to 2^SYMBOLIC_LOG2_BLOCK = 256 and the ceil(L / 256)
block starts `C A_bar^(aB)` come from `ops.while_loop` (a sequential loop of
small matmuls). An `ops.switch` over one doubled branch per ceil(log2 L) was
tried first: TensorFlow's conditional gradients made tracing take 10-50 s.

References:
- Gu, Goel, Re. "Efficiently Modeling Long Sequences with Structured State
  Spaces" (S4), https://arxiv.org/abs/2111.00396
- Amos, Berant, Gupta. "Never Train from Scratch: Fair Comparison of
  Long-Sequence Models Requires Data-Driven Priors", eq. 2 and appendix
  C.1.3, https://arxiv.org/abs/2310.02980
- state-spaces/s4, `src/models/sequence/kernels/ssm.py` (`SSMKernelDPLR`,
  parameter names, conjugate handling), read for this port.
"""

import keras
import numpy as np
from keras import ops

from lra_keras.layers import hippo
from lra_keras.layers.fft_conv import complex_multiply
from lra_keras.layers.s4d import add_dt_weight
from lra_keras.layers.s4d import check_B_clip
from lra_keras.layers.s4d import check_dt_range
from lra_keras.layers.s4d import check_dt_transform
from lra_keras.layers.s4d import check_optional_count
from lra_keras.layers.s4d import clip_B
from lra_keras.layers.s4d import complex_normal_part
from lra_keras.layers.s4d import ssm_copies
from lra_keras.layers.s4d import step_size
from lra_keras.layers.s4d import tile_ssms
from lra_keras.layers.ssm_kernels import first_taps
from lra_keras.layers.state_space import StateSpaceLayer

S4_INITS = ("legs", "random")
C_PARAMETERIZATIONS = ("c", "c_tilde")
# Block size 2^SYMBOLIC_LOG2_BLOCK when the length is a symbolic tensor.
SYMBOLIC_LOG2_BLOCK = 8


def _as_real_block(z_real, z_imag):
    """(..., n) complex diagonal as the real (..., 2n, 2n) matrix."""
    eye = ops.eye(ops.shape(z_real)[-1], dtype="float32")  # (n, n)
    zr = z_real[..., None] * eye  # (..., n, n)
    zi = z_imag[..., None] * eye
    top = ops.concatenate([zr, -zi], axis=-1)  # (..., n, 2n)
    bottom = ops.concatenate([zi, zr], axis=-1)
    return ops.concatenate([top, bottom], axis=-2)  # (..., 2n, 2n)


def dplr_bilinear(dt, lambda_, p, b):
    """Bilinear discretisation of `A = Lambda - P P^*` (with conjugates).

    `A_bar = (I - dt/2 A)^{-1} (I + dt/2 A)`, `B_bar = (I - dt/2 A)^{-1} dt B`
    for the real N-dimensional system described in the module docstring.
    With `d = 1 - dt/2 Lambda`, `e = 1 + dt/2 Lambda` (elementwise) Woodbury
    gives `A_bar = diag(e / d) - kappa r t^T` with `r = P / d`,
    `t = P / conj(d)`, `gamma = Re sum |P|^2 / d` and
    `kappa = 2 dt / (1 + dt gamma)`; `1 + dt gamma >= 1` whenever
    `Re Lambda <= 0`, so nothing is divided by a small number.

    Args:
        dt: tensor (H,).
        lambda_, p, b: (real, imag) pairs of tensors (H, N/2).

    Returns:
        (A_bar (H, N, N), B_bar (H, N)) float32, real coordinates
        `(Re x, Im x)`.
    """
    dt = ops.cast(dt, "float32")[:, None]  # (H, 1)
    l_real, l_imag = (ops.cast(v, "float32") for v in lambda_)  # (H, N/2)
    p_real, p_imag = (ops.cast(v, "float32") for v in p)
    b_real, b_imag = (ops.cast(v, "float32") for v in b)
    d_real, d_imag = 1.0 - 0.5 * dt * l_real, -0.5 * dt * l_imag
    e_real, e_imag = 1.0 + 0.5 * dt * l_real, 0.5 * dt * l_imag
    d_abs2 = d_real**2 + d_imag**2
    inv_d = (d_real / d_abs2, -d_imag / d_abs2)  # 1 / d  (H, N/2)
    lbar = complex_multiply(e_real, e_imag, *inv_d)  # e / d
    r_real, r_imag = complex_multiply(p_real, p_imag, *inv_d)  # P / d
    t_real, t_imag = complex_multiply(
        p_real, p_imag, inv_d[0], -inv_d[1]
    )  # P / conj(d)
    # gamma = q^T D^{-1} q = Re sum |P|^2 / d
    gamma = ops.sum((p_real**2 + p_imag**2) * inv_d[0], axis=-1)[:, None]
    denom = 1.0 + dt * gamma  # (H, 1)
    r = ops.concatenate([r_real, r_imag], axis=-1)  # (H, N)
    t = ops.concatenate([t_real, t_imag], axis=-1)  # (H, N)
    kappa = (2.0 * dt / denom)[..., None]  # (H, 1, 1)
    a_bar = _as_real_block(*lbar) - kappa * r[:, :, None] * t[:, None, :]
    # B_bar = dt (B / d - dt r Re(sum conj(P) B / d) / (1 + dt gamma))
    bd_real, bd_imag = complex_multiply(b_real, b_imag, *inv_d)  # B / d
    s = ops.sum(p_real * bd_real + p_imag * bd_imag, axis=-1)[:, None]
    b_d = ops.concatenate([bd_real, bd_imag], axis=-1)  # (H, N)
    b_bar = dt * (b_d - dt * r * s / denom)  # (H, N)
    return a_bar, b_bar


def matrix_power(a, n):
    """a^n for a Python int n >= 1, by repeated squaring (a (..., N, N))."""
    result, power = None, a
    while n:
        if n & 1:
            result = power if result is None else ops.matmul(result, power)
        n >>= 1
        if n:
            power = ops.matmul(power, power)
    return result


# Doublings of the series (I - M)^{-1} = prod_j (I + M^(2^j)) in
# `c_from_c_tilde`: the sum runs to M^(2^16 - 1), M = A_bar^L.
C_TILDE_DOUBLINGS = 16


def c_from_c_tilde(c_tilde, a_bar, length, doublings=C_TILDE_DOUBLINGS):
    """C = C~ (I - A_bar^L)^{-1} per channel, real coordinates.

    With `M = A_bar^L` (repeated squaring), `(I - M)^{-1} = sum_k M^k =
    prod_{j < K} (I + M^(2^j)) + O(M^(2^K))`: `c <- c + c M`, `M <- M M`,
    K times, with matmuls only. `A_bar` is a contraction (see the module
    docstring), so the remainder `c~ M^(2^K) (I - M)^{-1}` is a mode's
    decay over `L 2^K` steps: below float32 rounding unless a mode decays
    by less than ~1e-3 over 65536 L steps, where `I - M` is itself close
    to singular. The S4 code inverts `I - dA^L` in the frequency domain
    (the Cauchy kernel); an earlier version here called `ops.solve` (one
    LAPACK solve per channel), under which a JAX training step hung
    intermittently; matmuls are what the kernel itself runs on.

    Args:
        c_tilde: tensor (directions, H, N), row vectors.
        a_bar: tensor (H, N, N).
        length: int L.
        doublings: int K.

    Returns:
        Tensor (directions, H, N): `c` with `c (I - A_bar^L) = c~`.
    """
    m = matrix_power(a_bar, length)  # (H, N, N)
    c = ops.convert_to_tensor(c_tilde)  # (dirs, H, N)
    for j in range(doublings):
        c = c + ops.einsum("dhm,hmn->dhn", c, m)  # c (I + M^(2^j))
        if j + 1 < doublings:
            m = ops.matmul(m, m)
    return c


def c_tilde_from_c(c, a_bar, length):
    """C~ = C (I - A_bar^L) (`_setup_C`): c (dirs, H, N), a_bar (H, N, N)."""
    a_l = matrix_power(a_bar, length)  # (H, N, N)
    return c - ops.einsum("dhm,hmn->dhn", c, a_l)  # (dirs, H, N)


def _offset_columns(a_bar, b_bar, log2_block):
    """V[:, b] = A_bar^b b_bar for b < 2^log2_block, and A_bar^(2^log2_block).

    Doubling: `V <- [V, A_bar^(2^i) V]`, `A_bar^(2^(i+1)) = (A_bar^(2^i))^2`.
    """
    v = b_bar[:, :, None]  # (H, N, 1)
    power = a_bar  # A_bar^(2^i)  (H, N, N)
    for _ in range(log2_block):
        v = ops.concatenate([v, ops.matmul(power, v)], axis=-1)
        power = ops.matmul(power, power)
    return v, power  # (H, N, B), (H, N, N)


def _block_kernel(w, v):
    """K[d, h, a B + b] = w[h, d, a] . v[h, :, b]: (dirs, H, A * B)."""
    k = ops.matmul(w, v[:, None])  # (H, dirs, A, B)
    shape = ops.shape(k)
    k = ops.reshape(k, (shape[0], shape[1], -1))  # (H, dirs, A * B)
    return ops.transpose(k, (1, 0, 2))  # (dirs, H, A * B)


def dplr_kernel(a_bar, b_bar, c, length):
    """K[d, h, l] = c[d, h] . A_bar[h]^l b_bar[h] for l < length.

    The position is split as `l = a * B + b`. For an int length, `B =
    2^ceil(e / 2)` and `A = 2^floor(e / 2)` with `e = ceil(log2 L)`, both
    tables built by doubling. For a symbolic length (TensorFlow graphs with
    an unknown length) the doubling counts cannot depend on it, so `B =
    2^SYMBOLIC_LOG2_BLOCK` is fixed and the `ceil(L / B)` block starts
    `c A_bar^(a B)` come from a while loop.

    Args:
        a_bar: tensor (H, N, N).
        b_bar: tensor (H, N).
        c: tensor (directions, H, N).
        length: int or scalar int tensor L.

    Returns:
        Tensor (directions, H, L) float32.
    """
    w = ops.transpose(c, (1, 0, 2))[:, :, None, :]  # (H, dirs, 1, N)
    if not ops.is_tensor(length):
        length = int(length)
        log2_length = max(length - 1, 0).bit_length()  # ceil(log2 L)
        v, power = _offset_columns(a_bar, b_bar, (log2_length + 1) // 2)
        # W[a] = c A_bar^(a B) for a < 2^floor(e / 2), by doubling rows.
        for j in range(log2_length // 2):
            if j:
                power = ops.matmul(power, power)  # A_bar^(2^j B)
            w = ops.concatenate([w, ops.matmul(w, power[:, None])], axis=2)
        return first_taps(_block_kernel(w, v), length)
    v, power = _offset_columns(a_bar, b_bar, SYMBOLIC_LOG2_BLOCK)
    block = 2**SYMBOLIC_LOG2_BLOCK
    num_blocks = (ops.cast(length, "int32") + block - 1) // block

    def body(a, w_a, rows):
        rows = ops.scatter_update(rows, ops.reshape(a, (1, 1)), w_a[None])
        return a + 1, ops.matmul(w_a, power), rows  # c A_bar^((a+1) B)

    # A while loop with maximum_iterations (not ops.scan): XLA needs the
    # bound to size the gradient accumulators.
    w0 = w[:, :, 0]  # (H, dirs, N)
    _, _, w = ops.while_loop(
        lambda a, w_a, rows: a < num_blocks,
        body,
        (ops.zeros((), "int32"), w0, ops.zeros((num_blocks, *ops.shape(w0)))),
        maximum_iterations=num_blocks,
    )  # (A, H, dirs, N)
    w = ops.transpose(w, (1, 2, 0, 3))  # (H, dirs, A, N)
    return _block_kernel(w, v)[..., :length]


@keras.saving.register_keras_serializable(package="lra_keras")
class S4(StateSpaceLayer):
    """S4 state-space layer: HiPPO-LegS, normal plus low rank, bilinear.

    Each of the H channels runs an SSM with `A = Lambda - P P^*` (diagonal
    `Lambda`, rank-1 `P P^*`, N/2 complex modes with their conjugates),
    `dt = exp(log_dt)` (or `softplus(log_dt)`, see `dt_transform`)
    sampled log-uniformly in `[dt_min, dt_max]`, the bilinear
    discretisation `A_bar = (I - dt/2 A)^{-1} (I + dt/2 A)`,
    `B_bar = (I - dt/2 A)^{-1} dt B`, and the convolution kernel
    `K_l = 2 Re(C A_bar^l B_bar)` ("Never Train from Scratch",
    https://arxiv.org/abs/2310.02980, eq. 2; S4,
    https://arxiv.org/abs/2111.00396), applied with one FFT convolution.
    Then `+ D u`, GELU and the GLU output of the S4 LRA blocks (see
    `StateSpaceLayer`). The low-rank term couples each mode with its
    conjugate as in the S4 code base, so the state is real of size N; the
    kernel is computed exactly by repeated squaring (see the module
    docstring), without an H x N x L intermediate.

    Parameters (per channel unless `num_ssms` ties them): `ssm_log_dt`
    (H,); `ssm_log_A_real`, `ssm_A_imag` (S, N/2) with `Re Lambda =
    -exp(log_A_real)`; `ssm_P_real`, `ssm_P_imag`, `ssm_B_real`,
    `ssm_B_imag` (S, N/2), S = `num_ssms` or H; `C_real`, `C_imag`
    (directions, H, N/2),
    `C ~ CN(0, 1)`; or, with `C_parameterization="c_tilde"`, `C_tilde_real`,
    `C_tilde_imag` in their place (see the module docstring).

    Args:
        state_dim: int. State size N (N/2 complex modes). Defaults to 64.
        init: `"legs"`: `Lambda`, `P`, `B` from the NPLR form of
            HiPPO-LegS (`hippo.legs_nplr`), the same for every channel.
            `"random"`: the stored weights `ssm_log_A_real`, `ssm_A_imag`,
            `ssm_P_real`, `ssm_P_imag`, `ssm_B_real`, `ssm_B_imag` are each
            drawn i.i.d. from N(0, 0.1^2) ("Never Train from Scratch"
            C.1.3: parameters reset to normal values with std 0.1; so
            `Re Lambda = -exp(N(0, 0.01))` stays negative); `dt` keeps its
            log-uniform range and `C` stays CN(0, 1). Defaults to `"legs"`.
        dt_min: float. Smallest initial step. Defaults to 0.001.
        dt_max: float. Largest initial step. Defaults to 0.1.
        dt_transform: `"exp"` (dt = exp(ssm_log_dt)) or `"softplus"` (dt =
            softplus(ssm_log_dt): the S4 LRA configs,
            `configs/model/layer/s4.yaml`); see `S4D`. Defaults to
            `"exp"`.
        B_clip: float or None. With `init="legs"`, clip the imaginary
            part of the initial B to `[-B_clip, B_clip]` as the S4 code's
            `hippo.nplr` (`B_clip=2.0` there; `s4d.clip_B`). Defaults to
            None (no clip).
        C_parameterization: `"c"` (the weights are C) or `"c_tilde"`
            (the weights are `C~ = C (I - A_bar^L)`, L = `kernel_length`,
            as the S4 code's `SSMKernelDPLR` trains them; `C = C~ (I -
            A_bar^L)^{-1}`, the same kernel, other gradients and weight
            decay). Defaults to `"c"`.
        kernel_length: int or None. L of `"c_tilde"` (the S4 code's
            `l_max`), required there; inputs may not be longer. Ignored
            with `"c"`. Defaults to None.
        num_ssms: int or None. The number of independent (Lambda, P, B)
            sets; channel h uses set h mod S, as the S4 code's `n_ssm`
            (see `S4D`). Defaults to None (one per channel).
        causal, activation, output_activation, dropout: see
            `StateSpaceLayer`.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).
        padding_mask: optional (batch, length), nonzero at real tokens.
        training: bool, for dropout.

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> layer = S4(state_dim=64, causal=False)
    >>> layer(keras.random.normal((2, 1024, 32))).shape
    (2, 1024, 32)
    """

    def __init__(
        self,
        state_dim=64,
        init="legs",
        dt_min=0.001,
        dt_max=0.1,
        dt_transform="exp",
        B_clip=None,
        C_parameterization="c",
        kernel_length=None,
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
        if init not in S4_INITS:
            raise ValueError(
                f"`init` must be one of {S4_INITS}. Received: init={init!r}"
            )
        check_dt_range(dt_min, dt_max)
        check_dt_transform(dt_transform)
        check_B_clip(B_clip)
        check_optional_count("num_ssms", num_ssms)
        if C_parameterization not in C_PARAMETERIZATIONS:
            raise ValueError(
                f"`C_parameterization` must be one of {C_PARAMETERIZATIONS}."
                f" Received: C_parameterization={C_parameterization!r}"
            )
        check_optional_count("kernel_length", kernel_length)
        if C_parameterization == "c_tilde" and kernel_length is None:
            raise ValueError(
                "`kernel_length` is required with C_parameterization="
                "'c_tilde'. Received: kernel_length=None"
            )
        self.init = init
        self.dt_min = dt_min
        self.dt_max = dt_max
        self.dt_transform = dt_transform
        self.B_clip = None if B_clip is None else float(B_clip)
        self.C_parameterization = C_parameterization
        self.kernel_length = (
            None if kernel_length is None else int(kernel_length)
        )
        self.num_ssms = None if num_ssms is None else int(num_ssms)

    def build_ssm(self, hidden_dim):
        half = self.state_dim // 2
        shape = (ssm_copies(self.num_ssms, hidden_dim), half)
        # autocast=False: the kernel is computed in float32 (repeated
        # squaring) even under mixed precision.
        self.log_dt = add_dt_weight(
            self, hidden_dim, self.dt_transform, self.dt_min, self.dt_max,
            autocast=False,
        )
        if self.init == "legs":
            lam, p, b = hippo.legs_nplr(self.state_dim)  # (N/2,) complex
            b = clip_B(b, self.B_clip)
            values = {
                "ssm_log_A_real": np.log(-lam.real),
                "ssm_A_imag": lam.imag,
                "ssm_P_real": p.real,
                "ssm_P_imag": p.imag,
                "ssm_B_real": b.real,
                "ssm_B_imag": b.imag,
            }

        def ssm_weight(name):
            if self.init == "random":
                return self.add_weight(
                    name=name,
                    shape=shape,
                    initializer=keras.initializers.RandomNormal(stddev=0.1),
                    autocast=False,
                )
            weight = self.add_weight(
                name=name, shape=shape, initializer="zeros", autocast=False
            )
            value = np.asarray(values[name], "float32")
            weight.assign(np.broadcast_to(value, shape))
            return weight

        # Re Lambda = -exp(log_A_real) < 0 keeps every mode stable.
        self.log_A_real = ssm_weight("ssm_log_A_real")
        self.A_imag = ssm_weight("ssm_A_imag")
        self.P_real = ssm_weight("ssm_P_real")
        self.P_imag = ssm_weight("ssm_P_imag")
        self.B_real = ssm_weight("ssm_B_real")
        self.B_imag = ssm_weight("ssm_B_imag")
        # C ~ CN(0, 1): independent parts with variance 1/2 each (one
        # initializer each, see `S4D.build_ssm`).
        c_shape = (self.directions, hidden_dim, half)
        prefix = "C_tilde" if self.C_parameterization == "c_tilde" else "C"
        c_real = self.add_weight(
            name=f"{prefix}_real", shape=c_shape,
            initializer=complex_normal_part(), autocast=False,
        )
        c_imag = self.add_weight(
            name=f"{prefix}_imag", shape=c_shape,
            initializer=complex_normal_part(), autocast=False,
        )
        if self.C_parameterization == "c":
            self.C_real, self.C_imag = c_real, c_imag
            return
        self.C_tilde_real, self.C_tilde_imag = c_real, c_imag
        # C~ = C0 (I - A_bar0^L) from the draw C0 and the initial dynamics,
        # as the S4 code's first call (`_setup_C`). In real coordinates
        # (2 Re C~, -2 Im C~) = (2 Re C0, -2 Im C0) (I - A_bar0^L).
        a_bar, _ = self._discretize_dynamics()
        c0 = ops.concatenate([c_real, -c_imag], axis=-1)  # (dirs, H, N)
        c_tilde = c_tilde_from_c(c0, a_bar, self.kernel_length)
        c_real.assign(c_tilde[..., :half])
        c_imag.assign(-c_tilde[..., half:])

    def _discretize_dynamics(self):
        """(A_bar (H, N, N), B_bar (H, N)), real."""
        dt = step_size(self)  # (H,)
        H = ops.shape(dt)[0]

        def tiled(*weights):  # (S, N/2) each -> (H, N/2)
            return tuple(tile_ssms(w, H) for w in weights)

        lambda_ = tiled(-ops.exp(self.log_A_real), self.A_imag)  # (H, N/2)
        return dplr_bilinear(
            dt,
            lambda_,
            tiled(self.P_real, self.P_imag),
            tiled(self.B_real, self.B_imag),
        )

    def discretize(self):
        """(A_bar (H, N, N), B_bar (H, N), C_bar (dirs, H, N)), real.

        C_bar is C's row in the real coordinates (with `"c_tilde"`, that
        of `C = C~ (I - A_bar^L)^{-1}`).
        """
        a_bar, b_bar = self._discretize_dynamics()
        if self.C_parameterization == "c_tilde":
            c_real, c_imag = self.C_tilde_real, self.C_tilde_imag
        else:
            c_real, c_imag = self.C_real, self.C_imag
        # 2 Re(C x) = (2 Re C, -2 Im C) . (Re x, Im x)
        c_bar = ops.cast(
            ops.concatenate([2.0 * c_real, -2.0 * c_imag], axis=-1),
            "float32",
        )  # (dirs, H, N)
        if self.C_parameterization == "c_tilde":
            c_bar = c_from_c_tilde(c_bar, a_bar, self.kernel_length)
        return a_bar, b_bar, c_bar

    def ssm_kernel(self, length):
        if (
            self.C_parameterization == "c_tilde"
            and not ops.is_tensor(length)
            and int(length) > self.kernel_length
        ):
            raise ValueError(
                f"Inputs of length {int(length)} exceed `kernel_length` "
                f"({self.kernel_length}) of C_parameterization='c_tilde' "
                "(the S4 code would double its L and convert C~ in place);"
                " build the layer with kernel_length >= the longest input."
                f" Received: length={int(length)}"
            )
        a_bar, b_bar, c_bar = self.discretize()
        return dplr_kernel(a_bar, b_bar, c_bar, length)  # (dirs, H, L)

    def get_config(self):
        config = super().get_config()
        config.update(
            init=self.init,
            dt_min=self.dt_min,
            dt_max=self.dt_max,
            dt_transform=self.dt_transform,
            B_clip=self.B_clip,
            C_parameterization=self.C_parameterization,
            kernel_length=self.kernel_length,
            num_ssms=self.num_ssms,
        )
        return config
