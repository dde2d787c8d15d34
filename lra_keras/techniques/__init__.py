"""The training techniques of the papers, one module each.

| `--technique` | module | what it does |
|---|---|---|
| `none` | `none` | the classifier alone |
| `multitask` | `multitask` | task loss + masked-token loss (YCTFS A.4) |
| `spt` | `spt` | self-pretraining, then fine-tuning (NTFS) |

`--augment` applies the task's label-preserving augmentation (its
`Task.augmentation`), with any technique:

| augmentation | module | tasks |
|---|---|---|
| `operand_permutation` | `operand_permutation` | ListOps |
| `pathfinder_augment` | `pathfinder_augment` | Pathfinder, Path-X, PathX-256 |
| `cifar10_policy` | `cifar10_policy` | Image |

Each is an object with the hooks of `base.Technique` or
`base.Augmentation`; `lra_keras.training.run` calls them and knows no
technique by name. `masking` holds the token corruption both denoising
techniques use; `batches` the per-batch wrapper that applies them.

Adding a technique: one module with a `Technique` subclass, and its line
in `TECHNIQUES` below (CONTRIBUTING.md walks through it).
"""

from lra_keras.tasks import TASKS
from lra_keras.tasks import get_task
from lra_keras.techniques.cifar10_policy import CIFAR10_COLOUR_POLICY
from lra_keras.techniques.multitask import MULTITASK
from lra_keras.techniques.none import NONE
from lra_keras.techniques.operand_permutation import OPERAND_PERMUTATION
from lra_keras.techniques.pathfinder_augment import PATHFINDER_AUGMENT
from lra_keras.techniques.spt import SPT

TECHNIQUES = {t.name: t for t in (NONE, MULTITASK, SPT)}
AUGMENTATIONS = {a.name: a for a in (OPERAND_PERMUTATION,
                                     PATHFINDER_AUGMENT,
                                     CIFAR10_COLOUR_POLICY)}


def get_technique(name):
    """The technique object of a `--technique` name."""
    if name not in TECHNIQUES:
        raise ValueError(
            f"Unknown technique {name!r}. Known techniques: "
            f"{list(TECHNIQUES)}"
        )
    return TECHNIQUES[name]


def get_augmentation(task):
    """The augmentation of a task, or a clear error if it has none."""
    task = get_task(task)
    if task.augmentation is None:
        augmented = [t for t, spec in TASKS.items() if spec.augmentation]
        raise ValueError(
            f"No augmentation is defined for the {task.name!r} task (YCTFS "
            "augments ListOps, CIFAR-10 and Pathfinder and trains the text "
            "tasks with the multitask denoising loss instead: use "
            "--technique multitask). Tasks with an augmentation: "
            f"{augmented}"
        )
    return AUGMENTATIONS[task.augmentation]
