"""Pathfinder paddles and markers, rasterised once into lookup tables.

A paddle is a line of `paddle_length` pixels and width `paddle_thickness`,
drawn at `antialias_scale` times the resolution and downsampled with a
Lanczos filter; its "mask" is the same line dilated by the paddle margin
(a disk), also downsampled. Paddles start at integer pixels, so a paddle
is a function of its orientation only: all of them are rasterised once
(with pillow, as the official code) into tables, and placing one is a
table lookup and a window update.

Original files read: `snakes2.py` and `snakes.py` of drewlinsley/pathfinder
(`draw_line_n_mask`, `draw_circle`, `generate_dilation_struct`,
`get_coords_cmf`).
"""

import functools
import math

import numpy as np

from lra_keras.data.pathfinder._common import ANTIALIAS_SCALE
from lra_keras.data.pathfinder._common import GENERATOR_PARAMS


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


def _no_tail_anywhere(dy, dx, resolution):
    """Whether the official seed search finds no tail at all.

    `seed_snake` (`snakes.py` lines 175-196 at ab9c130; the first target
    seed: `snakes2.py` lines 131-148) dilates the mask with the element's
    cells `(dy, dx)` (`binary_dilate_custom`, line 406: `cv2.dilate`,
    anchored at the element's centre). OpenCV's default border for a
    dilation is the lowest value, so the outside of the image never
    counts, and a pixel whose cells all lie outside the image gets that
    value. The map `np.ceil(dilated - 0.3)` then has a negative minimum,
    and `find_available_coordinates` (lines 88-90, the `'mystery'` branch)
    returns no free pixel at all: the seed fails at once, whatever the mask
    (line 194; snakes2.py line 146), and `make_many_snakes` counts one
    failed attempt at the contour.

    A pixel sees only the outside when it is an image corner and no cell
    lies in the closed quadrant towards the inside from it, which happens
    when the element misses its own centre: the paddle is drawn from one
    pixel off it (`struct_head`, line 164) and only its saturated cells
    count (`struct.astype(np.uint8)`, line 406). With LRA's blocks that is
    330 of the 360 orientations at 32 pixels (thickness 0.5: a paddle
    saturates 2-3 cells), 265 at 64, 6 at 128 with margin 2 and none at
    256. The element is smaller than the image, so a pixel away from the
    corners always sees one cell inside.
    """
    if 2 * max(np.abs(dy).max(), np.abs(dx).max()) >= resolution:
        raise AssertionError("structuring element as large as the image")
    return not all(
        ((sy * dy >= 0) & (sx * dx >= 0)).any()
        for sy in (-1, 1)
        for sx in (-1, 1)
    )


def _marker_frame(resolution, radius, y, x):
    """`draw_circle` itself: the marker at (y, x) drawn on the whole image.

    The official code (`snakes2.py` lines 224-230 at ab9c130) resizes a
    whole image holding the disk. Within `_marker`'s half of the border,
    Lanczos's support is cut by the image edge and PIL renormalises its
    weights, which the template (drawn away from any edge) does not; there
    the marker is drawn as the official code does.
    """
    aa = ANTIALIAS_SCALE
    grid = np.arange(resolution * aa)
    dy = (grid - y * aa)[:, None]
    dx = (grid - x * aa)[None, :]
    disk = dy**2 + dx**2 <= (radius * aa) ** 2
    return _resize_lanczos(disk, resolution)


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
        self.marker_radius = p["marker_radius"]
        self.marker, self.marker_half = _marker(self.marker_radius)
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
        self.seed_cells = []
        self.seed_box = []
        self.seed_refused = np.zeros(len(thetas), bool)
        for i, mask in enumerate(self.seed_mask):
            square = np.zeros((2 * reach + 1,) * 2, np.float32)
            _paste_max(square, mask, reach + 1, reach + 1, self.half)
            dy, dx = np.nonzero(square == 1.0)
            dy, dx = dy - reach, dx - reach
            if dy.size == 0:
                raise AssertionError("empty structuring element")
            self.seed_offsets.append(dy * self.width + dx)
            self.seed_cells.append((dy, dx))
            self.seed_box.append((dy.min(), dy.max(), dx.min(), dx.max()))
            self.seed_refused[i] = _no_tail_anywhere(dy, dx, resolution)

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
        self.pixel_y, self.pixel_x = np.divmod(
            np.arange(resolution * resolution), resolution
        )

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
        # 360 + k. Per j: the pivot step `jump * (sin, cos)` and the
        # continuity weight of every candidate, given the last orientation.
        p = GENERATOR_PARAMS[resolution]
        all_theta = np.concatenate([thetas, self.ext_theta])
        jump = length + 2 * margin
        # The next pivot is `ceil(pivot + step)` in float64, as
        # `translate_coord` (`snakes.py` lines 419-426 at ab9c130) computes
        # it, not `pivot + ceil(step)`: along the axes the step holds a
        # rounding residue (4 sin(pi) = 4.9e-16) that a pivot of 4 or more
        # absorbs but a pivot of 0-3 keeps, and ceil then moves the pivot
        # one pixel (contours along the top or left border).
        self.jump_sin = float(jump) * np.sin(all_theta)
        self.jump_cos = float(jump) * np.cos(all_theta)
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
