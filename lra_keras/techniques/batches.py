"""Batches of one split, augmented and transformed for a technique.

`TechniqueBatches` wraps the length-bucketed batches of a split
(`lra_keras.batching`) and turns each batch into what one technique trains
on, in numpy, before the model sees it, so every technique runs through
`model.fit` unchanged under JAX, TensorFlow and PyTorch: first the
augmentation (training batches only), then the technique's transform (a
denoising corruption with its targets and weights, for instance).

Each batch draws its randomness from `np.random.default_rng((seed, epoch,
index))`, so a run is reproducible and a batch's masks and augmentations
differ from epoch to epoch.
"""

import keras
import numpy as np

from lra_keras.batching import EpochCounted
from lra_keras.batching import padding_mask
from lra_keras.tasks import get_task


class TechniqueBatches(EpochCounted, keras.utils.PyDataset):
    """Batches of one split, augmented and transformed per batch.

    Args:
        batches: a `lra_keras.batching.LengthBucketedBatches` (or any
            dataset of `(inputs, y)` or `(inputs,)` batches with
            `inputs["token_ids"]`).
        task: a task name or `lra_keras.tasks.Task` (its padding id).
        augment: `fn(token_ids, rng) -> token_ids` or None
            (`Augmentation.make`); give it for training batches only.
        transform: `fn(token_ids, padding_mask, y, rng) -> batch` or None
            (`Technique.batch_transform`); None yields
            `({"token_ids", "padding_mask"}, y)`.
        seed: int. Seed of the per-batch random streams.
    """

    def __init__(self, batches, task, *, augment=None, transform=None,
                 seed=0, **kwargs):
        super().__init__(**kwargs)
        self.batches = batches
        self.task = get_task(task)
        self.augment = augment
        self.transform = transform
        self.seed = int(seed)

    def __len__(self):
        return len(self.batches)

    def __getitem__(self, index):
        batch = self.batches[index]
        inputs, y = batch[0], (batch[1] if len(batch) > 1 else None)
        token_ids = inputs["token_ids"]
        rng = np.random.default_rng((self.seed, self.epoch, index))
        if self.augment is not None:
            token_ids = np.asarray(self.augment(token_ids, rng), np.int32)
        mask = padding_mask(token_ids, self.task.padding_id)
        if self.transform is None:
            return {"token_ids": token_ids, "padding_mask": mask}, y
        return self.transform(token_ids, mask, y, rng)

    # The wrapped batches follow the same epoch (`EpochCounted`).
    def set_epoch(self, epoch):
        if hasattr(self.batches, "set_epoch"):
            self.batches.set_epoch(epoch)
        super().set_epoch(epoch)

    def on_epoch_end(self):
        self.batches.on_epoch_end()
        super().on_epoch_end()
