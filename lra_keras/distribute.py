"""Data-parallel training on every visible device (`--distribute`).

- JAX: Keras's `keras.distribution.DataParallel` over
  `keras.distribution.list_devices()`: the weights are replicated, every
  batch is split along its rows, and one SPMD program computes the same
  step as one device would (BatchNorm statistics included). Keras lays
  every batch out as its first, split along the rows, so every batch
  holds a multiple of the device count (`batching.LengthBucketedBatches`'s
  `multiple_of`, from `batch_multiple()`): the fewer than that many rows
  left over are left out of a training epoch (other rows every epoch) and
  of the validation during training, said when it starts; the test split
  is evaluated whole on one device (`single_device`).
- TensorFlow: a `tf.distribute.MirroredStrategy` over every logical GPU
  (else every logical CPU): models are built, compiled and fitted in its
  scope, the replicas' gradients summed by all-reduce. Batches hold
  multiples of the replica count as under JAX; the test split is
  evaluated whole under the strategy, which splits an uneven batch
  exactly (loss and accuracy of 7 rows in batches of 7, 3 and 1 equal one
  device's, measured). Keras 3.15's `fit` and `evaluate` first average
  the replicas' shares of the first batch to build the model
  symbolically (`TensorFlowTrainer._maybe_symbolic_build`,
  keras/src/backend/tensorflow/trainer.py lines 723-735); that fails on
  our boolean `padding_mask` input (no `AddN` for bool). Inside the scope
  the trainer builds from the first replica's share instead
  (`_build_from_first_replica`): only its shapes and dtypes are used.
  `MaskedBatchNormalization` sums its statistics over the replicas
  (`replica_sum`). A token-weighted loss (`mean_with_sample_weight`:
  self-pretraining, the multitask token loss) is averaged over each
  replica's tokens, then over the replicas, as PyTorch's DDP does; JAX
  averages it over the whole batch's tokens. Each replica's dropout
  draws its masks from a seed of its own (`replica_seed`).
- PyTorch: refused: Keras's `fit` trains on one device under its PyTorch
  backend (multi-GPU PyTorch goes through a hand-written DDP loop, Keras's
  "distributed training with PyTorch" guide).

Multi-GPU: `KERAS_BACKEND=jax python recipes/<task>.py --distribute` (or
`KERAS_BACKEND=tensorflow`) uses every GPU the backend sees
(`CUDA_VISIBLE_DEVICES` selects them). On a CPU,
`XLA_FLAGS=--xla_force_host_platform_device_count=2` gives JAX two host
devices, and `tf.config.set_logical_device_configuration` TensorFlow two
logical CPUs, as the tests do.
"""

import contextlib

import keras


def _tensorflow():
    import tensorflow as tf

    return tf


def batch_multiple():
    """The number of devices a batch is split among: that of the active
    `distribution_scope`, else 1."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        tf = _tensorflow()
        if tf.distribute.has_strategy():
            return int(tf.distribute.get_strategy().num_replicas_in_sync)
        return 1
    active = keras.distribution.distribution()
    if isinstance(active, keras.distribution.DataParallel):
        return int(active.device_mesh.shape[0])
    return 1


@contextlib.contextmanager
def single_device():
    """Runs its body so that every row of a split is evaluated, whatever
    its size: under JAX without the active distribution (on one device,
    the weights where the distribution put them); under TensorFlow as it
    is (the strategy splits uneven batches exactly)."""
    if keras.backend.backend() != "jax":
        yield
        return
    previous = keras.distribution.distribution()
    keras.distribution.set_distribution(None)
    try:
        yield
    finally:
        keras.distribution.set_distribution(previous)


def check_backend():
    """Raises ValueError, saying why, unless the backend is JAX or
    TensorFlow."""
    backend = keras.backend.backend()
    if backend not in ("jax", "tensorflow"):
        raise ValueError(
            f"--distribute is not supported under the {backend} backend: "
            "Keras's fit trains PyTorch models on one device (multi-GPU "
            "PyTorch needs a hand-written DDP loop, see Keras's guide "
            "'Multi-GPU distributed training with PyTorch'). Use "
            "KERAS_BACKEND=jax or tensorflow for data-parallel training."
        )


def replicas_in_sync():
    """Whether this runs in one of several replicas of a TensorFlow
    `MirroredStrategy` (inside its step), whose batch is a share of the
    whole."""
    if keras.backend.backend() != "tensorflow":
        return False
    context = _tensorflow().distribute.get_replica_context()
    return context is not None and context.num_replicas_in_sync > 1


def replica_sum(x):
    """`x` summed over the replicas of a TensorFlow `MirroredStrategy`
    (differentiable all-reduce, as Keras's synchronized BatchNorm,
    keras/src/backend/tensorflow/nn.py `_compute_moments_sync`); `x`
    itself elsewhere. JAX's `DataParallel` needs none: its step is one
    program over the whole batch."""
    if not replicas_in_sync():
        return x
    tf = _tensorflow()
    return tf.distribute.get_replica_context().all_reduce(
        tf.distribute.ReduceOp.SUM, x)


def replica_seed(seed):
    """`seed` (two integers) with the index of this TensorFlow
    `MirroredStrategy` replica folded in
    (`tf.random.experimental.stateless_fold_in`); `seed` itself outside
    several replicas.

    A layer's seed generator is one mirrored variable, drawn and advanced
    alike in every replica, so every replica drew the same seed: replica
    1's rows got replica 0's dropout masks (rows i and n/2 + i of a batch
    split in two, checked with `keras.layers.Dropout` on 2 logical CPUs).
    JAX's `DataParallel` draws one mask for the whole batch, as one device
    does; with the fold, each replica's mask is a draw of its own, as a
    device's share of such a mask is."""
    if not replicas_in_sync():
        return seed
    tf = _tensorflow()
    seed = tf.convert_to_tensor(seed)
    replica = tf.distribute.get_replica_context().replica_id_in_sync_group
    return tf.random.experimental.stateless_fold_in(
        seed, tf.cast(replica, seed.dtype))


