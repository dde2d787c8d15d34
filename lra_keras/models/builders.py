"""Functional model builders: embedding -> encoder blocks -> pooling -> head.

Every model takes a dict of two inputs, `token_ids` (batch, length) int32
and `padding_mask` (batch, length) bool, and returns class `logits`. The
retrieval model (`towers=2`) takes pairs, (batch, 2, length) each, encodes
both documents with one shared encoder and classifies
`[u, v, u * v, u - v]` (LRA appendix A.1.3, eq. 1).
"""

import keras

from lra_keras.layers import SequencePooling
from lra_keras.layers import TransformerEncoder


def model_inputs(sequence_length=None, towers=1):
    """The two model inputs; `sequence_length=None` accepts any length.

    With `towers=2` each input holds a pair: (batch, 2, length).
    """
    shape = (sequence_length,) if towers == 1 else (towers, sequence_length)
    return {
        "token_ids": keras.Input(shape, dtype="int32", name="token_ids"),
        "padding_mask": keras.Input(shape, dtype="bool", name="padding_mask"),
    }


FAMILIES = ("transformer", "s4d", "s4", "dlr", "s5", "mega", "gmlp", "conv")
SSM_FAMILIES = ("s4d", "s4", "dlr", "s5")


def _ssm_layer(model, hp, name):
    """One SSM mixer from the flat hyperparameters."""
    from lra_keras.layers import DLR
    from lra_keras.layers import S4
    from lra_keras.layers import S4D
    from lra_keras.layers import S5

    common = dict(
        state_dim=hp["state_dim"],
        bidirectional=not hp.get("causal", False),
        output_activation=hp.get("output_activation", "glu"),
        dropout=hp.get("dropout", 0.0),
        name=name,
    )
    if model == "s4d":
        return S4D(init=hp["init"], dt_min=hp["dt_min"], dt_max=hp["dt_max"],
                   **common)
    if model == "s4":
        return S4(init=hp["init"], dt_min=hp["dt_min"], dt_max=hp["dt_max"],
                  **common)
    if model == "dlr":
        return DLR(init=hp["init"], dt_min=hp["dt_min"], dt_max=hp["dt_max"],
                   **common)
    return S5(blocks=hp["blocks"], dt_min=hp["dt_min"], dt_max=hp["dt_max"],
              **common)


def _mixer(model, hp, index):
    """The sequence mixer of block `index` (residual and norm excluded)."""
    from lra_keras.layers import ConvBlock
    from lra_keras.layers import GatedLongConvolution

    name = f"{model}_mixer_{index}"
    if model in SSM_FAMILIES:
        return _ssm_layer(model, hp, name)
    if model == "gmlp":
        return GatedLongConvolution(
            intermediate_dim=hp["intermediate_dim"],
            sequence_length=hp["sequence_length"],
            num_kernel_channels=hp["num_kernel_channels"],
            kernel_size=hp.get("kernel_size"),
            activation=hp.get("activation", "gelu"),
            causal=hp.get("causal", False),
            dropout=hp.get("dropout", 0.0),
            name=name,
        )
    return ConvBlock(
        kernel_size=hp["kernel_size"],
        intermediate_dim=hp["intermediate_dim"],
        groups=hp.get("groups", 1),
        activation=hp.get("activation", "relu"),
        causal=hp.get("causal", False),
        dropout=hp.get("dropout", 0.0),
        name=name,
    )


def _block(model, hp, index):
    """Block `index` of the stack: a callable (x, mask) -> x."""
    from lra_keras.layers import MegaEncoder

    if model == "transformer":
        layer = TransformerEncoder(
            num_heads=hp["num_heads"],
            intermediate_dim=hp["intermediate_dim"],
            dropout=hp.get("dropout", 0.0),
            activation=hp.get("activation", "relu"),
            max_wavelength=hp.get("max_wavelength", 10000),
            use_rotary=hp.get("position_embedding", "rotary") == "rotary",
            rotary_disable_half=hp.get("rotary_disable_half", False),
            causal=hp.get("causal", False),
            attention_implementation=hp.get(
                "attention_implementation", "auto"),
            name=f"transformer_block_{index}",
        )
        return lambda x, mask: layer(x, padding_mask=mask)
    if model == "mega":
        layer = MegaEncoder(
            zdim=hp["zdim"],
            intermediate_dim=hp["intermediate_dim"],
            ffn_intermediate_dim=hp["ffn_intermediate_dim"],
            ndim=hp["ndim"],
            attention_activation=hp["attention_activation"],
            bidirectional=not hp.get("causal", False),
            causal=hp.get("causal", False),
            chunk_size=hp.get("chunk_size"),
            max_positions=hp.get("max_positions") or hp["sequence_length"],
            dropout=hp.get("dropout", 0.0),
            attention_dropout=hp.get("attention_dropout", 0.0),
            prenorm=hp.get("prenorm", False),
            name=f"mega_block_{index}",
        )
        return lambda x, mask: layer(x, padding_mask=mask)
    # SSM, gMLP and conv mixers: residual around the mixer, LayerNorm
    # before (pre-norm) or after (post-norm) it.
    mixer = _mixer(model, hp, index)
    norm = keras.layers.LayerNormalization(
        epsilon=1e-5, name=f"{model}_norm_{index}"
    )
    dropout = keras.layers.Dropout(
        hp.get("dropout", 0.0), name=f"{model}_dropout_{index}"
    )
    prenorm = hp.get("prenorm", True)

    def block(x, mask):
        h = norm(x) if prenorm else x
        x = x + dropout(mixer(h, padding_mask=mask))
        return x if prenorm else norm(x)

    return block


