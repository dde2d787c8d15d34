import keras
import numpy as np
import pytest

from lra_keras.layers.dlr import DLR
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import fit_one_step
from tests.testing import sequence_model
from tests.testing import to_numpy


def dlr_recurrence(layer, u):
    """x_n = Lambda x_{n-1} + 1 u_n, y_n = Re(C x_n), run step by step
    (and backwards over the future, from lag 1, when not causal)."""
    w = {v.name: to_numpy(v).astype("float64") for v in layer.weights}
    if layer.init == "omega":  # one Lambda per mode, log = -x^2 + i theta
        lam = np.exp(-w["ssm_Lambda_x"] ** 2 + 1j * w["ssm_theta"])
        c = w["ssm_W_real"] + 1j * w["ssm_W_imag"]
    else:
        lam = np.exp(-np.exp(w["ssm_log_neg_real"]) + 1j * w["ssm_theta"])
        c = w["C_real"] + 1j * w["C_imag"]  # (dirs, H, N)
    batch, length, hidden = u.shape
    y = np.zeros(u.shape)
    x = np.zeros((batch, hidden, lam.shape[-1]), complex)
    for t in range(length):
        x = lam * x + u[:, t, :, None]
        y[:, t] = np.real((c[0] * x).sum(-1))
    if not layer.causal:
        x = np.zeros_like(x)
        for t in reversed(range(length - 1)):
            x = lam * x + u[:, t + 1, :, None]
            y[:, t] += np.real((c[1] * x).sum(-1))
    return y


def _inputs(length=20, hidden=3, batch=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(batch, length, hidden)).astype("float32")


@pytest.mark.parametrize("init", ["structured", "random", "omega"])
@pytest.mark.parametrize("causal", [True, False])
def test_dlr_convolution_matches_recurrence(init, causal):
    layer = DLR(state_dim=16, init=init, causal=causal,
                output_activation=None, activation="linear")
    u = _inputs()
    layer.build(u.shape)
    expected = dlr_recurrence(layer, u) + u * to_numpy(layer.D)
    assert_allclose(layer(u), expected, atol=1e-4)


def test_structured_init_is_s4d_lin_at_step_dt():
    layer = DLR(state_dim=8, dt_min=0.01, dt_max=0.1)
    layer.build((None, None, 4))
    real = -np.exp(to_numpy(layer.log_neg_real))
    theta = to_numpy(layer.theta)
    dt = -2 * real[:, :1]
    assert np.all((dt > 0.01 - 1e-6) & (dt < 0.1 + 1e-6))
    np.testing.assert_allclose(theta, np.pi * np.arange(8) * dt, rtol=1e-5,
                               atol=1e-6)
    assert np.all(np.exp(real) < 1)  # |Lambda| < 1


def test_omega_init_is_the_ntfs_kernels():
    # dss.py DLRKernel.init: log Lambda_n = -dt_n / 2 + 2 pi i n / N, dt_n
    # log-uniform per mode, shared by the channels; W parts N(0, 1/N^2).
    keras.utils.set_random_seed(0)
    n, hidden = 64, 64
    layer = DLR(state_dim=n, init="omega", dt_min=1e-3, dt_max=0.1,
                causal=False)
    layer.build((None, None, hidden))
    names = {v.name: v.shape for v in layer.weights}
    assert names["ssm_Lambda_x"] == (n,) and names["ssm_theta"] == (n,)
    assert names["ssm_W_real"] == (2, hidden, n)
    assert "C_real" not in names and "ssm_log_neg_real" not in names
    dt = 2 * to_numpy(layer.Lambda_x).astype("float64") ** 2
    assert np.all((dt > 1e-3 * (1 - 1e-5)) & (dt < 0.1 * (1 + 1e-5)))
    assert np.ptp(np.log(dt)) > 0.5 * np.log(100)  # drawn per mode
    np.testing.assert_allclose(to_numpy(layer.theta),
                               2 * np.pi * np.arange(n) / n, rtol=1e-6)
    for part in (layer.C_real, layer.C_imag):
        assert to_numpy(part).std() == pytest.approx(1 / n, rel=0.05)


