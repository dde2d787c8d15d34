"""Our Pathfinder images against the official generator's, statistics.

Usage:

    git -C <clone of drewlinsley/pathfinder> archive ab9c130 \\
        | tar -x -C /tmp/pf_official
    taskset -c 0 python benchmarks/pathfinder_fidelity.py \\
        --official /tmp/pf_official [--resolution 32] [--samples 400] \\
        [--difficulty all|easy|intermediate|hard] [--seed 0] [--tolerance 0.05]

`--official` is a checkout of drewlinsley/pathfinder at commit ab9c130
("Pushed the gen.", the generator LRA used). Its `snakes2.py` and
`snakes.py` are imported from there, never copied, and run with
`snakes2.from_wrapper` as `snakes2_wrapper.py` runs them: the defaults of
its `Args` class (read from the file, without running the script), the
settings of its lines 64-78, then LRA's parameter block of the resolution
(`GENERATOR_PARAMS`, with `num_distractor_snakes = distractor_paddles //
(contour_length // 3)` as the block states it). Its PNGs go to a
temporary folder, removed afterwards.

The checkout was written for Python 2 with scipy < 1.2, numpy < 1.20 and
OpenCV. Before it is imported, what it uses and is gone is put back, as
those versions did it:

- `scipy.misc.imresize` and `scipy.misc.imsave` (scipy 1.1): `toimage`'s
  bytescale of the array to 0..255 (a uint8 array as it is), a PIL "L"
  image, PIL's resize (`interp="lanczos"` is PIL filter 1), the uint8 array
  back; `imsave` saves the bytescaled image. (The numpy-2 port f12b747
  resizes float arrays as PIL "F" images instead, which keeps the paddles'
  Lanczos ringing and leaves the markers at 1/255.)
- `numpy.float` (`float`) and `numpy.round_` (`numpy.round`).
- `cv2`, when OpenCV is not installed: `cv2.dilate(src, kernel)` as a
  grey dilation, the maximum over the kernel's non-zero cells anchored at
  its centre (not mirrored, unlike `scipy.ndimage.grey_dilation`), the
  outside of the image ignored (OpenCV's default border for dilation);
  `cv2.useOptimized`. With OpenCV 5.0 installed both give the same images.

Hooks around `snakes.make_many_snakes` / `snakes.make_snake` count the
distractor contours drawn per image, and around `snakes2.draw_circle`
record the marker centres.

Ours: `generator._draw_samples(..., details=True)`, the images
`pathfinder.generate()` returns for the same seed.

For each difficulty it prints the mean per image of each statistic, for
the official generator and ours, their relative difference and its
standard error:

- lit pixels: pixels > 0;
- mean intensity: the mean of the uint8 image;
- components: 8-connected components of the lit pixels;
- marker distance 1, marker distance 0: between the two marker centres,
  over the images of label 1 (both on one contour), of label 0;
- distractors: distractor contours drawn;

and exits with status 1 if any differs by more than `--tolerance`
(relative, default 5%) plus `--z` (default 2) standard errors of the
difference; `--z 0` gates on the tolerance alone. The standard error is
what chance alone leaves: with 400 images, about 1% for the lit pixels and
the mean intensity, 3% for the components and the marker distances, 3-6%
for the distractors (about one drawn per image at contour length 14), so
the tolerance alone is a fair gate only for a few thousand images.

Measured against ab9c130, 3000 images per difficulty at 32 pixels
(`--seed 3`), official / ours, means per image:

    difficulty     lit pixels     intensity    components  distractors
    easy          233.5 / 233.9  12.99/13.03   7.81/7.88    3.29/3.31
    intermediate  273.6 / 273.3  15.47/15.45   7.56/7.56    1.79/1.78
    hard          349.1 / 348.3  20.11/20.11   8.38/8.39    1.12/1.13

the marker distances within 2.2%, and at 128 pixels (500 easy images,
40 hard) every statistic within 3% (easy) and 1.6% (hard; components and
marker distances too noisy there). Before ours followed the official
seed search (`paddles._no_tail_anywhere`) it drew every distractor at 32
pixels: 355 lit pixels and 10 distractors at contour length 6.
"""

import argparse
import ast
import contextlib
import importlib
import math
import os
import pathlib
import random
import sys
import tempfile
import time
import types
import warnings

