"""Datasets of the Long Range Arena as numpy arrays.

`load(task, split)` is the one entry point for every task. Each task module
reads the official files (`data_dir=...`) or, where the task has a
generator (ListOps, Pathfinder, Path-X), generates them in the official
layout into `cache_dir()` on first use.

| task | module | x | official files |
|---|---|---|---|
| listops | `listops` | (N, 2000) | `basic_{train,val,test}.tsv` |
| text | `text` | (N, L) bytes | `aclImdb/` or TFDS `imdb_reviews` |
| retrieval | `retrieval` | (N, 2, 4000) bytes | `new_aan_pairs.*.tsv` |
| image | `image` | (N, 1024) pixels | CIFAR-10 batches or TFDS `cifar10` |
| pathfinder | `pathfinder` | (N, 1024) pixels | `pathfinder32/` |
| pathx | `pathfinder` | (N, 16384) pixels | `pathfinder128/` |
| pathx256 | `pathfinder` | (N, 65536) pixels | `pathfinder256/` |

This package imports only numpy and the standard library, so it is fast to
import and independent of the Keras backend.
"""

import importlib
import os
import pathlib

from lra_keras.data._checks import SPLITS
from lra_keras.data._checks import check_split


def cache_dir():
    """Returns the directory where generated datasets are stored.

    `$LRA_KERAS_DATA` if set, else `~/.cache/lra_keras`.

    Returns:
        A `pathlib.Path`; it may not exist yet.
    """
    path = os.environ.get("LRA_KERAS_DATA")
    if path:
        return pathlib.Path(path).expanduser()
    return pathlib.Path.home() / ".cache" / "lra_keras"


def load(task, split, data_dir=None, **options):
    """Loads one split of an LRA task as numpy arrays.

    Args:
        task: str. A key of `lra_keras.tasks.TASKS`, e.g. `"listops"`.
        split: str. One of `"train"`, `"val"`, `"test"`.
        data_dir: str, path-like or None. Directory holding the official
            files of the task. `None` generates the data for tasks that
            have a generator, and is an error for the others. Defaults to
            `None`.
        **options: task-specific options of the loader, e.g. `max_length`
            or `seed` (see `listops.load_listops`).

    Returns:
        A tuple `(x, y)`: `x` of shape `(N, L)` (`(N, 2, L)` for retrieval)
        in the smallest integer dtype that holds the task's ids (uint8
        pixels, uint16 bytes, int32 ListOps), right-padded with 0 where the
        task has padding, and `y` int32 of shape `(N,)`.

    Example:

    >>> x, y = load("listops", "val")  # doctest: +SKIP
    >>> x.shape, y.shape  # doctest: +SKIP
    ((2000, 2000), (2000,))
    """
    # The task's spec names its loader; imported here, since the specs
    # import the readers of this package.
    from lra_keras.tasks import get_task

    spec = get_task(task)
    check_split(split)
    module, loader = spec.loader.split(".")
    module = importlib.import_module(f"lra_keras.data.{module}")
    return getattr(module, loader)(split, data_dir=data_dir, **options)
