"""RTF: the state-space layer as a rational transfer function.

References:
- Parnichkun et al. "State-Free Inference of State-Space Models: The
  Transfer Function Approach" (RTF), ICML 2024,
  https://arxiv.org/abs/2405.06147.
- The authors' code, ruke1ire/RTF at 1d9e1e5: `rtf.py` (`RTF.get_k`
  lines 81-97, `zeros_init`, the bidirectional kernel of `forward`) and
  `experiments/state-spaces/src/models/sequence/kernels/rtf_wrapper.py`
  (the activation after the convolution, no separate D).

A linear time-invariant SSM of order N is, whatever its state, the
transfer function

    H(z) = h_0 + (b_1 z^-1 + ... + b_N z^-N) / (1 + a_1 z^-1 + ... + a_N z^-N)

and its impulse response folded modulo P (what a P-periodic convolution
sees) is the inverse DFT of H at the P-th roots of unity: one FFT of the
coefficients, O(P log P), no state of size N. The numerator is the
truncated one (like S4's C~, it absorbs the `(I - A^P)` factor), so the
kernel is `irfft(rfft([0, b]) / rfft([1, a]) + h_0)`, its first L taps.
"""

import keras
from keras import ops

from lra_keras.backend_utils import irfft
from lra_keras.backend_utils import rfft
from lra_keras.layers.ssm_kernels import first_taps
from lra_keras.layers.state_space import StateSpaceLayer


def transfer_function_kernel(numerator, denominator, feedthrough, length,
                             points):
    """The first `length` taps of `irfft(rfft([0, b]) / rfft([1, a]) +
    h_0)` over `points` points.

    Args:
        numerator: tensor (..., N): b_1 ... b_N.
        denominator: tensor (..., N): a_1 ... a_N (broadcastable to the
            numerator).
        feedthrough: tensor (...,): h_0.
        length: int or scalar tensor L <= points.
        points: int or scalar tensor P > N: the FFT length (RTF's
            `trunc_len`); the kernel is the impulse response folded
            modulo P.

    Returns:
        Tensor (..., L) float32.
    """
    b = ops.cast(numerator, "float32")
    a = ops.cast(denominator, "float32")
    b = ops.concatenate([ops.zeros_like(b[..., :1]), b], axis=-1)
    a = ops.concatenate([ops.ones_like(a[..., :1]), a], axis=-1)
    # The spectra as the backend's own complex tensors (`backend_utils.
    # rfft`), and a product with the reciprocal of the denominator's
    # spectrum, which the channels share: on real and imaginary parts
    # the quotient took a dozen operations each way over every channel's
    # spectrum, and TensorFlow's gradient of a complex quotient divides
    # twice over them (`grad/RealDiv`, 17 ms a layer at L = 16,384,
    # batch 1). Paired in one process on 2 cores
    # (docs/results/rtf_complex_kernel_epyc/), the kernel of a layer of
    # width 128, forward and backward at L = 16,384, ran 1.48x as fast
    # as on the parts under TensorFlow, 1.42x under JAX, 1.95x under
    # PyTorch; the 4-block RTF step at 16K (batch 1) 1.11x, 1.10x, 1.34x.
    spectrum = rfft(b, points) * (1.0 / rfft(a, points))  # broadcast
    spectrum = spectrum + ops.cast(
        ops.cast(feedthrough, "float32")[..., None], spectrum.dtype)
    kernel = irfft(spectrum, points)
    return first_taps(kernel, length)


