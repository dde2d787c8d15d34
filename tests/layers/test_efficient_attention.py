import keras
import numpy as np
import pytest
from keras import ops

from lra_keras.layers import RotaryMultiHeadAttention
from lra_keras.layers import efficient_attention as ea
from tests.layers.test_attention_kernels import _inputs
from tests.layers.test_attention_kernels import numpy_attention
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import to_numpy


def numpy_kernelized(phi_q, phi_k, v, mask=None, causal=False, eps=1e-6):
    """`sum_j (phi_q_i . phi_k_j) v_j / (sum_j phi_q_i . phi_k_j + eps)`
    over the allowed keys, with the (L, L) weights written out."""
    weights = np.einsum("bqhm,bkhm->bhqk", phi_q, phi_k)
    allowed = np.ones(weights.shape, bool)
    if mask is not None:
        allowed &= mask[:, None, None, :]
    if causal:
        allowed &= np.tril(np.ones(weights.shape[-2:], bool))
    weights = np.where(allowed, weights, 0.0)
    out = np.einsum("bhqk,bkhd->bqhd", weights, v)
    return out / (np.transpose(weights.sum(-1), (0, 2, 1))[..., None] + eps)


def numpy_elu1(x):
    return np.where(x > 0, x + 1.0, np.exp(x))


