import keras
import numpy as np
import pytest

from lra_keras.layers import hippo
from lra_keras.layers.s4 import S4
from lra_keras.layers.s4d import S4D
from lra_keras.layers.s4d import _torch_exp_of
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import fit_one_step
from tests.testing import numpy_causal_conv
from tests.testing import numpy_gelu
from tests.testing import sequence_model
from tests.testing import to_numpy
from tests.testing import value_and_grads


def s4d_system(layer, w=None):
    """(A_bar, B_bar, C) in numpy complex128 from the layer's weights, or
    from `w`, float64 arrays by weight name."""
    if w is None:
        w = {v.name: to_numpy(v).astype("float64") for v in layer.weights}
    dt = numpy_step_size(layer, w)[:, None]
    a = -np.exp(w["ssm_log_A_real"]) + 1j * w["ssm_A_imag"]
    b = w["ssm_B_real"] + 1j * w["ssm_B_imag"]
    c = w["C_real"] + 1j * w["C_imag"]
    a_bar = np.exp(dt * a)
    return a_bar, (a_bar - 1) / a * b, c


def numpy_step_size(layer, weights):
    """dt from `ssm_log_dt`: exp(w), or softplus(w) = log(1 + e^w)."""
    if layer.dt_transform == "softplus":
        return np.logaddexp(0.0, weights["ssm_log_dt"])
    return np.exp(weights["ssm_log_dt"])


def recurrence_kernel(a_bar, b_bar, c, length):
    """Impulse response of x_l = A_bar x_{l-1} + B_bar u_l, y = 2 Re(C x)."""
    kernel = np.zeros((c.shape[0], c.shape[1], length))
    x = b_bar.copy()
    for step in range(length):
        kernel[:, :, step] = 2 * np.real((c * x).sum(-1))
        x = a_bar * x
    return kernel


def numpy_ssm_block(layer, u):
    """conv + D u -> GELU -> GLU, with direct convolution."""
    kernel = to_numpy(layer.ssm_kernel(u.shape[1]))
    y = numpy_causal_conv(
        u, kernel[0], kernel[1] if not layer.causal else None
    ) + u * to_numpy(layer.D)
    y = numpy_gelu(y)
    w, b = (to_numpy(t) for t in layer.output_dense.weights)
    z = y @ w + b
    h = z.shape[-1] // 2
    return z[..., :h] / (1 + np.exp(-z[..., h:]))


def _inputs(length=24, hidden=4, batch=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(batch, length, hidden)).astype("float32")


@pytest.mark.parametrize("init", ["legs", "lin", "inv", "dfout"])
@pytest.mark.parametrize("causal", [True, False])
def test_s4d_kernel_matches_recurrence(init, causal):
    layer = S4D(state_dim=8, init=init, causal=causal)
    layer.build((None, None, 3))
    for length in (1, 7, 40):
        expected = recurrence_kernel(*s4d_system(layer), length)
        assert_allclose(layer.ssm_kernel(length), expected, atol=2e-5)


@pytest.mark.parametrize("causal", [True, False])
def test_softplus_dt_kernel_matches_recurrence(causal):
    # dt = softplus(ssm_inv_dt) = log(1 + exp(w)), the S4 configs'
    # `dt_transform: softplus`; moved away from its init so that exp and
    # softplus of the same weight would differ.
    layer = S4D(state_dim=8, dt_transform="softplus", causal=causal)
    layer.build((None, None, 3))
    layer.log_dt.assign(np.array([-3.0, 0.5, 2.0], "float32"))
    for length in (1, 7, 40):
        expected = recurrence_kernel(*s4d_system(layer), length)
        assert_allclose(layer.ssm_kernel(length), expected, atol=2e-5)