import numpy as np

# Runs from a checkout without installing the package.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from lra_keras.data import pathfinder  # noqa: E402
from lra_keras.data.pathfinder import generator  # noqa: E402

STATISTICS = (
    "lit pixels",
    "mean intensity",
    "components",
    "marker distance 1",
    "marker distance 0",
    "distractors",
)

# === The official generator, with what its checkout needs put back ===


def _bytescale(data):
    # scipy 1.1 `scipy.misc.bytescale` with its defaults (cmin, cmax = the
    # array's minimum and maximum; high 255, low 0).
    data = np.asarray(data)
    if data.dtype == np.uint8:
        return data
    low, high = data.min(), data.max()
    span = high - low
    if span == 0:
        span = 1
    scaled = (data - low) * (255.0 / span)
    return (scaled.clip(0, 255) + 0.5).astype(np.uint8)


def _toimage(array):
    from PIL import Image

    array = np.asarray(array)
    if array.ndim != 2:
        raise NotImplementedError("only 2-D arrays are used by snakes2.py")
    return Image.fromarray(_bytescale(array), mode="L")


def _imresize(arr, size, interp="bilinear", mode=None):
    if mode is not None or not isinstance(size, (tuple, list)):
        raise NotImplementedError("only imresize(arr, (h, w), interp)")
    # PIL filters as scipy 1.1 numbered them.
    resample = {"nearest": 0, "lanczos": 1, "bilinear": 2, "bicubic": 3}
    image = _toimage(arr).resize((size[1], size[0]), resample=resample[interp])
    return np.array(image)


def _imsave(name, arr, format=None):
    _toimage(arr).save(name, format)


def _cv2_shim():
    from scipy import ndimage

    def dilate(src, kernel, iterations=1, **unused):
        if unused:
            raise NotImplementedError(f"cv2.dilate options {sorted(unused)}")
        footprint = np.asarray(kernel) != 0
        out = np.asarray(src)
        for _ in range(iterations):
            out = ndimage.maximum_filter(
                out, footprint=footprint, mode="constant", cval=-np.inf
            )
        return out

    module = types.ModuleType("cv2")
    module.dilate = dilate
    module.useOptimized = lambda: True
    return module


