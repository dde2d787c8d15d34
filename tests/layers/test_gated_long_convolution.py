
import keras
import numpy as np
import pytest
from keras import ops

from lra_keras.layers import gated_long_convolution
from lra_keras.layers.gated_long_convolution import GatedLongConvolution
from tests.testing import assert_allclose
from tests.testing import assert_config_round_trip
from tests.testing import assert_saving_round_trip
from tests.testing import numpy_gelu
from tests.testing import numpy_layer_norm
from tests.testing import to_numpy


def numpy_toeplitz_conv(z, kernel, backward_kernel=None):
    """`y[t, h] = sum_s W_h[t, s] z[s, h]` with an explicit Toeplitz W.

    `W_h[t, s] = kernel[h % C, t - s]` for `t >= s` and
    `backward_kernel[h % C, s - t - 1]` for `s > t` (zero past the stored
    lags).
    """
    _, length, channels = z.shape
    C = kernel.shape[0]
    W = np.zeros((channels, length, length))
    for h in range(channels):
        for t in range(length):
            for s in range(length):
                lag = t - s
                if 0 <= lag < kernel.shape[1]:
                    W[h, t, s] = kernel[h % C, lag]
                elif (
                    lag < 0
                    and backward_kernel is not None
                    and -lag <= backward_kernel.shape[1]
                ):
                    W[h, t, s] = backward_kernel[h % C, -lag - 1]
    return np.einsum("hts,bsh->bth", W, z)


def _randomise(layer, seed=0):
    """Replace the near-zero initial kernels by O(1) ones so tests can fail."""
    rng = np.random.default_rng(seed)
    for w in [layer.spatial_kernel, layer.spatial_backward_kernel,
              layer.spatial_bias]:
        if w is not None:
            w.assign(rng.normal(size=w.shape).astype("float32") * 0.5)
    for w in layer.input_dense.weights + layer.output_dense.weights:
        # Non-zero Dense biases too (Keras starts them at 0).
        w.assign(rng.normal(size=w.shape).astype("float32") * 0.5)
    if layer.gate_norm:
        for w in layer.gate_norm_layer.weights:
            w.assign(1.0 + rng.normal(size=w.shape).astype("float32") * 0.3)


def _kernels(layer):
    back = layer.spatial_backward_kernel
    return (to_numpy(layer.spatial_kernel),
            None if back is None else to_numpy(back))


