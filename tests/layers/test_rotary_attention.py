import keras
import numpy as np
import pytest
from keras import ops

from lra_keras.layers import RotaryMultiHeadAttention
from lra_keras.layers import apply_rotary
from lra_keras.layers import apply_rotary_across_heads
from tests.layers.test_attention_kernels import numpy_attention
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import to_numpy
from tests.testing import value_and_grads


def numpy_rotary(x, base=10000.0, start=0, disable_half=False):
    length, depth = x.shape[1], x.shape[-1]
    half = depth // 2
    inv_freq = base ** (-np.arange(half) * 2.0 / depth)
    if disable_half:
        # The half // 2 slowest pairs (last in the list) stop rotating.
        inv_freq[half - half // 2:] = 0.0
    angles = (np.arange(length) + start)[:, None] * inv_freq[None]
    cos, sin = np.cos(angles)[None, :, None], np.sin(angles)[None, :, None]
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)


def numpy_rotary_across_heads(x, base=10000.0, disable_half=False):
    """The YCTFS rotation (long-transformers, branch lra-paper,
    src/utils/rotary_embedding.py) on the heads joined into one width."""
    batch, length, heads, depth = x.shape
    width = heads * depth
    flat = x.reshape(batch, length, width // 2, 1, 2)
    thetas = np.exp(-2 * np.log(base) * np.arange(width // 2) / width)
    if disable_half:
        thetas[::2] = 0
    angles = np.arange(length)[:, None] * thetas[None]  # (L, D/2)
    cos, sin = np.cos(angles), np.sin(angles)
    rotation = np.stack([cos, -sin, sin, cos], -1).reshape(
        1, length, width // 2, 2, 2)
    return (flat * rotation).sum(-1).reshape(x.shape)


@pytest.mark.parametrize("disable_half", [False, True])
def test_rotary_across_heads_matches_the_yctfs_rotation(disable_half):
    x = np.random.default_rng(11).normal(size=(2, 17, 4, 6)).astype("float32")
    y = to_numpy(apply_rotary_across_heads(x, 300.0, disable_half))
    np.testing.assert_allclose(
        y, numpy_rotary_across_heads(x, 300.0, disable_half), atol=1e-5
    )


@pytest.mark.parametrize("disable_half", [False, True])
def test_rotary_across_heads_of_a_view_and_its_gradient(disable_half):
    # A slice of a wider tensor (under PyTorch a view at an odd offset,
    # with odd strides, which the complex form copies first), and the
    # gradient: the rotation is orthogonal, so the upstream gradient g
    # comes back rotated the other way, R^T g, which is R applied to g
    # with its odd channels negated, those negated again.
    rng = np.random.default_rng(12)
    wide = rng.normal(size=(2, 17, 4, 7)).astype("float32")
    upstream = rng.normal(size=(2, 17, 4, 6)).astype("float32")
    x = wide[..., 1:]
    y = apply_rotary_across_heads(ops.convert_to_tensor(wide)[..., 1:],
                                  300.0, disable_half)
    assert_allclose(y, numpy_rotary_across_heads(x, 300.0, disable_half),
                    atol=1e-5)
    _, (grad,) = value_and_grads(
        lambda t: ops.sum(apply_rotary_across_heads(t, 300.0, disable_half)
                          * ops.convert_to_tensor(upstream)),
        np.ascontiguousarray(x))
    signs = np.tile([1.0, -1.0], 3).astype("float32")
    assert_allclose(grad, signs * numpy_rotary_across_heads(
        signs * upstream, 300.0, disable_half), atol=1e-5)


def test_rotary_across_heads_traced_with_unknown_batch_and_length():
    # As a step traces it: under TensorFlow a graph whose batch and length
    # are unknown (Keras's retracing relaxes them), where the pairs are
    # rotated as complex numbers with a written-out gradient; under JAX a
    # jitted function; under PyTorch eager. Value and gradient as in the
    # test above.
    rng = np.random.default_rng(13)
    x = rng.normal(size=(3, 11, 4, 6)).astype("float32")
    upstream = rng.normal(size=(3, 11, 4, 6)).astype("float32")

    def loss(t, g):
        return ops.sum(apply_rotary_across_heads(t, 300.0) * g)

    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        spec = tf.TensorSpec((None, None, 4, 6), tf.float32)

        @tf.function(input_signature=[spec, spec])
        def traced(t, g):
            with tf.GradientTape() as tape:
                tape.watch(t)
                y = apply_rotary_across_heads(t, 300.0)
                value = ops.sum(y * g)
            return y, tape.gradient(value, t)
    elif backend == "jax":
        import jax

        @jax.jit
        def traced(t, g):
            return (apply_rotary_across_heads(t, 300.0),
                    jax.grad(loss)(t, g))
    else:
        def traced(t, g):
            y = apply_rotary_across_heads(ops.convert_to_tensor(t), 300.0)
            _, (grad,) = value_and_grads(lambda a: loss(
                a, ops.convert_to_tensor(g)), t)
            return y, grad
    y, grad = traced(ops.convert_to_tensor(x), ops.convert_to_tensor(upstream))
    assert_allclose(y, numpy_rotary_across_heads(x, 300.0), atol=1e-5)
    signs = np.tile([1.0, -1.0], 3).astype("float32")
    assert_allclose(grad, signs * numpy_rotary_across_heads(
        signs * upstream, 300.0), atol=1e-5)


@pytest.mark.parametrize("disable_half", [False, True])
def test_rotary_across_heads_gives_each_head_its_band(disable_half):
    # At position 1 pair j of head h turns by its frequency,
    # base ** (-(h * head_dim + 2 j) / D): head 0 the fastest ones. With
    # disable_half the pairs of even index over the width do not turn.
    heads, depth, base = 3, 4, 100.0
    x = np.zeros((1, 2, heads, depth), "float32")
    x[..., 0::2] = 1.0  # every pair is (1, 0)
    y = to_numpy(apply_rotary_across_heads(x, base, disable_half))[0, 1]
    angles = np.arctan2(y[:, 1::2], y[:, 0::2])  # (heads, depth / 2)
    width = heads * depth
    index = np.arange(heads)[:, None] * depth + 2 * np.arange(depth // 2)
    expected = base ** (-index / width)
    if disable_half:
        expected[(index // 2) % 2 == 0] = 0.0
    np.testing.assert_allclose(angles, expected, atol=1e-6)


def test_apply_rotary_matches_numpy_and_keeps_norms():
    x = np.random.default_rng(0).normal(size=(2, 33, 3, 8)).astype("float32")
    y = to_numpy(apply_rotary(x, 500.0))
    np.testing.assert_allclose(y, numpy_rotary(x, 500.0), atol=1e-5)
    np.testing.assert_allclose(
        np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-5
    )


def test_rotary_scores_depend_only_on_relative_position():
    rng = np.random.default_rng(1)
    q = np.broadcast_to(rng.normal(size=(1, 1, 1, 16)), (1, 40, 1, 16))
    k = np.broadcast_to(rng.normal(size=(1, 1, 1, 16)), (1, 40, 1, 16))
    qr = to_numpy(apply_rotary(np.ascontiguousarray(q, "float32")))
    kr = to_numpy(apply_rotary(np.ascontiguousarray(k, "float32")))
    scores = np.einsum("qd,kd->qk", qr[0, :, 0], kr[0, :, 0])  # (40, 40)
    for offset in range(-39, 40):
        diagonal = np.diagonal(scores, offset)
        np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-4)
    # ... and do depend on it.
    assert np.ptp([scores[0, j] for j in range(40)]) > 1e-2


def test_rotary_token_by_token_equals_full_call():
    x = np.random.default_rng(2).normal(size=(1, 20, 2, 8)).astype("float32")
    full = to_numpy(apply_rotary(x))
    for i in (0, 7, 19):
        step = to_numpy(apply_rotary(x[:, i:i + 1], start_index=i))
        np.testing.assert_allclose(step, full[:, i:i + 1], atol=1e-5)


@pytest.mark.parametrize(
    "depth, unrotated",
    [(8, [2, 3, 6, 7]), (12, [3, 4, 5, 9, 10, 11]), (2, [])],
)
def test_disable_half_leaves_slowest_pairs_unrotated(depth, unrotated):
    x = np.random.default_rng(7).normal(size=(2, 33, 3, depth))
    x = x.astype("float32")
    y = to_numpy(apply_rotary(x, disable_half=True))
    full = to_numpy(apply_rotary(x))
    rotated = [c for c in range(depth) if c not in unrotated]
    # Position-free channels are the input itself, at every position...
    np.testing.assert_allclose(y[..., unrotated], x[..., unrotated], atol=0)
    # ... the others are exactly the full rotation's ...
    np.testing.assert_allclose(y[..., rotated], full[..., rotated],
                               atol=1e-6)
    # ... which does move them.
    assert not np.allclose(full[:, 1:, :, rotated], x[:, 1:, :, rotated],
                           atol=1e-3)
    np.testing.assert_allclose(
        y, numpy_rotary(x, disable_half=True), atol=1e-5
    )


def test_disable_half_scores_depend_only_on_relative_position():
    rng = np.random.default_rng(8)
    q = np.broadcast_to(rng.normal(size=(1, 1, 1, 16)), (1, 40, 1, 16))
    k = np.broadcast_to(rng.normal(size=(1, 1, 1, 16)), (1, 40, 1, 16))
    q, k = (np.ascontiguousarray(a, "float32") for a in (q, k))
    qr = to_numpy(apply_rotary(q, 100.0, disable_half=True))
    kr = to_numpy(apply_rotary(k, 100.0, disable_half=True))
    scores = np.einsum("qd,kd->qk", qr[0, :, 0], kr[0, :, 0])  # (40, 40)
    for offset in range(-39, 40):
        diagonal = np.diagonal(scores, offset)
        np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-4)
    assert np.ptp([scores[0, j] for j in range(40)]) > 1e-2


def _layer_reference(layer, x, mask):
    """The layer's maths by hand in numpy, from its own weights."""

    def project(dense, h):
        out = np.einsum("bld,dhk->blhk", h, to_numpy(dense.kernel))
        return out + to_numpy(dense.bias)

    q = project(layer.query_dense, x)
    k = project(layer.key_dense, x)
    if layer.use_rotary:
        half = layer.rotary_disable_half
        rotate = (numpy_rotary if layer.rotary_scope == "head"
                  else numpy_rotary_across_heads)
        q = rotate(q, layer.max_wavelength, disable_half=half)
        k = rotate(k, layer.max_wavelength, disable_half=half)
    v = project(layer.value_dense, x)
    a = numpy_attention(q, k, v, mask, layer.causal)
    kernel = to_numpy(layer.output_dense.kernel)
    return np.einsum("blhk,hkd->bld", a, kernel) + to_numpy(
        layer.output_dense.bias
    )


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("implementation", ["auto", "chunked", "fused"])
def test_layer_matches_numpy_reference(implementation, causal):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 24, 16)).astype("float32")
    mask = np.ones((2, 24), bool)
    mask[1, 10:] = False
    layer = RotaryMultiHeadAttention(
        num_heads=2, key_dim=8, causal=causal, max_wavelength=100.0,
        attention_implementation=implementation, block_size=5,
    )
    out = layer(x, padding_mask=mask)
    assert_allclose(out, _layer_reference(layer, x, mask), atol=2e-5)


@pytest.mark.parametrize(
    "implementation, options",
    [("chunked", dict(rotary_disable_half=True)),
     ("fused", dict(use_rotary=False)),
     ("chunked", dict(rotary_scope="model")),
     ("fused", dict(rotary_scope="model", rotary_disable_half=True))],
)
def test_position_options_match_numpy_reference(implementation, options):
    # Shapes as in test_layer_matches_numpy_reference: JAX reuses the
    # compiled ops.
    rng = np.random.default_rng(9)
    x = rng.normal(size=(2, 24, 16)).astype("float32")
    mask = np.ones((2, 24), bool)
    mask[0, 13:] = False
    layer = RotaryMultiHeadAttention(
        num_heads=2, key_dim=8, max_wavelength=50.0,
        attention_implementation=implementation, block_size=5, **options,
    )
    out = layer(x, padding_mask=mask)
    assert_allclose(out, _layer_reference(layer, x, mask), atol=2e-5)


def test_without_rotary_attention_is_position_free():
    # Plain attention is permutation equivariant; rotary attention is not.
    rng = np.random.default_rng(10)
    x = rng.normal(size=(1, 24, 16)).astype("float32")
    perm = rng.permutation(24)
    both = np.concatenate([x, x[:, perm]])  # one call per layer
    plain = RotaryMultiHeadAttention(num_heads=2, key_dim=8,
                                     use_rotary=False,
                                     attention_implementation="fused")
    out = to_numpy(plain(both))
    np.testing.assert_allclose(out[1], out[0, perm], atol=1e-5)
    rotary = RotaryMultiHeadAttention(num_heads=2, key_dim=8,
                                      attention_implementation="fused")
    out = to_numpy(rotary(both))
    assert not np.allclose(out[1], out[0, perm], atol=1e-3)


def test_fused_path_leaves_flash_attention_to_the_backend(monkeypatch):
    calls = []
    original = keras.ops.dot_product_attention

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(keras.ops, "dot_product_attention", spy)
    layer = RotaryMultiHeadAttention(num_heads=2, key_dim=8,
                                     attention_implementation="fused")
    mask = np.ones((2, 24), bool)
    layer(np.zeros((2, 24, 16), "float32"), padding_mask=mask)
    assert len(calls) == 1
    # None (the default) lets the backend take a flash kernel when it can.
    assert calls[0].get("flash_attention") is None


def test_identity_projections_attend_by_hand():
    # One head, key_dim 2, identity projections, no bias: two tokens.
    layer = RotaryMultiHeadAttention(num_heads=1, key_dim=2, use_bias=False)
    layer.build((1, 2, 2))
    eye = np.eye(2, dtype="float32")
    layer.query_dense.kernel.assign(eye[:, None, :])
    layer.key_dense.kernel.assign(eye[:, None, :])
    layer.value_dense.kernel.assign(eye[:, None, :])
    layer.output_dense.kernel.assign(eye[None, :, :])
    x = np.array([[[1.0, 0.0], [0.0, 1.0]]], "float32")
    # Rotation by angle = position (inv_freq = 1 for the single pair).
    c, s = np.cos(1.0), np.sin(1.0)
    q = np.array([[1.0, 0.0], [-s, c]])  # rotated queries == keys
    scores = q @ q.T / np.sqrt(2.0)
    p = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    expected = p @ x[0]
    assert_allclose(layer(x)[0], expected, atol=1e-6)


def test_padding_does_not_change_real_positions():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 30, 16)).astype("float32")
    mask = np.ones((2, 30), bool)
    mask[:, 18:] = False
    x2 = x.copy()
    x2[:, 18:] = rng.normal(size=(2, 12, 16)) * 10
    layer = RotaryMultiHeadAttention(num_heads=4, key_dim=4)
    a = to_numpy(layer(x, padding_mask=mask))
    b = to_numpy(layer(x2, padding_mask=mask))
    np.testing.assert_allclose(a[:, :18], b[:, :18], atol=1e-5)


@pytest.mark.parametrize(
    "options",
    [dict(), dict(rotary_disable_half=True), dict(use_rotary=False),
     dict(rotary_scope="model")],
)
def test_config_round_trips(options):
    layer = RotaryMultiHeadAttention(num_heads=2, key_dim=4,
                                     max_wavelength=500, causal=True,
                                     **options)
    rebuilt = assert_config_round_trip(layer)
    assert rebuilt.use_rotary == options.get("use_rotary", True)
    assert rebuilt.rotary_disable_half == options.get(
        "rotary_disable_half", False
    )
    assert rebuilt.rotary_scope == options.get("rotary_scope", "head")


def test_odd_key_dim_needs_no_rotary():
    layer = RotaryMultiHeadAttention(num_heads=2, key_dim=3,
                                     use_rotary=False)
    assert layer.key_dim == 3


def test_saving_round_trips(tmp_path):
    layer = RotaryMultiHeadAttention(num_heads=2, key_dim=4,
                                     max_wavelength=500, causal=True,
                                     rotary_disable_half=True)
    inputs = keras.Input((None, 8))
    model = keras.Model(inputs, layer(inputs))
    x = np.random.default_rng(5).normal(size=(3, 12, 8)).astype("float32")
    assert_saving_round_trip(model, x, tmp_path)


def test_configs_without_position_options_still_load():
    config = RotaryMultiHeadAttention(num_heads=2, key_dim=4).get_config()
    del config["use_rotary"], config["rotary_disable_half"]
    layer = RotaryMultiHeadAttention.from_config(config)
    assert layer.use_rotary and not layer.rotary_disable_half


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(num_heads=0, key_dim=4), "num_heads"),
        (dict(num_heads=2, key_dim=3), "key_dim"),
        (dict(num_heads=2, key_dim=0, use_rotary=False), "key_dim"),
        (dict(num_heads=2, key_dim=4, attention_implementation="x"),
         "attention_implementation"),
        (dict(num_heads=2, key_dim=4, max_wavelength=0), "max_wavelength"),
        (dict(num_heads=2, key_dim=4, rotary_scope="width"), "rotary_scope"),
    ],
)
def test_bad_arguments_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RotaryMultiHeadAttention(**kwargs)


