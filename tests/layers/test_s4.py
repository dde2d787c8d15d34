import keras
import numpy as np
import pytest

from lra_keras.layers import hippo
from lra_keras.layers.s4 import S4
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import numpy_causal_conv
from tests.testing import numpy_gelu
from tests.testing import sequence_model
from tests.testing import to_numpy
from tests.testing import value_and_grads


def s4_parameters(layer):
    """(dt (H,), Lambda, P, B (H, N/2), C (dirs, H, N/2)) in complex128."""
    w = {v.name: to_numpy(v).astype("float64") for v in layer.weights}
    if layer.dt_transform == "softplus":  # log(1 + exp(w))
        dt = np.logaddexp(0.0, w["ssm_log_dt"])
    else:
        dt = np.exp(w["ssm_log_dt"])
    lam = -np.exp(w["ssm_log_A_real"]) + 1j * w["ssm_A_imag"]
    p = w["ssm_P_real"] + 1j * w["ssm_P_imag"]
    b = w["ssm_B_real"] + 1j * w["ssm_B_imag"]
    c = w["C_real"] + 1j * w["C_imag"]
    return dt, lam, p, b, c


def full_system(lam, p, b):
    """A = diag(Lambda, conj Lambda) - [P; conj P][P; conj P]^*, [B; conj B].

    The S4 code base keeps half of each conjugate pair but its low-rank
    term runs over both halves (`_conj` in `_step_state_linear`).
    """
    lam_f = np.concatenate([lam, lam.conj()])
    p_f = np.concatenate([p, p.conj()])
    return np.diag(lam_f) - np.outer(p_f, p_f.conj()), np.concatenate(
        [b, b.conj()]
    )


def bilinear(a, b, dt):
    """Dense bilinear discretisation (numpy inverse, no Woodbury)."""
    eye = np.eye(a.shape[0])
    inverse = np.linalg.inv(eye - dt / 2 * a)
    return inverse @ (eye + dt / 2 * a), inverse @ (dt * b)


def recurrence_kernel(layer, length):
    """Impulse response of x_k = A_bar x_{k-1} + B_bar u_k, y = 2 Re(C x)."""
    dt, lam, p, b, c = s4_parameters(layer)
    half = lam.shape[-1]
    kernel = np.zeros((c.shape[0], c.shape[1], length))
    for h in range(lam.shape[0]):
        a_bar, b_bar = bilinear(*full_system(lam[h], p[h], b[h]), dt[h])
        x = np.zeros(2 * half, complex)
        for k in range(length):
            x = a_bar @ x + b_bar * (k == 0)  # u = impulse at 0
            assert np.allclose(x[half:], x[:half].conj())
            kernel[:, h, k] = 2 * np.real(c[:, h] @ x[:half])
    return kernel


def numpy_s4_block(layer, u, mask=None):
    """Direct convolution with the recurrence kernel + D u, GELU, GLU."""
    u = np.asarray(u, "float64")
    if mask is not None:
        u = u * mask[..., None]
    kernel = recurrence_kernel(layer, u.shape[1])
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


@pytest.mark.parametrize(
    "init, state_dim, lengths",
    [("legs", 8, (1, 7, 37, 64)), ("random", 8, (24,)), ("legs", 32, (64,))],
)
def test_s4_kernel_matches_numpy_recurrence(init, state_dim, lengths):
    # Large steps so that the low-rank term matters within a few steps.
    layer = S4(state_dim=state_dim, init=init, dt_min=0.01, dt_max=0.5,
               causal=False)
    layer.build((None, None, 4))
    for length in lengths:
        expected = recurrence_kernel(layer, length)
        kernel = to_numpy(layer.ssm_kernel(length))
        assert kernel.shape == (2, 4, length)
        assert_allclose(kernel, expected, atol=2e-5, rtol=1e-4,
                        err_msg=f"length={length}")


