import math

import keras
import numpy as np
import pytest
from keras import ops

from lra_keras.layers.lru import LRU
from lra_keras.layers.ssm_kernels import diagonal_recurrence
from lra_keras.layers.ssm_kernels import diagonal_recurrence_scan
from tests.testing import assert_allclose
from tests.testing import assert_causal_reads_no_future
from tests.testing import assert_config_round_trip
from tests.testing import assert_padding_changes_no_real_position
from tests.testing import assert_saving_round_trip
from tests.testing import fit_one_step
from tests.testing import numpy_gelu
from tests.testing import to_numpy


def _make_layer(x, state_dim=12, **kwargs):
    layer = LRU(state_dim=state_dim, **{"r_min": 0.5, **kwargs})
    layer.build(x.shape)
    return layer


def numpy_ssm(layer, u):
    """The LRU recurrence step by step in complex128, from the weights:
    x_k = lambda x_{k-1} + gamma B u_k, y_k = Re(C x_k); the reverse-time
    pass runs the same recurrence from the end with its own C."""
    w = {v.name: to_numpy(v).astype(np.float64) for v in layer.weights}
    lam = np.exp(-np.exp(w["ssm_nu_log"]) + 1j * np.exp(w["ssm_theta_log"]))
    b = (w["ssm_B_real"] + 1j * w["ssm_B_imag"]) * np.exp(
        w["ssm_gamma_log"])[:, None]
    c = w["C_real"] + 1j * w["C_imag"]  # (dirs, H, N)
    batch, length, _ = u.shape
    y = np.zeros(u.shape)
    orders = [range(length), range(length - 1, -1, -1)]
    for d in range(c.shape[0]):
        x = np.zeros((batch, lam.shape[0]), np.complex128)
        for k in orders[d]:
            x = lam * x + u[:, k].astype(np.float64) @ b.T
            y[:, k] += (x @ c[d].T).real
    return y


