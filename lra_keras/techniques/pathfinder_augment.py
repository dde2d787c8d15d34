"""Pathfinder augmentation: D4 symmetries or YCTFS's flips and affine
maps, and all three difficulty sets.

YCTFS (§3, Tables 5-7) trains Pathfinder on all three difficulty sets
(contour lengths 6, 9 and 14) for 67 epochs, the number of steps of 200
epochs on the hard set; validation and test stay on the hard set. This
library adds, by default, a random symmetry of the square per image (YCTFS
appendix C suggests it; `augment_d4=False` gives YCTFS's exact setting):
the label says whether the two markers lie on one curve, which no rotation
or reflection changes, and the eight symmetries of the dihedral group D4
permute pixels exactly, without the interpolation that would distort a
low-resolution image.

The authors' code differs from the paper's text (long-transformers,
branch lra-paper, `src/data_loaders/pathfinder.py`): it flips and
affine-maps each training image (`augment_affine`, `flips_affine`; a
nearest-pixel map, so a marker near the border can leave the image), and
it pools the three sets and splits them at random 80/10/10, so that its
validation and test images mix the three difficulties
(`eval_difficulty="all"`, `training.inputs.load_splits`). The YCTFS
rows with `augment` take both (`presets.yctfs`).

The D4 and affine functions import only numpy and the standard library.

References:
- Miralles et al., "You Can Train from Scratch: Further Analysis of the Long
  Range Arena" (YCTFS), §3 and appendix C.
"""

import functools

import numpy as np

from lra_keras.techniques.base import Augmentation

# Element k of D4: transpose the image if k >= 4, then turn it k % 4 quarter
# turns counterclockwise (np.rot90). The eight are distinct on a generic
# image and closed under composition.
D4_ELEMENTS = tuple((k % 4, k >= 4) for k in range(8))


def apply_d4(image, k):
    """Applies element `k` of the dihedral group D4 to one square image.

    Element `k` (`D4_ELEMENTS[k] = (quarter_turns, transposed)`) transposes
    the image when `k >= 4`, then rotates it `k % 4` quarter turns
    counterclockwise. `k = 0` is the identity.

    Args:
        image: array `(R, R)`, or `(R * R,)` flattened row-major.
        k: int in `[0, 8)`.

    Returns:
        The transformed image, a new array of the shape and dtype of
        `image`.

    Example:

    >>> apply_d4(np.array([[1, 2], [3, 4]]), 1).tolist()
    [[2, 4], [1, 3]]
    """
    _check_element(k)
    image = np.asarray(image)
    if image.ndim == 1:
        resolution = _square_side(image.shape[0], "image")
        square = image.reshape(resolution, resolution)
    elif image.ndim == 2 and image.shape[0] == image.shape[1]:
        square = image
    else:
        raise ValueError(
            "`image` must be square (R, R) or flattened (R * R,). "
            f"Received: shape={image.shape}"
        )
    turns, transposed = D4_ELEMENTS[k]
    if transposed:
        square = square.T
    return np.ascontiguousarray(np.rot90(square, turns)).reshape(image.shape)


