"""Batch normalisation over the real (unpadded) tokens of a sequence batch.

References:
- Ioffe, Szegedy. "Batch Normalization", ICML 2015,
  https://arxiv.org/abs/1502.03167
- The norm of the S4 LRA blocks: state-spaces/s4
  `src/models/nn/normalization.py` (`Normalization(_name_="batch")`, a
  `torch.nn.BatchNorm1d(d, affine=True, track_running_stats=True)` over
  (batch, channels, length), i.e. statistics over batch and length).
- The norm of the S5 LRA blocks: lindermanlab/S5 `s5/layers.py`
  (`flax.linen.BatchNorm(momentum=bn_momentum, axis_name="batch")` under a
  `vmap` over the batch, i.e. statistics over batch and length).
"""

import functools

import keras
from keras import backend
from keras import constraints
from keras import initializers
from keras import ops
from keras import regularizers

from lra_keras.backend_utils import scale_channels
from lra_keras.distribute import replica_sum
from lra_keras.distribute import replicas_in_sync
from lra_keras.schema import COUNT_PADDING
from lra_keras.schema import Rule


def up_to_longest_row(mask, across_replicas=False):
    """The (batch, length) bool mask of the positions before the end of the
    batch's longest row: true up to the last position real in any row.

    A batch right-padded to a longer length than its longest row reads,
    under it, as the batch padded to that row alone. With
    `across_replicas`, under a TensorFlow `MirroredStrategy`, the longest
    row is the whole batch's, over every replica's share
    (`distribute.replica_sum`), as on one device. The BatchNorm asks for
    it in training (its statistics; in inference it normalises with the
    moving ones, position by position); the attention and the SSM
    layers that read the padding up to the longest row ask in training
    only too, an all-reduce in inference having failed on a strategy's
    uneven last batch.
    """
    # (length,): how many rows are real there
    any_real = ops.sum(ops.cast(mask, "float32"), axis=0)
    if across_replicas:
        any_real = replica_sum(any_real)
    # reverse cumulative sum: > 0 where a real position is at or after
    before_end = ops.flip(ops.cumsum(ops.flip(any_real, 0)), 0) > 0
    return ops.broadcast_to(before_end[None, :], ops.shape(mask))


def moments(x):
    """`keras.ops.moments(x, axes=[0, 1])` of `x` (batch, length,
    channels); under JAX the same sums over `x` viewed as (batch x
    length, channels) rows, as in `normalize`."""
    if backend.backend() != "jax":
        return ops.moments(x, axes=[0, 1])
    rows = ops.reshape(x, (-1, ops.shape(x)[-1]))
    mean = ops.mean(rows, axis=0)
    return mean, ops.mean(ops.square(rows - mean), axis=0)


def normalize(x, mean, variance, offset, scale, epsilon):
    """`keras.ops.batch_normalization` over the last axis of `x` (batch,
    length, channels); under JAX the same products and sums as Keras's
    JAX code, with the statistics, scale and offset of shape (channels,)
    and the product through `backend_utils.scale_channels`.

    Keras's JAX code reshapes them to (1, 1, channels), so that their
    gradients are sums over the batch and length axes. For a batch of one
    row XLA takes that as a sum over the length alone of a (1, L,
    channels) tensor, which its CPU code (YNNPACK's reduction fusions, on
    by default in jax 0.10) runs 100 times slower than the rows' sum:
    33 ms against 0.3 ms at L = 16,384, width 128, a training step of the
    layer alone 39 -> 2.9 ms (2 cores,
    `docs/results/batch_one_sums_epyc/`). Elsewhere Keras's.
    """
    if backend.backend() != "jax":
        return ops.batch_normalization(x, mean, variance, axis=-1,
                                       offset=offset, scale=scale,
                                       epsilon=epsilon)
    inv = ops.rsqrt(variance + epsilon)
    if scale is not None:
        inv = inv * scale
    shift = -mean * inv
    if offset is not None:
        shift = shift + offset
    return scale_channels(x, inv) + shift


