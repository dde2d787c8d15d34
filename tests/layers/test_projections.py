import keras
import numpy as np
import pytest
from keras import ops

from lra_keras.layers.projections import Dense
from lra_keras.layers.projections import EinsumDense
from lra_keras.layers.projections import contracted_axes
from lra_keras.layers.projections import dense_glu
from lra_keras.layers.projections import matmul
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import to_numpy
from tests.testing import value_and_grads


def _random(rng, shape):
    return rng.normal(size=shape).astype("float32")


def _loss_grads(layer, x, upstream, call=None):
    """sum(upstream * call(x)) (by default `layer(x)`) and its gradients
    by x and by each of the layer's weights (kernel, then bias), their
    values swapped in by a `StatelessScope`."""
    call = call or layer

    def loss(x, *weights):
        with keras.StatelessScope(state_mapping=list(
                zip(layer.trainable_weights, weights))):
            out = call(x)
        return ops.sum(out * ops.convert_to_tensor(upstream))

    return value_and_grads(loss, x, *[to_numpy(w) for w in
                                      layer.trainable_weights])


@pytest.mark.parametrize("equation,expected", [
    ("bld,dhk->blhk", 1),
    ("blhk,hkd->bld", 2),
    ("blhk,km->blhm", 1),
    ("ab,bc->ac", 1),
    ("ab,bc->ca", None),  # the output transposed
    ("bld,hd->blh", None),  # the kernel's last axis contracted
    ("bld,dl->bl", None),  # a letter in both kept parts
    ("...d,de->...e", None),
    ("bd,de->be,bd", None),
])
def test_contracted_axes(equation, expected):
    assert contracted_axes(equation) == expected


@pytest.mark.parametrize("shape", [(3, 5, 4), (2, 3, 5, 4), (6, 4)])
def test_dense_values_and_gradients_match_numpy(shape):
    rng = np.random.default_rng(0)
    x, upstream = _random(rng, shape), _random(rng, shape[:-1] + (3,))
    layer = Dense(3, bias_initializer="glorot_uniform")
    layer.build(shape)
    kernel, bias = (to_numpy(w) for w in layer.weights)
    value, (dx, dkernel, dbias) = _loss_grads(layer, x, upstream)
    x64, u64 = x.astype("float64"), upstream.astype("float64")
    assert_allclose(layer(x), x64 @ kernel + bias, atol=1e-5)
    assert_allclose(value, np.sum((x64 @ kernel + bias) * u64), atol=1e-4)
    rows = x64.reshape(-1, shape[-1])
    assert_allclose(dx, u64 @ kernel.T, atol=1e-5)
    assert_allclose(dkernel, rows.T @ u64.reshape(rows.shape[0], -1),
                    atol=1e-4)
    assert_allclose(dbias, u64.reshape(-1, 3).sum(0), atol=1e-5)


@pytest.mark.parametrize("shape", [(3, 5, 4), (2, 3, 5, 4), (6, 4)])
def test_matmul_values_and_gradients_match_numpy(shape):
    rng = np.random.default_rng(6)
    x, kernel = _random(rng, shape), _random(rng, (4, 3))
    upstream = _random(rng, shape[:-1] + (3,))
    value, (dx, dkernel) = value_and_grads(
        lambda x, w: ops.sum(matmul(x, w) * ops.convert_to_tensor(upstream)),
        x, kernel)
    x64, u64 = x.astype("float64"), upstream.astype("float64")
    assert_allclose(matmul(x, kernel), x64 @ kernel, atol=1e-5)
    assert_allclose(value, np.sum((x64 @ kernel) * u64), atol=1e-4)
    assert_allclose(dx, u64 @ kernel.T, atol=1e-5)
    assert_allclose(dkernel, x64.reshape(-1, 4).T @ u64.reshape(-1, 3),
                    atol=1e-4)


EINSUMS = [
    # (equation, input shape, output_shape, bias_axes)
    ("bld,dhk->blhk", (2, 5, 4), (None, 3, 2), "hk"),
    ("blhk,hkd->bld", (2, 5, 3, 2), (None, 4), "d"),
    ("blhk,km->blhm", (2, 5, 3, 2), (None, 3, 6), None),
    ("bld,hd->blh", (2, 5, 4), (None, 3), "h"),  # Keras's own path
]


