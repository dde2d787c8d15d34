"""The input pipeline of a run: the task's splits, then batches.

`load_splits` reads the three splits through the task's loader
(`lra_keras.tasks`), `make_batches` groups a split into length-bucketed
batches (`lra_keras.batching`) and, when the run augments or its technique
transforms batches, wraps them in `lra_keras.techniques.batches`.
"""

import numpy as np

from lra_keras import data
from lra_keras.batching import LengthBucketedBatches
from lra_keras.batching import pad_to_length
from lra_keras.distribute import batch_multiple
from lra_keras.tasks import get_task


def load_splits(task, hp, data_dir=None):
    """Loads {split: (x, y)}; `<split>_samples` keeps a prefix of a split.

    The loader gets the task's `loader_options` that are set in `hp`. The
    training split reads `train_difficulty` where the task has difficulty
    sets, val and test `eval_difficulty` (both None: `difficulty`);
    `"all"` loads each set and keeps `<split>_samples` of each, as YCTFS
    trains on three times the hard set's size (and its code validates and
    tests on the three sets pooled). With `padded_length`, every
    sequence is then right-padded to it (`batching.pad_to_length`), before
    `append_eos` ends it. With `augment`, the task's
    augmentation may supply its own training split
    (`Augmentation.load_train`: CIFAR-10 in colour for the colour policy).
    """
    spec = get_task(task)
    augmentation = None
    if hp.get("augment"):
        from lra_keras.techniques import get_augmentation

        augmentation = get_augmentation(spec)
    options = {k: hp[k] for k in spec.loader_options if hp.get(k) is not None}
    splits = {}
    for split in data.SPLITS:
        keep = hp.get(f"{split}_samples")
        split_options = dict(options)
        if split == "train" and hp.get("train_difficulty"):
            split_options["difficulty"] = hp["train_difficulty"]
        if split != "train" and hp.get("eval_difficulty"):
            split_options["difficulty"] = hp["eval_difficulty"]
        parts = [split_options]
        if split_options.get("difficulty") == "all":
            parts = [dict(split_options, difficulty=d)
                     for d in spec.difficulties]
        xs, ys = [], []
        for part in parts:
            own = (augmentation.load_train(spec, hp, data_dir)
                   if split == "train" and augmentation is not None
                   else None)
            if own is not None:
                x, y = own
            else:
                x, y = data.load(
                    spec.name, split, data_dir=data_dir,
                    max_length=hp["sequence_length"], **part,
                )
            if len(y) == 0:
                source = (f"read from {data_dir}" if data_dir is not None
                          else "generated, in lra_keras.data.cache_dir()")
                options_text = f" with {part}" if part else ""
                raise ValueError(
                    f"The {split} split of {spec.name}{options_text} has "
                    f"no rows ({source}); nothing can be "
                    "trained or evaluated on it. Check the split's file (a "
                    "header-only TSV, an empty metadata file)."
                )
            if keep:
                x, y = x[:keep], y[:keep]
            if hp.get("padded_length"):
                x = pad_to_length(x, hp["padded_length"], spec.padding_id)
            if hp.get("append_eos"):
                x = append_end_token(x, spec.end_id, spec.padding_id)
            xs.append(x)
            ys.append(y)
        if len(xs) == 1:
            splits[split] = (xs[0], ys[0])
        else:
            splits[split] = (np.concatenate(xs), np.concatenate(ys))
    return splits


