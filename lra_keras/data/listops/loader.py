"""The ListOps loader: the LRA release files, or data generated once.

`load_listops()` reads `basic_<split>.tsv` of the LRA release, or
generates the three splits once into `cache_dir()/listops/<name>` with
`generate()`, writes them as release files (`write_tsv()`), and reads them.
"""

import json
import pathlib

import numpy as np

from lra_keras._atomic import atomic_open
from lra_keras.data._checks import check_int as _check_int
from lra_keras.data._checks import check_writable
from lra_keras.data.listops.generator import _generator_params
from lra_keras.data.listops.generator import generate
from lra_keras.data.listops.tsv import read_tsv
from lra_keras.data.listops.tsv import write_tsv
from lra_keras.data.listops.vocabulary import MAX_LENGTH

_FILE_NAMES = {
    "train": "basic_train.tsv",
    "val": "basic_val.tsv",
    "test": "basic_test.tsv",
}
_COMPLETE_MARKER = ".complete"


def load_listops(
    split,
    data_dir=None,
    max_length=MAX_LENGTH,
    seed=0,
    num_train=96000,
    num_val=2000,
    num_test=2000,
    **generator_params,
):
    """Loads a split of ListOps, reading the LRA files or generating them.

    With `data_dir`, reads `basic_<split>.tsv` of the LRA release from
    `data_dir` (or from `data_dir/listops-1000` or
    `data_dir/lra_release/listops-1000`). Without it, generates the data
    once with `generate()` into `cache_dir()/listops/<name>` (`seed0` for
    the LRA parameters; the name records the seed and every non-default
    parameter), in the official files, and reads them; later calls only
    read. The split is in generation order: the first `num_train` trees
    are train, the next `num_val` val, the next `num_test` test.

    Args:
        split: str. One of `"train"`, `"val"`, `"test"`.
        data_dir: str, path-like or None. Directory of the LRA files; `None`
            generates them. Defaults to `None`.
        max_length: int. Sequence length of `x`; sources are truncated or
            padded to it. When generating, it is also the generator's
            `max_length`: trees are strictly shorter. Defaults to 2000.
        seed: int. Generator seed; ignored with `data_dir`. Defaults to 0.
        num_train: int. Generated train size. Defaults to 96000.
        num_val: int. Generated validation size. Defaults to 2000.
        num_test: int. Generated test size. Defaults to 2000.
        **generator_params: other arguments of `generate()`: `max_depth`,
            `max_args`, `min_length`, `operator_probability` (part of the
            cache name) and `num_workers` (not).

    Returns:
        A tuple `(x, y)` as returned by `read_tsv()`.
    """
    if split not in _FILE_NAMES:
        raise ValueError(
            f"Unknown split; expected one of {list(_FILE_NAMES)}. "
            f"Received: split={split!r}"
        )
    allowed = {"max_depth", "max_args", "min_length", "operator_probability"}
    unknown = set(generator_params) - allowed - {"num_workers"}
    if unknown:
        raise ValueError(
            f"Unknown ListOps options {sorted(unknown)}; expected "
            "data_dir, max_length, seed, num_train, num_val, num_test, "
            f"num_workers or {sorted(allowed)}. "
            f"Received: {sorted(generator_params)}"
        )
    if data_dir is not None:
        if set(generator_params) & allowed:
            raise ValueError(
                "Generator options apply only to generated data "
                "(data_dir=None); the release files hold LRA's trees "
                "(500-1999 tokens, depth 10) and are read as they are. "
                "The quick preset sets min_length=10 and max_depth=4 for "
                "its shorter generated trees: `--set min_length=None "
                "max_depth=None sequence_length=2000` reads the files "
                "instead. Received: data_dir="
                f"{str(data_dir)!r}, "
                f"{sorted(set(generator_params) & allowed)}"
            )
        return read_tsv(_find_release_file(data_dir, split), max_length)

    num_workers = generator_params.pop("num_workers", None)
    sizes = dict(num_train=num_train, num_val=num_val, num_test=num_test)
    for name, value in sizes.items():
        _check_int(name, value, minimum=0)
    _check_int("seed", seed, minimum=0)
    params = _generator_params(
        **{**_GENERATOR_DEFAULTS, **generator_params, "max_length": max_length}
    )
    directory = _cache_directory(seed, sizes, params)
    if not (directory / _COMPLETE_MARKER).exists():
        _generate_files(directory, seed, sizes, params, num_workers)
    path = directory / _FILE_NAMES[split]
    expected = sizes[f"num_{split}"]
    if expected == 0:  # read_tsv refuses a file without rows
        return np.zeros((0, max_length), np.int32), np.zeros(0, np.int32)
    x, y = read_tsv(path, max_length)
    if len(y) != expected:
        raise ValueError(
            f"The generated ListOps file {path} holds {len(y)} rows; its "
            f"{_COMPLETE_MARKER} marker records num_{split}={expected}. "
            "The cache was damaged (truncated or edited); delete "
            f"{directory} to generate it again."
        )
    return x, y


_GENERATOR_DEFAULTS = dict(
    max_depth=10,
    max_args=10,
    min_length=500,
    max_length=MAX_LENGTH,
    operator_probability=0.25,
)
_SIZE_DEFAULTS = dict(num_train=96000, num_val=2000, num_test=2000)


def _cache_directory(seed, sizes, params):
    # Imported here: the package imports this module.
    from lra_keras.data import cache_dir

    settings = {**sizes, **params}
    defaults = {**_SIZE_DEFAULTS, **_GENERATOR_DEFAULTS}
    name = f"seed{seed}" + "".join(
        f"-{key}{settings[key]}"
        for key in sorted(settings)
        if settings[key] != defaults[key]
    )
    return cache_dir() / "listops" / name


def _generate_files(directory, seed, sizes, params, num_workers):
    total = sum(sizes.values())
    check_writable(directory, "generated ListOps files")
    print(f"Generating {total} ListOps trees into {directory}", flush=True)
    rows = generate(
        total, seed, **params, num_workers=num_workers, progress=True
    )
    begin = 0
    for split, size in zip(_FILE_NAMES, sizes.values()):
        write_tsv(directory / _FILE_NAMES[split], rows[begin : begin + size])
        begin += size
    # Written last: a directory without it is regenerated, never half-read.
    marker = {"seed": seed, **sizes, **params}
    with atomic_open(
        directory / _COMPLETE_MARKER, "w", encoding="utf-8", newline="\n"
    ) as f:
        json.dump(marker, f, indent=2, sort_keys=True)


def _find_release_file(data_dir, split):
    data_dir = pathlib.Path(data_dir).expanduser()
    name = _FILE_NAMES[split]
    candidates = [
        data_dir / name,
        data_dir / "listops-1000" / name,
        data_dir / "lra_release" / "listops-1000" / name,
    ]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"ListOps file {name} not found in {data_dir} (also looked in "
        "listops-1000/ and lra_release/listops-1000/ below it). Download "
        "the LRA release lra_release.gz (linked from the README of "
        "https://github.com/google-research/long-range-arena), extract it, "
        "and pass the folder lra_release/listops-1000/ (which holds "
        "basic_train.tsv, basic_val.tsv and basic_test.tsv) as data_dir. "
        "Or omit data_dir (--data-dir) to generate the data locally."
    )