@pytest.mark.parametrize("equation,shape,output_shape,bias_axes", EINSUMS)
def test_einsum_dense_values_and_gradients_match_numpy(
        equation, shape, output_shape, bias_axes):
    rng = np.random.default_rng(1)
    layer = EinsumDense(equation, output_shape=output_shape,
                        bias_axes=bias_axes,
                        bias_initializer="glorot_uniform")
    layer.build(shape)
    x = _random(rng, shape)
    expected = np.einsum(equation, x.astype("float64"),
                         to_numpy(layer.kernel).astype("float64"))
    if bias_axes:
        expected = expected + to_numpy(layer.bias)
    assert_allclose(layer(x), expected, atol=1e-5)
    upstream = _random(rng, expected.shape)
    _, (dx, dkernel, *dbias) = _loss_grads(layer, x, upstream)
    operands, output = equation.split("->")
    x_axes, kernel_axes = operands.split(",")
    u64 = upstream.astype("float64")
    assert_allclose(dx, np.einsum(f"{output},{kernel_axes}->{x_axes}", u64,
                                  to_numpy(layer.kernel)), atol=1e-5)
    assert_allclose(dkernel, np.einsum(f"{x_axes},{output}->{kernel_axes}",
                                       x, u64), atol=1e-4)
    if bias_axes:
        kept = "".join(a for a in output if a in bias_axes)
        assert_allclose(dbias[0], np.einsum(f"{output}->{kept}", u64),
                        atol=1e-5)


def test_the_product_runs_on_two_dimensional_operands_under_jax():
    # Under JAX every product of the layers' forward and backward passes
    # takes 2-D operands, one axis contracted (the fold of the module
    # docstring); elsewhere they are Keras's layers (equal outputs above).
    if keras.backend.backend() != "jax":
        pytest.skip("the fold is JAX's; TensorFlow runs Keras's layers, "
                    "PyTorch `linear` (below)")
    import jax

    rng = np.random.default_rng(2)
    for layer, shape in ((Dense(3), (2, 5, 4)),
                         (EinsumDense("blhk,hkd->bld", output_shape=(None, 4),
                                      bias_axes="d"), (2, 5, 3, 2))):
        layer.build(shape)
        weights = [to_numpy(w) for w in layer.trainable_weights]

        def loss(weights, x, layer=layer):
            return ops.sum(layer.stateless_call(weights, [], x)[0])

        _assert_two_dimensional_products(jax.make_jaxpr(jax.grad(
            loss, argnums=(0, 1)))(weights, _random(rng, shape)))
    _assert_two_dimensional_products(jax.make_jaxpr(jax.grad(
        lambda x, w: ops.sum(matmul(x, w)), argnums=(0, 1)))(
            _random(rng, (2, 5, 4)), _random(rng, (4, 3))))


def _assert_two_dimensional_products(jaxpr):
    products = [e for e in jaxpr.eqns if e.primitive.name == "dot_general"]
    assert len(products) == 3  # forward, input and weight gradients
    for product in products:
        (contracting, _), _ = product.params["dimension_numbers"]
        assert [v.aval.ndim for v in product.invars] == [2, 2]
        assert len(contracting) == 1


