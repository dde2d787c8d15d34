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


def numpy_lra_reformer_layer(layer, x):
    """LRA's `ReformerAttention.apply` in numpy, step by step, float64
    (google-research/long-range-arena
    `models/reformer/reformer_attention.py`: `hash_vectors` lines 79-110,
    `lsh_attention_single_head` 128-215, `apply` 301-339), with the
    layer's weights and rotations."""
    batch, length, _ = x.shape
    # chunk_len 10, a whole chunk if it divides (with other than 10
    # buckets, a multiple of both: the layer's extension)
    chunk = np.lcm(10, 2 * layer.lsh_rotations.shape[2])
    extra = chunk - length % chunk
    x = np.pad(x, ((0, 0), (0, extra), (0, 0))).astype(np.float64)
    padded = length + extra

    def project(dense):
        out = np.einsum("blc,chd->blhd", x, to_numpy(dense.kernel))
        return out if dense.bias is None else out + to_numpy(dense.bias)

    query, value = project(layer.query_dense), project(layer.value_dense)
    heads, qdim = query.shape[2:]
    rotations = to_numpy(layer.lsh_rotations).astype(np.float64)
    n_hashes, n_buckets = rotations.shape[1], 2 * rotations.shape[2]

    def single_head(q, v):
        rotated = np.einsum("tf,fhi->hti", q, rotations)
        rotated = np.concatenate([rotated, -rotated], axis=-1)
        buckets = np.argmax(rotated, axis=-1)
        buckets = (buckets + np.arange(n_hashes)[:, None] * n_buckets)
        buckets = buckets.reshape(-1)
        ticker = np.arange(n_hashes * padded)
        sticker = np.argsort(padded * buckets + ticker % padded,
                             kind="stable")
        undo_sort = np.argsort(sticker, kind="stable")
        st = sticker % padded
        chunk_size = n_hashes * n_buckets
        bq = q[st].reshape(chunk_size, -1, qdim)
        bv = v[st].reshape(chunk_size, -1, qdim)

        def look_one_back(t):
            return np.concatenate([t, np.concatenate([t[-1:], t[:-1]])], 1)

        bk, bv = look_one_back(bq), look_one_back(bv)
        dots = np.einsum("hie,hje->hij", bq, bk) * qdim ** 0.5
        peak = dots.max(-1, keepdims=True)
        lse = peak + np.log(np.exp(dots - peak).sum(-1, keepdims=True))
        out = np.matmul(np.exp(dots - lse), bv).reshape(-1, qdim)
        out = out[undo_sort].reshape(n_hashes, padded, qdim)
        logits = lse.reshape(-1)[undo_sort].reshape(n_hashes, padded, 1)
        probs = np.exp(logits - logits.max(0))
        probs /= probs.sum(0)
        return (out * probs).sum(0)

    out = np.stack([np.stack([single_head(query[b, :, h], value[b, :, h])
                              for h in range(heads)])
                    for b in range(batch)])  # (B, H, L', d)
    return out.reshape(batch, padded, heads * qdim)[:, :length]


@pytest.mark.parametrize("length, buckets, hashes, use_bias", [
    (37, 10, 1, False), (30, 4, 2, False), (20, 4, 1, True)])
def test_lra_variant_is_lras_reformer_attention(length, buckets, hashes,
                                                use_bias):
    # with biases (this library's Path-X rows), the padded zero inputs
    # project to the biases, as LRA's would
    from lra_keras.layers import RotaryMultiHeadAttention
    layer = RotaryMultiHeadAttention(
        num_heads=2, key_dim=4, attention_type="reformer", use_rotary=False,
        use_bias=use_bias, reformer_buckets=buckets, reformer_hashes=hashes,
        reformer_variant="lra", mask_semantics="none")
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, length, 8)).astype("float32")
    layer(x)
    # no key and no output projection
    assert {w.path.split("/")[-2] for w in layer.trainable_weights} == {
        "query", "value"}
    for w in layer.trainable_weights:
        w.assign(rng.normal(size=w.shape).astype("float32") * 0.3)
    out = to_numpy(layer(x))
    assert_allclose(out, numpy_lra_reformer_layer(layer, x), atol=1e-5,
                    rtol=1e-4)
    # every layer draws the same rotations, as LRA's PRNGKey(0)
    other = RotaryMultiHeadAttention.from_config(layer.get_config())
    other(x)
    assert_allclose(other.lsh_rotations, layer.lsh_rotations, atol=0)


def test_lra_variant_refuses_what_its_code_cannot_do():
    from lra_keras.layers import RotaryMultiHeadAttention
    from lra_keras.layers.lsh_attention import lra_lsh_attention
    with pytest.raises(ValueError, match="mask_semantics='none'"):
        RotaryMultiHeadAttention(2, 4, attention_type="reformer",
                                 reformer_variant="lra")
    with pytest.raises(ValueError, match="reformer_chunk_size=None"):
        RotaryMultiHeadAttention(2, 4, attention_type="reformer",
                                 reformer_variant="lra",
                                 mask_semantics="none",
                                 reformer_chunk_size=8)
    with pytest.raises(ValueError, match="reformer_buckets >= 2"):
        RotaryMultiHeadAttention(2, 4, attention_type="reformer",
                                 reformer_variant="lra",
                                 mask_semantics="none", reformer_buckets=1)
    layer = RotaryMultiHeadAttention(
        2, 4, attention_type="reformer", reformer_variant="lra",
        mask_semantics="none")
    with pytest.raises(ValueError, match="no output projection"):
        layer.build((None, 10, 12))  # 2 heads of 4 are not 12 wide
    q, v = _inputs(12)[:2]
    with pytest.raises(ValueError, match="dividing the length"):
        lra_lsh_attention(q, v, np.ones((8, 1, 5), "float32"))


def test_lra_variant_stays_finite_in_float16():
    # Its scores |q|^2 sqrt(d) pass float16's 65504 for |q|^2 > ~23k at
    # d = 8: they are formed in float32.
    from lra_keras.layers import RotaryMultiHeadAttention
    from lra_keras.models import dtype_policy_scope
    options = dict(num_heads=2, key_dim=8, attention_type="reformer",
                   use_rotary=False, reformer_buckets=4,
                   reformer_variant="lra", mask_semantics="none")
    x = 60.0 * np.random.default_rng(0).normal(size=(2, 20, 16)).astype(
        "float32")
    reference = RotaryMultiHeadAttention(**options)
    expected = to_numpy(reference(x))
    with dtype_policy_scope("mixed_float16"):
        layer = RotaryMultiHeadAttention(**options)
        layer(x)
        layer.set_weights(reference.get_weights())
        out = to_numpy(layer(x)).astype("float32")
    assert np.isfinite(out).all()
    assert_allclose(out, expected, atol=0.02 * np.abs(expected).max())