@pytest.mark.parametrize("causal", [False, True])
def test_linear_attention_matches_its_explicit_formula(causal):
    # 70 positions in blocks of 16: the causal prefix sums cross four
    # block boundaries and a padded last block.
    q, k, v, mask = _inputs(length=70)
    out = ea.kernelized_attention(numpy_elu1(q), numpy_elu1(k), v, mask,
                                  causal=causal, chunk_size=16)
    expected = numpy_kernelized(numpy_elu1(q), numpy_elu1(k), v, mask, causal)
    assert_allclose(out, expected, atol=1e-5, rtol=1e-4)
    assert_allclose(ea.linear_attention(q, k, v, mask, causal), expected,
                    atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("causal", [False, True])
def test_relu_kernel_performer_matches_lras_generalized_attention(causal):
    # LRA's default Performer (performer_attention.py lines 163-197,
    # 263-309): features relu(x) + 1e-3 of the queries and keys
    # themselves, renormalised; no random matrix.
    q, k, v, mask = _inputs(length=70)

    def phi(x):
        return np.maximum(x, 0.0) + 1e-3

    expected = numpy_kernelized(phi(q), phi(k), v, mask, causal)
    assert_allclose(ea.relu_kernel_attention(q, k, v, mask, causal),
                    expected, atol=1e-5, rtol=1e-4)
    # the layer: no random features among its weights, the formula on its
    # own projections
    layer = RotaryMultiHeadAttention(
        num_heads=2, key_dim=4, attention_type="performer",
        performer_kernel="relu", use_rotary=False, causal=causal)
    x = np.random.default_rng(5).normal(size=(2, 30, 8)).astype("float32")
    out = to_numpy(layer(x, training=True))
    assert "random_features" not in [w.name for w in layer.weights]
    project = [to_numpy(ops.einsum("bld,dhk->blhk", x, dense.kernel))
               + to_numpy(dense.bias) for dense in
               (layer.query_dense, layer.key_dense, layer.value_dense)]
    attended = numpy_kernelized(phi(project[0]), phi(project[1]),
                                project[2], None, causal)
    expected = (np.einsum("blhk,hkd->bld", attended,
                          to_numpy(layer.output_dense.kernel))
                + to_numpy(layer.output_dense.bias))
    assert_allclose(out, expected, atol=1e-4, rtol=1e-4)
    assert_config_round_trip(layer)
    with pytest.raises(ValueError, match="`performer_kernel` must be one"):
        RotaryMultiHeadAttention(2, 4, attention_type="performer",
                                 performer_kernel="exp")


def test_kernelized_attention_ignores_padded_keys():
    q, k, v, mask = _inputs(length=40)
    out = to_numpy(ea.linear_attention(q, k, v, mask))
    k2, v2 = k.copy(), v.copy()
    k2[~mask], v2[~mask] = 7.0, -3.0
    assert_allclose(ea.linear_attention(q, k2, v2, mask), out, atol=1e-6)


def test_orthogonal_matrix_blocks_are_orthogonal_with_the_chosen_norms():
    d = 8
    m = to_numpy(ea.gaussian_orthogonal_matrix(20, d, seed=1, scaling=1))
    assert m.shape == (20, d)
    assert_allclose(np.linalg.norm(m, axis=1), np.full(20, np.sqrt(d)),
                    atol=1e-5)
    for block in (m[:8], m[8:16], m[16:]):
        gram = block @ block.T / d
        assert_allclose(gram, np.eye(len(block)), atol=1e-5)
    rows = to_numpy(ea.gaussian_orthogonal_matrix(8, d, seed=2, scaling=0))
    # scaling 0: the norms are those of Gaussian vectors, not all equal.
    assert np.ptp(np.linalg.norm(rows, axis=1)) > 0.1


def test_performer_features_estimate_the_softmax_kernel_without_bias():
    # E[phi(q) . phi(k)] = exp(q . k / sqrt(d)) for the plain estimator
    # (no stabiliser, no eps); the mean over 400 independent matrices of
    # 16 features sits within 4 standard errors of it.
    rng = np.random.default_rng(0)
    d = 4
    q = (0.5 * rng.normal(size=(1, 3, 1, d))).astype("float32")
    k = (0.5 * rng.normal(size=(1, 3, 1, d))).astype("float32")
    exact = np.exp(np.einsum("bqhd,bkhd->qk", q, k) / np.sqrt(d))
    seed = keras.random.SeedGenerator(3)
    draws = []
    for _ in range(400):
        w = ea.gaussian_orthogonal_matrix(16, d, seed=seed)
        fq = to_numpy(ea.softmax_kernel_features(q, w, True, 0.0, False))
        fk = to_numpy(ea.softmax_kernel_features(k, w, False, 0.0, False))
        draws.append(np.einsum("bqhm,bkhm->qk", fq, fk))
    draws = np.stack(draws)
    error = np.abs(draws.mean(0) - exact)
    assert np.all(error < 4 * draws.std(0) / np.sqrt(len(draws)) + 1e-6)


def test_performer_attention_converges_to_softmax_attention():
    q, k, v, _ = _inputs(length=24, heads=2, depth=8)
    q, k = 0.3 * q, 0.3 * k
    exact = numpy_attention(q, k, v)

    def error(features, seed):
        w = ea.gaussian_orthogonal_matrix(features, 8, seed=seed)
        return np.abs(to_numpy(ea.performer_attention(q, k, v, w)) - exact
                      ).mean()

    few = np.mean([error(4, s) for s in range(5)])
    many = np.mean([error(2048, s) for s in range(5)])
    assert many < 0.02 and many < few / 4, (few, many)


@pytest.mark.parametrize("causal", [False, True])
def test_performer_attention_in_bfloat16_is_computed_in_float32(causal):
    # Under a mixed policy the FAVOR+ features (an exponential, whose
    # argument's bfloat16 rounding it amplifies) and their sums are
    # float32: bfloat16 inputs give the float32 computation on the same
    # values, cast to bfloat16, bit for bit. In bfloat16 throughout,
    # TensorFlow's logits of a one-block ListOps Performer were 2.2% of
    # their scale off float32 (an AVX2 CPU), against 1.7% now.
    q, k, v, mask = _inputs(length=24, heads=2, depth=8)
    w = ea.gaussian_orthogonal_matrix(16, 8, seed=1)
    q, k, v = (ops.cast(t, "bfloat16") for t in (q, k, v))
    out = ea.performer_attention(q, k, v, w, mask, causal=causal)
    assert keras.backend.standardize_dtype(out.dtype) == "bfloat16"
    expected = ea.performer_attention(
        *(ops.cast(t, "float32") for t in (q, k, v)), w, mask,
        causal=causal)
    np.testing.assert_array_equal(
        to_numpy(ops.cast(out, "float32")),
        to_numpy(ops.cast(ops.cast(expected, "bfloat16"), "float32")))


def test_linformer_with_an_identity_projection_is_full_attention():
    q, k, v, _ = _inputs(length=32)
    identity = np.eye(40, 32, dtype="float32")  # max_length 40 >= L
    out = ea.linformer_attention(q, k, v, identity)
    assert_allclose(out, numpy_attention(q, k, v), atol=1e-5, rtol=1e-4)


def test_linformer_ignores_padded_keys_and_values():
    q, k, v, mask = _inputs(length=32)
    e = np.random.default_rng(0).normal(size=(32, 8)).astype("float32")
    out = to_numpy(ea.linformer_attention(q, k, v, e, mask))
    k2, v2 = k.copy(), v.copy()
    k2[~mask], v2[~mask] = 5.0, 5.0
    assert_allclose(ea.linformer_attention(q, k2, v2, e, mask), out,
                    atol=1e-5)


def test_linformer_refuses_causal_attention_and_a_missing_length():
    with pytest.raises(ValueError, match="cannot be causal"):
        RotaryMultiHeadAttention(2, 4, attention_type="linformer",
                                 causal=True, max_length=16)
    with pytest.raises(ValueError, match="max_length"):
        RotaryMultiHeadAttention(2, 4, attention_type="linformer")
    layer = RotaryMultiHeadAttention(2, 4, attention_type="linformer",
                                     max_length=16, use_rotary=False)
    with pytest.raises(ValueError, match="no longer than its projection"):
        layer(np.zeros((1, 20, 8), "float32"))


# Small patterns for the block-sparse attentions (layers.sparse_attention)
SMALL_SPARSE = dict(sparse_block_size=8, sparse_summary_size=2,
                    longformer_window=6, longformer_global_tokens=1,
                    bigbird_block_size=4, bigbird_random_blocks=2,
                    reformer_buckets=4, reformer_hashes=2,
                    reformer_chunk_size=5)


@pytest.mark.parametrize("attention_type", ["linear", "performer", "local",
                                            "synthesizer",
                                            "linformer", "sparse_transformer",
                                            "longformer", "bigbird",
                                            "reformer", "sinkhorn"])
def test_efficient_attention_layers_save_and_ignore_padding(attention_type,
                                                            tmp_path):
    layer = RotaryMultiHeadAttention(
        num_heads=2, key_dim=4, attention_type=attention_type,
        num_random_features=16, max_length=24, use_rotary=False,
        local_block_size=5, **SMALL_SPARSE,
        causal=False)
    x = np.random.default_rng(0).normal(size=(2, 24, 8)).astype("float32")
    mask = np.ones((2, 24), bool)
    mask[1, 15:] = False
    out = to_numpy(layer(x, padding_mask=mask))
    x2 = x.copy()
    x2[1, 15:] = 9.0
    assert_allclose(layer(x2, padding_mask=mask)[:, :15], out[:, :15],
                    atol=1e-5)
    assert_config_round_trip(layer)
    inputs = keras.Input((24, 8))
    model = keras.Model(inputs, layer(inputs))
    assert_saving_round_trip(model, x, tmp_path, atol=1e-5)


def test_strided_sparse_transformer_layer_saves_and_refuses_a_cls_token(
        tmp_path):
    layer = RotaryMultiHeadAttention(
        num_heads=2, key_dim=4, attention_type="sparse_transformer",
        sparse_pattern="strided", sparse_block_size=5, use_rotary=False)
    x = np.random.default_rng(2).normal(size=(2, 24, 8)).astype("float32")
    mask = np.ones((2, 24), bool)
    mask[1, 15:] = False
    out = to_numpy(layer(x, padding_mask=mask))
    x2 = x.copy()
    x2[:, 20:] = 9.0  # later positions: the pattern is causal
    assert_allclose(layer(x2, padding_mask=mask)[:, :20], out[:, :20],
                    atol=1e-5)
    fixed = RotaryMultiHeadAttention(
        num_heads=2, key_dim=4, attention_type="sparse_transformer",
        sparse_block_size=5, sparse_summary_size=1, use_rotary=False)
    fixed(x)
    fixed.set_weights(layer.get_weights())
    assert not np.allclose(to_numpy(fixed(x)), to_numpy(layer(x)))
    assert_config_round_trip(layer)
    inputs = keras.Input((24, 8))
    assert_saving_round_trip(keras.Model(inputs, layer(inputs)), x, tmp_path,
                             atol=1e-5)
    with pytest.raises(ValueError, match="no class-token variant"):
        RotaryMultiHeadAttention(2, 4, attention_type="sparse_transformer",
                                 sparse_pattern="strided",
                                 sparse_cls_token=True)
    with pytest.raises(ValueError, match="`sparse_pattern` must be one of"):
        RotaryMultiHeadAttention(2, 4, attention_type="sparse_transformer",
                                 sparse_pattern="dilated")


def test_performer_redraws_features_in_training_only():
    layer = RotaryMultiHeadAttention(2, 4, attention_type="performer",
                                     num_random_features=8)
    x = np.random.default_rng(0).normal(size=(1, 12, 8)).astype("float32")
    first = to_numpy(layer(x))
    assert_allclose(layer(x), first)
    assert not np.allclose(to_numpy(layer(x, training=True)), first)
    still = RotaryMultiHeadAttention(2, 4, attention_type="performer",
                                     num_random_features=8,
                                     feature_redraw=False)
    assert_allclose(still(x, training=True), still(x))


@pytest.mark.parametrize("attention_type", ["linear", "performer", "local",
                                            "sparse_transformer",
                                            "longformer", "bigbird"])
def test_causal_efficient_layers_ignore_the_future(attention_type):
    layer = RotaryMultiHeadAttention(2, 4, attention_type=attention_type,
                                     causal=True, num_random_features=16,
                                     **SMALL_SPARSE)
    x = np.random.default_rng(1).normal(size=(1, 80, 8)).astype("float32")
    out = to_numpy(layer(x))
    x2 = x.copy()
    x2[:, 50:] = -2.0
    assert_allclose(layer(x2)[:, :50], out[:, :50], atol=1e-5)
    assert ops.shape(out) == (1, 80, 8)


def numpy_local(q, k, v, mask, block, layout, causal):
    """Dense softmax attention under the explicit block mask."""
    length = q.shape[1]
    groups = -(-length // block)
    pos = np.arange(length)
    group = pos // block if layout == "contiguous" else pos % groups
    allowed = (group[:, None] == group[None, :])[None] & mask[:, None, :]
    if causal:
        allowed &= pos[None, :, None] >= pos[None, None, :]
    scores = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])
    scores = np.where(allowed[:, None], scores, -np.inf)
    with np.errstate(invalid="ignore"):  # padded queries of padded groups
        p = np.exp(scores - scores.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", p, v)


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
@pytest.mark.parametrize("causal", [False, True])
def test_local_attention_is_dense_attention_under_its_block_mask(layout,
                                                                  causal):
    # 70 positions in blocks of 8: 9 groups, the last one padded.
    q, k, v, mask = _inputs(length=70)
    out = to_numpy(ea.local_attention(q, k, v, 8, mask, causal, layout))
    expected = numpy_local(q, k, v, mask, 8, layout, causal)
    assert_allclose(out[mask], expected[mask], atol=1e-5, rtol=1e-4)


def test_strided_local_groups_are_lra_reshape():
    # LRA's LocalAttention: jnp.reshape(query, (bs, block_size, n, ...)),
    # attention over axis 1: group j holds positions i * n + j.
    length, block = 12, 3
    groups = length // block
    positions = np.arange(length).reshape(block, groups)
    for j in range(groups):
        assert list(positions[:, j]) == [i * groups + j for i in range(block)]
    q = np.zeros((1, length, 1, 2), "float32")
    v = np.arange(length, dtype="float32").reshape(1, length, 1, 1)
    v = np.repeat(v, 2, axis=-1)
    out = to_numpy(ea.local_attention(q, q, v, block, layout="strided"))
    # equal scores: each output is the mean of its group's values
    expected = [np.mean([i * groups + p % groups for i in range(block)])
                for p in range(length)]
    assert_allclose(out[0, :, 0, 0], expected, atol=1e-5)


def numpy_lra_block_pairs(mask, groups, block):
    """LRA's masks within blocks: the mask reshaped into contiguous blocks,
    flax's pair mask in each (`make_padding_mask`): (B, n, b, b)."""
    blocks = mask.reshape(-1, block)
    return (blocks[:, :, None] & blocks[:, None, :]).reshape(
        -1, groups, block, block)


def numpy_lra_softmax(scores, allowed):
    """Softmax under LRA's -1e10 bias where `allowed` is not positive, in
    float32 as LRA's: a row with nothing allowed attends uniformly
    (-1e10 + score rounds to -1e10)."""
    bias = np.where(allowed > 0, 0.0, -1e10).astype("float32")
    scores = scores.astype("float32") + bias
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return weights / weights.sum(-1, keepdims=True)


def numpy_lra_local_layer(layer, x, mask):
    """LRA's `LocalAttention.apply` in numpy, step by step
    (google-research/long-range-arena `models/local/local_attention.py`,
    lines 228-237, 318-356, 379-413), with the layer's weights."""
    block = layer.local_block_size
    batch, length, _ = x.shape
    extra = block - length % block  # a whole block when it divides
    x = np.pad(x, ((0, 0), (0, extra), (0, 0)))
    # jnp.pad(bool mask, constant_values=-1e9): True
    mask = np.pad(mask, ((0, 0), (0, extra)), constant_values=True)
    padded = length + extra
    groups = padded // block

    def project(dense):
        kernel, bias = (to_numpy(w) for w in dense.weights)
        return np.einsum("blc,chd->blhd", x, kernel) + bias

    q, k, v = (project(d) for d in (layer.query_dense, layer.key_dense,
                                    layer.value_dense))
    heads, depth = q.shape[2:]
    # (bs, block_size, num_query_blocks, heads, depth), attention over 1
    q, k, v = (t.reshape(batch, block, groups, heads, depth)
               for t in (q, k, v))
    pairs = numpy_lra_block_pairs(mask, groups, block)[:, :, None]
    scores = np.einsum("bignd,bkgnd->bgnik", q / np.sqrt(depth), k)
    weights = numpy_lra_softmax(scores, pairs)
    y = np.einsum("bgnik,bkgnd->bignd", weights, v).reshape(
        batch, padded, heads, depth)
    kernel, bias = (to_numpy(w) for w in layer.output_dense.weights)
    return (np.einsum("blhd,hdc->blc", y, kernel) + bias)[:, :length]


def assert_reads_the_padding(layer, x, mask, out):
    """`out`, the `"lra_blocks"` layer's, differs on the real tokens of
    row 1 (real up to 11) from the same layer's under `"keys"`; the
    layer's config round-trips."""
    keys = RotaryMultiHeadAttention.from_config(
        {**layer.get_config(), "mask_semantics": "keys"})
    keys(x, padding_mask=mask)
    keys.set_weights(layer.get_weights())
    assert not np.allclose(to_numpy(keys(x, padding_mask=mask))[1, :11],
                           out[1, :11], atol=1e-3)
    assert_config_round_trip(layer)


@pytest.mark.parametrize("length", [23, 25])  # 25: a whole extra block
def test_lra_blocks_local_attention_is_lras_local_attention(length):
    layer = RotaryMultiHeadAttention(
        num_heads=2, key_dim=4, attention_type="local", use_rotary=False,
        local_block_size=5, local_layout="strided",
        mask_semantics="lra_blocks")
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, length, 8)).astype("float32")
    mask = np.ones((3, length), bool)
    mask[1, 11:] = False  # padding at the end, as ListOps
    mask[2, ::3] = False  # scattered, as the black pixels of Pathfinder
    layer(x, padding_mask=mask)
    for w in layer.weights:  # nonzero biases: the padded keys' values
        w.assign(rng.normal(size=w.shape).astype("float32") * 0.5)
    out = to_numpy(layer(x, padding_mask=mask))
    assert_allclose(out, numpy_lra_local_layer(layer, x, mask), atol=1e-5,
                    rtol=1e-4)
    # the real queries of row 1 read its padding: not the "keys" layer's
    assert_reads_the_padding(layer, x, mask, out)


