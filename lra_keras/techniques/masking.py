"""Token masking for the denoising objectives (multitask loss and SPT).

Two training techniques of the papers corrupt the input tokens and ask the
model to reconstruct them:

- Multitask learning (Miralles et al., "You Can Train from Scratch", A.4):
  the task loss plus a masked-token reconstruction loss of weight 1 on every
  batch; 30% of the tokens are selected, a third of them replaced by a
  random token and the rest by the mask token.
- Masked self-pretraining (Amos et al., "Never Train from Scratch", §2):
  pretraining on the task's own data with a masking ratio of 50% for the
  visual tasks (following He et al., MAE), 15% for the language tasks
  (following Liu et al., RoBERTa) and 10% for ListOps.

`mask_tokens()` draws the corruption on the data side, in numpy, afresh for
every call (the caller keeps one `np.random.Generator` and calls it once per
step), and returns the per-token targets and weights that a Keras model
consumes as `token_logits` labels and sample weights.
`denoising_targets()` applies it (or the causal shift) with a task's ids,
as the multitask and self-pretraining batches need.

The module imports only numpy and the standard library.

References:
- Miralles et al., "You Can Train from Scratch: Further Analysis of the Long
  Range Arena" (YCTFS), §3 and appendix A.4.
- Amos, Berant & Gupta, "Never Train from Scratch: Fair Comparison of
  Long-Sequence Models Requires Data-Driven Priors", ICLR 2024 (NTFS), §2,
  https://arxiv.org/abs/2310.02980
- Devlin et al., "BERT", NAACL 2019, https://arxiv.org/abs/1810.04805
  (the mask / random / keep split).

Original files read: `src/tasks/denoise_task.py` and
`src/data_loaders/masked_language_modeling.py` of
pablomiralles22/long-transformers (YCTFS code); `src/dataloaders/base.py`
(`MaskedSequenceDatasetWrapper.mask`) and `src/models/functional/masking.py`
of IdoAmos/not-from-scratch (NTFS code).
"""

import numpy as np

from lra_keras.tasks import get_task

OBJECTIVES = ("multitask", "masked", "causal")
# Where a reconstruction loss is taken: every real token, or the selected
# ones only.
LOSS_POSITIONS = ("real", "masked")


def check_loss_positions(loss_positions):
    """Raises a clear error unless `loss_positions` is one of
    `LOSS_POSITIONS`."""
    if loss_positions not in LOSS_POSITIONS:
        raise ValueError(
            f"`loss_positions` must be one of {LOSS_POSITIONS}. "
            f"Received: loss_positions={loss_positions!r}"
        )


def denoising_targets(token_ids, task, rng, objective, *, mask_rate,
                      random_fraction, loss_positions="masked",
                      pixel_targets=False, pixel_normalization=(0.0, 1.0)):
    """Corrupted inputs, targets and per-token loss weights of one batch.

    Args:
        token_ids: int array (batch, [towers,] length).
        task: a task name or `lra_keras.tasks.Task`, for its padding, mask
            and ordinary ids.
        rng: `np.random.Generator`.
        objective: `"multitask"`, `"masked"` or `"causal"` (every position
            predicts the next token; the loss is taken wherever both are
            real).
        mask_rate: float. Share of each row's real tokens selected.
        random_fraction: float. Share of the selected tokens replaced by a
            random ordinary token (the rest become the mask token).
        loss_positions: `"real"` or `"masked"`: where the reconstruction
            loss is taken (masked objectives only).
        pixel_targets: bool. Targets are pixel values, shaped
            (..., length, 1), for an L1 regression head:
            `(value / 255 - mean) / std`.
        pixel_normalization: `(mean, std)` of those targets, on the
            [0, 1] scale: NTFS regresses the value its encoder reads, the
            task's normalised grey (`masked_mae` on the normalised
            sample), our `pixel_mean` and `pixel_std`. Defaults to (0, 1),
            the value / 255.

    Returns:
        `(inputs, targets, weights)`: the model's token ids, the targets
        and float32 weights (..., length).
    """
    task = get_task(task)
    if objective not in OBJECTIVES:
        raise ValueError(
            f"`objective` must be one of {OBJECTIVES}. "
            f"Received: objective={objective!r}"
        )
    check_loss_positions(loss_positions)
    if task.pixels:
        real = np.ones(token_ids.shape, bool)
    else:
        real = token_ids != task.padding_id
    if objective == "causal":
        inputs = token_ids
        targets = np.zeros_like(token_ids)
        targets[..., :-1] = token_ids[..., 1:]
        weights = np.zeros(token_ids.shape, np.float32)
        weights[..., :-1] = real[..., :-1] & real[..., 1:]
    else:
        inputs, targets, weights = mask_tokens(
            token_ids,
            mask_rate,
            task.mask_id,
            rng,
            padding_id=task.padding_id,
            random_fraction=random_fraction,
            ordinary_ids=task.ordinary_ids,
        )
        if loss_positions == "real":
            weights = real.astype(np.float32)
    if pixel_targets:
        if not task.pixels:
            raise ValueError(
                "Pixel-value targets (pretrain_loss='l1') need a pixel task "
                f"(image, pathfinder, pathx, pathx256). Received: "
                f"task={task.name!r}"
            )
        mean, std = (float(v) for v in pixel_normalization)
        targets = ((targets.astype(np.float32) / 255.0 - mean)
                   / std)[..., None]
    return inputs.astype(np.int32), targets, weights