def test_omega_config_and_saving_round_trip(tmp_path):
    layer = DLR(state_dim=8, init="omega", causal=False)
    assert assert_config_round_trip(layer).init == "omega"
    model = sequence_model(layer, 3, with_mask=False)
    assert_saving_round_trip(model, _inputs(length=9), tmp_path, atol=1e-5)


def test_causal_dlr_ignores_future():
    layer = DLR(state_dim=16)
    u = _inputs(length=16)
    u2 = u.copy()
    u2[:, 9:] -= 3.0
    assert_allclose(layer(u)[:, :9], layer(u2)[:, :9], atol=1e-5)


def test_padding_does_not_change_real_outputs():
    layer = DLR(state_dim=16, causal=False)
    u = _inputs(length=12, batch=1)
    mask = np.arange(12)[None] < 7
    noisy = np.where(mask[..., None], u, 9.0).astype("float32")
    assert_allclose(layer(noisy, padding_mask=mask)[:, :7], layer(u[:, :7]),
                    atol=1e-4)


def test_read_padding_longest_is_the_ntfs_batch_cut_at_its_longest_row():
    # The NTFS code's DLR convolves the S4 loaders' batch, padded to its
    # longest row, without a mask: a real token's output reads the
    # shorter rows' padding after it, nothing past the longest row.
    layer = DLR(state_dim=16, init="omega", causal=False,
                read_padding="longest")
    u = _inputs(length=16, batch=3, seed=4)
    mask = np.arange(16) < np.array([11, 4, 7])[:, None]
    # padding a batch longer, with anything, changes nothing before 11
    noisy = np.where(mask[..., None] | (np.arange(16) < 11)[:, None], u,
                     9.0).astype("float32")
    out = to_numpy(layer(noisy, padding_mask=mask))
    reference = DLR(state_dim=16, init="omega", causal=False,
                    read_padding=True)
    reference.build(u.shape)
    reference.set_weights(layer.get_weights())
    cut = to_numpy(reference(u[:, :11]))  # the NTFS batch, no mask
    assert_allclose(out[:, :11], cut, atol=1e-4)
    # the shorter rows' real outputs read their padding: not the masked
    zeroing = DLR(state_dim=16, init="omega", causal=False)
    zeroing.build(u.shape)
    zeroing.set_weights(layer.get_weights())
    masked_out = to_numpy(zeroing(noisy, padding_mask=mask))
    assert_allclose(masked_out[0, :11], out[0, :11], atol=1e-4)
    assert np.abs(masked_out[1, :4] - out[1, :4]).max() > 1e-2
    assert assert_config_round_trip(layer).read_padding == "longest"
    with pytest.raises(ValueError, match="read_padding"):
        DLR(state_dim=4, read_padding=1)


def test_dlr_trains_one_step():
    loss, changed = fit_one_step(DLR(state_dim=8, causal=False), 3)
    assert np.isfinite(loss)
    assert changed == 1.0


def test_dlr_config_and_saving_round_trip(tmp_path):
    layer = DLR(state_dim=8, init="random", causal=False)
    assert_config_round_trip(layer)
    model = sequence_model(layer, 3, with_mask=False)
    assert_saving_round_trip(model, _inputs(length=5), tmp_path, atol=1e-5)


def test_invalid_init_raises():
    with pytest.raises(ValueError, match="Received: init"):
        DLR(init="legs")


@pytest.mark.parametrize("init", ["structured", "random", "omega"])
def test_weights_drawn_by_one_initializer_kind_are_independent(init):
    # An unseeded Keras initializer called twice returns the same values:
    # every weight gets its own.
    keras.utils.set_random_seed(0)  # the correlation itself is random
    layer = DLR(state_dim=16, init=init, causal=False)
    layer.build((1, 4, 32))
    c_real, c_imag = to_numpy(layer.C_real), to_numpy(layer.C_imag)
    assert abs(np.corrcoef(c_real.ravel(), c_imag.ravel())[0, 1]) < 0.1
    if init == "random":
        a, b = to_numpy(layer.log_neg_real), to_numpy(layer.theta)
        assert abs(np.corrcoef(a.ravel(), b.ravel())[0, 1]) < 0.1
