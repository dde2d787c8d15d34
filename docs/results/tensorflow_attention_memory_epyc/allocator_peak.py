"""The peak of TensorFlow's own allocator (`tf.config.experimental.
get_memory_info("CPU:0")`: the tensors and XLA's buffers it hands out)
over three training steps of `stack_memory.py`'s Transformer stack, with
its attention and with the attention replaced by its values (`noattn`),
beside the growth of the process's peak resident set (which adds
TensorFlow's runtime, XLA's compilations and the allocator's own
rounding):

    KERAS_BACKEND=tensorflow python allocator_peak.py full 16384
    KERAS_BACKEND=tensorflow python allocator_peak.py noattn 16384
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import keras  # noqa: E402
import mixers  # noqa: E402
import tensorflow as tf  # noqa: E402

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
    for _ in range(3):
        net.train_on_batch(x, y)
    peak = tf.config.experimental.get_memory_info("CPU:0")["peak"] / 2**20
    print(f"tensorflow {variant} L={length}: allocator peak {peak:.0f} "
          f"MiB, resident-set peak growth {mixers._peak_mib() - before:.0f}"
          " MiB")


if __name__ == "__main__":
    main()