def test_the_bias_is_added_inside_the_product_under_torch():
    # Under PyTorch each layer's forward pass is one `linear`, the bias
    # added inside the product (`addmm`), where Keras's layers take a
    # product and then an addition (values against numpy above; partial
    # bias axes keep the addition, as Keras's layer).
    if keras.backend.backend() != "torch":
        pytest.skip("`_torch_linear` is PyTorch's; JAX folds, TensorFlow "
                    "runs Keras's")
    from torch.utils._python_dispatch import TorchDispatchMode

    class Calls(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(func.__name__.split(".")[0])
            return func(*args, **(kwargs or {}))

    rng = np.random.default_rng(5)
    cases = [
        (Dense(3), (2, 5, 4), ["addmm"]),
        (Dense(3, use_bias=False), (2, 5, 4), ["mm"]),
        (EinsumDense("bld,dh->blh", output_shape=(None, 3),
                     bias_axes="h"), (2, 5, 4), ["addmm"]),
        (EinsumDense("bld,dhk->blhk", output_shape=(None, 3, 2),
                     bias_axes="hk"), (2, 5, 4), ["addmm"]),
        (EinsumDense("blhk,hkd->bld", output_shape=(None, 4),
                     bias_axes="d"), (2, 5, 3, 2), ["addmm"]),
        (EinsumDense("bld,dhk->blhk", output_shape=(None, 3, 2),
                     bias_axes="k"), (2, 5, 4), ["mm", "add"]),
    ]
    for layer, shape, products in cases:
        layer.build(shape)
        x = ops.convert_to_tensor(_random(rng, shape))
        with Calls() as calls:
            layer(x)
        assert [n for n in calls.names if n in ("addmm", "mm", "bmm",
                                                "add")] == products, (
            layer.name, calls.names)


@pytest.mark.parametrize("make", [
    lambda: (Dense(6, activation="gelu"),
             keras.layers.Dense(6, activation="gelu")),
    lambda: (EinsumDense("bld,dhk->blhk", output_shape=(None, 3, 2),
                         bias_axes="hk", activation="relu"),
             keras.layers.EinsumDense("bld,dhk->blhk",
                                      output_shape=(None, 3, 2),
                                      bias_axes="hk", activation="relu")),
])
def test_equals_the_keras_layer_with_its_names_and_weights(make):
    ours, theirs = make()
    x = _random(np.random.default_rng(3), (2, 7, 4))
    ours.build(x.shape)
    theirs.build(x.shape)
    theirs.set_weights(ours.get_weights())
    assert_allclose(ours(x), theirs(x), atol=1e-6)
    # Checkpoints load either way: the automatic names come from the same
    # counter as Keras's (`dense`, `dense_1`, ...; `einsum_dense`, ...), the
    # weights' names are Keras's, and so is the configuration.
    stem = {"Dense": "dense", "EinsumDense": "einsum_dense"}[
        type(theirs).__name__]
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.name.startswith(stem) and theirs.name.startswith(stem)
    assert [w.path.split("/", 1)[1] for w in ours.weights] == [
        w.path.split("/", 1)[1] for w in theirs.weights]
    assert (dict(ours.get_config(), name=None)
            == dict(theirs.get_config(), name=None))


def test_mixed_bfloat16_matches_the_keras_layer():
    x = _random(np.random.default_rng(4), (2, 7, 4))
    ours = Dense(5, dtype="mixed_bfloat16")
    theirs = keras.layers.Dense(5, dtype="mixed_bfloat16")
    ours.build(x.shape)
    theirs.build(x.shape)
    theirs.set_weights(ours.get_weights())
    out = ours(x)
    assert keras.backend.standardize_dtype(out.dtype) == "bfloat16"
    assert_allclose(ops.cast(out, "float32"),
                    ops.cast(theirs(x), "float32"), atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("shape", [(3, 5, 4), (6, 4)])
def test_dense_glu_values_and_gradients_match_numpy(shape):
    rng = np.random.default_rng(7)
    x, upstream = _random(rng, shape), _random(rng, shape[:-1] + (3,))
    layer = Dense(6, bias_initializer="glorot_uniform")
    layer.build(shape)
    kernel, bias = (to_numpy(w).astype("float64") for w in layer.weights)
    x64, u64 = x.astype("float64"), upstream.astype("float64")
    a, b = x64 @ kernel[:, :3] + bias[:3], x64 @ kernel[:, 3:] + bias[3:]
    gate = 1.0 / (1.0 + np.exp(-b))
    assert_allclose(dense_glu(layer, x), a * gate, atol=1e-5)
    value, (dx, dkernel, dbias) = _loss_grads(
        layer, x, upstream, lambda x: dense_glu(layer, x))
    da, db = u64 * gate, u64 * a * gate * (1.0 - gate)
    rows = x64.reshape(-1, shape[-1])
    da, db = da.reshape(rows.shape[0], 3), db.reshape(rows.shape[0], 3)
    assert_allclose(value, np.sum(a * gate * u64), atol=1e-4)
    assert_allclose(dx.reshape(rows.shape),
                    da @ kernel[:, :3].T + db @ kernel[:, 3:].T, atol=1e-5)
    assert_allclose(dkernel, np.concatenate([rows.T @ da, rows.T @ db], 1),
                    atol=1e-4)
    assert_allclose(dbias, np.concatenate([da.sum(0), db.sum(0)]),
                    atol=1e-5)


def test_dense_glu_takes_the_layers_own_path_where_it_must():
    # An activation, LoRA: `glu(dense(x))` as the layer computes it.
    x = _random(np.random.default_rng(8), (2, 5, 4))
    for layer in (Dense(6, activation="relu"), Dense(6)):
        layer.build(x.shape)
        if layer.activation is keras.activations.linear:
            layer.enable_lora(2, b_initializer="ones")
        assert_allclose(dense_glu(layer, x), ops.glu(layer(x)), atol=1e-6)


def test_dense_glu_in_mixed_bfloat16():
    x = _random(np.random.default_rng(9), (2, 7, 4))
    mixed, full = Dense(6, dtype="mixed_bfloat16"), Dense(6)
    mixed.build(x.shape)
    full.build(x.shape)
    full.set_weights(mixed.get_weights())
    out = dense_glu(mixed, x)
    assert keras.backend.standardize_dtype(out.dtype) == "bfloat16"
    assert_allclose(ops.cast(out, "float32"), dense_glu(full, x),
                    atol=2e-2, rtol=2e-2)


def test_config_and_saving_round_trip(tmp_path):
    inputs = keras.Input((7, 4))
    hidden = EinsumDense("bld,dhk->blhk", output_shape=(None, 3, 2),
                         bias_axes="hk")(inputs)
    outputs = Dense(2)(keras.layers.Reshape((7, 6))(hidden))
    model = keras.Model(inputs, outputs)
    for layer in model.layers[1:]:
        if isinstance(layer, (Dense, EinsumDense)):
            assert_config_round_trip(layer)
    loaded = assert_saving_round_trip(
        model, _random(np.random.default_rng(5), (2, 7, 4)), tmp_path)
    assert [type(layer) for layer in loaded.layers] == [
        type(layer) for layer in model.layers]
