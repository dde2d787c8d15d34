"""The attention weights' dropout inside the blockwise attention: its
counter-based mask (`backend_utils.hashed_keep`) against a numpy
transcription, its statistics, and the chunked path with it against the
reference path dropping the same weights, values and gradients."""

import keras
import numpy as np
import pytest
from keras import ops

from lra_keras import backend_utils
from lra_keras.backend_utils import hashed_keep
from lra_keras.layers import attention_kernels as ak
from tests.testing import assert_allclose
from tests.testing import to_numpy
from tests.testing import value_and_grads

WORD = 0xFFFFFFFF


def numpy_mix(x):
    """lowbias32 on uint64 arrays holding 32-bit words."""
    x = np.asarray(x, np.uint64) & WORD
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x7FEB352D)) & WORD
    x ^= x >> np.uint64(15)
    x = (x * np.uint64(0x846CA68B)) & WORD
    return x ^ (x >> np.uint64(16))


def numpy_keep(seed, step, shape, rate):
    """`hashed_keep` in numpy: entry n kept when mix(n a + b) >= rate 2**32,
    (a, b) the block's key from the seed's words and the step."""
    s0, s1 = (np.uint64(int(s) & WORD) for s in seed)
    base = numpy_mix(numpy_mix(s0 ^ np.uint64(0x9E3779B9)) ^ s1)
    a = numpy_mix((base + np.uint64(step) * np.uint64(0x85EBCA6B)) & WORD)
    a |= np.uint64(1)
    b = numpy_mix(a ^ np.uint64(0xC2B2AE35))
    n = np.arange(int(np.prod(shape)), dtype=np.uint64)
    bits = numpy_mix((n * a + b) & WORD)
    kept = bits >= np.uint64(round(rate * 2**32))
    return np.where(kept, 1 / (1 - rate), 0.0).reshape(shape)