def _install_shims():
    """Puts back what the checkout uses and current packages dropped."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    import scipy

    if not hasattr(np, "float"):
        np.float = float
    if not hasattr(np, "round_"):
        np.round_ = np.round
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import scipy.misc as misc
    except ImportError:
        misc = types.ModuleType("scipy.misc")
        sys.modules["scipy.misc"] = misc
    scipy.misc = misc
    misc.imresize = _imresize
    misc.imsave = _imsave
    try:
        import cv2  # noqa: F401

        return "OpenCV"
    except ImportError:
        sys.modules["cv2"] = _cv2_shim()
        return "cv2 shim (scipy.ndimage.maximum_filter)"


def _official_args_class(checkout):
    """`Args` of `snakes2_wrapper.py`, without running the script."""
    source = (checkout / "snakes2_wrapper.py").read_text()
    tree = ast.parse(source)
    node = next(
        n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Args"
    )
    namespace = {}
    code = compile(ast.Module([node], []), "snakes2_wrapper.py", "exec")
    exec(code, namespace)
    return namespace["Args"]


def _official_args(Args, resolution, difficulty, num_samples, folder):
    params = pathfinder.GENERATOR_PARAMS[resolution]
    contour_length = pathfinder.CONTOUR_LENGTHS[difficulty]
    args = Args()
    # snakes2_wrapper.py lines 64-78 (those LRA's block does not set).
    args.antialias_scale = 2
    args.use_single_paddles = False
    args.segmentation_task = False
    args.segmentation_task_double_circle = False
    # LRA's parameter block (lra_benchmarks/data/pathfinder.py).
    args.paddle_margin_list = list(params["paddle_margins"])
    args.window_size = [resolution, resolution]
    args.padding = params["padding"]
    args.paddle_length = params["paddle_length"]
    args.marker_radius = params["marker_radius"]
    args.contour_length = contour_length
    args.paddle_thickness = params["paddle_thickness"]
    args.seed_distance = params["seed_distance"]
    args.continuity = params["continuity"]
    args.distractor_length = contour_length // 3
    args.num_distractor_snakes = (
        params["distractor_paddles"] // args.distractor_length
    )
    args.snake_contrast_list = [params["snake_contrast"]]
    args.paddle_contrast_list = [params["paddle_contrast"]]
    # One batch of images in `folder`.
    args.n_images = num_samples
    args.batch_id = 0
    args.contour_path = str(folder)
    args.pause_display = False
    args.save_images = True
    args.save_metadata = True
    return args


@contextlib.contextmanager
def _patched(module, name, replacement):
    original = getattr(module, name)
    setattr(module, name, replacement(original))
    try:
        yield
    finally:
        setattr(module, name, original)


def _official_module(checkout, name):
    """Imports `name` from the checkout (and nothing of the same name)."""
    module = sys.modules.get(name)
    if module is not None:
        if pathlib.Path(module.__file__).resolve().parent != checkout:
            raise RuntimeError(f"another module {name!r} is already imported")
        return module
    sys.path.insert(0, str(checkout))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(checkout))


def official_samples(checkout, resolution, difficulty, num_samples, seed):
    """Images of the official generator; (uint8 images, info per image)."""
    from PIL import Image

    checkout = pathlib.Path(checkout).resolve()
    _install_shims()
    snakes = _official_module(checkout, "snakes")
    snakes2 = _official_module(checkout, "snakes2")
    Args = _official_args_class(checkout)
    distractors, markers = [], []

    def count_distractors(original):
        def make_many_snakes(*a, **k):
            drawn = [0]

            def make_snake(*b, **kb):
                result = original_make_snake(*b, **kb)
                drawn[0] += bool(result[-1])
                return result

            original_make_snake = snakes.make_snake
            snakes.make_snake = make_snake
            try:
                return original(*a, **k)
            finally:
                snakes.make_snake = original_make_snake
                distractors.append(drawn[0])

        return make_many_snakes

    def record_markers(original):
        def draw_circle(window_size, coordinate, radius, aa_scale):
            markers.append(tuple(int(v) for v in coordinate))
            return original(window_size, coordinate, radius, aa_scale)

        return draw_circle

    with tempfile.TemporaryDirectory(prefix="pathfinder_official_") as folder:
        args = _official_args(Args, resolution, difficulty, num_samples, folder)
        np.random.seed(seed)
        random.seed(seed)
        # from_wrapper prints a line per image.
        with (
            open(os.devnull, "w") as quiet,
            _patched(snakes, "make_many_snakes", count_distractors),
            _patched(snakes2, "draw_circle", record_markers),
            contextlib.redirect_stdout(quiet),
        ):
            snakes2.from_wrapper(args)
        paths = pathlib.Path(folder, "imgs", "0")
        images = np.stack(
            [
                np.asarray(Image.open(paths / f"sample_{i}.png"))
                for i in range(num_samples)
            ]
        )
        metadata = np.load(pathlib.Path(folder, "metadata", "0.npy"))
    if images.dtype != np.uint8 or images.shape[1:] != (resolution,) * 2:
        raise RuntimeError(f"unexpected official images {images.shape}")
    info = [
        dict(
            label=int(metadata[i][3]),
            markers=markers[2 * i : 2 * i + 2],
            distractors=distractors[i],
        )
        for i in range(num_samples)
    ]
    return images, info


def our_samples(resolution, difficulty, num_samples, seed):
    """Our images, as `generate()` draws them; (uint8 images, info)."""
    length = pathfinder.CONTOUR_LENGTHS[difficulty]
    labels, drawn = generator._draw_range(
        seed, resolution, length, 0, num_samples, details=True
    )
    images = np.stack([image for image, _, _ in drawn])
    info = [
        dict(
            label=int(label),
            markers=[details["origin"], details["terminal"]],
            distractors=details["distractors"],
        )
        for label, (_, _, details) in zip(labels, drawn)
    ]
    return images, info


# === Statistics ===


def statistics(images, info):
    """Per image: a dict of arrays, one per `STATISTICS` name."""
    from scipy import ndimage

    eight = np.ones((3, 3), bool)
    lit = images > 0
    components = [ndimage.label(image, structure=eight)[1] for image in lit]
    distance = np.array([math.dist(*entry["markers"]) for entry in info])
    label = np.array([entry["label"] for entry in info])
    return {
        "lit pixels": lit.reshape(len(images), -1).sum(axis=1).astype(float),
        "mean intensity": images.reshape(len(images), -1).mean(axis=1),
        "components": np.array(components, float),
        # Per label (the official labels are Bernoulli(0.5), ours balanced).
        "marker distance 1": np.where(label == 1, distance, np.nan),
        "marker distance 0": np.where(label == 0, distance, np.nan),
        "distractors": np.array([e["distractors"] for e in info], float),
    }


def compare(official, ours):
    """Rows (name, official mean, our mean, relative difference, its s.e.)."""
    rows = []
    for name in STATISTICS:
        # NaN: not defined for that image (the other label).
        a, b = official[name], ours[name]
        a, b = a[~np.isnan(a)], b[~np.isnan(b)]
        mean_a, mean_b = float(np.mean(a)), float(np.mean(b))
        se = math.sqrt(np.var(a) / len(a) + np.var(b) / len(b))
        if mean_a == 0:
            rel = 0.0 if mean_b == 0 else math.inf
            rel_se = math.inf
        else:
            rel = (mean_b - mean_a) / abs(mean_a)
            rel_se = se / abs(mean_a)
        rows.append((name, mean_a, mean_b, rel, rel_se))
    return rows


def beyond(row, tolerance, z):
    """Whether a row's difference exceeds the tolerance by z standard errors."""
    return not abs(row[3]) <= tolerance + z * row[4]


