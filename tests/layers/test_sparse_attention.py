import numpy as np
import pytest

from lra_keras.layers.sparse_attention import bigbird_attention
from lra_keras.layers.sparse_attention import bigbird_random_blocks
from lra_keras.layers.sparse_attention import longformer_attention
from lra_keras.layers.sparse_attention import sparse_transformer_attention
from lra_keras.layers.sparse_attention import strided_sparse_attention
from tests.testing import assert_allclose
from tests.testing import to_numpy


def dense_masked_attention(q, k, v, mask, padding_mask=None,
                           weights_rule=None):
    """softmax(q k^T / sqrt(d)) v under an explicit (heads or 1, L, L)
    mask of allowed (query, key) pairs, in float64; `weights_rule`, a
    numpy function, applied to the weights before the values."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    scores = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])
    allowed = np.broadcast_to(mask[None], scores.shape)
    if padding_mask is not None:
        allowed = allowed & padding_mask[:, None, None, :].astype(bool)
    scores = np.where(allowed, scores, -np.inf)
    # (rows without an allowed key, padded queries only, stay NaN)
    with np.errstate(invalid="ignore"):
        scores -= scores.max(-1, keepdims=True)
        weights = np.exp(scores)
        weights /= weights.sum(-1, keepdims=True)
    if weights_rule is not None:
        weights = weights_rule(weights)
    return np.einsum("bhqk,bkhd->bqhd", weights, v)


def _inputs(length, heads=2, depth=8, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=(2, length, heads, depth)).astype("float32")
                 for _ in range(3))


def _padding(length):
    mask = np.ones((2, length), bool)
    mask[1, length - length // 3:] = False
    return mask


def _assert_real_rows_equal(out, expected, padding_mask):
    real = padding_mask.astype(bool)
    assert_allclose(to_numpy(out)[real], expected[real], atol=2e-5,
                    rtol=1e-4)


def sparse_transformer_mask(length, block, c):
    # LRA's Fixed1Pattern | Fixed2Pattern, lower triangular.
    q = np.arange(length)[:, None]
    k = np.arange(length)[None, :]
    same = q // block == k // block
    summary = (k % block == 0) | (k % block >= block - c)
    return ((k <= q) & (same | summary))[None]


@pytest.mark.parametrize("length, block, c", [(40, 8, 2), (37, 8, 3),
                                              (16, 16, 4)])
def test_sparse_transformer_equals_dense_attention_under_its_mask(
        length, block, c):
    q, k, v = _inputs(length)
    padding = _padding(length)
    out = sparse_transformer_attention(q, k, v, block, c, padding)
    expected = dense_masked_attention(
        q, k, v, sparse_transformer_mask(length, block, c), padding)
    _assert_real_rows_equal(out, expected, padding)


def strided_mask(length, stride):
    # Child et al.'s A(1) (the previous l positions and the query) union
    # A(2) (every l-th position before), causal.
    q = np.arange(length)[:, None]
    k = np.arange(length)[None, :]
    return ((k <= q) & (((q - k) <= stride) | ((q - k) % stride == 0)))[
        None]


@pytest.mark.parametrize("length, stride", [(40, 8), (37, 8), (16, 16),
                                            (5, 8), (33, 4), (9, 1)])
def test_strided_sparse_transformer_equals_dense_attention_under_its_mask(
        length, stride):
    q, k, v = _inputs(length, seed=length + stride)
    padding = _padding(length)
    out = strided_sparse_attention(q, k, v, stride, padding)
    expected = dense_masked_attention(q, k, v, strided_mask(length, stride),
                                      padding)
    _assert_real_rows_equal(out, expected, padding)


def test_strided_mask_is_the_papers_pattern():
    # The oracle above, spelled out for one query: the last of L = 36 at
    # l = 6 sees itself and the 6 before it, and every 6th key before.
    mask = strided_mask(36, 6)[0]
    assert mask[35].sum() == 7 + 4  # 29..35, and 23, 17, 11, 5
    assert set(np.flatnonzero(mask[35])) == {29, 30, 31, 32, 33, 34, 35,
                                             23, 17, 11, 5}


def sparse_transformer_cls_mask(length, block, c):
    # LRA's use_cls_token: the pattern of the length - 1 positions after
    # the first, padded with a first row and column of ones
    # (sparse_attention.py lines 185-190).
    mask = np.ones((length, length), bool)
    mask[1:, 1:] = sparse_transformer_mask(length - 1, block, c)[0]
    return mask[None]


@pytest.mark.parametrize("length, block, c", [(41, 8, 2), (37, 8, 3),
                                              (17, 16, 4), (9, 4, 0),
                                              (6, 1, 0)])
def test_sparse_transformer_cls_variant_equals_dense_attention_under_lras(
        length, block, c):
    q, k, v = _inputs(length, seed=3)
    padding = _padding(length)
    out = sparse_transformer_attention(q, k, v, block, c, padding,
                                       cls_token=True)
    expected = dense_masked_attention(
        q, k, v, sparse_transformer_cls_mask(length, block, c), padding)
    _assert_real_rows_equal(out, expected, padding)


def longformer_mask(length, window, num_global, causal):
    # LRA's _build_sliding_window_mask: left w - w // 2 (with the query),
    # right w // 2; global rows and columns.
    right = window // 2
    left = window - right
    q = np.arange(length)[:, None]
    k = np.arange(length)[None, :]
    mask = ((q - k) >= -right) & ((q - k) <= left - 1)
    mask |= (q < num_global) | (k < num_global)
    if causal:
        mask &= k <= q
    return mask[None]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("length, window, num_global",
                         [(40, 8, 0), (41, 7, 1), (33, 6, 3), (10, 32, 2),
                          (16, 32, 0), (17, 32, 1), (2, 4, 0)])
def test_longformer_equals_dense_attention_under_its_mask(
        length, window, num_global, causal):
    q, k, v = _inputs(length, seed=length)
    padding = _padding(length)
    out = longformer_attention(q, k, v, window, num_global, padding, causal)
    expected = dense_masked_attention(
        q, k, v, longformer_mask(length, window, num_global, causal), padding)
    _assert_real_rows_equal(out, expected, padding)


def bigbird_mask(table, valid, num_blocks, block, length, causal):
    heads = table.shape[0]
    blocks = np.zeros((heads, num_blocks, num_blocks), bool)
    i = np.arange(num_blocks)[:, None]
    j = np.arange(num_blocks)[None, :]
    blocks |= (np.abs(i - j) <= 1) | (i == 0) | (i == num_blocks - 1)
    blocks |= (j == 0) | (j == num_blocks - 1)
    for h in range(heads):
        for row in range(num_blocks):
            blocks[h, row, table[h, row][valid[h, row]]] = True
    mask = np.repeat(np.repeat(blocks, block, 1), block, 2)
    mask = mask[:, :length, :length]
    if causal:
        mask &= np.tril(np.ones((length, length), bool))
    return mask


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("length, block, r", [(64, 4, 3), (61, 4, 2),
                                              (24, 8, 3)])
def test_bigbird_equals_dense_attention_under_its_mask(length, block, r,
                                                        causal):
    q, k, v = _inputs(length, heads=3, seed=length + r)
    padding = _padding(length)
    out = bigbird_attention(q, k, v, block, r, seed=5, padding_mask=padding,
                            causal=causal)
    n = -(-length // block)
    table, valid = bigbird_random_blocks(n, 3, r, min(length, 1024), block,
                                         seed=5)
    mask = bigbird_mask(to_numpy(table), to_numpy(valid).astype(bool), n,
                        block, length, causal)
    expected = dense_masked_attention(q, k, v, mask, padding)
    _assert_real_rows_equal(out, expected, padding)


@pytest.mark.parametrize("length", [21, 24])  # 24: a whole extra block
def test_lra_blocks_bigbird_pads_a_real_block_and_zeroes_padded_queries(
        length):
    """LRA's BigBirdAttention (google-research/long-range-arena
    `models/bigbird/bigbird_attention.py`): inputs padded by b - L % b
    zero positions counted real (lines 484-490), the padded keys masked,
    the padded queries' outputs zeroed before the output projection (line
    312), the table drawn for the padded length, the output cut to L."""
    from lra_keras.layers import RotaryMultiHeadAttention
    block, r = 4, 1
    layer = RotaryMultiHeadAttention(
        num_heads=2, key_dim=4, attention_type="bigbird", use_rotary=False,
        bigbird_block_size=block, bigbird_random_blocks=r, bigbird_seed=3,
        mask_semantics="lra_blocks")
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, length, 8)).astype("float32")
    mask = np.ones((2, length), bool)
    mask[1, 9:] = False
    mask[0, ::5] = False  # black pixels
    layer(x, padding_mask=mask)
    for w in layer.weights:  # nonzero biases: the padded keys' values
        w.assign(rng.normal(size=w.shape).astype("float32") * 0.5)
    out = to_numpy(layer(x, padding_mask=mask))

    extra = block - length % block
    padded = length + extra
    xp = np.pad(x, ((0, 0), (0, extra), (0, 0)))
    real = np.pad(mask, ((0, 0), (0, extra)), constant_values=True)

    def project(dense):
        kernel, bias = (to_numpy(w) for w in dense.weights)
        return np.einsum("blc,chd->blhd", xp, kernel) + bias

    q, k, v = (project(d) for d in (layer.query_dense, layer.key_dense,
                                    layer.value_dense))
    n = padded // block
    table, valid = bigbird_random_blocks(n, 2, r, min(padded, 1024), block,
                                         seed=3)
    pattern = bigbird_mask(to_numpy(table), to_numpy(valid).astype(bool), n,
                           block, padded, False)
    y = dense_masked_attention(q, k, v, pattern, real)
    y = np.where(real[:, :, None, None], y, 0.0)
    kernel, bias = (to_numpy(w) for w in layer.output_dense.weights)
    expected = np.einsum("blhd,hdc->blc", y, kernel) + bias
    assert_allclose(out, expected[:, :length], atol=2e-5, rtol=1e-4)


def test_bigbird_random_blocks_follow_lras_rules():
    # Middle blocks draw distinct blocks among [1, n - 2], never their
    # neighbours, only below last_idx // b - 1 (LRA: last_idx = min(L,
    # 1024)); the same table at every call for a seed, per head.
    n, heads, r, block = 40, 4, 3, 64
    table, valid = bigbird_random_blocks(n, heads, r, 1024, block, seed=1)
    table, valid = to_numpy(table), to_numpy(valid).astype(bool)
    again = to_numpy(bigbird_random_blocks(n, heads, r, 1024, block,
                                           seed=1)[0])
    np.testing.assert_array_equal(table, again)
    last = 1024 // block - 1
    for h in range(heads):
        for i in range(1, n - 1):
            drawn = table[h, i][valid[h, i]]
            assert len(set(drawn)) == len(drawn)
            assert np.all((drawn >= 1) & (drawn < last))
            assert np.all(np.abs(drawn - i) > 1)
            available = [j for j in range(1, min(n - 1, last))
                         if abs(j - i) > 1]
            assert len(drawn) == min(r, len(available))
    # Heads draw different tables.
    assert not np.array_equal(table[0], table[1])


def test_sparse_patterns_ignore_padded_keys():
    length = 48
    q, k, v = _inputs(length, seed=3)
    padding = _padding(length)
    junk_k, junk_v = k.copy(), v.copy()
    junk_k[~padding] = 50.0
    junk_v[~padding] = -50.0
    for fn in (lambda *a: sparse_transformer_attention(*a, 8, 2, padding),
               lambda *a: longformer_attention(*a, 8, 2, padding),
               lambda *a: bigbird_attention(*a, 8, 2, padding_mask=padding)):
        a = to_numpy(fn(q, k, v))
        b = to_numpy(fn(q, junk_k, junk_v))
        np.testing.assert_allclose(a[padding], b[padding], atol=1e-5)
