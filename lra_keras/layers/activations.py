"""Activation names beyond Keras's own, for the families' `activation` key."""

import keras


@keras.saving.register_keras_serializable(package="lra_keras")
def gelu_tanh(x):
    """GELU by its tanh approximation, `0.5 x (1 + tanh(sqrt(2 / pi) (x +
    0.044715 x^3)))`: JAX's `jax.nn.gelu` by default (`approximate=True`),
    and so the GELU of LRA's flax models (`nn.gelu` in `MlpBlock`,
    `lra_benchmarks/models/layers/common_layers.py` line 157). Keras's
    `"gelu"` is the exact, erf form."""
    return keras.activations.gelu(x, approximate=True)


# The names `get` resolves before Keras's.
ACTIVATIONS = {"gelu_tanh": gelu_tanh}


def get(identifier):
    """`keras.activations.get`, knowing this module's names too."""
    if isinstance(identifier, str) and identifier in ACTIVATIONS:
        return ACTIVATIONS[identifier]
    return keras.activations.get(identifier)