def _position_embedding(hp):
    from lra_keras.layers import LearnedPositionEmbedding
    from lra_keras.layers import SinusoidalPositionEmbedding

    kind = hp.get("position_embedding", "rotary")
    if kind == "learned":
        return LearnedPositionEmbedding(
            hp["sequence_length"], name="position_embedding"
        )
    if kind == "sinusoidal":
        return SinusoidalPositionEmbedding(
            hp.get("max_wavelength", 10000), name="position_embedding"
        )
    if kind in ("rotary", "none"):
        return None
    raise ValueError(
        "`position_embedding` must be 'rotary', 'learned', 'sinusoidal' or "
        f"'none'. Received: position_embedding={kind!r}"
    )


def build_encoder(model="transformer", *, vocabulary_size, hidden_dim,
                  num_layers, name="encoder", **hp):
    """Encoder: token ids -> contextual vectors (batch, length, hidden_dim).

    Token embedding, then `num_layers` residual blocks of the family's
    mixer (`FAMILIES`), then a final LayerNorm for pre-norm stacks. Only the
    Transformer with learned or sinusoidal positions adds position
    embeddings; rotary attention, SSMs, MEGA and convolutions see order
    through their mixing.

    Args:
        model: one of `FAMILIES`.
        vocabulary_size: int. Rows of the token embedding.
        hidden_dim: int. Model width.
        num_layers: int. Number of blocks.
        name: model name.
        **hp: the family's architecture keys (see `hparams.MODEL_KEYS`);
            other keys are ignored.
    """
    if model not in FAMILIES:
        raise ValueError(
            f"Unknown model {model!r}. Known models: {list(FAMILIES)}"
        )
    # Every family accepts any length: the length-trimmed batches of
    # lra_keras.batching and exports both rely on it.
    inputs = model_inputs(None)
    # === Layers ===
    embedding = keras.layers.Embedding(
        vocabulary_size, hidden_dim, name="token_embedding"
    )
    positions = (
        _position_embedding(hp) if model == "transformer" else None
    )
    blocks = [_block(model, hp, i) for i in range(num_layers)]
    prenorm = model == "transformer" or hp.get("prenorm", True)
    final_norm = keras.layers.LayerNormalization(
        epsilon=1e-5, name="final_norm"
    )
    # === Functional Model ===
    mask = inputs["padding_mask"]
    x = embedding(inputs["token_ids"])  # (batch, length, hidden_dim)
    if positions is not None:
        x = positions(x)
    x = keras.layers.Dropout(hp.get("dropout", 0.0),
                             name="embedding_dropout")(x)
    for block in blocks:
        x = block(x, mask)
    if prenorm:
        x = final_norm(x)
    return keras.Model(inputs, x, name=name)