@pytest.mark.parametrize("recurrence", ["chunked", "convolution", "scan"])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("length", [1, 9, 24, 70])
def test_ssm_matches_numpy_recurrence(length, causal, recurrence):
    rng = np.random.default_rng(length)
    u = rng.normal(size=(2, length, 8)).astype("float32")
    layer = _make_layer(u, causal=causal, recurrence=recurrence)
    y = layer.ssm_convolve(ops.convert_to_tensor(u))
    assert_allclose(y, numpy_ssm(layer, u), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("recurrence", ["chunked", "convolution"])
@pytest.mark.parametrize("causal", [True, False])
def test_the_scan_and_the_others_give_the_same_states(causal, recurrence):
    # |z| up to 0.9999: long memories, where an FFT of z^l loses most.
    rng = np.random.default_rng(1)
    n, length = 16, 300
    modulus = np.linspace(0.5, 0.9999, n)
    phase = rng.uniform(0, 2 * np.pi, n)
    log_z = (np.log(modulus).astype("float32"), phase.astype("float32"))
    v = tuple(rng.normal(size=(2, length, n)).astype("float32")
              for _ in range(2))
    states = diagonal_recurrence(v, log_z, causal, recurrence)
    scan = diagonal_recurrence_scan(v, log_z, causal)
    assert len(states) == len(scan) == (1 if causal else 2)
    for a, b in zip(states, scan):
        scale = np.max(np.abs(to_numpy(b[0])))
        for part_a, part_b in zip(a, b):
            assert_allclose(part_a, part_b, atol=2e-4 * scale)


def test_layer_matches_numpy_reference():
    # mask, x = Re(C x) + D u, GELU, GLU: the LRU block of the paper
    # without its residual and norm.
    rng = np.random.default_rng(9)
    x = rng.normal(size=(2, 24, 8)).astype("float32")
    mask = np.ones((2, 24), "float32")
    mask[1, 15:] = 0.0
    layer = _make_layer(x, causal=False)
    out = layer(x, padding_mask=mask)
    u = x * mask[..., None]
    y = numpy_gelu(numpy_ssm(layer, u) + u * to_numpy(layer.D))
    z = y @ to_numpy(layer.output_dense.kernel) + to_numpy(
        layer.output_dense.bias)
    expected = z[..., :8] / (1.0 + np.exp(-z[..., 8:]))
    assert_allclose(out, expected, atol=1e-4, rtol=1e-4)


def test_initialisation_is_the_papers():
    # Ring initialisation: |lambda|^2 ~ U[r_min^2, r_max^2], phase ~ U[0,
    # max_phase]; gamma = sqrt(1 - |lambda|^2); B parts N(0, 1/(2H)), C
    # parts N(0, 1/N) (LRU paper appendix A).
    keras.utils.set_random_seed(3)
    n, h = 4000, 32
    r_min, r_max, max_phase = 0.4, 0.9, math.pi / 10
    layer = LRU(state_dim=n, r_min=r_min, r_max=r_max, max_phase=max_phase)
    layer.build((1, 10, h))
    modulus = np.exp(-np.exp(to_numpy(layer.nu_log).astype(np.float64)))
    phase = np.exp(to_numpy(layer.theta_log).astype(np.float64))
    assert r_min <= modulus.min() and modulus.max() <= r_max
    assert 0 <= phase.min() and phase.max() <= max_phase
    # Kolmogorov-Smirnov distances to the uniform laws (n = 4000: 0.03 is
    # beyond the 99.9% critical value 0.031 only by chance).
    for sample, low, high in ((modulus**2, r_min**2, r_max**2),
                              (phase, 0.0, max_phase)):
        cdf = (np.sort(sample) - low) / (high - low)
        ks = np.max(np.abs(cdf - (np.arange(n) + 0.5) / n))
        assert ks < 0.031
    gamma = np.exp(to_numpy(layer.gamma_log).astype(np.float64))
    np.testing.assert_allclose(gamma, np.sqrt(1 - modulus**2), rtol=1e-4)
    for weight, std in ((layer.B_real, 1 / math.sqrt(2 * h)),
                        (layer.B_imag, 1 / math.sqrt(2 * h)),
                        (layer.C_real, 1 / math.sqrt(n)),
                        (layer.C_imag, 1 / math.sqrt(n))):
        np.testing.assert_allclose(np.std(to_numpy(weight)), std, rtol=0.02)
    assert not np.allclose(to_numpy(layer.B_real), to_numpy(layer.B_imag))


def test_gamma_normalisation_keeps_white_noise_at_unit_scale():
    # E|x|^2 = |gamma|^2 / (1 - |lambda|^2) E|Bu|^2 = E|Bu|^2 for white u,
    # even with |lambda| close to 1.
    keras.utils.set_random_seed(4)
    rng = np.random.default_rng(4)
    layer = LRU(state_dim=64, r_min=0.99, r_max=0.999, output_activation=None)
    u = rng.normal(size=(64, 4000, 16)).astype("float32")
    layer.build(u.shape)
    gamma = ops.exp(layer.gamma_log)[:, None]
    v = (ops.matmul(u, ops.transpose(layer.B_real * gamma)),
         ops.matmul(u, ops.transpose(layer.B_imag * gamma)))
    (x_real, x_imag), = diagonal_recurrence(v, layer.log_lambda())
    power = (to_numpy(x_real) ** 2 + to_numpy(x_imag) ** 2)[:, -1000:]
    bu = np.sum(to_numpy(layer.B_real) ** 2 + to_numpy(layer.B_imag) ** 2,
                axis=1)  # E|B u|^2 per state, unit-variance u
    np.testing.assert_allclose(power.mean(axis=(0, 1)) / bu, 1.0, atol=0.25)
    # Without gamma the same states are 1 / (1 - |lambda|^2) >= 50 x larger.
    modulus = np.exp(-np.exp(to_numpy(layer.nu_log)))
    assert np.min(1 / (1 - modulus**2)) > 50


def test_causal_layer_ignores_the_future():
    assert_causal_reads_no_future(_make_layer)


def test_padding_does_not_change_real_positions():
    assert_padding_changes_no_real_position(_make_layer)


@pytest.mark.parametrize(
    "kwargs, message",
    [(dict(r_min=0.9, r_max=0.5), "r_min"),
     (dict(r_max=1.0), "r_max"),
     (dict(max_phase=0.0), "max_phase"),
     (dict(recurrence="loop"), "recurrence")],
)
def test_bad_arguments_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LRU(**kwargs)


def test_config_and_saving_round_trip(tmp_path):
    layer = LRU(state_dim=8, r_min=0.9, r_max=0.999, max_phase=0.3,
                recurrence="scan", causal=False)
    assert_config_round_trip(layer)
    x = np.random.default_rng(0).normal(size=(2, 10, 4)).astype("float32")
    model = keras.Sequential([keras.Input((10, 4)), layer])
    assert_saving_round_trip(model, x, tmp_path, atol=1e-5)


def test_fit_with_dynamic_lengths_updates_every_weight():
    loss, changed = fit_one_step(LRU(state_dim=8, causal=False), 6)
    assert np.isfinite(loss) and changed == 1.0


def test_the_scan_trains_and_an_unknown_length_is_a_clear_error():
    layer = LRU(state_dim=8, causal=False, recurrence="scan")
    loss, changed = fit_one_step(layer, 6)
    assert np.isfinite(loss) and changed == 1.0
    if keras.backend.backend() != "tensorflow":
        return
    # keras.ops.associative_scan needs the length when traced under
    # TensorFlow: a graph traced for any length gets a clear error.
    import tensorflow as tf

    traced = tf.function(
        layer, input_signature=[tf.TensorSpec((None, None, 6))]
    )
    with pytest.raises(ValueError, match="fixed length"):
        traced(np.zeros((2, 12, 6), "float32"))