@pytest.mark.parametrize("length", [20, 23])
@pytest.mark.parametrize("dt_transform", ["exp", "softplus"])
def test_s4d_kernel_gradients_match_finite_differences(dt_transform, length):
    # The kernel's gradients with respect to every weight it reads, against
    # central differences of the float64 recurrence. Under PyTorch the
    # kernel and its written-out backward are one autograd function
    # (`torch_s4d_kernel`), elsewhere (real, imaginary) pairs through the
    # ops. 20 = 4 blocks of 5 positions; 23 leaves 2 of the last 5 unused.
    layer = S4D(state_dim=8, causal=False, dt_transform=dt_transform)
    layer.build((None, None, 3))
    upstream = np.random.default_rng(0).normal(size=(2, 3, length))
    variables = [v for v in layer.trainable_variables
                 if v.name.startswith(("ssm_", "C_"))]
    assert {v.name for v in variables} == {
        "ssm_log_dt", "ssm_log_A_real", "ssm_A_imag", "ssm_B_real",
        "ssm_B_imag", "C_real", "C_imag"}
    base = {v.name: to_numpy(v).astype("float64") for v in layer.weights}

    def loss(values):
        with keras.StatelessScope(state_mapping=list(zip(variables,
                                                          values))):
            kernel = layer.ssm_kernel(length)
        return keras.ops.sum(
            kernel * keras.ops.convert_to_tensor(upstream, "float32"))

    def numpy_loss(w):
        return float((recurrence_kernel(*s4d_system(layer, w), length)
                      * upstream).sum())

    _, grads = value_and_grads(lambda *values: loss(values),
                               *(base[v.name] for v in variables))
    step = 1e-6
    for variable, grad in zip(variables, grads):
        expected = np.zeros(grad.shape)
        for index in np.ndindex(grad.shape):
            moved = {}
            for sign in (1, -1):
                w = dict(base)
                w[variable.name] = base[variable.name].copy()
                w[variable.name][index] += sign * step
                moved[sign] = numpy_loss(w)
            expected[index] = (moved[1] - moved[-1]) / (2 * step)
        np.testing.assert_allclose(grad, expected, rtol=2e-3, atol=2e-3,
                                   err_msg=variable.name)


def test_torch_exponential_from_parts_is_the_complex_one():
    # `_torch_exp_of`, the S4D kernel's exponentials under PyTorch (any
    # Keras backend runs it: torch is installed with the tests), against
    # numpy's complex exponential in float64 of the same float32 parts:
    # decays to e^-30 and phases up to 4,000 radians, as dt A l reaches
    # at L = 16,384.
    import torch

    rng = np.random.default_rng(0)
    real = -rng.uniform(0.0, 30.0, size=(2, 64, 16, 12)).astype("float32")
    imag = rng.uniform(-4000.0, 4000.0, size=real.shape).astype("float32")
    got = _torch_exp_of(torch.from_numpy(real), torch.from_numpy(imag))
    assert got.dtype == torch.complex64
    expected = np.exp(real.astype("float64") + 1j * imag.astype("float64"))
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-7)


def test_dt_transforms_start_from_the_same_step():
    # One draw of log dt, log-uniform in [dt_min, dt_max]: "softplus"
    # stores log(exp(dt) - 1) of the dt that "exp" stores as log dt.
    layers = {}
    for transform in ("exp", "softplus"):
        keras.utils.set_random_seed(3)
        layers[transform] = S4D(state_dim=4, dt_transform=transform,
                                dt_min=0.002, dt_max=0.2)
        layers[transform].build((None, None, 64))
    dt = np.exp(to_numpy(layers["exp"].log_dt).astype("float64"))
    inv_dt = to_numpy(layers["softplus"].log_dt).astype("float64")
    np.testing.assert_allclose(inv_dt, np.log(np.expm1(dt)), rtol=1e-4,
                               atol=1e-6)
    assert np.all((dt >= 0.002 * (1 - 1e-6)) & (dt <= 0.2 * (1 + 1e-6)))


