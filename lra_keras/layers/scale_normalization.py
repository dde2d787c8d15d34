"""ScaleNorm: each vector divided by its root mean square, one learned gain.

References:
- Nguyen, Salazar. "Transformers without Tears: Improving the
  Normalization of Self-Attention", 2019, https://arxiv.org/abs/1910.05895
  (ScaleNorm, there with the L2 norm and a gain g = sqrt(d)).
- The MEGA code's `ScaleNorm` (facebookresearch/mega
  `fairseq/modules/scale_norm.py`), the `--norm-type 'scalenorm'` of its
  Text and AAN runs (`examples/mega/README.lra.md` lines 52, 70), which
  `SequenceNorm` builds with `eps=1e-5` (`fairseq/modules/
  sequence_norm.py` lines 15, 19-20): `scalar * x * rsqrt(mean(x^2) +
  eps)`, the mean over the last axis, `scalar` one number started at 1.
"""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="lra_keras")
class ScaleNormalization(keras.layers.Layer):
    """Divides every vector by its root mean square; one learned gain.

    `y = g * x / sqrt(mean(x^2) + epsilon)`, the mean over the last axis
    and `g` a single scalar shared by every channel (the MEGA code's
    `ScaleNorm`, see the module docstring). Unlike LayerNorm it neither
    centres the vector nor learns a gain per channel. Each position is
    normalised alone, so padding changes no real position. The statistic is
    computed in float32 under mixed precision.

    Args:
        epsilon: float > 0 added to the mean square. Defaults to 1e-5
            (MEGA's `SequenceNorm`).
        scale: bool. Learn the gain `g` (initialised to 1); False fixes it
            at 1. Defaults to True.

    Call arguments:
        inputs: tensor (..., channels).

    Returns:
        A tensor of the inputs' shape.

    Example:
    >>> norm = ScaleNormalization()
    >>> norm(keras.random.normal((2, 10, 8))).shape
    (2, 10, 8)
    """

    def __init__(self, epsilon=1e-5, scale=True, **kwargs):
        super().__init__(**kwargs)
        if not float(epsilon) > 0:
            raise ValueError(
                f"`epsilon` must be > 0. Received: epsilon={epsilon}"
            )
        self.epsilon = float(epsilon)
        self.scale = bool(scale)
        self.supports_masking = True

    def build(self, input_shape):
        self.gain = (
            self.add_weight(name="gain", shape=(), initializer="ones")
            if self.scale else None
        )
        self.built = True

    def call(self, inputs):
        x = ops.cast(inputs, "float32")
        mean_square = ops.mean(ops.square(x), axis=-1, keepdims=True)
        y = x * ops.rsqrt(mean_square + self.epsilon)  # (..., channels)
        if self.gain is not None:
            y = y * ops.cast(self.gain, "float32")
        return ops.cast(y, self.compute_dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(epsilon=self.epsilon, scale=self.scale)
        return config
