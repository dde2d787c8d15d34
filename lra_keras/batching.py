"""Length-bucketed batches: cut padding off before the model sees it.

LRA sequences are padded to a fixed length (2000 for ListOps), yet real
lengths vary: generated ListOps rows average ~1040 tokens, so a batch of
full-length rows spends about two thirds of its attention FLOPs (which grow
as L^2) on padding. `LengthBucketedBatches` groups rows of similar length
and trims each batch to its longest row rounded up to a multiple of
`bucket_step`. Padding is at the end of each row and a model that masks it
gives the outputs of the full-length batch (tested in
tests/test_batching.py); only the cost changes. The paper rows whose
outputs read how much padding a batch carries take their code bases'
batches instead (`bucket_step=None`: random rows, full length): LRA's
linear, Performer, Linformer and Reformer attentions
(`mask_semantics="none"`) and Sinkhorn readout (`pool_padding`), which
LRA feeds full-length batches; the S5 code's scans and BatchNorm
(`read_padding`, `batch_norm_count_padding=True`), which it feeds
full-length batches too; the S4 code's BatchNorm, which counts the
padding up to each batch's longest row (`batch_norm_count_padding=
"longest"`, exactly the S4 code's batches padded to that row).
Rounding bounds the number of distinct shapes, hence of JIT
compilations, to L / bucket_step.

Rows may also be pairs of sequences, `x` of shape (N, 2, L) (the two
documents of the retrieval task): a pair's length is that of its longer
document, and both are trimmed together. Token arrays may be stored in any
integer dtype (uint8 pixels, uint16 bytes); each batch is cast to int32.
"""

import keras
import numpy as np


def input_length(hp):
    """The positions of a run's full-length sequences: `padded_length`,
    else `sequence_length` (the length its model is built for)."""
    return hp.get("padded_length") or hp["sequence_length"]


def pad_to_length(x, length, padding_id):
    """`x` right-padded with `padding_id` to `length` positions.

    Args:
        x: int array `(..., L)` with `L <= length` (retrieval's pairs
            `(N, 2, L)` pad both documents).
        length: int. The positions after padding.
        padding_id: int. The padding token.

    Raises:
        ValueError: `x` longer than `length`, or no `padding_id`.
    """
    x = np.asarray(x)
    if padding_id is None:
        raise ValueError(
            "pad_to_length pads token sequences; a task without padding "
            "(padding_id=None, the pixel tasks) has none to add"
        )
    if x.shape[-1] > length:
        raise ValueError(
            f"pad_to_length lengthens sequences: {x.shape[-1]} positions "
            f"do not fit in length={length}"
        )
    widths = [(0, 0)] * (x.ndim - 1) + [(0, length - x.shape[-1])]
    return np.pad(x, widths, constant_values=padding_id)


def padding_mask(x, padding_id):
    """Boolean (N, L) mask of real positions; `padding_id=None`: all real."""
    if padding_id is None:
        return np.ones(x.shape, dtype=bool)
    return x != padding_id


class EpochCounted:
    """The epoch of a `PyDataset`'s random streams (a mixin).

    Keras calls a dataset's `on_epoch_end()` at the end of each epoch, and
    also at the start of `fit` and of every evaluation; counted, those
    calls restart at 0 when a run resumes. `set_epoch(epoch)` (from
    `EpochSync`) pins the epoch to Keras's own: from then on only
    `set_epoch` changes it. `_epoch_changed()` redraws what depends on it.
    """

    epoch = 0
    _pinned = False

    def _epoch_changed(self):
        pass

    def set_epoch(self, epoch):
        self._pinned = True
        if int(epoch) != self.epoch:
            self.epoch = int(epoch)
            self._epoch_changed()

    def on_epoch_end(self):
        if not self._pinned:
            self.epoch += 1
            self._epoch_changed()


