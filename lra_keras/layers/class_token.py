"""A learned classification token prepended to a sequence."""

import keras
from keras import ops


def with_class_position(padding_mask):
    """A (batch, length) padding mask with a real position 0 in front:
    the mask of a sequence after `ClassToken`."""
    return ops.pad(ops.cast(padding_mask, "bool"), ((0, 0), (1, 0)),
                   constant_values=True)


@keras.saving.register_keras_serializable(package="lra_keras")
class ClassToken(keras.layers.Layer):
    """Prepends one learned vector (a CLS token) to every sequence.

    LRA's encoders classify from such a token: with `classifier_pool =
    "CLS"` a parameter `cls` of shape (1, 1, emb_dim), started at zeros, is
    tiled over the batch and concatenated before the embedded tokens, the
    padding mask gains a real position in front, and position embeddings
    are added afterwards, so the token sits at position 0 and the first
    token at position 1 (google-research/long-range-arena
    `lra_benchmarks/models/transformer/transformer.py` lines 148-156; the
    same lines in every xformer's encoder). The classifier then pools
    position 0 (`common_layers.classifier_head`, `pooling_mode == "CLS"`).

    Args:
        initializer: initializer of the token. Defaults to `"zeros"` (LRA's
            `nn.initializers.zeros`).

    Call arguments:
        inputs: tensor (batch, length, dim).
        padding_mask: optional (batch, length) tensor, nonzero at real
            positions. Without it every position is real.

    Returns:
        `(outputs, padding_mask)`: (batch, length + 1, dim) with the token
        at position 0, and the (batch, length + 1) bool mask with position
        0 real.

    Example:
    >>> x, mask = ClassToken()(keras.ops.ones((2, 5, 3)))
    >>> x.shape, mask.shape
    ((2, 6, 3), (2, 6))
    """

    def __init__(self, initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        self.initializer = keras.initializers.get(initializer)

    def build(self, input_shape):
        self.token = self.add_weight(
            shape=(input_shape[-1],), initializer=self.initializer,
            name="token",
        )
        self.built = True

    def call(self, inputs, padding_mask=None):
        batch = ops.shape(inputs)[0]
        token = ops.cast(self.token, inputs.dtype)
        token = ops.broadcast_to(token[None, None, :],
                                 (batch, 1, inputs.shape[-1]))
        outputs = ops.concatenate([token, inputs], axis=1)
        if padding_mask is None:
            padding_mask = ops.ones(ops.shape(inputs)[:2], dtype="bool")
        return outputs, with_class_position(padding_mask)

    def compute_output_shape(self, inputs_shape, padding_mask_shape=None):
        length = None if inputs_shape[1] is None else inputs_shape[1] + 1
        return ((inputs_shape[0], length, inputs_shape[-1]),
                (inputs_shape[0], length))

    def get_config(self):
        config = super().get_config()
        config.update(
            initializer=keras.initializers.serialize(self.initializer))
        return config
