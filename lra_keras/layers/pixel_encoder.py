"""A linear encoder of grey values, the pixel tasks' input layer in the S4,
S5 and MEGA code.

References:
- state-spaces/s4 (commit d27bdf9): `encoder: linear`
  (`configs/pipeline/cifar.yaml`, extended by `pathfinder.yaml` and
  `pathx.yaml`), `nn.Linear(1, d_model)` on the normalised value
  (`src/dataloaders/basic.py`, CIFAR grayscale: `Normalize(mean=122.6 /
  255, std=61.0 / 255)`; `src/dataloaders/lra.py`, PathFinder:
  `Normalize(mean=0.5, std=0.5)`).
- lindermanlab/S5: `nn.Dense(d_model)` (`s5/seq_model.py` line 39) on the
  same normalised value (S5's copies of the S4 data loaders).
- facebookresearch/mega: `RealNumberEmbedding`
  (`fairseq/modules/real_number_embedding.py` lines 12-27) on `(pixel /
  255 - mean) / std` (`pixel_sequence_dataset.py` lines 44-45).
- IdoAmos/not-from-scratch (NTFS), masked self-pretraining of the pixel
  tasks: the input `[value * (1 - mask), mask]` into an `nn.Linear(2,
  d_model)` (`src/dataloaders/base.py` lines 443-445), whose mask column
  `train.py` drops when fine-tuning starts from it (lines 865-872):
  `mask_input="channel"`.
"""

import keras
from keras import ops

# Weight and bias initialisation of each source's linear layer, given its
# fan-in (1 for the value alone, 2 with NTFS's mask channel).
INITIALIZERS = {
    # PyTorch's nn.Linear: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for both.
    "torch": (lambda fan_in: keras.initializers.RandomUniform(
        -fan_in ** -0.5, fan_in ** -0.5),
        lambda fan_in: keras.initializers.RandomUniform(
            -fan_in ** -0.5, fan_in ** -0.5)),
    # flax's nn.Dense: lecun_normal (a normal truncated at 2 std, rescaled
    # to std 1/sqrt(fan_in)), zero bias.
    "lecun": (lambda fan_in: keras.initializers.TruncatedNormal(
        stddev=fan_in ** -0.5 / 0.87962566103423978),
        lambda fan_in: keras.initializers.Zeros()),
    # MEGA's RealNumberEmbedding: N(0, 1) weight, N(0, 0.1) bias.
    "mega": (lambda fan_in: keras.initializers.RandomNormal(stddev=1.0),
             lambda fan_in: keras.initializers.RandomNormal(stddev=0.1)),
}
MASK_INPUTS = ("embedding", "channel")


@keras.saving.register_keras_serializable(package="lra_keras")
class PixelEncoder(keras.layers.Layer):
    """Grey-value ids -> `((id / max_value - mean) / std) * w + b`.

    The pixel tasks' ids are the grey values `0..max_value`; an id above
    `max_value` is the mask token of the masking techniques
    (`lra_keras.tasks`, the image task's `mask_id`). How it is read is
    `mask_input`:

    - `"embedding"`: a learned vector `m` (initially zero) replaces the
      row: the S4, S5 and MEGA encoders have no mask token, so this vector
      is this library's;
    - `"channel"`: NTFS's masked self-pretraining input, a second input
      channel flagging the mask into a Linear(2, D), the value zeroed
      where masked: a masked pixel gives `m + b`, any other `value * w +
      b`; `w`, `b` and `m` start as that Linear's columns and bias (fan-in
      2: `U(+-1/sqrt(2))` under `"torch"`). Fine-tuning from it keeps `w`
      and `b`, as NTFS's `train.py` drops the mask column.

    Args:
        hidden_dim: int. Output width D.
        mean: float. Mean of the normalisation, on the [0, 1] scale.
        std: float > 0. Its standard deviation, on the [0, 1] scale.
        max_value: int. The largest grey value. Defaults to 255.
        initializer: `"torch"`, `"lecun"` or `"mega"`: how `w` and `b`
            start (`INITIALIZERS`).
        mask_input: `"embedding"` or `"channel"` (above). Defaults to
            `"embedding"`.

    Call arguments:
        token_ids: int tensor (batch, length).

    Returns:
        Tensor (batch, length, hidden_dim).

    Example:
    >>> encoder = PixelEncoder(8, mean=0.5, std=0.5)
    >>> encoder(keras.ops.ones((2, 1024), "int32")).shape
    (2, 1024, 8)
    """

    def __init__(self, hidden_dim, mean=0.5, std=0.5, max_value=255,
                 initializer="torch", mask_input="embedding", **kwargs):
        super().__init__(**kwargs)
        if int(hidden_dim) < 1:
            raise ValueError(
                f"`hidden_dim` must be >= 1. Received: hidden_dim={hidden_dim}"
            )
        if not float(std) > 0 or int(max_value) < 1:
            raise ValueError(
                "`std` must be positive and `max_value` >= 1. Received: "
                f"std={std}, max_value={max_value}"
            )
        if initializer not in INITIALIZERS:
            raise ValueError(
                f"`initializer` must be one of {list(INITIALIZERS)}. "
                f"Received: initializer={initializer!r}"
            )
        if mask_input not in MASK_INPUTS:
            raise ValueError(
                f"`mask_input` must be one of {list(MASK_INPUTS)}. "
                f"Received: mask_input={mask_input!r}"
            )
        self.hidden_dim = int(hidden_dim)
        self.mean = float(mean)
        self.std = float(std)
        self.max_value = int(max_value)
        self.initializer = initializer
        self.mask_input = mask_input

    def build(self, input_shape):
        weight, bias = INITIALIZERS[self.initializer]
        channel = self.mask_input == "channel"
        fan_in = 2 if channel else 1
        self.kernel = self.add_weight(
            name="kernel", shape=(self.hidden_dim,),
            initializer=weight(fan_in))
        self.bias = self.add_weight(
            name="bias", shape=(self.hidden_dim,), initializer=bias(fan_in))
        self.mask_embedding = self.add_weight(
            name="mask_embedding", shape=(self.hidden_dim,),
            initializer=weight(fan_in) if channel else "zeros")
        self.built = True

    def call(self, token_ids):
        ids = ops.convert_to_tensor(token_ids)
        value = ops.cast(ids, self.compute_dtype) / float(self.max_value)
        value = (value - self.mean) / self.std  # (batch, length)
        kernel = ops.cast(self.kernel, self.compute_dtype)
        bias = ops.cast(self.bias, self.compute_dtype)
        x = value[..., None] * kernel + bias  # (batch, length, D)
        masked = (ids > self.max_value)[..., None]
        mask_embedding = ops.cast(self.mask_embedding, self.compute_dtype)
        if self.mask_input == "channel":
            mask_embedding = mask_embedding + bias
        return ops.where(masked, mask_embedding, x)

    def compute_output_shape(self, input_shape):
        return (*input_shape, self.hidden_dim)

    def get_config(self):
        config = super().get_config()
        config.update(
            hidden_dim=self.hidden_dim,
            mean=self.mean,
            std=self.std,
            max_value=self.max_value,
            initializer=self.initializer,
            mask_input=self.mask_input,
        )
        return config