def mask_tokens(
    token_ids,
    rate,
    mask_id,
    rng,
    *,
    padding_id=0,
    random_fraction=1 / 3,
    ordinary_ids=None,
    keep_fraction=0.0,
):
    """Corrupts a batch of token ids for a masked-token objective.

    Selects, independently in every row (the last axis is the sequence),
    exactly `k = round(rate * n_real)` of the row's `n_real` real tokens,
    at least one when the row has any and `rate > 0`; padding is never
    selected. Each selected token is then, independently, replaced by a
    random ordinary token with probability `random_fraction`, left unchanged
    with probability `keep_fraction`, and replaced by `mask_id` otherwise.
    A random replacement is uniform over `ordinary_ids` and may equal the
    original token, as in BERT.

    Why an exact count and not a Bernoulli draw per token (which the NTFS
    and YCTFS multitask code use): with Keras's default loss reduction the
    masked-token loss is a sum over selected tokens divided by a fixed
    size, so its scale follows the number of selected tokens. An exact
    count makes that number constant for fixed-length rows (the pixel
    tasks) and proportional to the row's length otherwise, which removes
    one source of loss variance and guarantees every non-empty row
    contributes; the expected masked fraction is the same.

    Rows of any leading shape are masked independently, so a retrieval
    batch `(N, 2, L)` masks each document on its own. Draws come from `rng`,
    so repeated calls with one generator give fresh masks every step.

    Args:
        token_ids: integer array `(..., L)`, e.g. `(N, L)` or `(N, 2, L)`.
        rate: float in `[0, 1]`. Fraction of each row's real tokens to
            select, e.g. 0.3 (multitask) or a task's `spt_mask_rate`.
        mask_id: int >= 0. The mask token, e.g. a task's `mask_id`.
        rng: `np.random.Generator`, e.g. `np.random.default_rng(seed)`,
            kept by the caller across steps.
        padding_id: int or None. Id of padding positions, never selected;
            `None` when every position is real (pixel tasks). Defaults
            to 0.
        random_fraction: float. Probability that a selected token becomes a
            random ordinary token. Defaults to 1/3 (YCTFS A.4).
        ordinary_ids: the ids a random replacement may take: a
            `(low, high_exclusive)` range, a 1-D array of ids, or a task
            name (its `Task.ordinary_ids`). Required when
            `random_fraction > 0`. Defaults to `None`.
        keep_fraction: float. Probability that a selected token is left
            unchanged (BERT uses 0.1). Defaults to 0.

    Returns:
        A tuple `(inputs, targets, weights)` of the shape of `token_ids`:
        `inputs` the corrupted ids, in the dtype of `token_ids` or a wider
        one that holds `mask_id` (uint8 pixels become uint16, since the
        pixel mask id is 256); `targets` a copy of the original ids; and
        `weights` float32, 1.0 at the selected positions and 0.0 elsewhere.

    Example:

    >>> rng = np.random.default_rng(0)
    >>> x = np.array([[5, 6, 7, 8, 9, 10, 0, 0]])
    >>> inputs, targets, weights = mask_tokens(
    ...     x, 0.5, mask_id=16, rng=rng, random_fraction=0.0)
    >>> int(weights.sum()), int((inputs == 16).sum())
    (3, 3)
    """
    token_ids = np.asarray(token_ids)
    if token_ids.ndim < 1 or not np.issubdtype(token_ids.dtype, np.integer):
        raise ValueError(
            "`token_ids` must be an integer array of shape (..., L). "
            f"Received: dtype={token_ids.dtype}, shape={token_ids.shape}"
        )
    _check_fraction("rate", rate)
    _check_id("mask_id", mask_id)
    if padding_id is not None:
        _check_id("padding_id", padding_id)
    _check_fraction("random_fraction", random_fraction)
    _check_fraction("keep_fraction", keep_fraction)
    if random_fraction + keep_fraction > 1.0:
        raise ValueError(
            "`random_fraction + keep_fraction` must be at most 1. Received: "
            f"random_fraction={random_fraction}, "
            f"keep_fraction={keep_fraction}"
        )
    if not isinstance(rng, np.random.Generator):
        # A seed here would give the same mask at every step.
        raise ValueError(
            "`rng` must be a np.random.Generator kept across steps, e.g. "
            f"np.random.default_rng(seed). Received: rng={rng!r}"
        )
    ordinary = None
    if random_fraction > 0:
        ordinary = _ordinary_ids(ordinary_ids, mask_id, padding_id)

    shape = token_ids.shape
    length = shape[-1]
    rows = token_ids.reshape(-1, length)  # (rows, L)
    if padding_id is None:
        real = np.ones(rows.shape, bool)
    else:
        real = rows != padding_id
    num_real = np.count_nonzero(real, axis=1)  # (rows,)
    if rate > 0:
        num_selected = np.floor(rate * num_real + 0.5).astype(np.int64)
        num_selected = np.where(num_real > 0, np.maximum(num_selected, 1), 0)
    else:
        num_selected = np.zeros_like(num_real)

    # Exactly num_selected[r] real positions per row: rank the positions by
    # random keys, padding last, and take each row's first num_selected.
    keys = rng.random(rows.shape)
    keys[~real] = 2.0  # above every key in [0, 1)
    order = np.argsort(keys, axis=1)  # (rows, L)
    selected = np.zeros(rows.shape, bool)
    np.put_along_axis(
        selected, order, np.arange(length) < num_selected[:, None], axis=1
    )

    # The corruption of each selected token, drawn per token (BERT-style).
    kind = rng.random(rows.shape)
    make_random = selected & (kind < random_fraction)
    make_mask = selected & (kind >= random_fraction + keep_fraction)

    largest = mask_id
    if ordinary is not None:
        largest = max(largest, _largest(ordinary))
    dtype = np.promote_types(token_ids.dtype, np.min_scalar_type(largest))
    inputs = rows.astype(dtype, copy=True)
    inputs[make_mask] = mask_id
    num_random = int(np.count_nonzero(make_random))
    if num_random:
        inputs[make_random] = _draw(ordinary, num_random, rng)
    weights = selected.astype(np.float32)
    return (
        inputs.reshape(shape),
        token_ids.copy(),
        weights.reshape(shape),
    )


