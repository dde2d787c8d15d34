"""Reads a TensorFlow Datasets split only when it is already prepared locally.

The text and image tasks accept a TFDS copy of IMDB or CIFAR-10 as one of
their sources. This module never downloads: it asks the builder whether the
data is prepared and, if not, reports why so the caller can raise an error
that says what to download. `tensorflow_datasets` (and, through it,
TensorFlow) is imported only inside these functions.

References:
- TFDS `DatasetBuilder.is_prepared()` and `as_dataset(batch_size=-1)`,
  https://www.tensorflow.org/datasets/api_docs/python/tfds/core/DatasetBuilder

Original files read: `tensorflow_datasets/core/dataset_builder.py`
(`is_prepared`, `data_dir` resolution) of tensorflow/datasets 4.9.
"""

import pathlib


def default_data_dir():
    """Returns TFDS's default data directory (`$TFDS_DATA_DIR` or ~)."""
    try:
        from tensorflow_datasets.core import constants
    except ImportError:
        return None
    return constants.DATA_DIR


def prepared_split(name, split, data_dir=None):
    """Returns one split of a locally prepared TFDS dataset as numpy arrays.

    Args:
        name: str. TFDS dataset name, e.g. `"imdb_reviews"`.
        split: str. TFDS split name, e.g. `"train"`.
        data_dir: str, path-like or None. TFDS data directory; `None` uses
            TFDS's default (`$TFDS_DATA_DIR` or `~/tensorflow_datasets`).

    Returns:
        A tuple `(arrays, reason)`: `arrays` is a dict of numpy arrays (one
        per feature, the whole split) and `reason` None, or `arrays` is
        None and `reason` a str saying why the data is not available.
    """
    try:
        import tensorflow_datasets as tfds
    except ImportError:
        return None, "tensorflow_datasets is not installed"
    if data_dir is not None:
        data_dir = str(pathlib.Path(data_dir).expanduser())
    try:
        builder = tfds.builder(name, data_dir=data_dir)
    except Exception as error:  # TFDS raises several types here
        return None, f"tfds.builder({name!r}) failed: {error}"
    if not builder.is_prepared():
        return None, f"TFDS {name!r} is not prepared in {builder.data_dir}"
    # One batch of the whole split; `shuffle_files=False` keeps TFDS's
    # stored order, so `train[:45000]` here is LRA's `train[:90%]`.
    dataset = builder.as_dataset(
        split=split, batch_size=-1, shuffle_files=False
    )
    return tfds.as_numpy(dataset), None
