"""Text (IMDB): byte-level sentiment classification, as in the LRA.

Each review is its UTF-8 bytes, one token per byte, truncated to
`max_length` (1K-4K in the literature) and right-padded. The label is 1 for
a positive review and 0 for a negative one.

Token ids. LRA encodes with `tfds.deprecated.text.ByteTextEncoder()`, whose
`encode` is `pad_incr(list(bytearray(s)))`: byte + 1, id 0 left for padding,
vocabulary size 257. We use the same ids (`byte + 1`, `PAD_ID = 0`) and add
`MASK_ID = 257` for the masked-token objectives, so `VOCABULARY_SIZE = 258`;
the extra id is never produced by the encoder and changes no result.

Splits. IMDB has 25k train and 25k test reviews and no validation set; LRA
evaluates on the test split during training too (`valid_raw =
data['test']`). `load_text` keeps that by default (`val_fraction=0`: val ==
test), so numbers are comparable with the papers. `val_fraction > 0`
instead holds out a seeded random subset of train as val, a held-out set
that model selection can use without touching test.

Sources: TFDS `imdb_reviews` when it is prepared locally (LRA's source), or
the extracted `aclImdb/` directory of the original archive. TFDS builds its
records from the same archive with `text = file.read().strip()`, so the
directory reader strips too and both sources give the same bytes; only the
order differs (TFDS's stored order versus a fixed shuffle of the sorted file
names, so that every prefix holds both classes).

References:
- Tay et al., "Long Range Arena: A Benchmark for Efficient Transformers",
  ICLR 2021, https://arxiv.org/abs/2011.04006
- Maas et al., "Learning Word Vectors for Sentiment Analysis", ACL 2011,
  https://ai.stanford.edu/~amaas/data/sentiment/

Original files read: `lra_benchmarks/text_classification/input_pipeline.py`
and `configs/base_tc_config.py` of google-research/long-range-arena;
`tensorflow_datasets/core/deprecated/text/text_encoder.py`
(`ByteTextEncoder`, `pad_incr`) and
`tensorflow_datasets/datasets/imdb_reviews/imdb_reviews_dataset_builder.py`
of tensorflow/datasets; the `IMDB` class of `src/dataloaders/lra.py` in
state-spaces/s4 (val_split=0 uses test as val).
"""

import hashlib
import os
import pathlib

import numpy as np

from lra_keras._atomic import atomic_open
from lra_keras.data import _tfds
from lra_keras.data._checks import SPLITS  # noqa: F401 (public)
from lra_keras.data._checks import check_int as _check_int
from lra_keras.data._checks import check_split as _check_split

PAD_ID = 0
MASK_ID = 257
VOCABULARY_SIZE = 258
NUM_CLASSES = 2
MAX_LENGTH = 4096


_LABELS = {"neg": 0, "pos": 1}  # TFDS ClassLabel(names=["neg", "pos"])
_ACLIMDB_URL = "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"
# Seed of the fixed row order of the aclImdb/ reader (see `_read_source`).
_ORDER_SEED = 20110619
# Bump when the cached arrays change meaning, so old caches are re-read.
_CACHE_VERSION = 1


def encode_bytes(texts, max_length):
    """Encodes texts as byte ids: UTF-8 byte + 1, truncated, 0-padded.

    Truncation is by bytes, as in LRA, so it may cut a multi-byte character.

    Args:
        texts: a str or bytes (one text), or a sequence of str / bytes
            (e.g. a list, or a numpy object array from TFDS). A str is
            encoded as UTF-8.
        max_length: int. Length of each row.

    Returns:
        uint16 array of shape `(N, max_length)` (`N = 1` for a single text),
        ids in `[1, 256]` followed by `PAD_ID` (0).

    Example:

    >>> encode_bytes(["hi", "é"], 4)
    array([[105, 106,   0,   0],
           [196, 170,   0,   0]], dtype=uint16)
    """
    _check_int("max_length", max_length, minimum=1)
    if isinstance(texts, (str, bytes, bytearray)):
        texts = [texts]
    pieces = []
    for i, text in enumerate(texts):
        if isinstance(text, str):
            text = text.encode("utf-8")
        elif not isinstance(text, (bytes, bytearray)):
            raise ValueError(
                f"Each text must be a str or bytes. Received: texts[{i}] of "
                f"type {type(text).__name__}"
            )
        pieces.append(bytes(text[:max_length]))
    out = np.zeros((len(pieces), max_length), np.uint16)
    fill_byte_ids(out, pieces)
    return out


