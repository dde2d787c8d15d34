"""Peak resident-set growth of `benchmarks/mixers.py`'s Transformer
stack (4 blocks of width 128, 4 heads of 32, 16,384 tokens a batch, no
padding mask) over three training steps, with its attention and with the
attention replaced by its values (`noattn`); under TensorFlow then the
peak of its own allocator (`tf.config.experimental.get_memory_info`: the
tensors and XLA's buffers it hands out; the resident set adds
TensorFlow's runtime, XLA's compilations and memory the allocator holds
unused):

    KERAS_BACKEND=tensorflow python stack_memory.py full 16384
    KERAS_BACKEND=tensorflow python stack_memory.py noattn 16384
"""

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import keras  # noqa: E402
import mixers  # noqa: E402

from lra_keras.layers import rotary_attention  # noqa: E402


def main():
    variant, length = sys.argv[1], int(sys.argv[2])
    if variant == "noattn":
        rotary_attention.attention = lambda q, k, v, *a, **kw: v
    keras.utils.set_random_seed(0)
    net, x, y = mixers.stack_and_batch("transformer", length, 128, 4,
                                       max(1, 16384 // length),
                                       padded=False)
    optimizer, loss = mixers.optimizer_and_loss()
    net.compile(optimizer=optimizer, loss=loss)
    before = mixers._rss_mib()
    for i in range(3):
        start = time.perf_counter()
        net.train_on_batch(x, y)
        print(f"{keras.backend.backend()} {variant} L={length} step {i}: "
              f"{time.perf_counter() - start:.2f} s, peak growth "
              f"{mixers._peak_mib() - before:.0f} MiB", flush=True)
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        peak = tf.config.experimental.get_memory_info("CPU:0")["peak"]
        print(f"tensorflow {variant} L={length}: allocator peak "
              f"{peak / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