def numpy_masks(seed, rate, batch, heads, q_len, k_len, size, block_rows):
    """Every weight's 0 or 1 / (1 - rate), (batch, heads, Lq, Lk), as the
    chunked path draws them: block g * blocks + j holds (batch, head) rows
    g * block_rows .. and queries j * size .. (the last block padded)."""
    rows = batch * heads
    blocks = -(-q_len // size)
    full = np.zeros((rows, blocks * size, k_len))
    for g in range(rows // block_rows):
        for j in range(blocks):
            full[g * block_rows:(g + 1) * block_rows,
                 j * size:(j + 1) * size] = numpy_keep(
                seed, g * blocks + j, (block_rows, size, k_len), rate)
    return full.reshape(batch, heads, -1, k_len)[:, :, :q_len]


@pytest.mark.parametrize("seed,step", [((7, 3), 5), ((2**31 - 1, 0), 0),
                                       ((123456789, 2**20), 63)])
def test_hashed_keep_is_lowbias32_of_the_counter(seed, step):
    # The same bits on every backend (PyTorch's words are int32 there).
    got = to_numpy(hashed_keep(np.array(seed), step, (3, 16, 40), 0.1))
    assert got.dtype == np.float32
    assert_allclose(got, numpy_keep(seed, step, (3, 16, 40), 0.1), atol=0)


@pytest.mark.parametrize("slice_entries,shape", [(1000, (3, 16, 40)),
                                                 (None, (2, 700, 1024))])
def test_hashed_keep_in_slices_is_the_whole_mask(monkeypatch, slice_entries,
                                                 shape):
    # PyTorch makes the words a slice at a time (`_TORCH_KEEP_SLICE`, 2**20
    # entries); slices that do not divide the block (1000 of 1,920; 2**20
    # of 1,433,600) give the mask of the whole block.
    if slice_entries is not None:
        monkeypatch.setattr(backend_utils, "_TORCH_KEEP_SLICE",
                            slice_entries)
    got = to_numpy(hashed_keep(np.array([99, 17]), 70_000, shape, 0.3))
    assert_allclose(got, numpy_keep((99, 17), 70_000, shape, 0.3), atol=0)


def test_hashed_keep_takes_a_traced_step_and_a_dynamic_shape():
    # Inside a loop the step is a tensor; with the batch unknown a shape
    # holds a tensor.
    seed = np.array([11, 4])
    step = ops.convert_to_tensor(9, dtype="int32")
    shape = (ops.convert_to_tensor(2, dtype="int32"), 8, 24)
    assert_allclose(hashed_keep(seed, step, shape, 0.25),
                    numpy_keep(seed, 9, (2, 8, 24), 0.25), atol=0)


def test_hashed_keep_is_unbiased_and_uncorrelated():
    rate, shape = 0.1, (4, 256, 256)  # 262,144 entries a block
    masks = np.stack([to_numpy(hashed_keep(np.array(seed), step, shape,
                                           rate)) > 0
                      for seed, step in (((5, 0), 0), ((5, 0), 1),
                                         ((5, 1), 0), ((6, 0), 0))])
    n = masks[0].size
    sigma = np.sqrt(rate * (1 - rate) / n)
    assert np.all(np.abs(masks.mean(axis=(1, 2, 3)) - (1 - rate))
                  < 5 * sigma)
    # Neighbouring entries (along keys, queries, rows), and the same entry
    # of the next block, the next seed (a generator's next draw) and
    # another generator: correlations within noise (1 / sqrt(n) = 0.002).
    x = masks.reshape(4, -1).astype("float64")
    x = (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True)
    first = x[0].reshape(shape)
    pairs = [(first[..., 1:], first[..., :-1]),
             (first[:, 1:], first[:, :-1]),
             (first[1:], first[:-1])]
    pairs += [(x[0], x[i]) for i in (1, 2, 3)]
    for a, b in pairs:
        assert abs(np.mean(a * b)) < 5 / np.sqrt(n)


def _inputs(batch=2, length=37, heads=3, depth=8, seed=0):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.normal(size=(batch, length, heads, depth))
               .astype("float32") for _ in range(3))
    keys = np.ones((batch, length), bool)
    keys[1, length - 9:] = False
    return q, k, v, keys


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("block_rows,pairs", [(2, False), (6, True),
                                              (3, True)])
def test_chunked_dropout_equals_the_reference_dropping_the_same_weights(
        causal, block_rows, pairs):
    # 37 queries in blocks of 8 (the last one ragged); 2, 3 or all 6 of
    # the (batch, head) rows a block; with `pairs` the padded queries
    # attend uniformly to every key, their weights dropped too.
    rate, seed = 0.3, np.array([42, 17])
    q, k, v, keys = _inputs(seed=1)
    query_mask = keys if pairs else None
    masks = ops.convert_to_tensor(numpy_masks(seed, rate, 2, 3, 37, 37, 8,
                                              block_rows).astype("float32"))
    w = ops.convert_to_tensor(np.random.default_rng(2).normal(
        size=q.shape).astype("float32"))
    m = ops.convert_to_tensor(keys)
    qm = None if query_mask is None else ops.convert_to_tensor(query_mask)

    def chunked(q, k, v):
        return ops.sum(ak.chunked_attention(
            q, k, v, m, causal, block_size=8, block_rows=block_rows,
            query_mask=qm, dropout_rate=rate,
            dropout_seed=ops.convert_to_tensor(seed)) * w)

    def reference(q, k, v):
        return ops.sum(ak.reference_attention(
            q, k, v, m, causal, weights_dropout=lambda p: p * masks,
            query_mask=qm) * w)

    ref_value, ref_grads = value_and_grads(reference, q, k, v)
    value, grads = value_and_grads(chunked, q, k, v)
    np.testing.assert_allclose(value, ref_value, rtol=1e-5)
    for name, g, r in zip("qkv", grads, ref_grads):
        np.testing.assert_allclose(g, r, atol=3e-5, err_msg=f"d/d{name}")
    # and the weights did drop: without them the value moves
    undropped = ops.sum(ak.chunked_attention(
        q, k, v, m, causal, block_size=8, block_rows=block_rows,
        query_mask=qm) * w)
    assert abs(float(to_numpy(undropped)) - float(value)) > 1e-3


def test_chunked_dropout_is_refused_without_a_seed_or_at_rate_one():
    q, k, v, _ = _inputs()
    with pytest.raises(ValueError, match="dropout_seed"):
        ak.chunked_attention(q, k, v, dropout_rate=0.1)
    with pytest.raises(ValueError, match="dropout_rate"):
        ak.chunked_attention(q, k, v, dropout_rate=1.0,
                             dropout_seed=np.array([1, 2]))


@pytest.mark.parametrize("implementation", ["chunked", "fused"])
def test_attention_drops_a_weights_dropout_in_blocks(implementation):
    # A `WeightsDropout` takes the chunked path, "fused" included, its
    # seed the layer's generator's next draw (a plain callable's reference
    # path: test_attention_dropout.py).
    rate = 0.25
    q, k, v, keys = _inputs(seed=3)
    drop = ak.WeightsDropout(keras.layers.Dropout(rate, seed=5))
    seed = keras.layers.Dropout(rate, seed=5).seed_generator.next()
    masks = numpy_masks(to_numpy(seed), rate, 2, 3, 37, 37, 8, 3)
    out = ak.attention(q, k, v, keys, implementation=implementation,
                       block_size=8, weights_dropout=drop, block_rows=3,
                       query_mask=keys)
    expected = ak.reference_attention(
        q, k, v, keys, weights_dropout=lambda p: p * ops.convert_to_tensor(
            masks.astype("float32")), query_mask=keys)
    assert_allclose(out, expected, atol=2e-5)
    # the next call draws the next seed: other masks
    again = ak.attention(q, k, v, keys, implementation=implementation,
                         block_size=8, weights_dropout=drop, block_rows=3,
                         query_mask=keys)
    assert not np.allclose(to_numpy(again), to_numpy(out), atol=1e-3)


def test_weights_dropout_called_on_weights_is_its_layer():
    layer = keras.layers.Dropout(0.5, seed=9)
    probs = np.full((2, 3, 5, 5), 0.2, "float32")
    got = to_numpy(ak.WeightsDropout(layer)(probs))
    want = to_numpy(keras.layers.Dropout(0.5, seed=9)(probs, training=True))
    assert_allclose(got, want, atol=0)
    assert ak.WeightsDropout(layer).rate == 0.5
