"""Image (CIFAR-10): grayscale pixels as a sequence of 1024 tokens.

Each 32x32 colour image is converted to 8-bit grayscale exactly as LRA
does and flattened row-major; each pixel value 0..255 is a token. There is
no padding; `MASK_ID = 256` is reserved for the masked-token objectives.

Grayscale. LRA calls `tf.image.rgb_to_grayscale` on the uint8 image:
`convert_image_dtype` to float32 (x * (1/255)), a dot product with the
weights [0.2989, 0.5870, 0.1140], then `convert_image_dtype` back to uint8
(x * 255.5, truncated). That is `floor(255.5 * (0.2989 R + 0.5870 G +
0.1140 B) / 255)`, evaluated in float32. `to_grayscale` performs the same
float32 operations in the same order; over all 2^24 colours it matches
TensorFlow 2.21 on every one, while the formula evaluated exactly (or in
float64) gives one less on 237 colours (e.g. (0, 122, 186): exact 92.99998,
float32 93), so the float32 order is what reproduces LRA.

Splits. LRA reads TFDS `cifar10` with `train[:90%]` / `train[90%:]` /
`test`: 45,000 / 5,000 / 10,000 images. `load_image` takes the last
`val_size` training images as val (by default 10%, LRA's `train[90%:]`,
i.e. 5,000) and the others as train.
With TFDS (stored order) this is LRA's split exactly; with the original
batch files the order is data_batch_1..5, so val is data_batch_5 -- the
same sizes, but not the same 5,000 images as LRA's TFDS split.

Sources: the original `cifar-10-batches-bin/` (binary) or
`cifar-10-batches-py/` (pickled) folders, or TFDS `cifar10` when prepared
locally. The pickled batches come from the internet, so they are read with
a restricted unpickler that can build numpy arrays and nothing else.

References:
- Tay et al., "Long Range Arena: A Benchmark for Efficient Transformers",
  ICLR 2021, https://arxiv.org/abs/2011.04006
- Krizhevsky, "Learning Multiple Layers of Features from Tiny Images",
  2009, https://www.cs.toronto.edu/~kriz/cifar.html (file formats)

Original files read: `lra_benchmarks/image/input_pipeline.py`
(`get_cifar10_datasets`) of google-research/long-range-arena;
`tensorflow/python/ops/image_ops_impl.py` (`rgb_to_grayscale`,
`convert_image_dtype`) of tensorflow/tensorflow.
"""

import pathlib
import pickle

import numpy as np

from lra_keras.data import _tfds
from lra_keras.data._checks import SPLITS  # noqa: F401 (public)
from lra_keras.data._checks import check_split as _check_split
from lra_keras.data._pickles import NumpyUnpickler

MASK_ID = 256
VOCABULARY_SIZE = 257
NUM_CLASSES = 10
SEQUENCE_LENGTH = 1024
IMAGE_SIZE = 32  # CIFAR-10 images are 32 x 32 x 3


_SIDE = 32
_RECORD_BYTES = 1 + 3 * _SIDE * _SIDE  # label byte + R, G, B planes
_BINARY_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
_PYTHON_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
_TRAIN_BATCHES = tuple(f"data_batch_{i}" for i in range(1, 6))
_TEST_BATCH = "test_batch"

# tf.image.rgb_to_grayscale's weights and convert_image_dtype's scales,
# all as float32 as TensorFlow computes them.
_GRAY_WEIGHTS = np.array([0.2989, 0.5870, 0.1140], np.float32)
_TO_FLOAT = np.float32(1.0 / 255)
_TO_UINT8 = np.float32(255.5)


