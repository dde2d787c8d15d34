"""Pathfinder and Path-X: generator and reader of the official files.

Pathfinder (Linsley et al. 2018; Kim*, Linsley* et al. 2020) asks whether
two circle markers are joined by one contour of short dashed "paddles", among
distractor contours. The Long Range Arena feeds the 8-bit grayscale image as
a sequence of pixels: 32x32 (Pathfinder, 1024 tokens), 128x128 (Path-X,
16384 tokens) and 256x256 (Path-X-256, 65536 tokens). The official data has
three difficulties, contour lengths 6 ("easy", `curv_baseline`), 9
("intermediate") and 14 ("hard", the one LRA reports).

`generate()` reimplements the official generator (`snakes2.py`) with the
LRA parameter blocks (`GENERATOR_PARAMS`): the same random process, drawn
with lookup tables instead of redrawing every paddle and with many attempts
at the target contours run side by side, about 40-50 times faster per core
than the official generator (`benchmarks/pathfinder_generator.py`).
`write_official()` writes images and metadata in the official layout and
`read_official()` reads both our files and the LRA release, so one reader
serves generated and downloaded data.

The generator, faithful to `snakes2.py` / `snakes.py`:

- A paddle is a line of `paddle_length` pixels and width `paddle_thickness`,
  drawn at `antialias_scale` times the resolution and downsampled with a
  Lanczos filter; its "mask" is the same line dilated by the paddle margin
  (a disk), also downsampled. Paddles start at integer pixels, so a paddle
  is a function of its orientation only: all of them are rasterised once
  (with pillow, as the official code) into tables, and placing one is a
  table lookup and a window update.
- Two target contours start from seeds `seed_distance` apart near the
  centre, then grow alternately, paddle by paddle: the next paddle's end is
  drawn on a circle of radius `paddle_length + margin` around a pivot one
  margin ahead of the last paddle, with weight
  `cos(min(continuity * turn, pi/2))**2 * (1 - dilated occupancy)`, and is
  rejected (up to three draws) where its mask overlaps what is drawn
  (`mask + paddle_mask >= 1.8`). A contour that cannot grow restarts the
  image.
- Distractor contours of `contour_length // 3` paddles, each seeded
  uniformly among the free positions for a random orientation (sampled here
  by rejection, which is the same distribution), up to 5 attempts each.
- Markers: circles of `marker_radius` at the origin tip of one target
  contour and at the far tip of the same contour (label 1) or of the other
  target contour (label 0). The image is scaled so that its maximum is 255,
  as `scipy.misc.imsave` did.

Departures from the official code, all deliberate:

- Labels: the official generator draws each label Bernoulli(0.5). Here the
  two samples of each pair `(2j, 2j+1)` get one label 1 and one label 0 in
  random order, so every even-sized prefix (each metadata file of 1000
  samples, each split) is exactly balanced.
- Randomness: every sample has its own stream, seeded from
  `(seed, resolution, contour length, index)`, so the output is the same for
  any number of workers and a larger `num_samples` only appends samples.
- The number of distractor contours is `distractor_paddles //
  distractor_length` for every contour length, as in LRA's parameter blocks
  (`20 // args.distractor_length` for 32 pixels). The official wrapper
  `snakes2_wrapper.py` computes it once, before its loop over contour
  lengths, which would keep the baseline's count for lengths 9 and 14.
- Single-paddle distractors are off (`use_single_paddles = False` in
  `snakes2_wrapper.py`, the script LRA names).

Reader and splits, as the LRA input pipeline: metadata files
`<difficulty>/metadata/<k>.npy`, read as text lines of space-separated
fields (`[0]` folder, `[1]` file name, `[3]` label; binary `.npy` files are
accepted too); the first 80% of the samples are train, the next 10% val and
the last 10% test (TFDS `split[:80%]`, `[80%:90%]`, `[90%:]`, boundaries
rounded to the closest integer), and images of 0 bytes are then dropped
from each split (the LRA pipeline filters `tf.strings.length(image) > 0`).
The order is metadata file number, then line; TFDS would have shuffled the
examples by a hash of their key first, which cannot be reproduced without
TFDS, and does not matter for identically distributed samples.

The LRA release holds 200,000 images per difficulty and resolution (200
metadata files of 1000 lines; the generator wrapper's default
`n_images = 200000`), i.e. 160k/20k/20k after the split; `DATASET_SIZE`.

This module imports only numpy and the standard library; pillow is imported
inside the functions that draw, write or decode images, and tqdm only for
progress bars.

References:
- Linsley, Kim, Veerabadran, Windolf, Serre, "Learning long-range spatial
  dependencies with horizontal gated recurrent units", NeurIPS 2018,
  https://arxiv.org/abs/1805.08315
- Kim*, Linsley*, Thakkar, Serre, "Disentangling neural mechanisms for
  perceptual grouping", ICLR 2020, https://arxiv.org/abs/1906.01558
- Tay et al., "Long Range Arena: A Benchmark for Efficient Transformers",
  ICLR 2021, https://arxiv.org/abs/2011.04006

Original files read: `snakes2.py`, `snakes.py` and `snakes2_wrapper.py` of
drewlinsley/pathfinder (the generator); `lra_benchmarks/data/pathfinder.py`
(the TFDS builders, whose docstrings hold the parameter blocks per
resolution, and the metadata parsing) and `lra_benchmarks/image/
input_pipeline.py` (`get_pathfinder_base_datasets`: split and empty-image
filter) of google-research/long-range-arena; `src/dataloaders/lra.py` of
state-spaces/s4 (metadata files sorted by number, one known empty image
`pathfinder32/curv_baseline/imgs/0/sample_172.png`); `_pct_to_abs_closest`
in `tensorflow_datasets/core/splits.py` (split rounding).
"""

import collections
import contextlib
import functools
import hashlib
import io
import math
import pathlib
import pickle

import numpy as np

from lra_keras._atomic import atomic_open
from lra_keras.data._checks import SPLITS  # noqa: F401 (public)
from lra_keras.data._checks import available_cpus as _available_cpus
from lra_keras.data._checks import check_int as _check_int
from lra_keras.data._checks import check_split as _check_split
from lra_keras.data._parallel import run_in_order

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
# Samples per difficulty in the LRA release (see the module docstring).
DATASET_SIZE = 200_000
# Samples per `imgs/<k>/` folder and `metadata/<k>.npy` file.
SAMPLES_PER_BATCH = 1000

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
# `stop_with_availability` of the distractors: give up below 1% free pixels.
_STOP_WITH_AVAILABILITY = 0.01
# A pixel counts as occupied above this mask value (`np.ceil(mask - 0.3)`).
_OCCUPIED = 0.3
# A paddle is rejected where mask + paddle mask reaches this value.
_OVERLAP = 1.8

