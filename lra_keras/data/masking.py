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
consumes as `mlm_logits` labels and sample weights.

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

from lra_keras.data import image
from lra_keras.data import listops
from lra_keras.data import text

# === Token ids of every task ===

# Bytes: padding 0, UTF-8 byte b -> b + 1 (1..256), mask 257 (data.text).
# Pixels: value 0..255, every position real (no padding), mask 256
# (data.image, data.pathfinder).
BYTE_PADDING_ID = text.PAD_ID
BYTE_MASK_ID = text.MASK_ID
PIXEL_MASK_ID = image.MASK_ID

TASKS = (
    "listops",
    "text",
    "retrieval",
    "image",
    "pathfinder",
    "pathx",
    "pathx256",
)
_PIXEL_TASKS = ("image", "pathfinder", "pathx", "pathx256")

# Ids a random replacement may take: every ordinary token, never padding or
# the mask token. As (low, high_exclusive) ranges. ListOps: digits 1-10,
# operators 11-14 and "]" 15.
ORDINARY_IDS = {
    "listops": (listops.PAD_ID + 1, listops.MASK_ID),
    "text": (BYTE_PADDING_ID + 1, BYTE_MASK_ID),
    "retrieval": (BYTE_PADDING_ID + 1, BYTE_MASK_ID),
    **{task: (0, PIXEL_MASK_ID) for task in _PIXEL_TASKS},
}
MASK_IDS = {
    "listops": listops.MASK_ID,
    "text": BYTE_MASK_ID,
    "retrieval": BYTE_MASK_ID,
    **{task: PIXEL_MASK_ID for task in _PIXEL_TASKS},
}
# None: every position is a real token.
PADDING_IDS = {
    "listops": listops.PAD_ID,
    "text": BYTE_PADDING_ID,
    "retrieval": BYTE_PADDING_ID,
    **{task: None for task in _PIXEL_TASKS},
}

# === The papers' rates ===

# NTFS §2: "For the visual tasks (Image, Pathfinder, Path-X) the masking
# ratio for masked sequence modeling is set to 50% following He et al.
# (2022), to 15% for language tasks (Text, Retrieval) following Liu et al.
# (2019), and to 10% for ListOps." Path-X 256 is a visual task.
SPT_MASK_RATE = {
    "listops": 0.1,
    "text": 0.15,
    "retrieval": 0.15,
    **{task: 0.5 for task in _PIXEL_TASKS},
}
# YCTFS A.4: "we mask 30% of the tokens in the input sequence, of which a
# third are replaced by random tokens, and the rest are replaced by a
# special mask token."
MULTITASK_MASK_RATE = 0.3
MULTITASK_RANDOM_FRACTION = 1 / 3


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
            select, e.g. `MULTITASK_MASK_RATE` or `SPT_MASK_RATE[task]`.
        mask_id: int >= 0. The mask token, e.g. `MASK_IDS[task]`.
        rng: `np.random.Generator`, e.g. `np.random.default_rng(seed)`,
            kept by the caller across steps.
        padding_id: int or None. Id of padding positions, never selected;
            `None` when every position is real (pixel tasks). Defaults
            to 0.
        random_fraction: float. Probability that a selected token becomes a
            random ordinary token. Defaults to 1/3 (YCTFS A.4).
        ordinary_ids: the ids a random replacement may take: a
            `(low, high_exclusive)` range, a 1-D array of ids, or a task
            name (a key of `ORDINARY_IDS`). Required when
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


def mask_for_task(token_ids, task, rng, *, objective="multitask"):
    """Applies `mask_tokens()` with a task's ids and a paper's recipe.

    `objective="multitask"` selects `MULTITASK_MASK_RATE` (30%) with a third
    random replacements (YCTFS A.4); `objective="spt"` selects
    `SPT_MASK_RATE[task]` (NTFS §2: 50% visual, 15% text, 10% ListOps) and
    replaces every selected token by the mask token, since NTFS masks
    without random replacements.

    Args:
        token_ids: integer array `(..., L)` of the task's token ids.
        task: str. A key of `MASK_IDS`, e.g. `"listops"`.
        rng: `np.random.Generator` kept across steps.
        objective: str. `"multitask"` or `"spt"`. Defaults to
            `"multitask"`.

    Returns:
        `(inputs, targets, weights)` as returned by `mask_tokens()`.
    """
    if task not in MASK_IDS:
        raise ValueError(
            f"Unknown task; expected one of {list(TASKS)}. "
            f"Received: task={task!r}"
        )
    if objective == "multitask":
        rate, random_fraction = MULTITASK_MASK_RATE, MULTITASK_RANDOM_FRACTION
    elif objective == "spt":
        rate, random_fraction = SPT_MASK_RATE[task], 0.0
    else:
        raise ValueError(
            "Unknown objective; expected 'multitask' or 'spt'. "
            f"Received: objective={objective!r}"
        )
    return mask_tokens(
        token_ids,
        rate,
        MASK_IDS[task],
        rng,
        padding_id=PADDING_IDS[task],
        random_fraction=random_fraction,
        ordinary_ids=ORDINARY_IDS[task],
    )


def _ordinary_ids(ordinary_ids, mask_id, padding_id):
    """Validates `ordinary_ids`; returns a (low, high) tuple or an array."""
    if isinstance(ordinary_ids, str):
        if ordinary_ids not in ORDINARY_IDS:
            raise ValueError(
                f"Unknown task for `ordinary_ids`; expected one of "
                f"{list(TASKS)}. Received: ordinary_ids={ordinary_ids!r}"
            )
        ordinary_ids = ORDINARY_IDS[ordinary_ids]
    if ordinary_ids is None:
        raise ValueError(
            "`ordinary_ids` is required when `random_fraction > 0`: the ids "
            "a random replacement may take, as a (low, high_exclusive) "
            "range, an array of ids or a task name (see ORDINARY_IDS). "
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
