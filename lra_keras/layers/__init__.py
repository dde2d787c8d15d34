"""Backend-agnostic Keras layers for long sequences."""

# A saved run's model was compiled with lra_keras's AdamW: registering it
# here lets `import lra_keras.layers` then `keras.saving.load_model(path)`
# load every file a run writes, as the README says.
from lra_keras import optimizers as _optimizers  # noqa: F401
from lra_keras.layers.attention_kernels import attention
from lra_keras.layers.attention_kernels import chunked_attention
from lra_keras.layers.attention_kernels import reference_attention
from lra_keras.layers.biased_embedding import BiasedEmbedding
from lra_keras.layers.class_token import ClassToken
from lra_keras.layers.conv_block import ConvBlock
from lra_keras.layers.dlr import DLR
from lra_keras.layers.fft_conv import fft_conv
from lra_keras.layers.gated_long_convolution import GatedLongConvolution
from lra_keras.layers.lean_backward import LayerNormalization
from lra_keras.layers.lru import LRU
from lra_keras.layers.masked_batch_normalization import MaskedBatchNormalization
from lra_keras.layers.megalodon import ComplexEMA
from lra_keras.layers.megalodon import MegalodonAttention
from lra_keras.layers.megalodon import MegalodonEncoder
from lra_keras.layers.megalodon import TimestepNorm
from lra_keras.layers.moving_average_gated_attention import MegaEncoder
from lra_keras.layers.moving_average_gated_attention import (
    MovingAverageGatedAttention,
)
from lra_keras.layers.multi_head_ema import MultiHeadEMA
from lra_keras.layers.pixel_encoder import PixelEncoder
from lra_keras.layers.position_embedding import LearnedPositionEmbedding
from lra_keras.layers.position_embedding import SinusoidalPositionEmbedding
from lra_keras.layers.projections import Dense
from lra_keras.layers.projections import EinsumDense
from lra_keras.layers.rotary_attention import RotaryMultiHeadAttention
from lra_keras.layers.rotary_attention import apply_rotary
from lra_keras.layers.rotary_attention import apply_rotary_across_heads
from lra_keras.layers.rtf import RTF
from lra_keras.layers.s4 import S4
from lra_keras.layers.s4d import S4D
from lra_keras.layers.s5 import S5
from lra_keras.layers.scale_normalization import ScaleNormalization
from lra_keras.layers.sequence_norm import NORMS
from lra_keras.layers.sequence_norm import normalize
from lra_keras.layers.sequence_norm import sequence_norm
from lra_keras.layers.sequence_pooling import SequencePooling
from lra_keras.layers.state_space import StateSpaceLayer
from lra_keras.layers.transformer_encoder import TransformerEncoder