def _layer_reference(layer, x, mask):
    """Eq. 5 by hand in numpy, from the layer's own weights."""
    U, c = (to_numpy(w) for w in layer.input_dense.weights)
    V, d = (to_numpy(w) for w in layer.output_dense.weights)
    Z = numpy_gelu(x @ U + c)
    H = layer.intermediate_dim
    Z1, Z2 = Z[..., :H], Z[..., H:]
    if layer.gate_norm:
        gamma, beta = (to_numpy(w) for w in layer.gate_norm_layer.weights)
    if layer.gate_norm == "before":
        Z2 = numpy_layer_norm(Z2, gamma, beta)
    Z2 = Z2 * mask[..., None]
    b = to_numpy(layer.spatial_bias)
    if layer.gate_bias == "position":
        b = b[: x.shape[1]][None, :, None]
    else:
        b = np.tile(b, H // b.shape[0])[None, None, :]
    conv = numpy_toeplitz_conv(Z2, *_kernels(layer))
    if layer.fft_norm == "ortho":
        conv = conv * layer.ortho_scale(x.shape[1])
    gate = conv + b
    if layer.gate_norm == "after":
        gate = numpy_layer_norm(gate, gamma, beta)
    return (Z1 * gate) @ V + d


# Shared shapes keep JAX's per-op compilation cache warm across tests.
BATCH, LENGTH, HIDDEN, INTERMEDIATE, MAX_LENGTH = 2, 19, 4, 8, 24


@pytest.mark.parametrize(
    "kernel_size, causal",
    [(None, False), (None, True), (5, False), (5, True), (1, False)],
)
def test_fft_and_direct_paths_match_numpy_direct_convolution(kernel_size,
                                                             causal):
    # Call length 19 < sequence_length 24: stored kernels are sliced (None)
    # or zero-padded (5, 1) to the call's length for the FFT; 2 kernel
    # channels are tiled to 8.
    layer = GatedLongConvolution(
        intermediate_dim=INTERMEDIATE, sequence_length=MAX_LENGTH,
        num_kernel_channels=2, kernel_size=kernel_size, causal=causal,
    )
    layer.build((BATCH, None, HIDDEN))
    _randomise(layer, seed=2)
    z = np.random.default_rng(3).normal(size=(BATCH, LENGTH, INTERMEDIATE))
    z_t = ops.convert_to_tensor(z.astype("float32"))
    expected = numpy_toeplitz_conv(z, *_kernels(layer))
    fft = to_numpy(layer.spatial_convolution(z_t, method="fft"))
    direct = to_numpy(layer.spatial_convolution(z_t, method="direct"))
    np.testing.assert_allclose(fft, expected, atol=1e-4, rtol=0)
    np.testing.assert_allclose(direct, expected, atol=1e-4, rtol=0)


@pytest.mark.parametrize("kernel_size, method", [(4, "direct"), (5, "fft")])
def test_kernels_longer_than_the_threshold_take_the_fft_path(
    monkeypatch, kernel_size, method
):
    monkeypatch.setattr(
        gated_long_convolution, "DIRECT_CONV_MAX_KERNEL_SIZE", 4
    )
    layer = GatedLongConvolution(
        intermediate_dim=INTERMEDIATE, sequence_length=MAX_LENGTH,
        kernel_size=kernel_size,
    )
    layer.build((BATCH, None, HIDDEN))
    _randomise(layer, seed=4)
    z = np.random.default_rng(4).normal(size=(BATCH, LENGTH, INTERMEDIATE))
    z = ops.convert_to_tensor(z.astype("float32"))
    auto = to_numpy(layer.spatial_convolution(z))
    chosen = to_numpy(layer.spatial_convolution(z, method=method))
    np.testing.assert_array_equal(auto, chosen)


def _layer(**kwargs):
    kwargs = {**dict(intermediate_dim=INTERMEDIATE,
                     sequence_length=MAX_LENGTH), **kwargs}
    layer = GatedLongConvolution(**kwargs)
    layer.build((BATCH, None, HIDDEN))
    _randomise(layer, seed=5)
    return layer


def _inputs(seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(BATCH, LENGTH, HIDDEN)).astype("float32"), rng


def test_independent_channels_are_tiled():
    # Identical inputs on every channel: channels h and h + C share a kernel,
    # neighbouring channels do not.
    layer = _layer(num_kernel_channels=4)
    z = np.random.default_rng(6).normal(size=(BATCH, LENGTH, 1))
    z = ops.convert_to_tensor(np.repeat(z, INTERMEDIATE, -1), "float32")
    y = to_numpy(layer.spatial_convolution(z, method="fft"))  # (B, L, 8)
    np.testing.assert_allclose(y[..., :4], y[..., 4:], atol=1e-5)
    assert np.abs(y[..., 0] - y[..., 1]).max() > 1e-2


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(causal=True, gate_norm=False),
        dict(kernel_size=4, num_kernel_channels=1),
        dict(gate_norm="after", gate_bias="channel", fft_norm="ortho"),
        dict(gate_norm=None, gate_bias="channel", kernel_size=3,
             num_kernel_channels=4),
        dict(gate_norm="after", fft_norm="ortho", causal=True),
    ],
)
def test_layer_matches_numpy_reference(kwargs):
    x, _ = _inputs(7)
    mask = np.ones((BATCH, LENGTH), "float32")
    mask[1, 13:] = 0.0
    layer = _layer(**kwargs)
    out = layer(x, padding_mask=mask)
    assert_allclose(out, _layer_reference(layer, x, mask), atol=1e-4)


def test_initialisation_is_near_identity_gate():
    layer = GatedLongConvolution(intermediate_dim=8, sequence_length=50)
    layer.build((1, None, 4))
    # Forward lags 0..49, backward lags 1..49.
    assert tuple(layer.spatial_kernel.shape) == (2, 50)
    assert tuple(layer.spatial_backward_kernel.shape) == (2, 49)
    eps = gated_long_convolution.KERNEL_INIT_EPSILON / 50
    for w in (layer.spatial_kernel, layer.spatial_backward_kernel):
        w = np.abs(to_numpy(w))
        assert 0 < w.max() <= eps
    np.testing.assert_array_equal(to_numpy(layer.spatial_bias), np.ones(50))


@pytest.mark.parametrize("kernel_size", [None, 3])
def test_causal_ignores_future_tokens(kernel_size):
    x, rng = _inputs(9)
    x2 = x.copy()
    x2[:, 12:] = rng.normal(size=(BATCH, LENGTH - 12, HIDDEN))
    layer = _layer(kernel_size=kernel_size, causal=True)
    a, b = to_numpy(layer(x)), to_numpy(layer(x2))
    np.testing.assert_allclose(a[:, :12], b[:, :12], atol=1e-5)
    assert np.abs(a[:, 12:] - b[:, 12:]).max() > 1e-3


