"""A LayerNorm, a softmax, a GELU and a GLU whose backward keeps one
activation-sized tensor.

XLA's CPU backend keeps more for the backward pass than the gradient
needs. Differentiated by JAX, `keras.ops.layer_normalization` (`x *
(rsqrt(var + eps) * gamma) + (beta - mean * rsqrt(var + eps) * gamma)`)
and `keras.ops.softmax` each kept three activation-sized buffers live
from the forward to the backward pass: for the norm the inverse
deviation and `gamma` each broadcast to the activations' shape and the
normalised input; for the softmax the shifted exponentials, the
broadcast reciprocal of their sum and the output. In the 4-block rotary
Transformer of `benchmarks/reference_speed.py` (width 128, L = 1024,
batch 16) the eight norms held 28 of the 104 activation-sized buffers
live at the step's peak of 828 MiB; in its MEGA stack each block held
three (16, 1024, 1024) score-sized ones (the compiled steps' buffer
assignments, 2026-12-04). PyTorch's kernels keep the input and two
numbers per row (`layer_norm`) or the output alone (`softmax`), as does
TensorFlow's softmax gradient.

Here each is computed with a custom gradient whose residuals are pinned
by `backend_utils.barrier` (under JAX; elsewhere the barrier is the
identity):

- `LayerNormalization` keeps the normalised input and the inverse
  deviation per row:

      x_hat = (x - mean) r,  r = 1 / sqrt(var + eps),  y = x_hat gamma + beta
      dgamma = sum(dy x_hat),  dbeta = sum(dy)  (over every row)
      dx = r (g - mean(g) - x_hat mean(g x_hat)),  g = dy gamma

  Under PyTorch, where Keras already calls `torch.nn.functional.
  layer_norm`, and for what the custom gradient does not cover (several
  axes, `rms_scaling`, no `gamma` or no `beta`), it is `keras.layers.
  LayerNormalization` unchanged. Its weights, names and configuration are
  that layer's, so checkpoints load either way.
- `softmax` keeps its output y: dx = y (dy - sum(dy y)). Under
  TensorFlow and PyTorch, whose own gradients keep the output alone, it
  is `keras.ops.softmax`.
- `gelu` (Keras's exact one) and `glu` keep their input: XLA also kept
  the GELU's erfc and the GLU's sigmoid, two more activation-sized
  buffers a state-space block (the DLR stack at L = 4096 under JAX:
  temporaries 1,878 -> 1,686 MiB). Under PyTorch, Keras's; under
  TensorFlow, this `gelu` (fewer passes than TensorFlow's own gradient)
  and Keras's `glu` (this one was no faster there: 6.6-7.5 against
  6.1-7.2 ms forward and backward on (16, 1024, 256)). The state-space
  layers call them (`activation` swaps Keras's `gelu` for this one,
  their configurations unchanged).
"""

import math

import keras
from keras import ops

from lra_keras.backend_utils import barrier

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _layer_norm(x, gamma, beta, epsilon):
    """LayerNorm over the last axis, in float32 at least, with the
    gradient of the module docstring. Returns the input's dtype."""
    dtype = keras.backend.standardize_dtype(x.dtype)
    compute = keras.backend.result_type(dtype, "float32")

    @ops.custom_gradient
    def norm(x, gamma32, beta32):
        x32 = ops.cast(x, compute)
        mean = ops.mean(x32, axis=-1, keepdims=True)
        centred = x32 - mean
        r = ops.rsqrt(ops.mean(ops.square(centred), axis=-1, keepdims=True)
                      + epsilon)
        x_hat = centred * r
        y = ops.cast(x_hat * gamma32 + beta32, dtype)
        kept = barrier(x_hat, r)

        def grad(*args, upstream=None):
            dy = ops.cast(args[0] if upstream is None else upstream, compute)
            # gamma after dy: XLA would broadcast it in the forward pass.
            dy, gain, x_hat, r = barrier(dy, gamma32, *kept)
            rows = tuple(range(len(dy.shape) - 1))
            g = dy * gain
            dx = r * (g - ops.mean(g, axis=-1, keepdims=True)
                      - x_hat * ops.mean(g * x_hat, axis=-1, keepdims=True))
            return (ops.cast(dx, dtype), ops.sum(dy * x_hat, axis=rows),
                    ops.sum(dy, axis=rows))

        return y, grad

    # Cast outside: TensorFlow's custom gradient asks for the gradients of
    # the variables read inside it by name.
    return norm(x, ops.cast(gamma, compute), ops.cast(beta, compute))


