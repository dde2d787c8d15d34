"""Pathfinder augmentation: D4 symmetries and all three difficulty sets.

YCTFS (§3, Tables 5-7) trains Pathfinder on all three difficulty sets
(contour lengths 6, 9 and 14) for 67 epochs, the number of steps of 200
epochs on the hard set; validation and test stay on the hard set. This
library adds, by default, a random symmetry of the square per image (YCTFS
appendix C suggests it; `augment_d4=False` gives YCTFS's exact setting):
the label says whether the two markers lie on one curve, which no rotation
or reflection changes, and the eight symmetries of the dihedral group D4
permute pixels exactly, without the interpolation that would distort a
low-resolution image.

The D4 functions import only numpy and the standard library.

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


@functools.lru_cache(maxsize=8)
def _d4_gather_table(resolution):
    # Row k: the source pixel of each output pixel under element k.
    pixels = np.arange(resolution * resolution, dtype=np.int32)
    table = np.stack([apply_d4(pixels, k) for k in range(8)])
    table.flags.writeable = False
    return table


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
        # The training split's difficulty; None: `difficulty` (augment
        # sets "all"; val and test keep `difficulty`).
        train_difficulty=None,
    )

    def resolve(self, hp):
        if hp["difficulty"] is not None and hp["train_difficulty"] is None:
            hp["train_difficulty"] = "all"

    def make(self, hp, seed):
        if not hp["augment_d4"]:
            return None
        return lambda x, rng: d4(x, rng)


PATHFINDER_AUGMENT = PathfinderAugment()