def test_legs_init_reproduces_hippo_nplr():
    layer = S4(state_dim=8, dt_min=0.01, dt_max=0.02)
    layer.build((None, None, 4))
    lam, p, b = hippo.legs_nplr(8)
    dt, lam_w, p_w, b_w, _ = s4_parameters(layer)
    for h in range(4):
        np.testing.assert_allclose(lam_w[h], lam, atol=1e-5)
        np.testing.assert_allclose(p_w[h], p, atol=1e-5)
        np.testing.assert_allclose(b_w[h], b, atol=1e-5)
    assert np.all((dt >= 0.01 - 1e-7) & (dt <= 0.02 + 1e-7))


def test_legs_init_is_similar_to_hippo_legs():
    # The full system is V^* A_LegS V (V unitary): same eigenvalues, and
    # B^* A^k B = b^T A_LegS^k b. Coupling only one half of each conjugate
    # pair (an (N/2, N/2) Lambda - P P^*) would give other eigenvalues.
    n = 8
    lam, p, b = hippo.legs_nplr(n)
    a_legs, b_legs = hippo.legs(n)
    a, b_full = full_system(lam, p, b)
    eig = np.sort(np.linalg.eigvals(a).real)
    np.testing.assert_allclose(eig, -np.arange(n, 0, -1.0), atol=1e-4)
    np.testing.assert_allclose(np.sort(np.linalg.eigvals(a_legs).real), eig,
                               atol=1e-4)
    for k in range(4):
        expected = b_legs @ np.linalg.matrix_power(a_legs, k) @ b_legs
        got = b_full.conj() @ np.linalg.matrix_power(a, k) @ b_full
        np.testing.assert_allclose(got, expected, rtol=1e-8)
    half_coupled = np.diag(lam) - np.outer(p, p.conj())
    half_eig = np.linalg.eigvals(half_coupled)
    assert np.abs(half_eig.imag).max() > 1.0


