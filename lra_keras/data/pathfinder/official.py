"""Pathfinder files in the official layout: writer, reader, decode cache.

`write_official()` writes images and metadata in the official layout and
`read_official()` reads both our files and the LRA release, so one reader
serves generated and downloaded data.

The layout, as the LRA input pipeline reads it: metadata files
`<difficulty>/metadata/<k>.npy`, read as text lines of space-separated
fields (`[0]` folder, `[1]` file name, `[3]` label; binary `.npy` files are
accepted too), in numeric order of `k`, and the images they list; images of
0 bytes are dropped (the LRA pipeline filters
`tf.strings.length(image) > 0`). The decoded arrays of a directory are
cached (`cache_dir()/pathfinder_decoded/`, keyed by the directory and the
sizes and modification times of its metadata files and of every image they
list), so `read_official()` and the loader decode each directory once.

Original files read: `lra_benchmarks/data/pathfinder.py` (the metadata
parsing) and `lra_benchmarks/image/input_pipeline.py`
(`get_pathfinder_base_datasets`: the empty-image filter) of
google-research/long-range-arena; `src/dataloaders/lra.py` of
state-spaces/s4 (metadata files sorted by number, one known empty image
`pathfinder32/curv_baseline/imgs/0/sample_172.png`); `snakes2.py` of
drewlinsley/pathfinder (`accumulate_meta`: the metadata fields).
"""

import collections
import contextlib
import hashlib
import io
import math
import pathlib
import warnings

import numpy as np

from lra_keras._atomic import atomic_open
from lra_keras.data._checks import check_int as _check_int
from lra_keras.data._pickles import NumpyUnpickler
from lra_keras.data.pathfinder._common import CONTOUR_LENGTHS
from lra_keras.data.pathfinder._common import DIFFICULTIES
from lra_keras.data.pathfinder._common import GENERATOR_PARAMS
from lra_keras.data.pathfinder._common import SAMPLES_PER_BATCH
from lra_keras.data.pathfinder._common import _check_difficulty
from lra_keras.data.pathfinder._common import _check_resolution
from lra_keras.data.pathfinder._common import _progress_bar
from lra_keras.data.pathfinder.snakes import _config


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


class _MetadataUnpickler(NumpyUnpickler):
    """`np.save` of the official metadata (a list of mixed strings and
    numbers) can give a pickled object array; this reads it without running
    what the file names (see `_pickles`)."""

    refusal = (
        "only numpy arrays of strings and numbers are accepted in a "
        "metadata file."
    )


def _npy_rows(path, payload):
    """Rows of string fields of a binary `.npy` metadata file."""
    try:
        array = _parse_npy(path, payload)
        if array.dtype.kind == "U" and array.size:
            # numpy turns a code point above U+10FFFF into a broken str
            # that fails later, far from here (SystemError).
            codes = np.ascontiguousarray(array).view(
                np.dtype("u4").newbyteorder(array.dtype.byteorder)
            )
            if codes.max() > 0x10FFFF:
                raise ValueError("its strings are not Unicode text")
        if array.ndim == 1:
            return [str(line).split() for line in array.tolist()]
        if array.ndim == 2:
            return [[str(field) for field in row] for row in array.tolist()]
        raise ValueError(
            f"Metadata file {path}: expected a 1-D or 2-D array. "
            f"Received: shape={array.shape}"
        )
    except Exception as error:  # any parse failure: name the file
        if str(path) in str(error):
            raise
        raise ValueError(
            f"Unreadable metadata file {path}: {error}"
        ) from error


def _parse_npy(path, payload):
    stream = io.BytesIO(payload)
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
    elif version in ((2, 0), (3, 0)):  # 3.0: 2.0 with a UTF-8 header
        shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
    else:
        raise ValueError(
            f"Metadata file {path}: unsupported .npy version {version}."
        )
    if not dtype.hasobject:
        # np.load ignores bytes after the data: a file cut or appended to
        # must not read as a shorter or longer array.
        size = stream.tell() + math.prod(shape) * dtype.itemsize
        if len(payload) != size:
            raise ValueError(
                f"Metadata file {path} holds {len(payload)} bytes; its .npy "
                f"header ({shape}, {dtype}) needs {size}: the file was cut "
                "or has bytes appended."
            )
        return np.load(io.BytesIO(payload), allow_pickle=False)
    # An object array: the header, then a pickle of the array.
    array = _MetadataUnpickler(stream).load()
    if not isinstance(array, np.ndarray) or array.shape != shape:
        raise ValueError(f"Metadata file {path} does not hold an array.")
    if stream.read(1):
        raise ValueError(
            f"Metadata file {path} has bytes after its pickled array (the "
            "file was appended to)."
        )
    return array


