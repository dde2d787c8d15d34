"""The `small` preset: every family at one CPU-sized budget, in the LRA setting.

The quick preset checks an installation; the small preset compares
families. It keeps what makes a task the LRA task (the full sequence
lengths of the task: ListOps 2000, Text 4096, Retrieval 2 x 4000,
Image and Pathfinder 1024, Path-X 16384; hard Pathfinder, contour length
14) and scales down what costs compute: the width (64), the depth (2
blocks), the number of training samples and the epochs, aiming at 20
minutes a run on 2 CPU cores (measured under PyTorch, each command
alone on both cores, minutes a seed with data loading: ListOps S4D 2.4,
convolution 6.1, Transformer 13.8, with multitask and augmentation 12.2,
with SPT 19.2; Pathfinder S4D 2.9, convolution 3.3, Transformer 11.9,
`docs/results/small_*_torch/`;
Path-X's S4D 11.4 minutes under JAX on both cores, export included, the
images generated beforehand, its Transformer 19.6 minutes under PyTorch
within windows of 256 (below), its convolution 8.1 minutes under JAX:
`docs/results/pathx_small/`). Every family of a task gets the
same data, batch, epochs and schedule, as the LRA comparisons do; only the
family's own shape (heads, state size, kernel channels) comes from
`QUICK_FAMILY`, the quick preset's family rows.

The resolved row is the paper row, then `SMALL`, `SMALL_TASK[task]`,
`SMALL_FAMILY[model]` and `SMALL_TASK_FAMILY[(task, model)]`.

ListOps pools its first token, the root operator, as the quick preset
does and as LRA pooled a CLS token (see `presets.quick`); the root
operator alone predicts about 36% of the labels, so that level is what a
model reaches by reading it, and what is above it needs the tree.

Path-X runs on 2,000 generated images: at that count no family is
expected to leave chance (seed 0 on the 200 test images: S4D 46.5%,
the Transformer 50.5%, the convolution 50.0%); the row is there to
time the full length on a CPU. Text, Retrieval and Image need the
official files (`--data-dir`); their rows are sized by the sequence
lengths, not measured on this project's machines.
"""

from lra_keras.presets.quick import QUICK
from lra_keras.presets.quick import QUICK_FAMILY
from lra_keras.presets.quick import keep_length_buckets

# The quick preset's scaling (width 64, 2 blocks, batch 32, lr 1e-3,
# decay 0.01, cosine), trained longer.
SMALL = dict(
    QUICK,
    epochs=2,
    warmup_steps=100,
    source="small preset: every family at one CPU-sized budget, full "
           "sequence lengths",
)
SMALL_TASK = {
    "listops": dict(train_samples=12000, val_samples=1000, pooling="first"),
    # 4096 for every family (LRA's xformer rows read 1000 bytes, its
    # code's max_length: here they read what the others read)
    "text": dict(train_samples=4000, val_samples=1000, test_samples=2000,
                 batch_size=16, sequence_length=4096),
    "retrieval": dict(train_samples=2000, val_samples=500,
                      test_samples=1000, batch_size=8),
    "image": dict(train_samples=20000, val_samples=2000, test_samples=2000),
    # num_samples images are generated: train 16,000 / val 2000 / test 2000.
    "pathfinder": dict(num_samples=20000, difficulty="hard"),
    "pathx": dict(num_samples=2000, batch_size=8, epochs=1,
                  difficulty="hard"),
    "pathx256": dict(num_samples=200, batch_size=1, epochs=1,
                     difficulty="hard"),
}
SMALL_FAMILY = QUICK_FAMILY
# length buckets of 256, as the paper rows had before they took the
# reference code bases' batches (`keep_length_buckets`)
SMALL_TASK_FAMILY = keep_length_buckets(
    {"listops": 256, "text": 256, "retrieval": 256})
# Path-X's Transformer attends within windows of 256 and their neighbours,
# where the NTFS row (`presets.ntfs`, `mhfla`) takes 4096: at 4096 a step
# of this row took 50.9 s under PyTorch (2.8 hours a run), at 512 5.7 s
# and at 256 4.9 s (`benchmarks/preset_step.py --task pathx --model
# transformer --preset small --set attention_window=W`, 2 cores; JAX
# 12.9 s, TensorFlow 6.4 s at 256). Two blocks then see 512-1024
# positions each way, 4-8 rows of the 128-pixel image.
SMALL_TASK_FAMILY[("pathx", "transformer")] = dict(attention_window=256)