@pytest.mark.parametrize("semantics", ["keys", "lra_blocks"])
def test_local_attention_stays_finite_in_float16(semantics):
    # Under lra_blocks real queries of a group whose block is padding
    # mask every key: float16's -1e9 would be -inf there, and NaN.
    from lra_keras.models import dtype_policy_scope
    x = np.random.default_rng(0).normal(size=(2, 23, 8)).astype("float32")
    mask = np.ones((2, 23), bool)
    mask[1, 11:] = False
    options = dict(num_heads=2, key_dim=4, attention_type="local",
                   use_rotary=False, local_block_size=5,
                   local_layout="strided", mask_semantics=semantics)
    reference = RotaryMultiHeadAttention(**options)
    expected = to_numpy(reference(x, padding_mask=mask))
    with dtype_policy_scope("mixed_float16"):
        layer = RotaryMultiHeadAttention(**options)
        layer(x, padding_mask=mask)
        layer.set_weights(reference.get_weights())
        out = to_numpy(layer(x, padding_mask=mask)).astype("float32")
    assert np.isfinite(out).all()
    assert_allclose(out[mask], expected[mask], atol=0.01 * np.abs(
        expected).max())


def test_lra_blocks_is_the_local_bigbird_and_sinkhorn_attentions_alone():
    with pytest.raises(ValueError, match="lra_blocks"):
        RotaryMultiHeadAttention(2, 4, attention_type="softmax",
                                 mask_semantics="lra_blocks")
    # the method's sorting needs a sort logit per block
    with pytest.raises(ValueError, match="sinkhorn_max_blocks"):
        RotaryMultiHeadAttention(2, 4, attention_type="sinkhorn",
                                 max_length=30, local_block_size=5,
                                 sinkhorn_max_blocks=5)
    with pytest.raises(ValueError, match="sort logit per block"):
        ea.sinkhorn_attention(*_inputs(length=30)[:3],
                              np.ones((4, 5), "float32"), None, 5)
    with pytest.raises(ValueError, match="multiple of block_size"):
        ea.local_attention(*_inputs(length=12)[:3], 5, block_pairs=True)


