"""The Pathfinder generator: `generate()`, with the LRA parameters.

`generate()` reimplements the official generator (`snakes2.py`) with the
LRA parameter blocks (`GENERATOR_PARAMS`): the same random process
(`snakes.py`), drawn with lookup tables instead of redrawing every paddle
(`paddles.py`) and with many attempts at the target contours run side by
side (`batched.py`), about 40-50 times faster per core than the official
generator (`benchmarks/pathfinder_generator.py`).

Departures from the official code, both deliberate (`snakes.py` holds the
others):

- Labels: the official generator draws each label Bernoulli(0.5). Here the
  two samples of each pair `(2j, 2j+1)` get one label 1 and one label 0 in
  random order, so every even-sized prefix (each metadata file of 1000
  samples, each split) is exactly balanced.
- Randomness: every sample has its own stream, seeded from
  `(seed, resolution, contour length, index)`, so the output is the same for
  any number of workers and a larger `num_samples` only appends samples.

Original files read: `snakes2.py` and `snakes2_wrapper.py` of
drewlinsley/pathfinder.
"""

import numpy as np

from lra_keras.data._checks import available_cpus as _available_cpus
from lra_keras.data._checks import check_int as _check_int
from lra_keras.data._parallel import run_in_order
from lra_keras.data.pathfinder._common import CONTOUR_LENGTHS
from lra_keras.data.pathfinder._common import _check_difficulty
from lra_keras.data.pathfinder._common import _check_resolution
from lra_keras.data.pathfinder._common import _progress_bar
from lra_keras.data.pathfinder.batched import _two_snakes_all
from lra_keras.data.pathfinder.paddles import _tables
from lra_keras.data.pathfinder.snakes import _config
from lra_keras.data.pathfinder.snakes import _finish
from lra_keras.data.pathfinder.snakes import _two_snakes_sequential

# Samples per unit of work sent to a worker process, per resolution; any
# value gives the same output (each sample has its own random stream).
# Small images gain from batching many images' attempts together, large
# ones have enough work per image to share it among workers.
_CHUNK_SIZE = {32: 32, 64: 8, 128: 8, 256: 8}
# Worker processes are started only when more work than this remains.
_POOL_MIN_SECONDS = 2.0
# Key of the label streams, apart from the image streams.
_LABEL_STREAM = 1 << 20


def _sample_rng(seed, resolution, contour_length, index):
    sequence = np.random.SeedSequence(
        seed, spawn_key=(resolution, contour_length, index)
    )
    return np.random.default_rng(sequence)


def _labels(seed, resolution, contour_length, start, stop):
    """Labels of samples [start, stop): one 1 and one 0 per pair."""
    labels = np.empty(stop - start, np.int32)
    for i in range(start, stop):
        pair = i // 2
        sequence = np.random.SeedSequence(
            seed, spawn_key=(resolution, contour_length, _LABEL_STREAM, pair)
        )
        first = int(np.random.default_rng(sequence).integers(0, 2))
        labels[i - start] = first if i % 2 == 0 else 1 - first
    return labels


def _draw_samples(
    rngs, resolution, contour_length, labels, details=False, sequential=False
):
    """Images drawn with one random stream each.

    Returns a list of `(uint8 (R, R) image, paddle margin[, details])`.
    `sequential=True` runs the attempts at the target contours one at a
    time, as the official code (the reference path of the benchmark).
    """
    config = _config(resolution, contour_length)
    margins = config["paddle_margins"]
    chosen = [margins[int(rng.integers(len(margins)))] for rng in rngs]
    targets = [None] * len(rngs)
    if sequential:
        for i, rng in enumerate(rngs):
            targets[i] = _two_snakes_sequential(
                _tables(resolution, chosen[i]), config, rng
            )
    else:
        _two_snakes_all(rngs, resolution, config, chosen, targets)
    return [
        _finish(
            _tables(resolution, chosen[i]),
            config,
            rng,
            int(labels[i]),
            targets[i],
            details,
        )
        for i, rng in enumerate(rngs)
    ]


def _draw_range(seed, resolution, contour_length, start, stop, **options):
    """Samples `start..stop` of `seed`: (labels, `_draw_samples` output)."""
    labels = _labels(seed, resolution, contour_length, start, stop)
    rngs = [
        _sample_rng(seed, resolution, contour_length, i)
        for i in range(start, stop)
    ]
    return labels, _draw_samples(
        rngs, resolution, contour_length, labels, **options
    )


def _generate_chunk(seed, resolution, contour_length, start, stop):
    labels, drawn = _draw_range(seed, resolution, contour_length, start, stop)
    images = np.stack([image for image, _ in drawn])
    margins = np.array([margin for _, margin in drawn], np.int32)
    return images, labels, margins


def _run_chunks(tasks, num_workers, on_result):
    """Runs `_generate_chunk(*task)` for each task; results in task order."""
    tasks = list(tasks)
    run_in_order(
        _generate_chunk,
        tasks,
        on_result,
        num_workers,
        remaining=lambda: len(tasks) - 1,
        pool_min_seconds=_POOL_MIN_SECONDS,
    )