def torch_training_normalization(x, gamma, beta, real, epsilon,
                                 as_keras=False):
    """Training's BatchNorm under PyTorch, statistics and normalisation in
    one `torch.autograd.Function`, its backward written out:

        mean, variance over the real positions (n of them)
        x_hat = (x - mean) r,  r = 1 / sqrt(variance + epsilon)
        y = gamma x_hat + beta, zero where `real` is 0
        dgamma = sum(m dy x_hat),  dbeta = sum(m dy)
        dx = m r gamma (dy - dbeta / n - x_hat dgamma / n)

    (m the `real` mask, sums over the real positions: the gradient of the
    statistics' dependence on x included). It keeps `x_hat` for the
    backward and nothing else of the activations' size: not `x`, which
    Keras's `custom_gradient` keeps as it keeps every input. It works in
    place in the tensors it makes: six new ones of the activations' size
    in a forward and backward pass, two of them by `where`. Through the
    layer's ops and Keras's `custom_gradient` there were nineteen, six by
    `where` (1.2 ms each at (16, 1024, 128) in a 2-core step, a product
    0.3 ms alone).
    Padded positions go through `where`, or a product with the mask
    after one, so inf or NaN there changes nothing.

    Args:
        x: tensor (batch, length, channels), float32 or wider.
        gamma, beta: tensors (channels,).
        real: None (every position real) or a (batch, length, 1) float
            mask, 1 at the positions that count.
        epsilon: float.
        as_keras: bool. With `real` None, the variance as
            `keras.ops.moments` computes it, E[x^2] - E[x]^2, so that the
            layer without a mask computes exactly what
            `keras.layers.BatchNormalization` does. Otherwise it is the
            mean of the squared deviations, as `_moments`'s.

    Returns:
        (y, mean, variance, count): the normalised tensor, and the batch's
        statistics and number of real positions (without gradients).
    """
    return _torch_normalization_function().apply(x, gamma, beta, real,
                                                 epsilon, as_keras)


@functools.cache
def _torch_normalization_function():
    """The `torch.autograd.Function` of `torch_training_normalization`,
    made on first use: torch is imported only under PyTorch."""
    import torch

    class TrainingNormalization(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, gamma, beta, real, epsilon, as_keras):
            if real is None:
                count = x.new_tensor(float(x.shape[0] * x.shape[1]))
                mean = x.mean((0, 1))
                if as_keras:  # `keras.ops.moments`'s formula under torch
                    variance = (x.square().mean((0, 1)) - mean.square())
                deviation = x - mean
            else:
                count = real.sum()
                deviation = torch.where(real > 0, x, 0.0)
                mean = deviation.sum((0, 1)) / count.clamp(min=1.0)
                deviation.addcmul_(real, mean, value=-1.0)
            n = count.clamp(min=1.0)
            if not (real is None and as_keras):
                # (not `vector_norm`: 5.7 against 0.7 ms at (16, 1024,
                # 128), its reduction over the leading axes is slow)
                variance = (deviation * deviation).sum((0, 1)) / n
            r = torch.rsqrt(variance + epsilon)
            x_hat = deviation.mul_(r)
            y = x_hat * gamma
            if real is None:
                y.add_(beta)
            else:
                y.addcmul_(real, beta)
            ctx.save_for_backward(x_hat, r, gamma, real, n)
            ctx.mark_non_differentiable(mean, variance, count)
            return y, mean, variance, count

        @staticmethod
        def backward(ctx, dy, *unused):
            x_hat, r, gamma, real, n = ctx.saved_tensors
            if real is not None:
                dy = torch.where(real > 0, dy, 0.0)
            dbeta = dy.sum((0, 1))
            dgamma = (dy * x_hat).sum((0, 1))
            dx = torch.addcmul(dy, x_hat, dgamma / n, value=-1.0)
            if real is None:
                dx.sub_(dbeta / n)
            else:
                dx.addcmul_(real, dbeta / n, value=-1.0)
            dx.mul_(r * gamma)
            return dx, dgamma, dbeta, None, None, None

    return TrainingNormalization