def _ordinary_ids(ordinary_ids, mask_id, padding_id):
    """Validates `ordinary_ids`; returns a (low, high) tuple or an array."""
    if isinstance(ordinary_ids, str):
        ordinary_ids = get_task(ordinary_ids).ordinary_ids
    if ordinary_ids is None:
        raise ValueError(
            "`ordinary_ids` is required when `random_fraction > 0`: the ids "
            "a random replacement may take, as a (low, high_exclusive) "
            "range, an array of ids or a task name (see lra_keras.tasks). "
            "Received: ordinary_ids=None"
        )
    if isinstance(ordinary_ids, tuple) and len(ordinary_ids) == 2:
        low, high = ordinary_ids
        _check_id("ordinary_ids[0]", low)
        _check_id("ordinary_ids[1]", high)
        if high <= low:
            raise ValueError(
                "`ordinary_ids` as a range must have low < high. "
                f"Received: ordinary_ids={ordinary_ids!r}"
            )
        special = [
            i
            for i in (mask_id, padding_id)
            if i is not None and low <= i < high
        ]
        candidates = (int(low), int(high))
    else:
        candidates = np.unique(np.asarray(ordinary_ids))
        if (
            candidates.ndim != 1
            or not candidates.size
            or not np.issubdtype(candidates.dtype, np.integer)
            or candidates[0] < 0
        ):
            raise ValueError(
                "`ordinary_ids` must be a (low, high_exclusive) tuple or a "
                "non-empty 1-D array of non-negative integer ids. "
                f"Received: ordinary_ids={ordinary_ids!r}"
            )
        special = [
            i
            for i in (mask_id, padding_id)
            if i is not None and np.isin(i, candidates)
        ]
    if special:
        raise ValueError(
            "`ordinary_ids` may not contain the mask or padding id; random "
            f"replacements must be ordinary tokens. Received: ordinary_ids="
            f"{ordinary_ids!r}, mask_id={mask_id}, padding_id={padding_id}"
        )
    return candidates


def _largest(ordinary):
    if isinstance(ordinary, tuple):
        return ordinary[1] - 1
    return int(ordinary[-1])


def _draw(ordinary, size, rng):
    if isinstance(ordinary, tuple):
        return rng.integers(ordinary[0], ordinary[1], size)
    return ordinary[rng.integers(0, ordinary.size, size)]


def _check_fraction(name, value):
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not 0.0 <= value <= 1.0
    ):
        raise ValueError(
            f"`{name}` must be a number in [0, 1]. Received: {name}={value!r}"
        )


def _check_id(name, value):
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or value < 0
    ):
        raise ValueError(
            f"`{name}` must be an int >= 0. Received: {name}={value!r}"
        )
