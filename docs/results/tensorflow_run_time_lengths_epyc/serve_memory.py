"""A SavedModel's memory and time serving one long sequence.

    python serve_memory.py export CHECKOUT DIR [transformer|windowed]
    python serve_memory.py serve DIR L [BATCH]

`export` builds, under TensorFlow, a 4-block Transformer of width 128 (4
heads of 32, MLP 256, Pathfinder's 258 ids) from the lra_keras of
CHECKOUT (a path, put first on `sys.path`), with seed 0, and writes its
SavedModel with `lra_keras.export.export_saved_model`: its signature
leaves the length unknown. `windowed`: the same model attending in
windows of 1,024 tokens and their neighbours on each side
(`attention_window`, the NTFS code's Path-X layout). `serve` loads DIR
in a fresh process and calls its `serve` endpoint twice on random ids of
length L, printing both calls' times, the process's peak resident set
(after the load and in all) and the first row's logits.
"""

import os
import resource
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")


def export(checkout, out, kind):
    sys.path.insert(0, checkout)
    import keras

    from lra_keras.export import export_saved_model
    from lra_keras.models import build_classifier

    keras.utils.set_random_seed(0)
    extra = dict(attention_window=1024) if kind == "windowed" else {}
    model = build_classifier(
        task="pathfinder", model="transformer", num_classes=2,
        hidden_dim=128, num_layers=4, num_heads=4, intermediate_dim=256,
        vocabulary_size=258, sequence_length=None, **extra)
    export_saved_model(model, out)
    print("exported", out)


def serve(out, length, batch):
    import numpy as np
    import tensorflow as tf

    loaded = tf.saved_model.load(out)
    rng = np.random.default_rng(0)
    inputs = {
        "token_ids": tf.constant(
            rng.integers(1, 256, (batch, length)).astype("int32")),
        "padding_mask": tf.constant(np.ones((batch, length), bool)),
    }
    loaded_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    times = []
    for _ in range(2):
        start = time.perf_counter()
        logits = np.asarray(loaded.serve(inputs))
        times.append(time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"L={length} B={batch}: first call {times[0]:.2f} s, second "
          f"{times[1]:.2f} s, peak RSS {peak:.0f} MiB (after load "
          f"{loaded_rss:.0f}), logits {logits[0]}")


if __name__ == "__main__":
    if sys.argv[1] == "export":
        export(sys.argv[2], sys.argv[3],
               sys.argv[4] if len(sys.argv) > 4 else "transformer")
    else:
        serve(sys.argv[2], int(sys.argv[3]),
              int(sys.argv[4]) if len(sys.argv) > 4 else 1)