class LengthBucketedBatches(EpochCounted, keras.utils.PyDataset):
    """A `keras.utils.PyDataset` of `(inputs, y)` batches grouped by length.

    Args:
        x: int array (N, L) or (N, towers, L), right-padded with
            `padding_id`.
        y: array (N,) of labels, or None for inference.
        batch_size: int.
        padding_id: int or None. None: every position is real (pixel
            tasks); batches are then full length.
        bucket_step: int or None. Batch lengths are multiples of it (capped
            at L). None or 0 disables trimming.
        shuffle: bool. Reshuffle rows (within length buckets) and batch order
            every epoch.
        seed: int. Seed of the shuffling. Epoch `e`'s order is drawn from
            `np.random.default_rng((seed, e))`: a function of the epoch
            alone, so a run resumed at epoch `e` (`set_epoch`, done by
            `EpochSync`) sees the order an uninterrupted run sees.
        multiple_of: int. Every batch holds a multiple of this many rows
            (the devices of data-parallel training, which split each
            batch). A length bucket's rows beyond its last multiple join
            the next longer bucket; the fewer than `multiple_of` rows left
            after the longest are left out of the epoch (`left_out`; with
            `shuffle`, other rows every epoch). 1: every row, as without.
    """

    def __init__(self, x, y=None, batch_size=32, padding_id=0,
                 bucket_step=256, shuffle=False, seed=0, multiple_of=1,
                 **kwargs):
        super().__init__(**kwargs)
        if int(batch_size) < 1:
            raise ValueError(
                f"`batch_size` must be >= 1. Received: batch_size={batch_size}"
            )
        self.multiple_of = int(multiple_of)
        if self.multiple_of < 1 or int(batch_size) % self.multiple_of:
            raise ValueError(
                f"batch_size={batch_size} does not split evenly among "
                f"{multiple_of} devices; pick a multiple of {multiple_of}."
            )
        if x.ndim not in (2, 3) or (y is not None and len(y) != len(x)):
            raise ValueError(
                "Expected x of shape (N, L) or (N, towers, L) and y of shape "
                "(N,). Received: "
                f"x.shape={x.shape}, y.shape={None if y is None else y.shape}"
            )
        self.x, self.y = x, y
        self.batch_size = int(batch_size)
        self.padding_id = padding_id
        self.shuffle = bool(shuffle)
        self.seed = int(seed)
        full = x.shape[-1]
        self.bucket_length = np.full(len(x), full)
        if padding_id is not None and bucket_step:
            real = padding_mask(x, padding_id)
            if real.ndim == 3:  # a pair is as long as its longer document
                real = real.any(axis=1)
            # Index of the last real token + 1; an empty row keeps 1 column.
            last = full - np.argmax(real[:, ::-1], axis=1)
            last[~real.any(axis=1)] = 1
            step = int(bucket_step)
            self.bucket_length = np.minimum(-(-last // step) * step, full)
        self._make_batches()

    def _make_batches(self):
        rng = np.random.default_rng((self.seed, self.epoch))
        order = np.arange(len(self.x))
        if self.shuffle:
            order = rng.permutation(order)
        # Stable sort keeps the shuffled order inside each bucket.
        order = order[np.argsort(self.bucket_length[order], kind="stable")]
        batches = []
        carried = order[:0]
        for length in np.unique(self.bucket_length):
            rows = np.concatenate(
                [carried, order[self.bucket_length[order] == length]])
            whole = len(rows) - len(rows) % self.multiple_of
            rows, carried = rows[:whole], rows[whole:]
            batches += [rows[i:i + self.batch_size]
                        for i in range(0, len(rows), self.batch_size)]
        self.left_out = len(carried)
        if self.shuffle:
            batches = [batches[i] for i in rng.permutation(len(batches))]
        # Keras's TensorFlow adapter fixes the tensor spec from the first two
        # batches: when they differ in length, the length dimension stays
        # unconstrained and later lengths are accepted.
        lengths = [self.bucket_length[rows].max() for rows in batches]
        different = [i for i, n in enumerate(lengths) if n != lengths[0]]
        if len(batches) > 2 and different and lengths[1] == lengths[0]:
            j = different[0]
            batches[1], batches[j] = batches[j], batches[1]
        self.batches = batches

    def __len__(self):
        return len(self.batches)

    def __getitem__(self, index):
        rows = self.batches[index]
        length = int(self.bucket_length[rows].max())
        token_ids = self.x[rows, ..., :length].astype("int32")
        inputs = {"token_ids": token_ids,
                  "padding_mask": padding_mask(token_ids, self.padding_id)}
        if self.y is None:
            return (inputs,)
        return inputs, self.y[rows]

    def _epoch_changed(self):
        if self.shuffle:
            self._make_batches()


class EpochSync(keras.callbacks.Callback):
    """Tells datasets the epoch `fit` is in, at the start of each epoch.

    Keras numbers epochs in `fit` (a resumed run starts at the epoch
    `BackupAndRestore` recorded) but a `PyDataset` only hears
    `on_epoch_end()`, also at the start of `fit` and of each evaluation,
    so counting those calls restarts at 0 on resume. With this callback
    (placed first) each dataset's random streams follow Keras's epoch.

    Args:
        datasets: objects with a `set_epoch(epoch)` method
            (`LengthBucketedBatches`, `TechniqueBatches`).
    """

    def __init__(self, *datasets):
        super().__init__()
        self.datasets = [d for d in datasets if hasattr(d, "set_epoch")]

    def on_epoch_begin(self, epoch, logs=None):
        for dataset in self.datasets:
            dataset.set_epoch(epoch)


class RemainingBatches(keras.utils.PyDataset):
    """The batches of one epoch after the first `skip`: `dataset[skip:]`.

    A run resumed in the middle of an epoch (`training.resume`) finishes
    that epoch on the batches it had not trained on yet. The epoch is set
    on `dataset` itself (`set_epoch`, by `resumable_fit` and `EpochSync`)
    so that its batch order is that epoch's.

    Args:
        dataset: a `PyDataset` whose batches are a function of its epoch
            and their index (`LengthBucketedBatches`, `TechniqueBatches`).
        skip: int in [0, len(dataset)). Batches already trained on.
    """

    def __init__(self, dataset, skip, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= int(skip) < len(dataset):
            raise ValueError(
                f"`skip` must be in [0, {len(dataset)}) for a dataset of "
                f"{len(dataset)} batches. Received: skip={skip}"
            )
        self.dataset = dataset
        self.skip = int(skip)

    def __len__(self):
        return len(self.dataset) - self.skip

    def __getitem__(self, index):
        if not 0 <= index < len(self):
            raise IndexError(
                f"Batch {index} of {len(self)} remaining batches."
            )
        return self.dataset[self.skip + index]

    def on_epoch_end(self):
        self.dataset.on_epoch_end()