# Samples per unit of work sent to a worker process, per resolution; any
# value gives the same output (each sample has its own random stream).
# Small images gain from batching many images' attempts together, large
# ones have enough work per image to share it among workers.
_CHUNK_SIZE = {32: 32, 64: 8, 128: 8, 256: 8}
# Worker processes are started only when more work than this remains.
_POOL_MIN_SECONDS = 2.0
# Candidate tails drawn at once when sampling a free seed position.
_SEED_DRAWS = 64
# Key of the label streams, apart from the image streams.
_LABEL_STREAM = 1 << 20


# === Rasterised paddles and markers ===


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


def _disk(radius):
    # `generate_dilation_struct`: offsets with dy**2 + dx**2 <= radius**2.
    r = int(radius)
    dy, dx = np.mgrid[-r : r + 1, -r : r + 1]
    inside = dy**2 + dx**2 <= radius**2
    return dy[inside], dx[inside]


def _dilate(binary, radius):
    dys, dxs = _disk(radius)
    r = int(radius)
    padded = np.pad(binary, r)
    out = np.zeros_like(binary)
    h, w = binary.shape
    for dy, dx in zip(dys, dxs):
        out |= padded[r + dy : r + dy + h, r + dx : r + dx + w]
    return out


def _resize_lanczos(binary, size):
    # `scipy.misc.imresize(..., interp="lanczos") / 255` of a 0/1 image:
    # bytescale to 0/255, pillow's Lanczos resize, back to [0, 1].
    from PIL import Image

    image = Image.fromarray(binary.astype(np.uint8) * 255, mode="L")
    resized = image.resize((size, size), resample=Image.LANCZOS)
    return np.asarray(resized, dtype=np.float32) / 255.0


def _paddle(theta, length, thickness, margin):
    """`draw_line_n_mask` centred on its start pixel: (line, mask) images.

    Both are `(2 * half + 1)` square, `half = length + ceil(thickness) +
    margin`, with the paddle starting at the centre pixel.
    """
    from PIL import Image
    from PIL import ImageDraw

    aa = ANTIALIAS_SCALE
    half = length + math.ceil(thickness) + margin
    size = 2 * half * aa + 1
    centre = half * aa
    head_y = math.ceil(centre + length * aa * math.sin(theta))
    head_x = math.ceil(centre + length * aa * math.cos(theta))
    canvas = Image.new("L", (size, size), 0)
    ImageDraw.Draw(canvas).line(
        [(centre, centre), (head_x, head_y)],
        fill=255,
        width=int(round(thickness * aa)),
    )
    line = np.asarray(canvas) > 0
    mask = _dilate(line, margin * aa)
    return (
        _resize_lanczos(line, 2 * half + 1),
        _resize_lanczos(mask, 2 * half + 1),
    )


def _marker(radius):
    """`draw_circle` as a window: (template, half) with the centre at half."""
    aa = ANTIALIAS_SCALE
    # Lanczos (a = 3) at a 2x reduction reaches 3 pixels beyond the disk.
    half = math.ceil(radius) + 4
    size = 2 * half + 1
    grid = np.arange(size * aa) - half * aa
    disk = grid[:, None] ** 2 + grid[None, :] ** 2 <= (radius * aa) ** 2
    return _resize_lanczos(disk, size), half


def _flip_by_pi(theta):
    return theta + math.pi if theta < 0 else theta - math.pi


class _Tables:
    """Everything about one (resolution, margin) that does not change."""

    def __init__(self, resolution, margin):
        p = GENERATOR_PARAMS[resolution]
        length, thickness = p["paddle_length"], p["paddle_thickness"]
        self.resolution = resolution
        self.margin = margin
        self.length = length
        self.half = length + math.ceil(thickness) + margin
        self.marker, self.marker_half = _marker(p["marker_radius"])
        # The canvas border stands for "outside the image": occupied in the
        # mask, so nothing is placed there. It covers any window around a
        # pivot, candidate or marker near the edge.
        self.pad = 2 * (self.half + length + 2 * margin) + self.marker_half
        self.width = resolution + 2 * self.pad

        # Seeds: integer-degree orientations in [-180, 180).
        degrees = np.arange(-180, 180)
        thetas = degrees * np.pi / 180
        seed = [_paddle(t, length, thickness, margin) for t in thetas]
        self.seed_line = np.stack([s[0] for s in seed])
        self.seed_mask = np.stack([s[1] for s in seed])
        # The structuring element of `seed_snake`: the paddle mask drawn from
        # (length + margin + 1) in a (2 (length + margin) + 1) square, cast
        # to uint8 (so only saturated pixels count), anchored at its centre.
        # A tail is free when no mask pixel under it exceeds 0.3.
        reach = length + margin
        self.seed_offsets = []
        self.seed_box = []
        for mask in self.seed_mask:
            square = np.zeros((2 * reach + 1,) * 2, np.float32)
            _paste_max(square, mask, reach + 1, reach + 1, self.half)
            dy, dx = np.nonzero(square == 1.0)
            dy, dx = dy - reach, dx - reach
            if dy.size == 0:
                raise AssertionError("empty structuring element")
            self.seed_offsets.append(dy * self.width + dx)
            self.seed_box.append((dy.min(), dy.max(), dx.min(), dx.max()))

        # Extensions: the end of the next paddle lies on a circle of radius
        # (length + margin) around the pivot, sampled every pixel of arc and
        # truncated to integers (`get_coords_cmf`); these displacements and
        # their paddles are fixed.
        step = length + margin
        angles = np.arange(0, 360, 360.0 / (2 * step * np.pi)) * np.pi / 180
        # floor, as `astype(int)` of a non-negative pixel coordinate; the
        # epsilon absorbs sin/cos rounding at exact integers.
        disp = np.stack(
            [
                np.floor(step * np.sin(angles) + 1e-9),
                np.floor(step * np.cos(angles) + 1e-9),
            ],
            axis=1,
        ).astype(np.int64)
        disp = np.unique(disp, axis=0)
        self.ext_dy, self.ext_dx = disp[:, 0], disp[:, 1]
        self.ext_theta = np.arctan2(disp[:, 0], disp[:, 1])
        ext = [
            _paddle(_flip_by_pi(t), length, thickness, margin)
            for t in self.ext_theta
        ]
        self.ext_line = np.stack([e[0] for e in ext])
        self.ext_mask = np.stack([e[1] for e in ext])
        # Occupancy seen by a candidate: the mask dilated by a disk of the
        # margin (`binary_dilate_custom(mask, small_dilation_structs)`).
        ddy, ddx = _disk(margin)
        flat = disp[:, 0] * self.width + disp[:, 1]
        self.ext_dilated = flat[:, None] + (ddy * self.width + ddx)[None, :]
        self.ext_flat = flat

        # Flat canvas index of every image pixel, for exact seed sampling.
        rows = np.arange(resolution) + self.pad
        self.pixels = (rows[:, None] * self.width + rows[None, :]).ravel()

        # For many attempts at once (`_two_snakes_batch`): seed boxes and
        # every paddle mask as flat arrays, seeds first, and the flat
        # offsets of a paddle window.
        self.seed_box = np.array(self.seed_box, np.int64)
        size = 2 * self.half + 1
        self.all_mask = np.concatenate([self.seed_mask, self.ext_mask]).reshape(
            -1, size * size
        )
        self.ext_mask_flat = self.ext_mask.reshape(-1, size * size)
        wy, wx = np.mgrid[
            -self.half : self.half + 1, -self.half : self.half + 1
        ]
        self.window_flat = (wy * self.width + wx).ravel()
        # Orientation index j: seeds 0..359 (degree j - 180), extensions
        # 360 + k. Per j: the pivot step `ceil(jump * (sin, cos))` and the
        # continuity weight of every candidate, given the last orientation.
        p = GENERATOR_PARAMS[resolution]
        all_theta = np.concatenate([thetas, self.ext_theta])
        jump = length + 2 * margin
        # ceil of an integer pivot plus the step; the epsilon absorbs
        # sin/cos rounding at exact integers, as adding the pivot does.
        self.jump_dy = np.ceil(jump * np.sin(all_theta) - 1e-9).astype(int)
        self.jump_dx = np.ceil(jump * np.cos(all_theta) - 1e-9).astype(int)
        turn = np.abs(self.ext_theta[None, :] - all_theta[:, None])
        turn = np.minimum(turn, 2 * np.pi - turn) * p["continuity"]
        self.turn_weight = np.cos(np.minimum(turn, 0.5 * np.pi)) ** 2
        padding = p["padding"]
        self.empty_mask = np.ones((self.width, self.width), np.float32)
        inner = slice(self.pad + padding, self.pad + resolution - padding)
        self.empty_mask[inner, inner] = 0.0


