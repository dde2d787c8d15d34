"""Tests of the masked-token corruption (multitask loss and SPT)."""

import numpy as np
import pytest

from lra_keras.data import listops
from lra_keras.tasks import TASKS
from lra_keras.techniques import masking
from lra_keras.techniques.multitask import MULTITASK

pytestmark = pytest.mark.numpy_only


def binomial_tolerance(p, n, sigmas=5.0):
    """Half-width of a `sigmas`-sigma interval of a frequency of n draws."""
    return sigmas * np.sqrt(p * (1 - p) / n)


def ragged_batch(rng, num_rows=64, length=300, low=1, high=16):
    """Right-padded rows of random lengths (some empty, some full)."""
    lengths = rng.integers(0, length + 1, num_rows)
    lengths[:2] = (0, length)
    x = rng.integers(low, high, (num_rows, length)).astype(np.int32)
    x[np.arange(length) >= lengths[:, None]] = 0
    return x, lengths


def expected_count(rate, n):
    n = np.asarray(n)
    count = np.floor(rate * n + 0.5).astype(int)
    return np.where(n > 0, np.maximum(count, 1 if rate > 0 else 0), 0)


@pytest.mark.parametrize("rate", [0.1, 0.15, 0.3, 0.5])
def test_each_row_gets_exactly_its_share_of_real_tokens(rate):
    rng = np.random.default_rng(0)
    x, lengths = ragged_batch(rng)
    _, _, weights = masking.mask_tokens(x, rate, 16, rng, ordinary_ids=(1, 16))
    np.testing.assert_array_equal(
        weights.sum(axis=1), expected_count(rate, lengths)
    )
    assert weights.dtype == np.float32
    assert set(np.unique(weights)) <= {0.0, 1.0}


def test_selection_is_uniform_over_real_positions():
    # Over many draws every real position is selected with probability
    # k / n; no position (start, end, neighbour of padding) is favoured.
    rng = np.random.default_rng(1)
    n, length, draws = 40, 50, 4000
    x = np.zeros((draws, length), np.int32)
    x[:, :n] = rng.integers(1, 16, (draws, n))
    _, _, weights = masking.mask_tokens(x, 0.3, 16, rng, ordinary_ids=(1, 16))
    frequency = weights.mean(axis=0)
    p = 12 / n  # round(0.3 * 40) = 12
    np.testing.assert_allclose(
        frequency[:n], p, atol=binomial_tolerance(p, draws)
    )
    assert not frequency[n:].any()


def test_a_third_random_two_thirds_mask_token_over_many_draws():
    rng = np.random.default_rng(2)
    x, _ = ragged_batch(rng, num_rows=256, length=500)
    written_random = written_mask = 0
    for _ in range(10):
        inputs, _, weights = masking.mask_tokens(
            x,
            MULTITASK.keys["multitask_mask_rate"],
            listops.MASK_ID,
            rng,
            random_fraction=MULTITASK.keys["multitask_random_fraction"],
            ordinary_ids="listops",
        )
        selected = weights > 0
        # Counted by what was written: a random token can equal the
        # original, but never the mask token.
        written_mask += np.count_nonzero(inputs[selected] == listops.MASK_ID)
        written_random += np.count_nonzero(inputs[selected] != listops.MASK_ID)
    total = written_mask + written_random
    assert total > 100_000
    assert abs(written_random / total - 1 / 3) < binomial_tolerance(
        1 / 3, total
    )


def test_random_replacements_are_ordinary_and_cover_all_ordinary_ids():
    rng = np.random.default_rng(3)
    x, _ = ragged_batch(rng, num_rows=128, length=400, low=1, high=257)
    inputs, targets, weights = masking.mask_tokens(
        x,
        0.3,
        TASKS["text"].mask_id,
        rng,
        random_fraction=1.0,
        ordinary_ids=TASKS["text"].ordinary_ids,
    )
    written = inputs[weights > 0]
    assert written.min() >= 1 and written.max() <= 256
    assert not np.isin(written, [0, TASKS["text"].mask_id]).any()
    # Uniform over all 256 byte ids: every one appears in ~4500 draws.
    assert np.unique(written).size == 256
    # Rows of ids given as an array: only those ids are written.
    allowed = np.array([3, 7, 11])
    inputs, _, weights = masking.mask_tokens(
        x, 0.3, 257, rng, random_fraction=1.0, ordinary_ids=allowed
    )
    np.testing.assert_array_equal(
        np.unique(inputs[weights > 0]), np.array([3, 7, 11])
    )


