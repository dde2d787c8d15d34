"""The data side of the training techniques: augment, mask, shift.

`TechniqueBatches` wraps the length-bucketed batches of a split and turns
each batch into what one technique trains on, in numpy, before the model
sees it, so every technique runs through `model.fit` unchanged under JAX,
TensorFlow and PyTorch:

- augmentation (`augment=True`), label-preserving, drawn afresh for every
  batch: ListOps operand permutation inside every bracket
  (`data.augment.permute_listops`), Pathfinder D4 symmetries
  (`data.augment.d4`; the all-difficulties training set is chosen by the
  loader), and for CIFAR-10 the YCTFS AutoAugment-derived colour policy
  (`lra_keras.augmentation`) before LRA's grayscale conversion;
- `objective="multitask"` (YCTFS §3, A.4): 30% of the real tokens are
  selected, a third of them replaced by a random ordinary token and the
  rest by the mask token; the classifier reads the corrupted sequence and
  a token head reconstructs the original ids. The reconstruction loss is
  taken over `loss_positions`: `"real"` (every real token, as the YCTFS
  code does) or `"masked"` (the selected tokens only, as BERT and NTFS);
- `objective="masked"` (NTFS §2, masked self-pretraining): the task's
  `spt_mask_rate` of the real tokens become the mask token, and the loss is
  taken at those positions; the targets are the token ids, or the pixel
  values scaled to [0, 1] for the L1 objective (`pixel_targets=True`);
- `objective="causal"` (NTFS §2, causal self-pretraining): every position
  predicts the next token; the loss is taken wherever both are real.

Each batch draws its randomness from `np.random.default_rng((seed, epoch,
index))`, so a run is reproducible and a batch's masks differ from epoch
to epoch. Validation batches (`training=False`) are never augmented or
corrupted; for multitask they carry zero weights for the token loss, so
`val_loss` is the task loss alone.

References:
- Miralles et al., "You Can Train from Scratch: Further Analysis of the
  Long Range Arena" (YCTFS), §3 and appendix A.4.
- Amos, Berant & Gupta, "Never Train from Scratch", ICLR 2024 (NTFS), §2.
"""

import keras
import numpy as np

from lra_keras.batching import padding_mask
from lra_keras.data import augment as augment_lib
from lra_keras.data import image as image_data
from lra_keras.data import masking
from lra_keras.hparams import check_augment

OBJECTIVES = (None, "multitask", "masked", "causal")
LOSS_POSITIONS = ("real", "masked")
# Pixel tasks have no padding: every position is a real token.
PIXEL_TASKS = tuple(
    task for task, padding_id in masking.PADDING_IDS.items()
    if padding_id is None
)
PATHFINDER_TASKS = ("pathfinder", "pathx", "pathx256")


def make_augment(task, *, seed=0, d4=True):
    """The augmentation of `task` as `fn(token_ids, rng) -> token_ids`.

    For `"image"` the function takes flattened colour images (batch,
    32 * 32 * 3) (see `training.load_splits`) and returns grayscale token
    ids (batch, 1024); the Keras preprocessing layers draw from a
    `keras.random.SeedGenerator(seed)` rather than from `rng`.
    """
    check_augment(task)
    if task == "listops":
        return lambda x, rng: augment_lib.permute_listops(x, rng)
    if task in PATHFINDER_TASKS:
        if not d4:
            return None
        return lambda x, rng: augment_lib.d4(x, rng)
    from lra_keras.augmentation import CIFAR10Policy

    policy = CIFAR10Policy(seed=keras.random.SeedGenerator(seed))

    def augment_image(x, rng):
        side = image_data.IMAGE_SIZE
        rgb = policy(x.reshape(len(x), side, side, 3).astype(np.uint8))
        return image_data.to_grayscale(rgb).reshape(len(x), side * side)

    return augment_image


def denoising_targets(token_ids, task, rng, objective, *, mask_rate,
                      random_fraction, loss_positions="masked",
                      pixel_targets=False):
    """Corrupted inputs, targets and per-token loss weights of one batch.

    Args:
        token_ids: int array (batch, [towers,] length).
        task: the task, for its padding, mask and ordinary ids.
        rng: `np.random.Generator`.
        objective: `"multitask"`, `"masked"` or `"causal"`.
        mask_rate: float. Share of each row's real tokens selected.
        random_fraction: float. Share of the selected tokens replaced by a
            random ordinary token (the rest become the mask token).
        loss_positions: `"real"` or `"masked"`: where the reconstruction
            loss is taken (masked objectives only).
        pixel_targets: bool. Targets are pixel values / 255, shaped
            (..., length, 1), for an L1 regression head.

    Returns:
        `(inputs, targets, weights)`: the model's token ids, the targets
        and float32 weights (..., length).
    """
    if objective not in OBJECTIVES[1:]:
        raise ValueError(
            f"`objective` must be one of {OBJECTIVES[1:]}. "
            f"Received: objective={objective!r}"
        )
    if loss_positions not in LOSS_POSITIONS:
        raise ValueError(
            f"`loss_positions` must be one of {LOSS_POSITIONS}. "
            f"Received: loss_positions={loss_positions!r}"
        )
    padding_id = masking.PADDING_IDS[task]
    real = padding_mask(token_ids, padding_id)
    if objective == "causal":
        inputs = token_ids
        targets = np.zeros_like(token_ids)
        targets[..., :-1] = token_ids[..., 1:]
        weights = np.zeros(token_ids.shape, np.float32)
        weights[..., :-1] = real[..., :-1] & real[..., 1:]
    else:
        inputs, targets, weights = masking.mask_tokens(
            token_ids,
            mask_rate,
            masking.MASK_IDS[task],
            rng,
            padding_id=padding_id,
            random_fraction=random_fraction,
            ordinary_ids=masking.ORDINARY_IDS[task],
        )
        if loss_positions == "real":
            weights = real.astype(np.float32)
    if pixel_targets:
        if task not in PIXEL_TASKS:
            raise ValueError(
                "Pixel-value targets (pretrain_loss='l1') need a pixel task "
                f"{PIXEL_TASKS}. Received: task={task!r}"
            )
        targets = (targets.astype(np.float32) / 255.0)[..., None]
    return inputs.astype(np.int32), targets, weights