@functools.lru_cache(maxsize=None)
def _tables(resolution, margin):
    return _Tables(resolution, margin)


def _paste_max(canvas, template, y, x, half):
    # np.maximum of `template` centred at (y, x), clipped to the canvas.
    h, w = canvas.shape
    top, left = y - half, x - half
    t0, l0 = max(0, -top), max(0, -left)
    t1 = min(template.shape[0], h - top)
    l1 = min(template.shape[1], w - left)
    if t0 >= t1 or l0 >= l1:
        return
    view = canvas[top + t0 : top + t1, left + l0 : left + l1]
    np.maximum(view, template[t0:t1, l0:l1], out=view)


# === Generator ===


class _Sample:
    """One image being drawn, on canvases padded by `tables.pad`."""

    def __init__(self, tables, config, rng):
        self.t = tables
        self.c = config
        self.rng = rng
        size = tables.width
        self.image = np.zeros((size, size), np.float32)
        self.mask = np.ones((size, size), np.float32)
        self.saved_image = np.empty_like(self.image)
        self.saved_mask = np.empty_like(self.mask)

    def reset(self):
        pad, res = self.t.pad, self.t.resolution
        inner = slice(pad + self.c["padding"], pad + res - self.c["padding"])
        self.image.fill(0.0)
        self.mask.fill(1.0)
        self.mask[inner, inner] = 0.0

    def window(self, array, y, x):
        p, h = self.t.pad, self.t.half
        return array[p + y - h : p + y + h + 1, p + x - h : p + x + h + 1]

    def draw(self, line, y, x, contrast):
        view = self.window(self.image, y, x)
        np.maximum(view, line * contrast, out=view)

    def commit(self, segment):
        if segment is not None:
            mask, y, x = segment
            view = self.window(self.mask, y, x)
            np.maximum(view, mask, out=view)

    def in_image(self, y, x):
        res = self.t.resolution
        return 0 <= y < res and 0 <= x < res

    def paddle_end(self, y, x, theta):
        # `translate_coord`: head `length` ahead, pivot `length + margin`
        # back from the head.
        length = self.t.length
        hy = math.ceil(y + length * math.sin(theta))
        hx = math.ceil(x + length * math.cos(theta))
        back = _flip_by_pi(theta)
        reach = length + self.t.margin
        py = math.ceil(hy + reach * math.sin(back))
        px = math.ceil(hx + reach * math.cos(back))
        return (hy, hx), (py, px)

    # --- seeds ---

    def free_tail(self, index):
        """Uniform over the tails whose structuring window is free."""
        t = self.t
        offsets = t.seed_offsets[index]
        flat = self.mask.ravel()
        res = t.resolution
        for _ in range(2):
            draws = self.rng.integers(0, res * res, _SEED_DRAWS)
            base = t.pixels[draws]
            free = flat[base[:, None] + offsets[None, :]].max(axis=1)
            hits = np.flatnonzero(free <= _OCCUPIED)
            if hits.size:
                # The first accepted uniform draw is uniform over the free set.
                pixel = draws[hits[0]]
                return divmod(int(pixel), res)
        # Few free positions: list them exactly, as the official code does.
        occupied = np.zeros(res * res, np.float32)
        for offset in offsets:
            np.maximum(occupied, flat[t.pixels + offset], out=occupied)
        free = np.flatnonzero(occupied <= _OCCUPIED)
        if free.size == 0:
            return None
        return divmod(int(free[self.rng.integers(free.size)]), res)

    def seed_snake(self, first=False, near=None):
        """A first paddle: (tail, pivot, theta, segment) or None.

        `first`: the first target seed, whose tail lies at least
        2 * seed_distance from the border. `near`: the second target seed,
        seed_distance from that tail and not checked against the mask.
        """
        t, c, rng = self.t, self.c, self.rng
        res = t.resolution
        if not first and near is None:
            interior = self.mask[t.pad : t.pad + res, t.pad : t.pad + res]
            free = np.count_nonzero(interior <= _OCCUPIED)
            if free < _STOP_WITH_AVAILABILITY * res * res:
                return None
        for _ in range(MAX_PADDLE_RETRIAL + 1):
            index = int(rng.integers(0, 360))
            theta = (index - 180) * math.pi / 180
            if first:
                lo = 2 * c["seed_distance"]
                hi = res - 2 * c["seed_distance"]
                min_dy, max_dy, min_dx, max_dx = t.seed_box[index]
                y0, y1 = lo - min_dy, hi - max_dy
                x0, x1 = lo - min_dx, hi - max_dx
                if y0 >= y1 or x0 >= x1:
                    return None
                tail = (int(rng.integers(y0, y1)), int(rng.integers(x0, x1)))
            elif near is not None:
                angle = int(rng.integers(0, 360)) * math.pi / 180
                distance = c["seed_distance"]
                # np.round_: halves to even, like Python's round.
                tail = (
                    int(round(near[0] + distance * math.sin(angle))),
                    int(round(near[1] + distance * math.cos(angle))),
                )
            else:
                tail = self.free_tail(index)
                if tail is None:
                    return None
            head, pivot = self.paddle_end(tail[0], tail[1], theta)
            if self.in_image(*head) and self.in_image(*pivot):
                segment = (t.seed_mask[index], tail[0], tail[1])
                return tail, pivot, theta, index, segment
        return None

    # --- extensions ---

    def extend(self, snake, contrast):
        """Adds one paddle to `snake` (a dict); False if it cannot grow."""
        t, c, rng = self.t, self.c, self.rng
        jump = t.length + 2 * t.margin
        theta = snake["theta"]
        py = math.ceil(snake["pivot"][0] + jump * math.sin(theta))
        px = math.ceil(snake["pivot"][1] + jump * math.cos(theta))
        base = (t.pad + py) * t.width + t.pad + px
        flat = self.mask.ravel()
        occupied = flat[base + t.ext_dilated].max(axis=1)
        turn = np.abs(t.ext_theta - theta)
        turn = np.minimum(turn, 2 * np.pi - turn) * c["continuity"]
        weight = np.cos(np.minimum(turn, 0.5 * np.pi)) ** 2
        pmf = (1.0 - occupied) * weight
        total = pmf.sum()
        if total < 1e-4:
            return False
        cmf = np.cumsum(pmf / total)
        for _ in range(MAX_PADDLE_RETRIAL + 1):
            k = int(np.searchsorted(cmf, rng.random(), side="right"))
            k = min(k, cmf.size - 1)
            hy, hx = py + int(t.ext_dy[k]), px + int(t.ext_dx[k])
            window = self.window(self.mask, hy, hx)
            if (window + t.ext_mask[k]).max() < _OVERLAP:
                self.draw(t.ext_line[k], hy, hx, contrast)
                # The previous paddle's mask joins the mask only now: a new
                # paddle may touch its predecessor, never older ones.
                self.commit(snake["segment"])
                snake["segment"] = (t.ext_mask[k], hy, hx)
                snake["pivot"] = (py, px)
                snake["theta"] = float(t.ext_theta[k])
                snake["tip"] = (hy, hx)
                snake["paddles"].append(("ext", k, hy, hx))
                return True
        return False

    # --- whole contours ---

    def two_snakes(self, contour_length, contrast):
        """`two_snakes`: the two target contours, or None to start over."""
        first = self.seed_snake(first=True)
        if first is None:
            return None
        second = self.seed_snake(near=first[0])
        if second is None:
            return None
        snakes = []
        for tail, pivot, theta, index, segment in (first, second):
            self.draw(self.t.seed_line[index], tail[0], tail[1], contrast)
            snakes.append(
                dict(
                    origin=tail,
                    tip=tail,
                    pivot=pivot,
                    theta=theta,
                    segment=segment,
                    paddles=[("seed", index, tail[0], tail[1])],
                )
            )
        for _ in range(contour_length - 1):
            for snake in snakes:
                if not self.extend(snake, contrast):
                    return None
        # As the official code, only the second contour's last paddle joins
        # the mask; the first contour's last paddle stays unprotected.
        self.commit(snakes[-1]["segment"])
        return snakes

    def distractor(self, num_paddles, contrast):
        """`make_snake` with `allow_shorter_snakes=False`: True if drawn."""
        np.copyto(self.saved_image, self.image)
        np.copyto(self.saved_mask, self.mask)
        seed = self.seed_snake()
        if seed is not None:
            tail, pivot, theta, index, segment = seed
            self.draw(self.t.seed_line[index], tail[0], tail[1], contrast)
            snake = dict(
                tip=tail, pivot=pivot, theta=theta, segment=segment, paddles=[]
            )
            for _ in range(num_paddles - 1):
                if not self.extend(snake, contrast):
                    break
            else:
                self.commit(snake["segment"])
                return True
        np.copyto(self.image, self.saved_image)
        np.copyto(self.mask, self.saved_mask)
        return False