def fill_byte_ids(out, pieces):
    """Writes `byte + 1` ids of `pieces` into the 0-filled rows of `out`.

    Args:
        out: uint16 array of shape `(N, L)` (may be a strided view), zeros.
        pieces: N bytes objects, each at most L long.
    """
    counts = np.fromiter(map(len, pieces), np.int64, len(pieces))
    codes = np.frombuffer(b"".join(pieces), np.uint8).astype(np.uint16)
    # Row-major boolean assignment fills each row's first counts[r] slots.
    out[np.arange(out.shape[1]) < counts[:, None]] = codes + 1


# === aclImdb directory ===


def find_aclimdb(data_dir):
    """Returns the `aclImdb` directory at or directly below `data_dir`.

    Returns None when neither `data_dir` nor `data_dir/aclImdb` holds
    `train/` and `test/` with `pos/` and `neg/` subdirectories.
    """
    data_dir = pathlib.Path(data_dir).expanduser()
    for candidate in (data_dir, data_dir / "aclImdb"):
        if all(
            (candidate / split / label).is_dir()
            for split in ("train", "test")
            for label in _LABELS
        ):
            return candidate
    return None


def read_aclimdb(directory, split, progress=False):
    """Reads one split of the original IMDB archive (`aclImdb/`).

    Reads `<split>/neg/*.txt` (label 0) then `<split>/pos/*.txt` (label 1),
    each in sorted file-name order, and strips surrounding whitespace as
    TFDS `imdb_reviews` does. `unsup/` and the `.feat` files are ignored.

    Args:
        directory: str or path-like. The `aclImdb` directory.
        split: str. `"train"` or `"test"`.
        progress: bool. Whether to show a progress bar. Defaults to False.

    Returns:
        A tuple `(texts, labels)`: a list of bytes and int32 `(N,)`.

    Raises:
        ValueError: if a review file is empty (after stripping); the
            message names the file.
    """
    if split not in ("train", "test"):
        raise ValueError(
            f"aclImdb has the splits 'train' and 'test'. Received: "
            f"split={split!r}"
        )
    files, labels = _list_aclimdb(pathlib.Path(directory), split)
    texts = []
    for path in _progress(files, progress, f"IMDB {split}"):
        review = path.read_bytes().strip()
        if not review:
            # Every review of the archive has text; an empty file is a
            # failed extraction or copy, not a review to train on.
            raise ValueError(
                f"IMDB review file {path} is empty (or only whitespace). "
                f"Re-extract {_ACLIMDB_URL}."
            )
        texts.append(review)
    return texts, np.asarray(labels, np.int32)


def _list_aclimdb(directory, split):
    files, labels = [], []
    for name, label in _LABELS.items():
        folder = directory / split / name
        found = sorted(
            entry.name
            for entry in os.scandir(folder)
            if entry.name.endswith(".txt") and entry.is_file()
        )
        if not found:
            raise FileNotFoundError(
                f"No review files (*.txt) in {folder}. Re-extract "
                f"{_ACLIMDB_URL}."
            )
        files.extend(folder / file_name for file_name in found)
        labels.extend([label] * len(found))
    return files, labels