def build_classifier(task, model="transformer", *, num_classes, hidden_dim,
                     pooling="mean", towers=1, token_head=False, **hp):
    """Sequence classifier: encoder -> padding-aware pooling -> MLP head.

    With `towers=2` (retrieval) both sequences of a pair go through the
    same encoder and pooling, giving `u` and `v`, and the head sees
    `[u, v, u * v, u - v]` (LRA appendix A.1.3, eq. 1).

    Args:
        task: task name, used to name the model.
        model: encoder family.
        num_classes: int. Number of output logits.
        hidden_dim: int. Model width.
        pooling: `SequencePooling` mode.
        towers: 1 or 2. Number of sequences per example.
        token_head: bool. Also return `token_logits`, a linear head on the
            encoder's per-token outputs predicting every token's id (the
            masked-token loss of the multitask technique). The classifier
            alone is `keras.Model(model.input, model.output["logits"])`,
            which shares every layer. Defaults to False.
        **hp: the remaining `get_hparams` keys (architecture keys are used,
            others ignored); `vocabulary_size` is required for the token
            head.

    Returns:
        A `keras.Model` mapping `{"token_ids", "padding_mask"}` to
        `logits` (batch, num_classes); with `token_head`, to a dict of
        `logits` and `token_logits` (batch, [towers,] length,
        vocabulary_size).
    """
    if towers not in (1, 2):
        raise ValueError(f"`towers` must be 1 or 2. Received: towers={towers}")
    encoder = build_encoder(model, hidden_dim=hidden_dim, **hp)
    inputs = model_inputs(encoder.input["token_ids"].shape[1], towers)
    # === Layers ===
    pool = SequencePooling(pooling, name="pooling")
    head_hidden = keras.layers.Dense(
        hidden_dim, activation="gelu", name="head_hidden"
    )
    head = keras.layers.Dense(num_classes, name="logits")
    tokens_head = (
        keras.layers.Dense(hp["vocabulary_size"], name="token_logits")
        if token_head else None
    )
    # === Functional Model ===

    def encode(token_ids, mask):  # (batch, length) -> (batch, hidden_dim)
        x = encoder({"token_ids": token_ids, "padding_mask": mask})
        return x, pool(x, padding_mask=mask)

    if towers == 1:
        sequence, x = encode(inputs["token_ids"], inputs["padding_mask"])
        token_logits = tokens_head(sequence) if token_head else None
    else:
        # One encoder call on the 2 * batch documents: the same weights, and
        # the SSM kernels are generated once per step instead of twice.
        tokens, mask = inputs["token_ids"], inputs["padding_mask"]
        sequence, both = encode(
            keras.ops.concatenate([tokens[:, 0], tokens[:, 1]], axis=0),
            keras.ops.concatenate([mask[:, 0], mask[:, 1]], axis=0),
        )  # (2 * batch, length, hidden_dim), (2 * batch, hidden_dim)
        u, v = keras.ops.split(both, 2, axis=0)
        x = keras.layers.Concatenate(name="pair_features")(
            [u, v, u * v, u - v]
        )  # (batch, 4 * hidden_dim)
        token_logits = None
        if token_head:
            first, second = keras.ops.split(tokens_head(sequence), 2, axis=0)
            token_logits = keras.ops.stack([first, second], axis=1)
    logits = head(head_hidden(x))
    outputs = logits
    if token_head:
        outputs = {"logits": logits, "token_logits": token_logits}
    return keras.Model(inputs, outputs, name=f"{task}_{model}")


def build_pretrainer(task, model="transformer", *, hidden_dim,
                     pretrain_loss="ce", **hp):
    """Self-pretraining model: the classifier's encoder and a token head.

    The encoder is built by `build_encoder`, named `"encoder"` as inside
    `build_classifier`, so its weights move to a classifier with
    `classifier.get_layer("encoder").set_weights(...)`. The head predicts
    one output per position: the token's id (`pretrain_loss="ce"`,
    `token_logits` (batch, length, vocabulary_size)) or its pixel value
    (`pretrain_loss="l1"`, `pixel_values` (batch, length, 1), regressed
    with an L1 loss, NTFS's option for Image). Masked or causal targets
    are made on the data side (`lra_keras.techniques`); a causal objective
    needs `causal=True`, which makes every mixer see only the past.

    Args:
        task: task name, used to name the model.
        model: encoder family.
        hidden_dim: int. Model width.
        pretrain_loss: `"ce"` or `"l1"`.
        **hp: the remaining `get_hparams` keys.

    Returns:
        A `keras.Model` from `{"token_ids", "padding_mask"}` (batch,
        length) to the head's output.
    """
    if pretrain_loss not in ("ce", "l1"):
        raise ValueError(
            "`pretrain_loss` must be 'ce' or 'l1'. "
            f"Received: pretrain_loss={pretrain_loss!r}"
        )
    encoder = build_encoder(model, hidden_dim=hidden_dim, **hp)
    inputs = model_inputs(encoder.input["token_ids"].shape[1])
    if pretrain_loss == "ce":
        head = keras.layers.Dense(hp["vocabulary_size"], name="token_logits")
    else:
        head = keras.layers.Dense(1, name="pixel_values")
    outputs = head(encoder(inputs))
    return keras.Model(inputs, outputs, name=f"{task}_{model}_pretrainer")