def to_grayscale(rgb):
    """Converts uint8 RGB images to uint8 grayscale as LRA does.

    Computes `floor(255.5 * (0.2989 R + 0.5870 G + 0.1140 B) / 255)` with
    the float32 operations of `tf.image.rgb_to_grayscale` on uint8 input,
    so the result equals LRA's bit for bit (see the module docstring).

    Args:
        rgb: uint8 array of shape `(..., 3)`, e.g. `(N, 32, 32, 3)`.

    Returns:
        uint8 array of shape `rgb.shape[:-1]`.

    Example:

    >>> to_grayscale(np.array([[255, 0, 0], [0, 122, 186]], np.uint8))
    array([76, 93], dtype=uint8)
    """
    rgb = np.asarray(rgb)
    if rgb.dtype != np.uint8 or rgb.ndim < 1 or rgb.shape[-1] != 3:
        raise ValueError(
            "Expected a uint8 array with 3 channels in the last axis. "
            f"Received: dtype={rgb.dtype}, shape={rgb.shape}"
        )
    x = rgb.astype(np.float32) * _TO_FLOAT
    # Summed left to right, without fused multiply-adds, as TF's CPU
    # tensordot does; another order changes some boundary values.
    gray = x[..., 0] * _GRAY_WEIGHTS[0]
    gray += x[..., 1] * _GRAY_WEIGHTS[1]
    gray += x[..., 2] * _GRAY_WEIGHTS[2]
    # The float-to-int cast truncates; values are in [0, 255.48].
    return (gray * _TO_UINT8).astype(np.uint8)


# === Original batch files ===


def read_binary_batch(path):
    """Reads one batch file of the CIFAR-10 binary version.

    Each record is 3073 bytes: the label (0-9), then 1024 red, 1024 green
    and 1024 blue bytes, each plane 32x32 row-major.

    Args:
        path: str or path-like. E.g. `cifar-10-batches-bin/data_batch_1.bin`.

    Returns:
        A tuple `(rgb, labels)`: uint8 `(N, 32, 32, 3)` and int32 `(N,)`.
    """
    path = pathlib.Path(path)
    raw = np.fromfile(path, np.uint8)
    if raw.size == 0 or raw.size % _RECORD_BYTES:
        raise ValueError(
            f"CIFAR-10 binary batch {path} has {raw.size} bytes; expected a "
            f"positive multiple of {_RECORD_BYTES} (1 label byte + 3072 "
            "pixel bytes per image)."
        )
    records = raw.reshape(-1, _RECORD_BYTES)
    return _planes_to_images(path, records[:, 1:]), _labels(path, records[:, 0])


class _BatchUnpickler(NumpyUnpickler):
    """A CIFAR-10 python batch holds numpy arrays, lists and bytes only; a
    hostile file fails before anything runs (see `_pickles`)."""

    refusal = (
        "a CIFAR-10 batch holds only numpy arrays, lists and bytes, so this "
        "file is not a CIFAR-10 python batch (or was tampered with)."
    )


def read_python_batch(path):
    """Reads one batch file of the CIFAR-10 python version, safely.

    The file is a pickled dict (written by Python 2) with `b"data"`, uint8
    `(N, 3072)` in the same R, G, B plane layout as the binary version, and
    `b"labels"`, a list of N ints. It is read with `encoding="bytes"` (as
    the CIFAR page says) by an unpickler that only builds numpy arrays.

    Args:
        path: str or path-like. E.g. `cifar-10-batches-py/data_batch_1`.

    Returns:
        A tuple `(rgb, labels)`: uint8 `(N, 32, 32, 3)` and int32 `(N,)`.

    Raises:
        pickle.UnpicklingError: if the file names any global other than
            numpy's array reconstructors, or holds an array or dtype state
            that numpy would crash on (see `_pickles`).
        ValueError: if the file is not one whole pickle, or the dict lacks
            the keys or has wrong shapes.
    """
    path = pathlib.Path(path)
    with open(path, "rb") as f:
        try:
            batch = _BatchUnpickler(f, encoding="bytes").load()
        except pickle.UnpicklingError as error:
            raise pickle.UnpicklingError(
                f"CIFAR-10 python batch {path}: {error}"
            ) from error
        except Exception as error:  # any parse failure: name the file
            raise ValueError(
                f"CIFAR-10 python batch {path} is not a readable pickle "
                f"({type(error).__name__}: {error})"
            ) from error
        if f.read(1):
            # The unpickler stops at the pickle's end and ignores the rest.
            raise ValueError(
                f"CIFAR-10 python batch {path} has bytes after its pickle "
                f"(appended or joined files). Re-extract {_PYTHON_URL}."
            )
    if not isinstance(batch, dict) or not {b"data", b"labels"} <= set(batch):
        raise ValueError(
            f"CIFAR-10 python batch {path} must be a dict with the keys "
            f"b'data' and b'labels'. Received: {type(batch).__name__}"
            + (f" with keys {sorted(batch)}" if isinstance(batch, dict) else "")
        )
    pixels = batch[b"data"]
    labels = np.asarray(batch[b"labels"])
    if (
        not isinstance(pixels, np.ndarray)
        or pixels.dtype != np.uint8
        or pixels.ndim != 2
        or pixels.shape[1] != 3 * _SIDE * _SIDE
        or labels.shape != (pixels.shape[0],)
    ):
        raise ValueError(
            f"CIFAR-10 python batch {path}: expected b'data' uint8 (N, 3072) "
            "and N b'labels'. Received: data "
            f"{getattr(pixels, 'dtype', type(pixels).__name__)} "
            f"{getattr(pixels, 'shape', '')}, {labels.shape[0]} labels"
        )
    return _planes_to_images(path, pixels), _labels(path, labels)