def _read_aclimdb_cached(directory, split, progress):
    # Reading 25k small files is slow on network file systems; the decoded
    # bytes are kept as one flat array plus offsets, keyed by the source
    # path and checked against a fingerprint of names, sizes and mtimes.
    import lra_keras.data as data_pkg

    directory = directory.resolve()
    files, labels = _list_aclimdb(directory, split)
    fingerprint = hashlib.sha1()
    fingerprint.update(f"v{_CACHE_VERSION}\n".encode())
    for path in files:
        stat = path.stat()
        fingerprint.update(
            f"{path.relative_to(directory)}\0{stat.st_size}\0"
            f"{stat.st_mtime_ns}\n".encode()
        )
    fingerprint = fingerprint.hexdigest()
    key = hashlib.sha1(str(directory).encode()).hexdigest()[:16]
    cache = data_pkg.cache_dir() / "text" / f"aclimdb-{key}" / f"{split}.npz"
    if cache.is_file():
        with np.load(cache, allow_pickle=False) as stored:
            if str(stored["fingerprint"]) == fingerprint:
                flat = stored["bytes"].tobytes()
                offsets = stored["offsets"]
                texts = [
                    flat[begin:end]
                    for begin, end in zip(offsets[:-1], offsets[1:])
                ]
                return texts, stored["labels"]
    print(f"Reading {len(files)} IMDB {split} reviews from {directory}")
    texts, labels = read_aclimdb(directory, split, progress=progress)
    offsets = np.zeros(len(texts) + 1, np.int64)
    np.cumsum([len(text) for text in texts], out=offsets[1:])
    try:
        with atomic_open(cache, "wb") as f:
            np.savez(
                f,
                bytes=np.frombuffer(b"".join(texts), np.uint8),
                offsets=offsets,
                labels=labels,
                fingerprint=np.asarray(fingerprint),
            )
    except OSError as error:
        print(f"Could not cache the IMDB arrays in {cache}: {error}")
    return texts, labels


# === Loader ===


def load_text(
    split,
    data_dir=None,
    max_length=MAX_LENGTH,
    val_fraction=0.0,
    seed=0,
    progress=True,
):
    """Loads a split of the LRA Text task (byte-level IMDB).

    Sources, in order:
    - `data_dir` is (or contains) the extracted `aclImdb/` directory of
      `aclImdb_v1.tar.gz`; decoded bytes are cached under
      `lra_keras.data.cache_dir()/text/` so the 50k files are read once;
    - `data_dir` is a TFDS data directory holding a prepared
      `imdb_reviews/`;
    - `data_dir=None`: TFDS `imdb_reviews` in TFDS's default data directory,
      only if already prepared (this never downloads).

    Args:
        split: str. One of `"train"`, `"val"`, `"test"`.
        data_dir: str, path-like or None. See above. Defaults to None.
        max_length: int. Sequence length; reviews are truncated to this
            many bytes. LRA used 1000 in its configs, later work 4096.
            Defaults to 4096.
        val_fraction: float in [0, 1). 0 (the default) makes val the IMDB
            test split, as LRA does. Otherwise this fraction of train,
            drawn with `seed`, is val and the rest is train; rows keep
            their source order.
        seed: int. Seed of the validation draw (`val_fraction > 0`).
            Defaults to 0.
        progress: bool. Whether to show progress when reading files.
            Defaults to True.

    Returns:
        A tuple `(x, y)`: `x` uint16 of shape `(N, max_length)` with ids
        `byte + 1` right-padded with `PAD_ID`, and `y` int32 `(N,)` in
        {0, 1}. N is 25000 for train and test (train minus val when
        `val_fraction > 0`).

    Raises:
        FileNotFoundError: if no source is found; the message says what to
            download and where to put it.
    """
    _check_split(split)
    _check_int("max_length", max_length, minimum=1)
    _check_int("seed", seed, minimum=0)
    if (
        isinstance(val_fraction, bool)
        or not isinstance(val_fraction, (int, float, np.floating))
        or not 0.0 <= val_fraction < 1.0
    ):
        raise ValueError(
            "`val_fraction` must be a number in [0, 1). "
            f"Received: val_fraction={val_fraction!r}"
        )

    source_split = "test" if split == "test" else "train"
    if split == "val" and val_fraction == 0:
        source_split = "test"  # LRA: valid_raw = data['test']
    texts, labels = _read_source(source_split, data_dir, progress)
    if source_split == "train" and val_fraction > 0:
        train_rows, val_rows = _holdout(len(labels), val_fraction, seed)
        rows = val_rows if split == "val" else train_rows
        texts = [texts[i] for i in rows]
        labels = labels[rows]
    return encode_bytes(texts, max_length), labels.astype(np.int32)


