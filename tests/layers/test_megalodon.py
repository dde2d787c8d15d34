"""MEGALODON's layers against plain numpy references in float64: the CEMA
recurrence, the code's running Welford merge for the timestep norm, and the
whole block written out step by step."""

import math

import keras
import numpy as np
import pytest

from lra_keras.layers import ComplexEMA
from lra_keras.layers import MegalodonAttention
from lra_keras.layers import MegalodonEncoder
from lra_keras.layers import TimestepNorm
from tests.layers.test_multi_head_ema import compiled
from tests.layers.test_multi_head_ema import sigmoid
from tests.layers.test_multi_head_ema import silu
from tests.testing import assert_allclose
from tests.testing import assert_causal_reads_no_future
from tests.testing import assert_config_round_trip
from tests.testing import assert_padding_changes_no_real_position
from tests.testing import assert_saving_round_trip
from tests.testing import fit_one_step
from tests.testing import sequence_model
from tests.testing import to_numpy
from tests.testing import value_and_grads


def weights(layer):
    """The layer's weights by name (the last path component), float64."""
    return {w.path.split("/")[-1]: to_numpy(w).astype("float64")
            for w in layer.weights}


def call(layer, x, mask=None, **kwargs):
    fn = compiled(lambda x, m: layer(x, padding_mask=m, **kwargs))
    return to_numpy(fn(x, mask))


# === numpy references ===


def numpy_cema(layer, x, mask=None):
    """The complex recurrence h_t = p x_t + q h_{t-1}, y_t = Re(c . h_t),
    both ways when not causal, plus omega x; x (B, L, D)."""
    w = weights(layer)
    x = x.astype("float64")
    if mask is not None:
        x = x * mask[..., None]
    n = layer.ema_dim
    p = sigmoid(w["cema_alpha"][..., 0])  # (rows, N)
    radius = 1.0 - p * sigmoid(w["cema_delta"][..., 0])
    theta = sigmoid(w["cema_theta"][:, 0]) * 2 * math.pi / n  # (rows, 1)
    q = radius * np.exp(1j * theta * np.arange(1, n + 1))
    c = (w["cema_gamma"][..., 0] + 1j * w["cema_gamma"][..., 1]) / np.sqrt(n)
    batch, length, d = x.shape

    def run(rows, steps):
        h = np.zeros((batch, d, n), complex)
        y = np.zeros((batch, length, d))
        for t in steps:
            h = q[rows] * h + p[rows] * x[:, t, :, None]
            y[:, t] = (c[rows] * h).sum(-1).real
        return y

    y = run(slice(0, d), range(length))
    if not layer.causal:
        y = y + run(slice(d, 2 * d), range(length - 1, -1, -1))
    return y + w["cema_omega"] * x


def welford_merge(m, cur):
    """`WelfordData::operator+=` of megalodon/csrc/welford.h: (count,
    mean, variance) pairs."""
    count = m[0] + cur[0]
    c2 = 0.0 if count == 0 else cur[0] / count
    c1 = 1.0 - c2
    delta = cur[1] - m[1]
    return (count, c1 * m[1] + c2 * cur[1],
            c1 * m[2] + c2 * cur[2] + (c1 * delta) * (c2 * delta))


def numpy_timestep_norm(x, mask, groups, weight, bias, eps=1e-5,
                        prior=(0, 0.0, 1.0)):
    """The CUDA op's loop: per step the group mean and variance, merged
    into the running moments unless the step is padding."""
    batch, length, d = x.shape
    size = d // groups
    y = np.zeros((batch, length, d))
    for b in range(batch):
        for g in range(groups):
            channels = slice(g * size, (g + 1) * size)
            m = (prior[0], np.asarray(prior[1])[..., g] if np.ndim(prior[1])
                 else prior[1], np.asarray(prior[2])[..., g]
                 if np.ndim(prior[2]) else prior[2])
            for t in range(length):
                if mask is not None and not mask[b, t]:
                    continue  # padding: statistics kept, output 0
                step = x[b, t, channels]
                m = welford_merge(m, (1, step.mean(), step.var()))
                y[b, t, channels] = ((step - m[1]) / np.sqrt(m[2] + eps)
                                     * (weight[channels] + 1.0)
                                     + bias[channels])
    return y