@pytest.mark.parametrize("task", list(TASKS))
def test_task_ordinary_ids_exclude_padding_and_mask(task):
    low, high = TASKS[task].ordinary_ids
    ordinary = np.arange(low, high)
    assert TASKS[task].mask_id not in ordinary
    assert TASKS[task].padding_id not in ordinary
    expected_size = {"listops": 15, "text": 256, "retrieval": 256}
    assert ordinary.size == expected_size.get(task, 256)


def test_listops_ordinary_ids_are_digits_operators_and_end():
    low, high = TASKS["listops"].ordinary_ids
    tokens = {listops.VOCABULARY[i] for i in range(low, high)}
    assert tokens == {str(d) for d in range(10)} | set(listops.OPERATORS) | {
        "]"
    }


def test_padding_is_never_selected_or_changed_and_targets_are_originals():
    rng = np.random.default_rng(4)
    x, _ = ragged_batch(rng)
    inputs, targets, weights = masking.mask_tokens(
        x, 0.5, 16, rng, ordinary_ids=(1, 16)
    )
    padding = x == 0
    assert not weights[padding].any()
    np.testing.assert_array_equal(inputs[padding], 0)
    np.testing.assert_array_equal(targets, x)
    unselected = weights == 0
    np.testing.assert_array_equal(inputs[unselected], x[unselected])
    # Only the selected positions change, and with random_fraction=1/3 most
    # of them do.
    changed = inputs != x
    assert not (changed & unselected).any()
    assert changed.sum() > 0.6 * weights.sum()
    assert inputs.dtype == x.dtype


def test_fresh_draws_differ_and_a_seed_reproduces():
    x = np.arange(1, 201).reshape(2, 100) % 15 + 1
    rng = np.random.default_rng(5)
    first = masking.mask_tokens(x, 0.3, 16, rng, ordinary_ids=(1, 16))
    second = masking.mask_tokens(x, 0.3, 16, rng, ordinary_ids=(1, 16))
    assert not np.array_equal(first[2], second[2])
    again = masking.mask_tokens(
        x, 0.3, 16, np.random.default_rng(5), ordinary_ids=(1, 16)
    )
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)


def mask_for_task(x, task, rng, objective="multitask"):
    """`mask_tokens` with a task's ids and a paper's rates: YCTFS A.4's
    multitask corruption, or NTFS's SPT rate without random replacements."""
    spec = TASKS[task]
    if objective == "multitask":
        rate = MULTITASK.keys["multitask_mask_rate"]
        random_fraction = MULTITASK.keys["multitask_random_fraction"]
    else:
        rate, random_fraction = spec.spt_mask_rate, 0.0
    return masking.mask_tokens(
        x, rate, spec.mask_id, rng, padding_id=spec.padding_id,
        random_fraction=random_fraction, ordinary_ids=spec.ordinary_ids,
    )


def test_retrieval_pairs_mask_each_document_independently():
    rng = np.random.default_rng(6)
    x = np.zeros((8, 2, 120), np.uint16)
    lengths = rng.integers(1, 121, (8, 2))
    for i in range(8):
        for j in range(2):
            x[i, j, : lengths[i, j]] = rng.integers(1, 257, lengths[i, j])
    inputs, targets, weights = mask_for_task(x, "retrieval", rng)
    assert inputs.shape == targets.shape == weights.shape == (8, 2, 120)
    np.testing.assert_array_equal(
        weights.sum(axis=-1), expected_count(0.3, lengths)
    )
    assert not weights[x == 0].any()
    # The two documents of a pair get different masks.
    pair = np.ones((1, 2, 100), np.uint16)
    _, _, weights = mask_for_task(pair, "retrieval", rng)
    assert not np.array_equal(weights[0, 0], weights[0, 1])


