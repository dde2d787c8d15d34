"""Shared body of the state-space layers (S4D, S4, DLR, S5).

Each SSM layer maps (batch, length, H) to the same shape in the order of the
S4 LRA blocks: zero the padding, convolve every channel with the SSM kernel
(one FFT path, `fft_conv`), add the `D u` skip term, GELU, dropout, then the
output projection (GLU by default). The residual connection and the norm
belong to the model builder. Subclasses only say how the kernel is made.

References:
- S4 LRA blocks (GELU, then a linear layer to 2H followed by GLU):
  https://arxiv.org/abs/2111.00396, and the state-spaces/s4 code base.
- S5 output activations ("full_glu", "half_glu1", "half_glu2"):
  https://arxiv.org/abs/2208.04933 and lindermanlab/S5 `s5/layers.py`
  lines 68-82 (`SequenceLayer.__call__`).
"""

import keras
from keras import ops

from lra_keras.backend_utils import scale_channels
from lra_keras.layers import activations
from lra_keras.layers import lean_backward
from lra_keras.layers.dense_init import check_dense_init
from lra_keras.layers.dense_init import dense_initializers
from lra_keras.layers.fft_conv import fft_conv
from lra_keras.layers.legacy import upgrade_config
from lra_keras.layers.masked_batch_normalization import up_to_longest_row
from lra_keras.layers.projections import Dense
from lra_keras.layers.projections import dense_glu
from lra_keras.schema import READ_PADDING
from lra_keras.schema import Rule

OUTPUT_ACTIVATIONS = ("glu", "half_glu", "half_glu2", "linear", None)


def masked(inputs, padding_mask):
    """Zeroes padded positions so no sequence mixing can read them."""
    if padding_mask is None:
        return inputs
    return inputs * ops.cast(padding_mask, inputs.dtype)[..., None]


def skip_term(x, u, skip):
    """`x + u * skip` (the D term, `skip` (H,) or None: then `x`), the
    product through `backend_utils.scale_channels`."""
    if skip is None:
        return x
    return x + scale_channels(u, skip)


