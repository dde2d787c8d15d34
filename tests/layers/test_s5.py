import math

import keras
import numpy as np
import pytest
from keras import ops

from lra_keras.layers import hippo
from lra_keras.layers.s5 import S5
from lra_keras.layers.s5 import block_hippo_n
from lra_keras.layers.s5 import gelu_tanh
from tests.testing import assert_allclose
from tests.testing import assert_causal_reads_no_future
from tests.testing import assert_config_round_trip
from tests.testing import assert_padding_changes_no_real_position
from tests.testing import assert_saving_round_trip
from tests.testing import numpy_gelu
from tests.testing import padded_sequences
from tests.testing import to_numpy


def numpy_gelu_tanh(x):
    """GELU's tanh approximation (jax.nn.gelu's default, S5's GELU)."""
    x = np.asarray(x, dtype="float64")
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)
    return 0.5 * x * (1.0 + np.tanh(inner))


def _make_layer(x, state_dim=16, num_blocks=2, seed=0, **kwargs):
    """A built S5 whose modes decay at different rates (a sharper test)."""
    kwargs = {"dt_min": 0.01, "dt_max": 0.5, **kwargs}
    layer = S5(state_dim=state_dim, num_blocks=num_blocks, **kwargs)
    layer.build(x.shape)
    rng = np.random.default_rng(seed)
    layer.Lambda_real.assign(-rng.uniform(0.05, 1.0, state_dim // 2))
    return layer


def numpy_ssm(layer, u):
    """The S5 recurrence step by step in complex128, from the weights.

    x_k = Lambda_bar x_{k-1} + B_bar u_k; y_k = 2 Re(C x_k) (conjugate
    pairs); the backward pass runs the same recurrence from the end.
    """
    w = {v.name: to_numpy(v).astype(np.float64) for v in layer.weights}
    lam = w["ssm_Lambda_real"] + 1j * w["ssm_Lambda_imag"]  # (Q,)
    if layer.clip_eigs:
        lam = np.minimum(lam.real, -1e-4) + 1j * lam.imag
    dt = np.exp(w["ssm_log_dt"])
    lambda_bar = np.exp(lam * dt)
    b = w["ssm_B_real"] + 1j * w["ssm_B_imag"]  # (Q, H)
    b_bar = ((lambda_bar - 1.0) / lam)[:, None] * b
    c = w["C_real"] + 1j * w["C_imag"]  # (dirs, H, Q)
    batch, length, _ = u.shape
    y = np.zeros(u.shape)
    orders = [range(length), range(length - 1, -1, -1)]
    for d in range(c.shape[0]):
        x = np.zeros((batch, lam.shape[0]), np.complex128)
        for k in orders[d]:
            x = lambda_bar * x + u[:, k].astype(np.float64) @ b_bar.T
            y[:, k] += 2.0 * (x @ c[d].T).real
    return y


def numpy_layer(layer, x, mask):
    """Full layer (S5's `SequenceLayer` without residual and norm, no
    dropout): mask, x = SSM + D u, GELU (tanh), output activation."""
    u = x * mask[..., None]
    pre = numpy_ssm(layer, u) + u * to_numpy(layer.D)
    y = numpy_gelu_tanh(pre)
    if layer.output_activation is None:
        return y
    dense = layer.output_dense
    z = y @ to_numpy(dense.kernel) + to_numpy(dense.bias)
    sigmoid = 1.0 / (1.0 + np.exp(-z))
    if layer.output_activation == "glu":
        h = z.shape[-1] // 2
        return z[..., :h] / (1.0 + np.exp(-z[..., h:]))
    if layer.output_activation == "half_glu":  # S5 half_glu1
        return y * sigmoid
    if layer.output_activation == "half_glu2":  # x * sigmoid(W gelu(x))
        return pre * sigmoid
    return z


@pytest.mark.numpy_only
def test_block_hippo_n_diagonalises_each_legs_normal_block():
    lam, v = block_hippo_n(24, 3)  # 3 blocks of size 8, 4 states each
    assert lam.shape == (12,) and v.shape == (24, 12)
    expected, _, _ = hippo.legs_nplr(8)
    np.testing.assert_allclose(lam, np.tile(expected, 3), atol=1e-10)
    a, _ = hippo.legs(8)
    p = np.sqrt(0.5 + np.arange(8))
    s = np.kron(np.eye(3), a + np.outer(p, p))  # block-diagonal normal part
    np.testing.assert_allclose(s @ v, v * lam, atol=1e-10)
    np.testing.assert_allclose(v.conj().T @ v, np.eye(12), atol=1e-10)
    np.testing.assert_allclose(lam.real, -0.5, atol=1e-12)
    assert np.all(lam.imag < 0)


@pytest.mark.parametrize(
    "C_init, mean_square",
    [("trunc_standard_normal", lambda p, h: 2.0 / p),
     ("lecun_normal", lambda p, h: 2.0 / (p * h)),
     ("complex_normal", lambda p, h: 1.0)],
)
def test_init_follows_s5(C_init, mean_square):
    keras.utils.set_random_seed(0)
    p, h = 16, 8
    lam, v = block_hippo_n(p, 2)
    b0, c = [], []
    for _ in range(4):  # pool four small layers for the statistics
        layer = S5(state_dim=p, num_blocks=2, C_init=C_init, causal=False)
        layer.build((1, None, h))
        assert_allclose(layer.Lambda_real, lam.real, atol=1e-6)
        assert_allclose(layer.Lambda_imag, lam.imag, atol=1e-5)
        dt = np.exp(to_numpy(layer.log_dt))
        assert dt.shape == (p // 2,)
        assert np.all((dt >= 0.001 * 0.999) & (dt <= 0.1 * 1.001))
        # B_tilde = V^* B_0, B_0 real lecun normal: 2 Re(V B_tilde) = B_0.
        b = to_numpy(layer.B_real) + 1j * to_numpy(layer.B_imag)
        b0.append(2.0 * (v @ b).real)  # (P, H)
        c.append(to_numpy(layer.C_real) + 1j * to_numpy(layer.C_imag))
        assert c[-1].shape == (2, h, p // 2)
        assert not np.allclose(c[-1][0], c[-1][1])
    assert abs(np.std(b0) * math.sqrt(p) - 1.0) < 0.15
    ratio = np.mean(np.abs(np.array(c)) ** 2) / mean_square(p, h)
    assert 0.7 < ratio < 1.3, ratio


@pytest.mark.parametrize(
    "C_init, part_std",
    [("trunc_standard_normal", lambda p, h: 1.0 / math.sqrt(p)),
     ("lecun_normal", lambda p, h: 1.0 / math.sqrt(p * h)),
     ("complex_normal", lambda p, h: math.sqrt(0.5))],
)
def test_initial_C_and_B_stds_are_s5s_closed_forms(C_init, part_std):
    # s5/ssm.py 171-210, s5/ssm_init.py 134-168: C_0 (H, P, 2) lecun
    # normal per row (fan-in P) or over the whole (fan-in P H), truncated
    # so that the std is exact, then C_0 V; V's columns are orthonormal,
    # so both parts of C keep that std. complex_normal: normal(sqrt(1/2)).
    # B_0 (P, H) lecun normal (fan-in P), recovered as 2 Re(V B_tilde).
    keras.utils.set_random_seed(1)
    p, blocks, h = 64, 4, 32
    _, v = block_hippo_n(p, blocks)
    parts, b0 = [[], []], []
    for _ in range(2):  # 2 x (2 directions x 32 x 32) complex entries
        layer = S5(state_dim=p, num_blocks=blocks, C_init=C_init,
                   causal=False)
        layer.build((1, None, h))
        parts[0].append(to_numpy(layer.C_real))
        parts[1].append(to_numpy(layer.C_imag))
        b = to_numpy(layer.B_real) + 1j * to_numpy(layer.B_imag)
        b0.append(2.0 * (v @ b).real)
    expected = part_std(p, h)
    for part in parts:  # 4096 values: the std's relative error is ~1.1%
        part = np.concatenate(part).ravel()
        assert abs(np.std(part) / expected - 1.0) < 0.06, np.std(part)
        assert abs(np.mean(part)) < 5.0 * expected / math.sqrt(part.size)
    b0 = np.concatenate(b0).ravel()
    assert abs(np.std(b0) * math.sqrt(p) - 1.0) < 0.06, np.std(b0)


def test_clip_eigs_clips_the_real_part_at_minus_1e_4():
    # s5/ssm.py line 155: np.clip(Lambda_re, None, -1e-4).
    x = np.zeros((1, 4, 8), "float32")
    for clip in (True, False):
        layer = _make_layer(x, state_dim=8, num_blocks=1, clip_eigs=clip)
        lam = np.array([0.5, -5e-5, -1e-4, -0.3], "float32")
        layer.Lambda_real.assign(lam)
        _, (dta_real, dta_imag) = layer.discretize()
        dt = np.exp(to_numpy(layer.log_dt))
        expected = np.minimum(lam, -1e-4) if clip else lam
        assert_allclose(dta_real, expected * dt, rtol=1e-6, atol=1e-12)
        assert_allclose(dta_imag, to_numpy(layer.Lambda_imag) * dt,
                        rtol=1e-6)


def test_default_activation_is_s5s_tanh_gelu():
    # flax.linen.gelu is jax.nn.gelu(approximate=True) (S5's s5/layers.py).
    assert S5().activation is gelu_tanh
    z = np.linspace(-6.0, 6.0, 241).astype("float32")
    assert_allclose(gelu_tanh(z), numpy_gelu_tanh(z), atol=1e-6)
    # ... which is not Keras's exact "gelu".
    assert np.max(np.abs(numpy_gelu_tanh(z) - numpy_gelu(z))) > 1e-4
    layer = S5.from_config(S5(state_dim=8).get_config())
    assert layer.activation is gelu_tanh
    assert S5(activation="gelu").activation is not gelu_tanh


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("length", [1, 9, 24])
def test_ssm_matches_numpy_recurrence(length, causal):
    rng = np.random.default_rng(length)
    u = rng.normal(size=(2, length, 8)).astype("float32")
    layer = _make_layer(u, causal=causal)
    y = layer.ssm_convolve(ops.convert_to_tensor(u))
    assert_allclose(y, numpy_ssm(layer, u), atol=1e-4, rtol=1e-4)


def test_ssm_with_clipped_eigenvalues_matches_numpy_recurrence():
    u = np.random.default_rng(7).normal(size=(2, 24, 8)).astype("float32")
    layer = _make_layer(u, clip_eigs=True, causal=False)
    layer.Lambda_real.assign(np.linspace(-1.0, 0.5, 8))  # some unstable
    y = layer.ssm_convolve(ops.convert_to_tensor(u))
    assert_allclose(y, numpy_ssm(layer, u), atol=1e-4, rtol=1e-4)


def test_ssm_with_many_blocks_matches_numpy_recurrence():
    u = np.random.default_rng(8).normal(size=(2, 24, 8)).astype("float32")
    layer = _make_layer(u, num_blocks=4, causal=False, dt_max=1.0)
    y = layer.ssm_convolve(ops.convert_to_tensor(u))
    assert_allclose(y, numpy_ssm(layer, u), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize(
    "output_activation", ["glu", "half_glu", "half_glu2", None]
)
@pytest.mark.parametrize("causal", [True, False])
def test_layer_matches_numpy_reference(causal, output_activation):
    rng = np.random.default_rng(9)
    x = rng.normal(size=(2, 24, 8)).astype("float32")
    mask = np.ones((2, 24), "float32")
    mask[1, 15:] = 0.0
    layer = _make_layer(
        x, causal=causal, output_activation=output_activation
    )
    out = layer(x, padding_mask=mask)
    expected = numpy_layer(layer, x, mask)
    assert_allclose(out, expected, atol=1e-4, rtol=1e-4)


def test_causal_layer_ignores_the_future():
    assert_causal_reads_no_future(_make_layer)


def test_padding_does_not_change_real_positions():
    assert_padding_changes_no_real_position(_make_layer)


def test_read_padding_scans_the_padding_as_the_s5_code():
    # The S5 code scans the whole padded batch: with `read_padding` the
    # mask changes nothing in the layer, and the backward scan carries the
    # (suffix) padding into the real positions; a causal scan cannot.
    x, mask = padded_sequences(np.random.default_rng(12))
    for causal in (False, True):
        reading = _make_layer(x, causal=causal, read_padding=True)
        zeroing = _make_layer(x, causal=causal)
        zeroing.set_weights(reading.get_weights())
        read = to_numpy(reading(x, padding_mask=mask))
        assert_allclose(read, reading(x), atol=1e-6)
        zeroed = to_numpy(zeroing(x, padding_mask=mask))
        gap = np.abs(read[mask] - zeroed[mask]).max()
        if causal:
            assert gap < 1e-5
        else:
            assert gap > 1e-2
            # the padding read is the inputs', not zeros
            assert_allclose(read, zeroing(x), atol=1e-6)
    assert assert_config_round_trip(reading).read_padding is True


def _dynamic_model(layer, hidden_dim=8):
    inputs = keras.Input((None, hidden_dim))
    return keras.Model(inputs, layer(inputs))


def test_serialization_round_trips(tmp_path):
    layer = S5(state_dim=16, num_blocks=2, C_init="lecun_normal", dt_min=0.01,
               dt_max=0.2, clip_eigs=True, causal=False,
               output_activation="half_glu2", dropout=0.1)
    rebuilt = assert_config_round_trip(layer)
    assert rebuilt.num_blocks == 2 and rebuilt.C_init == "lecun_normal"
    assert rebuilt.output_activation == "half_glu2"
    assert rebuilt.clip_eigs is True and rebuilt.activation is gelu_tanh
    model = _dynamic_model(layer)
    x = np.random.default_rng(13).normal(size=(2, 24, 8)).astype("float32")
    loaded = assert_saving_round_trip(model, x, tmp_path, atol=1e-5)
    # The reloaded model still accepts any length.
    assert tuple(loaded(x[:, :9]).shape) == (2, 9, 8)


def test_fit_with_dynamic_lengths_updates_every_weight():
    # Finite, nonzero gradients reach every weight: Adam moves each one.
    layer = S5(state_dim=16, num_blocks=2, causal=False)
    inputs = keras.Input((None, 8))
    outputs = keras.layers.GlobalAveragePooling1D()(layer(inputs))
    model = keras.Model(inputs, keras.layers.Dense(1)(outputs))
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
    before = [to_numpy(w).copy() for w in layer.trainable_weights]
    rng = np.random.default_rng(14)
    # Batches of different lengths: TensorFlow retraces with length None.
    batches = [
        (rng.normal(size=(2, n, 8)).astype("float32"),
         rng.normal(size=(2, 1)).astype("float32"))
        for n in (24, 9)
    ]
    history = model.fit(
        (b for b in batches), steps_per_epoch=2, epochs=1, shuffle=False,
        verbose=0,
    )
    assert np.isfinite(history.history["loss"][0])
    for old, new in zip(before, layer.trainable_weights):
        new = to_numpy(new)
        assert np.all(np.isfinite(new))
        assert not np.allclose(old, new), new


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(state_dim=12, num_blocks=4), "state_dim"),
        (dict(state_dim=7), "state_dim"),
        (dict(num_blocks=0), "num_blocks"),
        (dict(C_init="normal"), "C_init"),
        (dict(dt_min=0.1, dt_max=0.01), "dt_min"),
    ],
)
def test_bad_arguments_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        S5(**kwargs)


def test_complex_normal_C_parts_are_independent():
    # Seeded: the correlation of independent draws is itself random.
    keras.utils.set_random_seed(0)
    # One initializer per part: an unseeded Keras initializer called twice
    # returns the same values.
    layer = S5(state_dim=32, num_blocks=2, C_init="complex_normal",
               causal=False)
    layer.build((1, 4, 32))
    c_real, c_imag = to_numpy(layer.C_real), to_numpy(layer.C_imag)
    assert abs(np.corrcoef(c_real.ravel(), c_imag.ravel())[0, 1]) < 0.1