@pytest.mark.parametrize("kernel_size", [None, 3])
def test_padding_does_not_change_real_positions(kernel_size):
    x, rng = _inputs(11)
    mask = np.ones((BATCH, LENGTH), bool)
    mask[:, 12:] = False
    x2 = x.copy()
    x2[:, 12:] = rng.normal(size=(BATCH, LENGTH - 12, HIDDEN)) * 10
    layer = _layer(kernel_size=kernel_size)
    a = to_numpy(layer(x, padding_mask=mask))
    b = to_numpy(layer(x2, padding_mask=mask))
    np.testing.assert_allclose(a[:, :12], b[:, :12], atol=1e-5)
    # Without the mask the bidirectional kernel does read the padding.
    c = to_numpy(layer(x2))
    assert np.abs(a[:, :12] - c[:, :12]).max() > 1e-3


def test_length_above_sequence_length_is_rejected():
    layer = GatedLongConvolution(intermediate_dim=4, sequence_length=8)
    with pytest.raises(ValueError, match="sequence_length"):
        layer(np.zeros((1, 9, 2), "float32"))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(intermediate_dim=0), "intermediate_dim"),
        (dict(sequence_length=0), "sequence_length"),
        (dict(num_kernel_channels=3), "num_kernel_channels"),
        (dict(kernel_size=0), "kernel_size"),
        (dict(kernel_size=17), "kernel_size"),
        (dict(dropout=1.0), "dropout"),
        (dict(gate_norm="middle"), "gate_norm"),
        (dict(gate_bias="token"), "gate_bias"),
        (dict(fft_norm="forward"), "fft_norm"),
        (dict(kernel_initializer="no_such_init"), "kernel_initializer"),
        (dict(kernel_initializer=None), "kernel_initializer"),
    ],
)
def test_bad_arguments_are_rejected(kwargs, match):
    args = {**dict(intermediate_dim=4, sequence_length=16), **kwargs}
    with pytest.raises(ValueError, match=match):
        GatedLongConvolution(**args)


def test_serialization_round_trips(tmp_path):
    layer = GatedLongConvolution(
        intermediate_dim=4, sequence_length=16, num_kernel_channels=4,
        kernel_size=6, causal=True, gate_norm=False, dropout=0.1,
    )
    assert_config_round_trip(layer)
    for kwargs in (
        dict(gate_norm="after", gate_bias="channel",
             kernel_initializer="yctfs", fft_norm="ortho"),
        dict(kernel_initializer=keras.initializers.RandomNormal(stddev=2.0)),
        dict(kernel_initializer="zeros"),
    ):
        layer = GatedLongConvolution(
            intermediate_dim=4, sequence_length=16, **kwargs
        )
        assert_config_round_trip(layer)
    inputs = keras.Input((None, HIDDEN))
    layer = GatedLongConvolution(
        intermediate_dim=INTERMEDIATE, sequence_length=MAX_LENGTH,
        gate_norm="after", gate_bias="channel", kernel_initializer="yctfs",
        fft_norm="ortho",
    )
    model = keras.Model(inputs, layer(inputs))
    _randomise(layer)
    x, _ = _inputs(12)
    (tmp_path / "yctfs").mkdir()
    assert_saving_round_trip(model, x, tmp_path / "yctfs", atol=1e-5)
    inputs = keras.Input((None, HIDDEN))
    layer = GatedLongConvolution(
        intermediate_dim=INTERMEDIATE, sequence_length=MAX_LENGTH
    )
    model = keras.Model(inputs, layer(inputs))
    _randomise(layer)
    x, _ = _inputs(13)
    assert_saving_round_trip(model, x, tmp_path, atol=1e-5)


def _model(**kwargs):
    inputs = keras.Input((None, HIDDEN))
    mask = keras.Input((None,))
    layer = GatedLongConvolution(
        intermediate_dim=INTERMEDIATE, sequence_length=MAX_LENGTH, **kwargs
    )
    h = layer(inputs, padding_mask=mask)
    return keras.Model([inputs, mask], ops.mean(h, axis=(1, 2))), layer