def numpy_synthetic_attention(layer, x, logits):
    """softmax(logits) V through the layer's value and output projections
    (no biases): logits (B or 1, H, L, L), -inf where a key is masked."""
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    weights = np.broadcast_to(weights, (len(x),) + weights.shape[1:])
    v = np.einsum("bld,dhk->blhk", x, to_numpy(layer.value_dense.kernel))
    heads = np.einsum("bhqk,bkhd->bqhd", weights, v)
    return np.einsum("blhk,hkd->bld", heads,
                     to_numpy(layer.output_dense.kernel))


def test_random_synthesizer_without_dot_products_ignores_the_input():
    # softmax(R[h, :L, :L]) V: the weights are the learned matrix alone.
    layer = RotaryMultiHeadAttention(
        2, 4, attention_type="synthesizer", max_length=20, use_rotary=False,
        synthesizer_dot_product=False, use_bias=False)
    x = np.random.default_rng(0).normal(size=(2, 16, 8)).astype("float32")
    out = to_numpy(layer(x))
    r = to_numpy(layer.random_logits)[None, :, :16, :16]
    assert_allclose(out, numpy_synthetic_attention(layer, x, r), atol=1e-5)
    # changing the queries' and keys' projections changes nothing
    layer.query_dense.kernel.assign(
        2.0 * to_numpy(layer.query_dense.kernel) + 1.0)
    assert_allclose(layer(x), out, atol=1e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_dense_synthesizer_is_softmax_of_an_mlp_of_each_position(causal):
    # Tay et al. 2020 (dense): B_i = W2 relu(W1 x_i) holds position i's
    # logits over every key position (no biases, as LRA's attention
    # passes bias=False, synthesizer_attention.py lines 311-335); the
    # weights are softmax(B[:, :L]) and the output is those weights times
    # V, with no dot products. Padded (and, when causal, later) keys get
    # none.
    L, max_length = 14, 20
    layer = RotaryMultiHeadAttention(
        2, 4, attention_type="synthesizer", max_length=max_length,
        use_rotary=False, synthesizer_mode="dense", causal=causal,
        synthesizer_dot_product=False, use_bias=False)
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, L, 8)).astype("float32")
    mask = np.ones((2, L), bool)
    mask[1, 9:] = False
    out = to_numpy(layer(x, padding_mask=mask))
    w1 = to_numpy(layer.dense_hidden.kernel)  # (D, H, K)
    w2 = to_numpy(layer.dense_logits.kernel)  # (K, max_length)
    hidden = np.maximum(np.einsum("bld,dhk->blhk", x, w1), 0.0)
    logits = np.einsum("blhk,km->bhlm", hidden, w2)[..., :L]
    allowed = np.broadcast_to(mask[:, None, None, :], logits.shape)
    if causal:
        allowed = allowed & np.tril(np.ones((L, L), bool))
    logits = np.where(allowed, logits, -np.inf)
    assert_allclose(out, numpy_synthetic_attention(layer, x, logits),
                    atol=1e-5)
    # without dot products the keys' projection changes nothing
    layer.key_dense.kernel.assign(2.0 * to_numpy(layer.key_dense.kernel))
    assert_allclose(layer(x, padding_mask=mask), out, atol=1e-6)


