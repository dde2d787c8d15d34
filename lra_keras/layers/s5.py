"""S5: one multi-input multi-output diagonal state-space layer.

References:
- Smith, Warrington, Linderman. "Simplified State Space Layers for Sequence
  Modeling" (S5), ICLR 2023, https://arxiv.org/abs/2208.04933
- Port of lindermanlab/S5 `s5/ssm.py` (S5SSM, ZOH, `apply_ssm`),
  `s5/ssm_init.py` (HiPPO-N eigenvalues, `init_VinvB`, `init_CV`) and the
  block initialisation in `s5/train.py`; the activations of
  `s5/layers.py` (`SequenceLayer`, lines 68-82). S5's parallel scan
  becomes matrix products over chunks of the sequence
  (`ssm_kernels.chunked_recurrence`), the same states:
  `keras.ops.associative_scan` (Keras 3.15) fails under TensorFlow when the
  length is dynamic inside `tf.function` (a Python `bool` of a symbolic
  shape), and its torch version builds buffers with a bare `torch.zeros`.
"""

import math

import keras
import numpy as np
from keras import ops

from lra_keras.layers import hippo
from lra_keras.layers.fft_conv import complex_multiply
from lra_keras.layers.s4d import check_dt_range
from lra_keras.layers.s4d import log_uniform_dt
from lra_keras.layers.ssm_kernels import complex_exp
from lra_keras.layers.ssm_kernels import diagonal_ssm
from lra_keras.layers.state_space import StateSpaceLayer
from lra_keras.layers.state_space import skip_term

C_INITS = ("trunc_standard_normal", "lecun_normal", "complex_normal")
# Truncation at 2 std shrinks a normal's std by this factor (jax/Keras).
TRUNCATED_STD = 0.87962566103423978


@keras.saving.register_keras_serializable(package="lra_keras")
def gelu_tanh(x):
    """GELU in its tanh approximation, S5's activation.

    S5 calls `flax.linen.gelu` (`s5/layers.py` lines 69, 73, 78, 82),
    which is `jax.nn.gelu` with its default `approximate=True` (flax
    0.5.2 `flax/linen/activation.py` line 27, jax 0.3.5
    `jax/_src/nn/functions.py` line 233, the versions pinned in S5's
    `requirements_cpu.txt`): `x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715
    x^3)))`. Keras's `"gelu"` is the exact (erf) one.
    """
    return keras.activations.gelu(x, approximate=True)


def block_hippo_n(state_dim, blocks):
    """S5's block-diagonal HiPPO-N initialisation (numpy, init only).

    Each of the `blocks` blocks holds the eigen-decomposition of the normal
    part S = A + p p^T of a (state_dim / blocks)-sized HiPPO-LegS matrix,
    S = V diag(Lambda) V^*. As in S5 with conjugate symmetry, only the half
    of each block's eigenvalues with negative imaginary part is kept (the
    other half are their conjugates).

    Returns:
        (Lambda, V): complex128 arrays of shapes (state_dim // 2,) and
        (state_dim, state_dim // 2), V block diagonal; V^* is the V^{-1}
        that projects a real B into the eigenbasis.
    """
    size = state_dim // blocks
    a, _ = hippo.legs(size)
    p = np.sqrt(0.5 + np.arange(size))
    s = a + np.outer(p, p)  # normal: -1/2 I + skew-symmetric
    lambda_imag, v = np.linalg.eigh(s * -1j)  # ascending imaginary parts
    half = size // 2
    lam = np.mean(np.diag(s)) + 1j * lambda_imag[:half]  # (size / 2,)
    v = v[:, :half]  # (size, size / 2)
    return np.tile(lam, blocks), np.kron(np.eye(blocks), v)


def complex_matmul(a, b):
    """(a_real + i a_imag) @ (b_real + i b_imag) on (real, imag) pairs."""
    (a_real, a_imag), (b_real, b_imag) = a, b
    return (
        ops.matmul(a_real, b_real) - ops.matmul(a_imag, b_imag),
        ops.matmul(a_real, b_imag) + ops.matmul(a_imag, b_real),
    )