def test_gradients_are_finite_and_reach_the_kernel():
    model, layer = _model(dropout=0.1)
    model.compile(optimizer=keras.optimizers.SGD(1.0), loss="mse")
    x, _ = _inputs(14)
    mask = np.ones((BATCH, LENGTH), "float32")
    mask[1, 10:] = 0.0
    before = to_numpy(layer.spatial_kernel).copy()
    loss = model.train_on_batch([x, mask], np.ones((BATCH,), "float32"))
    assert np.isfinite(loss)
    after = to_numpy(layer.spatial_kernel)
    assert np.all(np.isfinite(after)) and not np.allclose(before, after)


def test_fit_runs_one_step():
    model, _ = _model(kernel_size=3)
    model.compile(optimizer="adam", loss="mse")
    x, _ = _inputs(15)
    mask = np.ones((BATCH, LENGTH), "float32")
    history = model.fit([x, mask], np.zeros((BATCH,), "float32"),
                        batch_size=BATCH, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])


# === The YCTFS block (pablomiralles22/long-transformers, branch lra-paper) ===
YCTFS = dict(gate_norm="after", gate_bias="channel",
             kernel_initializer="yctfs", fft_norm="ortho")


def numpy_yctfs_spatial_conv(z, ref_kernel, ref_bias, start):
    """`SpatialConv.forward` (src/models/layers/gmlp.py:29-52) through
    `fft_conv1d` (src/models/functional/fft_conv1d.py:3-25), in numpy.

    z (B, L, H); ref_kernel (C, T), the reference's layout: tap m is lag
    m - start (start = T // 2 bidirectional, 0 for direction="backward");
    ref_bias (C,). Channel h uses kernel and bias channel h % C.
    """
    x = np.transpose(z, (0, 2, 1)).astype("float64")  # (B, H, L)
    ref_kernel = np.asarray(ref_kernel, "float64")
    _, H, L = x.shape
    C, T = ref_kernel.shape
    n = 2 ** (L + T - 1).bit_length()  # fft_conv1d.py:12-14
    x_f = np.fft.rfft(x, n=n, axis=-1, norm="ortho")
    k_f = np.fft.rfft(ref_kernel, n=n, axis=-1, norm="ortho")
    k_f = np.tile(k_f, (H // C, 1))  # (H, n // 2 + 1)
    y = np.fft.irfft(x_f * k_f, n=n, axis=-1, norm="ortho")
    y = y[:, :, start:start + L] + np.tile(ref_bias, H // C)[:, None]
    return np.transpose(y, (0, 2, 1)), n


def _yctfs_kernel(layer):
    """Our weights laid out as the reference's kernel (C, T) and `start`:
    the forward tap of lag j at start + j, the backward one of lag -(j+1)
    at start - 1 - j (gmlp.py:44, 52)."""
    fwd, back = _kernels(layer)
    C, K = fwd.shape
    T = layer.ortho_kernel_length()
    if back is None:  # causal: direction="backward", start 0
        assert T == K
        return fwd, 0
    start = T // 2
    kernel = np.zeros((C, T))
    kernel[:, start:start + K] = fwd
    kernel[:, start - K + 1:start] = back[:, ::-1]
    return kernel, start


def numpy_yctfs_block(layer, x, mask):
    """`GMLP._forward_gmlp_block` (gmlp.py:176-194) without norm_1 and the
    residual (the model's), from the layer's own weights: z1, z2 from the
    two halves of U (gmlp.py:139-147), z2 masked (186-187), spatial conv
    with per-channel bias, norm_2 after it (156, 189-190), proj_out
    (158-161, dropout 0)."""
    U, c = (to_numpy(w) for w in layer.input_dense.weights)
    V, d = (to_numpy(w) for w in layer.output_dense.weights)
    H = layer.intermediate_dim
    z1 = numpy_gelu(x @ U[:, :H] + c[:H])
    z2 = numpy_gelu(x @ U[:, H:] + c[H:])
    z2 = np.where(mask[..., None] > 0, z2, 0.0)
    kernel, start = _yctfs_kernel(layer)
    conv, n = numpy_yctfs_spatial_conv(
        z2, kernel, to_numpy(layer.spatial_bias), start
    )
    gamma, beta = (to_numpy(w) for w in layer.gate_norm_layer.weights)
    s_z = z1 * numpy_layer_norm(conv, gamma, beta)
    return s_z @ V + d, n


@pytest.mark.parametrize("method", ["fft", "direct"])
@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),  # full length: T = 2 * 24 + 1, lags -24..24
        dict(kernel_size=5),  # T = 9, lags -4..4
        dict(causal=True),  # T = 24, lags 0..23
    ],
)
def test_yctfs_option_matches_numpy_reference_block(monkeypatch, method,
                                                    kwargs):
    # The layer picks its path by kernel size: force each.
    monkeypatch.setattr(
        gated_long_convolution, "DIRECT_CONV_MAX_KERNEL_SIZE",
        10**6 if method == "direct" else 0,
    )
    x, _ = _inputs(21)
    mask = np.ones((BATCH, LENGTH), "float32")
    mask[1, 11:] = 0.0  # padded row; call length 19 < sequence_length 24
    layer = _layer(num_kernel_channels=2, **YCTFS, **kwargs)
    for w in layer.gate_norm_layer.weights:  # gamma, beta away from 1, 0
        w.assign(to_numpy(w) + np.linspace(-0.5, 0.5, w.shape[0]))
    assert tuple(layer.spatial_bias.shape) == (2,)
    expected, n = numpy_yctfs_block(layer, x, mask)
    assert_allclose(layer(x, padding_mask=mask), expected, atol=1e-4)
    # "ortho" = a plain convolution times 1 / sqrt(n) (n = 128, 32, 64),
    # and the padded tail never reaches the real positions.
    z = np.random.default_rng(22).normal(size=(BATCH, LENGTH, INTERMEDIATE))
    kernel, start = _yctfs_kernel(layer)
    ortho, _ = numpy_yctfs_spatial_conv(z, kernel, np.zeros(2), start)
    plain = numpy_toeplitz_conv(z, *_kernels(layer))
    np.testing.assert_allclose(ortho, plain / np.sqrt(n), atol=1e-10)
    assert layer.ortho_scale(LENGTH) == pytest.approx(1 / np.sqrt(n))
    y = layer.spatial_convolution(ops.convert_to_tensor(z, "float32"),
                                  method=method)
    assert_allclose(y, ortho, atol=1e-5)
    x2 = x.copy()
    x2[1, 11:] = 7.0
    a = to_numpy(layer(x, padding_mask=mask))
    b = to_numpy(layer(x2, padding_mask=mask))
    np.testing.assert_allclose(a[1, :11], b[1, :11], atol=1e-5)