def numpy_rms(x, weight=None, eps=1e-5):
    x = x / np.sqrt((x**2).mean(-1, keepdims=True) + eps)
    return x if weight is None else x * (weight + 1.0)


def numpy_rotary(x, base):
    """Interleaved pairs (2i, 2i + 1) rotated by t * base^(-2i / d), t the
    position along axis 0 (the code's apply_rotary_emb); x (C, d)."""
    c, d = x.shape
    angles = np.arange(c)[:, None] * base ** (-np.arange(0, d, 2) / d)
    pairs = (x[:, 0::2] + 1j * x[:, 1::2]) * np.exp(1j * angles)
    out = np.empty_like(x)
    out[:, 0::2], out[:, 1::2] = pairs.real, pairs.imag
    return out


def dense(w, name, x):
    y = x @ w[f"{name}_kernel"]
    return y + w[f"{name}_bias"] if f"{name}_bias" in w else y


def sublayer_weights(layer, name):
    return {w.path.split("/")[-1]: to_numpy(w).astype("float64")
            for w in layer.weights if f"/{name}/" in f"/{w.path}"}


def numpy_attention(layer, x, mask):
    """MegalodonAttention step by step (chunks, heads, positions)."""
    w = weights(layer)
    dense_w = {}
    for name in ("wv", "wz", "wr", "wh1", "wh2"):
        for key, value in sublayer_weights(layer, name).items():
            dense_w[f"{name}_{key}"] = value
    tn = sublayer_weights(layer, "timenorm")
    groups = layer.norm_groups or x.shape[-1]
    t = numpy_timestep_norm(x.astype("float64"), mask, groups, tn["weight"],
                            tn["bias"])
    e = numpy_cema(layer.cema, t, None if mask is None
                   else mask.astype("float64"))
    m = numpy_rms(e, w["rms_weight"])
    z = dense(dense_w, "wz", m)
    heads, d = layer.num_heads, layer.head_dim
    batch, length, _ = x.shape
    z = numpy_rms(z.reshape(batch, length, heads, d)).reshape(batch, length,
                                                              -1)
    gamma = (w["qk_gamma"] + 1.0) / np.sqrt(d)
    q, k = z * gamma[0] + w["qk_beta"][0], z * gamma[1] + w["qk_beta"][1]
    v = silu(dense(dense_w, "wv", t))
    r = silu(dense(dense_w, "wr", m))
    e_head = v.shape[-1] // heads
    chunk = layer.chunk_size or length
    real = np.ones((batch, length), bool) if mask is None else mask > 0
    out = np.zeros_like(v)
    for b in range(batch):
        for start in range(0, length, chunk):
            span = slice(start, min(start + chunk, length))
            size = span.stop - span.start
            for h in range(heads):
                zs = slice(h * d, (h + 1) * d)
                vs = slice(h * e_head, (h + 1) * e_head)
                qh = numpy_rotary(q[b, span, zs], layer.max_wavelength)
                kh = numpy_rotary(k[b, span, zs], layer.max_wavelength)
                scores = qh @ kh.T
                allowed = np.broadcast_to(real[b, span][None], (size, size))
                if layer.causal:
                    allowed = allowed & np.tri(size, dtype=bool)
                scores = np.where(allowed, scores, -np.inf)
                with np.errstate(invalid="ignore"):  # chunks of padding
                    weights_ = np.exp(scores - scores.max(-1, keepdims=True))
                    weights_ /= weights_.sum(-1, keepdims=True)
                out[b, span, vs] = weights_ @ v[b, span, vs]
    h = dense(dense_w, "wh1", m) + dense(dense_w, "wh2", out * r)
    return x + h


def numpy_block(block, x, mask):
    y = numpy_attention(block.attention, x, mask)
    w = weights(block)
    mean = y.mean(-1, keepdims=True)
    var = y.var(-1, keepdims=True)
    h = (y - mean) / np.sqrt(var + 1e-5) * (w["ffn_norm_weight"] + 1.0)
    h = h + w["ffn_norm_bias"]
    fc = {f"{n}_kernel": sublayer_weights(block, n)["kernel"]
          for n in ("fc1", "fc2", "fc3") if block.swiglu or n != "fc3"}
    hidden = silu(h @ fc["fc1_kernel"])
    if block.swiglu:
        hidden = hidden * (h @ fc["fc3_kernel"])
    h = hidden @ fc["fc2_kernel"]
    if block.ffn_rescale is not None:
        h = h * w["ffn_scale"]
    return x + h  # the two-hop residual