def _attempt_draws(contour_length):
    # Uniform draws one attempt at the target contours may use: per seed
    # orientation trial, the orientation and the tail (first seed: 2 draws,
    # second seed: 1 angle); per paddle of each contour, 3 placement trials.
    return 3 * 3 + 3 * 2 + 2 * 3 * (contour_length - 1)


def _two_snakes_batch(t, c, uniforms, blocks):
    """`two_snakes` for many independent attempts at once.

    The official generator retries `two_snakes` until one attempt succeeds.
    Attempts are independent and identically distributed, so the first
    success among a batch of attempts run side by side has the same
    distribution as the first success of attempts run one after the other;
    at 32 pixels and contour length 14 about 1 attempt in 35 succeeds, at
    64 pixels about 1 in 1300 (LRA's 64-pixel block grows 14 paddles of
    7 pixels from the centre of a 64-pixel image). Attempts of several
    images share a batch; each row of `uniforms` is one attempt's random
    draws (`_attempt_draws` columns) and `blocks` the `(begin, end)` rows
    of each image.

    Returns:
        A list with, per block, None if every attempt failed, else a dict
        with the first successful attempt's `mask` (canvas, both contours
        as the official code leaves them), `paddles` (per contour,
        `(table index, y, x)`; seeds index `seed_mask`, extensions
        `360 + k`), `origins` and `tips`.
    """
    attempts = uniforms.shape[0]
    res, width, pad = t.resolution, t.width, t.pad
    length, margin = t.length, t.margin
    cells = width * width
    contour_length = c["contour_length"]
    masks = np.broadcast_to(t.empty_mask, (attempts, width, width)).copy()
    flat = masks.reshape(-1)

    def paddle_ends(y, x, theta):
        hy = np.ceil(y + length * np.sin(theta))
        hx = np.ceil(x + length * np.cos(theta))
        back = np.where(theta < 0, theta + np.pi, theta - np.pi)
        py = np.ceil(hy + (length + margin) * np.sin(back))
        px = np.ceil(hx + (length + margin) * np.cos(back))
        inside = (
            (hy >= 0)
            & (hy < res)
            & (hx >= 0)
            & (hx < res)
            & (py >= 0)
            & (py < res)
            & (px >= 0)
            & (px < res)
        )
        return inside, py, px

    # --- seeds: up to 3 orientations each (`initialize_two_seeds`) ---
    index = np.zeros((attempts, 2), np.int64)
    tail = np.zeros((attempts, 2, 2), np.float64)
    pivot = np.zeros((attempts, 2, 2), np.int64)
    alive = np.ones(attempts, bool)
    for s in range(2):
        done = np.zeros(attempts, bool)
        for trial in range(MAX_PADDLE_RETRIAL + 1):
            todo = alive & ~done
            if not todo.any():
                break
            col = 3 * trial if s == 0 else 9 + 2 * trial
            d = (uniforms[:, col] * 360).astype(np.int64)
            th = (d - 180) * np.pi / 180
            if s == 0:
                lo = 2 * c["seed_distance"]
                hi = res - 2 * c["seed_distance"]
                box = t.seed_box[d]
                y0, y1 = lo - box[:, 0], hi - box[:, 1]
                x0, x1 = lo - box[:, 2], hi - box[:, 3]
                empty = (y0 >= y1) | (x0 >= x1)
                # No free tail for this orientation: the attempt fails.
                alive &= ~(todo & empty)
                todo &= ~empty
                ty = y0 + np.floor(uniforms[:, col + 1] * (y1 - y0))
                tx = x0 + np.floor(uniforms[:, col + 2] * (x1 - x0))
            else:
                angle = np.floor(uniforms[:, col + 1] * 360) * np.pi / 180
                distance = c["seed_distance"]
                ty = np.round(tail[:, 0, 0] + distance * np.sin(angle))
                tx = np.round(tail[:, 0, 1] + distance * np.cos(angle))
            inside, py, px = paddle_ends(ty, tx, th)
            ok = todo & inside
            index[ok, s] = d[ok]
            tail[ok, s] = np.stack([ty, tx], axis=1)[ok]
            pivot[ok, s] = np.stack([py, px], axis=1)[ok]
            done |= ok
        alive &= done

    # Pending segment per contour: joins the mask after the next paddle.
    pending = index.copy()
    pending_at = tail.astype(np.int64)
    paddles = np.zeros((attempts, 2, contour_length, 3), np.int64)
    paddles[:, :, 0, 0] = index
    paddles[:, :, 0, 1:] = pending_at
    last = t.ext_theta.size - 1

    # --- extensions, the two contours in turn (`extend_snake`) ---
    for step in range(1, contour_length):
        for s in range(2):
            live = np.flatnonzero(alive)
            if live.size == 0:
                return [None] * len(blocks)
            j = pending[live, s]
            ny = pivot[live, s, 0] + t.jump_dy[j]
            nx = pivot[live, s, 1] + t.jump_dx[j]
            base = live * cells + (pad + ny) * width + pad + nx
            occupied = flat[base[:, None, None] + t.ext_dilated].max(axis=2)
            pmf = (1.0 - occupied) * t.turn_weight[j]
            total = pmf.sum(axis=1)
            can = total >= 1e-4
            cmf = np.cumsum(pmf, axis=1) / np.where(can, total, 1.0)[:, None]
            placed = np.zeros(live.size, bool)
            chosen = np.zeros(live.size, np.int64)
            first_col = 15 + ((step - 1) * 2 + s) * 3
            for trial in range(MAX_PADDLE_RETRIAL + 1):
                todo = can & ~placed
                if not todo.any():
                    break
                u = uniforms[live, first_col + trial]
                k = np.minimum((cmf <= u[:, None]).sum(axis=1), last)
                hy, hx = ny + t.ext_dy[k], nx + t.ext_dx[k]
                head = live * cells + (pad + hy) * width + pad + hx
                window = flat[head[:, None] + t.window_flat]
                fits = (window + t.ext_mask_flat[k]).max(axis=1) < _OVERLAP
                new = todo & fits
                placed |= new
                chosen[new] = k[new]
            alive[live[~placed]] = False
            won = live[placed]
            if won.size == 0:
                continue
            k = chosen[placed]
            ny, nx = ny[placed], nx[placed]
            hy, hx = ny + t.ext_dy[k], nx + t.ext_dx[k]
            # Commit the previous paddle's mask (windows of different
            # attempts never share a cell, so the scatter is exact).
            at = pending_at[won, s]
            cells_at = (
                won * cells + (pad + at[:, 0]) * width + pad + at[:, 1]
            )[:, None] + t.window_flat
            flat[cells_at] = np.maximum(
                flat[cells_at], t.all_mask[pending[won, s]]
            )
            pending[won, s] = 360 + k
            pending_at[won, s, 0], pending_at[won, s, 1] = hy, hx
            pivot[won, s, 0], pivot[won, s, 1] = ny, nx
            paddles[won, s, step] = np.stack([360 + k, hy, hx], axis=1)
    found = []
    for begin, end in blocks:
        live = np.flatnonzero(alive[begin:end])
        if live.size == 0:
            found.append(None)
            continue
        w = begin + int(live[0])
        mask = masks[w].copy()
        # As the official code, only the second contour's last paddle joins
        # the mask; the first contour's last paddle stays unprotected.
        _paste_max(
            mask,
            t.all_mask[pending[w, 1]].reshape(2 * t.half + 1, -1),
            int(pending_at[w, 1, 0]) + pad,
            int(pending_at[w, 1, 1]) + pad,
            t.half,
        )
        found.append(
            dict(
                mask=mask,
                paddles=paddles[w],
                origins=[tuple(int(v) for v in tail[w, s]) for s in (0, 1)],
                tips=[tuple(int(v) for v in pending_at[w, s]) for s in (0, 1)],
            )
        )
    return found