def test_fit_one_step():
    # The other position options train in test_transformer_encoder.py.
    layer = RotaryMultiHeadAttention(num_heads=2, key_dim=4,
                                     rotary_disable_half=True)
    inputs = keras.Input((None, 8))
    model = keras.Model(inputs, ops.mean(layer(inputs), axis=(1, 2)))
    model.compile(optimizer="sgd", loss="mse")
    x = np.random.default_rng(6).normal(size=(4, 16, 8)).astype("float32")
    before = [to_numpy(w).copy() for w in model.trainable_weights]
    history = model.fit(x, np.ones((4,), "float32"), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    after = [to_numpy(w) for w in model.trainable_weights]
    assert any(not np.allclose(a, b) for a, b in zip(before, after))


def test_attention_window_restricts_the_softmax_to_neighbouring_windows():
    from tests.layers.test_attention_kernels import numpy_windowed

    x = np.random.default_rng(11).normal(size=(2, 48, 16)).astype("float32")
    mask = np.ones((2, 48), bool)
    mask[1, 40:] = False
    layer = RotaryMultiHeadAttention(num_heads=2, key_dim=8, use_rotary=False,
                                     attention_window=16)
    out = layer(x, padding_mask=mask)
    q = to_numpy(layer.query_dense(x))
    k = to_numpy(layer.key_dense(x))
    v = to_numpy(layer.value_dense(x))
    expected = to_numpy(layer.output_dense(
        numpy_windowed(q, k, v, mask, 16, 1, 1)))
    assert_allclose(out, expected, atol=2e-5)
    rebuilt = assert_config_round_trip(layer)
    assert (rebuilt.attention_window, rebuilt.window_look_backward,
            rebuilt.window_look_forward) == (16, 1, 1)
    for bad in (dict(causal=True), dict(attention_type="linear"),
                dict(mask_semantics="pairs"), dict(window_look_forward=-1)):
        with pytest.raises(ValueError, match="attention_window"):
            RotaryMultiHeadAttention(num_heads=2, key_dim=8,
                                     attention_window=16, **bad)


@pytest.mark.parametrize("table_limit", [None, 0])
def test_rotary_tables_as_constants_or_ops_give_the_same_rotation(
        monkeypatch, table_limit):
    # Where XLA compiles the step (JAX; TensorFlow under jit_compile) the
    # tables are numpy constants up to NUMPY_TABLE_ANGLES angles, ops
    # beyond (table_limit=0) and everywhere else; every way matches the
    # numpy rotations, with disable_half and from a start index too.
    from lra_keras.layers import rotary_attention

    if table_limit is not None:
        monkeypatch.setattr(rotary_attention, "NUMPY_TABLE_ANGLES",
                            table_limit)
    rotary_attention._numpy_rotary_tables.cache_clear()
    x = np.random.default_rng(3).normal(size=(2, 17, 4, 6)).astype("float32")
    calls = [lambda t: apply_rotary_across_heads(t, 300.0, True),
             lambda t: apply_rotary(t, 500.0, disable_half=True),
             lambda t: apply_rotary(t[:, 5:], 500.0, start_index=5)]
    expected = [numpy_rotary_across_heads(x, 300.0, True),
                numpy_rotary(x, 500.0, disable_half=True),
                numpy_rotary(x, 500.0)[:, 5:]]
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        calls = [tf.function(call, jit_compile=True) for call in calls]
    for call, want in zip(calls, expected):
        got = to_numpy(call(x))
        np.testing.assert_allclose(got, want, atol=1e-5)
    made = rotary_attention._numpy_rotary_tables.cache_info().currsize
    xla = keras.backend.backend() in ("jax", "tensorflow")
    assert made == (3 if xla and table_limit is None else 0)