def randomise(layer, seed, scale=0.3):
    """Moves every weight off its initial value (zeros included)."""
    rng = np.random.default_rng(seed)
    for w in layer.weights:
        value = to_numpy(w)
        w.assign((value + scale * rng.normal(size=value.shape)).astype(
            value.dtype))


def padded_inputs(seed=0, length=13, dim=8):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, length, dim)).astype("float32")
    mask = np.ones((2, length), "float32")
    mask[1, 9:] = 0
    return x, mask


# === CEMA ===


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("use_fft", [True, False])
def test_cema_matches_the_complex_recurrence(causal, use_fft):
    x, mask = padded_inputs()
    layer = ComplexEMA(ema_dim=4, causal=causal)
    layer.build(x.shape)
    randomise(layer, 1)
    expected = numpy_cema(layer, x, mask)
    assert_allclose(call(layer, x, mask, use_fft=use_fft), expected,
                    atol=2e-5)


def test_cema_kernel_is_the_closed_form_and_truncates():
    layer = ComplexEMA(ema_dim=3, causal=False, truncation=5)
    layer.build((None, None, 4))
    randomise(layer, 2)
    w = weights(layer)
    p = sigmoid(w["cema_alpha"][..., 0])
    theta = sigmoid(w["cema_theta"][:, 0]) * 2 * math.pi / 3
    q = (1 - p * sigmoid(w["cema_delta"][..., 0])) * np.exp(
        1j * theta * np.arange(1, 4))
    c = (w["cema_gamma"][..., 0] + 1j * w["cema_gamma"][..., 1]) / np.sqrt(3)
    lags = np.arange(12)
    closed = np.einsum("dn,dnl->dl", p * c, q[..., None] ** lags).real
    closed[:, 5:] = 0.0
    assert_allclose(compiled(lambda: layer.kernel(12))(), closed, atol=1e-6)


def test_cema_step_reproduces_the_causal_layer():
    x, _ = padded_inputs(3)
    layer = ComplexEMA(ema_dim=4, causal=True)
    layer.build(x.shape)
    randomise(layer, 3)
    full = call(layer, x)
    state, outputs = None, []
    for t in range(x.shape[1]):
        y, state = layer.step(x[:, t], state)
        outputs.append(to_numpy(y))
    assert_allclose(np.stack(outputs, 1), full, atol=2e-5)
    with pytest.raises(ValueError, match="causal"):
        ComplexEMA(causal=False).step(x[:, 0])


def test_cema_initialisation_is_the_codes():
    keras.utils.set_random_seed(0)
    d, n = 64, 8
    layer = ComplexEMA(ema_dim=n, causal=False)
    layer.build((None, None, d))
    w = weights(layer)
    # theta: the logits of exp(-k log(D) / D), k = 1..D, in some order,
    # once per direction.
    freqs = np.sort(np.exp(-np.arange(1, d + 1) * math.log(d) / d))
    for rows in (slice(0, d), slice(d, 2 * d)):
        np.testing.assert_allclose(
            np.sort(sigmoid(w["cema_theta"][rows, 0, 0])), freqs, rtol=1e-5)
    assert not np.allclose(w["cema_theta"][:d], w["cema_theta"][d:])
    np.testing.assert_array_equal(w["cema_gamma"][..., 1], 0.0)
    assert abs(w["cema_gamma"][..., 0].std() - 1.0) < 0.1
    assert abs(w["cema_alpha"].std() - 0.2) < 0.03
    omega = w["cema_omega"]
    assert np.all(np.abs(omega) <= 1.0) and abs(omega.std() - 0.25) < 0.06


# === timestep norm ===