def test_zero_P_gives_bilinear_diagonal_kernel():
    layer = S4(state_dim=8, dt_min=0.01, dt_max=0.5)
    layer.build((None, None, 4))
    layer.P_real.assign(np.zeros((4, 4), "float32"))
    layer.P_imag.assign(np.zeros((4, 4), "float32"))
    dt, lam, _, b, c = s4_parameters(layer)
    dt = dt[:, None]
    # S4D with the bilinear transform: z = (1 + dt/2 A) / (1 - dt/2 A).
    z = (1 + dt / 2 * lam) / (1 - dt / 2 * lam)  # (H, N/2)
    b_bar = dt * b / (1 - dt / 2 * lam)
    powers = z[..., None] ** np.arange(64)  # (H, N/2, L)
    expected = 2 * np.real(np.einsum("dhn,hn,hnl->dhl", c, b_bar, powers))
    assert_allclose(layer.ssm_kernel(64), expected, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("causal", [True, False])
def test_s4_layer_matches_numpy_block(causal):
    u = _inputs()
    mask = np.ones((2, 24), bool)
    mask[1, 15:] = False
    layer = S4(state_dim=8, causal=causal, dt_min=0.01,
               dt_max=0.5)
    out = layer(u, padding_mask=mask)
    assert_allclose(out, numpy_s4_block(layer, u, mask), atol=1e-4)


def test_causal_s4_ignores_future():
    u = _inputs()
    u2 = u.copy()
    u2[:, 12:] += 5.0
    causal = S4(state_dim=8)
    assert_allclose(causal(u)[:, :12], causal(u2)[:, :12], atol=1e-5)
    # ... while the non-causal layer reads the future.
    both = S4(state_dim=8, causal=False)
    diff = to_numpy(both(u)[:, :12]) - to_numpy(both(u2)[:, :12])
    assert np.abs(diff).max() > 1e-3


def test_padding_does_not_change_real_outputs():
    layer = S4(state_dim=8, causal=False)
    u = _inputs(batch=1)
    mask = np.ones((1, 24), bool)
    mask[0, 12:] = False
    noisy = u.copy()
    noisy[0, 12:] = 50.0
    short = layer(u[:, :12])
    assert_allclose(layer(noisy, padding_mask=mask)[:, :12], short, atol=1e-4)


def test_random_init_draws_normal_with_std_0_1():
    layer = S4(state_dim=8, init="random")
    layer.build((None, None, 64))
    for weight in (layer.log_A_real, layer.A_imag, layer.P_real,
                   layer.P_imag, layer.B_real, layer.B_imag):
        values = to_numpy(weight)
        assert values.shape == (64, 4)
        assert abs(values.mean()) < 0.03, weight.name
        assert 0.08 < values.std() < 0.12, weight.name
    assert 0.6 < to_numpy(layer.C_real).std() < 0.8  # CN(0, 1)


def test_symbolic_length_matches_static_length():
    # TensorFlow traces `fit` with an unknown length; that path uses a fixed
    # block size and a while loop.
    if keras.backend.backend() != "tensorflow":
        pytest.skip("only TensorFlow has symbolic lengths")
    import tensorflow as tf

    layer = S4(state_dim=8, causal=False, dt_min=0.01, dt_max=0.5)
    layer.build((None, None, 4))
    weights = [w for w in layer.trainable_weights
               if w.name.startswith(("ssm_", "C_"))]

    def kernel_and_grads(length):
        with tf.GradientTape() as tape:
            k = layer.ssm_kernel(length)
            loss = tf.reduce_sum(k * tf.cos(tf.cast(tf.range(length),
                                                    "float32")))
        return k, tape.gradient(loss, weights)

    symbolic = tf.function(
        kernel_and_grads, input_signature=[tf.TensorSpec((), tf.int32)]
    )
    for length in (1, 37, 300):
        k, grads = symbolic(tf.constant(length))
        k_static, grads_static = kernel_and_grads(length)
        assert_allclose(k, recurrence_kernel(layer, length), atol=1e-5,
                        rtol=1e-4)
        for g, g_static in zip(grads, grads_static):
            assert_allclose(g, g_static, atol=1e-4, rtol=1e-4)


class _VaryingLengths(keras.utils.PyDataset):
    """Two batches of different lengths, padding in the second row."""

    lengths = (12, 19)

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, index):
        rng = np.random.default_rng(index)
        length = self.lengths[index]
        x = rng.normal(size=(2, length, 4)).astype("float32")
        mask = np.ones((2, length), bool)
        mask[1, length // 2:] = False
        y = rng.normal(size=(2, length, 4)).astype("float32")
        return (x, mask), y


@pytest.mark.parametrize(
    "kwargs", [{}, dict(C_parameterization="c_tilde", kernel_length=32)])
def test_s4_fits_with_dynamic_lengths(kwargs):
    # Under TensorFlow the second length retraces `fit` with an unknown
    # length (the symbolic path).
    model = sequence_model(S4(state_dim=8, causal=False, **kwargs), 4)
    model.compile(optimizer="adam", loss="mse")
    before = [to_numpy(w).copy() for w in model.trainable_weights]
    history = model.fit(_VaryingLengths(), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][-1])
    after = [to_numpy(w) for w in model.trainable_weights]
    assert all(np.all(np.isfinite(w)) for w in after)
    assert all(not np.array_equal(a, b) for a, b in zip(before, after))


def test_s4_config_and_saving_round_trip(tmp_path):
    layer = S4(state_dim=8, init="random", dt_min=0.01, dt_max=0.05,
               causal=False, output_activation="half_glu",
               dropout=0.1)
    assert_config_round_trip(layer)
    model = sequence_model(layer, 4, with_mask=False)
    assert_saving_round_trip(model, _inputs(length=12), tmp_path, atol=1e-5)


def test_softplus_dt_kernel_matches_numpy_recurrence():
    layer = S4(state_dim=8, dt_transform="softplus", causal=False)
    layer.build((None, None, 3))
    layer.log_dt.assign(np.array([-3.0, 0.5, 2.0], "float32"))
    for length in (1, 9, 33):
        assert_allclose(layer.ssm_kernel(length),
                        recurrence_kernel(layer, length), atol=1e-4)