def test_synthesizer_adds_its_logits_to_the_dot_products():
    q, k, v, mask = _inputs(length=12)
    r = np.random.default_rng(1).normal(size=(1, 3, 12, 12))
    out = ea.synthesizer_attention(q, k, v, r.astype("float32"), mask)
    scores = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1]) + r
    scores = np.where(mask[:, None, None, :], scores, -np.inf)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    assert_allclose(out, np.einsum("bhqk,bkhd->bqhd", p, v), atol=1e-5)


@pytest.mark.parametrize("mode", ["factorized_random", "dense",
                                  "dense+random"])
def test_synthesizer_modes_build_save_and_respect_causality(mode, tmp_path):
    layer = RotaryMultiHeadAttention(
        2, 4, attention_type="synthesizer", max_length=24, causal=True,
        synthesizer_mode=mode, synthesizer_rank=3)
    x = np.random.default_rng(2).normal(size=(1, 24, 8)).astype("float32")
    out = to_numpy(layer(x))
    x2 = x.copy()
    x2[:, 12:] = 3.0
    assert_allclose(layer(x2)[:, :12], out[:, :12], atol=1e-5)
    inputs = keras.Input((24, 8))
    model = keras.Model(inputs, layer(inputs))
    assert_saving_round_trip(model, x, tmp_path, atol=1e-5)
    with pytest.raises(ValueError, match="no longer than"):
        layer(np.zeros((1, 30, 8), "float32"))