def append_end_token(x, end_id, padding_id=0):
    """Ends every right-padded sequence of `x` with `end_id`.

    The S4 code's text loaders (ListOps, IMDB, AAN; state-spaces/s4
    `src/dataloaders/lra.py` at e757cef, lines 119-143, 320-343 and
    627-653, `append_eos: True` in `configs/dataset/{listops,imdb,aan}
    .yaml`) truncate each sequence to `l_max - 1` tokens and append
    `<eos>`, a vocabulary entry of its own; the S5 and NTFS code bases
    load the three tasks the same way. Here the last axis of `x` is
    `l_max`: a sequence keeps at most `x.shape[-1] - 1` tokens, the end
    token follows its last kept token, padding after it. The generated
    ListOps trees and LRA's are strictly shorter than 2000 tokens, so at
    `sequence_length=2000` no tree loses a token (the S4 code's `l_max`
    2048 keeps them whole too).

    Args:
        x: int array `(..., length)`, right-padded with `padding_id`
            (retrieval's `(N, 2, length)` pairs end each document).
        end_id: int. The end token (`Task.end_id`).
        padding_id: int. The padding id.

    Returns:
        A new array of `x`'s shape, in a dtype that holds `end_id`.

    Raises:
        ValueError: `x` not of an integer dtype, of length 0, or with
            padding before a real token (rows must be right-padded).
    """
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.integer):
        raise ValueError(
            f"append_end_token takes token ids (an integer array); "
            f"received dtype {x.dtype}"
        )
    if x.shape[-1] < 1:
        raise ValueError(
            "append_end_token needs room for the end token: a length of "
            f"at least 1, received shape {x.shape}"
        )
    real = x != padding_id
    lengths = real.sum(axis=-1)
    # right-padded: the real tokens are exactly the first `lengths`
    positions = np.arange(x.shape[-1])
    if not np.array_equal(real, positions < lengths[..., None]):
        row = np.argwhere(real != (positions < lengths[..., None]))[0][:-1]
        raise ValueError(
            f"Row {tuple(int(i) for i in row)} has padding (id "
            f"{padding_id}) before a real token: append_end_token takes "
            "right-padded sequences"
        )
    dtype = np.promote_types(x.dtype, np.min_scalar_type(end_id))
    out = x.astype(dtype, copy=True)
    ends = np.minimum(lengths, x.shape[-1] - 1)
    np.put_along_axis(out, ends[..., None], end_id, axis=-1)
    return out


def make_batches(x, y, hp, *, shuffle=False, seed=0, augment=None,
                 transform=None, batch_size=None, multiple_of=None):
    """Batches of one split.

    Length-bucketed (`lra_keras.batching`; every batch a multiple of
    `multiple_of` rows, by default the devices of the active
    `distribute.distribution_scope`), then, with an `augment`
    (`Augmentation.make`, for training batches) or a `transform`
    (`Technique.batch_transform`), transformed batch by batch by
    `lra_keras.techniques.batches.TechniqueBatches`.
    """
    batches = LengthBucketedBatches(
        x, y, batch_size=batch_size or hp["batch_size"],
        padding_id=hp.get("padding_id"),
        bucket_step=hp.get("bucket_step"), shuffle=shuffle, seed=seed,
        multiple_of=multiple_of or batch_multiple(),
    )
    if augment is None and transform is None:
        return batches
    from lra_keras.techniques.batches import TechniqueBatches

    return TechniqueBatches(batches, hp["task"], augment=augment,
                            transform=transform, seed=seed)


def run_batches(task, splits, hp, technique, augmentation=None, seed=0):
    """The training, validation and test batches of a run.

    Training batches are shuffled, augmented (`augmentation.make`) and
    transformed for training (`technique.batch_transform(..., True)`);
    validation batches are transformed for evaluation (the multitask token
    loss weighs 0 there) and never augmented; test batches are plain, for
    the classifier alone, all of them (evaluated on one device under
    `--distribute`).
    """
    train = make_batches(
        *splits["train"], hp, shuffle=True, seed=seed,
        augment=augmentation.make(hp, seed) if augmentation else None,
        transform=technique.batch_transform(task, hp, training=True),
    )
    val = make_batches(
        *splits["val"], hp,
        transform=technique.batch_transform(task, hp, training=False),
    )
    test = make_batches(*splits["test"], hp, multiple_of=1)
    return train, val, test
