"""The random process of the official Pathfinder generator, per image.

Faithful to `snakes2.py` / `snakes.py`, with the paddles of `paddles.py`:

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
  by rejection, which is the same distribution), up to 5 attempts each
  (`make_many_snakes`, `snakes.py` lines 58-76 at ab9c130), then given up.
- Seeds (the first target seed and the distractors') fail at once for the
  orientations whose structuring element misses a quadrant around its
  centre: the official search then finds no free pixel anywhere
  (`paddles._no_tail_anywhere`). With LRA's 32-pixel block that is 330 of
  the 360 orientations, so about two distractors in three are given up
  after their 5 attempts (3.2 of 10 drawn on average at contour length 6,
  1.1 of 5 at 14) and the images are much sparser than with every
  distractor drawn (232 lit pixels rather than 355 at contour length 6).
- Markers: circles of `marker_radius` at the origin tip of one target
  contour and at the far tip of the same contour (label 1) or of the other
  target contour (label 0). The image is scaled so that its maximum is 255,
  as `scipy.misc.imsave` did.

`benchmarks/pathfinder_fidelity.py` compares the statistics of these
images with the official generator's.

Departures from the official code, both deliberate (`generator.py` holds
the others):

- The number of distractor contours is `distractor_paddles //
  distractor_length` for every contour length, as in LRA's parameter blocks
  (`20 // args.distractor_length` for 32 pixels). The official wrapper
  `snakes2_wrapper.py` computes it once, before its loop over contour
  lengths, which would keep the baseline's count for lengths 9 and 14.
- Single-paddle distractors are off (`use_single_paddles = False` in
  `snakes2_wrapper.py`, the script LRA names).

`_two_snakes_sequential` draws the target contours one attempt at a time,
as the official code (the reference path of the benchmark); `batched.py`
runs many attempts side by side. `_finish` then adds the distractors and
the markers.

Original files read: `snakes2.py`, `snakes.py` and `snakes2_wrapper.py` of
drewlinsley/pathfinder.
"""

import math

import numpy as np

from lra_keras.data.pathfinder._common import GENERATOR_PARAMS
from lra_keras.data.pathfinder._common import MAX_DISTRACTOR_CONTOUR_RETRIAL
from lra_keras.data.pathfinder._common import MAX_PADDLE_RETRIAL
from lra_keras.data.pathfinder.paddles import _flip_by_pi
from lra_keras.data.pathfinder.paddles import _marker_frame
from lra_keras.data.pathfinder.paddles import _paste_max

# `stop_with_availability` of the distractors: give up below 1% free pixels.
_STOP_WITH_AVAILABILITY = 0.01
# A pixel counts as occupied above this mask value (`np.ceil(mask - 0.3)`).
_OCCUPIED = 0.3
# A paddle is rejected where mask + paddle mask reaches this value.
_OVERLAP = 1.8
# Candidate tails drawn at once when sampling a free seed position.
_SEED_DRAWS = 64

# === One image ===


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
        """Uniform over the tails whose structuring window is free.

        As `seed_snake` (`snakes.py` lines 179-189 at ab9c130): the mask
        with its outer ring set to 1 (`lined_mask`; the padding already is)
        is dilated by the element with `cv2.dilate`, which ignores the
        cells outside the image; a tail is free when no cell of its window
        inside the image exceeds 0.3. (The canvas holds 1 outside the
        image, which would refuse the tails near the border whose element,
        often not contiguous, reaches outside without touching the ring:
        with LRA's blocks, at 64 and 128 pixels.)
        """
        t = self.t
        offsets = t.seed_offsets[index]
        dy, dx = t.seed_cells[index]
        flat = self.mask.ravel()
        res = t.resolution
        for _ in range(2):
            draws = self.rng.integers(0, res * res, _SEED_DRAWS)
            base = t.pixels[draws]
            y = t.pixel_y[draws][:, None] + dy[None, :]
            x = t.pixel_x[draws][:, None] + dx[None, :]
            inside = (y >= 0) & (y < res) & (x >= 0) & (x < res)
            values = flat[base[:, None] + offsets[None, :]]
            free = np.where(inside, values, 0.0).max(axis=1)
            hits = np.flatnonzero(free <= _OCCUPIED)
            if hits.size:
                # The first accepted uniform draw is uniform over the free set.
                pixel = draws[hits[0]]
                return divmod(int(pixel), res)
        # Few free positions: list them exactly, as the official code does.
        occupied = np.zeros(res * res, np.float32)
        for offset, oy, ox in zip(offsets, dy, dx):
            y, x = t.pixel_y + oy, t.pixel_x + ox
            inside = (y >= 0) & (y < res) & (x >= 0) & (x < res)
            values = np.where(inside, flat[t.pixels + offset], 0.0)
            np.maximum(occupied, values, out=occupied)
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
            if near is None and t.seed_refused[index]:
                # The official search finds no free tail for this
                # orientation and gives up (`_no_tail_anywhere`).
                return None
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


def _config(resolution, contour_length):
    p = dict(GENERATOR_PARAMS[resolution])
    p["contour_length"] = contour_length
    # Python 2 integer division in the official scripts.
    p["distractor_length"] = contour_length // 3
    p["num_distractor_snakes"] = (
        p["distractor_paddles"] // p["distractor_length"]
    )
    return p


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

    distractors = 0
    for _ in range(config["num_distractor_snakes"]):
        for _ in range(MAX_DISTRACTOR_CONTOUR_RETRIAL + 1):
            if sample.distractor(
                config["distractor_length"], config["snake_contrast"]
            ):
                distractors += 1
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
        if min(y, x, res - 1 - y, res - 1 - x) < tables.marker_half:
            frame = _marker_frame(res, tables.marker_radius, y, x)
            np.maximum(markers, frame, out=markers)
        else:
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
        distractors=distractors,
    )
    return pixels, tables.margin, info