class StateSpaceLayer(keras.layers.Layer):
    """Base class: SSM convolution, D skip, activation, output projection.

    Subclasses implement `build_ssm(hidden_dim)` (create the SSM weights)
    and `ssm_kernel(length)` returning a float32 tensor
    (directions, hidden_dim, length): direction 0 is the causal kernel,
    direction 1 (non-causal layers) the kernel applied to the future,
    lag 1 first. Layers whose convolution is not per-channel (S5) override
    `ssm_convolve(u, skip)` instead, adding `skip_term(y, u, skip)`.

    Args:
        state_dim: int. Size of the state (N in the papers).
        causal: bool. Whether position t reads only inputs <= t. False
            also convolves with a second kernel over the future (the S4
            code base's `bidirectional=True`). Defaults to `True`, as the
            S4 code base.
        activation: activation after the SSM. Defaults to `"gelu"`.
        output_activation: with `x = SSM(u) + D u` and `y =
            dropout(activation(x))`: `"glu"` (linear H -> 2H then GLU on
            y, S4's LRA blocks and S5's "full_glu"), `"half_glu"` (S5's
            "half_glu1": `y * sigmoid(W y)`), `"half_glu2"` (S5's
            "half_glu2", `s5/layers.py` lines 76-80: `x * sigmoid(W y)`,
            the pre-activation x gated, only the gate's input through the
            activation and dropout), `"linear"` (linear H -> H on y) or
            None (y).
        dropout: float. Dropout (see `tie_dropout`) after the
            activation. S5 (`s5/layers.py` lines 68-82) drops
            `activation(x)` and then, for every GLU variant, the gated
            output again: that second dropout is the residual block's
            (`lra_keras.models.families.residual_block`, not tied along
            the sequence there). So "glu", "half_glu" and "half_glu2"
            place dropout as S5 does. With None, S5 ("gelu", line 82)
            drops only once: the `S5` layer then leaves that dropout to
            the block (see `activation_dropout`); the other layers keep
            theirs.
        tie_dropout: bool. True (the default): the layer's dropout masks
            are shared along the sequence, one per channel (the S4 code's
            `DropoutNd`, its layer config passing the model's
            `tie_dropout`, `configs/model/layer/s4.yaml` line 15 at
            d27bdf9). False: one draw per element (`nn.Dropout`: the RTF
            code's `S4Block`, whose layer config passes no `tie_dropout`,
            `experiments/state-spaces/configs/model/layer/rtf.yaml` at
            ruke1ire/RTF 1d9e1e5; `s4block.py` line 118).
        dense_init: `"keras"`, `"torch"` or `"lecun"`: how
            `output_dense` starts (`lra_keras.layers.dense_init`).
            Defaults to `"keras"`.
        dropout_before_activation: bool. Also drop `x` before the
            activation, at the same rate and tied along the sequence, as
            the S4 code's `FFTConv` does before its GELU
            (`src/models/sequence/kernels/fftconv.py` lines 134-137 at
            d27bdf9), in addition to the dropout after it (`S4Block`'s
            `self.drop`, `src/models/sequence/modules/s4block.py` line
            154). Defaults to False.
        read_padding: False, True or "longest". Which padded positions
            the sequence mixing reads as they are. False (the default,
            as the S4 code's `S4Block`, which zeroes the inputs past each
            length, `s4block.py` lines 147-150) zeroes them all first, so
            that a non-causal layer's real outputs do not depend on the
            padding. True: the S5 code, whose scan (both directions) runs
            over the whole padded batch (`s5/layers.py` line 66, no
            mask). "longest": those before the end of the batch's
            longest row, the positions after it zeroed
            (`masked_batch_normalization.up_to_longest_row`; in training
            over every replica's share of a TensorFlow
            `MirroredStrategy`, in inference each replica's own, as
            `RotaryMultiHeadAttention(mask_semantics="longest")`): the
            NTFS code's DLR (`DSS.forward`, IdoAmos/not-from-scratch
            `src/models/sequence/ss/dss.py` lines 703-748, the `lengths`
            absorbed unread) on the S4 loaders' batches, padded to their
            longest row.
    """

    def __init__(
        self,
        state_dim=64,
        causal=True,
        activation="gelu",
        output_activation="glu",
        dropout=0.0,
        dense_init="keras",
        dropout_before_activation=False,
        read_padding=False,
        tie_dropout=True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.dense_init = check_dense_init(dense_init)
        if int(state_dim) < 1:
            raise ValueError(
                f"`state_dim` must be >= 1. Received: state_dim={state_dim}"
            )
        if output_activation not in OUTPUT_ACTIVATIONS:
            raise ValueError(
                f"`output_activation` must be one of {OUTPUT_ACTIVATIONS}. "
                f"Received: output_activation={output_activation!r}"
            )
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(
                f"`dropout` must be in [0, 1). Received: dropout={dropout}"
            )
        self.state_dim = int(state_dim)
        self.causal = bool(causal)
        self.activation = activations.get(activation)
        self.output_activation = output_activation
        self.dropout = float(dropout)
        self.dropout_before_activation = bool(dropout_before_activation)
        if not Rule(object, choices=READ_PADDING).accepts(read_padding):
            raise ValueError(
                "`read_padding` must be False, True or \"longest\". "
                f"Received: read_padding={read_padding!r}"
            )
        self.read_padding = read_padding
        self.tie_dropout = bool(tie_dropout)

    # Whether `D u` is added to the SSM's output (RTF keeps its feedthrough
    # in the kernel instead).
    skip_connection = True

    def add_weight(self, *args, autocast=False, **kwargs):
        """Keras's `add_weight`, not autocast by default: under a mixed
        precision policy the SSM parameters are read in float32, so the
        kernels (and S5's and the LRU's recurrences) are computed in
        float32; the layer's inputs and sublayers keep the compute dtype.
        """
        return super().add_weight(*args, autocast=autocast, **kwargs)

    @property
    def directions(self):
        return 1 if self.causal else 2

    def activation_dropout(self):
        """Whether `dropout` follows the activation inside this layer."""
        return True

    def build_ssm(self, hidden_dim):
        raise NotImplementedError

    def ssm_kernel(self, length):
        raise NotImplementedError

    def ssm_convolve(self, u, skip=None):
        """Per-channel SSM convolution of u (batch, length, H), plus `skip
        * u` for the (H,) weights `skip` (the D term) when given.

        The skip is added to the causal kernel's lag 0, so that the
        convolution computes it: the same sum, without the two passes
        over the activations that `x + u * D` takes forwards and the
        three (the sum over batch and time of D's gradient among them)
        backwards, each a kernel of its own under TensorFlow and PyTorch.
        A 4-block DLR or S4D step at L = 1024, batch 16, width 128 took
        20-70 MiB less memory under both, its time the same within this
        2-core machine's noise (`benchmarks/mixers.py`, two runs each).
        """
        length = ops.shape(u)[1]
        # (directions, H, L), unstacked rather than indexed, and the skip
        # added through a one-hot lag rather than at a slice: TensorFlow's
        # gradient of a strided slice (`StridedSliceGrad`) took 0.6-1.2 ms
        # a call on a DLR block's (2, 128, 1024) kernels, three a block,
        # where the unstack's (a stack) and the product's cost little
        # (`docs/results/tensorflow_graph_epyc/`).
        kernels = ops.unstack(self.ssm_kernel(length), axis=0)
        causal = kernels[0]
        if skip is not None:
            lag_zero = ops.cast(ops.arange(length) == 0, causal.dtype)
            causal = causal + ops.cast(skip, causal.dtype)[:, None] * lag_zero
        return fft_conv(u, causal, None if self.causal else kernels[1])

    def build(self, input_shape):
        hidden_dim = input_shape[-1]
        if hidden_dim is None:
            raise ValueError(
                "The last input dimension must be known. Received: "
                f"input_shape={input_shape}"
            )
        self.hidden_dim = int(hidden_dim)
        self.build_ssm(self.hidden_dim)
        self.D = None
        if self.skip_connection:
            self.D = self.add_weight(
                name="D",
                shape=(self.hidden_dim,),
                initializer=keras.initializers.RandomNormal(stddev=1.0),
            )
        dtype = self.dtype_policy
        # Dropout tied along the sequence (the S4 code base's DropoutNd)
        # or not.
        noise_shape = (None, 1, None) if self.tie_dropout else None
        self.dropout_layer = keras.layers.Dropout(
            self.dropout, noise_shape=noise_shape, dtype=dtype
        )
        self.pre_activation_dropout_layer = None
        if self.dropout_before_activation:
            self.pre_activation_dropout_layer = keras.layers.Dropout(
                self.dropout, noise_shape=noise_shape, dtype=dtype
            )
        width = {"glu": 2 * self.hidden_dim, "half_glu": self.hidden_dim,
                 "half_glu2": self.hidden_dim,
                 "linear": self.hidden_dim}.get(self.output_activation)
        self.output_dense = None
        if width is not None:
            self.output_dense = Dense(
                width, name="output_dense", dtype=dtype,
                **dense_initializers(self.dense_init, self.hidden_dim),
            )
            self.output_dense.build((*input_shape[:-1], self.hidden_dim))
        self.built = True

    def call(self, inputs, padding_mask=None, training=None):
        if self.read_padding == "longest" and padding_mask is not None:
            padding_mask = up_to_longest_row(
                padding_mask, across_replicas=bool(training))
        u = (inputs if self.read_padding is True
             else masked(inputs, padding_mask))
        x = self.ssm_convolve(u, self.D)
        # A dropout of rate 0 returns its input: not called, since a Keras
        # layer call costs about 60 us under PyTorch (4 a quick S4D step).
        if (self.pre_activation_dropout_layer is not None
                and self.pre_activation_dropout_layer.rate > 0):
            x = self.pre_activation_dropout_layer(x, training=training)
        y = lean_backward.activation(self.activation)(x)
        if self.activation_dropout() and self.dropout_layer.rate > 0:
            y = self.dropout_layer(y, training=training)
        if self.output_activation == "half_glu2":
            # S5 half_glu2 (s5/layers.py:76-80): x1 = drop(gelu(x)),
            # x * sigmoid(W x1); x itself is neither activated nor dropped.
            return x * ops.sigmoid(self.output_dense(y))
        if self.output_activation == "glu":
            y = dense_glu(self.output_dense, y)
        elif self.output_activation == "half_glu":
            y = y * ops.sigmoid(self.output_dense(y))
        elif self.output_activation == "linear":
            y = self.output_dense(y)
        return y

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            state_dim=self.state_dim,
            causal=self.causal,
            activation=keras.activations.serialize(self.activation),
            output_activation=self.output_activation,
            dropout=self.dropout,
            dense_init=self.dense_init,
            dropout_before_activation=self.dropout_before_activation,
            read_padding=self.read_padding,
            tie_dropout=self.tie_dropout,
        )
        return config

    @classmethod
    def from_config(cls, config):
        return super().from_config(upgrade_config(config))