def _holdout(num_rows, val_fraction, seed):
    num_val = int(round(val_fraction * num_rows))
    if not 0 < num_val < num_rows:
        raise ValueError(
            f"val_fraction={val_fraction} of {num_rows} training reviews "
            f"gives {num_val} validation reviews; it must leave at least "
            "one review in each of train and val."
        )
    # A random draw, not the tail: the aclImdb file order groups the
    # labels, so a tail would hold a single class.
    order = np.random.default_rng(seed).permutation(num_rows)
    return np.sort(order[num_val:]), np.sort(order[:num_val])


def _read_source(split, data_dir, progress):
    if data_dir is not None:
        directory = find_aclimdb(data_dir)
        if directory is not None:
            texts, labels = _read_aclimdb_cached(directory, split, progress)
            # The archive lists all negatives, then all positives. A fixed
            # shuffle (the same for everyone) makes any prefix, such as the
            # `train_samples` / `val_samples` of a quick run, hold both
            # classes, as TFDS's stored order does.
            order = np.random.default_rng(_ORDER_SEED).permutation(len(labels))
            return [texts[i] for i in order], labels[order]
        tfds_dir = pathlib.Path(data_dir).expanduser()
        if (tfds_dir / "imdb_reviews").is_dir():
            arrays, reason = _tfds.prepared_split(
                "imdb_reviews", split, tfds_dir
            )
            if arrays is not None:
                return _from_tfds(arrays)
            raise FileNotFoundError(_missing_message(data_dir, reason))
        raise FileNotFoundError(_missing_message(data_dir, None))
    arrays, reason = _tfds.prepared_split("imdb_reviews", split)
    if arrays is None:
        raise FileNotFoundError(_missing_message(None, reason))
    return _from_tfds(arrays)


def _from_tfds(arrays):
    labels = np.asarray(arrays["label"])
    if labels.size and not np.isin(labels, (0, 1)).all():
        raise ValueError(
            "TFDS imdb_reviews labels must be 0 or 1. Received values: "
            f"{sorted(set(labels.tolist()))[:10]}"
        )
    return list(arrays["text"]), labels.astype(np.int32)


def _missing_message(data_dir, reason):
    where = (
        "No aclImdb/ directory (with train/ and test/, each holding pos/ "
        f"and neg/) and no TFDS imdb_reviews/ found in {data_dir}."
        if data_dir is not None
        else "No data_dir given and TFDS imdb_reviews is not available"
        f" ({reason})."
    )
    if data_dir is not None and reason:
        where += f" ({reason})"
    return (
        f"IMDB (LRA Text) not found. {where} Download {_ACLIMDB_URL}, "
        "extract it (tar xzf aclImdb_v1.tar.gz) and pass the folder that "
        "contains aclImdb/ (or aclImdb/ itself) as --data-dir DIR. "
        'Alternatively prepare TFDS imdb_reviews (python -c "import '
        "tensorflow_datasets as tfds; tfds.builder('imdb_reviews')."
        'download_and_prepare()") on a machine with internet and pass its '
        "TFDS data directory as --data-dir, or omit --data-dir if it is "
        f"in TFDS's default directory ({_tfds.default_data_dir()})."
    )


# === Utilities ===


def _progress(items, progress, description):
    if not progress:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=description, unit="file")



