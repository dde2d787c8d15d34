"""Argument checks and small helpers shared by the data modules."""

import os

import numpy as np

SPLITS = ("train", "val", "test")


def check_int(name, value, minimum):
    """Raises ValueError unless `value` is an int (not a bool) >= minimum."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or value < minimum
    ):
        raise ValueError(
            f"`{name}` must be an int >= {minimum}. Received: {name}={value!r}"
        )


def check_split(split):
    """Raises ValueError unless `split` is one of `SPLITS`."""
    if split not in SPLITS:
        raise ValueError(
            f"Unknown split; expected one of {list(SPLITS)}. "
            f"Received: split={split!r}"
        )


def available_cpus():
    """CPUs this process may run on (its affinity mask on Linux)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def check_writable(directory, what):
    """Creates `directory` and checks a file can be written in it, before
    any long work whose result goes there; the error names
    `LRA_KERAS_DATA`, which moves the cache."""
    directory = os.fspath(directory)
    probe = os.path.join(directory, f".write-test-{os.getpid()}")
    try:
        os.makedirs(directory, exist_ok=True)
        with open(probe, "wb"):
            pass
        os.remove(probe)
    except OSError as error:
        raise OSError(
            f"Cannot write {what} into {directory} ({error.strerror or error})."
            " Set LRA_KERAS_DATA to a writable directory (the data cache), "
            "or pass --data-dir with the official files."
        ) from error
