"""Backend-agnostic Keras layers for long sequences."""

from lra_keras.layers.attention_kernels import attention
from lra_keras.layers.attention_kernels import chunked_attention
from lra_keras.layers.attention_kernels import reference_attention
from lra_keras.layers.rotary_attention import RotaryMultiHeadAttention
from lra_keras.layers.rotary_attention import apply_rotary
from lra_keras.layers.sequence_pooling import SequencePooling
from lra_keras.layers.transformer_encoder import TransformerEncoder
