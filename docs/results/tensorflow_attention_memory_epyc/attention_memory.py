"""Peak resident-set growth of `attention(..., implementation="chunked")`
chained LAYERS times, forward and backward (the same keys and values for
every layer), at (1, L, 4, 32); under TensorFlow, with SHOW=1, the
shapes of the outputs of each function call in the step's graph (the
first: the XLA-compiled attention's forward, with what it keeps for the
backward):

    KERAS_BACKEND=tensorflow python attention_memory.py 16384 1
    KERAS_BACKEND=tensorflow SHOW=1 python attention_memory.py 16384 1
    KERAS_BACKEND=jax python attention_memory.py 16384 4
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import keras  # noqa: E402
import numpy as np  # noqa: E402
from mixers import _peak_mib  # noqa: E402
from mixers import _rss_mib  # noqa: E402

from lra_keras.layers.attention_kernels import attention  # noqa: E402


def chain(q, k, v, layers):
    x = q
    for _ in range(layers):
        x = attention(x, k, v, implementation="chunked")
    return x


def main():
    length, layers = int(sys.argv[1]), int(sys.argv[2])
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(1, length, 4, 32)).astype("float32")
               for _ in range(3))
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        q, k, v = map(tf.constant, (q, k, v))

        @tf.function
        def step(q, k, v):
            with tf.GradientTape() as tape:
                tape.watch([q, k, v])
                loss = tf.reduce_sum(chain(q, k, v, layers))
            return tape.gradient(loss, [q, k, v])

        def run():
            return [g.numpy() for g in step(q, k, v)]
    else:
        import jax

        step = jax.jit(jax.grad(lambda q, k, v: chain(q, k, v, layers).sum(),
                                argnums=(0, 1, 2)))

        def run():
            return jax.block_until_ready(step(q, k, v))
    before = _rss_mib()
    for _ in range(2):
        run()
    print(f"{backend} L={length} layers={layers}: peak growth "
          f"{_peak_mib() - before:.0f} MiB")
    if backend == "tensorflow" and os.environ.get("SHOW"):
        graph = step.get_concrete_function(q, k, v).graph
        for op in graph.get_operations():
            if "PartitionedCall" in op.type:
                print(op.name, [tuple(o.shape) for o in op.outputs])


if __name__ == "__main__":
    main()
