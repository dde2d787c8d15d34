"""Functional model builders: embedding -> encoder blocks -> pooling -> head.

Every model takes a dict of two inputs, `token_ids` (batch, length) int32
and `padding_mask` (batch, length) bool, and returns class `logits`.
"""

import keras

from lra_keras.layers import SequencePooling
from lra_keras.layers import TransformerEncoder


def model_inputs(sequence_length=None):
    """The two model inputs; `sequence_length=None` accepts any length."""
    return {
        "token_ids": keras.Input(
            (sequence_length,), dtype="int32", name="token_ids"
        ),
        "padding_mask": keras.Input(
            (sequence_length,), dtype="bool", name="padding_mask"
        ),
    }


def build_encoder(
    model="transformer",
    *,
    vocabulary_size,
    sequence_length,
    hidden_dim,
    num_layers,
    num_heads,
    intermediate_dim,
    dropout=0.0,
    activation="relu",
    max_wavelength=10000,
    attention_implementation="auto",
    name="encoder",
    **unused,
):
    """Encoder: token ids -> contextual vectors (batch, length, hidden_dim).

    The embedding has `vocabulary_size` rows; positions enter through rotary
    attention only. A final LayerNorm follows the pre-norm blocks.
    """
    if model != "transformer":
        raise ValueError(
            f"Unknown model {model!r}. Known models: ['transformer']"
        )
    # Rotary positions make the Transformer length-agnostic: it accepts the
    # length-trimmed batches of lra_keras.batching, and exports likewise.
    inputs = model_inputs(None)
    # === Layers ===
    embedding = keras.layers.Embedding(
        vocabulary_size, hidden_dim, name="token_embedding"
    )
    blocks = [
        TransformerEncoder(
            num_heads=num_heads,
            intermediate_dim=intermediate_dim,
            dropout=dropout,
            activation=activation,
            max_wavelength=max_wavelength,
            attention_implementation=attention_implementation,
            name=f"transformer_block_{i}",
        )
        for i in range(num_layers)
    ]
    final_norm = keras.layers.LayerNormalization(
        epsilon=1e-5, name="final_norm"
    )
    # === Functional Model ===
    mask = inputs["padding_mask"]
    x = embedding(inputs["token_ids"])  # (batch, length, hidden_dim)
    x = keras.layers.Dropout(dropout, name="embedding_dropout")(x)
    for block in blocks:
        x = block(x, padding_mask=mask)
    x = final_norm(x)
    return keras.Model(inputs, x, name=name)


def build_classifier(task, model="transformer", *, num_classes, hidden_dim,
                     pooling="mean", **hp):
    """Sequence classifier: encoder -> padding-aware pooling -> MLP head.

    Args:
        task: task name, used to name the model.
        model: encoder family.
        num_classes: int. Number of output logits.
        hidden_dim: int. Model width.
        pooling: `SequencePooling` mode.
        **hp: the remaining `get_hparams` keys (architecture keys are used,
            others ignored).

    Returns:
        A `keras.Model` mapping `{"token_ids", "padding_mask"}` to
        `logits` (batch, num_classes).
    """
    encoder = build_encoder(model, hidden_dim=hidden_dim, **hp)
    inputs = model_inputs(encoder.input["token_ids"].shape[1])
    # === Layers ===
    pool = SequencePooling(pooling, name="pooling")
    head_hidden = keras.layers.Dense(
        hidden_dim, activation="gelu", name="head_hidden"
    )
    head = keras.layers.Dense(num_classes, name="logits")
    # === Functional Model ===
    x = encoder(inputs)
    x = pool(x, padding_mask=inputs["padding_mask"])  # (batch, hidden_dim)
    logits = head(head_hidden(x))
    return keras.Model(inputs, logits, name=f"{task}_{model}")