def _config(resolution, contour_length):
    p = dict(GENERATOR_PARAMS[resolution])
    p["contour_length"] = contour_length
    # Python 2 integer division in the official scripts.
    p["distractor_length"] = contour_length // 3
    p["num_distractor_snakes"] = (
        p["distractor_paddles"] // p["distractor_length"]
    )
    return p


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


def _two_snakes_sequential(tables, config, rng):
    sample = _Sample(tables, config, rng)
    contrast = config["paddle_contrast"] * config["snake_contrast"]
    while True:
        sample.reset()
        snakes = sample.two_snakes(config["contour_length"], contrast)
        if snakes is not None:
            break
    paddles = []
    for snake in snakes:
        paddles.append(
            [
                (k if kind == "seed" else 360 + k, y, x)
                for kind, k, y, x in snake["paddles"]
            ]
        )
    return dict(
        mask=sample.mask.copy(),
        paddles=paddles,
        origins=[s["origin"] for s in snakes],
        tips=[s["tip"] for s in snakes],
    )


def _two_snakes_all(rngs, resolution, config, margins, targets):
    """Target contours of every image, attempts of many images batched."""
    draws = _attempt_draws(config["contour_length"])
    attempts = {i: _FIRST_ATTEMPTS for i in range(len(rngs))}
    while attempts:
        for margin in sorted(set(margins[i] for i in attempts)):
            tables = _tables(resolution, margin)
            limit = _max_attempts(tables)
            group = [i for i in attempts if margins[i] == margin]
            while group:
                # As many images as fit in one batch (at least one).
                batch, rows = [], 0
                while group and (
                    not batch or rows + attempts[group[0]] <= limit
                ):
                    batch.append(group.pop(0))
                    rows += attempts[batch[-1]]
                uniforms = np.concatenate(
                    [rngs[i].random((attempts[i], draws)) for i in batch]
                )
                bounds = np.cumsum([0] + [attempts[i] for i in batch])
                found = _two_snakes_batch(
                    tables, config, uniforms, list(zip(bounds[:-1], bounds[1:]))
                )
                for i, result in zip(batch, found):
                    if result is None:
                        attempts[i] = min(2 * attempts[i], limit)
                    else:
                        targets[i] = result
                        del attempts[i]