class TechniqueBatches(keras.utils.PyDataset):
    """Batches of one split, transformed for a training technique.

    Args:
        batches: a `lra_keras.batching.LengthBucketedBatches` (or any
            dataset of `(inputs, y)` batches with `inputs["token_ids"]`).
        task: str. The task name.
        objective: None, `"multitask"`, `"masked"` or `"causal"` (see the
            module docstring). For `"masked"` and `"causal"` the label is
            dropped: the batch is `(inputs, targets, weights)`.
        augment: `fn(token_ids, rng) -> token_ids` or None, from
            `make_augment`.
        mask_rate, random_fraction, loss_positions, pixel_targets: see
            `denoising_targets`. The defaults are the multitask rates;
            `loss_positions=None` is "real" for multitask and "masked"
            for masked pretraining.
        training: bool. False for validation and test batches: no
            augmentation and no corruption.
        seed: int. Seed of the per-batch random streams.
    """

    def __init__(self, batches, task, *, objective=None, augment=None,
                 mask_rate=0.3, random_fraction=1 / 3,
                 loss_positions=None, pixel_targets=False, training=True,
                 seed=0, **kwargs):
        super().__init__(**kwargs)
        if objective not in OBJECTIVES:
            raise ValueError(
                f"`objective` must be one of {OBJECTIVES}. "
                f"Received: objective={objective!r}"
            )
        if loss_positions is None:
            # YCTFS takes its multitask loss over every real token; masked
            # pretraining (NTFS, BERT) at the masked positions.
            loss_positions = "real" if objective == "multitask" else "masked"
        if loss_positions not in LOSS_POSITIONS:
            raise ValueError(
                f"`loss_positions` must be one of {LOSS_POSITIONS}. "
                f"Received: loss_positions={loss_positions!r}"
            )
        if objective in ("masked", "causal") and not training:
            # Pretraining validation still needs a corrupted input.
            training = True
            augment = None
        self.batches = batches
        self.task = task
        self.objective = objective
        self.augment = augment if training else None
        self.mask_rate = mask_rate
        self.random_fraction = random_fraction
        self.loss_positions = loss_positions
        self.pixel_targets = pixel_targets
        self.training = training
        self.seed = int(seed)
        self.epoch = 0

    def __len__(self):
        return len(self.batches)

    def __getitem__(self, index):
        batch = self.batches[index]
        inputs, y = batch[0], (batch[1] if len(batch) > 1 else None)
        token_ids = inputs["token_ids"]
        rng = np.random.default_rng((self.seed, self.epoch, index))
        if self.augment is not None:
            token_ids = np.asarray(self.augment(token_ids, rng), np.int32)
        padding_id = masking.PADDING_IDS[self.task]
        mask = padding_mask(token_ids, padding_id)
        if self.objective is None:
            return {"token_ids": token_ids, "padding_mask": mask}, y
        if self.objective == "multitask" and not self.training:
            # Clean inputs; the token loss has weight 0 (val_loss = task).
            return (
                {"token_ids": token_ids, "padding_mask": mask},
                {"logits": y, "token_logits": token_ids},
                {"logits": np.ones(len(y), np.float32),
                 "token_logits": np.zeros(token_ids.shape, np.float32)},
            )
        corrupted, targets, weights = denoising_targets(
            token_ids, self.task, rng, self.objective,
            mask_rate=self.mask_rate,
            random_fraction=self.random_fraction,
            loss_positions=self.loss_positions,
            pixel_targets=self.pixel_targets,
        )
        inputs = {"token_ids": corrupted, "padding_mask": mask}
        if self.objective == "multitask":
            return (
                inputs,
                {"logits": y, "token_logits": targets},
                {"logits": np.ones(len(y), np.float32),
                 "token_logits": weights},
            )
        return inputs, targets, weights

    def on_epoch_end(self):
        self.batches.on_epoch_end()
        self.epoch += 1