def test_ortho_scale_with_a_symbolic_length_matches_the_static_one():
    for kwargs in (dict(), dict(kernel_size=5), dict(causal=True)):
        layer = GatedLongConvolution(
            intermediate_dim=4, sequence_length=40, fft_norm="ortho",
            **kwargs,
        )
        T = layer.ortho_kernel_length()
        for length in range(1, 41):
            n = 2 ** (length + T - 1).bit_length()
            assert layer.ortho_scale(length) == pytest.approx(1 / n**0.5)
            scale = layer.ortho_scale(ops.convert_to_tensor(length, "int32"))
            np.testing.assert_allclose(to_numpy(scale), 1 / n**0.5,
                                       rtol=1e-6)


def test_yctfs_initialisation():
    # gmlp.py:25-27: kernel N(0, 1e-5^2), bias 1 per kernel channel.
    layer = GatedLongConvolution(
        intermediate_dim=16, sequence_length=1000, num_kernel_channels=4,
        **YCTFS,
    )
    layer.build((1, None, 4))
    np.testing.assert_array_equal(to_numpy(layer.spatial_bias), np.ones(4))
    fwd, back = _kernels(layer)
    assert fwd.shape == (4, 1000) and back.shape == (4, 999)
    w = np.concatenate([fwd.ravel(), back.ravel()])  # 7996 draws
    # Standard errors: std 1e-5 / sqrt(2 * 7996) = 0.8%, mean 1.1e-7.
    assert abs(w.std() / 1e-5 - 1) < 0.05
    assert abs(w.mean()) < 6e-7
    assert np.abs(w).max() < 6e-5
    # Independent draws for the two kernels.
    assert np.abs(np.corrcoef(fwd[:, :999].ravel(), back.ravel())[0, 1]) < 0.1
    assert layer.gate_norm_layer is not None
    np.testing.assert_array_equal(
        to_numpy(layer.gate_norm_layer.gamma), np.ones(16)
    )


def test_forward_and_backward_kernels_are_drawn_independently():
    layer = GatedLongConvolution(intermediate_dim=8, sequence_length=200)
    layer.build((1, None, 4))
    fwd, back = _kernels(layer)
    assert np.abs(np.corrcoef(fwd[:, :199].ravel(), back.ravel())[0, 1]) < 0.2


def test_bool_gate_norm_still_accepted():
    assert GatedLongConvolution(4, 8, gate_norm=True).gate_norm == "before"
    assert GatedLongConvolution(4, 8, gate_norm=False).gate_norm is None
    assert GatedLongConvolution(4, 8).get_config()["gate_norm"] == "before"
