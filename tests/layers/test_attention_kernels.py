import numpy as np
import pytest
from keras import ops

from lra_keras.layers import attention_kernels as ak
from tests.testing import assert_allclose
from tests.testing import to_numpy
from tests.testing import value_and_grads


def numpy_attention(q, k, v, mask=None, causal=False):
    """Softmax attention written out in numpy, (batch, L, heads, D)."""
    scores = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])
    allowed = np.ones(scores.shape, bool)
    if mask is not None:
        allowed &= mask[:, None, None, :]
    if causal:
        allowed &= np.tril(np.ones(scores.shape[-2:], bool))
    scores = np.where(allowed, scores, -np.inf)
    scores -= scores.max(-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", p, v)


def _inputs(batch=2, length=70, heads=3, depth=8, seed=0):
    rng = np.random.default_rng(seed)
    q, k, v = (
        rng.normal(size=(batch, length, heads, depth)).astype("float32")
        for _ in range(3)
    )
    mask = np.ones((batch, length), bool)
    mask[0, length // 2:] = False
    return q, k, v, mask


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("implementation", ["reference", "fused", "chunked"])
def test_attention_matches_numpy(implementation, causal):
    q, k, v, mask = _inputs()
    out = ak.attention(q, k, v, mask, causal=causal,
                       implementation=implementation, block_size=16)
    assert_allclose(out, numpy_attention(q, k, v, mask, causal), atol=2e-6)


@pytest.mark.parametrize("block_size", [1, 7, 16, 64, 70, 512])
def test_chunked_attention_block_size_does_not_change_result(block_size):
    q, k, v, mask = _inputs(seed=1)
    out = ak.chunked_attention(q, k, v, mask, block_size=block_size)
    assert_allclose(out, numpy_attention(q, k, v, mask), atol=2e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_even_blocks_give_the_attention_and_its_gradients(monkeypatch,
                                                          causal):
    # Up to 32 queries a block: 70 queries in 3 blocks of 24, the last
    # padding 2 (under JAX and PyTorch's loop; TensorFlow's graph lays its
    # blocks out by score count). The value and gradients of the padded
    # sequence's attention equal the numpy value and the gradients in one
    # block of all 70 queries.
    monkeypatch.setattr(ak, "_CPU_BLOCK_QUERIES", 32)
    monkeypatch.setattr(ak, "on_accelerator", lambda: False)
    assert ak._even_blocks(70, 32) == 24
    q, k, v, mask = _inputs(seed=2)
    weights = np.random.default_rng(3).normal(size=q.shape).astype("float32")

    def loss(block_size):
        return lambda q, k, v: ops.sum(ak.chunked_attention(
            q, k, v, mask, causal, block_size=block_size)
            * ops.convert_to_tensor(weights))

    value, grads = value_and_grads(loss(None), q, k, v)
    expected = np.sum(numpy_attention(q, k, v, mask, causal) * weights)
    assert_allclose(value, expected, rtol=1e-5)
    _, whole = value_and_grads(loss(70), q, k, v)
    for got, want in zip(grads, whole):
        assert_allclose(got, want, atol=2e-5)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("block_rows", [1, 2, 3, 6])
def test_chunked_attention_block_rows_do_not_change_result(block_rows,
                                                           causal):
    # Blocks of 1, 2, 3 or all 6 of the batch x heads rows, 16 queries each
    # (the last block ragged), with a padded sequence in the batch.
    q, k, v, mask = _inputs(seed=8)
    out = ak.chunked_attention(q, k, v, mask, causal, block_size=16,
                               block_rows=block_rows)
    assert_allclose(out, numpy_attention(q, k, v, mask, causal), atol=2e-6)


def test_block_rows_must_divide_the_rows():
    q, k, v, mask = _inputs()
    for block_rows in (4, 0):
        with pytest.raises(ValueError, match="block_rows"):
            ak.chunked_attention(q, k, v, mask, block_rows=block_rows)


def test_block_layout(monkeypatch):
    # Under XLA on a CPU: 512 queries of as many rows (a divisor of batch x
    # heads, of the heads while the batch is unknown) as keep a block near
    # 2**21 scores. PyTorch's Python loop on a CPU: the same, with fewer
    # queries (at least 64) where 512 of one row exceed 2**21 scores. On an
    # accelerator or in TensorFlow's graph without XLA: every row, as many
    # queries as keep 2**22 scores, at least 64.
    layout = ak._block_layout
    monkeypatch.setattr(ak, "on_accelerator", lambda: False)
    monkeypatch.setattr(ak, "xla_compiled", lambda: True)
    monkeypatch.setattr(ak, "_python_loop", lambda: False)
    assert layout(128, 4, 1024, 1024, None, None) == (4, 512)
    assert layout(96, 4, 1024, 1024, None, None) == (4, 512)
    assert layout(6, 3, 1024, 1024, None, None) == (3, 512)
    assert layout(64, 4, 4096, 4096, None, None) == (1, 512)
    assert layout(64, 4, 100, 100, None, None) == (64, 100)
    assert layout(7, 7, 1024, 1024, 16, None) == (7, 16)
    assert layout(None, 4, 1024, 1024, None, None) == (4, 512)
    assert layout(None, 3, 1024, 1024, None, None) == (3, 512)
    assert layout(None, 8, 1024, 1024, None, 2) == (2, 512)
    # Values wider than the queries (MEGA's): one row a block.
    assert layout(16, 1, 1024, 1024, None, None, True) == (1, 512)
    assert layout(16, 1, 1024, 1024, None, 2, True) == (2, 512)
    assert layout(64, 4, 2048, 2048, None, None) == (2, 512)
    assert layout(4, 4, 16384, 16384, None, None) == (1, 512)
    # Queries that 512 do not divide: as few blocks, as even as multiples
    # of 8 let them be (1,025 in 3 of 344, not 3 of 512), and the rows as
    # many as keep the smaller block near 2**21 scores.
    assert layout(64, 4, 1025, 1025, None, None) == (4, 344)
    assert layout(64, 4, 640, 640, None, None) == (8, 320)
    assert layout(4, 4, 16385, 16385, None, None) == (1, 504)
    assert layout(64, 4, 640, 640, 512, None) == (4, 512)
    monkeypatch.setattr(ak, "xla_compiled", lambda: False)
    monkeypatch.setattr(ak, "_python_loop", lambda: True)
    assert layout(128, 4, 1024, 1024, None, None) == (4, 512)
    assert layout(16, 4, 4096, 4096, None, None) == (1, 512)
    assert layout(8, 4, 8192, 8192, None, None) == (1, 256)
    assert layout(4, 4, 16384, 16384, None, None) == (1, 128)
    assert layout(2, 2, 65536, 65536, None, None) == (1, 64)
    assert layout(4, 4, 16384, 16384, 300, None) == (1, 300)
    assert layout(4, 4, 16385, 16385, None, None) == (1, 127)
    assert layout(16, 1, 1024, 1024, None, None, True) == (1, 512)
    for accelerator, xla, python_loop in ((True, True, False),
                                          (True, False, True),
                                          (False, False, False)):
        monkeypatch.setattr(ak, "on_accelerator", lambda: accelerator)
        monkeypatch.setattr(ak, "xla_compiled", lambda: xla)
        monkeypatch.setattr(ak, "_python_loop", lambda: python_loop)
        assert layout(128, 4, 1024, 1024, None, None) == (128, 64)
        assert layout(16, 4, 1024, 1024, None, None) == (16, 256)
        assert layout(16, 4, 1024, 1024, None, 4) == (4, 1024)
        assert layout(None, 4, 1024, 1024, None, None) == (None, 1024)


@pytest.mark.parametrize("small_blocks,block_rows", [(True, 2),
                                                     (True, None),
                                                     (False, None)])
def test_chunked_attention_with_an_unknown_batch(monkeypatch, small_blocks,
                                                 block_rows):
    # TensorFlow's `fit` traces with the batch unknown: under XLA on a CPU
    # a block's rows then divide the heads (2 of 4 given, all 4 by
    # default), and the loop runs for as many groups as the batch turns
    # out to hold; elsewhere one group holds every row.
    import keras

    monkeypatch.setattr(ak, "on_accelerator", lambda: False)
    monkeypatch.setattr(ak, "xla_compiled", lambda: small_blocks)
    q, k, v, mask = _inputs(batch=3, length=40, heads=4, seed=11)
    expected = numpy_attention(q, k, v, mask, causal=True)
    inputs = [keras.Input((40, 4, 8)) for _ in range(3)]
    keys = keras.Input((40,), dtype="bool")
    out = keras.layers.Lambda(lambda t: ak.chunked_attention(
        *t[:3], t[3], True, block_size=16, block_rows=block_rows),
        output_shape=(40, 4, 8))(inputs + [keys])
    model = keras.Model(inputs + [keys], out)
    assert_allclose(model.predict([q, k, v, mask], batch_size=2, verbose=0),
                    expected, atol=2e-6)


@pytest.mark.parametrize("causal", [False, True])
def test_chunked_attention_gradients_equal_reference(causal):
    q, k, v, mask = _inputs(length=40, seed=2)
    w = ops.convert_to_tensor(
        np.random.default_rng(3).normal(size=q.shape).astype("float32")
    )
    m = ops.convert_to_tensor(mask)

    def loss(impl):
        return lambda q, k, v: ops.sum(
            ak.attention(q, k, v, m, causal=causal, implementation=impl,
                         block_size=16) * w
        )

    ref_value, ref_grads = value_and_grads(loss("reference"), q, k, v)
    value, grads = value_and_grads(loss("chunked"), q, k, v)
    np.testing.assert_allclose(value, ref_value, rtol=1e-5)
    for name, g, r in zip("qkv", grads, ref_grads):
        np.testing.assert_allclose(g, r, atol=2e-5, err_msg=f"d/d{name}")


def test_padded_keys_get_no_weight():
    q, k, v, mask = _inputs(seed=4)
    k2, v2 = k.copy(), v.copy()
    k2[~mask] = 100.0
    v2[~mask] = -50.0
    for impl in ("fused", "chunked"):
        a = to_numpy(ak.attention(q, k, v, mask, implementation=impl))
        b = to_numpy(ak.attention(q, k2, v2, mask, implementation=impl))
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_causal_attention_ignores_future_tokens():
    q, k, v, _ = _inputs(seed=5)
    q2, k2, v2 = q.copy(), k.copy(), v.copy()
    for x in (q2, k2, v2):
        x[:, 50:] = 9.0
    for impl in ("fused", "chunked"):
        a = to_numpy(ak.attention(q, k, v, causal=True, implementation=impl))
        b = to_numpy(ak.attention(q2, k2, v2, causal=True,
                                  implementation=impl))
        np.testing.assert_allclose(a[:, :50], b[:, :50], atol=1e-6)


def test_bad_implementation_is_rejected():
    q, k, v, _ = _inputs()
    with pytest.raises(ValueError, match="implementation"):
        ak.attention(q, k, v, implementation="magic")


@pytest.mark.parametrize("xla", [False, True])
def test_auto_takes_a_linear_memory_path_at_long_lengths(monkeypatch, xla):
    # The fused kernel under PyTorch streams its scores; under JAX and
    # TensorFlow on CPU only the chunked path does. Under XLA it is the
    # faster at every length; TensorFlow without XLA keeps plain attention,
    # faster there, below TENSORFLOW_CHUNKED_FROM keys. A length unknown
    # while tracing takes the chunked path, which under TensorFlow without
    # XLA is plain attention below TENSORFLOW_CHUNKED_FROM keys at run time
    # (`test_attention_at_lengths_known_at_run_time`).
    import keras

    monkeypatch.setattr(ak, "xla_compiled", lambda: xla)
    backend = keras.backend.backend()
    long = ak.TENSORFLOW_CHUNKED_FROM
    for length in (16, 1024, long - 1, long, 16384, None):
        expected = (
            "fused" if backend == "torch" else
            "reference" if backend == "tensorflow" and (
                length is not None and length < long and not xla) else
            "chunked")
        assert ak.resolve_implementation("auto", length) == expected


def _every_optional_input(seed):
    """37 queries and keys (3 heads of 8), values of width 12, a (37, 37)
    score bias, a weighting of the outputs (a TensorFlow tensor) and a
    key mask that is also the real queries'."""
    import tensorflow as tf

    q, k, _, keys = _inputs(length=37, seed=seed)
    rng = np.random.default_rng(seed + 1)
    v = rng.normal(size=q.shape[:3] + (12,)).astype("float32")
    bias = rng.normal(size=(37, 37)).astype("float32")
    w = tf.constant(rng.normal(size=v.shape).astype("float32"))
    return q, k, v, bias, w, keys


@pytest.mark.parametrize("causal", [False, True])
def test_tensorflow_runs_the_chunked_passes_compiled_keeping_their_inputs(
        monkeypatch, causal):
    # TensorFlow outside XLA runs the chunked path's forward and backward
    # loops as two functions XLA compiles, each on its own, joined by a
    # custom gradient in its graph (`_tensorflow_chunked_attention`).
    # With every optional input (a key mask, a shared score bias, padded
    # queries, weights dropout, values wider than the queries; 37 queries in
    # blocks of 2 rows x 8, the layout fixed, as the dropout's masks
    # follow it) it gives what `chunked_attention` gives, the value and
    # the gradients of q, k, v and the bias, eagerly and in a graph. In
    # the graph the forward's call returns the output and the
    # log-sum-exps alone (one XLA function holding the custom gradient
    # returned 19 tensors for TensorFlow's gradient of the call,
    # docs/results/tensorflow_attention_memory_epyc/). Elsewhere (JAX,
    # PyTorch, inside XLA, a GPU) the plain function runs.
    import keras

    if keras.backend.backend() != "tensorflow":
        assert ak._chunked_function() is ak.chunked_attention
        return
    import tensorflow as tf

    assert ak._chunked_function() is ak._tensorflow_chunked_attention
    with monkeypatch.context() as patch:
        patch.setattr(ak, "on_accelerator", lambda: True)
        assert ak._chunked_function() is ak.chunked_attention
    q, k, v, bias, w, keys = _every_optional_input(12)
    options = dict(padding_mask=tf.constant(keys), causal=causal,
                   block_size=8, block_rows=2, query_mask=tf.constant(keys),
                   dropout_rate=0.25, dropout_seed=tf.constant([42, 17]))

    def run(fn, *args):
        with tf.GradientTape() as tape:
            tape.watch(args)
            value = tf.reduce_sum(
                fn(*args[:3], score_bias=args[3], **options) * w)
        return value, tape.gradient(value, args)

    args = [tf.constant(x) for x in (q, k, v, bias)]
    ref_value, ref_grads = run(ak.chunked_attention, *args)
    graph = tf.function(
        lambda *a: run(ak._tensorflow_chunked_attention, *a))
    for value, grads in (run(ak._tensorflow_chunked_attention, *args),
                         graph(*args)):
        np.testing.assert_allclose(value, ref_value, rtol=1e-5)
        for name, g, r in zip(("q", "k", "v", "bias"), grads, ref_grads):
            np.testing.assert_allclose(g, r, atol=3e-5,
                                       err_msg=f"d/d{name}")
    calls = [op for op in graph.get_concrete_function(*args).graph
             .get_operations() if op.type.endswith("PartitionedCall")]
    assert sorted(len(op.outputs) for op in calls) == [2, 4]
    forward, backward = ak._tensorflow_passes(causal, 8, 2, 0.25,
                                              ak._OPTIONAL)
    assert forward._jit_compile and backward._jit_compile


def test_run_time_layout():
    # A length known only at run time (TensorFlow): one row of up to 512
    # queries a block, shared evenly as for a length known while tracing,
    # or the rows and queries given, the rows dividing the heads (the
    # batch may be unknown too).
    layout = ak._run_time_layout
    rows, size = layout(4, ops.convert_to_tensor(16384), None, None)
    assert rows == 1 and int(to_numpy(size)) == 512
    rows, size = layout(4, ops.convert_to_tensor(100), None, None)
    assert rows == 1 and int(to_numpy(size)) == 100
    for length, expected in ((1025, 344), (640, 320), (16385, 504)):
        rows, size = layout(4, ops.convert_to_tensor(length), None, None)
        assert rows == 1 and int(to_numpy(size)) == expected
        assert int(to_numpy(size)) == ak._even_blocks(length, 512)
    rows, size = layout(4, ops.convert_to_tensor(640), 512, None)
    assert int(to_numpy(size)) == 512
    rows, size = layout(4, ops.convert_to_tensor(100), 16, 2)
    assert rows == 2 and int(to_numpy(size)) == 16
    for block_rows in (3, 0):
        with pytest.raises(ValueError, match="divide the heads"):
            layout(4, ops.convert_to_tensor(100), None, block_rows)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_at_lengths_known_at_run_time(monkeypatch, causal):
    # TensorFlow traces an exported SavedModel's signature, and `fit` after
    # several lengths, with the lengths unknown. The chunked path then lays
    # its blocks out at run time, and `attention` ("auto", outside XLA on
    # a CPU) takes, at run time, one dense block below
    # TENSORFLOW_CHUNKED_FROM keys (here 50) and the compiled loops from it
    # on: the value and the gradients of `chunked_attention` either way, at
    # 40 and at 70 positions, and for `chunked_attention` itself traced
    # so, in TensorFlow's graph. JAX and PyTorch know every length while
    # tracing.
    import keras

    if keras.backend.backend() != "tensorflow":
        assert ak.resolve_implementation("auto", None) == (
            "fused" if keras.backend.backend() == "torch" else "chunked")
        return
    import tensorflow as tf

    monkeypatch.setattr(ak, "TENSORFLOW_CHUNKED_FROM", 50)
    dense = []
    passes = ak._dense_passes
    monkeypatch.setattr(ak, "_dense_passes",
                        lambda *a: dense.append(a) or passes(*a))

    def run(fn, q, k, v, mask, w):
        with tf.GradientTape() as tape:
            tape.watch((q, k, v))
            value = tf.reduce_sum(fn(q, k, v, mask, causal) * w)
        return value, tape.gradient(value, (q, k, v))

    spec = ([tf.TensorSpec((None, None, 3, 8))] * 3
            + [tf.TensorSpec((None, None), tf.bool)]
            + [tf.TensorSpec((None, None, 3, 8))])
    traced = [tf.function(lambda *a, fn=fn: run(fn, *a), input_signature=spec)
              for fn in (ak.attention, ak.chunked_attention)]
    for length in (40, 70):
        q, k, v, mask = _inputs(length=length, seed=14)
        w = np.random.default_rng(15).normal(size=q.shape).astype("float32")
        args = [tf.constant(x) for x in (q, k, v, mask, w)]
        ref_value, ref_grads = run(ak.chunked_attention, *args)
        assert_allclose(ak.chunked_attention(q, k, v, mask, causal),
                        numpy_attention(q, k, v, mask, causal), atol=2e-6)
        for graph in traced:
            value, grads = graph(*args)
            np.testing.assert_allclose(value, ref_value, rtol=1e-5)
            for name, g, r in zip("qkv", grads, ref_grads):
                np.testing.assert_allclose(g, r, atol=1e-5,
                                           err_msg=f"d/d{name}")
    assert dense == [(causal, 0.0, ("padding_mask",))]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dense_below", [1000, 1])
def test_tensorflow_dense_passes_give_the_chunked_function(causal,
                                                           dense_below):
    # `_tensorflow_chunked_attention(dense_below=N)` at a length known at
    # run time: below N keys one dense block in TensorFlow's graph, from
    # N on the compiled loops, each with every optional input (a key mask,
    # a shared score bias, padded queries, weights dropout, values wider
    # than the queries) the value and the gradients of q, k, v and the
    # bias that `chunked_attention` gives in the same block layout (one
    # block of 37 queries; blocks of 1 row x 8), whose dropout masks are
    # the same.
    import keras

    if keras.backend.backend() != "tensorflow":
        assert ak._chunked_function() is ak.chunked_attention
        return
    import tensorflow as tf

    q, k, v, bias, w, keys = _every_optional_input(16)
    options = dict(padding_mask=tf.constant(keys), causal=causal,
                   query_mask=tf.constant(keys), dropout_rate=0.25,
                   dropout_seed=tf.constant([42, 17]))
    layout = {} if dense_below > 37 else dict(block_size=8, block_rows=1)

    def run(fn, *args, **kwargs):
        with tf.GradientTape() as tape:
            tape.watch(args)
            value = tf.reduce_sum(
                fn(*args[:3], score_bias=args[3], **options, **kwargs) * w)
        return value, tape.gradient(value, args)

    args = [tf.constant(x) for x in (q, k, v, bias)]
    ref_value, ref_grads = run(ak.chunked_attention, *args, **layout)
    spec = [tf.TensorSpec((None, None, 3, d)) for d in (8, 8, 12)]
    graph = tf.function(lambda *a: run(
        ak._tensorflow_chunked_attention, *a, dense_below=dense_below,
        block_size=8, block_rows=1),
        input_signature=spec + [tf.TensorSpec((None, None))])
    value, grads = graph(*args)
    np.testing.assert_allclose(value, ref_value, rtol=1e-5)
    for name, g, r in zip(("q", "k", "v", "bias"), grads, ref_grads):
        np.testing.assert_allclose(g, r, atol=3e-5, err_msg=f"d/d{name}")


def test_xla_compiled():
    # Always under JAX, never under PyTorch; under TensorFlow only inside
    # a `jit_compile=True` function.
    import keras

    from lra_keras.backend_utils import xla_compiled

    backend = keras.backend.backend()
    assert xla_compiled() == (backend == "jax")
    if backend == "tensorflow":
        import tensorflow as tf

        seen = []
        for jit in (True, False):
            tf.function(lambda: seen.append(xla_compiled()) or tf.zeros(()),
                        jit_compile=jit)()
        assert seen == [True, False]


def test_auto_on_an_accelerator(monkeypatch):
    # What "auto" picks on a GPU, tested here by pretending to be on one.
    # JAX: the fused call while it gets cuDNN's flash kernel or its scores
    # stay under JAX_ACCELERATOR_CHUNKED_FROM, else the chunked path (XLA
    # materialises the scores). PyTorch and TensorFlow: the fused call.
    import keras

    monkeypatch.setattr(ak, "on_accelerator", lambda: True)
    backend = keras.backend.backend()
    limit = ak.JAX_ACCELERATOR_CHUNKED_FROM
    for scores, flash, jax_pick in ((limit - 1, False, "fused"),
                                    (limit, False, "chunked"),
                                    (None, False, "chunked"),
                                    (limit, True, "fused"),
                                    (None, True, "fused")):
        expected = jax_pick if backend == "jax" else "fused"
        assert ak.resolve_implementation(
            "auto", 16384, scores=scores, flash=flash) == expected
        assert ak.resolve_implementation(
            "reference", 16384, scores=scores, flash=flash) == "reference"


def test_flash_eligible():
    # Half precision, head size a multiple of 8, no mask: all three needed.
    def query(dtype, depth=32):
        return ops.zeros((1, 4, 2, depth), dtype=dtype)

    ones = ops.ones((1, 4), dtype="bool")
    assert ak.flash_eligible(query("bfloat16"))
    assert ak.flash_eligible(query("float16", depth=64))
    assert not ak.flash_eligible(query("float32"))
    assert not ak.flash_eligible(query("bfloat16"), ones)
    assert not ak.flash_eligible(query("bfloat16", depth=12))


@pytest.mark.parametrize("dtype, masked, expected", [
    ("bfloat16", False, "fused"),
    ("bfloat16", True, "chunked"),
    ("float32", False, "chunked"),
])
def test_attention_dispatches_on_the_scores_and_flash(
        monkeypatch, dtype, masked, expected):
    # `attention` counts the scores from its inputs' shapes and asks
    # whether they can take flash: with the limit lowered under this
    # input's 2 x 3 x 70 x 70 scores, a bf16 input without a mask stays
    # fused under JAX on an "accelerator", a masked or float32 one goes
    # chunked. Each path's result still equals the numpy attention.
    import keras

    monkeypatch.setattr(ak, "on_accelerator", lambda: True)
    monkeypatch.setattr(ak, "JAX_ACCELERATOR_CHUNKED_FROM", 2 * 3 * 70 * 70)
    calls = []
    chunked = ak.chunked_attention
    monkeypatch.setattr(ak, "chunked_attention",
                        lambda *a, **k: calls.append("chunked")
                        or chunked(*a, **k))
    q, k, v, mask = _inputs()
    mask = mask if masked else None
    out = ak.attention(*(ops.cast(x, dtype) for x in (q, k, v)), mask)
    if keras.backend.backend() != "jax":
        expected = "fused"
    assert calls == (["chunked"] if expected == "chunked" else [])
    want = numpy_attention(*(to_numpy(ops.cast(ops.cast(x, dtype),
                                               "float32"))
                             for x in (q, k, v)), mask)
    assert_allclose(ops.cast(out, "float32"), want,
                    atol=3e-2 if dtype == "bfloat16" else 1e-5)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("block_rows", [None, 2])
def test_chunked_attention_gradients_with_a_ragged_last_block(block_rows,
                                                              causal):
    # 37 queries in blocks of 8: the last block is padded with zero queries,
    # which must add nothing to dK and dV. With 2 of the 6 (batch, head)
    # rows a block (three groups), each group's dK and dV accumulate over
    # its own blocks only.
    q, k, v, mask = _inputs(length=37, seed=6)
    m = ops.convert_to_tensor(mask)
    w = ops.convert_to_tensor(
        np.random.default_rng(7).normal(size=q.shape).astype("float32"))

    def loss(impl):
        return lambda q, k, v: ops.sum(ak.attention(
            q, k, v, m, causal=causal, implementation=impl, block_size=8,
            block_rows=block_rows) * w)

    _, ref_grads = value_and_grads(loss("reference"), q, k, v)
    _, grads = value_and_grads(loss("chunked"), q, k, v)
    for name, g, r in zip("qkv", grads, ref_grads):
        np.testing.assert_allclose(g, r, atol=2e-5, err_msg=f"d/d{name}")


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("block_rows", [None, 2])
def test_shared_score_bias_and_wider_values_equal_plain_ops(block_rows,
                                                            causal):
    # MEGA's attention: values wider than the keys and a (Lq, Lk) bias of
    # the scores that every row shares and the gradient reaches. 37
    # queries in blocks of 8 (a ragged last block) against the softmax of
    # plain ops, differentiated by each backend: the value and the
    # gradients of q, k, v and the bias.
    q, k, _, mask = _inputs(length=37, seed=8)
    rng = np.random.default_rng(9)
    v = rng.normal(size=q.shape[:3] + (12,)).astype("float32")
    bias = rng.normal(size=(37, 37)).astype("float32")
    w = ops.convert_to_tensor(rng.normal(size=v.shape).astype("float32"))
    m = ops.convert_to_tensor(mask)

    def chunked(q, k, v, bias):
        return ak.chunked_attention(q, k, v, m, causal, block_size=8,
                                    block_rows=block_rows, score_bias=bias)

    def plain(q, k, v, bias):
        scores = ops.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(8.0) + bias
        allowed = mask[:, None, None, :]
        if causal:
            allowed = allowed & np.tril(np.ones((37, 37), bool))
        weights = ops.softmax(ops.where(allowed, scores, -1e9), axis=-1)
        return ops.einsum("bhqk,bkhd->bqhd", weights, v)

    inputs = [ops.convert_to_tensor(x) for x in (q, k, v, bias)]
    assert_allclose(chunked(*inputs), plain(*inputs), atol=2e-6)
    _, ref_grads = value_and_grads(
        lambda *x: ops.sum(plain(*x) * w), q, k, v, bias)
    _, grads = value_and_grads(
        lambda *x: ops.sum(chunked(*x) * w), q, k, v, bias)
    for name, g, r in zip(("q", "k", "v", "bias"), grads, ref_grads):
        np.testing.assert_allclose(g, r, atol=2e-5, err_msg=f"d/d{name}")
    assert np.abs(ref_grads[3]).max() > 0.1  # the bias gradient is tested


def window_mask(length, window, back, forward):
    """(L, L) True where query i may attend key j: the windows of i's
    window index -back .. +forward (the NTFS code's `look_around`)."""
    w = np.arange(length) // window
    return (w[None, :] >= w[:, None] - back) & (w[None, :] <= w[:, None]
                                                  + forward)


def numpy_windowed(q, k, v, mask, window, back, forward):
    """Softmax attention under `window_mask` and the key mask, in numpy."""
    length = q.shape[1]
    scores = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])
    allowed = window_mask(length, window, back, forward)[None, None]
    allowed = allowed & mask[:, None, None, :]
    scores = np.where(allowed, scores, -np.inf)
    scores -= scores.max(-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", p, v)


@pytest.mark.parametrize("implementation", ["reference", "fused", "chunked"])
@pytest.mark.parametrize("back,forward", [(1, 1), (0, 0), (2, 0), (0, 1)])
def test_windowed_attention_is_attention_under_the_window_mask(
        implementation, back, forward):
    q, k, v, _ = _inputs(length=60, seed=5)
    # padding inside windows, none a whole window (no query without keys)
    mask = np.ones((2, 60), bool)
    mask[0, 26:34] = False
    mask[1, 50:] = False
    out = ak.windowed_attention(q, k, v, 12, back, forward, mask,
                                implementation=implementation, block_size=8)
    assert_allclose(out, numpy_windowed(q, k, v, mask, 12, back, forward),
                    atol=2e-6)


def _assert_same_value_and_grads(f, reference, q, k, v):
    """f(q, k, v) and its gradients equal those of `reference`."""
    value, grads = value_and_grads(f, q, k, v)
    ref_value, ref_grads = value_and_grads(reference, q, k, v)
    np.testing.assert_allclose(value, ref_value, rtol=1e-5)
    for name, g, r in zip("qkv", grads, ref_grads):
        np.testing.assert_allclose(g, r, atol=2e-5, err_msg=f"d/d{name}")


def test_windowed_attention_gradients_equal_the_masked_reference():
    q, k, v, mask = _inputs(length=48, seed=6)
    w = ops.convert_to_tensor(
        np.random.default_rng(7).normal(size=q.shape).astype("float32"))
    m = ops.convert_to_tensor(mask)
    allowed = window_mask(48, 16, 1, 1)

    def windowed(q, k, v):
        return ops.sum(ak.windowed_attention(
            q, k, v, 16, 1, 1, m, implementation="chunked",
            block_size=8) * w)

    def masked(q, k, v):  # the window as a key mask per query row
        rows = [ak.attention(q[:, i:i + 1], k, v, ops.logical_and(
            m, ops.convert_to_tensor(allowed[i])[None]),
            implementation="reference") for i in range(48)]
        return ops.sum(ops.concatenate(rows, axis=1) * w)

    _assert_same_value_and_grads(windowed, masked, q, k, v)


@pytest.mark.parametrize("implementation", ["reference", "fused", "chunked"])
@pytest.mark.parametrize("back,forward", [(1, 1), (0, 0), (2, 0), (0, 2)])
def test_many_windows_are_one_call_equal_to_the_window_mask(
        implementation, back, forward):
    # 15 windows of 4, more than LOOPED_WINDOWS: the batched layout
    assert 60 // 4 > ak.LOOPED_WINDOWS
    q, k, v, _ = _inputs(length=60, seed=11)
    mask = np.ones((2, 60), bool)
    mask[0, 25:31] = False  # padding inside windows, none a whole one
    mask[1, 57:] = False
    for m in (mask, None):
        expected = numpy_windowed(q, k, v, np.ones((2, 60), bool)
                                  if m is None else m, 4, back, forward)
        assert_allclose(ak.windowed_attention(
            q, k, v, 4, back, forward, m, implementation=implementation,
            block_size=8), expected, atol=2e-6)
    # a trailing part window: 62 positions, 16 windows
    q, k, v, _ = _inputs(length=62, seed=12)
    assert_allclose(ak.windowed_attention(q, k, v, 4, back, forward),
                    numpy_windowed(q, k, v, np.ones((2, 62), bool), 4,
                                   back, forward), atol=2e-6)


def test_batched_windows_give_the_looped_gradients():
    q, k, v, _ = _inputs(length=48, seed=13)
    w = ops.convert_to_tensor(
        np.random.default_rng(14).normal(size=q.shape).astype("float32"))
    mask = np.ones((2, 48), bool)
    mask[0, 18:22] = False
    mask[1, 45:] = False
    m = ops.convert_to_tensor(mask)

    def batched(q, k, v):  # 12 windows of 4
        return ops.sum(ak._windows_batched(
            q, k, v, 4, 1, 1, m, "chunked", 8, None) * w)

    def looped(q, k, v):  # the same windows, one call each
        rows = [ak.attention(q[:, i:i + 4], k[:, max(0, i - 4):i + 8],
                             v[:, max(0, i - 4):i + 8],
                             m[:, max(0, i - 4):i + 8],
                             implementation="reference")
                for i in range(0, 48, 4)]
        return ops.sum(ops.concatenate(rows, axis=1) * w)

    _assert_same_value_and_grads(batched, looped, q, k, v)


def test_windowed_attention_of_one_window_and_a_part_window():
    q, k, v, mask = _inputs(length=30, seed=8)
    # at most one window: plain attention
    assert_allclose(ak.windowed_attention(q, k, v, 30, 1, 1, mask),
                    numpy_attention(q, k, v, mask), atol=2e-6)
    assert_allclose(ak.windowed_attention(q, k, v, 64, 1, 1, mask),
                    numpy_attention(q, k, v, mask), atol=2e-6)
    # 30 positions in windows of 7: a trailing part window of 2
    mask = np.ones((2, 30), bool)
    mask[1, 24:] = False
    for m in (mask, None):
        expected = numpy_windowed(q, k, v, np.ones((2, 30), bool)
                                  if m is None else m, 7, 1, 1)
        assert_allclose(ak.windowed_attention(q, k, v, 7, 1, 1, m),
                        expected, atol=2e-6)


def test_a_window_of_padding_stays_finite_in_float16():
    # a padded query whose windows hold only padding: uniform, not NaN
    q, k, v, _ = _inputs(length=32, seed=10)
    mask = np.ones((2, 32), bool)
    mask[1, 8:] = False
    half = [ops.cast(t, "float16") for t in (q, k, v)]
    for implementation in ("reference", "chunked"):
        out = to_numpy(ak.windowed_attention(
            *half, 8, 1, 1, mask, implementation=implementation,
            block_size=8))
        assert np.isfinite(out).all(), implementation
        expected = numpy_windowed(q, k, v, mask, 8, 1, 1)
        assert_allclose(out[1, :8], expected[1, :8], atol=3e-3)


@pytest.mark.parametrize("length", [48, 50])
def test_windowed_attention_at_lengths_known_at_run_time(monkeypatch,
                                                         length):
    # A length unknown while tracing (TensorFlow: an export's signature,
    # `fit`'s relaxed shapes) takes the batch of windows, as many as the
    # length holds, the last padded: the windows' attention and its
    # gradients, whole windows and a trailing part, with a query whose
    # windows hold only padding finite in float16. JAX and PyTorch know
    # every length while tracing: there the batch of windows of the padded
    # inputs, which that path runs, is checked.
    import keras

    q, k, v, _ = _inputs(length=length, seed=9)
    mask = np.ones((2, length), bool)
    mask[1, 40:] = False
    expected = numpy_windowed(q, k, v, mask, 12, 1, 0)
    if keras.backend.backend() != "tensorflow":
        (qp, kp, vp), real, _ = ak.pad_to_blocks(
            (q, k, v), ops.convert_to_tensor(mask), 12)
        out = ak._windows_batched(qp, kp, vp, 12, 1, 0, real, "auto", None,
                                  None)[:, :length]
        assert_allclose(out, expected, atol=2e-6)
        return
    import tensorflow as tf

    batched = []
    windows_batched = ak._windows_batched
    monkeypatch.setattr(ak, "_windows_batched", lambda *a: batched.append(
        a[3]) or windows_batched(*a))
    spec = [tf.TensorSpec((None, None, 3, 8))] * 3 + [
        tf.TensorSpec((None, None), tf.bool)]
    w = tf.constant(np.random.default_rng(10).normal(size=q.shape),
                    tf.float32)

    @tf.function(input_signature=spec)
    def traced(q, k, v, mask):
        with tf.GradientTape() as tape:
            tape.watch((q, k, v))
            out = ak.windowed_attention(q, k, v, 12, 1, 0, mask)
            value = tf.reduce_sum(out * w)
        return out, tape.gradient(value, (q, k, v))

    def windows(q, k, v):
        return ops.sum(ak.windowed_attention(q, k, v, 12, 1, 0, mask) * w)

    out, grads = traced(q, k, v, mask)
    assert batched == [12]  # traced once, in windows of 12
    assert_allclose(out, expected, atol=2e-6)
    _, ref_grads = value_and_grads(windows, q, k, v)
    for name, g, r in zip("qkv", grads, ref_grads):
        np.testing.assert_allclose(g, r, atol=2e-5, err_msg=f"d/d{name}")
    half = tf.function(lambda q, k, v, m: ak.windowed_attention(
        q, k, v, 8, 1, 1, m), input_signature=[
            tf.TensorSpec((None, None, 3, 8), tf.float16)] * 3 + spec[3:])
    padded = np.ones((2, length), bool)
    padded[1, 8:] = False
    assert np.isfinite(to_numpy(half(
        *(tf.cast(t, tf.float16) for t in (q, k, v)), padded))).all()


def test_chunked_attention_in_bfloat16_keeps_its_softmax_in_float32():
    # bf16 inputs; the scores' statistics, the probabilities and the dK /
    # dV sums in float32. Against float64 attention of the same rounded
    # inputs (L = 512) each gradient is within 2.5e-2 of its largest
    # entry: 0.7e-2 under JAX (whose bf16 products XLA returns in float32
    # here), 1.7e-2 under TensorFlow and PyTorch (their products round to
    # bf16); with the softmax in bf16 (before) 4.0e-2 under JAX and
    # TensorFlow. The output is within 6e-2 (JAX 1.1e-2, the others
    # 3.1e-2; before 3.5e-2; TensorFlow on an AVX2-only CPU, whose bf16
    # products differ from AVX-512's, 5.2e-2 at 2 of 65,536 entries, its
    # gradients 1.5-1.8e-2).
    import keras

    rng = np.random.default_rng(3)
    q, k, v = (rng.normal(size=(2, 512, 2, 32)).astype("float32") * scale
               for scale in (1.5, 1.5, 1.0))
    mask = np.ones((2, 512), bool)
    mask[1, 384:] = False
    upstream = rng.normal(size=q.shape).astype("float32")
    rounded = [to_numpy(ops.cast(ops.cast(x, "bfloat16"), "float32"))
               .astype("float64") for x in (q, k, v)]

    def loss(q, k, v):
        out = ak.chunked_attention(
            *(ops.cast(x, "bfloat16") for x in (q, k, v)), mask)
        return ops.sum(ops.cast(out, "float32")
                       * ops.convert_to_tensor(upstream))

    out = ak.chunked_attention(*(ops.cast(x, "bfloat16") for x in (q, k, v)),
                               mask)
    assert keras.backend.standardize_dtype(out.dtype) == "bfloat16"
    assert_allclose(ops.cast(out, "float32"),
                    numpy_attention(*rounded, mask), atol=6e-2, rtol=0)
    _, grads = value_and_grads(loss, *rounded)
    _, want = value_and_grads(
        lambda q, k, v: ops.sum(ak.reference_attention(q, k, v, mask)
                                * ops.convert_to_tensor(upstream)),
        *rounded)
    for got, expected in zip(grads, want):
        assert np.abs(got - expected).max() <= 2.5e-2 * np.abs(expected).max()