def _dropout_per_replica(dropout):
    """Keras's TensorFlow `dropout` (keras/src/backend/tensorflow/
    random.py lines 85-97, Keras 3.15), which `keras.layers.Dropout` and
    `keras.random.dropout` call, drawing its mask from `replica_seed`
    within several replicas."""
    from keras.src.backend.tensorflow import random as tf_random
    from keras.src.random.seed_generator import draw_seed

    tf = _tensorflow()

    def per_replica(inputs, rate, noise_shape=None, seed=None):
        if not replicas_in_sync() or (
                isinstance(rate, (int, float)) and rate in (0.0, 1.0)):
            return dropout(inputs, rate, noise_shape=noise_shape, seed=seed)
        return tf.nn.experimental.stateless_dropout(
            inputs, rate=rate,
            noise_shape=tf_random._get_concrete_noise_shape(
                inputs, noise_shape),
            seed=tf_random._cast_seed(replica_seed(draw_seed(seed))))

    return per_replica


def _build_from_first_replica(self, iterator=None, data_batch=None):
    """`TensorFlowTrainer._maybe_symbolic_build` (Keras 3.15,
    keras/src/backend/tensorflow/trainer.py lines 713-740) with the first
    replica's share of the first batch in place of the replicas' mean."""
    tf = _tensorflow()
    strategy = self.distribute_strategy
    if iterator is not None:
        for _, _, it in iterator:
            data_batch = keras.tree.map_structure(
                lambda v: (strategy.experimental_local_results(v)[0]
                           if isinstance(v, tf.distribute.DistributedValues)
                           else v),
                next(it),
            )
            break
    with strategy.scope():
        self._symbolic_build(data_batch=data_batch)


@contextlib.contextmanager
def _mirrored_scope():
    tf = _tensorflow()
    from keras.src.backend.tensorflow import random as tf_random
    from keras.src.backend.tensorflow.trainer import TensorFlowTrainer

    needed = {TensorFlowTrainer: ("_maybe_symbolic_build",
                                  "_symbolic_build"),
              tf_random: ("dropout", "_cast_seed",
                          "_get_concrete_noise_shape")}
    missing = [f"{getattr(owner, '__name__', owner)}.{name}"
               for owner, names in needed.items() for name in names
               if not hasattr(owner, name)]
    if missing:
        raise RuntimeError(
            f"--distribute under TensorFlow relies on Keras 3.15's "
            f"{', '.join(missing)}, which Keras {keras.__version__} "
            f"lacks; use KERAS_BACKEND=jax."
        )
    devices = (tf.config.list_logical_devices("GPU")
               or tf.config.list_logical_devices("CPU"))
    strategy = tf.distribute.MirroredStrategy(
        [device.name for device in devices])
    original = TensorFlowTrainer._maybe_symbolic_build
    dropout = tf_random.dropout
    TensorFlowTrainer._maybe_symbolic_build = _build_from_first_replica
    tf_random.dropout = _dropout_per_replica(dropout)
    try:
        with strategy.scope():
            yield strategy.num_replicas_in_sync
    finally:
        TensorFlowTrainer._maybe_symbolic_build = original
        tf_random.dropout = dropout


@contextlib.contextmanager
def distribution_scope(enabled=True):
    """Builds, compiles and fits models inside it on every visible device.

    Yields the number of devices the batches are split among (1 when not
    `enabled`). Raises ValueError under the PyTorch backend, saying why.
    """
    if not enabled:
        yield 1
        return
    check_backend()
    if keras.backend.backend() == "tensorflow":
        with _mirrored_scope() as replicas:
            yield replicas
        return
    devices = keras.distribution.list_devices()
    with keras.distribution.DataParallel(devices=devices).scope():
        yield len(devices)
