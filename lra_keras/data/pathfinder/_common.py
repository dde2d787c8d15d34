"""What the Pathfinder generator, reader and loader share.

The facts of the task (resolutions, difficulties, ids, sizes), the LRA
parameter blocks of the generator (`GENERATOR_PARAMS`), the argument checks
and the progress bar.

Original files read: `lra_benchmarks/data/pathfinder.py` of
google-research/long-range-arena (the TFDS builders, whose docstrings hold
the parameter blocks per resolution) and `snakes2_wrapper.py` of
drewlinsley/pathfinder (the defaults, and the settings shared by every
block).
"""

import contextlib

# === Constants ===

RESOLUTIONS = (32, 64, 128, 256)
DIFFICULTIES = {
    "easy": "curv_baseline",
    "intermediate": "curv_contour_length_9",
    "hard": "curv_contour_length_14",
}
CONTOUR_LENGTHS = {"easy": 6, "intermediate": 9, "hard": 14}
# Pixels are tokens 0..255 and every position is real (no padding id).
MASK_ID = 256
VOCABULARY_SIZE = 257
NUM_CLASSES = 2
# Samples per difficulty and resolution in the LRA release: 200
# metadata files of 1000 lines (`n_images = 200000` in the generator
# wrapper), i.e. 160k/20k/20k after the split.
DATASET_SIZE = 200_000
# Samples per `imgs/<k>/` folder and `metadata/<k>.npy` file.
SAMPLES_PER_BATCH = 1000

# The generator's version, part of the folder of the generated images
# (`loader.generated_root`): images generated before a change of the
# generator's output are not read as the new generator's. 2: the official
# seed search's refusals and pivot rounding (images closer to the official
# ones at 32 and 64 pixels).
GENERATOR_VERSION = 2

RELEASE_URL = "https://storage.googleapis.com/long-range-arena/lra_release.gz"

# The LRA parameter blocks (docstrings of `Pathfinder32` ... `Pathfinder256`
# in lra_benchmarks/data/pathfinder.py); unset values are the defaults of
# `snakes2_wrapper.Args` (paddle length 5, padding 22, seed distance 27,
# paddle contrast 1). `distractor_paddles` is the numerator of
# `num_distractor_snakes = N // distractor_length`. The Python types follow
# the official scripts, because they are written into the metadata.
GENERATOR_PARAMS = {
    32: dict(
        paddle_margins=(1,),
        padding=1,
        paddle_length=2,
        marker_radius=1.5,
        paddle_thickness=0.5,
        seed_distance=7,
        continuity=1.0,
        distractor_paddles=20,
        snake_contrast=2.0,
        paddle_contrast=0.75,
    ),
    64: dict(
        paddle_margins=(1,),
        padding=1,
        paddle_length=5,
        marker_radius=2.5,
        paddle_thickness=1,
        seed_distance=12,
        continuity=1.8,
        distractor_paddles=22,
        snake_contrast=0.8,
        paddle_contrast=1.0,
    ),
    128: dict(
        paddle_margins=(2, 3),
        padding=1,
        paddle_length=5,
        marker_radius=3,
        paddle_thickness=1.5,
        seed_distance=20,
        continuity=1.8,
        distractor_paddles=35,
        snake_contrast=0.9,
        paddle_contrast=1.0,
    ),
    256: dict(
        paddle_margins=(3,),
        padding=22,
        paddle_length=5,
        marker_radius=5,
        paddle_thickness=2,
        seed_distance=27,
        continuity=1.8,
        distractor_paddles=30,
        snake_contrast=1.0,
        paddle_contrast=1.0,
    ),
}
# Shared by every block (snakes2_wrapper.py).
ANTIALIAS_SCALE = 2
MAX_PADDLE_RETRIAL = 2
MAX_DISTRACTOR_CONTOUR_RETRIAL = 4

# === Argument checks ===


def _check_resolution(resolution):
    if isinstance(resolution, bool) or resolution not in GENERATOR_PARAMS:
        raise ValueError(
            f"Unknown resolution; expected one of {list(RESOLUTIONS)}. "
            f"Received: resolution={resolution!r}"
        )


def _check_difficulty(difficulty, allow_all=False):
    names = list(DIFFICULTIES) + (["all"] if allow_all else [])
    if difficulty not in names:
        raise ValueError(
            f"Unknown difficulty; expected one of {names}. "
            f"Received: difficulty={difficulty!r}"
        )


# === Progress bar ===


@contextlib.contextmanager
def _progress_bar(progress, total, resolution, difficulty):
    if not progress or not total:
        yield None
        return
    # tqdm is imported only when a bar is requested.
    from tqdm.auto import tqdm

    bar = tqdm(
        total=total, unit="img", desc=f"Pathfinder{resolution} {difficulty}"
    )
    try:
        yield bar
    finally:
        bar.close()
