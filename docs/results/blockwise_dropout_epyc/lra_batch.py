"""One of LRA's Transformer rows at its own batch: one training step's
time and the process's peak resident memory, the attention dropout on
the formed weights (`materialised`, `paired_dropout.py`'s switch) or in
the blockwise attention (`blockwise`, as the library is):

    cd docs/results/blockwise_dropout_epyc
    KERAS_BACKEND=jax python lra_batch.py pathfinder blockwise
    KERAS_BACKEND=jax python lra_batch.py pathfinder materialised

The task's `paper` row of `lra_transformer` (Pathfinder: LRA's
pathfinder32 Transformer, batch 512, L = 1,024, 4 heads, width 32,
attention dropout 0.1), built by `build_classifier` and trained by
`train_on_batch` on random tokens of its vocabulary (AdamW at 1e-4):
2 untimed steps, then 2 timed. Run each variant in its own process;
one that runs out of memory prints its error.
"""

import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import keras  # noqa: E402
import numpy as np  # noqa: E402
from paired_dropout import dropout  # noqa: E402

from lra_keras.hparams import get_hparams  # noqa: E402
from lra_keras.models import build_classifier  # noqa: E402
from lra_keras.models import classifier_kwargs  # noqa: E402


def main():
    task, variant = sys.argv[1], sys.argv[2]
    dropout(undone=variant == "materialised")
    hp = get_hparams(task, "lra_transformer")
    keras.utils.set_random_seed(0)
    net = build_classifier(**classifier_kwargs(hp))
    batch, length = hp["batch_size"], hp["sequence_length"]
    rng = np.random.default_rng(0)
    vocab = hp.get("vocab_size") or 256  # pixels: tokens 0..255
    x = {"token_ids": rng.integers(1, vocab,
                                   size=(batch, length)).astype("int32"),
         "padding_mask": np.ones((batch, length), bool)}
    y = rng.integers(0, hp["num_classes"], size=(batch,))
    net.compile(optimizer=keras.optimizers.AdamW(1e-4),
                loss=keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True))
    try:
        for _ in range(2):
            net.train_on_batch(x, y)
        start = time.perf_counter()
        for _ in range(2):
            loss = float(np.ravel(net.train_on_batch(x, y))[0])
        step = (time.perf_counter() - start) / 2
    except Exception as error:  # out of memory: reported
        print(f"{keras.backend.backend()} {task} {variant}: "
              f"{type(error).__name__}: {str(error)[:200]}")
        return
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"{keras.backend.backend()} {task} {variant}: batch {batch}, "
          f"L={length}, heads {hp['num_heads']}, attention_dropout "
          f"{hp['attention_dropout']}: step {step:.2f} s, peak RSS "
          f"{peak:.1f} GiB, loss {loss:.4f}")


if __name__ == "__main__":
    main()