@pytest.mark.parametrize("prior_count", [0, 3])
def test_timestep_norm_matches_the_running_welford_merge(prior_count):
    x, mask = padded_inputs(4)
    x = x + 3.0  # a mean far from 0, as activations can have
    norm = TimestepNorm(num_groups=2, prior_count=prior_count)
    norm.build(x.shape)
    randomise(norm, 5)
    w = weights(norm)
    prior = (0, 0.0, 1.0)
    if prior_count:
        prior = (prior_count, w["prior_mean"], np.exp(w["prior_logv"]))
    expected = numpy_timestep_norm(x.astype("float64"), mask, 2, w["weight"],
                                   w["bias"], prior=prior)
    assert_allclose(call(norm, x, mask), expected, atol=2e-5)


def test_timestep_norm_gradient_matches_finite_differences():
    # The statistics are sums relative to a stop-gradient shift, which
    # must cancel in the derivative too.
    x, mask = padded_inputs(6, length=6, dim=4)
    x = x[:1] + 2.0
    norm = TimestepNorm(num_groups=2)
    norm.build(x.shape)
    probe = np.random.default_rng(7).normal(size=x.shape)
    w = weights(norm)

    def reference(values):
        return (numpy_timestep_norm(values, None, 2, w["weight"], w["bias"])
                * probe).sum()

    _, (grad,) = value_and_grads(
        lambda v: keras.ops.sum(
            norm(v) * keras.ops.convert_to_tensor(probe, "float32")), x)
    eps = 1e-5
    expected = np.zeros(x.shape)
    x64 = x.astype("float64")
    for index in np.ndindex(x.shape):
        up, down = x64.copy(), x64.copy()
        up[index] += eps
        down[index] -= eps
        expected[index] = (reference(up) - reference(down)) / (2 * eps)
    np.testing.assert_allclose(grad, expected, atol=2e-3, rtol=2e-3)


def test_timestep_norm_reads_no_future():
    x, _ = padded_inputs(8)
    x2 = x.copy()
    x2[:, 7:] += 5.0
    norm = TimestepNorm(num_groups=4)
    norm.build(x.shape)
    a, b = call(norm, x), call(norm, x2)
    np.testing.assert_allclose(a[:, :7], b[:, :7], atol=1e-6)
    assert not np.allclose(a[:, 7:], b[:, 7:], atol=1e-3)


@pytest.mark.parametrize("kwargs, match", [
    (dict(num_groups=3), "divide"),
    (dict(num_groups=None), "prior_count"),
    (dict(num_groups=0), "num_groups"),
    (dict(num_groups=2, prior_count=-1), "prior_count"),
])
def test_timestep_norm_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TimestepNorm(**kwargs).build((None, None, 8))


# === the block ===


@pytest.mark.parametrize("options", [
    dict(causal=False, chunk_size=None, num_heads=1),
    dict(causal=False, chunk_size=5, num_heads=2, swiglu=True),
    dict(causal=True, chunk_size=4, num_heads=2, ffn_rescale=0.05),
])
def test_block_matches_numpy(options):
    x, mask = padded_inputs(9)
    block = MegalodonEncoder(key_dim=8, intermediate_dim=12,
                             ffn_intermediate_dim=10, ema_dim=3,
                             norm_groups=4, max_wavelength=100.0, **options)
    block.build(x.shape)
    randomise(block, 10, scale=0.2)
    expected = numpy_block(block, x.astype("float64"), mask)
    real = mask > 0  # a chunk of padding only has no softmax in numpy
    assert_allclose(call(block, x, mask)[real], expected[real], atol=5e-5,
                    rtol=1e-4)


def test_attention_gains_start_at_one():
    # The code's offsets from 1: (gamma + 1) / sqrt(d) and the RMS norm's
    # weight + 1 start at zero offsets.
    x, _ = padded_inputs(11)
    layer = MegalodonAttention(key_dim=8, num_heads=2, ema_dim=3,
                               norm_groups=4)
    layer.build(x.shape)
    w = weights(layer)
    np.testing.assert_array_equal(w["qk_gamma"], 0.0)
    np.testing.assert_array_equal(w["rms_weight"], 0.0)


def make_block(x, causal):
    block = MegalodonEncoder(key_dim=8, num_heads=2, ema_dim=3,
                             norm_groups=4, chunk_size=6, causal=causal)
    block.build(x.shape)
    randomise(block, 12, scale=0.2)
    return block