@keras.saving.register_keras_serializable(package="lra_keras")
class MaskedBatchNormalization(keras.layers.Layer):
    """BatchNorm over the channel axis with statistics from real tokens only.

    For inputs (batch, length, channels) and a padding mask (batch, length),
    true at real tokens, training mode normalises every channel with the
    mean and the (biased) variance of that channel over the real tokens of
    the batch, `y = gamma * (x - mean) / sqrt(var + epsilon) + beta`, and
    updates the moving statistics
    `moving = momentum * moving + (1 - momentum) * batch_statistic`.
    Inference mode (and a layer with `trainable=False`, as in
    `keras.layers.BatchNormalization`) normalises with the moving
    statistics. The real-token outputs and the moving statistics therefore
    do not depend on how much padding a batch carries nor on what it holds.

    Padded positions output zeros (in both modes), so the whole output is
    independent of the padding. A batch without any real token leaves the
    moving statistics unchanged. With `count_padding=True` the layer is the
    references' BatchNorm, which sees no mask: the padded positions enter
    the statistics and are normalised as the real ones. With
    `count_padding="longest"` the positions up to the batch's longest row
    count, the padding after it does not: the references' BatchNorm on a
    batch padded only to its longest row (the S4 code's `pad_sequence`),
    whatever longer length the batch is fed at.

    Without a padding mask every position is real, and the layer computes
    exactly what `keras.layers.BatchNormalization(axis=-1)` with the same
    `momentum` and `epsilon` computes (with
    `unbiased_moving_variance=False`). As that layer, statistics and
    normalisation are computed in float32 (or wider) under mixed precision
    and the weights stay float32.

    Defaults follow both references, which agree on all but the variance
    fed to the moving average: torch's `BatchNorm1d` (S4) has momentum 0.1
    in torch's convention (= 0.9 here) and `eps=1e-5`; flax's `BatchNorm`
    (S5) has `epsilon=1e-5` and S5's module default momentum 0.9 (S5's
    `run_train.py` passes 0.95 unless a run sets `--bn_momentum`). Both
    are affine.

    Args:
        momentum: float in [0, 1]. Weight of the old moving statistic.
            Defaults to 0.9.
        epsilon: float > 0 added to the variance. Defaults to 1e-5.
        center: bool. Add the learned offset `beta`. Defaults to True.
        scale: bool. Multiply by the learned `gamma`. Defaults to True.
        unbiased_moving_variance: bool. Update `moving_variance` with the
            unbiased batch variance `var * n / (n - 1)` (n: the number of
            real tokens in the batch), as torch's `BatchNorm1d` and so S4
            does, while still normalising with the biased one. False (the
            default) updates it with the biased variance, as flax (S5) and
            `keras.layers.BatchNormalization` do.
        count_padding: False, True or "longest". True ignores the
            padding mask: statistics over every position of the batch,
            padded ones normalised too, as the S5 code's BatchNorm (which
            sees no mask) computes on its batches, all padded to the
            task's length. "longest" counts every position before the end
            of the batch's longest row (the last position real in any
            row) and zeroes the ones after it: the S4 code's BatchNorm on
            its batches, each padded to its longest row
            (state-spaces/s4 `src/dataloaders/lra.py`, `pad_sequence` in
            the collate functions at lines 81-88, 276-283 and 572-598).
            False: the real tokens only. Defaults to False.
        beta_initializer, gamma_initializer, moving_mean_initializer,
            moving_variance_initializer: initializers of the weights.
            Default to zeros, ones, zeros, ones.
        beta_regularizer, gamma_regularizer: optional regularizers.
        beta_constraint, gamma_constraint: optional constraints.

    Call arguments:
        inputs: tensor (batch, length, channels).
        padding_mask: optional (batch, length) tensor, nonzero at real
            tokens. Without it (or with `count_padding=True`) every
            position is real.
        training: bool. Batch statistics (and moving-statistic updates)
            when true, moving statistics otherwise.

    Returns:
        Tensor (batch, length, channels), zero at the positions that do
        not count (the padded ones; none with `count_padding=True`, those
        after the longest row with "longest").

    Example:
    >>> layer = MaskedBatchNormalization()
    >>> x = keras.random.normal((2, 5, 3))
    >>> layer(x, padding_mask=[[1, 1, 1, 0, 0]] * 2, training=True).shape
    (2, 5, 3)
    """

    def __init__(
        self,
        momentum=0.9,
        epsilon=1e-5,
        center=True,
        scale=True,
        unbiased_moving_variance=False,
        count_padding=False,
        beta_initializer="zeros",
        gamma_initializer="ones",
        moving_mean_initializer="zeros",
        moving_variance_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if isinstance(momentum, bool) or not isinstance(
            momentum, (int, float)
        ) or not 0.0 <= momentum <= 1.0:
            raise ValueError(
                "`momentum` must be a float in [0, 1]. "
                f"Received: momentum={momentum!r}"
            )
        if isinstance(epsilon, bool) or not isinstance(
            epsilon, (int, float)
        ) or not epsilon > 0:
            raise ValueError(
                "`epsilon` must be a float > 0. "
                f"Received: epsilon={epsilon!r}"
            )
        for name, value in (
            ("center", center),
            ("scale", scale),
            ("unbiased_moving_variance", unbiased_moving_variance),
        ):
            if not isinstance(value, bool):
                raise ValueError(
                    f"`{name}` must be a bool. Received: {name}={value!r}"
                )
        if not Rule(object, choices=COUNT_PADDING).accepts(count_padding):
            raise ValueError(
                "`count_padding` must be False, True or \"longest\". "
                f"Received: count_padding={count_padding!r}"
            )
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.center = center
        self.scale = scale
        self.unbiased_moving_variance = unbiased_moving_variance
        self.count_padding = count_padding
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(
            moving_variance_initializer
        )
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self.supports_masking = True
        self.gamma = None
        self.beta = None
        self.moving_mean = None
        self.moving_variance = None

    def build(self, input_shape):
        if len(input_shape) != 3 or input_shape[-1] is None:
            raise ValueError(
                "`MaskedBatchNormalization` expects inputs (batch, length, "
                "channels) with a known number of channels. "
                f"Received: input_shape={input_shape}"
            )
        shape = (input_shape[-1],)
        # As keras.layers.BatchNormalization: float32 weights under mixed
        # precision (autocast=False keeps them uncast inside call).
        if self.scale:
            self.gamma = self.add_weight(
                shape=shape,
                name="gamma",
                initializer=self.gamma_initializer,
                regularizer=self.gamma_regularizer,
                constraint=self.gamma_constraint,
                trainable=True,
                autocast=False,
            )
        if self.center:
            self.beta = self.add_weight(
                shape=shape,
                name="beta",
                initializer=self.beta_initializer,
                regularizer=self.beta_regularizer,
                constraint=self.beta_constraint,
                trainable=True,
                autocast=False,
            )
        self.moving_mean = self.add_weight(
            shape=shape,
            name="moving_mean",
            initializer=self.moving_mean_initializer,
            trainable=False,
            autocast=False,
        )
        self.moving_variance = self.add_weight(
            shape=shape,
            name="moving_variance",
            initializer=self.moving_variance_initializer,
            trainable=False,
            autocast=False,
        )
        self.input_spec = keras.layers.InputSpec(
            ndim=3, axes={-1: input_shape[-1]}
        )

    def _moments(self, inputs, real, two_pass=False):
        """Per-channel mean, biased variance and count of real tokens.

        `real` is None (all positions real) or a (batch, length, 1) float
        mask. Two passes (mean, then squared deviations of real tokens
        only), so padding never enters a sum, whatever it holds. Under a
        TensorFlow `MirroredStrategy` (`--distribute`) every sum is taken
        over all replicas (`distribute.replica_sum`): the statistics of
        the whole batch, as one device and JAX's data parallelism compute
        them.
        """
        if real is None and not replicas_in_sync() and not two_pass:
            # The very computation of keras.layers.BatchNormalization.
            mean, variance = moments(inputs)
            count = ops.sum(ops.ones_like(inputs[..., 0]))
            return mean, variance, count
        if real is None:
            # Every position: the same sums without a mask to apply.
            count = replica_sum(ops.sum(ops.ones_like(inputs[..., :1])))
            denominator = ops.maximum(count, 1.0)
            mean = replica_sum(ops.sum(inputs, axis=(0, 1))) / denominator
            deviation = inputs - mean
        else:
            count = replica_sum(ops.sum(real))
            denominator = ops.maximum(count, 1.0)
            is_real = real > 0
            mean = replica_sum(
                ops.sum(ops.where(is_real, inputs, 0.0), axis=(0, 1)))
            mean = mean / denominator
            deviation = ops.where(is_real, inputs - mean, 0.0)
        variance = replica_sum(
            ops.sum(ops.square(deviation), axis=(0, 1))) / denominator
        return mean, variance, count

    def call(self, inputs, padding_mask=None, training=None):
        # BN overflows easily in float16/bfloat16: statistics and the
        # normalisation in (at least) float32, as Keras's BatchNormalization.
        compute_dtype = backend.result_type(inputs.dtype, "float32")
        inputs = ops.cast(inputs, compute_dtype)
        real = None
        # Every position real with `count_padding=True`, through the same
        # two-pass sums as a masked batch (and as the replicas' under
        # --distribute, so that one device and several compute alike).
        two_pass = padding_mask is not None
        if padding_mask is not None and self.count_padding is not True:
            real = ops.cast(padding_mask, "bool")
            if self.count_padding == "longest":
                real = up_to_longest_row(
                    real, across_replicas=bool(training and self.trainable))
            real = ops.expand_dims(ops.cast(real, compute_dtype), -1)

        moving_mean = ops.cast(self.moving_mean, compute_dtype)
        moving_variance = ops.cast(self.moving_variance, compute_dtype)
        gamma = ops.cast(self.gamma, compute_dtype) if self.scale else None
        beta = ops.cast(self.beta, compute_dtype) if self.center else None

        # Under PyTorch, training's statistics and normalisation with the
        # backward written out (`torch_training_normalization`). 4-block
        # stacks at L = 1024, batch 16, width 128 on 2 cores
        # (`benchmarks/mixers.py`'s stacks): a step went 0.303-0.316 ->
        # 0.264-0.282 s (RTF) and 0.311-0.329 -> 0.281-0.299 s (S4D),
        # the live peak 402.8 -> 394.7 and 414.0 -> 406.0 MiB
        # (`benchmarks/step_memory.py`). Elsewhere through the ops: XLA
        # kept more with a written-out backward (JAX, the RTF stack at L
        # = 1024, batch 16: temporaries 322 -> 362 MiB), and TensorFlow's
        # was not measured. So too under a `MirroredStrategy` (whose
        # backward sums over the replicas as well) and without gamma or
        # beta.
        lean = (training and self.trainable and self.scale and self.center
                and backend.backend() == "torch"
                and not replicas_in_sync())
        if lean:
            outputs, mean, variance, count = torch_training_normalization(
                inputs, gamma, beta, real, self.epsilon,
                as_keras=not two_pass)
        if training and self.trainable:
            if not lean:
                mean, variance, count = self._moments(inputs, real,
                                                      two_pass)
            update_variance = variance
            if self.unbiased_moving_variance:
                # torch's BatchNorm: n / (n - 1) (guarded at n = 1).
                update_variance = variance * (
                    count / ops.maximum(count - 1.0, 1.0)
                )
            new_mean = moving_mean * self.momentum + mean * (
                1.0 - self.momentum
            )
            new_variance = moving_variance * self.momentum + (
                update_variance * (1.0 - self.momentum)
            )
            if two_pass:
                # No real token: nothing to learn, keep the statistics.
                has_real = count > 0
                new_mean = ops.where(has_real, new_mean, moving_mean)
                new_variance = ops.where(
                    has_real, new_variance, moving_variance
                )
            # Assigning inside call is how keras.layers.BatchNormalization
            # updates its state: under JAX the stateless train step
            # collects the new values of the non-trainable variables.
            self.moving_mean.assign(new_mean)
            self.moving_variance.assign(new_variance)
        else:
            mean = moving_mean
            variance = moving_variance

        if lean:
            return ops.cast(outputs, self.compute_dtype)
        outputs = normalize(inputs, mean, variance, beta, gamma,
                            self.epsilon)
        if real is not None:
            outputs = ops.where(real > 0, outputs, 0.0)
        return ops.cast(outputs, self.compute_dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            momentum=self.momentum,
            epsilon=self.epsilon,
            center=self.center,
            scale=self.scale,
            unbiased_moving_variance=self.unbiased_moving_variance,
            count_padding=self.count_padding,
            beta_initializer=initializers.serialize(self.beta_initializer),
            gamma_initializer=initializers.serialize(self.gamma_initializer),
            moving_mean_initializer=initializers.serialize(
                self.moving_mean_initializer
            ),
            moving_variance_initializer=initializers.serialize(
                self.moving_variance_initializer
            ),
            beta_regularizer=regularizers.serialize(self.beta_regularizer),
            gamma_regularizer=regularizers.serialize(self.gamma_regularizer),
            beta_constraint=constraints.serialize(self.beta_constraint),
            gamma_constraint=constraints.serialize(self.gamma_constraint),
        )
        return config
