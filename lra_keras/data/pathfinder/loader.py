"""The Pathfinder loader: LRA's splits, of the release or generated data.

`load_pathfinder()` (and `load_pathx()`, `load_pathx256()`) reads the
official files of the LRA release (`official.py`), or generates the first
`num_samples` images of a seed into the cache, in the same layout, batch
by batch (`generator.py`), and reads those.

Splits, as the LRA input pipeline: the first 80% of the samples are train,
the next 10% val and the last 10% test (TFDS `split[:80%]`, `[80%:90%]`,
`[90%:]`, boundaries rounded to the closest integer), and images of 0 bytes
are then dropped from each split (the LRA pipeline filters
`tf.strings.length(image) > 0`). The order is metadata file number, then
line; TFDS would have shuffled the examples by a hash of their key first,
which cannot be reproduced without TFDS, and does not matter for
identically distributed samples.

The LRA release holds 200,000 images per difficulty and resolution (200
metadata files of 1000 lines; the generator wrapper's default
`n_images = 200000`), i.e. 160k/20k/20k after the split; `DATASET_SIZE`.

Original files read: `lra_benchmarks/image/input_pipeline.py` of
google-research/long-range-arena (`get_pathfinder_base_datasets`: split and
empty-image filter); `_pct_to_abs_closest` in
`tensorflow_datasets/core/splits.py` (split rounding).
"""

import math
import pathlib

import numpy as np

from lra_keras.data._checks import available_cpus as _available_cpus
from lra_keras.data._checks import check_int as _check_int
from lra_keras.data._checks import check_split as _check_split
from lra_keras.data._checks import check_writable
from lra_keras.data.pathfinder._common import CONTOUR_LENGTHS
from lra_keras.data.pathfinder._common import DATASET_SIZE
from lra_keras.data.pathfinder._common import DIFFICULTIES
from lra_keras.data.pathfinder._common import GENERATOR_VERSION
from lra_keras.data.pathfinder._common import RELEASE_URL
from lra_keras.data.pathfinder._common import SAMPLES_PER_BATCH
from lra_keras.data.pathfinder._common import _check_difficulty
from lra_keras.data.pathfinder._common import _check_resolution
from lra_keras.data.pathfinder._common import _progress_bar
from lra_keras.data.pathfinder.generator import _generate_ranges
from lra_keras.data.pathfinder.official import _read_difficulty
from lra_keras.data.pathfinder.official import _read_metadata
from lra_keras.data.pathfinder.official import write_official


def _split_bounds(num_samples):
    # TFDS `split[:80%]`, `[80%:90%]`, `[90%:]` with "closest" rounding
    # (`_pct_to_abs_closest` in tensorflow_datasets/core/splits.py).
    train = int(round(80 * num_samples / 100.0))
    val = int(round(90 * num_samples / 100.0))
    return {
        "train": (0, train),
        "val": (train, val),
        "test": (val, num_samples),
    }


def _find_root(data_dir, resolution):
    data_dir = pathlib.Path(data_dir).expanduser()
    name = f"pathfinder{resolution}"
    for candidate in (
        data_dir,
        data_dir / name,
        data_dir / "lra_release" / name,
    ):
        if any((candidate / d).is_dir() for d in DIFFICULTIES.values()):
            return candidate
    raise FileNotFoundError(
        f"No Pathfinder-{resolution} data in {data_dir} (looked for "
        f"{'/, '.join(DIFFICULTIES.values())}/ in it, in {name}/ and in "
        f"lra_release/{name}/). Download the LRA release lra_release.gz "
        f"from {RELEASE_URL}, extract it (tar -xzf lra_release.gz), and "
        f"pass the folder lra_release/{name}/ (or its parent) as data_dir. "
        "Or omit data_dir (--data-dir) to generate the data locally."
    )


def generated_root(resolution, seed):
    """The folder of the images generated for `seed`: `cache_dir()/
    pathfinder<R>/seed<seed>-generator<GENERATOR_VERSION>/`."""
    import lra_keras.data as data_pkg

    return (data_pkg.cache_dir() / f"pathfinder{resolution}"
            / f"seed{seed}-generator{GENERATOR_VERSION}")


def _ensure_generated(
    root, difficulty, resolution, seed, num_samples, num_workers, progress
):
    """Generates the missing samples of the first `num_samples`, by batch."""
    directory = root / DIFFICULTIES[difficulty]
    contour_length = CONTOUR_LENGTHS[difficulty]
    missing = []  # (batch, first missing number, end number)
    for batch in range(math.ceil(num_samples / SAMPLES_PER_BATCH)):
        want = min(SAMPLES_PER_BATCH, num_samples - batch * SAMPLES_PER_BATCH)
        path = directory / "metadata" / f"{batch}.npy"
        have = len(_read_metadata(path)) if path.exists() else 0
        if have < want:
            missing.append((batch, have, want))
    total = sum(want - have for _, have, want in missing)
    if not total:
        return
    check_writable(directory, f"generated Pathfinder-{resolution} images")
    print(
        f"Generating {total} Pathfinder-{resolution} {difficulty} images "
        f"into {directory}",
        flush=True,
    )
    if num_workers is None:
        num_workers = _available_cpus()
    _check_int("num_workers", num_workers, minimum=1)
    starts = [batch * SAMPLES_PER_BATCH + have for batch, have, _ in missing]

    def write(index, images, labels, margins):
        # Images first, metadata last: a batch counts as written only up
        # to the lines of its metadata file.
        write_official(root, images, labels, difficulty,
                       start_index=starts[index], paddle_margins=margins,
                       batch_size=SAMPLES_PER_BATCH)

    with _progress_bar(progress, total, resolution, difficulty) as bar:
        _generate_ranges(
            seed, resolution, contour_length,
            [(begin, begin + want - have)
             for begin, (_, have, want) in zip(starts, missing)],
            num_workers, bar, write,
        )


