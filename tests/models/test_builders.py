import math

import keras
import numpy as np
import pytest

from lra_keras.hparams import get_hparams
from lra_keras.models import FAMILIES
from lra_keras.models import build_classifier
from lra_keras.models import build_encoder
from lra_keras.models import build_pretrainer
from lra_keras.models import classifier_kwargs
from lra_keras.models.builders import HEAD_KEYS
from lra_keras.training import make_optimizer
from tests.testing import assert_allclose
from tests.testing import assert_saving_round_trip
from tests.testing import to_numpy
from tests.testing import token_inputs

TINY = dict(hidden_dim=8, num_layers=1, num_heads=2, intermediate_dim=16,
            sequence_length=32, state_dim=8, num_blocks=2, key_dim=8,
            ema_dim=2, ffn_intermediate_dim=16, kernel_size=5, norm_groups=4,
            num_kernel_channels=2,
            # patterned attentions: several blocks within the 32 tokens
            local_block_size=8, sparse_block_size=8, sparse_summary_size=2,
            longformer_window=8, bigbird_block_size=4, reformer_buckets=4)


# Options under which a family builds other dynamics weights.
DYNAMICS_OPTIONS = {"dlr": [{"init": "structured"}, {"init": "omega"}]}

# One row per registered family: the architecture does not depend on the
# task beyond the vocabulary, the number of towers and padding, tested
# separately below.
FAMILY_ROWS = [("listops", family) for family in FAMILIES]


def tiny_hparams(task, model):
    """The family's hyperparameters shrunk by every TINY key it has."""
    known = get_hparams(task, model)
    # LRA's rsqrt schedule takes its first step at rate 0 and needs a
    # warmup: the tiny rows train at a constant rate from the first step
    schedule = ({"schedule": "constant"} if known["schedule"] == "rsqrt"
                else {})
    return get_hparams(
        task, model, warmup_steps=0, **schedule,
        **{k: v for k, v in TINY.items() if k in known}
    )


