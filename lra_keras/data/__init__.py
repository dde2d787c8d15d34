"""Datasets of the Long Range Arena as numpy arrays.

`load(task, split)` is the one entry point for every task. Each task module
reads the official files (`data_dir=...`) or, where the task has a
generator, generates them into `cache_dir()` on first use.

This package imports only numpy and the standard library, so it is fast to
import and independent of the Keras backend.
"""

import os
import pathlib

from lra_keras.data import listops

# One line per task: name -> loader(split, data_dir=None, **options).
DATASETS = {
    "listops": listops.load_listops,
}
SPLITS = ("train", "val", "test")


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
        task: str. A key of `DATASETS`, e.g. `"listops"`.
        split: str. One of `"train"`, `"val"`, `"test"`.
        data_dir: str, path-like or None. Directory holding the official
            files of the task. `None` generates the data for tasks that
            have a generator, and is an error for the others. Defaults to
            `None`.
        **options: task-specific options of the loader, e.g. `max_length`
            or `seed` (see `listops.load_listops`).

    Returns:
        A tuple `(x, y)`: `x` int32 of shape `(N, L)`, padded with 0, and
        `y` int32 of shape `(N,)`.

    Example:

    >>> x, y = load("listops", "val")  # doctest: +SKIP
    >>> x.shape, y.shape  # doctest: +SKIP
    ((2000, 2000), (2000,))
    """
    if task not in DATASETS:
        raise ValueError(
            f"Unknown task; expected one of {sorted(DATASETS)}. "
            f"Received: task={task!r}"
        )
    if split not in SPLITS:
        raise ValueError(
            f"Unknown split; expected one of {list(SPLITS)}. "
            f"Received: split={split!r}"
        )
    return DATASETS[task](split, data_dir=data_dir, **options)