def table(rows, tolerance, z):
    lines = [
        f"  {'statistic':<17} {'official':>10} {'ours':>10} "
        f"{'rel. diff':>10} {'s.e.':>7}"
    ]
    for row in rows:
        name, a, b, rel, rel_se = row
        flag = "  <-- beyond tolerance" if beyond(row, tolerance, z) else ""
        lines.append(
            f"  {name:<17} {a:10.2f} {b:10.2f} {rel:+10.1%} {rel_se:7.1%}"
            + flag
        )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--official", required=True, type=pathlib.Path)
    parser.add_argument(
        "--resolution", type=int, default=32, choices=pathfinder.RESOLUTIONS
    )
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument(
        "--difficulty",
        default="all",
        choices=["all", *pathfinder.CONTOUR_LENGTHS],
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tolerance", type=float, default=0.05)
    parser.add_argument("--z", type=float, default=2.0)
    parser.add_argument(
        "--save",
        type=pathlib.Path,
        default=None,
        help="write the images and statistics to SAVE-<difficulty>.npz",
    )
    args = parser.parse_args(argv)
    if not (args.official / "snakes2.py").exists():
        parser.error(f"no snakes2.py in --official {args.official}")
    print(f"official generator: {args.official} ({_install_shims()})")
    difficulties = (
        list(pathfinder.CONTOUR_LENGTHS)
        if args.difficulty == "all"
        else [args.difficulty]
    )
    failed = []
    for difficulty in difficulties:
        start = time.perf_counter()
        official_images, official_info = official_samples(
            args.official, args.resolution, difficulty, args.samples, args.seed
        )
        middle = time.perf_counter()
        our_images, our_info = our_samples(
            args.resolution, difficulty, args.samples, args.seed
        )
        end = time.perf_counter()
        official = statistics(official_images, official_info)
        ours = statistics(our_images, our_info)
        if args.save is not None:
            np.savez_compressed(
                f"{args.save}-{difficulty}.npz",
                official_images=official_images,
                our_images=our_images,
                **{f"official {k}": v for k, v in official.items()},
                **{f"ours {k}": v for k, v in ours.items()},
            )
        rows = compare(official, ours)
        print(
            f"Pathfinder-{args.resolution} {difficulty} "
            f"(contour length {pathfinder.CONTOUR_LENGTHS[difficulty]}), "
            f"{args.samples} images each; "
            f"official {(middle - start) / args.samples * 1e3:.1f} ms/img, "
            f"ours {(end - middle) / args.samples * 1e3:.1f} ms/img"
        )
        print(table(rows, args.tolerance, args.z))
        failed += [
            (difficulty, row[0])
            for row in rows
            if beyond(row, args.tolerance, args.z)
        ]
    limit = f"{args.tolerance:.0%} + {args.z:g} s.e."
    if failed:
        print(f"FAILED: beyond {limit}: {failed}")
        return 1
    print(f"OK: every statistic within {limit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