@keras.saving.register_keras_serializable(package="lra_keras")
class RTF(StateSpaceLayer):
    """Rational-transfer-function SSM: per-channel kernels from one FFT.

    Every channel has a numerator `b~` (N taps) and a feedthrough `h_0`;
    channels share `num_denominators` denominators `a` (N taps each;
    channel c uses denominator `c // (H / num_denominators)`, the RTF
    code's `repeat(..., "D N -> (D R) N")`). The kernel is
    `transfer_function_kernel` over `truncation` points (None: the
    input's length), applied with the shared `fft_conv`; then the
    activation and output projection of `StateSpaceLayer`, without its
    `D u` term (`h_0` is the feedthrough, as in the RTF code).
    `causal=False` adds a second set of coefficients for the future; its
    kernel's first tap acts at lag 1, as the RTF code flips it into the
    upper half of its 2L-point convolution.

    Initialisation as the RTF code's default `init="zeros"`: `a = 0` and
    `b~ = 0` (the layer starts as `h_0 u`, every pole at the origin),
    `h_0 ~ N(0, 1)`.

    Args:
        state_dim: int. The order N. Defaults to 64.
        num_denominators: int or None. Distinct denominators (RTF's
            `num_a`); None: one per channel. Must divide the width.
        truncation: int or None. FFT points P (RTF's `trunc_len`, the
            task's maximum length in its configs); None: the input's
            length. Must exceed N and be at least the input's length.
        causal, activation, output_activation, dropout, tie_dropout,
            dense_init: see `StateSpaceLayer` (the RTF code's dropout is
            untied, `tie_dropout=False`; the layer keeps the base's
            default).

    Example:
    >>> layer = RTF(state_dim=4, num_denominators=1, causal=False)
    >>> layer(keras.random.normal((2, 1024, 32))).shape
    (2, 1024, 32)
    """

    skip_connection = False

    def __init__(self, state_dim=64, num_denominators=None, truncation=None,
                 causal=True, activation="gelu", output_activation="glu",
                 dropout=0.0, **kwargs):
        super().__init__(
            state_dim=state_dim, causal=causal, activation=activation,
            output_activation=output_activation, dropout=dropout, **kwargs,
        )
        if num_denominators is not None and int(num_denominators) < 1:
            raise ValueError(
                "`num_denominators` must be None or >= 1. Received: "
                f"num_denominators={num_denominators}"
            )
        if truncation is not None and int(truncation) <= self.state_dim:
            raise ValueError(
                "`truncation` must exceed `state_dim` (RTF: trunc_len > "
                f"state_size). Received: truncation={truncation}, "
                f"state_dim={state_dim}"
            )
        self.num_denominators = (None if num_denominators is None
                                 else int(num_denominators))
        self.truncation = None if truncation is None else int(truncation)

    def build_ssm(self, hidden_dim):
        shared = self.num_denominators or hidden_dim
        if hidden_dim % shared:
            raise ValueError(
                "`num_denominators` must divide the width. Received: "
                f"num_denominators={shared}, width={hidden_dim}"
            )
        dirs, n = self.directions, self.state_dim
        self.denominator = self.add_weight(
            name="ssm_denominator", shape=(dirs, shared, n),
            initializer="zeros")
        self.numerator = self.add_weight(
            name="ssm_numerator", shape=(dirs, hidden_dim, n),
            initializer="zeros")
        self.feedthrough = self.add_weight(
            name="ssm_feedthrough", shape=(dirs, hidden_dim),
            initializer=keras.initializers.RandomNormal(stddev=1.0))

    def ssm_kernel(self, length):
        if (self.truncation is not None and isinstance(length, int)
                and length > self.truncation):
            raise ValueError(
                f"RTF's kernel covers `truncation`={self.truncation} "
                f"positions; the input has {length}."
            )
        dirs, hidden, n = self.numerator.shape
        shared = self.denominator.shape[1]
        points = self.truncation
        if points is None:
            points = ops.maximum(length, self.state_dim + 1) if not (
                isinstance(length, int)) else max(length, self.state_dim + 1)
        # Channel c uses denominator c // (H / shared): the channels as
        # (shared, H / shared), so that each denominator is transformed
        # once and its spectrum broadcast, where the RTF code's
        # `repeat` (`get_k`, line 92) comes after its `rfft` (line 91).
        # Repeating the coefficients first transformed H rows in place of
        # `shared` (2 of a step's 12 transforms at 16K, batch 1, with
        # one denominator; `docs/results/batch_one_sums_epyc/`).
        kernel = transfer_function_kernel(
            ops.reshape(self.numerator, (dirs, shared, -1, n)),
            self.denominator[:, :, None, :],
            ops.reshape(self.feedthrough, (dirs, shared, -1)),
            length, points)
        # (dirs, H, L): direction 1 is applied from lag 1 on (fft_conv)
        return ops.reshape(kernel, (dirs, hidden, -1))

    def get_config(self):
        config = super().get_config()
        config.update(num_denominators=self.num_denominators,
                      truncation=self.truncation)
        return config