def test_s4_C_parts_are_independent_and_B_clip_clips_legs_B():
    # Seeded: the correlation of independent draws is itself random.
    keras.utils.set_random_seed(0)
    layer = S4(state_dim=64, B_clip=2.0, causal=False)
    layer.build((None, None, 32))
    c_real = to_numpy(layer.C_real).ravel()
    c_imag = to_numpy(layer.C_imag).ravel()
    assert abs(np.corrcoef(c_real, c_imag)[0, 1]) < 0.05
    _, p, b = hippo.legs_nplr(64)
    np.testing.assert_allclose(to_numpy(layer.B_imag)[0],
                               np.clip(b.imag, -2.0, 2.0), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(to_numpy(layer.B_real)[0], b.real,
                               rtol=1e-5, atol=1e-6)
    # P is not clipped (the S4 code clips B only).
    np.testing.assert_allclose(to_numpy(layer.P_imag)[0], p.imag,
                               rtol=1e-5, atol=1e-5)
    rebuilt = assert_config_round_trip(
        S4(state_dim=8, dt_transform="softplus", B_clip=2.0))
    assert (rebuilt.dt_transform, rebuilt.B_clip) == ("softplus", 2.0)


@pytest.mark.parametrize(
    "kwargs",
    [dict(state_dim=7), dict(init="lin"), dict(dt_min=0.1, dt_max=0.01),
     dict(output_activation="swish"), dict(dropout=1.0),
     dict(dt_transform="log"), dict(B_clip=-1.0)],
)
def test_invalid_arguments_raise(kwargs):
    with pytest.raises(ValueError, match="Received"):
        S4(**kwargs)


# === C~ parameterisation (the S4 code's trained C~ = C (I - A_bar^L)) ===


def dynamics(layer, h):
    """Complex128 (A_bar, B_bar) of channel h in the basis (x, conj x)."""
    w = {v.name: to_numpy(v).astype("float64") for v in layer.weights}
    if layer.dt_transform == "softplus":
        dt = np.logaddexp(0.0, w["ssm_log_dt"])
    else:
        dt = np.exp(w["ssm_log_dt"])
    lam = -np.exp(w["ssm_log_A_real"][h]) + 1j * w["ssm_A_imag"][h]
    p = w["ssm_P_real"][h] + 1j * w["ssm_P_imag"][h]
    b = w["ssm_B_real"][h] + 1j * w["ssm_B_imag"][h]
    return bilinear(*full_system(lam, p, b), dt[h])


def c_tilde_parameters(layer):
    """C~ (dirs, H, N/2) complex128."""
    return (to_numpy(layer.C_tilde_real).astype("float64")
            + 1j * to_numpy(layer.C_tilde_imag).astype("float64"))


def closed_form_c(c_tilde, a_bar, length):
    """C = C~ (I - A_bar^L)^{-1} (rows, full basis (x, conj x)); returns
    the first half of each row, C itself."""
    half = c_tilde.shape[-1]
    full = np.concatenate([c_tilde, c_tilde.conj()], axis=-1)
    m = np.eye(2 * half) - np.linalg.matrix_power(a_bar, length)
    return np.linalg.solve(m.T, full.T).T[..., :half]


def closed_form_kernel(layer, length):
    """2 Re(C A_bar^l B_bar), C from the layer's C~, l < length."""
    c_tilde = c_tilde_parameters(layer)
    kernel = np.zeros((*c_tilde.shape[:2], length))
    for h in range(c_tilde.shape[1]):
        a_bar, b_bar = dynamics(layer, h)
        c = closed_form_c(c_tilde[:, h], a_bar, layer.kernel_length)
        c = np.concatenate([c, c.conj()], axis=-1)
        x = b_bar
        for k in range(length):
            kernel[:, h, k] = np.real(c @ x)
            x = a_bar @ x
    return kernel


def _c_tilde_layer(kernel_length=40, hidden=3, **kwargs):
    kwargs = dict(dict(state_dim=8, dt_min=0.01, dt_max=0.5, causal=False),
                  **kwargs)
    layer = S4(C_parameterization="c_tilde", kernel_length=kernel_length,
               **kwargs)
    layer.build((None, None, hidden))
    return layer


def _c_layer_like(layer):
    """A "c" layer with `layer`'s dynamics and C = C~ (I - A_bar^L)^{-1}."""
    twin = S4(state_dim=layer.state_dim, dt_min=layer.dt_min,
              dt_max=layer.dt_max, causal=layer.causal,
              dt_transform=layer.dt_transform)
    twin.build((None, None, layer.hidden_dim))
    for name in ("log_dt", "log_A_real", "A_imag", "P_real", "P_imag",
                 "B_real", "B_imag", "D"):
        getattr(twin, name).assign(getattr(layer, name))
    for mine, theirs in zip(twin.output_dense.weights,
                            layer.output_dense.weights):
        mine.assign(theirs)
    c_tilde = c_tilde_parameters(layer)
    c = np.stack([closed_form_c(c_tilde[:, h], dynamics(layer, h)[0],
                                layer.kernel_length)
                  for h in range(c_tilde.shape[1])], axis=1)
    twin.C_real.assign(c.real.astype("float32"))
    twin.C_imag.assign(c.imag.astype("float32"))
    return twin


def test_c_tilde_kernel_is_the_c_kernel_of_the_closed_form_c():
    layer = _c_tilde_layer(kernel_length=40)
    twin = _c_layer_like(layer)
    assert [w.name for w in layer.weights if w.name.startswith("C")] == [
        "C_tilde_real", "C_tilde_imag"]
    for length in (1, 17, 40):
        kernel = to_numpy(layer.ssm_kernel(length))
        assert_allclose(kernel, closed_form_kernel(layer, length),
                        atol=2e-5, rtol=1e-4, err_msg=f"length={length}")
        assert_allclose(kernel, twin.ssm_kernel(length), atol=2e-5,
                        rtol=1e-4, err_msg=f"length={length}")
    u = _inputs(length=40, hidden=3)
    assert_allclose(layer(u), twin(u), atol=1e-4, rtol=1e-4)


def test_c_tilde_kernel_is_the_references_generating_function():
    # The S4 code's kernel from C~ (ssm.py lines 795-870 at d27bdf9): the
    # inverse DFT over the L-th roots of unity z of C~ (I - A_bar z)^{-1}
    # B_bar (its Cauchy / Woodbury form computes the same resolvent).
    length = 32
    layer = _c_tilde_layer(kernel_length=length)
    c_tilde = c_tilde_parameters(layer)
    z = np.exp(-2j * np.pi * np.arange(length) / length)  # (L,)
    expected = np.zeros((*c_tilde.shape[:2], length))
    for h in range(c_tilde.shape[1]):
        a_bar, b_bar = dynamics(layer, h)
        full = np.concatenate([c_tilde[:, h], c_tilde[:, h].conj()], -1)
        resolvent = np.stack([np.linalg.solve(np.eye(8) - a_bar * zj, b_bar)
                              for zj in z], axis=-1)  # (N, L)
        expected[:, h] = np.fft.ifft(full @ resolvent, axis=-1).real
    assert_allclose(layer.ssm_kernel(length), expected, atol=2e-5,
                    rtol=1e-4)


@pytest.mark.parametrize("init", ["legs", "random"])
def test_initial_c_tilde_is_c0_times_i_minus_a_bar_to_the_l(init):
    # The same seed draws the same dynamics and C0 in both layers.
    keras.utils.set_random_seed(3)
    plain = S4(state_dim=8, init=init, dt_min=0.01, dt_max=0.5,
               causal=False)
    plain.build((None, None, 3))
    keras.utils.set_random_seed(3)
    layer = _c_tilde_layer(kernel_length=24, init=init)
    for name in ("log_dt", "log_A_real", "A_imag", "P_real", "P_imag"):
        assert_allclose(getattr(layer, name), getattr(plain, name))
    c0 = to_numpy(plain.C_real) + 1j * to_numpy(plain.C_imag)
    c_tilde = c_tilde_parameters(layer)
    for h in range(3):
        a_bar, _ = dynamics(layer, h)
        full = np.concatenate([c0[:, h], c0[:, h].conj()], -1)
        expected = full @ (np.eye(8) - np.linalg.matrix_power(a_bar, 24))
        assert_allclose(c_tilde[:, h], expected[:, :4], atol=1e-5)
        # The rows stay conjugate-symmetric: C~ is again half of a pair.
        assert_allclose(expected[:, 4:], expected[:, :4].conj(), atol=1e-8)
    # ... so the initial kernel is that of C0.
    assert_allclose(layer.ssm_kernel(24), plain.ssm_kernel(24), atol=2e-5,
                    rtol=1e-4)


def _kernel_loss_and_grads(layer, names, length, probe):
    """d sum(K * probe) / d the weights `names` of `layer`."""
    variables = [v for v in layer.trainable_weights if v.name in names]
    assert [v.name for v in variables] == list(names)

    def loss(*values):
        with keras.StatelessScope(state_mapping=list(zip(variables,
                                                         values))):
            k = layer.ssm_kernel(length)
        return keras.ops.sum(k * keras.ops.convert_to_tensor(probe, "float32"))

    value, grads = value_and_grads(loss, *[to_numpy(v) for v in variables])
    return value, dict(zip(names, grads))


def test_c_tilde_gradients_follow_the_chain_rule_through_c():
    length, steps = 30, 24
    layer = _c_tilde_layer(kernel_length=length, dt_min=0.05, dt_max=0.2)
    twin = _c_layer_like(layer)
    probe = np.random.default_rng(0).normal(size=(2, 3, steps))
    dynamics_names = ("ssm_log_dt", "ssm_log_A_real", "ssm_P_real")
    value, grads = _kernel_loss_and_grads(
        layer, dynamics_names + ("C_tilde_real", "C_tilde_imag"), steps,
        probe)
    twin_value, twin_grads = _kernel_loss_and_grads(
        twin, dynamics_names + ("C_real", "C_imag"), steps, probe)
    np.testing.assert_allclose(value, twin_value, rtol=1e-4)

    # C = C~ M^{-1}, M = I - A_bar^L: with g = dLoss/dC as a complex
    # row in the basis (x, conj x) (g = (dC_real - i dC_imag) / 2 and its
    # conjugate), dLoss/dC~ = g M^{-T}.
    half = 4
    g = 0.5 * (twin_grads["C_real"] - 1j * twin_grads["C_imag"])
    for h in range(3):
        a_bar, _ = dynamics(layer, h)
        m = np.eye(8) - np.linalg.matrix_power(a_bar, length)
        full = np.concatenate([g[:, h], g[:, h].conj()], -1)
        g_tilde = np.linalg.solve(m, full.T).T[:, :half]
        assert_allclose(grads["C_tilde_real"][:, h], 2 * g_tilde.real,
                        atol=1e-4, rtol=1e-3)
        assert_allclose(grads["C_tilde_imag"][:, h], -2 * g_tilde.imag,
                        atol=1e-4, rtol=1e-3)

    # The dynamics' gradients: with C~ held (c_tilde) or C held (c), each
    # the finite difference of the closed form in float64.
    def numpy_loss(log_dt, hold):
        saved = to_numpy(layer.log_dt).copy()
        layer.log_dt.assign(log_dt.astype("float32"))
        if hold == "c_tilde":
            kernel = closed_form_kernel(layer, steps)
        else:
            twin.log_dt.assign(log_dt.astype("float32"))
            kernel = recurrence_kernel(twin, steps)
            twin.log_dt.assign(saved)
        layer.log_dt.assign(saved)
        return np.sum(kernel * probe)

    base = to_numpy(layer.log_dt).astype("float64")
    for hold, got in (("c_tilde", grads), ("c", twin_grads)):
        for h in range(3):
            step = np.zeros(3)
            step[h] = 1e-2
            fd = (numpy_loss(base + step, hold)
                  - numpy_loss(base - step, hold)) / 2e-2
            np.testing.assert_allclose(got["ssm_log_dt"][h], fd, rtol=2e-2,
                                       atol=2e-3, err_msg=f"{hold} h={h}")
    # ... and they differ: C~ fixed is not C fixed.
    for name in dynamics_names:
        assert not np.allclose(grads[name], twin_grads[name], rtol=1e-2,
                               atol=1e-4), name


def test_c_tilde_rejects_inputs_longer_than_kernel_length():
    layer = _c_tilde_layer(kernel_length=16)
    layer(_inputs(length=16, hidden=3))
    with pytest.raises(ValueError, match="kernel_length"):
        layer(_inputs(length=17, hidden=3))


def test_c_tilde_config_and_saving_round_trip(tmp_path):
    layer = S4(state_dim=8, causal=False, dt_transform="softplus",
               C_parameterization="c_tilde", kernel_length=32)
    rebuilt = assert_config_round_trip(layer)
    assert (rebuilt.C_parameterization, rebuilt.kernel_length) == (
        "c_tilde", 32)
    model = sequence_model(layer, 4, with_mask=False)
    loaded = assert_saving_round_trip(model, _inputs(length=12), tmp_path,
                                      atol=1e-5)
    names = {w.name for w in loaded.weights}
    assert {"C_tilde_real", "C_tilde_imag"} <= names
    assert "C_real" not in names


@pytest.mark.parametrize(
    "kwargs",
    [dict(C_parameterization="C"), dict(C_parameterization="c_tilde"),
     dict(C_parameterization="c_tilde", kernel_length=0),
     dict(C_parameterization="c_tilde", kernel_length=2.5),
     dict(C_parameterization="c_tilde", kernel_length=True),
     dict(kernel_length=-3)],
)
def test_invalid_c_parameterization_raises(kwargs):
    with pytest.raises(ValueError, match="Received"):
        S4(**kwargs)


def test_schema_requires_a_long_enough_kernel_length_for_c_tilde():
    from lra_keras import schema

    row = dict(C_parameterization="c_tilde", kernel_length=2048,
               sequence_length=2000)
    schema.check(row)
    with pytest.raises(ValueError, match="kernel_length"):
        schema.check(dict(row, kernel_length=None))
    with pytest.raises(ValueError, match="kernel_length"):
        schema.check(dict(row, kernel_length=1024))
    with pytest.raises(ValueError, match="C_parameterization"):
        schema.check(dict(row, C_parameterization="tilde"))
    schema.check(dict(row, C_parameterization="c", kernel_length=None))


def test_c_from_c_tilde_doubling_series_equals_the_solve_for_slow_modes():
    # dt = 1e-4 over L = 1024: A_bar^L keeps ~95% of the slowest mode
    # (Re Lambda = -1/2), so I - A_bar^L is ill-conditioned (~20); the
    # series of 2^16 powers (matmuls only) still equals the exact inverse.
    from lra_keras.layers.s4 import c_from_c_tilde
    from lra_keras.layers.s4 import matrix_power

    layer = _c_tilde_layer(kernel_length=1024, state_dim=16, dt_min=1e-4,
                           dt_max=1.001e-4)
    a_bar = to_numpy(layer._discretize_dynamics()[0]).astype("float64")
    powers = np.stack([np.linalg.matrix_power(a, 1024) for a in a_bar])
    assert np.abs(np.linalg.eigvals(powers)).max() > 0.9
    c_tilde = np.random.default_rng(0).normal(
        size=(1, layer.hidden_dim, 16)).astype("float32")
    expected = np.einsum("dhn,hnm->dhm", c_tilde,
                         np.linalg.inv(np.eye(16)[None] - powers))
    a_bar32 = layer._discretize_dynamics()[0]
    got = to_numpy(c_from_c_tilde(c_tilde, a_bar32, 1024))
    # The series against the exact inverse of the same float32 A_bar^L:
    # what replacing the solve changes.
    m32 = to_numpy(matrix_power(a_bar32, 1024)).astype("float64")
    exact32 = np.einsum("dhn,hnm->dhm", c_tilde,
                        np.linalg.inv(np.eye(16)[None] - m32))
    scale = np.abs(expected).max()
    assert np.abs(got - exact32).max() <= 1e-5 * scale
    # and against float64 throughout: A_bar^L's float32 rounding,
    # amplified by the conditioning, stays within 1e-3 of the scale
    assert np.abs(got - expected).max() <= 1e-3 * scale