@keras.saving.register_keras_serializable(package="lra_keras")
class S5(StateSpaceLayer):
    """S5: a MIMO diagonal state-space layer over all channels at once.

    Where S4D runs H independent single-input SSMs, S5 runs one SSM with P
    states that reads all H channels and writes all H channels:
    `x_k = Lambda_bar x_{k-1} + B_bar u_k`, `y_k = 2 Re(C x_k) + D u_k`,
    with diagonal complex `Lambda` (P/2 states), `B` (P/2, H), `C` (H, P/2)
    and a timescale `dt` per state. ZOH: `Lambda_bar = exp(Lambda dt)`,
    `B_bar = (Lambda_bar - 1) / Lambda * B`. As in S5's code with
    `conj_sym=True`, P counts the states of the real system: only P/2
    complex states are computed and their conjugates are accounted for by
    `2 Re(.)`. The non-causal layer adds a reverse-time pass with the same
    `Lambda` and `B` and its own `C` (S5's `bidirectional`), both passes
    including the current step. Then GELU and the output activation (see
    `StateSpaceLayer`; S5's `activation_fn` "half_glu1" is
    `output_activation="half_glu"`, "half_glu2" is `"half_glu2"`,
    "full_glu" is `"glu"` and "gelu" is None, each with S5's dropout
    placement, `s5/layers.py` lines 68-82).

    Initialisation as S5: `Lambda` from the eigenvalues of the normal part
    of HiPPO-LegS ("HiPPO-N"), repeated over `num_blocks` blocks of size
    P / num_blocks; `B = V^{-1} B_0` with `B_0` (P, H) lecun normal; `C` per
    `C_init`; `dt` log-uniform in `[dt_min, dt_max]`.

    Computed without a time loop, in place of S5's parallel scan: the
    states of each mode over a chunk of the sequence are `B_bar u` times a
    triangular matrix of powers of `Lambda_bar`, the states carried from
    chunk to chunk by the powers of `Lambda_bar^T`
    (`ssm_kernels.diagonal_ssm`, `ssm_kernels.chunked_recurrence`); the
    reverse-time states through the transposed matrices.

    Paper: Smith, Warrington, Linderman, "Simplified State Space Layers for
    Sequence Modeling", https://arxiv.org/abs/2208.04933

    Args:
        state_dim: int. State size P (S5's `ssm_size_base`): P/2 complex
            states are computed. Must be a multiple of `2 * num_blocks`.
            Defaults to 64.
        num_blocks: int. Number of blocks J of the HiPPO-N
            initialisation (S5's `blocks`). Defaults to 1.
        C_init: how C is initialised (S5's `C_init`, `s5/ssm.py` lines
            171-210, `s5/ssm_init.py` lines 134-168). With `C_0` a complex
            (H, P) matrix whose real and imaginary parts are drawn
            separately, then `C = C_0 V` (V: the (P, P/2) eigenvectors):
            `"trunc_standard_normal"` (S5's default: `lecun_normal` per
            row of shape (1, P, 2), fan-in P: parts truncated normal with
            std 1/sqrt(P)), `"lecun_normal"` (one `lecun_normal` over
            (H, P, 2), fan-in P H: std 1/sqrt(P H)). Since V has
            orthonormal columns, the parts of C keep these stds.
            `"complex_normal"`: C drawn directly in the eigenbasis, parts
            normal with std sqrt(1/2) (`normal(stddev=0.5 ** 0.5)`).
            Each direction has its own C (S5's `C1`, `C2`).
        dt_min: float. Smallest initial step. Defaults to 0.001.
        dt_max: float. Largest initial step. Defaults to 0.1.
        clip_eigs: bool. Clip `Re(Lambda)` at -1e-4 before discretising
            so every mode decays (S5's `clip_eigs`, `s5/ssm.py` lines
            154-155). Defaults to False, as in S5.
        activation: activation after the SSM. Defaults to `gelu_tanh`,
            S5's tanh-approximated GELU.
        causal, output_activation, dropout: see `StateSpaceLayer`. With
            `output_activation=None` this layer applies no dropout: S5's
            "gelu" drops once, after the activation (`s5/layers.py` line
            82), which is where the residual block drops the mixer's
            output.

    Call arguments:
        inputs: tensor (batch, length, hidden_dim).
        padding_mask: optional (batch, length), nonzero at real tokens.
        training: bool, for dropout.

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> layer = S5(state_dim=64, num_blocks=4, causal=False)
    >>> layer(keras.random.normal((2, 1024, 32))).shape
    (2, 1024, 32)
    """

    def __init__(
        self,
        state_dim=64,
        num_blocks=1,
        C_init="trunc_standard_normal",
        dt_min=0.001,
        dt_max=0.1,
        clip_eigs=False,
        causal=True,
        activation=gelu_tanh,
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
        if int(num_blocks) < 1:
            raise ValueError(
                "`num_blocks` must be >= 1. Received: "
                f"num_blocks={num_blocks}"
            )
        if self.state_dim % (2 * int(num_blocks)):
            raise ValueError(
                "`state_dim` must be a multiple of 2 * num_blocks (conjugate "
                f"pairs in every block). Received: state_dim={state_dim}, "
                f"num_blocks={num_blocks}"
            )
        if C_init not in C_INITS:
            raise ValueError(
                f"`C_init` must be one of {C_INITS}. Received: "
                f"C_init={C_init!r}"
            )
        check_dt_range(dt_min, dt_max)
        self.num_blocks = int(num_blocks)
        self.C_init = C_init
        self.dt_min = dt_min
        self.dt_max = dt_max
        self.clip_eigs = bool(clip_eigs)

    def activation_dropout(self):
        # S5's "gelu" (no projection) drops once, where the block does.
        return self.output_activation is not None

    def build_ssm(self, hidden_dim):
        full, half = self.state_dim, self.state_dim // 2
        lam, v = block_hippo_n(full, self.num_blocks)  # (P/2,), (P, P/2)
        v_real = ops.convert_to_tensor(v.real, "float32")
        v_imag = ops.convert_to_tensor(v.imag, "float32")

        def weight(name, shape, value):
            w = self.add_weight(name=name, shape=shape, initializer="zeros")
            w.assign(value)
            return w

        self.Lambda_real = weight("ssm_Lambda_real", (half,), lam.real)
        self.Lambda_imag = weight("ssm_Lambda_imag", (half,), lam.imag)
        self.log_dt = self.add_weight(
            name="ssm_log_dt",
            shape=(half,),
            initializer=log_uniform_dt(self.dt_min, self.dt_max),
        )
        # B_tilde = V^{-1} B_0, V^{-1} = V^* (S is normal: V is orthonormal).
        b0 = keras.initializers.LecunNormal()((full, hidden_dim))  # (P, H)
        v_inv_real = ops.transpose(v_real)  # (P/2, P)
        v_inv_imag = -ops.transpose(v_imag)
        self.B_real = weight(
            "ssm_B_real", (half, hidden_dim), ops.matmul(v_inv_real, b0)
        )
        self.B_imag = weight(
            "ssm_B_imag", (half, hidden_dim), ops.matmul(v_inv_imag, b0)
        )
        shape = (self.directions, hidden_dim, half)
        if self.C_init == "complex_normal":
            # C ~ CN(0, 1): real and imaginary parts with variance 1/2 each,
            # one initializer each (an unseeded Keras initializer called
            # twice returns the same values).
            self.C_real = self.add_weight(
                name="C_real", shape=shape,
                initializer=keras.initializers.RandomNormal(
                    stddev=math.sqrt(0.5)),
            )
            self.C_imag = self.add_weight(
                name="C_imag", shape=shape,
                initializer=keras.initializers.RandomNormal(
                    stddev=math.sqrt(0.5)),
            )
            return
        # A real-shaped C_0 (H, P) for each direction, then C_tilde = C_0 V.
        # S5's lecun normal fans in over (H, P); its "trunc_standard_normal"
        # is a lecun normal per row, fanning in over P only.
        fan_in = full * (hidden_dim if self.C_init == "lecun_normal" else 1)
        c_init = keras.initializers.TruncatedNormal(
            stddev=math.sqrt(1.0 / fan_in) / TRUNCATED_STD
        )
        c0 = c_init((2, self.directions, hidden_dim, full))
        c_real, c_imag = complex_matmul((c0[0], c0[1]), (v_real, v_imag))
        self.C_real = weight("C_real", shape, c_real)  # (dirs, H, P/2)
        self.C_imag = weight("C_imag", shape, c_imag)

    def discretize(self):
        """ZOH: (B_bar, dt Lambda) as (real, imag) pairs."""
        a_real = self.Lambda_real
        if self.clip_eigs:
            a_real = ops.minimum(a_real, -1e-4)
        a_imag = self.Lambda_imag  # (P/2,)
        dt = ops.exp(self.log_dt)  # (P/2,)
        dta_real, dta_imag = a_real * dt, a_imag * dt  # (P/2,)
        # ZOH: Lambda_bar = exp(Lambda dt), B_bar = (Lambda_bar - 1) / Lambda B
        e_real, e_imag = complex_exp(dta_real, dta_imag)  # (P/2,)
        denom = a_real**2 + a_imag**2
        g_real, g_imag = complex_multiply(
            e_real - 1.0, e_imag, a_real / denom, -a_imag / denom
        )  # (P/2,)
        bbar = complex_multiply(
            g_real[:, None], g_imag[:, None], self.B_real, self.B_imag
        )  # (P/2, H)
        return bbar, (dta_real, dta_imag)

    def ssm_convolve(self, u, skip=None):
        bbar, log_z = self.discretize()
        # Conjugate pairs: y = 2 Re(C x)
        y = diagonal_ssm(u, bbar, log_z, (self.C_real, self.C_imag),
                         self.causal)
        y = ops.cast(2.0 * y, self.compute_dtype)  # (batch, L, H)
        return skip_term(y, u, skip)

    def get_config(self):
        config = super().get_config()
        config.update(
            num_blocks=self.num_blocks,
            C_init=self.C_init,
            dt_min=self.dt_min,
            dt_max=self.dt_max,
            clip_eigs=self.clip_eigs,
        )
        return config
