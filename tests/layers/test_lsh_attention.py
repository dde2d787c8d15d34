import numpy as np
import pytest

from lra_keras.layers.lsh_attention import SELF_SCORE
from lra_keras.layers.lsh_attention import lsh_attention
from lra_keras.layers.lsh_attention import lsh_buckets
from tests.testing import assert_allclose
from tests.testing import to_numpy


def _inputs(length, heads=2, depth=8, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(2, length, heads, depth)).astype("float32")
    v = rng.normal(size=(2, length, heads, depth)).astype("float32")
    return q, v


def shared_qk_attention(q, v, allowed):
    """Softmax attention with keys = unit-normalised queries, the query's
    own score -1e5, under an explicit (B, H, L, L) mask; float64."""
    q, v = np.asarray(q, np.float64), np.asarray(v, np.float64)
    k = q / np.sqrt(np.sum(q * q, -1, keepdims=True) + 1e-6)
    scores = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])
    length = q.shape[1]
    scores = np.where(np.eye(length, dtype=bool), SELF_SCORE, scores)
    scores = np.where(allowed, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", weights, v)


@pytest.mark.parametrize("num_hashes", [1, 3])
def test_one_bucket_is_full_attention_with_the_self_exclusion_rule(
        num_hashes):
    # One bucket and one chunk over the whole sequence: every key is in
    # every query's window, so LSH attention is full shared-QK attention
    # (rounds all equal, their combination the same).
    length = 20
    q, v = _inputs(length)
    mask = np.ones((2, length), bool)
    mask[1, 13:] = False
    rotations = np.zeros((8, num_hashes, 0), "float32")
    out = lsh_attention(q, v, rotations, chunk_size=length,
                        padding_mask=mask)
    allowed = np.broadcast_to(mask[:, None, None, :], (2, 2, length, length))
    expected = shared_qk_attention(q, v, allowed)
    assert_allclose(to_numpy(out)[mask], expected[mask], atol=2e-5,
                    rtol=1e-4)


def test_a_query_alone_attends_itself():
    # The self score -1e5 loses to any real key, wins over padding only.
    q, v = _inputs(4)
    mask = np.array([[True, False, False, False]] * 2)
    out = lsh_attention(q, v, np.zeros((8, 1, 0), "float32"), chunk_size=4,
                        padding_mask=mask)
    assert_allclose(to_numpy(out)[:, 0], v[:, 0], atol=1e-6)


@pytest.mark.parametrize("chunk_size", [4, 5])
def test_one_round_equals_attention_over_its_sorted_windows(chunk_size):
    # The mask implied by one round, rebuilt in numpy: sort by (bucket,
    # position), chunks of `chunk_size`, each chunk sees itself and the
    # chunk before it (the first sees the last).
    length, num_buckets = 23, 4
    q, v = _inputs(length, seed=chunk_size)
    rng = np.random.default_rng(1)
    rotations = rng.normal(size=(8, 1, num_buckets // 2)).astype("float32")
    mask = np.ones((2, length), bool)
    mask[0, 19:] = False
    out = lsh_attention(q, v, rotations, chunk_size=chunk_size,
                        padding_mask=mask)
    buckets = to_numpy(lsh_buckets(q, rotations))[:, :, 0]  # (B, H, L)
    padded = length + (-length) % chunk_size
    num_chunks = padded // chunk_size
    allowed = np.zeros((2, 2, length, length), bool)
    for b in range(2):
        for h in range(2):
            # padded positions (padding and the chunk fill) sort last
            real = np.concatenate([mask[b], np.zeros(padded - length, bool)])
            keys = np.concatenate([buckets[b, h], np.zeros(padded - length,
                                                            int)])
            keys = np.where(real, keys, num_buckets)
            order = np.argsort(keys * padded + np.arange(padded),
                               kind="stable")
            chunk_of = np.empty(padded, int)
            chunk_of[order] = np.arange(padded) // chunk_size
            for i in range(length):
                for j in range(length):
                    d = (chunk_of[i] - chunk_of[j]) % num_chunks
                    allowed[b, h, i, j] = d in (0, 1) and mask[b, j]
    expected = shared_qk_attention(q, v, allowed)
    assert_allclose(to_numpy(out)[mask], expected[mask], atol=2e-5,
                    rtol=1e-4)


def test_buckets_are_the_argmax_of_the_rotations():
    q, _ = _inputs(10)
    rotations = np.random.default_rng(2).normal(size=(8, 2, 3))
    rotations = rotations.astype("float32")
    buckets = to_numpy(lsh_buckets(q, rotations))  # (B, H, R, L)
    rotated = np.einsum("blhd,dri->bhrli", q, rotations)
    expected = np.argmax(np.concatenate([rotated, -rotated], -1), -1)
    np.testing.assert_array_equal(buckets, expected)
    assert buckets.max() < 6 and buckets.min() >= 0


def test_padding_does_not_move_the_real_positions_windows():
    length = 24
    q, v = _inputs(length, seed=4)
    rotations = np.random.default_rng(3).normal(size=(8, 2, 2))
    rotations = rotations.astype("float32")
    mask = np.ones((2, length), bool)
    mask[1, 15:] = False
    junk_q, junk_v = q.copy(), v.copy()
    junk_q[~mask] = 7.0
    junk_v[~mask] = -7.0
    a = to_numpy(lsh_attention(q, v, rotations, 6, mask))
    b = to_numpy(lsh_attention(junk_q, junk_v, rotations, 6, mask))
    np.testing.assert_allclose(a[mask], b[mask], atol=1e-5)
