"""Atomic file writes: a temporary file next to the destination, renamed.

A rename within one directory is atomic (`os.replace`), so a reader sees the
old file or the whole new one, never a partial write, and a write that fails
or is interrupted leaves the old file in place and no temporary file behind.
Every writer of lra_keras goes through `atomic_path`: the data package (text
and binary files, decoded caches) and `saving.save_model`.

Standard library only: `lra_keras.data` imports nothing but numpy and the
standard library, and must stay that way.
"""

import collections
import contextlib
import json
import math
import os
import pathlib
import re
import secrets
import time


@contextlib.contextmanager
def atomic_path(path, suffix=""):
    """Yields a temporary path that replaces `path` when the block succeeds.

    The temporary path is `.<name>.<pid>.<random>.tmp<suffix>` in the
    directory of `path` (created if missing), so that the rename stays
    within one file system and two processes never share a temporary. If
    the block raises anything (`KeyboardInterrupt` included), the temporary
    is removed, `path` is left as it was, and the exception propagates. A
    killed writer cannot clean up: the first write of this process into the
    directory lists the temporaries there, and each write of `path` removes
    those of `path` whose process no longer runs.

    Args:
        path: str or path-like. The destination.
        suffix: str. End of the temporary name, for writers that check it
            (`model.save` wants `.keras`). Defaults to `""`.

    Yields:
        A `pathlib.Path` to write, which does not exist yet.

    Example:

    >>> with atomic_path("model.keras", suffix=".keras") as temporary:
    ...     model.save(temporary)  # doctest: +SKIP
    """
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_orphans(path)
    temporary = path.with_name(
        f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp{suffix}"
    )
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


# A temporary of a process that no longer runs, untouched for this long,
# is an orphan (its writer was killed: SIGKILL skips every cleanup).
_ORPHAN_SECONDS = 60
# `.<name>.<pid>.<8 hex>.tmp<suffix>`, as `atomic_path` names them.
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.tmp")
# Directory -> {destination name: [(temporary, pid)]}: each directory is
# listed once per process (a Pathfinder folder receives a thousand
# writes), at its first write.
_temporaries = {}


def _remove_orphans(path):
    """Removes the temporaries of `path` left by killed writers."""
    directory = path.parent
    found = _temporaries.get(directory)
    if found is None:
        found = _temporaries[directory] = collections.defaultdict(list)
        with os.scandir(directory) as entries:
            for entry in entries:
                match = _TEMPORARY.match(entry.name)
                if match:
                    found[match["name"]].append(
                        (directory / entry.name, int(match["pid"])))
    for temporary, pid in found.pop(path.name, ()):
        if _running(pid):
            continue
        try:
            if time.time() - temporary.stat().st_mtime > _ORPHAN_SECONDS:
                temporary.unlink()
        except OSError:
            pass  # gone already, or not ours to remove


def _running(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


@contextlib.contextmanager
def atomic_open(path, mode="w", **kwargs):
    """`open(path, mode, **kwargs)` through `atomic_path`.

    Args:
        path: str or path-like. The destination.
        mode: str. `"w"` (or `"wt"`) for text, `"wb"` for bytes. Defaults to
            `"w"`.
        **kwargs: passed to `open()`, e.g. `encoding`, `newline`.

    Yields:
        The open file; it is closed, then renamed to `path`, when the block
        succeeds.
    """
    if mode not in ("w", "wt", "wb"):
        raise ValueError(
            f"`mode` must be 'w', 'wt' or 'wb'. Received: mode={mode!r}"
        )
    with atomic_path(path) as temporary:
        # "x": the temporary name is new, and must not be someone else's.
        with open(temporary, mode.replace("w", "x"), **kwargs) as f:
            yield f


def write_json(path, obj):
    """Writes `obj` as indented, strict JSON (then a newline) atomically.

    Values that JSON cannot hold (paths, numpy scalars) are written as
    their `str()`; NaN and infinities, which strict JSON has no words
    for, as `null`.
    """
    text = json.dumps(_finite(obj), indent=2, default=str, allow_nan=False)
    with atomic_open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")


def _finite(obj):
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {key: _finite(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(value) for value in obj]
    return obj