def _finish(tables, config, rng, label, target, details):
    """Distractors and markers on the target contours; the final image."""
    sample = _Sample(tables, config, rng)
    np.copyto(sample.mask, target["mask"])
    sample.image.fill(0.0)
    contrast = config["paddle_contrast"] * config["snake_contrast"]
    for rows in target["paddles"]:
        for index, y, x in np.asarray(rows).tolist():
            if index < 360:
                sample.draw(tables.seed_line[index], y, x, contrast)
            else:
                sample.draw(tables.ext_line[index - 360], y, x, contrast)

    for _ in range(config["num_distractor_snakes"]):
        for _ in range(MAX_DISTRACTOR_CONTOUR_RETRIAL + 1):
            if sample.distractor(
                config["distractor_length"], config["snake_contrast"]
            ):
                break

    # Markers: the origin tip of one target contour and the far tip of the
    # same contour (label 1) or of the other one (label 0).
    origin_index = int(rng.integers(0, 2))
    terminal_index = origin_index if label == 1 else 1 - origin_index
    origin = target["origins"][origin_index]
    terminal = target["tips"][terminal_index]
    pad, res = tables.pad, tables.resolution
    image = sample.image[pad : pad + res, pad : pad + res]
    markers = np.zeros((res, res), np.float32)
    for y, x in (origin, terminal):
        _paste_max(markers, tables.marker, y, x, tables.marker_half)
    image = np.maximum(image, markers)
    # `scipy.misc.imsave` -> `bytescale`: the range [min, max] to [0, 255].
    low, high = float(image.min()), float(image.max())
    scale = 255.0 / (high - low) if high > low else 1.0
    pixels = (np.clip((image - low) * scale, 0, 255) + 0.5).astype(np.uint8)
    if not details:
        return pixels, tables.margin
    info = dict(
        origin=origin,
        terminal=terminal,
        origin_snake=origin_index,
        terminal_snake=terminal_index,
        paddles=[np.asarray(rows).tolist() for rows in target["paddles"]],
        tips=list(zip(target["origins"], target["tips"])),
        margin=tables.margin,
    )
    return pixels, tables.margin, info


# Attempts at the target contours run side by side: first this many per
# image, then twice as many after each batch without a success, up to a
# memory bound per batch. The attempts of all images of a chunk share a
# batch, so small first batches cost little; 4 was the fastest of 4, 8 and
# 16 at 32, 128 and 256 pixels.
_FIRST_ATTEMPTS = 4
_ATTEMPT_BYTES = 64 * 2**20


