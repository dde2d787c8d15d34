"""A `benchmarks/mixers.py` stack's step with the chunked recurrence's
default chunks and with chunks of T positions, paired in one process:

    cd docs/results/recurrence_chunks_16k_epyc
    KERAS_BACKEND=jax N=8 python paired_chunks.py 128 s5 16384

`../tensorflow_graph_epyc/paired_step.py`'s pairing (4 blocks of width
128, 16,384 tokens, so one row at 16K; no padding mask; the same seed):
the first stack traced with `ssm_kernels.recurrence_chunk` as it is, the
second with it returning T; N steps of each in turn. Prints both medians
and the median of the rounds' ratios with their range. Run at db3bf4f +
74ef70d, before d5d0c07 changed the default (64 then at 8K and 16K).
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent
                       / "tensorflow_graph_epyc"))

import paired_step  # noqa: E402
from keras import backend  # noqa: E402

from lra_keras.layers import ssm_kernels  # noqa: E402

DEFAULT = ssm_kernels.recurrence_chunk


def main():
    chunk, model, length = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])

    def change(undone):
        ssm_kernels.recurrence_chunk = (DEFAULT if undone
                                        else (lambda length: chunk))

    nets, x, y = paired_step.paired_stacks(
        change, model, length, names=("default", f"T={chunk}"))
    times, ratios = paired_step.paired_times(nets, x, y,
                                             int(os.environ.get("N", 8)))
    print(backend.backend(), model, length,
          paired_step.summary(times, ratios))


if __name__ == "__main__":
    main()