def test_attention_options_are_the_attention_layers_defaults():
    import inspect

    from lra_keras.layers.rotary_attention import ATTENTION_OPTIONS

    parameters = inspect.signature(RotaryMultiHeadAttention).parameters
    assert {k: parameters[k].default for k in ATTENTION_OPTIONS} == (
        ATTENTION_OPTIONS)


def test_a_causal_reformer_is_a_clear_error():
    with pytest.raises(ValueError, match="cannot be causal"):
        RotaryMultiHeadAttention(2, 4, attention_type="reformer",
                                 causal=True)


def numpy_sinkhorn(q, k, v, kernel, bias, block, mask, layout, sort,
                   iterations, sorting="permutation"):
    """The Sinkhorn attention from its definition, in float64 loops: each
    group's own softmax attention plus softmax attention over its sorted
    group, sum_k P[k, l] K_k (`sorting="permutation"`) or, LRA's,
    (sum_l P[g, l]) sum_k K_k for every group g (`"lra"`)."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    batch, length, heads, depth = q.shape
    n = -(-length // block)
    padded = n * block
    pos = np.arange(padded)
    group = pos // block if layout == "contiguous" else pos % n
    slot = pos % block if layout == "contiguous" else pos // n
    real = np.zeros((batch, padded), bool)
    real[:, :length] = mask
    out = np.zeros((batch, padded, heads, depth))

    def pad(t):
        return np.concatenate([t, np.zeros((batch, padded - length, heads,
                                            depth))], 1)

    q, k, v = pad(q), pad(k), pad(v)
    k = k * real[..., None, None]
    v = v * real[..., None, None]
    kg = np.zeros((batch, n, block, heads, depth))
    vg, rg = np.zeros_like(kg), np.zeros((batch, n, block))
    kg[:, group, slot], vg[:, group, slot] = k, v
    rg[:, group, slot] = real
    for b in range(batch):
        for h in range(heads):
            logits = kg[b, :, :, h].sum(1) @ kernel[:, :n] + bias[:n]
            if sort == "sinkhorn":
                for _ in range(iterations):
                    logits -= np.log(np.exp(logits).sum(1, keepdims=True))
                    logits -= np.log(np.exp(logits).sum(0, keepdims=True))
                perm = np.exp(logits)
            else:
                perm = np.exp(logits - logits.max(1, keepdims=True))
                perm /= perm.sum(1, keepdims=True)
            if sorting == "lra":
                weight = perm.sum(1)[:, None, None]
                sk = weight * kg[b, :, :, h].sum(0)
                sv = weight * vg[b, :, :, h].sum(0)
                sreal = np.repeat((rg[b].sum(0) > 0)[None], n, axis=0)
            else:
                sk = np.einsum("kl,ksd->lsd", perm, kg[b, :, :, h])
                sv = np.einsum("kl,ksd->lsd", perm, vg[b, :, :, h])
                sreal = np.einsum("kl,ks->ls", perm, rg[b]) > 1e-9
            for i in range(padded):
                g = group[i]
                for keys, values, ok in ((kg[b, g, :, h], vg[b, g, :, h],
                                          rg[b, g] > 0),
                                         (sk[g], sv[g], sreal[g])):
                    s = keys @ q[b, i, h] / np.sqrt(depth)
                    s = np.where(ok, s, -np.inf)
                    w = np.exp(s - s.max())
                    out[b, i, h] += (w / w.sum()) @ values
    return out[:, :length]


@pytest.mark.parametrize("sorting", ["permutation", "lra"])
@pytest.mark.parametrize("sort, iterations", [("softmax", 1),
                                              ("sinkhorn", 3)])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_sinkhorn_attention_matches_its_definition(layout, sort,
                                                   iterations, sorting):
    rng = np.random.default_rng(7)
    length, block = 22, 5
    q, k, v = (rng.normal(size=(2, length, 2, 4)).astype("float32")
               for _ in range(3))
    kernel = rng.normal(size=(4, 6)).astype("float32")
    bias = rng.normal(size=(6,)).astype("float32")
    mask = np.ones((2, length), bool)
    mask[1, 16:] = False
    out = ea.sinkhorn_attention(q, k, v, kernel, bias, block, mask, layout,
                                sort, iterations, sorting=sorting)
    expected = numpy_sinkhorn(q, k, v, kernel, bias, block, mask, layout,
                              sort, iterations, sorting)
    assert_allclose(to_numpy(out)[mask], expected[mask], atol=2e-5,
                    rtol=1e-4)


def test_sinkhorn_with_one_block_is_twice_full_attention():
    # One block: the permutation is [[1]], the sorted block the block.
    rng = np.random.default_rng(8)
    q, k, v = (rng.normal(size=(2, 9, 2, 4)).astype("float32")
               for _ in range(3))
    out = ea.sinkhorn_attention(q, k, v, np.ones((4, 3), "float32"),
                             np.zeros((3,), "float32"), 16)
    assert_allclose(out, 2 * to_numpy(ea.reference_attention(q, k, v)),
                    atol=1e-5)


def numpy_lra_sinkhorn_layer(layer, x, mask, sorting="lra"):
    """LRA's `SinkhornAttention.apply` in numpy, step by step, softmax
    sorting, not causal, no biases (google-research/long-range-arena
    `models/sinkhorn_transformer/sinkhorn_attention.py` lines 340-508 and
    its `local_dot_product_attention`, 137-180), with the layer's
    weights. `sorting="permutation"` swaps the sorting einsum for the
    method's; the masks stay LRA's."""
    block = layer.local_block_size
    batch, length, _ = x.shape
    n = length // block  # LRA's reshape needs a multiple

    def project(dense):
        (kernel,) = dense.weights  # bias=False
        return np.einsum("blc,chd->blhd", x, to_numpy(kernel))

    q, k, v = (project(d) for d in (layer.query_dense, layer.key_dense,
                                    layer.value_dense))
    heads, depth = q.shape[2:]
    q, k, v = (t.reshape(batch, block, n, heads, depth) for t in (q, k, v))
    sort_out = np.einsum("bkhd,dm->bkhm", k.sum(1),
                         to_numpy(layer.sort_kernel))[..., :n]
    perm = np.exp(sort_out - sort_out.max(-1, keepdims=True))
    perm /= perm.sum(-1, keepdims=True)
    einsum = "bskhd,bnhl->bsnhd" if sorting == "lra" else "bskhd,bkhl->bslhd"
    sorted_k, sorted_v = (np.einsum(einsum, t, perm) for t in (k, v))
    pairs = numpy_lra_block_pairs(mask, n, block).astype("float32")
    sorted_pairs = np.einsum("bksj,bnhl->bnsj", pairs, perm)

    def attend(keys, values, allowed):  # axis 1: batch dims (0, 2, 3)
        scores = np.einsum("bsnhd,btnhd->bnhst", q / np.sqrt(depth), keys)
        weights = numpy_lra_softmax(scores, allowed[:, :, None])
        return np.einsum("bnhst,btnhd->bsnhd", weights, values)

    y = attend(k, v, pairs) + attend(sorted_k, sorted_v, sorted_pairs)
    y = y.reshape(batch, length, heads, depth)
    (kernel,) = layer.output_dense.weights
    return np.einsum("blhd,hdc->blc", y, to_numpy(kernel))


@pytest.mark.parametrize("length", [25, 23])
@pytest.mark.parametrize("sorting", ["lra", "permutation"])
def test_lra_blocks_sinkhorn_attention_is_lras(sorting, length):
    # LRA's rows: 25 sort logits (here 3, fewer than the 5 blocks) under
    # its einsum; the method's sorting needs one per block. Length 23,
    # which LRA's reshape refuses, is padded to 25 masked positions: as
    # LRA's layer on those zero inputs (no biases) with the mask padded.
    block = 5
    layer = RotaryMultiHeadAttention(
        num_heads=2, key_dim=4, attention_type="sinkhorn", use_rotary=False,
        use_bias=False, max_length=length, local_block_size=block,
        local_layout="strided", mask_semantics="lra_blocks",
        sinkhorn_sorting=sorting,
        sinkhorn_max_blocks=3 if sorting == "lra" else None)
    rng = np.random.default_rng(4)
    x = rng.normal(size=(4, length, 8)).astype("float32")
    mask = np.ones((4, length), bool)
    mask[1, 11:] = False  # padding at the end, as ListOps
    mask[2, ::3] = False  # scattered, as the black pixels of Pathfinder
    mask[3, 3:] = False  # shorter than a block: the sorted mask 3 x 3
    layer(x, padding_mask=mask)
    assert layer.sort_bias is None  # LRA's Dense(bias=False)
    for w in layer.weights:
        w.assign(rng.normal(size=w.shape).astype("float32") * 0.5)
    out = to_numpy(layer(x, padding_mask=mask))
    extra = (-length) % block
    expected = numpy_lra_sinkhorn_layer(
        layer, np.pad(x, ((0, 0), (0, extra), (0, 0))),
        np.pad(mask, ((0, 0), (0, extra))), sorting)[:, :length]
    assert_allclose(out, expected, atol=1e-5, rtol=1e-4)
    assert_reads_the_padding(layer, x, mask, out)


def test_lras_sinkhorn_sorting_is_one_sum_whatever_the_sort_network():
    # Under softmax sorting the rows of P sum to one: the sorted block is
    # sum_k K_k, and the sorting network's weights change nothing.
    q, k, v, mask = _inputs(length=20)
    rng = np.random.default_rng(5)
    outs = [to_numpy(ea.sinkhorn_attention(
        q, k, v, rng.normal(size=(q.shape[-1], 4)).astype("float32"), None,
        5, mask, sorting="lra")) for _ in range(2)]
    assert_allclose(outs[0], outs[1], atol=1e-5)


def test_a_causal_or_unsized_sinkhorn_is_a_clear_error():
    with pytest.raises(ValueError, match="not causal"):
        RotaryMultiHeadAttention(2, 4, attention_type="sinkhorn",
                                 causal=True, max_length=16)
    with pytest.raises(ValueError, match="max_length"):
        RotaryMultiHeadAttention(2, 4, attention_type="sinkhorn")