def _max_attempts(tables):
    return max(_FIRST_ATTEMPTS, _ATTEMPT_BYTES // (4 * tables.width**2))


def _render_paddles(paddles, resolution, margin, which="mask"):
    """Draws the masks (or lines) of `(table index, y, x)` paddles."""
    tables = _tables(resolution, margin)
    canvas = np.zeros((resolution, resolution), np.float32)
    for index, y, x in paddles:
        if index < 360:
            table = tables.seed_mask if which == "mask" else tables.seed_line
            template = table[index]
        else:
            table = tables.ext_mask if which == "mask" else tables.ext_line
            template = table[index - 360]
        _paste_max(canvas, template, y, x, tables.half)
    return canvas


def _generate_chunk(seed, resolution, contour_length, start, stop):
    labels = _labels(seed, resolution, contour_length, start, stop)
    rngs = [
        _sample_rng(seed, resolution, contour_length, i)
        for i in range(start, stop)
    ]
    drawn = _draw_samples(rngs, resolution, contour_length, labels)
    images = np.stack([image for image, _ in drawn])
    margins = np.array([margin for _, margin in drawn], np.int32)
    return images, labels, margins


def _run_chunks(tasks, num_workers, on_result):
    """Runs `_generate_chunk(*task)` for each task; results in task order."""
    tasks = list(tasks)
    run_in_order(_generate_chunk, tasks, on_result, num_workers,
                 remaining=lambda: len(tasks) - 1,
                 pool_min_seconds=_POOL_MIN_SECONDS)


def _chunk_tasks(seed, resolution, contour_length, start, stop):
    size = _CHUNK_SIZE[resolution]
    return [
        (seed, resolution, contour_length, i, min(i + size, stop))
        for i in range(start, stop, size)
    ]


def _generate_range(
    seed, resolution, contour_length, start, stop, num_workers, bar
):
    images, labels, margins = [], [], []

    def collect(result):
        images.append(result[0])
        labels.append(result[1])
        margins.append(result[2])
        if bar is not None:
            bar.update(len(result[1]))

    tasks = _chunk_tasks(seed, resolution, contour_length, start, stop)
    _run_chunks(tasks, num_workers, collect)
    if not images:
        r = resolution
        return (
            np.zeros((0, r, r), np.uint8),
            np.zeros(0, np.int32),
            np.zeros(0, np.int32),
        )
    return (
        np.concatenate(images),
        np.concatenate(labels),
        np.concatenate(margins),
    )


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
    the LRA parameter block of `resolution` (see the module docstring for
    the algorithm and the few deliberate departures). Sample `i` depends
    only on `(seed, resolution, difficulty, i)`: the output does not depend
    on `num_workers`, and the result for `n` samples is a prefix of the
    result for any larger `n`.

    Labels are balanced exactly: the samples `2j` and `2j + 1` hold one
    label 1 and one label 0, in random order, so an even `num_samples` has
    exactly `num_samples // 2` positives (an odd one, one more or one less).

    Worker processes are started with "spawn", which is safe when JAX,
    TensorFlow or PyTorch are already imported; as with any
    `multiprocessing` code, scripts must call this under
    `if __name__ == "__main__":`. `benchmarks/pathfinder_generator.py`
    measures the throughput.

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


# === Utilities ===




# === Official files ===


def _metadata_line(batch, i, label, resolution, difficulty, margin):
    # `accumulate_meta` of snakes2.py: subpath, file name, image number,
    # label, continuity, contour length, distractor length, paddle length,
    # thickness, margin, number of paddle contrasts; written as text lines,
    # as the LRA release files are.
    config = _config(resolution, CONTOUR_LENGTHS[difficulty])
    fields = [
        f"imgs/{batch}",
        f"sample_{i}.png",
        i,
        int(label),
        config["continuity"],
        config["contour_length"],
        config["distractor_length"],
        config["paddle_length"],
        config["paddle_thickness"],
        int(margin),
        1,
    ]
    return " ".join(str(field) for field in fields)


def write_official(
    root,
    images,
    labels,
    difficulty,
    *,
    start_index=0,
    batch_size=SAMPLES_PER_BATCH,
    paddle_margins=None,
):
    """Writes images in the official layout of the Pathfinder data.

    Sample `g = start_index + n` goes to
    `root/<difficulty dir>/imgs/<g // batch_size>/sample_<g % batch_size>.png`
    (8-bit grayscale PNG) and its metadata line to
    `root/<difficulty dir>/metadata/<g // batch_size>.npy`, a text file of
    space-separated fields as the official readers parse it (the `.npy`
    name is the official one). Lines already in a metadata file for other
    image numbers are kept, so batches can be written in parts. Every file
    is written to a temporary name and renamed.

    Args:
        root: str or path-like. The `pathfinder<R>` directory.
        images: uint8 array `(N, R, R)`.
        labels: int array `(N,)` of 0/1.
        difficulty: str. `"easy"`, `"intermediate"` or `"hard"`.
        start_index: int. Global index of the first sample. Defaults to 0.
        batch_size: int. Samples per folder and metadata file. Defaults to
            `SAMPLES_PER_BATCH` (1000).
        paddle_margins: int array `(N,)` or None. Paddle margin of each
            image, written into the metadata; `None` for resolutions with a
            single margin. Defaults to `None`.
    """
    _check_difficulty(difficulty)
    _check_int("start_index", start_index, minimum=0)
    _check_int("batch_size", batch_size, minimum=1)
    images = np.asarray(images)
    labels = np.asarray(labels)
    if (
        images.ndim != 3
        or images.dtype != np.uint8
        or images.shape[1] != images.shape[2]
    ):
        raise ValueError(
            "`images` must be uint8 of shape (N, R, R). Received: "
            f"dtype={images.dtype}, shape={images.shape}"
        )
    resolution = images.shape[1]
    _check_resolution(resolution)
    if labels.shape != (len(images),) or not np.isin(labels, (0, 1)).all():
        raise ValueError(
            f"`labels` must be 0/1 of shape ({len(images)},). Received: "
            f"shape={labels.shape}"
        )
    if paddle_margins is None:
        margins = GENERATOR_PARAMS[resolution]["paddle_margins"]
        if len(margins) != 1:
            raise ValueError(
                f"Resolution {resolution} draws its paddle margin from "
                f"{margins}; pass `paddle_margins` per image. Received: "
                "paddle_margins=None"
            )
        paddle_margins = np.full(len(images), margins[0])
    from PIL import Image

    directory = pathlib.Path(root) / DIFFICULTIES[difficulty]
    lines = collections.defaultdict(dict)
    for n, image in enumerate(images):
        batch, i = divmod(start_index + n, batch_size)
        path = directory / "imgs" / str(batch) / f"sample_{i}.png"
        with atomic_open(path, "wb") as f:
            Image.fromarray(image, mode="L").save(f, format="PNG")
        lines[batch][i] = _metadata_line(
            batch, i, labels[n], resolution, difficulty, paddle_margins[n]
        )
    for batch, new in lines.items():
        path = directory / "metadata" / f"{batch}.npy"
        if path.exists():
            for fields in _read_metadata(path):
                number = _image_number(fields[1])
                if number is not None and number not in new:
                    new[number] = " ".join(fields)
        text = "".join(new[i] + "\n" for i in sorted(new))
        with atomic_open(path, "wb") as f:
            f.write(text.encode("utf-8"))


def _image_number(name):
    stem = name[len("sample_") : -len(".png")]
    if name.startswith("sample_") and name.endswith(".png") and stem.isdigit():
        return int(stem)
    return None


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickles numpy object arrays of strings and numbers, nothing else.

    `np.save` of the official metadata (a list of mixed strings and numbers)
    can give a pickled object array. A plain pickle load runs whatever the
    file names; this one resolves only what an ndarray needs.
    """

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("_codecs", "encode"),
    }

    def find_class(self, module, name):
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"Refusing to load {module}.{name} from a metadata file: only "
            "numpy arrays of strings and numbers are accepted."
        )


def _load_npy(path, payload):
    try:
        return np.load(io.BytesIO(payload), allow_pickle=False)
    except ValueError:
        pass
    # An object array: the header, then a pickle of the array.
    stream = io.BytesIO(payload)
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
    else:
        raise ValueError(
            f"Metadata file {path}: unsupported .npy version {version}."
        )
    if not dtype.hasobject:
        raise ValueError(f"Unreadable metadata file {path}.")
    array = _ArrayUnpickler(stream).load()
    if not isinstance(array, np.ndarray) or array.shape != shape:
        raise ValueError(f"Metadata file {path} does not hold an array.")
    return array


def _read_metadata(path):
    """Rows of string fields of one metadata file, text or binary `.npy`."""
    payload = pathlib.Path(path).read_bytes()
    if payload.startswith(b"\x93NUMPY"):
        array = _load_npy(path, payload)
        if array.ndim == 1:
            rows = [str(line).split() for line in array.tolist()]
        elif array.ndim == 2:
            rows = [[str(field) for field in row] for row in array.tolist()]
        else:
            raise ValueError(
                f"Metadata file {path}: expected a 1-D or 2-D array. "
                f"Received: shape={array.shape}"
            )
    else:
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(
                f"Metadata file {path} is neither text nor a .npy array."
            ) from error
        rows = [line.split() for line in text.splitlines()]
    rows = [row for row in rows if row]
    for n, row in enumerate(rows):
        if len(row) < 4 or row[3] not in ("0", "1"):
            raise ValueError(
                f"Metadata file {path}, row {n}: expected at least 4 "
                "space-separated fields with the label (0 or 1) 4th. "
                f"Received: {' '.join(row)!r}"
            )
        folder = pathlib.PurePosixPath(row[0])
        if folder.is_absolute() or ".." in folder.parts or "/" in row[1]:
            raise ValueError(
                f"Metadata file {path}, row {n}: image path outside the "
                f"dataset. Received: {row[0]!r} {row[1]!r}"
            )
    return rows


def _metadata_files(directory):
    folder = directory / "metadata"
    files = [p for p in folder.glob("*.npy") if p.stem.isdigit()]
    # Numeric order (10 after 9), as state-spaces/s4 sorts them.
    return sorted(files, key=lambda p: int(p.stem))


def _fingerprint(directory, difficulty, resolution, files):
    entries = [str(directory.resolve()), difficulty, str(resolution)]
    for path in files:
        stat = path.stat()
        entries.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    images = directory / "imgs"
    if images.is_dir():
        for sub in sorted(images.iterdir()):
            entries.append(f"imgs/{sub.name}:{sub.stat().st_mtime_ns}")
    return hashlib.sha256("\n".join(entries).encode("utf-8")).hexdigest()


def _read_difficulty(root, difficulty, resolution, progress=False):
    """All samples of one difficulty: (x (N, R*R), y (N,), valid (N,)).

    `valid` is False for 0-byte images (their `x` rows are zeros). Decoded
    arrays are cached in `cache_dir()/pathfinder_decoded/`, keyed by the
    directory, the difficulty and the sizes and times of its files.
    """
    import lra_keras.data as data_pkg

    directory = pathlib.Path(root) / DIFFICULTIES[difficulty]
    files = _metadata_files(directory)
    if not files:
        raise FileNotFoundError(
            f"No metadata files (metadata/<k>.npy) in {directory}."
        )
    key = _fingerprint(directory, difficulty, resolution, files)
    cache = data_pkg.cache_dir() / "pathfinder_decoded"
    x_path = cache / f"{key}.x.npy"
    meta_path = cache / f"{key}.meta.npz"
    if meta_path.exists() and x_path.exists():
        with np.load(meta_path, allow_pickle=False) as meta:
            y, valid = meta["y"], meta["valid"]
        x = np.load(x_path, mmap_mode="r", allow_pickle=False)
        if x.shape == (len(y), resolution * resolution):
            return np.asarray(x), y, valid

    rows = []
    for path in files:
        rows.extend(_read_metadata(path))
    from PIL import Image

    x = np.zeros((len(rows), resolution * resolution), np.uint8)
    y = np.array([int(row[3]) for row in rows], np.int32)
    valid = np.ones(len(rows), bool)
    with _progress_bar(progress, len(rows), resolution, difficulty) as bar:
        for n, row in enumerate(rows):
            path = directory / row[0] / row[1]
            try:
                payload = path.read_bytes()
            except FileNotFoundError:
                raise FileNotFoundError(
                    f"Image {path} listed in the metadata of {directory} "
                    "is missing."
                ) from None
            if not payload:
                # Empty files exist in the release; LRA filters them out.
                valid[n] = False
            else:
                try:
                    with Image.open(io.BytesIO(payload)) as image:
                        pixels = np.asarray(image.convert("L"))
                except OSError as error:
                    raise ValueError(
                        f"Image {path} is not a readable image."
                    ) from error
                if pixels.shape != (resolution, resolution):
                    raise ValueError(
                        f"Image {path}: expected {resolution}x{resolution} "
                        f"pixels. Received: shape={pixels.shape}"
                    )
                x[n] = pixels.reshape(-1)
            if bar is not None:
                bar.update(1)
    with atomic_open(x_path, "wb") as f:
        np.save(f, x)
    # Written last: the cache counts only once this file exists.
    with atomic_open(meta_path, "wb") as f:
        np.savez(f, y=y, valid=valid)
    return x, y, valid


def read_official(root, difficulty, resolution, progress=False):
    """Reads one difficulty of Pathfinder files in the official layout.

    Reads `root/<difficulty dir>/metadata/<k>.npy` in numeric order of `k`
    (text lines, or binary `.npy` arrays of the same fields), and the images
    they list; images of 0 bytes are skipped, as the LRA pipeline does.
    Works for the LRA release (`lra_release/pathfinder32`, ...) and for
    `write_official()` output. The decoded arrays are cached, so later
    calls on the same files are fast.

    Args:
        root: str or path-like. The `pathfinder<R>` directory, which holds
            `curv_baseline/`, `curv_contour_length_9/` and
            `curv_contour_length_14/`.
        difficulty: str. `"easy"`, `"intermediate"` or `"hard"`.
        resolution: int. Image side, one of `RESOLUTIONS`.
        progress: bool. Whether to show a progress bar while decoding.
            Defaults to `False`.

    Returns:
        A tuple `(x, y)`: `x` uint8 of shape `(N, resolution**2)`, the
        pixels row by row, and `y` int32 of shape `(N,)`.
    """
    _check_difficulty(difficulty)
    _check_resolution(resolution)
    x, y, valid = _read_difficulty(root, difficulty, resolution, progress)
    return x[valid], y[valid]


# === Loader ===


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
    print(
        f"Generating {total} Pathfinder-{resolution} {difficulty} images "
        f"into {directory}",
        flush=True,
    )
    if num_workers is None:
        num_workers = _available_cpus()
    _check_int("num_workers", num_workers, minimum=1)
    with _progress_bar(progress, total, resolution, difficulty) as bar:
        for batch, have, want in missing:
            begin = batch * SAMPLES_PER_BATCH
            images, labels, margins = _generate_range(
                seed,
                resolution,
                contour_length,
                begin + have,
                begin + want,
                num_workers,
                bar,
            )
            # Images first, metadata last: a batch counts as written only
            # up to the lines of its metadata file.
            write_official(
                root,
                images,
                labels,
                difficulty,
                start_index=begin + have,
                paddle_margins=margins,
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
    `seed` into `cache_dir()/pathfinder<R>/seed<seed>/` in the official
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
        num_samples: int or None. Generated samples per difficulty;
            `None` is the size of the LRA release, `DATASET_SIZE`
            (200,000). Only for generated data. Defaults to `None`.
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
            raise ValueError(
                "`num_samples` applies only to generated data "
                f"(data_dir=None). Received: data_dir={str(data_dir)!r}, "
                f"num_samples={num_samples}"
            )
        root = _find_root(data_dir, resolution)
    else:
        if num_samples is None:
            num_samples = DATASET_SIZE
        _check_int("num_samples", num_samples, minimum=1)
        import lra_keras.data as data_pkg

        root = data_pkg.cache_dir() / f"pathfinder{resolution}" / f"seed{seed}"
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
        if data_dir is None:
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