def test_pixels_have_no_padding_and_widen_to_hold_the_mask_id():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 256, (16, 1024)).astype(np.uint8)
    x[:, :10] = 0  # black pixels are real tokens, not padding
    inputs, targets, weights = mask_for_task(
        x, "pathfinder", rng, objective="spt"
    )
    assert inputs.dtype == np.uint16 and targets.dtype == np.uint8
    np.testing.assert_array_equal(weights.sum(axis=1), 512)
    assert weights[:, :10].any()
    # SPT replaces every selected pixel by the mask token (NTFS masks
    # without random replacements).
    np.testing.assert_array_equal(inputs[weights > 0], 256)
    np.testing.assert_array_equal(inputs[weights == 0], x[weights == 0])


@pytest.mark.parametrize(
    "task, rate",
    [("listops", 0.1), ("text", 0.15), ("retrieval", 0.15), ("image", 0.5)]
    + [(task, 0.5) for task in ("pathfinder", "pathx", "pathx256")],
)
def test_spt_rates_follow_ntfs(task, rate):
    assert TASKS[task].spt_mask_rate == rate
    rng = np.random.default_rng(8)
    x = np.full((4, 200), 5, np.int32)
    _, _, weights = mask_for_task(x, task, rng, objective="spt")
    np.testing.assert_array_equal(weights.sum(axis=1), round(rate * 200))


def test_keep_fraction_leaves_selected_tokens_unchanged():
    rng = np.random.default_rng(9)
    x = np.full((4, 100), 7, np.int32)
    inputs, _, weights = masking.mask_tokens(
        x, 0.3, 16, rng, random_fraction=0.0, keep_fraction=1.0
    )
    np.testing.assert_array_equal(inputs, x)
    np.testing.assert_array_equal(weights.sum(axis=1), 30)


def test_zero_rate_and_short_rows():
    rng = np.random.default_rng(10)
    x = np.array([[3, 0, 0], [3, 4, 0], [0, 0, 0]])
    _, _, weights = masking.mask_tokens(x, 0.1, 16, rng, random_fraction=0.0)
    # At least one token of every non-empty row, none of an empty one.
    np.testing.assert_array_equal(weights.sum(axis=1), [1, 1, 0])
    inputs, _, weights = masking.mask_tokens(
        x, 0.0, 16, rng, ordinary_ids=(1, 16)
    )
    assert not weights.any()
    np.testing.assert_array_equal(inputs, x)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(rng=0), "np.random.Generator"),
        (dict(rate=1.5), "rate"),
        (dict(ordinary_ids=None), "ordinary_ids"),
        (dict(ordinary_ids=(1, 17)), "mask or padding"),
        (dict(ordinary_ids=np.array([0, 1])), "mask or padding"),
        (dict(ordinary_ids="cifar"), "Unknown task"),
        (dict(random_fraction=0.8, keep_fraction=0.3), "at most 1"),
        (dict(token_ids=np.zeros((2, 3), np.float32)), "integer array"),
    ],
)
def test_bad_arguments_raise_clear_errors(kwargs, message):
    arguments = dict(
        token_ids=np.ones((2, 5), np.int32),
        rate=0.3,
        mask_id=16,
        rng=np.random.default_rng(0),
        ordinary_ids=(1, 16),
    )
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        masking.mask_tokens(**arguments)


def test_denoising_targets_rejects_unknown_task_objective_and_positions():
    rng = np.random.default_rng(0)
    x = np.ones((1, 4), np.int32)
    kwargs = dict(mask_rate=0.3, random_fraction=0.0)
    with pytest.raises(ValueError, match="Unknown task"):
        masking.denoising_targets(x, "cifar10", rng, "masked", **kwargs)
    with pytest.raises(ValueError, match="objective"):
        masking.denoising_targets(x, "text", rng, "spt", **kwargs)
    with pytest.raises(ValueError, match="loss_positions"):
        masking.denoising_targets(x, "text", rng, "masked",
                                  loss_positions="all", **kwargs)