def test_block_causal_reads_no_future():
    assert_causal_reads_no_future(make_block)


def test_masked_scores_are_the_mask_score_exactly():
    # The addition leaves each allowed score as it is and puts every
    # masked one at _MASK_SCORE itself for |score| < 32, as `where` did.
    from lra_keras.layers.megalodon import _MASK_SCORE
    from lra_keras.layers.megalodon import _masked_scores

    rng = np.random.default_rng(11)
    scores = rng.uniform(-31.9, 31.9, size=(3, 1, 4, 6)).astype("float32")
    allowed = (rng.random((3, 1, 1, 6)) > 0.4).astype("float32")
    got = to_numpy(_masked_scores(keras.ops.convert_to_tensor(scores),
                                  keras.ops.convert_to_tensor(allowed)))
    np.testing.assert_array_equal(
        got, np.where(allowed > 0, scores, np.float32(_MASK_SCORE)))


def test_block_padding_changes_no_real_position():
    assert_padding_changes_no_real_position(make_block)


@pytest.mark.parametrize("causal, chunk_size", [
    (False, None), (False, 5), (True, 5), (False, 4)])
def test_no_padding_mask_is_an_all_true_one(causal, chunk_size):
    # 15 positions: chunks of 5 tile the rows and no mask is made
    # (`_attend`'s `every_key_real`); chunks of 4 do not, and the
    # completed chunk's keys are masked. Either way the output and the
    # gradients are an all-true mask's, and the output numpy's.
    x, _ = padded_inputs(14, length=15)
    every = np.ones(x.shape[:2], "float32")
    block = MegalodonEncoder(key_dim=8, num_heads=2, ema_dim=3,
                             norm_groups=4, chunk_size=chunk_size,
                             causal=causal)
    block.build(x.shape)
    randomise(block, 14, scale=0.2)
    fixed = [to_numpy(w) for w in block.non_trainable_weights]

    def measure(mask):
        def loss(x, *trained):
            out, _ = block.stateless_call(list(trained), fixed, x,
                                          padding_mask=mask)
            return keras.ops.sum(out ** 2)

        return call(block, x, mask), value_and_grads(
            compiled(loss), x, *(to_numpy(w) for w in block.trainable_weights))

    (out, (value, grads)), (ref_out, (ref_value, ref_grads)) = (
        measure(None), measure(every))
    assert_allclose(out, numpy_block(block, x.astype("float64"), every),
                    atol=5e-5, rtol=1e-4)
    np.testing.assert_allclose(out, ref_out, atol=1e-5)
    np.testing.assert_allclose(value, ref_value, rtol=1e-5)
    for w, g, r in zip(["x"] + [w.path for w in block.trainable_weights],
                       grads, ref_grads):
        np.testing.assert_allclose(g, r, atol=1e-4, rtol=1e-4,
                                   err_msg=f"d/d{w}")


def test_block_trains_every_weight():
    block = MegalodonEncoder(key_dim=8, num_heads=2, ema_dim=3,
                             norm_groups=4, swiglu=True, ffn_rescale=0.1)
    loss, changed = fit_one_step(block, hidden_dim=8)
    assert np.isfinite(loss)
    assert changed == 1.0


def test_block_config_and_saving_round_trip(tmp_path):
    block = MegalodonEncoder(key_dim=8, num_heads=2, ema_dim=3,
                             norm_groups=4, chunk_size=5, swiglu=True,
                             ffn_rescale=0.1, name="block")
    assert_config_round_trip(block)
    model = sequence_model(block, 8)
    x, mask = padded_inputs(13)
    assert_saving_round_trip(model, [x, mask.astype(bool)], tmp_path,
                             atol=1e-5)


@pytest.mark.parametrize("kwargs, match", [
    (dict(key_dim=6, num_heads=2), "even"),
    (dict(key_dim=8, num_heads=3), "even"),
    (dict(key_dim=8, dropout=1.0), "dropout"),
    (dict(key_dim=8, ffn_rescale=0.0), "ffn_rescale"),
    (dict(key_dim=8, chunk_size=0), "chunk_size"),
])
def test_block_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MegalodonEncoder(ema_dim=3, norm_groups=4, **kwargs)