def d4(images, rng, *, resolution=None, elements=None):
    """Applies an independent random D4 symmetry to every image of a batch.

    Each image gets a uniformly random element of `elements` (all eight of
    D4 by default; YCTFS appendix C suggests a subset may suffice),
    applied as by `apply_d4()`. The Pathfinder label (are the markers
    connected?) is invariant under every element.

    Args:
        images: array `(N, R * R)` of flattened row-major images, or
            `(N, R, R)`.
        rng: `np.random.Generator` kept across steps.
        resolution: int or None. `R` for flattened images; `None` infers it
            from the length, which must be a perfect square. Defaults to
            `None`.
        elements: sequence of ints in `[0, 8)` or None. The elements to
            draw from; `None` is all eight. Defaults to `None`.

    Returns:
        A new array of the shape and dtype of `images`.

    Example:

    >>> x = np.arange(2 * 16).reshape(2, 16)
    >>> d4(x, np.random.default_rng(0)).shape
    (2, 16)
    """
    images = np.asarray(images)
    resolution = _batch_resolution(images, rng, resolution)
    if elements is None:
        elements = np.arange(len(D4_ELEMENTS))
    else:
        elements = np.asarray(elements)
        if (
            elements.ndim != 1
            or not elements.size
            or not np.issubdtype(elements.dtype, np.integer)
            or elements.min() < 0
            or elements.max() >= len(D4_ELEMENTS)
        ):
            raise ValueError(
                "`elements` must be a non-empty sequence of ints in [0, 8). "
                f"Received: elements={elements.tolist()!r}"
            )
    num_images = images.shape[0]
    flat = images.reshape(num_images, resolution * resolution)
    choice = elements[rng.integers(0, elements.size, num_images)]  # (N,)
    table = _d4_gather_table(int(resolution))  # (8, R * R)
    out = np.empty_like(flat)
    # One gather per element present, rather than an (N, R * R) index array.
    for k in np.unique(choice):
        rows = choice == k
        out[rows] = flat[rows][:, table[k]]
    return out.reshape(images.shape)


def inverse_affine_matrix(angle, translate, scale, center):
    """The (2, 3) map from output to input pixel coordinates of a rotation
    by `angle` degrees about `center`, a `scale` and a `translate`, as
    torchvision's `_get_inverse_affine_matrix` forms it (no shear):
    `C R(angle)^-1 C^-1 T^-1 / scale` in the image's (x right, y down)
    coordinates.
    """
    rot = np.deg2rad(angle)
    cx, cy = center
    tx, ty = translate
    m = np.array([np.cos(rot), np.sin(rot), 0.0,
                  -np.sin(rot), np.cos(rot), 0.0]) / scale
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty) + cx
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty) + cy
    return m.reshape(2, 3)


def flips_affine(images, rng, *, degrees=10.0, translate=0.1,
                 scale=(0.9, 1.1)):
    """YCTFS's Pathfinder augmentation: random flips, then a random affine
    map, of every image of a batch.

    The long-transformers code (branch lra-paper,
    `src/data_loaders/pathfinder.py` lines 59-63, `enable_augment: true`
    in `configs/dataset/pathfinder.yaml`) transforms each training PIL
    image by `RandomHorizontalFlip(0.5)`, `RandomVerticalFlip(0.5)` and
    `RandomAffine(degrees=10, translate=(0.1, 0.1), scale=(0.9, 1.1))`.
    As torchvision's `RandomAffine.get_params`: the angle uniform in
    `[-degrees, degrees]`, the shifts `round(U(-translate * R,
    translate * R))` pixels, the scale uniform in `scale`; as its PIL path
    (`Image.transform(AFFINE, NEAREST)`, centre `(R / 2, R / 2)`): each
    output pixel takes the input pixel under its centre mapped by
    `inverse_affine_matrix`, and 0 (black) outside the image. YCTFS
    applies them to the training images only, taking the label (are the
    markers joined?) to survive them.

    Args:
        images: array `(N, R * R)` of flattened row-major images, or
            `(N, R, R)`, of grey values (0 black).
        rng: `np.random.Generator` kept across steps.
        degrees, translate, scale: the ranges of `RandomAffine`.

    Returns:
        A new array of the shape and dtype of `images`.

    Example:

    >>> x = np.arange(2 * 16).reshape(2, 16)
    >>> flips_affine(x, np.random.default_rng(0)).shape
    (2, 16)
    """
    images = np.asarray(images)
    resolution = _batch_resolution(images, rng)
    n, r = images.shape[0], resolution
    flat = images.reshape(n, r * r)
    flip_x = rng.random(n) < 0.5
    flip_y = rng.random(n) < 0.5
    angle = rng.uniform(-degrees, degrees, n)
    shift = np.round(rng.uniform(-translate * r, translate * r, (n, 2)))
    scales = rng.uniform(scale[0], scale[1], n)
    ys, xs = np.divmod(np.arange(r * r), r)
    centres = np.stack([xs + 0.5, ys + 0.5, np.ones(r * r)])  # (3, R * R)
    out = np.zeros_like(flat)
    for i in range(n):
        m = inverse_affine_matrix(angle[i], shift[i], scales[i],
                                  (r / 2, r / 2))
        sx, sy = m @ centres  # input coordinates of each output centre
        inside = (sx >= 0) & (sx < r) & (sy >= 0) & (sy < r)
        px = np.floor(sx[inside]).astype(np.int64)
        py = np.floor(sy[inside]).astype(np.int64)
        # the affine map reads the flipped image
        if flip_x[i]:
            px = r - 1 - px
        if flip_y[i]:
            py = r - 1 - py
        out[i, inside] = flat[i, py * r + px]
    return out.reshape(images.shape)