def _lean(x, forward, backward, keep_output=False):
    """`forward(x)` with a custom gradient `backward(dy, kept)` (under JAX,
    and for `gelu` under TensorFlow too), where `kept` is x, or with
    `keep_output` the output, pinned (with the upstream gradient) by
    `barrier`: the one tensor the backward keeps."""

    @ops.custom_gradient
    def lean(x):
        y = forward(x)
        (kept,) = barrier(y if keep_output else x)

        def grad(*args, upstream=None):
            dy, held = barrier(args[0] if upstream is None else upstream,
                               kept)
            return backward(dy, held)

        return y, grad

    return lean(x)


def softmax(x, axis=-1):
    """`keras.ops.softmax(x, axis)` whose backward keeps the output alone
    (see the module docstring)."""
    if keras.backend.backend() != "jax":
        return ops.softmax(x, axis=axis)

    def backward(dy, y):
        return y * (dy - ops.sum(dy * y, axis=axis, keepdims=True))

    return _lean(x, lambda x: ops.softmax(x, axis=axis), backward,
                 keep_output=True)


def gelu(x):
    """Keras's exact `gelu`, `x Phi(x)`, whose backward keeps its input
    alone: d gelu / dx = Phi(x) + x phi(x), recomputed from x. Under JAX
    XLA kept x and the erfc of the forward pass (two activation-sized
    buffers a block). PyTorch runs Keras's, its own fused kernels.

    `Phi(x)` is `(1 + erf(x / sqrt 2)) / 2`, PyTorch's formula for its
    exact GELU and its backward (so the references' too), where
    `jax.nn.gelu` and `tf.nn.gelu` take `erfc(-x / sqrt 2) / 2`. In
    float32 both are within 2e-7 of float64's `Phi` on [-10, 10] (erfc
    8e-8, erf 1.7e-7), and XLA evaluates erf as one rational function
    where its erfc takes two, an exponential and two divisions. In the
    state-space layers the activation meets the convolution's
    transposes, and XLA fuses it into them, evaluated per element of a
    strided read: the forward and backward fusions of a (16, 1024, 128)
    block took 4.4 and 15.5 ms with erfc, 1.6 and 8.9 with erf
    (`docs/results/gelu_erf_xeon/`). TensorFlow's graph (without XLA)
    runs each operation as a pass of its own: forward and backward on
    (16, 1024, 128) in a `tf.function`, this took 5.0-5.4 ms (7.3 in one
    of four runs), Keras's `gelu` differentiated by TensorFlow 7.9-8.9
    ms, the erf form differentiated by TensorFlow 6.2-6.6 ms
    (`docs/results/gelu_tensorflow_epyc/`)."""
    if keras.backend.backend() == "torch":
        return keras.activations.gelu(x, approximate=False)

    def cdf(x32):
        return 0.5 + 0.5 * ops.erf(x32 * _SQRT_HALF)

    def forward(x):
        x32 = ops.cast(x, "float32")
        return ops.cast(x32 * cdf(x32), x.dtype)

    def backward(dy, x):
        x32 = ops.cast(x, "float32")
        pdf = ops.exp(-0.5 * ops.square(x32)) * _INV_SQRT_2PI
        return dy * ops.cast(cdf(x32) + x32 * pdf, dy.dtype)

    return _lean(x, forward, backward)


def glu(x, axis=-1):
    """`keras.ops.glu(x, axis)`, `a sigmoid(b)` of x's halves, whose
    backward keeps x alone (XLA kept the sigmoid too). TensorFlow and
    PyTorch run Keras's."""
    if keras.backend.backend() != "jax":
        return ops.glu(x, axis=axis)

    def backward(dy, x):
        a, b = ops.split(x, 2, axis=axis)
        gate = ops.sigmoid(b)
        return ops.concatenate(
            [dy * gate, dy * a * gate * (1.0 - gate)], axis=axis)

    return _lean(x, lambda x: ops.glu(x, axis=axis), backward)


def activation(fn):
    """`fn`, or its lean version above where there is one (Keras's exact
    `gelu`): for the layers that keep Keras's activation as their
    configuration and call this."""
    if fn is keras.activations.gelu:
        return gelu
    return fn


@keras.saving.register_keras_serializable(package="lra_keras")
class LayerNormalization(keras.layers.LayerNormalization):
    """`keras.layers.LayerNormalization` with a backward pass that keeps
    the normalised input and one number per row (see the module
    docstring); same arguments, weights and outputs."""

    def call(self, inputs):
        if not self._takes_custom_gradient(inputs):
            return super().call(inputs)
        outputs = _layer_norm(inputs, self.gamma, self.beta, self.epsilon)
        return ops.cast(outputs, self.compute_dtype)

    def _takes_custom_gradient(self, inputs):
        axes = self.axis if isinstance(self.axis, (list, tuple)) else [
            self.axis]
        last = len(inputs.shape) - 1
        return (keras.backend.backend() != "torch" and not self.rms_scaling
                and self.gamma is not None and self.beta is not None
                and len(axes) == 1 and axes[0] % len(inputs.shape) == last)