def test_C_real_and_C_imag_are_independent():
    # C ~ CN(0, 1): the parts are separate N(0, 1/2) draws (one shared
    # unseeded initializer used to give C_imag == C_real).
    keras.utils.set_random_seed(0)  # the correlation itself is random
    layer = S4D(state_dim=64, causal=False)
    layer.build((None, None, 64))
    c_real = to_numpy(layer.C_real).ravel()
    c_imag = to_numpy(layer.C_imag).ravel()
    assert abs(np.corrcoef(c_real, c_imag)[0, 1]) < 0.05
    for part in (c_real, c_imag):
        assert abs(part.std() - np.sqrt(0.5)) < 0.02


def test_B_clip_clips_the_imaginary_part_of_legs_B():
    _, b = hippo.diagonal_init("legs", 64)
    assert np.abs(b.imag).max() > 2.0  # LegS-64's B reaches |Im| 40.8
    clipped = S4D(state_dim=64, B_clip=2.0)
    clipped.build((None, None, 3))
    np.testing.assert_allclose(to_numpy(clipped.B_imag)[1],
                               np.clip(b.imag, -2.0, 2.0), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(to_numpy(clipped.B_real)[1], b.real,
                               rtol=1e-5, atol=1e-6)
    plain = S4D(state_dim=64)
    plain.build((None, None, 3))
    np.testing.assert_allclose(to_numpy(plain.B_imag)[1], b.imag,
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("causal", [True, False])
def test_s4d_layer_matches_numpy_block(causal):
    u = _inputs()
    layer = S4D(state_dim=8, causal=causal)
    assert_allclose(layer(u), numpy_ssm_block(layer, u), atol=1e-4)


def test_initialisations_follow_s4d():
    layer = S4D(state_dim=8, init="lin", dt_min=0.01, dt_max=0.02)
    layer.build((None, None, 5))
    a_imag = to_numpy(layer.A_imag)
    np.testing.assert_allclose(a_imag[0], np.pi * np.arange(4), rtol=1e-6)
    np.testing.assert_allclose(np.exp(to_numpy(layer.log_A_real)), 0.5,
                               rtol=1e-6)
    dt = np.exp(to_numpy(layer.log_dt))
    assert np.all((dt >= 0.01 - 1e-7) & (dt <= 0.02 + 1e-7))
    inv = S4D(state_dim=8, init="inv")
    inv.build((None, None, 2))
    n = np.arange(4)
    np.testing.assert_allclose(
        to_numpy(inv.A_imag)[1], 8 / np.pi * (8 / (2 * n + 1) - 1),
        rtol=1e-5)
    legs = S4D(state_dim=8, init="legs")
    legs.build((None, None, 2))
    a, b = hippo.diagonal_init("legs", 8)
    np.testing.assert_allclose(to_numpy(legs.A_imag)[0], a.imag, rtol=1e-5)
    np.testing.assert_allclose(to_numpy(legs.B_real)[0], b.real, rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("dt_transform", ["exp", "softplus"])
def test_dfout_places_the_discrete_poles_on_a_fourier_grid(dt_transform):
    # exp(dt_h A_{h,n}) = exp(-dt_h / 2 + i (2 pi n / N + 2 pi h / (N H))):
    # radius exp(-dt_h / 2), angles a grid of spacing 2 pi / N per channel,
    # and the channels' offsets interleave into one grid of spacing
    # 2 pi / (N H) over [0, pi).
    N, H = 8, 5
    layer = S4D(state_dim=N, init="dfout", dt_transform=dt_transform,
                dt_min=0.001, dt_max=0.1)
    layer.build((None, None, H))
    w = {v.name: to_numpy(v).astype("float64") for v in layer.weights}
    dt = numpy_step_size(layer, w)
    a_bar, _, _ = s4d_system(layer)  # (H, N/2)
    np.testing.assert_allclose(np.abs(a_bar), np.exp(-dt / 2)[:, None]
                               * np.ones((1, N // 2)), rtol=1e-6)
    angle = np.angle(a_bar) % (2 * np.pi)
    expected = (2 * np.pi * np.arange(N // 2)[None, :] / N
                + 2 * np.pi * np.arange(H)[:, None] / (N * H))
    np.testing.assert_allclose(angle, expected, atol=1e-5)
    np.testing.assert_allclose(np.sort(angle.ravel()),
                               np.arange(N * H // 2) * 2 * np.pi / (N * H),
                               atol=1e-5)
    np.testing.assert_allclose(to_numpy(layer.B_real), 1.0)
    np.testing.assert_allclose(to_numpy(layer.B_imag), 0.0)
    # the same poles as hippo.dfout_poles from the layer's own steps
    a, _ = hippo.dfout_poles(N, dt)
    np.testing.assert_allclose(w["ssm_A_imag"], a.imag, rtol=1e-6)


def test_dfout_takes_no_shared_ssms():
    with pytest.raises(ValueError, match="num_ssms"):
        S4D(state_dim=8, init="dfout", num_ssms=2)
    with pytest.raises(ValueError, match="Received"):
        hippo.dfout_poles(8, np.array([0.01, 0.0]))


def test_legs_nplr_reconstructs_hippo_spectrum():
    lam, p, b = hippo.legs_nplr(8)
    a, b_full = hippo.legs(8)
    normal = a + np.outer(np.sqrt(0.5 + np.arange(8)),
                          np.sqrt(0.5 + np.arange(8)))
    eig = np.linalg.eigvals(normal)
    for value in lam:
        assert np.min(np.abs(eig - value)) < 1e-8
        assert np.min(np.abs(eig - value.conj())) < 1e-8
    # B = sqrt(2) P for LegS, in every basis.
    np.testing.assert_allclose(b, np.sqrt(2) * p, atol=1e-10)


def test_causal_s4d_ignores_future():
    u = _inputs(length=20)
    layer = S4D(state_dim=8)
    u2 = u.copy()
    u2[:, 12:] += 5.0
    assert_allclose(layer(u)[:, :12], layer(u2)[:, :12], atol=1e-5)


def test_padding_does_not_change_real_outputs():
    layer = S4D(state_dim=8, causal=False)
    u = _inputs(length=16, batch=1)
    mask = np.ones((1, 16), bool)
    mask[0, 10:] = False
    noisy = u.copy()
    noisy[0, 10:] = 50.0
    short = layer(u[:, :10])
    assert_allclose(layer(noisy, padding_mask=mask)[:, :10], short, atol=1e-4)


def test_s4d_trains_one_step():
    loss, changed = fit_one_step(S4D(state_dim=8, causal=False), 4)
    assert np.isfinite(loss)
    assert changed == 1.0


def test_s4d_config_and_saving_round_trip(tmp_path):
    layer = S4D(state_dim=6, init="inv", dt_min=0.01, dt_max=0.05,
                causal=False, output_activation="half_glu",
                dropout=0.1, trainable_B=False)
    assert_config_round_trip(layer)
    model = sequence_model(layer, 4, with_mask=False)
    assert_saving_round_trip(model, _inputs(length=9), tmp_path, atol=1e-5)


@pytest.mark.parametrize("init", ["legs", "dfout"])
def test_s4d_softplus_config_and_saving_round_trip(tmp_path, init):
    layer = S4D(state_dim=8, causal=False, dt_transform="softplus",
                B_clip=2.0, init=init)
    rebuilt = assert_config_round_trip(layer)
    assert (rebuilt.dt_transform, rebuilt.B_clip, rebuilt.init) == (
        "softplus", 2.0, init)
    model = sequence_model(layer, 4, with_mask=False)
    assert_saving_round_trip(model, _inputs(length=9), tmp_path, atol=1e-5)


@pytest.mark.parametrize("layer_class", [S4D, S4])
def test_num_ssms_ties_channel_h_to_set_h_mod_S(layer_class):
    # The S4 code's n_ssm: S sets of (A, B) (and P), repeated over the
    # channels as `repeat(A, 't n -> (v t) n')`: channel h reads set h mod
    # S. A layer with S sets equals a layer with one set per channel whose
    # sets are the S sets tiled; dt and C stay per channel.
    keras.utils.set_random_seed(0)
    tied = layer_class(state_dim=8, num_ssms=2, causal=False)
    tied.build((None, None, 6))
    free = layer_class(state_dim=8, causal=False)
    free.build((None, None, 6))
    weights = {v.name: v for v in tied.weights}
    dynamics = [n for n in weights if n.startswith("ssm_")
                and n != "ssm_log_dt"]
    assert {weights[n].shape for n in dynamics} == {(2, 4)}
    assert weights["ssm_log_dt"].shape == (6,)
    rng = np.random.default_rng(0)
    # LegS starts every set alike: make them differ, so that reading set
    # h // 3 instead of h mod 2 would change the kernel.
    for name in dynamics:
        value = to_numpy(weights[name])
        weights[name].assign(value + 0.1 * rng.normal(size=value.shape))
    for v in free.weights:
        value = to_numpy(weights[v.name])
        v.assign(np.tile(value, (3, 1)) if v.name in dynamics else value)
    assert_allclose(tied.ssm_kernel(20), free.ssm_kernel(20), atol=1e-5)
    x = _inputs(hidden=6)
    assert_allclose(tied(x), free(x), atol=1e-5)

    def count(layer):
        return sum(int(np.prod(v.shape)) for v in layer.trainable_weights)

    assert count(free) - count(tied) == len(dynamics) * (6 - 2) * 4
    assert assert_config_round_trip(tied).num_ssms == 2
    with pytest.raises(ValueError, match=r"`num_ssms` \(4\) must divide "
                       r"the number of channels \(6\)"):
        layer_class(state_dim=8, num_ssms=4).build((None, None, 6))


def test_dropout_before_activation_drops_the_activations_input_too():
    # The S4 code drops x before its GELU (FFTConv) and again after it
    # (S4Block), both masks tied along the sequence: every channel of the
    # output is 0 or gelu(x / (1 - p)) / (1 - p); dropping after the
    # activation alone gives 0 or gelu(x) / (1 - p).
    x = _inputs(length=10, hidden=64, batch=3)
    p = 0.5
    for before in (True, False):
        keras.utils.set_random_seed(1)
        layer = S4D(state_dim=8, causal=False, dropout=p,
                    output_activation=None, dropout_before_activation=before)
        layer.build(x.shape)
        u = to_numpy(layer.ssm_kernel(10))
        pre = numpy_causal_conv(x, u[0], u[1]) + x * to_numpy(layer.D)
        scale = 1 / (1 - p) if before else 1.0
        kept = numpy_gelu(pre * scale) / (1 - p)  # (batch, length, H)
        y = to_numpy(layer(x, training=True))
        dropped = np.all(np.abs(y) < 1e-6, axis=1)  # (batch, H)
        survived = np.all(np.abs(y - kept) < 2e-4 * (1 + np.abs(kept)),
                          axis=1)
        assert np.all(dropped | survived), before
        # Two masks at rate 0.5 keep a quarter of the channels, one a half.
        share = survived.mean()
        assert (0.12 < share < 0.4) if before else (0.35 < share < 0.65)
        assert_allclose(layer(x), numpy_gelu(pre), atol=1e-4)  # inference
    assert assert_config_round_trip(layer).dropout_before_activation is False


@pytest.mark.parametrize(
    "kwargs",
    [dict(state_dim=7), dict(init="hippo"), dict(dt_min=0.1, dt_max=0.01),
     dict(output_activation="swish"), dict(dropout=1.0),
     dict(dt_transform="log"), dict(B_clip=0.0), dict(num_ssms=0),
     dict(num_ssms=True)],
)
def test_invalid_arguments_raise(kwargs):
    with pytest.raises(ValueError, match="Received"):
        S4D(**kwargs)