def _batch(hp, batch=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(1, hp["vocabulary_size"], size=(batch, 32))
    x[:, 20:] = 0
    return token_inputs(x, hp["padding_id"]), rng.integers(0, 10, batch)


@pytest.mark.one_backend
@pytest.mark.parametrize("task, model", FAMILY_ROWS)
def test_one_training_step_changes_weights(task, model):
    hp = tiny_hparams(task, model)
    net = build_classifier(**classifier_kwargs(hp))
    net.compile(
        optimizer=make_optimizer(hp, total_steps=10),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    x, y = _batch(hp)
    before = [to_numpy(w).copy() for w in net.trainable_weights]
    loss = net.train_on_batch(x, y)
    assert np.isfinite(loss)
    after = [to_numpy(w) for w in net.trainable_weights]
    # MEGA's query/key scale and offset get ~1e-17 gradients at init
    # (queries and keys come from N(0, 0.02) projections, as in MEGA), so
    # their first Adam step vanishes in float32; every other weight moves.
    names = [w.path.split("/")[-1] for w in net.trainable_weights]
    changed = [not np.allclose(a, b) for a, b, name
               in zip(before, after, names) if name not in ("qk_gamma",
                                                           "qk_beta")]
    assert sum(changed) >= len(changed) - 1  # all but a padding row


@pytest.mark.one_backend
@pytest.mark.parametrize("task, model", FAMILY_ROWS)
def test_padded_tokens_do_not_change_logits(task, model):
    # Seeded: the weights decide whether LRA's Reformer (no mask) hashes a
    # padded key next to a real query; under the process's unseeded draw
    # it did not in 3 of 200 seeds (TensorFlow; a clean-clone CI run of
    # 45c75cd failed so), and the reading check below found nothing.
    keras.utils.set_random_seed(0)
    hp = tiny_hparams(task, model)
    # The rows that read the padding as their authors' code does: the S5
    # rows' backward scans carry it into the real positions; LRA's linear,
    # Performer, Linformer and Reformer attentions never read the mask;
    # LRA's local attention lays it over other positions than its groups';
    # LRA's Sinkhorn attention sums it into its sorted keys and its
    # readout averages it in (LRA's BigBird, also "lra_blocks", masks it:
    # not a reader).
    # (key, the value that reads the padding, the value that masks it)
    readers = [("read_padding", True, False),
               ("read_padding", "longest", False),
               ("mask_semantics", "none", "keys"),
               ("mask_semantics", "longest", "keys"),
               ("pool_padding", True, False),
               # LRA's Reformer code, which reads no mask at all
               ("reformer_variant", "lra", "paper")]
    if model in ("local", "sinkhorn"):
        readers.append(("mask_semantics", "lra_blocks", "keys"))
    reads_padding = {key: own for key, own, _ in readers
                     if hp.get(key) == own}
    hp.update({key: masked for key, _, masked in readers
               if key in reads_padding})
    net = build_classifier(**classifier_kwargs(hp))
    x, _ = _batch(hp)
    x2 = {k: v.copy() for k, v in x.items()}
    x2["token_ids"][:, 20:] = 5  # padding_mask still says "padding"
    np.testing.assert_allclose(to_numpy(net(x)), to_numpy(net(x2)),
                               atol=1e-5)
    if reads_padding:
        hp.update(reads_padding)  # the rows' own settings
        net = build_classifier(**classifier_kwargs(hp))
        # "longest" reads the padding before the end of the batch's
        # longest row: make the first row 8 tokens longer than the others
        for inputs in (x, x2):
            inputs["token_ids"][0, 20:28] = 7
            inputs["padding_mask"][0, 20:28] = True
        assert not np.allclose(to_numpy(net(x)), to_numpy(net(x2)),
                               atol=1e-5)


@pytest.mark.one_backend
@pytest.mark.parametrize("model", list(FAMILIES))
def test_unpadded_task_gives_the_blocks_no_mask(model, monkeypatch):
    # On a task without padding (padding_id None) the blocks get no mask,
    # so the attention can take a flash kernel; with every position real
    # that changes no logit. The pixel-padding rows keep their mask.
    hp = tiny_hparams("image", model)
    kwargs = classifier_kwargs(hp)
    assert kwargs["padded"] is False
    assert classifier_kwargs(tiny_hparams("listops", model))["padded"]
    unpadded = build_classifier(**kwargs)
    masked = build_classifier(**dict(kwargs, padded=True))
    masked.set_weights(unpadded.get_weights())
    rng = np.random.default_rng(0)
    x = {"token_ids": rng.integers(0, 256, size=(3, 32)),
         "padding_mask": np.ones((3, 32), bool)}
    assert_allclose(unpadded(x), masked(x), atol=1e-5)
    if model == "transformer":  # its softmax attention gets no mask
        from lra_keras.layers import rotary_attention
        attend, masks = rotary_attention.attention, []

        def spy(*args, padding_mask=None, **options):
            masks.append(padding_mask)
            return attend(*args, padding_mask=padding_mask, **options)

        monkeypatch.setattr(rotary_attention, "attention", spy)
        unpadded(x)
        assert masks and all(mask is None for mask in masks)


@pytest.mark.one_backend
@pytest.mark.parametrize("task, model", FAMILY_ROWS)
def test_keras_file_round_trip(task, model, tmp_path):
    hp = tiny_hparams(task, model)
    net = build_classifier(**classifier_kwargs(hp))
    x, _ = _batch(hp)
    assert_saving_round_trip(net, x, tmp_path)


def test_output_shape_and_names():
    hp = tiny_hparams("listops", "transformer")
    net = build_classifier(**classifier_kwargs(hp))
    assert net.output_shape == (None, 10)
    assert sorted(net.input) == ["padding_mask", "token_ids"]


class _TwoLengths(keras.utils.PyDataset):
    """Two batches of different lengths: under TensorFlow the second one
    runs the model with a symbolic (unknown) length."""

    def __init__(self, vocabulary_size, lengths=(12, 19)):
        super().__init__()
        rng = np.random.default_rng(0)
        self.batches = []
        for length in lengths:
            x = rng.integers(1, vocabulary_size, size=(2, length))
            x[1, length - 3:] = 0
            self.batches.append((token_inputs(x, 0),
                                 rng.integers(0, 10, 2)))

    def __len__(self):
        return len(self.batches)

    def __getitem__(self, index):
        return self.batches[index]


@pytest.mark.one_backend
@pytest.mark.parametrize("task, model", FAMILY_ROWS)
def test_fit_on_batches_of_different_lengths(task, model):
    hp = tiny_hparams(task, model)
    net = build_classifier(**classifier_kwargs(hp))
    net.compile(
        optimizer=make_optimizer(hp, total_steps=10),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    history = net.fit(_TwoLengths(hp["vocabulary_size"]), epochs=1,
                      verbose=0)
    assert np.isfinite(history.history["loss"][-1])


def test_windowed_transformer_fits_two_lengths_and_round_trips(tmp_path):
    # The NTFS Path-X attention (`attention_window`) in a whole model:
    # batches of 12 and 20 positions in windows of 4 (under TensorFlow
    # the second runs with an unknown length: the masked path), and the
    # saved model's outputs.
    hp = tiny_hparams("listops", "transformer")
    hp.update(attention_window=4)
    net = build_classifier(**classifier_kwargs(hp))
    net.compile(
        optimizer=make_optimizer(hp, total_steps=10),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    history = net.fit(_TwoLengths(hp["vocabulary_size"], (12, 20)),
                      epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][-1])
    x, _ = _batch(hp)  # 32 positions: eight windows
    assert_saving_round_trip(net, x, tmp_path)


def _pairs(hp, batch=3, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(1, hp["vocabulary_size"], size=(batch, 2, 32))
    x[:, 0, 20:] = 0
    x[:, 1, 26:] = 0
    return token_inputs(x, hp["padding_id"])


@pytest.mark.parametrize("model", ["transformer", "s4d"])
def test_retrieval_model_is_a_shared_encoder_on_both_documents(model):
    hp = tiny_hparams("retrieval", model)
    assert hp["towers"] == 2
    net = build_classifier(**classifier_kwargs(hp))
    x = _pairs(hp)
    assert net.input["token_ids"].shape[1:] == (2, None)
    encoder, pool = net.get_layer("encoder"), net.get_layer("pooling")

    def encode(i):  # one document at a time, as LRA's two towers
        tokens, mask = x["token_ids"][:, i], x["padding_mask"][:, i]
        out = encoder({"token_ids": tokens, "padding_mask": mask})
        return to_numpy(pool(out, padding_mask=mask))

    u, v = encode(0), encode(1)
    features = ([u, v, u * v, u - v] if hp["pair_features"] == "nli"
                else [u, v])
    x_head = np.concatenate(features, axis=-1)
    if hp["head"] == "mlp":
        x_head = net.get_layer("head_hidden")(x_head)
    expected = to_numpy(net.get_layer("logits")(x_head))
    np.testing.assert_allclose(to_numpy(net(x)), expected, atol=1e-5)
    # Padding of either document is ignored.
    x2 = {k: v.copy() for k, v in x.items()}
    x2["token_ids"][:, 0, 20:] = 7
    x2["token_ids"][:, 1, 26:] = 9
    np.testing.assert_allclose(to_numpy(net(x2)), expected, atol=1e-5)


def test_retrieval_model_trains_and_round_trips(tmp_path):
    hp = tiny_hparams("retrieval", "s4d")
    net = build_classifier(**classifier_kwargs(hp))
    net.compile(
        optimizer=make_optimizer(hp, total_steps=10),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    x = _pairs(hp)
    assert np.isfinite(net.train_on_batch(x, np.array([0, 1, 1])))
    assert_saving_round_trip(net, x, tmp_path)


def test_pixel_task_has_no_padding():
    hp = tiny_hparams("pathfinder", "s4d")
    assert hp["padding_id"] is None
    net = build_classifier(**classifier_kwargs(hp))
    x = np.random.default_rng(0).integers(0, 256, size=(2, 32))
    x[:, -4:] = 0  # black pixels are real tokens
    inputs = token_inputs(x.astype("uint8"), hp["padding_id"])
    assert inputs["padding_mask"].all()
    assert inputs["token_ids"].dtype == np.int32
    assert net(inputs).shape == (2, 2)


@pytest.mark.parametrize("builder", [build_encoder, build_classifier,
                                     build_pretrainer])
def test_builders_reject_hyperparameters_they_do_not_use(builder):
    hp = classifier_kwargs(tiny_hparams("listops", "s4d"))
    if builder is build_encoder:
        hp = {k: v for k, v in hp.items()
              if k not in ("task", "num_classes", "towers", *HEAD_KEYS)}
    elif builder is build_pretrainer:
        hp = {k: v for k, v in hp.items()
              if k not in ("num_classes", "towers", *HEAD_KEYS)}
    with pytest.raises(ValueError, match=r"takes no \['num_heads'\]"):
        builder(**hp, num_heads=4)  # a Transformer key
    with pytest.raises(ValueError, match=r"takes no \['learning_rate'\]"):
        builder(**hp, learning_rate=1e-3)  # not an architecture key


@pytest.mark.one_backend
@pytest.mark.parametrize("family", list(FAMILIES))
def test_declared_dynamics_are_weights_of_the_family(family):
    # The registry's explicit list, checked against what the layers build
    # (under every option that builds other weights): a renamed weight
    # would otherwise silently get weight decay.
    names = set()
    for options in [{}, *DYNAMICS_OPTIONS.get(family, [])]:
        hp = tiny_hparams("listops", family)
        hp.update(options)
        net = build_classifier(**classifier_kwargs(hp))
        names |= {w.path.split("/")[-1] for w in net.weights}
    assert set(FAMILIES[family].dynamics) <= names, names


@pytest.mark.parametrize(
    "init, std", [("normal", 1.0), ("scaled_normal", 32**-0.5)])
def test_embedding_init_draws_the_sources_distribution(init, std):
    # PyTorch's nn.Embedding N(0, 1) (S4, YCTFS); fairseq's MEGA
    # N(0, D^-1/2).
    net = build_encoder("s4d", vocabulary_size=600, hidden_dim=32,
                        num_layers=1, state_dim=4, embedding_init=init)
    table = to_numpy(net.get_layer("token_embedding").embeddings)
    assert abs(table.mean()) < 5 * std / np.sqrt(table.size)
    assert table.std() == pytest.approx(std, rel=0.05)


def test_s5_encoder_is_a_dense_on_one_hot_tokens(tmp_path):
    # S5's text encoder (seq_model.py:39): Dense(D) on one-hot tokens over
    # in_dim, flax's lecun_normal kernel (std 1/sqrt(in_dim), truncated at
    # 2 std) and a zero bias: our BiasedEmbedding with embedding_init
    # "lecun" at embedding_fan_in, equal to one_hot(x) @ E + b.
    net = build_encoder("s5", vocabulary_size=600, hidden_dim=32,
                        num_layers=1, state_dim=4, num_blocks=1,
                        embedding_init="lecun", embedding_fan_in=20,
                        embedding_bias=True)
    embedding = net.get_layer("token_embedding")
    table = to_numpy(embedding.embeddings)
    std = 1 / math.sqrt(20)
    assert table.std() == pytest.approx(std, rel=0.05)
    # Truncated at 2 std of the untruncated normal. Keras's PyTorch
    # backend draws 4 candidates per entry and keeps the first in range,
    # an out-of-range one when none is (probability 0.0455^4 = 4e-6 an
    # entry; ~8% that one of these 19,200 entries is): a share, not max.
    beyond = np.abs(table) > 2 * std / 0.87962566 + 1e-6
    assert beyond.mean() < 1e-3
    np.testing.assert_array_equal(to_numpy(embedding.bias), np.zeros(32))
    embedding.bias.assign(np.arange(32, dtype="float32"))
    tokens = np.array([[3, 0, 599]])
    expected = np.eye(600)[tokens] @ table + np.arange(32)
    np.testing.assert_allclose(to_numpy(embedding(tokens)), expected,
                               rtol=1e-6, atol=1e-5)
    # The bias travels in a .keras file (Embedding saves only the variables
    # its serialization spec names).
    loaded = assert_saving_round_trip(
        net, token_inputs(np.array([[3, 5, 599]]), 0), tmp_path)
    np.testing.assert_array_equal(
        to_numpy(loaded.get_layer("token_embedding").bias), np.arange(32))
    # Without a fan-in: the vocabulary's.
    net = build_encoder("s5", vocabulary_size=400, hidden_dim=32,
                        num_layers=1, state_dim=4, num_blocks=1,
                        embedding_init="lecun")
    table = to_numpy(net.get_layer("token_embedding").embeddings)
    assert table.std() == pytest.approx(1 / math.sqrt(400), rel=0.05)
    assert not hasattr(net.get_layer("token_embedding"), "bias")


def test_rotary_plus_sinusoidal_adds_the_sinusoids_and_keeps_rotary():
    # The NTFS code's Transformer: its encoder always adds the interleaved
    # sinusoids (src/tasks/encoders.py:82-131), and the rotary runs also
    # rotate queries and keys in every attention.
    hp = tiny_hparams("listops", "transformer")
    hp.update(position_embedding="rotary+sinusoidal", max_wavelength=10000)
    net = build_classifier(**classifier_kwargs(hp))
    encoder = net.get_layer("encoder")
    blocks = [layer for layer in encoder.layers
              if layer.name.startswith("transformer_block")]
    assert blocks and all(block.use_rotary for block in blocks)
    x, _ = _batch(hp)
    embedded = to_numpy(encoder.get_layer("token_embedding")(
        x["token_ids"]))
    d = embedded.shape[-1]
    pos, i = np.arange(embedded.shape[1])[:, None], np.arange(d)[None]
    angle = pos / 10000 ** ((i // 2 * 2) / d)
    pe = np.where(i % 2 == 0, np.sin(angle), np.cos(angle))
    added = to_numpy(encoder.get_layer("position_embedding")(embedded))
    np.testing.assert_allclose(added, embedded + pe, atol=1e-5)
    # Without the sinusoids (the same weights), other outputs.
    rotary = build_classifier(**classifier_kwargs(
        dict(hp, position_embedding="rotary")))
    rotary.set_weights(net.get_weights())
    assert "position_embedding" not in [
        layer.name for layer in rotary.get_layer("encoder").layers]
    assert np.abs(to_numpy(net(x)) - to_numpy(rotary(x))).max() > 1e-4


def test_linear_head_and_no_final_norm_are_one_dense_on_the_pool():
    hp = tiny_hparams("listops", "transformer")
    hp.update(head="linear", final_norm=False)
    net = build_classifier(**classifier_kwargs(hp))
    names = [layer.name for layer in net.layers]
    assert "head_hidden" not in names and "logits" in names
    encoder = net.get_layer("encoder")
    assert "final_norm" not in [layer.name for layer in encoder.layers]
    x, _ = _batch(hp)
    pooled = net.get_layer("pooling")(
        encoder(x), padding_mask=x["padding_mask"])
    np.testing.assert_allclose(
        to_numpy(net(x)), to_numpy(net.get_layer("logits")(pooled)),
        atol=1e-5)


def test_mlp2_head_is_lras_dual_classifier_head():
    # LRA's classifier_head_dual with interaction None: [u, v] ->
    # Dense(mlp_dim), relu, Dense(mlp_dim // 2), relu, Dense(classes)
    # (common_layers.py lines 236-241), here on each document's first token
    # as its dual encoder pools them.
    hp = tiny_hparams("retrieval", "transformer")
    hp.update(head="mlp2", head_hidden_dim=12, head_activation="relu",
              pair_features="concat", pooling="first", attention_bias=False)
    net = build_classifier(**classifier_kwargs(hp))
    names = [layer.name for layer in net.layers]
    assert names[-3:] == ["head_hidden", "head_hidden_2", "logits"]
    assert net.get_layer("head_hidden_2").units == 6
    rng = np.random.default_rng(0)
    tokens = rng.integers(1, hp["vocabulary_size"], size=(4, 2, 32))
    tokens[:, 0, 20:] = 0
    tokens[:, 1, 9:] = 0
    x = token_inputs(tokens.astype("int32"), hp["padding_id"])
    tokens, mask = x["token_ids"], x["padding_mask"]
    encoder = net.get_layer("encoder")
    u = to_numpy(encoder({"token_ids": tokens[:, 0],
                          "padding_mask": mask[:, 0]}))[:, 0]
    v = to_numpy(encoder({"token_ids": tokens[:, 1],
                          "padding_mask": mask[:, 1]}))[:, 0]
    h = np.concatenate([u, v], axis=-1)
    for name in ("head_hidden", "head_hidden_2"):
        layer = net.get_layer(name)
        h = np.maximum(h @ to_numpy(layer.kernel) + to_numpy(layer.bias), 0)
    logits = net.get_layer("logits")
    expected = h @ to_numpy(logits.kernel) + to_numpy(logits.bias)
    np.testing.assert_allclose(to_numpy(net(x)), expected, atol=1e-4)
    # LRA's attention projections have no biases
    paths = [w.path for w in encoder.weights if "/attention/" in w.path]
    assert paths and not [p for p in paths if p.endswith("bias")]


def test_lra_rows_build_with_their_class_token():
    # The ListOps row of an LRA xformer, at a tiny width: a class token
    # before the sinusoids, read by the head; the padding changes nothing.
    for model in ("linformer", "sparse_transformer"):
        hp = tiny_hparams("listops", model)
        assert hp["cls_token"] is True
        # LRA's Linformer reads the padding (its row: "none"; see
        # test_padded_tokens_do_not_change_logits)
        hp["mask_semantics"] = "keys"
        net = build_classifier(**classifier_kwargs(hp))
        encoder = net.get_layer("encoder")
        names = [layer.name for layer in encoder.layers]
        assert "cls_token" in names
        x, _ = _batch(hp)  # 20 real tokens of 32
        trimmed = {k: v[:, :24] for k, v in x.items()}
        np.testing.assert_allclose(to_numpy(net(trimmed)),
                                   to_numpy(net(x)), atol=1e-4)


def test_lra_rows_build_flax_norms_heads_and_attention_dropout():
    # LRA's flax encoders: every LayerNorm at epsilon 1e-6, the head's
    # Dense layers lecun_normal (truncated normal, variance 1 / fan_in),
    # dropout 0.1 on the attention weights; `head_dense_init=None` leaves
    # the head to the blocks' `dense_init`.
    hp = tiny_hparams("listops", "local")
    # Seeded: the biases' spread below is a statistic of 24 draws (its
    # former +-30% band failed once in a clean-clone CI run, PyTorch).
    keras.utils.set_random_seed(0)
    net = build_classifier(**classifier_kwargs(hp))
    norms = [layer for layer in net._flatten_layers()
             if isinstance(layer, keras.layers.LayerNormalization)]
    assert norms and {layer.epsilon for layer in norms} == {1e-6}
    attentions = [layer for layer in net._flatten_layers()
                  if type(layer).__name__ == "RotaryMultiHeadAttention"]
    assert attentions and {a.attention_dropout for a in attentions} == {0.1}
    for name in ("head_hidden", "logits"):
        dense = net.get_layer(name)
        init = dense.kernel_initializer
        assert isinstance(init, keras.initializers.TruncatedNormal), name
        fan_in = dense.kernel.shape[0]
        assert math.isclose(init.stddev * 0.87962566103423978,
                            1 / math.sqrt(fan_in)), name
    # LRA's MlpBlock biases start N(0, 1e-6^2): drawn, not zeros
    biases = [to_numpy(layer.bias) for layer in net._flatten_layers()
              if layer.name in ("ffn_inner", "ffn_outer")]
    assert len(biases) == 2 * hp["num_layers"]
    drawn = np.concatenate(biases)
    assert np.all(drawn != 0) and np.all(np.abs(drawn) < 1e-5)
    # the sample std of n normal draws: relative sd about 1 / sqrt(2 n)
    assert abs(drawn.std() / 1e-6 - 1) < 4 / np.sqrt(2 * drawn.size)
    hp.update(head_dense_init=None, ffn_bias_init_std=None)
    net = build_classifier(**classifier_kwargs(hp))
    assert net.get_layer("logits").kernel_initializer.__class__.__name__ \
        == "GlorotUniform"
    assert not any(np.any(to_numpy(layer.bias))
                   for layer in net._flatten_layers()
                   if layer.name in ("ffn_inner", "ffn_outer"))


def test_mega_head_drops_before_its_activation_and_has_no_logits_bias():
    # The MEGA code's classifier: act(dropout(Linear(x))), then a Linear
    # to the classes without bias (fairseq/models/lra/model.py:53-66, 195).
    hp = tiny_hparams("listops", "mega")
    hp.update(head="mlp", head_hidden_dim=12, head_dropout=0.5,
              logits_bias=False)
    net = build_classifier(**classifier_kwargs(hp))
    names = [layer.name for layer in net.layers]
    assert names[-4:] == ["head_hidden", "head_dropout", "head_activation",
                          "logits"]
    assert [w.name for w in net.get_layer("logits").weights] == ["kernel"]
    assert net.get_layer("head_hidden").activation.__name__ == "linear"
    x, _ = _batch(hp)
    pooled = to_numpy(net.get_layer("pooling")(
        net.get_layer("encoder")(x), padding_mask=x["padding_mask"]))
    hidden = net.get_layer("head_hidden")
    z = pooled @ to_numpy(hidden.kernel) + to_numpy(hidden.bias)
    gelu = 0.5 * z * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))
    expected = gelu @ to_numpy(net.get_layer("logits").kernel)
    np.testing.assert_allclose(to_numpy(net(x)), expected, atol=1e-4)
    # In training mode the dropout acts between the two.
    train = to_numpy(net(x, training=True))
    assert np.abs(train - expected).max() > 1e-3


def _binary_batch(hp, batch=8, seed=0):
    x, _ = _batch(hp, batch=batch, seed=seed)
    return x, np.random.default_rng(seed + 1).integers(0, 2, batch)


def test_binary_logit_trains_on_the_sigmoid_cross_entropy():
    # The YCTFS code's two-class head: one logit, BCEWithLogitsLoss, and
    # torchmetrics' binary accuracy (sigmoid > 0.5, i.e. logit > 0).
    from lra_keras.techniques import get_technique

    hp = tiny_hparams("pathfinder", "transformer")
    hp.update(binary_logit=True, head="linear")
    net = build_classifier(**classifier_kwargs(hp))
    assert net.get_layer("logits").units == 1
    assert get_technique("none").compile(
        net, make_optimizer(hp, total_steps=10), hp) == "accuracy"
    x, y = _binary_batch(hp)
    z = to_numpy(net(x))[:, 0].astype("float64")
    assert z.shape == (8,) and np.ptp(z) > 0
    # log(1 + e^z) - y z, averaged: the closed form of BCE on logits
    bce = np.mean(np.logaddexp(0.0, z) - y * z)
    accuracy = np.mean((z > 0) == (y == 1))
    got = net.evaluate(x, y, batch_size=8, return_dict=True, verbose=0)
    np.testing.assert_allclose(got["loss"], bce, rtol=1e-5)
    np.testing.assert_allclose(got["accuracy"], accuracy)
    before = to_numpy(net.get_layer("logits").kernel).copy()
    net.fit(x, y, batch_size=8, epochs=1, verbose=0)
    assert np.abs(to_numpy(net.get_layer("logits").kernel) - before).max() > 0


def test_binary_logit_under_the_multitask_loss_names_its_accuracy():
    from lra_keras.techniques import get_technique

    hp = tiny_hparams("text", "transformer")
    hp.update(binary_logit=True)
    technique = get_technique("multitask")
    net = build_classifier(**classifier_kwargs(hp), token_head=True)
    key = technique.compile(net, make_optimizer(hp, total_steps=10), hp)
    x, y = _binary_batch(hp)
    z = to_numpy(net(x)["logits"])[:, 0]
    tokens = np.asarray(x["token_ids"])
    real = np.asarray(x["padding_mask"], "float32")
    got = net.evaluate(
        x, {"logits": y, "token_logits": tokens}, batch_size=8,
        sample_weight={"logits": np.ones(8), "token_logits": real},
        return_dict=True, verbose=0)
    np.testing.assert_allclose(got[key], np.mean((z > 0) == (y == 1)))


def test_binary_logit_needs_two_classes():
    hp = tiny_hparams("listops", "transformer")
    hp.update(binary_logit=True)
    with pytest.raises(ValueError, match="10 classes"):
        build_classifier(**classifier_kwargs(hp))


def test_scale_norm_in_a_residual_stack():
    # norm="scale" (MEGA's scalenorm) in any residual family: one gain per
    # norm, the final norm of a pre-norm stack included.
    hp = tiny_hparams("listops", "s4d")
    hp.update(norm="scale", prenorm=True, final_norm=True)
    net = build_classifier(**classifier_kwargs(hp))
    gains = [w.path for w in net.weights if w.path.endswith("/gain")]
    assert len(gains) == hp["num_layers"] + 1, gains


def test_tied_dropout_drops_whole_channels_along_the_sequence():
    # S4's tie_dropout (DropoutNd): one mask per (example, channel).
    hp = tiny_hparams("listops", "s4d")
    hp.update(dropout=0.5, tie_dropout=True, num_layers=1)
    encoder = build_encoder(**{
        k: v for k, v in classifier_kwargs(hp).items()
        if k not in ("task", "num_classes", "towers", *HEAD_KEYS)})
    dropout = encoder.get_layer("s4d_dropout_0")
    out = to_numpy(dropout(np.ones((2, 16, 8), "float32"), training=True))
    assert set(np.unique(out)) <= {0.0, 2.0}
    np.testing.assert_array_equal(out, np.broadcast_to(out[:, :1], out.shape))


def test_batch_norm_stack_trains_and_ignores_padding():
    # S4's and S5's BatchNorm (MaskedBatchNormalization): statistics over
    # real tokens, so padding changes neither the moving statistics of a
    # training step nor the logits.
    hp = tiny_hparams("listops", "s4d")
    hp.update(norm="batch", batch_norm_unbiased=True, prenorm=True,
              batch_norm_count_padding=False)
    x, y = _batch(hp)
    x2 = {k: v.copy() for k, v in x.items()}
    x2["token_ids"][:, 20:] = 5  # padding changed, mask kept

    def train(inputs):
        keras.utils.set_random_seed(3)
        net = build_classifier(**classifier_kwargs(hp))
        net.compile(optimizer=make_optimizer(hp, 10),
                    loss=keras.losses.SparseCategoricalCrossentropy(
                        from_logits=True))
        net.train_on_batch(inputs, y)
        moving = [to_numpy(w) for w in net.non_trainable_weights]
        return net, moving

    net, moving = train(x)
    _, moving2 = train(x2)
    assert moving  # the moving statistics of every BatchNorm
    for a, b in zip(moving, moving2):
        np.testing.assert_allclose(a, b, atol=1e-5)
    np.testing.assert_allclose(to_numpy(net(x)), to_numpy(net(x2)),
                               atol=1e-5)
    # The S4 and S5 rows' BatchNorm counts the padding as their code's:
    # then what the padding holds reaches the moving statistics.
    hp["batch_norm_count_padding"] = True
    _, counted = train(x)
    _, counted2 = train(x2)
    assert not all(np.allclose(a, b, atol=1e-5)
                   for a, b in zip(counted, counted2))


@pytest.mark.parametrize("towers", [1, 2])
def test_pool_padding_averages_every_position(towers):
    # LRA's `jnp.mean(encoded, axis=1)`: the pooled vector is the plain
    # mean of the encoder's outputs, padded positions included.
    task = "listops" if towers == 1 else "retrieval"
    hp = tiny_hparams(task, "sinkhorn")
    hp.update(pool_padding=True, pooling="mean", head="linear",
              pair_features="nli")
    keras.utils.set_random_seed(0)
    net = build_classifier(**classifier_kwargs(hp))
    rng = np.random.default_rng(3)
    x = rng.integers(1, hp["vocabulary_size"], size=(3, towers, 32))
    x[..., 20:] = 0
    inputs = token_inputs(x[:, 0] if towers == 1 else x, hp["padding_id"])
    tokens, mask = inputs["token_ids"], inputs["padding_mask"]
    if towers == 2:
        tokens = np.concatenate([tokens[:, 0], tokens[:, 1]])
        mask = np.concatenate([mask[:, 0], mask[:, 1]])
    # the encoder masks as always; only the readout counts the padding
    encoded = to_numpy(net.get_layer("encoder")(
        {"token_ids": tokens, "padding_mask": mask}))
    pooled = encoded.mean(axis=1)
    if towers == 2:
        u, v = np.split(pooled, 2)
        pooled = np.concatenate([u, v, u * v, u - v], axis=-1)
    logits = net.get_layer("logits")
    expected = pooled @ to_numpy(logits.kernel) + to_numpy(logits.bias)
    assert_allclose(net(inputs), expected, atol=1e-5, rtol=1e-5)
    # Off, the real tokens alone: another readout of the same encoder.
    hp["pool_padding"] = False
    keras.utils.set_random_seed(0)
    masked = build_classifier(**classifier_kwargs(hp))
    assert not np.allclose(to_numpy(masked(inputs)), expected, atol=1e-3)


@pytest.mark.parametrize("task", ["listops", "retrieval"])
def test_s4_rows_see_a_batch_as_padded_to_its_longest_row(task):
    # The S4 code pads each batch to its longest row (AAN: both documents
    # to the longer) and its BatchNorm counts that padding; the paper rows
    # take full-length batches with batch_norm_count_padding="longest".
    # One training step on a batch fed 12 columns longer than its longest
    # row equals the step on the batch cut there: loss, logits after the
    # step, moving statistics and weights.
    hp = tiny_hparams(task, "s4d")
    assert hp["batch_norm_count_padding"] == "longest"
    assert hp["bucket_step"] is None
    hp.update(prenorm=True, dropout=0.0)
    rng = np.random.default_rng(7)
    shape = (4, 32) if task == "listops" else (4, 2, 32)
    x = rng.integers(1, hp["vocabulary_size"], size=shape)
    lengths = rng.integers(5, 21, size=shape[:-1])
    lengths.flat[1] = 20  # the longest row (of the second pair's tower)
    x[np.arange(32) >= lengths[..., None]] = 0
    y = rng.integers(0, hp["num_classes"], size=4)

    def step(tokens, count_padding):
        hp["batch_norm_count_padding"] = count_padding
        keras.utils.set_random_seed(3)
        net = build_classifier(**classifier_kwargs(hp))
        net.compile(optimizer=make_optimizer(hp, 10),
                    loss=keras.losses.SparseCategoricalCrossentropy(
                        from_logits=True))
        inputs = token_inputs(tokens, hp["padding_id"])
        loss = net.train_on_batch(inputs, y)
        return (loss, to_numpy(net(inputs, training=False)),
                [to_numpy(w) for w in net.weights])

    cut = step(x[..., :20], "longest")
    fed = step(x, "longest")
    assert_allclose(fed[0], cut[0], atol=1e-5, rtol=1e-5)
    assert_allclose(fed[1], cut[1], atol=1e-4, rtol=1e-4)
    for a, b in zip(fed[2], cut[2]):
        assert_allclose(a, b, atol=1e-4, rtol=1e-4)
    # Counting every position of the longer batch is another step.
    every = step(x, True)
    assert not np.allclose(every[0], cut[0], atol=1e-4)


@pytest.mark.one_backend
@pytest.mark.parametrize(
    "model, options, layer_type, attribute",
    [
        # MEGA's EMA truncation_length (fairseq models/lra/model.py).
        ("mega", dict(truncation=16), "MultiHeadEMA", "truncation"),
        # S5's per-task C_init and clip_eigs (bin/run_experiments).
        ("s5", dict(C_init="complex_normal"), "S5", "C_init"),
        ("s5", dict(clip_eigs=True), "S5", "clip_eigs"),
        # The YCTFS gMLP block (family defaults) or Liu et al.'s.
        ("gmlp", dict(gate_norm="before"), "GatedLongConvolution",
         "gate_norm"),
        ("transformer", dict(rotary_scope="head"),
         "RotaryMultiHeadAttention", "rotary_scope"),
        # MEGALODON's timestep-norm groups and chunks.
        ("megalodon", dict(norm_groups=2), "MegalodonAttention",
         "norm_groups"),
        ("megalodon", dict(chunk_size=8), "MegalodonAttention",
         "chunk_size"),
        # LRA's attention options and backbone (presets.lra).
        ("sparse_transformer", dict(sparse_cls_token=False),
         "RotaryMultiHeadAttention", "sparse_cls_token"),
        ("sparse_transformer", dict(sparse_pattern="strided",
                                    sparse_cls_token=False,
                                    cls_token=False, pooling="mean"),
         "RotaryMultiHeadAttention", "sparse_pattern"),
        ("performer", dict(performer_kernel="relu"),
         "RotaryMultiHeadAttention", "performer_kernel"),
        ("linformer", dict(attention_bias=True), "RotaryMultiHeadAttention",
         "use_bias"),
        ("local", dict(attention_dim=4), "RotaryMultiHeadAttention",
         "key_dim"),
    ],
)
def test_family_keys_reach_their_layer(model, options, layer_type,
                                       attribute):
    hp = tiny_hparams("listops", model)
    hp.update(options)
    net = build_classifier(**classifier_kwargs(hp))
    found = [layer for layer in net._flatten_layers()
             if type(layer).__name__ == layer_type]
    assert found
    value = next(iter(options.values()))
    if attribute == "key_dim":  # the attention's width over its heads
        value //= hp["num_heads"]
    assert all(getattr(layer, attribute) == value for layer in found)


def test_learned_positions_start_at_position_init_std():
    # LRA's learn_pos_emb: posemb_init normal(stddev=0.02)
    # (transformer.py line 169); None keeps Keras's glorot_uniform.
    from lra_keras.models.builders import build_encoder

    table = {}
    for std in (0.02, None):
        encoder = build_encoder(
            "transformer", vocabulary_size=10, hidden_dim=64, num_layers=1,
            num_heads=2, intermediate_dim=8, sequence_length=2000,
            position_embedding="learned", position_init_std=std)
        table[std] = to_numpy(encoder.get_layer(
            "position_embedding").position_embeddings)
    assert abs(table[0.02].std() / 0.02 - 1) < 0.02
    assert abs(table[0.02].mean()) < 1e-3
    limit = (6 / (2000 + 64)) ** 0.5  # glorot_uniform's
    assert np.abs(table[None]).max() <= limit
    assert table[None].std() > 0.5 * limit / 3**0.5


def test_rtf_row_passes_its_layer_dropout_apart_from_the_residual():
    # presets.rtf: Path-X's residual drops at 0.1, the RTF layer at 0.0
    # with a mask per element; a row without `layer_dropout` uses
    # `dropout` for both.
    hp = get_hparams("pathx", "rtf", "quick", num_layers=1)
    layers = [layer for layer in build_classifier(
        **classifier_kwargs(hp))._flatten_layers()
        if type(layer).__name__ == "RTF"]
    assert len(layers) == 1
    assert (hp["dropout"], layers[0].dropout) == (0.1, 0.0)
    assert layers[0].tie_dropout is False
    hp = dict(hp, layer_dropout=None, tie_layer_dropout=True)
    layer, = [layer for layer in build_classifier(
        **classifier_kwargs(hp))._flatten_layers()
        if type(layer).__name__ == "RTF"]
    assert (layer.dropout, layer.tie_dropout) == (0.1, True)
