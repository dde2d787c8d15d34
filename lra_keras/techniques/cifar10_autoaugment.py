"""CIFAR-10 colour augmentation of YCTFS, built from Keras preprocessing layers.

YCTFS (§3, appendix A.3) augments each CIFAR-10 training image in colour,
then converts it to grayscale. Its pipeline (`CIFAR100CollatorFn` in
`src/data_loaders/cifar10.py`) is four stages, each reproduced here:

1. `RandomHorizontalFlip()`: flip with probability 0.5.
2. `AutoAugment(AutoAugmentPolicy.CIFAR10)` (torchvision): per image, one of
   the 25 sub-policies of `CIFAR10_AUTOAUGMENT_POLICY` uniformly; each of
   its two ops runs with its probability, at the magnitude of its bin
   (`autoaugment_magnitude()`), negated with probability 1/2 for the signed
   ops. Nearest interpolation, fill 0.
3. `RandomCifar10Augmentator` (YCTFS): the nine ops of `YCTFS_EXTRA_OPS` in
   order, each independently with its probability, at a magnitude drawn
   uniformly from `YCTFS_EXTRA_RANGES` (`random.uniform`, so Posterize
   takes `int(uniform(0, 7))` bits, 0 included).
4. `RandomAffine(degrees=10, translate=(0.1, 0.1), shear=10, fill=0,
   interpolation=BILINEAR)`: a rotation in [-10, 10] degrees, a translation
   of `round(uniform(-3.2, 3.2))` pixels on each axis and an x-shear in
   [-10, 10] degrees, composed into one resampling.

YCTFS then converts with torchvision `Grayscale` (PIL "L"); here
`lra_keras.techniques.cifar10_policy` (the augmentation `--augment`
applies to the Image task) uses `lra_keras.data.image.to_grayscale`, the
conversion of LRA, so unaugmented images give LRA's tokens exactly.

Which op is which (reference: PIL, as the CIFAR10 dataset yields PIL
images):

| op           | here                                       |
|--------------|--------------------------------------------|
| flip         | `keras.layers.RandomFlip("horizontal")`    |
| Rotate       | `keras.layers.RandomRotation`              |
| TranslateX/Y | `keras.layers.RandomTranslation`           |
| ShearX/Y     | `keras.layers.RandomShear`                 |
| Contrast     | `keras.layers.RandomContrast`              |
| Color        | `keras.layers.RandomColorDegeneration`     |
| Sharpness    | `keras.layers.RandomSharpness`             |
| Posterize    | `keras.layers.RandomPosterization`         |
| Solarize     | `keras.layers.Solarization`                |
| AutoContrast | `keras.layers.AutoContrast`                |
| Equalize     | numpy: Equalization pools the batch        |
| Invert       | `keras.layers.RandomInvert`                |
| Brightness   | numpy: no layer (RandomBrightness adds)    |
| Posterize 0  | numpy: no layer (RandomPosterization >= 1) |
| RandomAffine | `keras.ops.image.affine_transform`         |

The per-image magnitudes are drawn here and handed to each layer's
`transform_images(images, transformation)`, in the dict its
`get_random_transformation()` returns -- the mechanism Keras's own
`RandAugment` uses -- because a layer samples its magnitude from a range,
while AutoAugment applies fixed, signed magnitudes.

Differences from PIL (all small; the tests pin the Keras behaviour):
- Contrast: Keras blends each channel with its own mean; PIL blends all
  channels with the rounded mean of the grayscale image. After the
  (linear) grayscale conversion the two agree up to clipping and that
  rounding.
- Color: Keras's grayscale weights are (0.2989, 0.587, 0.114), PIL's
  (0.299, 0.587, 0.114). Colour saturation barely changes the grayscale
  image at all (only through clipping).
- Sharpness: the same 3x3 smoothing kernel (1 1 1; 1 5 1; 1 1 1) / 13 and
  blend; Keras pads with zeros and does not round the smoothed image,
  PIL keeps the border pixels. The border is restored here to match PIL.
- Equalize: `keras.layers.Equalization` pools one histogram over the whole
  batch, not one per image, and calling it image by image takes ~0.3 s
  per image under JAX; so Equalize is numpy, with PIL's lookup table
  `(step // 2 + cdf_before) // step`, `step = (N - h_last) // 255`
  (Keras's own table, `round(255 (cdf - cdf_min) / (N - cdf_min))`, differs
  from PIL's by about one level).
- Rounding: PIL stores uint8 after every op and truncates its blends; here
  every op's output is truncated (floor) to an integer level too, except
  the bilinear affine stage, which is rounded.
- Geometry: coordinates are pixel centres about the centre
  ((W - 1) / 2, (H - 1) / 2), which is PIL's (W / 2, H / 2) in its
  half-pixel convention. Shears act about the top-left pixel (torchvision
  `center=[0, 0]`), without torchvision's half-pixel offset.
- Probabilities: an op runs when a uniform draw is `< p` (YCTFS) where
  torchvision uses `<=` for AutoAugment; the difference has probability 0.
- The random streams are Keras's (`keras.random`), not Python's or
  torch's, so a seed gives other draws than in YCTFS.

References:
- Miralles et al., "You Can Train from Scratch: Further Analysis of the Long
  Range Arena" (YCTFS), §3 and appendix A.3.
- Cubuk et al., "AutoAugment: Learning Augmentation Strategies from Data",
  CVPR 2019, https://arxiv.org/abs/1805.09501 (CIFAR-10 policy).

Original files read: `src/utils/augmentation/cifar10_augmentation.py` and
`src/data_loaders/cifar10.py` of pablomiralles22/long-transformers (the
files A.3 names); `torchvision/transforms/autoaugment.py` (`_apply_op`,
`AutoAugment._get_policies`, `_augmentation_space`, `forward`) of
pytorch/vision; `keras/src/layers/preprocessing/image_preprocessing/*.py`
(Keras 3.15) for each layer's transformation dict.
"""