def _planes_to_images(path, pixels):
    # (N, 3072) as R, G, B planes of 32x32 -> (N, 32, 32, 3), channels last.
    images = pixels.reshape(-1, 3, _SIDE, _SIDE).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(images)


def _labels(path, labels):
    labels = np.asarray(labels)
    if labels.size and (
        not np.issubdtype(labels.dtype, np.integer)
        or labels.min() < 0
        or labels.max() >= NUM_CLASSES
    ):
        raise ValueError(
            f"CIFAR-10 batch {path}: labels must be ints in [0, 9]. "
            f"Received values: {sorted(set(labels.tolist()))[:10]}"
        )
    return labels.astype(np.int32)


def _find_batches(data_dir):
    # Returns (reader, {"train": [paths], "test": [paths]}) or None.
    data_dir = pathlib.Path(data_dir).expanduser()
    layouts = (
        ("cifar-10-batches-bin", ".bin", read_binary_batch),
        ("cifar-10-batches-py", "", read_python_batch),
    )
    for folder, suffix, reader in layouts:
        for directory in (data_dir / folder, data_dir):
            paths = {
                "train": [directory / (n + suffix) for n in _TRAIN_BATCHES],
                "test": [directory / (_TEST_BATCH + suffix)],
            }
            found = [p for group in paths.values() for p in group]
            present = [p.is_file() for p in found]
            if all(present):
                return reader, paths
            if any(present):
                missing = [str(p) for p, ok in zip(found, present) if not ok]
                raise FileNotFoundError(
                    f"Incomplete CIFAR-10 folder {directory}: missing "
                    f"{missing}. Re-extract "
                    f"{_BINARY_URL if suffix else _PYTHON_URL}."
                )
    return None


# === Loaders ===


def load_cifar10_rgb(split, data_dir=None, val_size=None):
    """Loads a split of CIFAR-10 as colour images (before grayscale).

    For augmentations that work on the colour image; `load_image` is this
    followed by `to_grayscale` and flattening.

    Sources, in order: `data_dir` containing `cifar-10-batches-bin/`
    (or being it), `cifar-10-batches-py/` (or being it), or a TFDS data
    directory with a prepared `cifar10/`; `data_dir=None` reads TFDS
    `cifar10` from TFDS's default data directory if prepared (this never
    downloads).

    Args:
        split: str. One of `"train"`, `"val"`, `"test"`.
        data_dir: str, path-like or None. See above. Defaults to None.
        val_size: int or None. Number of images at the end of the training
            set used as val; train is the rest. None: 10% of the training
            set (LRA's `train[90%:]`), 5000 for CIFAR-10. Defaults to None.

    Returns:
        A tuple `(rgb, y)`: uint8 `(N, 32, 32, 3)` and int32 `(N,)`.

    Raises:
        FileNotFoundError: if no source is found; the message says what to
            download and where to put it.
    """
    _check_split(split)
    if val_size is not None and (
        isinstance(val_size, bool)
        or not isinstance(val_size, (int, np.integer))
        or val_size < 0
    ):
        raise ValueError(
            f"`val_size` must be an int >= 0. Received: val_size={val_size!r}"
        )
    if split == "val" and val_size == 0:
        raise ValueError("val_size=0 leaves no validation split.")
    source_split = "test" if split == "test" else "train"
    images, labels = _read_source(source_split, data_dir)
    if source_split == "test":
        return images, labels
    if val_size is None:
        val_size = len(labels) - len(labels) * 9 // 10  # train[90%:]
    if val_size >= len(labels):
        raise ValueError(
            f"val_size={val_size} must be smaller than the {len(labels)} "
            "training images."
        )
    cut = len(labels) - val_size
    if split == "train":
        return images[:cut], labels[:cut]
    return images[cut:], labels[cut:]