def _read_metadata(path):
    """Rows of string fields of one metadata file, text or binary `.npy`."""
    payload = pathlib.Path(path).read_bytes()
    if payload.startswith(b"\x93NUMPY"):
        rows = _npy_rows(path, payload)
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
        if len(row) != len(rows[0]):
            # A line break lost or added (the generator writes the same
            # fields on every line): two images read as one, or one as two.
            raise ValueError(
                f"Metadata file {path}, row {n}: {len(row)} fields where "
                f"row 0 has {len(rows[0])}. Received: {' '.join(row)!r}"
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


# A PNG file starts with the signature and ends with the IEND chunk, whose
# 12 bytes never vary (length 0, type, CRC).
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_END = b"\x00\x00\x00\x00IEND\xaeB`\x82"


@contextlib.contextmanager
def _listed_image(directory, row, metadata):
    """The path of a metadata row's image; errors name it and the metadata
    file that lists it (a damaged path field reads as another path)."""
    path = directory / row[0] / row[1]
    try:
        yield path
    except FileNotFoundError:
        raise FileNotFoundError(
            f"Image {path} listed in the metadata file {metadata} is "
            "missing."
        ) from None
    except (OSError, ValueError) as error:  # a directory, a NUL byte, ...
        raise ValueError(
            f"Image {path} listed in the metadata file {metadata} cannot "
            f"be read ({error})."
        ) from error


def _fingerprint(directory, difficulty, resolution, files, rows, sources):
    # Every metadata file and every listed image by size and modification
    # time: an image rewritten in place changes the key (one stat per
    # image, seconds for Path-X, against minutes of decoding).
    entries = [str(directory.resolve()), difficulty, str(resolution)]
    for path in files:
        stat = path.stat()
        entries.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    for row, metadata in zip(rows, sources):
        with _listed_image(directory, row, metadata) as path:
            stat = path.stat()
        entries.append(f"{row[0]}/{row[1]}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(entries).encode("utf-8")).hexdigest()


def _read_cached(x_path, meta_path, resolution):
    # The decoded arrays, or None when absent or unreadable (then decoded
    # again and rewritten).
    if not (meta_path.exists() and x_path.exists()):
        return None
    try:
        with np.load(meta_path, allow_pickle=False) as meta:
            y, valid = meta["y"], meta["valid"]
        x = np.load(x_path, mmap_mode="r", allow_pickle=False)
    except Exception as error:  # a damaged cache file: decode again
        warnings.warn(
            f"Ignoring the damaged decoded-Pathfinder cache {x_path} "
            f"({type(error).__name__}: {error}); decoding the images again.",
            stacklevel=3,
        )
        return None
    if x.shape != (len(y), resolution * resolution) or valid.shape != y.shape:
        return None
    return np.asarray(x), y, valid


def _read_difficulty(root, difficulty, resolution, progress=False):
    """All samples of one difficulty: (x (N, R*R), y (N,), valid (N,)).

    `valid` is False for 0-byte images (their `x` rows are zeros). Decoded
    arrays are cached in `cache_dir()/pathfinder_decoded/`, keyed by the
    directory, the difficulty, and the sizes and modification times of its
    metadata files and of every image they list. A damaged cache file is
    decoded again; a cache directory that cannot be written (a read-only
    `LRA_KERAS_DATA`) only costs the decoding, with a warning.
    """
    import lra_keras.data as data_pkg

    directory = pathlib.Path(root) / DIFFICULTIES[difficulty]
    files = _metadata_files(directory)
    if not files:
        raise FileNotFoundError(
            f"No metadata files (metadata/<k>.npy) in {directory}."
        )
    rows, sources = [], []  # sources: the metadata file of each row
    for path in files:
        new = _read_metadata(path)
        if not new:
            raise ValueError(
                f"Metadata file {path} lists no images (an empty or cut "
                "file)."
            )
        if rows and len(new[0]) != len(rows[0]):
            raise ValueError(
                f"Metadata file {path} has rows of {len(new[0])} fields "
                f"where {sources[0]} has {len(rows[0])}: a line break was "
                "lost or added."
            )
        rows.extend(new)
        sources.extend([path] * len(new))
    key = _fingerprint(
        directory, difficulty, resolution, files, rows, sources
    )
    cache = data_pkg.cache_dir() / "pathfinder_decoded"
    x_path = cache / f"{key}.x.npy"
    meta_path = cache / f"{key}.meta.npz"
    cached = _read_cached(x_path, meta_path, resolution)
    if cached is not None:
        return cached

    from PIL import Image

    x = np.zeros((len(rows), resolution * resolution), np.uint8)
    y = np.array([int(row[3]) for row in rows], np.int32)
    valid = np.ones(len(rows), bool)
    with _progress_bar(progress, len(rows), resolution, difficulty) as bar:
        for n, (row, metadata) in enumerate(zip(rows, sources)):
            with _listed_image(directory, row, metadata) as path:
                payload = path.read_bytes()
            if not payload:
                # Empty files exist in the release; LRA filters them out.
                valid[n] = False
            else:
                if payload.startswith(_PNG_SIGNATURE) and not (
                    payload.endswith(_PNG_END)
                ):
                    # PIL decodes a PNG cut after its pixel data, or with
                    # bytes appended, without a word.
                    raise ValueError(
                        f"Image {path} does not end with the PNG end chunk "
                        "(IEND): the file was cut or has bytes appended."
                    )
                try:
                    with Image.open(io.BytesIO(payload)) as image:
                        pixels = np.asarray(image.convert("L"))
                except Exception as error:  # PIL: OSError, SyntaxError, ...
                    raise ValueError(
                        f"Image {path} is not a readable image "
                        f"({type(error).__name__}: {error})."
                    ) from error
                if pixels.shape != (resolution, resolution):
                    raise ValueError(
                        f"Image {path}: expected {resolution}x{resolution} "
                        f"pixels. Received: shape={pixels.shape}"
                    )
                x[n] = pixels.reshape(-1)
            if bar is not None:
                bar.update(1)
    try:
        with atomic_open(x_path, "wb") as f:
            np.save(f, x)
        # Written last: the cache counts only once this file exists.
        with atomic_open(meta_path, "wb") as f:
            np.savez(f, y=y, valid=valid)
    except OSError as error:
        warnings.warn(
            f"Could not write the decoded-Pathfinder cache in {cache} "
            f"({error}); the images will be decoded again next time. Set "
            "LRA_KERAS_DATA to a writable directory to keep it.",
            stacklevel=2,
        )
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
