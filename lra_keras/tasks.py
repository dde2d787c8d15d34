"""The seven LRA tasks, each declared once.

A `Task` holds every fact about a task that the rest of the library needs:
how to load it (`lra_keras.data.<loader>` and the hyperparameters passed on
to it), its token ids (vocabulary, padding, mask, the ordinary ids a random
replacement may take), its shape (length, classes, towers), and what the
training techniques do on it (the self-pretraining mask rate, the
label-preserving augmentation). Batching, masking, the techniques, the
hyperparameter resolution and the training loop all read these specs; none
keeps a per-task table of its own.

The token ids are those the readers produce (`lra_keras.data.listops`,
`.text`, `.image`): bytes are id = byte + 1 with 0 for padding, pixels are
their grey value with no padding (every position is real), and each task
has one extra id for the mask token of the denoising objectives.

Adding a task: a loader in `lra_keras.data`, one `Task(...)` below, a recipe
in `recipes/` (CONTRIBUTING.md walks through it).

References:
- Tay et al., "Long Range Arena", ICLR 2021, appendix A (the tasks).
- Amos, Berant & Gupta, "Never Train from Scratch", ICLR 2024, section 2
  (the self-pretraining mask rates).
- "You Can Train from Scratch", section 3 and A.3 (the augmentations).
"""

import dataclasses

from lra_keras.data import image
from lra_keras.data import listops
from lra_keras.data import text
from lra_keras.data.pathfinder import DIFFICULTIES


@dataclasses.dataclass(frozen=True)
class Task:
    """One LRA task.

    Args:
        name: str. The registry key, e.g. `"listops"`.
        loader: str. `"module.function"` in `lra_keras.data`, called as
            `function(split, data_dir=..., max_length=..., **options)`.
        vocabulary_size: int. Rows of the token embedding (mask id
            included).
        sequence_length: int. Tokens per sequence (per document for
            retrieval).
        num_classes: int.
        padding_id: int or None. None: no padding, every position is a
            real token (the pixel tasks).
        mask_id: int. The mask token of the denoising objectives.
        ordinary_ids: `(low, high_exclusive)`. The ids a random replacement
            may take: every ordinary token, never padding or the mask.
        spt_mask_rate: float. Share of real tokens masked by masked
            self-pretraining (NTFS section 2).
        towers: int. Sequences per example (2: the retrieval pairs).
        loader_options: tuple of str. Hyperparameter keys passed on to the
            loader when they are set (not None).
        difficulty: str or None. The loader's difficulty set (Pathfinder
            tasks; "hard" as LRA), the default of the `difficulty`
            hyperparameter.
        difficulties: tuple of str. The difficulty sets that
            `difficulty="all"` loads one by one.
        augmentation: str or None. The label-preserving augmentation, a
            module of `lra_keras.techniques` (None: the task has none).
    """

    name: str
    loader: str
    vocabulary_size: int
    sequence_length: int
    num_classes: int
    padding_id: int | None
    mask_id: int
    ordinary_ids: tuple
    spt_mask_rate: float
    towers: int = 1
    loader_options: tuple = ()
    difficulty: str | None = None
    difficulties: tuple = ()
    augmentation: str | None = None

    @property
    def pixels(self):
        """Whether the tokens are pixel values (no padding)."""
        return self.padding_id is None

    @property
    def end_id(self):
        """The end-of-sequence token of `append_eos`, or None.

        The first id past the vocabulary (a row with `append_eos` has one
        more embedding row); None for the pixel tasks, whose sequences
        have no end (`lra_keras.training.inputs.append_end_token`).
        """
        return None if self.pixels else self.vocabulary_size

    def hparams(self):
        """The task's keys of a resolved hyperparameter row."""
        return dict(
            vocabulary_size=self.vocabulary_size,
            sequence_length=self.sequence_length,
            num_classes=self.num_classes,
            padding_id=self.padding_id,
            towers=self.towers,
            difficulty=self.difficulty,
            spt_mask_rate=self.spt_mask_rate,
        )


# The ids of each kind of task, as the readers produce them.
_BYTES = dict(
    vocabulary_size=text.VOCABULARY_SIZE,  # 256 bytes + padding + mask
    padding_id=text.PAD_ID,
    mask_id=text.MASK_ID,
    ordinary_ids=(text.PAD_ID + 1, text.MASK_ID),
)
_PIXELS = dict(
    vocabulary_size=image.VOCABULARY_SIZE,  # 256 grey values + mask
    padding_id=None,
    mask_id=image.MASK_ID,
    ordinary_ids=(0, image.MASK_ID),
)
# Pathfinder, Path-X and PathX-256: one generator and reader at three
# resolutions; LRA trains on contour length 14 ("hard").
_PATHFINDER = dict(
    _PIXELS,
    num_classes=2,
    loader_options=("difficulty", "num_samples"),
    difficulty="hard",
    difficulties=tuple(DIFFICULTIES),  # easy, intermediate, hard
    augmentation="pathfinder_augment",
)

# spt_mask_rate: NTFS section 2, "For the visual tasks (Image, Pathfinder,
# Path-X) the masking ratio for masked sequence modeling is set to 50%
# following He et al. (2022), to 15% for language tasks (Text, Retrieval)
# following Liu et al. (2019), and to 10% for ListOps." PathX-256 is the
# same visual task at 256x256.
TASKS = {
    task.name: task
    for task in (
        Task(
            name="listops",
            loader="listops.load_listops",
            vocabulary_size=listops.VOCABULARY_SIZE,
            sequence_length=2000,
            num_classes=10,
            padding_id=listops.PAD_ID,
            mask_id=listops.MASK_ID,
            # digits 1-10, operators 11-14 and "]" 15
            ordinary_ids=(listops.PAD_ID + 1, listops.MASK_ID),
            spt_mask_rate=0.1,
            # The generator's window and depth: shorter, shallower trees
            # make a variant of the task (generated data only).
            loader_options=("min_length", "max_depth"),
            augmentation="operand_permutation",
        ),
        Task(
            name="text",
            loader="text.load_text",
            sequence_length=4096,
            num_classes=2,
            spt_mask_rate=0.15,
            **_BYTES,
        ),
        Task(
            name="retrieval",
            loader="retrieval.load_retrieval",
            sequence_length=4000,  # per document; LRA A.1.3
            num_classes=2,
            towers=2,
            spt_mask_rate=0.15,
            **_BYTES,
        ),
        Task(
            name="image",
            loader="image.load_image",
            sequence_length=1024,
            num_classes=10,
            spt_mask_rate=0.5,
            augmentation="cifar10_policy",
            **_PIXELS,
        ),
        Task(
            name="pathfinder",
            loader="pathfinder.load_pathfinder",
            sequence_length=1024,
            spt_mask_rate=0.5,
            **_PATHFINDER,
        ),
        Task(
            name="pathx",
            loader="pathfinder.load_pathx",
            sequence_length=16384,
            spt_mask_rate=0.5,
            **_PATHFINDER,
        ),
        Task(
            name="pathx256",
            loader="pathfinder.load_pathx256",
            sequence_length=65536,
            spt_mask_rate=0.5,
            **_PATHFINDER,
        ),
    )
}


def get_task(task):
    """The `Task` of a name (a `Task` passes through)."""
    if isinstance(task, Task):
        return task
    if task not in TASKS:
        raise ValueError(
            f"Unknown task; expected one of {sorted(TASKS)}. "
            f"Received: task={task!r}"
        )
    return TASKS[task]
