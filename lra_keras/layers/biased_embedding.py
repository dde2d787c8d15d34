"""An embedding with one learned vector added to every token.

A `Dense` layer on one-hot tokens is an embedding table (its kernel's
rows) plus its bias, the same vector for every token: the text encoder
of the S5 code (`nn.Dense(d_model)` on one-hot tokens, lindermanlab/S5
`s5/seq_model.py` line 39, `s5/train_helpers.py` `prep_batch`), in
which the table and the bias are separate parameters, each with its own
Adam step.
"""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="lra_keras")
class BiasedEmbedding(keras.layers.Embedding):
    """`keras.layers.Embedding` plus a learned bias shared by every token.

    `y = E[token] + b`, `b` of shape (output_dim,), started at zeros (flax's
    and PyTorch's Dense bias start at zeros and U(+-1/sqrt(fan_in)); the S5
    code is flax). Equal to a Dense layer with kernel `E` and bias `b` on
    one-hot tokens.

    Args:
        bias_initializer: initializer of `b`. Defaults to `"zeros"`.
        **kwargs: the arguments of `keras.layers.Embedding`.

    Call arguments:
        inputs: int tensor of token ids.

    Returns:
        `inputs.shape + (output_dim,)`.

    Example:
    >>> layer = BiasedEmbedding(20, 8)
    >>> layer(keras.ops.zeros((2, 5), "int32")).shape
    (2, 5, 8)
    """

    def __init__(self, input_dim, output_dim, bias_initializer="zeros",
                 **kwargs):
        super().__init__(input_dim, output_dim, **kwargs)
        self.bias_initializer = keras.initializers.get(bias_initializer)

    def build(self, input_shape=None):
        super().build(input_shape)
        self.bias = self.add_weight(
            name="bias", shape=(self.output_dim,),
            initializer=self.bias_initializer,
        )

    @property
    def variable_serialization_spec(self):
        # Embedding saves only the variables its spec names; the bias goes
        # last in every mode, so a .keras file holds and restores it.
        return {mode: [*names, "bias"] for mode, names
                in super().variable_serialization_spec.items()}

    def call(self, inputs):
        y = super().call(inputs)
        return y + ops.cast(self.bias, y.dtype)

    def get_config(self):
        config = super().get_config()
        config.update(bias_initializer=keras.initializers.serialize(
            self.bias_initializer))
        return config