@functools.lru_cache(maxsize=8)
def _d4_gather_table(resolution):
    # Row k: the source pixel of each output pixel under element k.
    pixels = np.arange(resolution * resolution, dtype=np.int32)
    table = np.stack([apply_d4(pixels, k) for k in range(8)])
    table.flags.writeable = False
    return table


def _batch_resolution(images, rng, resolution=None):
    """The side R of a batch of images `(N, R * R)` or `(N, R, R)`, after
    checking it (and `resolution`, where given) and the generator."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            "`rng` must be a np.random.Generator kept across steps, e.g. "
            f"np.random.default_rng(seed). Received: rng={rng!r}"
        )
    if images.ndim == 2:
        if resolution is None:
            resolution = _square_side(images.shape[1], "images.shape[1]")
        elif (
            isinstance(resolution, bool)
            or not isinstance(resolution, (int, np.integer))
            or resolution < 1
            or resolution * resolution != images.shape[1]
        ):
            raise ValueError(
                "`resolution` must be an int R with R * R equal to the "
                f"image length {images.shape[1]}. "
                f"Received: resolution={resolution!r}"
            )
    elif images.ndim == 3 and images.shape[1] == images.shape[2]:
        if resolution not in (None, images.shape[1]):
            raise ValueError(
                f"`resolution` does not match the images {images.shape}. "
                f"Received: resolution={resolution!r}"
            )
        resolution = images.shape[1]
    else:
        raise ValueError(
            "`images` must have shape (N, R * R) or (N, R, R). "
            f"Received: shape={images.shape}"
        )
    return resolution


def _square_side(length, name):
    side = int(np.sqrt(length) + 0.5)
    if side < 1 or side * side != length:
        raise ValueError(
            f"Flattened images must have a square length R * R; `{name}` "
            f"is {length}. Pass square images (N, R, R) or a length R * R."
        )
    return side


def _check_element(k):
    if (
        isinstance(k, bool)
        or not isinstance(k, (int, np.integer))
        or not 0 <= k < len(D4_ELEMENTS)
    ):
        raise ValueError(
            f"`k` must be an int in [0, 8) (an element of D4_ELEMENTS). "
            f"Received: k={k!r}"
        )


class PathfinderAugment(Augmentation):
    name = "pathfinder_augment"
    source = ("You Can Train from Scratch, section 3 (all three Pathfinder "
              "sets) and appendix C (symmetries)")
    keys = dict(
        augment_d4=True,  # a random D4 symmetry of each training image
        # YCTFS's code: random flips and a random affine map of each
        # training image (`flips_affine`), after the D4 symmetry if any
        augment_affine=False,
        # The training split's difficulty; None: `difficulty` (augment
        # sets "all"; val and test keep `difficulty`, or read
        # `eval_difficulty`).
        train_difficulty=None,
        # Val and test's difficulty; None: `difficulty`. "all": the three
        # sets (YCTFS's code splits them pooled).
        eval_difficulty=None,
    )

    def resolve(self, hp):
        if hp["difficulty"] is not None and hp["train_difficulty"] is None:
            hp["train_difficulty"] = "all"

    def make(self, hp, seed):
        steps = []
        if hp["augment_d4"]:
            steps.append(d4)
        if hp.get("augment_affine"):
            steps.append(flips_affine)
        if not steps:
            return None

        def augment(x, rng):
            for step in steps:
                x = step(x, rng)
            return x

        return augment


PATHFINDER_AUGMENT = PathfinderAugment()