def load_pathfinder(
    split,
    data_dir=None,
    max_length=None,
    difficulty="hard",
    num_samples=None,
    seed=0,
    resolution=32,
    progress=True,
    num_workers=None,
):
    """Loads a split of Pathfinder, reading the LRA files or generating them.

    With `data_dir`, reads the official files (`read_official`) from
    `data_dir`, `data_dir/pathfinder<R>` or `data_dir/lra_release/
    pathfinder<R>`. Without it, generates the first `num_samples` images of
    `seed` into `generated_root(resolution, seed)` in the official
    layout, in batches of `SAMPLES_PER_BATCH` (one metadata file each), and
    reads them; a later call for more samples generates only the missing
    ones, and the first samples never change.

    The split is LRA's: the first 80% of the samples (in metadata file and
    line order) are train, the next 10% val, the last 10% test; 0-byte
    images are then dropped. `difficulty="all"` concatenates that split of
    each of the three difficulties (easy, intermediate, hard).

    Args:
        split: str. One of `"train"`, `"val"`, `"test"`.
        data_dir: str, path-like or None. Directory of the official files;
            `None` generates them. Defaults to `None`.
        max_length: int or None. Must be `None` or `resolution**2`: every
            pixel is a token. Defaults to `None`.
        difficulty: str. `"easy"`, `"intermediate"`, `"hard"` or `"all"`.
            Defaults to `"hard"`, as LRA.
        num_samples: int or None. Samples per difficulty, taken before
            the split: the first `num_samples` generated, or (with
            `data_dir`) the first `num_samples` of the official files in
            metadata order, so `--preset quick` also runs on them. `None`
            is every official sample, or `DATASET_SIZE` (200,000, the
            release's size) generated. Defaults to `None`.
        seed: int. Generator seed; ignored with `data_dir`. Defaults to 0.
        resolution: int. Image side, one of `RESOLUTIONS`. Defaults to 32.
        progress: bool. Whether to show progress bars. Defaults to `True`.
        num_workers: int or None. Generator processes; `None` uses every
            available CPU. Defaults to `None`.

    Returns:
        A tuple `(x, y)`: `x` uint8 of shape `(N, resolution**2)`, pixels
        0-255 row by row, and `y` int32 of shape `(N,)`.
    """
    _check_split(split)
    _check_resolution(resolution)
    _check_difficulty(difficulty, allow_all=True)
    if max_length is not None and max_length != resolution * resolution:
        raise ValueError(
            f"Pathfinder-{resolution} sequences have exactly "
            f"{resolution * resolution} pixels; `max_length` must be None "
            f"or {resolution * resolution}. Received: max_length={max_length}"
        )
    _check_int("seed", seed, minimum=0)
    difficulties = list(DIFFICULTIES) if difficulty == "all" else [difficulty]
    if data_dir is not None:
        if num_samples is not None:
            _check_int("num_samples", num_samples, minimum=1)
        root = _find_root(data_dir, resolution)
    else:
        if num_samples is None:
            num_samples = DATASET_SIZE
        _check_int("num_samples", num_samples, minimum=1)
        root = generated_root(resolution, seed)
        for name in difficulties:
            _ensure_generated(
                root, name, resolution, seed, num_samples, num_workers, progress
            )
    xs, ys = [], []
    for name in difficulties:
        if data_dir is not None and not (root / DIFFICULTIES[name]).is_dir():
            raise FileNotFoundError(
                f"No {DIFFICULTIES[name]}/ in {root}: the {name!r} "
                f"difficulty is missing. Download lra_release.gz from "
                f"{RELEASE_URL} and extract it."
            )
        x, y, valid = _read_difficulty(root, name, resolution, progress)
        if num_samples is not None:
            if len(y) < num_samples:
                folder = root / DIFFICULTIES[name]
                raise ValueError(
                    f"num_samples={num_samples}, but {folder} holds "
                    f"{len(y)} samples. Ask for at most {len(y)}, or "
                    "None for all of them."
                )
            x, y, valid = x[:num_samples], y[:num_samples], valid[:num_samples]
        begin, end = _split_bounds(len(y))[split]
        x, y, keep = x[begin:end], y[begin:end], valid[begin:end]
        if not keep.all():
            x, y = x[keep], y[keep]
        xs.append(x)
        ys.append(y)
    if len(xs) == 1:
        # A slice of the memory-mapped cache, not a copy: the train split
        # of Path-X-256 alone is 10 GB.
        return xs[0], ys[0]
    return np.concatenate(xs), np.concatenate(ys)


def load_pathx(split, **options):
    """`load_pathfinder` at 128x128 (Path-X, 16384 tokens)."""
    return load_pathfinder(split, resolution=128, **options)


def load_pathx256(split, **options):
    """`load_pathfinder` at 256x256 (Path-X-256, 65536 tokens)."""
    return load_pathfinder(split, resolution=256, **options)