import keras
import numpy as np

# === Tables ===

# torchvision AutoAugmentPolicy.CIFAR10: (op, probability, magnitude bin).
CIFAR10_AUTOAUGMENT_POLICY = (
    (("Invert", 0.1, None), ("Contrast", 0.2, 6)),
    (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
    (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)),
    (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
    (("AutoContrast", 0.5, None), ("Equalize", 0.9, None)),
    (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
    (("Color", 0.4, 3), ("Brightness", 0.6, 7)),
    (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
    (("Equalize", 0.6, None), ("Equalize", 0.5, None)),
    (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
    (("Color", 0.7, 7), ("TranslateX", 0.5, 8)),
    (("Equalize", 0.3, None), ("AutoContrast", 0.4, None)),
    (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)),
    (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
    (("Solarize", 0.5, 2), ("Invert", 0.0, None)),
    (("Equalize", 0.2, None), ("AutoContrast", 0.6, None)),
    (("Equalize", 0.2, None), ("Equalize", 0.6, None)),
    (("Color", 0.9, 9), ("Equalize", 0.6, None)),
    (("AutoContrast", 0.8, None), ("Solarize", 0.2, 8)),
    (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
    (("Solarize", 0.4, 5), ("AutoContrast", 0.9, None)),
    (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
    (("AutoContrast", 0.9, None), ("Solarize", 0.8, 3)),
    (("Equalize", 0.8, None), ("Invert", 0.1, None)),
    (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, None)),
)

# YCTFS RandomCifar10Augmentator: (op, probability), applied in this order.
YCTFS_EXTRA_OPS = (
    ("Invert", 0.008),
    ("Contrast", 0.032),
    ("Sharpness", 0.112),
    ("AutoContrast", 0.2),
    ("Equalize", 0.188),
    ("Posterize", 0.012),
    ("Color", 0.116),
    ("Brightness", 0.092),
    ("Solarize", 0.076),
)
# Magnitude ranges of the extra ops (`random.uniform(low, high)`).
YCTFS_EXTRA_RANGES = {
    "Brightness": (1.0, 1.9),
    "Color": (1.0, 1.9),
    "Contrast": (1.0, 1.9),
    "Sharpness": (1.0, 1.9),
    "Posterize": (0.0, 7.0),
    "Solarize": (0.0, 256.0),
}
# YCTFS RandomAffine(degrees=10, translate=(0.1, 0.1), shear=10).
YCTFS_AFFINE = dict(degrees=10.0, translate=0.1, shear=10.0)

OPS = (
    "Identity",
    "ShearX",
    "ShearY",
    "TranslateX",
    "TranslateY",
    "Rotate",
    "Brightness",
    "Color",
    "Contrast",
    "Sharpness",
    "Posterize",
    "Solarize",
    "AutoContrast",
    "Equalize",
    "Invert",
)
# The ops whose magnitude has a direction (negated with probability 1/2):
# ShearX through Sharpness in OPS.
_SIGNED = frozenset(OPS[OPS.index("ShearX"):OPS.index("Sharpness") + 1])
_NUM_BINS = 10


def autoaugment_magnitude(op, magnitude_bin, image_size=32):
    """Unsigned magnitude of an AutoAugment op at a bin, in op units.

    torchvision `AutoAugment._augmentation_space(10, image_size)`: shear
    factor, translation in whole pixels, rotation in degrees, enhancement
    factor (1 + m), posterize bits, solarize threshold. Ops without a
    magnitude give 0.
    """
    if op not in OPS:
        raise ValueError(f"Unknown op. Expected one of {OPS}. Received: {op!r}")
    if magnitude_bin is None:
        return 0.0
    if not 0 <= magnitude_bin < _NUM_BINS:
        raise ValueError(
            f"`magnitude_bin` must be in [0, {_NUM_BINS}). "
            f"Received: magnitude_bin={magnitude_bin!r}"
        )
    step = magnitude_bin / (_NUM_BINS - 1)
    if op in ("ShearX", "ShearY"):
        return 0.3 * step
    if op in ("TranslateX", "TranslateY"):
        # torchvision truncates with int() after applying the sign.
        return float(int(150.0 / 331.0 * image_size * step))
    if op == "Rotate":
        return 30.0 * step
    if op in ("Brightness", "Color", "Contrast", "Sharpness"):
        return 1.0 + 0.9 * step  # the sign applies to 0.9 * step
    if op == "Posterize":
        return float(8 - round(4 * step))
    if op == "Solarize":
        return 255.0 * (1.0 - step)
    return 0.0


# === The policy ===


class CIFAR10Policy:
    """YCTFS's CIFAR-10 augmentation of colour images, on numpy batches.

    Flip, AutoAugment (CIFAR-10 policy), the YCTFS extra ops and a random
    affine map, as in the YCTFS code (see the module docstring for the
    stages, the Keras layer behind each op, and the differences from PIL).
    Runs eagerly under any Keras backend on numpy input (a data pipeline,
    outside the model); the images never need the labels.

    Args:
        seed: int, None or `keras.random.SeedGenerator`. The random stream;
            an int gives the same augmentations on every run of a backend.
            Defaults to `None`.
        flip_probability: float. Probability of a horizontal flip. Defaults
            to 0.5.
        policy: sequence of sub-policies `((op, p, bin), (op, p, bin))`.
            Defaults to `CIFAR10_AUTOAUGMENT_POLICY`; empty skips the stage.
        extra_ops: sequence of `(op, p)` with ops in `YCTFS_EXTRA_RANGES`
            or without a magnitude. Defaults to `YCTFS_EXTRA_OPS`.
        affine: dict `degrees`, `translate`, `shear` or None (skip).
            Defaults to `YCTFS_AFFINE`.

    Call arguments:
        images: uint8 array `(N, H, W, 3)`.

    Returns:
        uint8 array `(N, H, W, 3)`.

    Example:

    >>> x = np.zeros((2, 32, 32, 3), np.uint8)
    >>> CIFAR10Policy(seed=0)(x).shape
    (2, 32, 32, 3)
    """

    def __init__(
        self,
        seed=None,
        flip_probability=0.5,
        policy=CIFAR10_AUTOAUGMENT_POLICY,
        extra_ops=YCTFS_EXTRA_OPS,
        affine=YCTFS_AFFINE,
    ):
        if not 0.0 <= flip_probability <= 1.0:
            raise ValueError(
                "`flip_probability` must be in [0, 1]. "
                f"Received: flip_probability={flip_probability!r}"
            )
        for sub_policy in policy:
            if len(sub_policy) != 2:
                raise ValueError(
                    "Each sub-policy must be two (op, p, bin) triples. "
                    f"Received: {sub_policy!r}"
                )
            for op, p, magnitude_bin in sub_policy:
                _check_probability(op, p)
                autoaugment_magnitude(op, magnitude_bin)
        for op, p in extra_ops:
            _check_probability(op, p)
            if op in _SIGNED | {"Posterize", "Solarize"}:
                if op not in YCTFS_EXTRA_RANGES:
                    raise ValueError(
                        f"Extra op {op!r} needs a range in "
                        f"YCTFS_EXTRA_RANGES. Received: {op!r}"
                    )
        if affine is not None and set(affine) != set(YCTFS_AFFINE):
            raise ValueError(
                f"`affine` must have the keys {sorted(YCTFS_AFFINE)} or be "
                f"None. Received: affine={affine!r}"
            )
        if isinstance(seed, keras.random.SeedGenerator):
            self.seed_generator = seed
        else:
            self.seed_generator = keras.random.SeedGenerator(seed)
        self.seed = seed
        self.flip_probability = flip_probability
        self.policy = tuple(policy)
        self.extra_ops = tuple(extra_ops)
        self.affine = affine

        # === Layers (magnitudes come from the transformation dicts) ===
        geometry = dict(
            fill_mode="constant",
            fill_value=0.0,
            interpolation="nearest",
            dtype="float32",
        )
        self.flip = keras.layers.RandomFlip("horizontal", dtype="float32")
        self.rotation = keras.layers.RandomRotation(0.0, **geometry)
        self.translation = keras.layers.RandomTranslation(0.0, 0.0, **geometry)
        self.shear = keras.layers.RandomShear(0.0, 0.0, **geometry)
        self.contrast = keras.layers.RandomContrast(0.0, dtype="float32")
        self.color = keras.layers.RandomColorDegeneration(0.0, dtype="float32")
        self.sharpness = keras.layers.RandomSharpness(0.0, dtype="float32")
        self.posterization = keras.layers.RandomPosterization(
            (1, 8), dtype="float32"
        )
        self.solarization = keras.layers.Solarization(dtype="float32")
        self.auto_contrast = keras.layers.AutoContrast(dtype="float32")
        self.invert = keras.layers.RandomInvert(1.0, dtype="float32")

    def __call__(self, images):
        x = _check_images(images).astype(np.float32)  # (N, H, W, 3)
        n = x.shape[0]
        if n == 0:
            return x.astype(np.uint8)

        # === 1. Horizontal flip ===
        flips = self._uniform((n,)) < self.flip_probability
        if flips.any():
            out = self._run(self.flip, x, flips=flips[:, None, None, None])
            x = np.where(flips[:, None, None, None], out, x)

        # === 2. AutoAugment: one sub-policy per image ===
        if self.policy:
            choice = self._randint((n,), len(self.policy))  # (N,)
            draws = self._uniform((n, 2))
            negate = self._uniform((n, 2)) < 0.5
            for slot in range(2):
                ops = np.array([s[slot][0] for s in self.policy])[choice]
                p = np.array([s[slot][1] for s in self.policy])[choice]
                bins = [s[slot][2] for s in self.policy]
                active = draws[:, slot] < p
                for op in np.unique(ops[active]):
                    rows = active & (ops == op)
                    magnitude = np.array(
                        [
                            autoaugment_magnitude(op, bins[c], x.shape[2])
                            for c in choice
                        ]
                    )
                    if op in _SIGNED:
                        magnitude = _negate(op, magnitude, negate[:, slot])
                    x = self.apply(x, op, magnitude, rows=rows)

        # === 3. YCTFS extra ops, each with its own probability ===
        if self.extra_ops:
            draws = self._uniform((n, len(self.extra_ops)))
            levels = self._uniform((n, len(self.extra_ops)))
            for j, (op, p) in enumerate(self.extra_ops):
                rows = draws[:, j] < p
                if not rows.any():
                    continue
                low, high = YCTFS_EXTRA_RANGES.get(op, (0.0, 0.0))
                magnitude = low + (high - low) * levels[:, j]
                if op == "Posterize":
                    magnitude = np.floor(magnitude)  # int(uniform(0, 7))
                x = self.apply(x, op, magnitude, rows=rows)

        # === 4. Random affine (one bilinear resampling) ===
        if self.affine is not None:
            x = self._random_affine(x)
        return x.astype(np.uint8)

    def apply(self, images, op, magnitude, rows=None):
        """Applies one op at per-image magnitudes (in op units).

        Only the images in `rows` go through the layer, in a batch padded
        to a power of two (JAX compiles each eager op once per shape).

        Args:
            images: array `(N, H, W, 3)` of levels 0..255 (any dtype).
            op: str in `OPS`.
            magnitude: float or array `(N,)`: signed shear factor,
                translation in pixels, rotation in degrees (counter-
                clockwise), enhancement factor (1 = identity), posterize
                bits (0..8), solarize threshold. Ignored by AutoContrast,
                Equalize, Invert and Identity.
            rows: bool array `(N,)` or None. The images to change; the
                others are returned as they are. Defaults to all.

        Returns:
            float32 array `(N, H, W, 3)` of integer levels 0..255.
        """
        x = np.asarray(images, np.float32)
        if x.ndim != 4 or x.shape[-1] != 3:
            raise ValueError(
                "Expected images of shape (N, H, W, 3). "
                f"Received: shape={x.shape}"
            )
        n = x.shape[0]
        m = np.broadcast_to(np.asarray(magnitude, np.float32), (n,))
        rows = np.ones(n, bool) if rows is None else np.asarray(rows, bool)
        if rows.shape != (n,):
            raise ValueError(
                f"`rows` must have shape ({n},). Received: shape={rows.shape}"
            )
        if op not in OPS:
            raise ValueError(
                f"Unknown op. Expected one of {OPS}. Received: {op!r}"
            )
        if not rows.any() or op == "Identity":
            return x
        if op == "Equalize":
            out = x.copy()
            out[rows] = _equalize(x[rows])
            return out
        # The selected images, padded to a power of two (at most the batch)
        # by repeating the first: few distinct shapes for JAX to compile,
        # and no work on the images left alone.
        index = np.flatnonzero(rows)
        size = min(n, 1 << int(index.size - 1).bit_length())
        padded = np.concatenate([index, np.full(size - index.size, index[0])])
        out = x.copy()
        out[index] = self._apply(x[padded], op, m[padded])[: index.size]
        return out

    def _apply(self, x, op, m):
        n = x.shape[0]
        if op in ("ShearX", "ShearY"):
            zero = np.zeros(n, np.float32)
            pair = (m, zero) if op == "ShearX" else (zero, m)
            return self._run(self.shear, x, shear_factor=np.stack(pair, 1))
        if op in ("TranslateX", "TranslateY"):
            zero = np.zeros(n, np.float32)
            pair = (m, zero) if op == "TranslateX" else (zero, m)
            return self._run(
                self.translation, x, translations=np.stack(pair, 1)
            )
        if op == "Rotate":
            zero = np.zeros(n, np.float32)
            # torchvision's matrix turns clockwise for a positive angle.
            matrix = _affine_matrix(x.shape[1:3], -m, zero, zero, zero)
            return self._run(self.rotation, x, rotation_matrix=matrix)
        if op == "Brightness":
            # No layer: RandomBrightness adds a delta; PIL multiplies.
            return _floor(x * m[:, None, None, None])
        if op == "Color":
            # PIL blends towards gray with weight s; Keras with 1 - s.
            factor = (1.0 - m)[:, None, None, None]
            return self._run(self.color, x, factor=factor)
        if op == "Contrast":
            factor = m[:, None, None, None]
            return self._run(self.contrast, x, contrast_factor=factor)
        if op == "Sharpness":
            # Keras's factor f blends with weight 2 f (PIL's s).
            out = self._run(self.sharpness, x, factor=m / 2.0)
            out[:, [0, -1]] = x[:, [0, -1]]  # PIL keeps the border
            out[:, :, [0, -1]] = x[:, :, [0, -1]]
            return out
        if op == "Posterize":
            bits = m.astype(np.int64)
            if ((bits < 0) | (bits > 8)).any():
                raise ValueError(
                    f"Posterize bits must be in [0, 8]. Received: {bits}"
                )
            # RandomPosterization takes 1..8 bits; 0 bits is black (PIL).
            out = self._run(
                self.posterization,
                x,
                shift_factor=(8 - np.maximum(bits, 1)).astype(np.uint8),
            )
            return np.where(bits[:, None, None, None] > 0, out, 0.0)
        if op == "Solarize":
            thresholds = m[:, None, None, None]
            return self._run(
                self.solarization,
                x,
                thresholds=thresholds,
                additions=np.zeros_like(thresholds),
            )
        if op == "AutoContrast":
            return self._run(self.auto_contrast, x)
        if op == "Invert":
            return self._run(self.invert, x, apply_inversion=np.ones(n, bool))
        return x  # Identity; Equalize is handled in `apply`

    # === Helpers ===

    def _run(self, layer, x, **transformation):
        if x.shape[0] == 0:
            return x
        transformation = {
            key: keras.ops.convert_to_tensor(value)
            for key, value in transformation.items()
        }
        out = layer.transform_images(
            keras.ops.convert_to_tensor(x),
            transformation or None,
            training=True,
        )
        return _floor(keras.ops.convert_to_numpy(out))

    def _random_affine(self, x):
        n, height, width = x.shape[:3]
        degrees = self.affine["degrees"]
        shear = self.affine["shear"]
        u = self._uniform((n, 4))
        angle = degrees * (2.0 * u[:, 0] - 1.0)
        # torchvision: round(uniform(-0.1 W, 0.1 W)) whole pixels.
        dx = np.round(self.affine["translate"] * width * (2.0 * u[:, 1] - 1))
        dy = np.round(self.affine["translate"] * height * (2.0 * u[:, 2] - 1))
        shear_x = shear * (2.0 * u[:, 3] - 1.0)
        matrix = _affine_matrix((height, width), angle, dx, dy, shear_x)
        # No Keras layer composes rotation, translation and shear into one
        # resampling (three layers would blur three times).
        out = keras.ops.image.affine_transform(
            keras.ops.convert_to_tensor(x),
            keras.ops.convert_to_tensor(matrix),
            interpolation="bilinear",
            fill_mode="constant",
            fill_value=0.0,
        )
        out = keras.ops.convert_to_numpy(out)
        return np.clip(np.round(out), 0.0, 255.0).astype(np.float32)

    def _uniform(self, shape):
        return keras.ops.convert_to_numpy(
            keras.random.uniform(shape, seed=self.seed_generator)
        )

    def _randint(self, shape, high):
        return keras.ops.convert_to_numpy(
            keras.random.randint(shape, 0, high, seed=self.seed_generator)
        ).astype(np.int64)


def _affine_matrix(size, angle, dx, dy, shear_x):
    # torchvision `_get_inverse_affine_matrix` (shear_y = 0, scale = 1) in
    # pixel-centre coordinates: output pixel -> input point, as the 8-vector
    # of keras.ops.image.affine_transform. Angles in degrees, (N,) each.
    height, width = size
    cx, cy = (width - 1) / 2.0, (height - 1) / 2.0
    rot = np.radians(np.asarray(angle, np.float64))
    sx = np.radians(np.asarray(shear_x, np.float64))
    a = np.cos(rot)
    b = -np.cos(rot) * np.tan(sx) - np.sin(rot)
    c = np.sin(rot)
    d = -np.sin(rot) * np.tan(sx) + np.cos(rot)
    m0, m1, m3, m4 = d, -b, -c, a  # inverse of (a b; c d), det = 1
    m2 = m0 * (-cx - dx) + m1 * (-cy - dy) + cx
    m5 = m3 * (-cx - dx) + m4 * (-cy - dy) + cy
    zero = np.zeros_like(m0)
    return np.stack([m0, m1, m2, m3, m4, m5, zero, zero], 1).astype(np.float32)


def _equalize(x):
    # PIL ImageOps.equalize per image and channel: step = (N - h_last) //
    # 255 with h_last the count of the highest level present, then
    # lut[v] = (step // 2 + #pixels below v) // step; step 0: unchanged.
    levels = x.astype(np.int64)  # (n, H, W, 3)
    n, channels = levels.shape[0], levels.shape[-1]
    plane = np.arange(n * channels).reshape(n, 1, 1, channels) * 256
    hist = np.bincount(
        (levels + plane).ravel(), minlength=n * channels * 256
    ).reshape(n, channels, 256)  # (n, 3, 256)
    total = hist.sum(-1, keepdims=True)  # (n, 3, 1)
    last = 255 - np.argmax(hist[..., ::-1] > 0, axis=-1)[..., None]
    h_last = np.take_along_axis(hist, last, -1)
    step = (total - h_last) // 255  # (n, 3, 1)
    below = np.cumsum(hist, -1) - hist  # exclusive cumulative count
    lut = np.minimum((step // 2 + below) // np.maximum(step, 1), 255)
    lut = np.where(step > 0, lut, np.arange(256))  # (n, 3, 256)
    flat = levels.reshape(n, -1, channels).transpose(0, 2, 1)  # (n, 3, HW)
    out = np.take_along_axis(lut, flat, -1).transpose(0, 2, 1)
    return out.reshape(x.shape).astype(np.float32)


def _negate(op, magnitude, negate):
    if op in ("Brightness", "Color", "Contrast", "Sharpness"):
        # The sign flips 0.9 * step around 1: 1 + m or 1 - m.
        return np.where(negate, 2.0 - magnitude, magnitude)
    return np.where(negate, -magnitude, magnitude)


def _floor(x):
    # PIL stores uint8 after each op and truncates its blends.
    return np.floor(np.clip(np.asarray(x, np.float32), 0.0, 255.0))


def _check_probability(op, p):
    if op not in OPS:
        raise ValueError(f"Unknown op. Expected one of {OPS}. Received: {op!r}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(
            f"Probabilities must be in [0, 1]. Received: {op!r} with p={p!r}"
        )


def _check_images(images):
    images = np.asarray(images)
    if images.dtype != np.uint8 or images.ndim != 4 or images.shape[-1] != 3:
        raise ValueError(
            "Expected uint8 colour images of shape (N, H, W, 3). "
            f"Received: dtype={images.dtype}, shape={images.shape}"
        )
    return images