def _chunk_tasks(seed, resolution, contour_length, start, stop):
    size = _CHUNK_SIZE[resolution]
    return [
        (seed, resolution, contour_length, i, min(i + size, stop))
        for i in range(start, stop, size)
    ]


def _generate_range(
    seed, resolution, contour_length, start, stop, num_workers, bar
):
    """Samples `start..stop`: `(images, labels, margins)`."""
    ranges = []
    _generate_ranges(seed, resolution, contour_length, [(start, stop)],
                     num_workers, bar,
                     lambda _, *result: ranges.append(result))
    return ranges[0]


def _generate_ranges(seed, resolution, contour_length, ranges, num_workers,
                     bar, on_range):
    """Generates each `(start, stop)` of `ranges` and calls
    `on_range(index, images, labels, margins)` for each as soon as its
    last chunk is done (in order; an empty range at once). One pool of
    workers serves every range, so the loader's batches of
    `SAMPLES_PER_BATCH` images start it once (a pool per batch of 1,000
    took longer to start than to draw the batch:
    200,000 images ran at ~590 a second on 16 cores)."""
    tasks, owner, left = [], [], {}
    for index, (start, stop) in enumerate(ranges):
        chunks = _chunk_tasks(seed, resolution, contour_length, start, stop)
        tasks += chunks
        owner += [index] * len(chunks)
        left[index] = len(chunks)  # chunks still to come
    pending = {index: [] for index in left}

    def finish(index):
        parts = pending.pop(index)
        if parts:
            on_range(index, *(np.concatenate(part) for part in zip(*parts)))
        else:
            r = resolution
            on_range(index, np.zeros((0, r, r), np.uint8),
                     np.zeros(0, np.int32), np.zeros(0, np.int32))

    for index in [i for i, n in left.items() if not n]:
        finish(index)  # empty ranges
    done = iter(owner)

    def collect(result):
        index = next(done)
        pending[index].append(result)
        if bar is not None:
            bar.update(len(result[1]))
        left[index] -= 1
        if not left[index]:
            finish(index)

    _run_chunks(tasks, num_workers, collect)


def generate(
    num_samples,
    resolution=32,
    difficulty="hard",
    seed=0,
    *,
    num_workers=None,
    progress=False,
):
    """Generates Pathfinder images with the LRA parameters.

    Draws from the process of the official generator (`snakes2.py`) with
    the LRA parameter block of `resolution` (the docstrings of this module
    and of `snakes.py` describe the algorithm and the few deliberate
    departures). Sample `i` depends only on `(seed, resolution,
    difficulty, i)`: the output does not depend on `num_workers`, and the
    result for `n` samples is a prefix of the result for any larger `n`.

    Labels are balanced exactly: the samples `2j` and `2j + 1` hold one
    label 1 and one label 0, in random order, so an even `num_samples` has
    exactly `num_samples // 2` positives (an odd one, one more or one less).

    Worker processes are started with "spawn", which is safe when JAX,
    TensorFlow or PyTorch are already imported; they do not re-run the
    calling script, so no `if __name__ == "__main__":` guard is needed
    (scripts, notebooks and `python -` alike).
    `benchmarks/pathfinder_generator.py` measures the throughput.

    Args:
        num_samples: int. Number of images.
        resolution: int. Image side, one of `RESOLUTIONS`. Defaults to 32.
        difficulty: str. `"easy"`, `"intermediate"` or `"hard"` (contour
            length 6, 9 or 14). Defaults to `"hard"`, as LRA.
        seed: int. Non-negative random seed. Defaults to 0.
        num_workers: int or None. Worker processes; `None` uses every
            available CPU, 1 generates in this process. Defaults to `None`.
        progress: bool. Whether to show a tqdm progress bar. Defaults to
            `False`.

    Returns:
        A tuple `(images, labels)`: `images` uint8 of shape
        `(num_samples, resolution, resolution)`, `labels` int32 of shape
        `(num_samples,)`, 1 when both markers lie on the same contour.

    Example:

    >>> images, labels = generate(4, resolution=32, seed=0)
    >>> images.shape, images.dtype, int(labels.sum())
    ((4, 32, 32), dtype('uint8'), 2)
    """
    images, labels, _ = _generate(
        num_samples, resolution, difficulty, seed, num_workers, progress
    )
    return images, labels


def _generate(num_samples, resolution, difficulty, seed, num_workers, progress):
    _check_int("num_samples", num_samples, minimum=0)
    _check_resolution(resolution)
    _check_difficulty(difficulty)
    _check_int("seed", seed, minimum=0)
    if num_workers is None:
        num_workers = _available_cpus()
    _check_int("num_workers", num_workers, minimum=1)
    with _progress_bar(progress, num_samples, resolution, difficulty) as bar:
        return _generate_range(
            seed,
            resolution,
            CONTOUR_LENGTHS[difficulty],
            0,
            num_samples,
            num_workers,
            bar,
        )
