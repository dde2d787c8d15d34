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
- TensorFlow: refused, with the reason. Under a
  `tf.distribute.MirroredStrategy`, Keras 3.15's `fit` first averages the
  replicas' shares of the first batch (`TensorFlowTrainer.
  _maybe_symbolic_build`, keras/src/backend/tensorflow/trainer.py lines
  723-735): that fails on our boolean `padding_mask` input (no `AddN` for
  bool) and on any batch that does not split evenly (shapes 2 and 1),
  as measured here with two logical CPUs.
- PyTorch: refused: Keras's `fit` trains on one device under its PyTorch
  backend (multi-GPU PyTorch goes through a hand-written DDP loop, Keras's
  "distributed training with PyTorch" guide).

Multi-GPU: `KERAS_BACKEND=jax python recipes/<task>.py --distribute` uses
every GPU JAX sees (`CUDA_VISIBLE_DEVICES` selects them). On a CPU,
`XLA_FLAGS=--xla_force_host_platform_device_count=2` gives JAX two host
devices, as the tests do.
"""

import contextlib

import keras


def batch_multiple():
    """The number of devices a batch is split among: that of the active
    `distribution_scope`, else 1."""
    active = keras.distribution.distribution()
    if isinstance(active, keras.distribution.DataParallel):
        return int(active.device_mesh.shape[0])
    return 1


@contextlib.contextmanager
def single_device():
    """Runs its body without the active distribution (on one device, the
    weights where the distribution put them): evaluating every row of a
    split, whatever its size."""
    previous = keras.distribution.distribution()
    keras.distribution.set_distribution(None)
    try:
        yield
    finally:
        keras.distribution.set_distribution(previous)


def check_backend():
    """Raises ValueError, saying why, unless the backend is JAX."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        raise ValueError(
            "--distribute is not supported under the tensorflow backend: "
            "with a MirroredStrategy, Keras 3.15's fit averages the first "
            "batch over the replicas (keras/src/backend/tensorflow/"
            "trainer.py, _maybe_symbolic_build), which fails on the boolean "
            "padding_mask input and on batches that do not split evenly. "
            "Use KERAS_BACKEND=jax for data-parallel training."
        )
    if backend != "jax":
        raise ValueError(
            f"--distribute is not supported under the {backend} backend: "
            "Keras's fit trains PyTorch models on one device (multi-GPU "
            "PyTorch needs a hand-written DDP loop, see Keras's guide "
            "'Multi-GPU distributed training with PyTorch'). Use "
            "KERAS_BACKEND=jax for data-parallel training."
        )


@contextlib.contextmanager
def distribution_scope(enabled=True):
    """Builds, compiles and fits models inside it on every visible device.

    Yields the number of devices the batches are split among (1 when not
    `enabled`). Raises ValueError under the TensorFlow and PyTorch
    backends, saying why.
    """
    if not enabled:
        yield 1
        return
    check_backend()
    devices = keras.distribution.list_devices()
    with keras.distribution.DataParallel(devices=devices).scope():
        yield len(devices)