def load_image(split, data_dir=None, max_length=None, val_size=None):
    """Loads a split of the LRA Image task (grayscale CIFAR-10).

    Args:
        split: str. One of `"train"`, `"val"`, `"test"`.
        data_dir: str, path-like or None. See `load_cifar10_rgb`. Defaults
            to None.
        max_length: None or 1024. The sequence length is fixed by the image
            size; the argument exists for the common loader signature.
            Defaults to None.
        val_size: int or None. Images at the end of the training set used
            as val; None: 10%, LRA's 45k / 5k / 10k. Defaults to None.

    Returns:
        A tuple `(x, y)`: `x` uint8 `(N, 1024)`, grayscale pixels row-major,
        and `y` int32 `(N,)` in [0, 9].
    """
    if max_length is not None and max_length != SEQUENCE_LENGTH:
        raise ValueError(
            f"The Image task has sequences of {SEQUENCE_LENGTH} pixels; "
            f"max_length must be None or {SEQUENCE_LENGTH}. Received: "
            f"max_length={max_length!r}"
        )
    rgb, labels = load_cifar10_rgb(split, data_dir=data_dir, val_size=val_size)
    return to_grayscale(rgb).reshape(len(labels), SEQUENCE_LENGTH), labels


def _read_source(split, data_dir):
    reason = None
    if data_dir is not None:
        found = _find_batches(data_dir)
        if found is not None:
            reader, paths = found
            parts = _read_batches(reader, paths)[split]
            return (
                np.concatenate([images for images, _ in parts]),
                np.concatenate([labels for _, labels in parts]),
            )
        tfds_dir = pathlib.Path(data_dir).expanduser()
        if not (tfds_dir / "cifar10").is_dir():
            raise FileNotFoundError(_missing_message(data_dir, None))
        arrays, reason = _tfds.prepared_split("cifar10", split, tfds_dir)
    else:
        arrays, reason = _tfds.prepared_split("cifar10", split)
    if arrays is None:
        raise FileNotFoundError(_missing_message(data_dir, reason))
    images = np.asarray(arrays["image"])
    if images.dtype != np.uint8 or images.shape[1:] != (_SIDE, _SIDE, 3):
        raise ValueError(
            "TFDS cifar10 images must be uint8 (N, 32, 32, 3). Received: "
            f"{images.dtype} {images.shape}"
        )
    return images, _labels(f"TFDS cifar10 {split}", arrays["label"])


def _read_batches(reader, paths):
    # Every batch of the release holds 10,000 images. A file cut at a
    # record boundary still reads, so the six batches (read all, whichever
    # split is asked for) must hold as many images each.
    parts = {split: [reader(path) for path in group]
             for split, group in paths.items()}
    sizes = {path: len(labels)
             for split, group in paths.items()
             for path, (_, labels) in zip(group, parts[split])}
    counts = sorted(set(sizes.values()))
    if len(counts) > 1:
        common = max(counts, key=list(sizes.values()).count)
        odd = {str(p): n for p, n in sizes.items() if n != common}
        raise ValueError(
            f"CIFAR-10 batches of unequal size: {odd} where the other "
            f"batches hold {common} images (every batch of the release "
            "holds 10,000). A batch file was cut or replaced; extract it "
            "again."
        )
    return parts


def _missing_message(data_dir, reason):
    if data_dir is None:
        where = (
            f"No data_dir given and TFDS cifar10 is not available ({reason})."
        )
    else:
        where = (
            "No cifar-10-batches-bin/ or cifar-10-batches-py/ folder and no "
            f"TFDS cifar10/ found in {data_dir}"
            + (f" ({reason})." if reason else ".")
        )
    return (
        f"CIFAR-10 (LRA Image) not found. {where} Download {_BINARY_URL} "
        f"(or the python version {_PYTHON_URL}), extract it (tar xzf "
        "cifar-10-binary.tar.gz) and pass the folder that contains "
        "cifar-10-batches-bin/ (data_batch_1.bin ... data_batch_5.bin, "
        "test_batch.bin) as --data-dir DIR. Alternatively prepare TFDS "
        "cifar10 (tfds.builder('cifar10').download_and_prepare()) on a "
        "machine with internet and pass its TFDS data directory as "
        "--data-dir, or omit --data-dir if it is in TFDS's default "
        f"directory ({_tfds.default_data_dir()})."
    )
