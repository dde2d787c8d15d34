"""Functional model builders: embedding -> encoder blocks -> pooling -> head.

Every model takes a dict of two inputs, `token_ids` (batch, length) int32
and `padding_mask` (batch, length) bool, and returns class `logits`. The
retrieval model (`towers=2`) takes pairs, (batch, 2, length) each, encodes
both documents with one shared encoder and classifies
`[u, v, u * v, u - v]` (LRA appendix A.1.3, eq. 1).
"""

import contextlib

import keras

from lra_keras.batching import input_length
from lra_keras.layers import BiasedEmbedding
from lra_keras.layers import ClassToken
from lra_keras.layers import LearnedPositionEmbedding
from lra_keras.layers import PixelEncoder
from lra_keras.layers import SequencePooling
from lra_keras.layers import SinusoidalPositionEmbedding
from lra_keras.layers.class_token import with_class_position
from lra_keras.layers.dense_init import dense_initializers
from lra_keras.layers.projections import Dense
from lra_keras.models.families import HEAD_KEYS
from lra_keras.models.families import get_family
from lra_keras.models.families import make_norm
from lra_keras.schema import DTYPE_POLICIES


@contextlib.contextmanager
def dtype_policy_scope(name="float32"):
    """Builds and runs models under Keras's global dtype policy `name`.

    `"mixed_bfloat16"` and `"mixed_float16"`: layers compute in bfloat16 or
    float16 with float32 weights; the output layers stay float32, and the
    FFT convolutions and SSM kernels compute in float32 (`fft_conv`,
    `ssm_kernels`). Keras's `compile` wraps the optimizer in a
    `LossScaleOptimizer` under `"mixed_float16"`. The previous policy is
    restored on exit.
    """
    if name not in DTYPE_POLICIES:
        raise ValueError(f"`dtype_policy` must be one of {DTYPE_POLICIES}. "
                         f"Received: dtype_policy={name!r}")
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(name)
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)


# The classifier heads of `build_classifier`.
HEADS = ("mlp", "mlp2", "linear")


def model_inputs(sequence_length=None, towers=1):
    """The two model inputs; `sequence_length=None` accepts any length.

    With `towers=2` each input holds a pair: (batch, 2, length).
    """
    shape = (sequence_length,) if towers == 1 else (towers, sequence_length)
    return {
        "token_ids": keras.Input(shape, dtype="int32", name="token_ids"),
        "padding_mask": keras.Input(shape, dtype="bool", name="padding_mask"),
    }


def _position_embedding(arch):
    kind = arch["position_embedding"]
    if kind == "learned":
        std = arch.get("position_init_std")
        return LearnedPositionEmbedding(
            arch["sequence_length"], name="position_embedding",
            initializer=("glorot_uniform" if std is None else
                         keras.initializers.RandomNormal(stddev=std)),
        )
    if kind in ("sinusoidal", "rotary+sinusoidal"):
        return SinusoidalPositionEmbedding(
            arch["max_wavelength"], name="position_embedding"
        )
    if kind in ("rotary", "none"):
        return None
    raise ValueError(
        "`position_embedding` must be 'rotary', 'learned', 'sinusoidal', "
        f"'rotary+sinusoidal' or 'none'. Received: position_embedding="
        f"{kind!r}"
    )




def _embedding_initializer(kind, hidden_dim, fan_in):
    """`embedding_init` (`families.SHARED_KEYS`) as a Keras initializer;
    `fan_in` is the one-hot width of "lecun"."""
    if kind == "uniform":
        return "uniform"  # Keras's Embedding default, U(-0.05, 0.05)
    if kind == "normal":
        return keras.initializers.RandomNormal(stddev=1.0)
    if kind == "scaled_normal":
        return keras.initializers.RandomNormal(stddev=hidden_dim**-0.5)
    if kind == "lecun":
        # flax's lecun_normal of the Dense's (fan_in, hidden_dim) kernel
        return dense_initializers("lecun", fan_in)["kernel_initializer"]
    raise ValueError(
        "`embedding_init` must be 'uniform', 'normal', 'scaled_normal' or "
        f"'lecun'. Received: embedding_init={kind!r}"
    )


def _architecture(model, given, what):
    """The family's defaults updated by `given`; unknown keys rejected."""
    family = get_family(model)
    known = {k for k in family.keys if k not in HEAD_KEYS}
    unknown = sorted(set(given) - known - {"sequence_length"})
    if unknown:
        raise ValueError(
            f"{what} of the {model!r} family takes no {unknown}. Its keys: "
            f"{sorted(known | {'sequence_length'})}"
        )
    arch = {k: v for k, v in family.keys.items() if k not in HEAD_KEYS}
    arch.update(sequence_length=None)
    arch.update(given)
    return family, arch


def classifier_kwargs(hp):
    """The keys of a resolved row (`get_hparams`) that `build_classifier`
    takes: the family's architecture, the task's shape and the head."""
    keys = set(get_family(hp["model"]).keys) | {
        "task", "model", "vocabulary_size", "sequence_length",
        "num_classes", "towers"}
    return _at_input_length(hp, {k: hp[k] for k in keys if k in hp})


def _at_input_length(hp, kwargs):
    """`kwargs` with `sequence_length` the length of the run's inputs
    (`padded_length` where set: the weights sized by the length take
    every position the batches hold), and `padded` False for a row whose
    task has no padding (`padding_id` None: the pixel tasks)."""
    if "sequence_length" in kwargs:
        kwargs["sequence_length"] = input_length(hp)
    kwargs["padded"] = hp.get("padding_id", 0) is not None
    return kwargs


def pretrainer_kwargs(hp):
    """The keys of a resolved row that `build_pretrainer` takes."""
    keys = set(get_family(hp["model"]).keys) - set(HEAD_KEYS)
    keys |= {"task", "model", "vocabulary_size", "sequence_length",
             "pretrain_loss"}
    return _at_input_length(hp, {k: hp[k] for k in keys if k in hp})


def pixel_padding_mask(token_ids, padding_mask):
    """LRA's mask of the image tasks' attention: the real tokens whose
    grey value is not 0 (`src_padding_mask = inputs > 0`,
    google-research/long-range-arena `models/transformer/transformer.py`
    line 148, every encoder alike). Black pixels are padding there: on
    Pathfinder most of the image. The mask id of the masking techniques
    (256) counts as lit."""
    lit = keras.ops.greater(token_ids, 0)
    return keras.ops.logical_and(keras.ops.cast(padding_mask, "bool"), lit)


def build_encoder(model="transformer", *, vocabulary_size, name="encoder",
                  padded=True, **arch):
    """Encoder: token ids -> contextual vectors (batch, length, hidden_dim).

    Token embedding (initialised per `embedding_init`; for pixels with
    `input_encoder="linear"` a `PixelEncoder` of the grey value instead),
    then dropout at `embedding_dropout`, then `num_layers` blocks of the family
    (`lra_keras.models.families`), then, for pre-norm stacks with
    `final_norm`, a final norm (the blocks' `norm`, LayerNorm for the
    Transformer). Only families with a `position_embedding` key (the
    Transformer) add position embeddings; rotary attention, SSMs, MEGA and
    convolutions see order through their mixing. With `cls_token`, a
    learned token (`ClassToken`) goes before the embedded tokens, ahead of
    the positions, as LRA's encoders prepend theirs: the output is one
    position longer, the token at position 0 (`token_outputs` drops it),
    and the weights sized by the task's length (learned positions,
    Linformer's projection, the Synthesizer's table) take one more
    position, as LRA's `max_len += 1`. With `pixel_padding` (the
    Transformer families), the blocks get LRA's image-task mask
    (`pixel_padding_mask`), the class token the first pixel's; the
    pooling keeps the inputs' mask, as LRA's mean counts every position.

    Args:
        model: a key of `FAMILIES`.
        vocabulary_size: int. Rows of the token embedding.
        name: model name.
        padded: bool. Whether the task's sequences can hold padding (it
            has a `padding_id`). False (the pixel tasks, whose every
            position is real): the blocks get no mask, which is what lets
            the attention take a flash kernel (cuDNN under JAX, PyTorch's
            FLASH backend; `attention_kernels.flash_eligible`), and the
            `padding_mask` input is read by the pooling alone. Not with
            `pixel_padding`, whose mask the blocks need. Defaults to True.
        **arch: the family's architecture keys (`Family.keys`, defaults
            for the others) and `sequence_length` (the task's length, read
            by the families whose weights depend on it). Any other key is
            an error.
    """
    family, arch = _architecture(model, arch, "The encoder")
    if arch["cls_token"] and arch["sequence_length"] is not None:
        arch["sequence_length"] += 1
    # Every family accepts any length: the length-trimmed batches of
    # lra_keras.batching and exports both rely on it.
    inputs = model_inputs(None)
    # === Layers ===
    if arch["input_encoder"] == "linear":
        # The pixel tasks' ids: the grey values 0..255, then the mask id
        # (`lra_keras.tasks`), so the largest grey value is two below the
        # vocabulary size.
        embedding = PixelEncoder(
            arch["hidden_dim"], mean=arch["pixel_mean"],
            std=arch["pixel_std"], max_value=vocabulary_size - 2,
            initializer=arch["input_encoder_init"],
            mask_input=arch["pixel_mask_input"] or "embedding",
            name="token_embedding",
        )
    else:
        embedding_class = (BiasedEmbedding if arch["embedding_bias"]
                           else keras.layers.Embedding)
        embedding = embedding_class(
            vocabulary_size, arch["hidden_dim"], name="token_embedding",
            embeddings_initializer=_embedding_initializer(
                arch["embedding_init"], arch["hidden_dim"],
                arch["embedding_fan_in"] or vocabulary_size),
        )
    cls_token = ClassToken(name="cls_token") if arch["cls_token"] else None
    positions = (_position_embedding(arch)
                 if "position_embedding" in arch else None)
    blocks = [family.block(arch, i) for i in range(arch["num_layers"])]
    final_norm = None
    if arch.get("prenorm", True) and arch["final_norm"]:
        final_norm = make_norm(arch, "final_norm")
    embedding_dropout = arch["embedding_dropout"]
    if embedding_dropout is None:
        embedding_dropout = arch["dropout"]
    # === Functional Model ===
    mask = inputs["padding_mask"]
    if arch.get("pixel_padding"):
        mask = pixel_padding_mask(inputs["token_ids"], mask)
    elif not padded:
        mask = None  # every position real
    x = embedding(inputs["token_ids"])  # (batch, length, hidden_dim)
    if cls_token is not None:
        x, with_cls = cls_token(x, padding_mask=mask)  # length + 1
        # LRA gives the CLS token the first pixel's mask (transformer.py
        # lines 166-167); real otherwise.
        if arch.get("pixel_padding"):
            mask = keras.ops.concatenate([mask[:, :1], mask], axis=1)
        elif mask is not None:
            mask = with_cls
    if positions is not None:
        x = positions(x)
    x = keras.layers.Dropout(embedding_dropout, name="embedding_dropout")(x)
    for block in blocks:
        x = block(x, mask)
    if final_norm is not None:
        x = final_norm(x, mask)
    return keras.Model(inputs, x, name=name)


def token_outputs(sequence, cls_token=False):
    """The encoder's outputs at the input tokens: without the class token
    at position 0 when the encoder has one (`cls_token`)."""
    return sequence[:, 1:] if cls_token else sequence


def build_classifier(task, model="transformer", *, num_classes,
                     vocabulary_size, pooling="mean", pool_padding=False,
                     head="mlp",
                     head_hidden_dim=None, head_activation="gelu",
                     head_dropout=0.0, logits_bias=True,
                     binary_logit=False, pair_features="nli", towers=1,
                     token_head=False, head_dense_init=None, padded=True,
                     **arch):
    """Sequence classifier: encoder -> padding-aware pooling -> head.

    With `towers=2` (retrieval) both sequences of a pair go through the
    same encoder and pooling, giving `u` and `v`, and the head sees
    `[u, v, u * v, u - v]` (`pair_features="nli"`, LRA appendix A.1.3,
    eq. 1) or `[u, v]` (`"concat"`).

    Args:
        task: task name, used to name the model.
        model: encoder family.
        num_classes: int. Number of classes: of output logits, but one
            with `binary_logit`.
        vocabulary_size: int. Rows of the token embedding (and outputs of
            the token head).
        pooling: `SequencePooling` mode. With the encoder's `cls_token`,
            `"first"` reads the class token (the other modes count it as
            a real position).
        pool_padding: bool. The pooling counts the padded positions as
            real ones (LRA's `jnp.mean(encoded, axis=1)`, which sees no
            mask); it then depends on how much padding a batch carries.
            Defaults to False.
        head: `"mlp"` (`Dense(head_hidden_dim, head_activation)` then the
            logits), `"mlp2"` (two hidden layers, `head_hidden_dim` then
            half of it, each with `head_activation`: LRA's
            `classifier_head_dual`, `common_layers.py` lines 237-241) or
            `"linear"` (the logits layer alone).
        head_hidden_dim: int or None. Width of the MLP head's (first)
            hidden layer; None: the encoder's width.
        head_activation: activation of the MLP head's hidden layers.
        head_dense_init: `"keras"`, `"torch"`, `"lecun"`
            (`layers.dense_init`) or None (the blocks' `dense_init`): how
            the head's hidden and logits layers start (LRA's flax head:
            `"lecun"`). Defaults to None.
        head_dropout: float. Dropout on the MLP head's hidden layers,
            before its activation (the MEGA code's `act(dropout(Linear(x)))`).
            Defaults to 0.
        logits_bias: bool. Whether the logits layer has a bias. Defaults to
            True.
        binary_logit: bool. With `num_classes=2`, one logit (the log-odds
            of class 1, for a sigmoid cross-entropy: the YCTFS code's
            binary tasks) instead of two; `classification_loss` gives the
            loss and accuracy that read it. Defaults to False.
        pair_features: `"nli"` or `"concat"` (retrieval only).
        towers: 1 or 2. Number of sequences per example.
        token_head: bool. Also return `token_logits`, a linear head on the
            encoder's per-token outputs predicting every token's id (the
            masked-token loss of the multitask technique). The classifier
            alone is `keras.Model(model.input, model.output["logits"])`,
            which shares every layer. Defaults to False.
        padded: bool. Whether the task's sequences can hold padding
            (`build_encoder`); False: the encoder's blocks get no mask.
            Defaults to True.
        **arch: the family's architecture keys and `sequence_length`
            (see `build_encoder`; any other key is an error).
            `classifier_kwargs(hp)` picks all of these from a resolved
            hyperparameter row.

    Returns:
        A `keras.Model` mapping `{"token_ids", "padding_mask"}` to
        `logits` (batch, num_classes), or (batch, 1) with `binary_logit`;
        with `token_head`, to a dict of
        `logits` and `token_logits` (batch, [towers,] length,
        vocabulary_size).
    """
    if towers not in (1, 2):
        raise ValueError(f"`towers` must be 1 or 2. Received: towers={towers}")
    if head not in HEADS or pair_features not in ("nli", "concat"):
        raise ValueError(
            f"`head` must be one of {HEADS} and `pair_features` 'nli' or "
            f"'concat'. Received: head={head!r}, "
            f"pair_features={pair_features!r}"
        )
    if binary_logit and num_classes != 2:
        raise ValueError(
            "`binary_logit=True` gives the log-odds of a two-class task; "
            f"this task has {num_classes} classes. Received: "
            f"binary_logit=True, num_classes={num_classes}"
        )
    encoder = build_encoder(model, vocabulary_size=vocabulary_size,
                            padded=padded, **arch)
    cls_token = arch.get("cls_token", False)
    hidden_dim = encoder.output.shape[-1]
    inputs = model_inputs(encoder.input["token_ids"].shape[1], towers)
    # === Layers ===
    pool = SequencePooling(pooling, name="pooling")
    dense_init = arch.get("dense_init", "keras")
    head_init = head_dense_init or dense_init
    head_inputs = hidden_dim * (1 if towers == 1 else
                                4 if pair_features == "nli" else 2)
    head_layers = []
    widths = {"linear": [], "mlp": [head_hidden_dim or hidden_dim],
              "mlp2": [head_hidden_dim or hidden_dim,
                       (head_hidden_dim or hidden_dim) // 2]}[head]
    for i, width in enumerate(widths):
        suffix = "" if i == 0 else f"_{i + 1}"
        head_layers.append(Dense(
            width,
            activation=None if head_dropout else head_activation,
            name=f"head_hidden{suffix}",
            **dense_initializers(head_init, head_inputs),
        ))
        if head_dropout:
            head_layers += [
                keras.layers.Dropout(head_dropout,
                                     name=f"head_dropout{suffix}"),
                keras.layers.Activation(head_activation,
                                        name=f"head_activation{suffix}"),
            ]
        head_inputs = width
    # Output layers compute in float32 under a mixed precision policy
    # (`dtype_policy`), as Keras's mixed precision guide advises: the
    # logits and the softmax of the loss keep float32's range.
    logits_init = dense_initializers(head_init, head_inputs)
    if not logits_bias:
        logits_init.pop("bias_initializer", None)
    head_layers.append(Dense(
        1 if binary_logit else num_classes, name="logits", dtype="float32",
        use_bias=logits_bias, **logits_init))
    tokens_head = (
        Dense(vocabulary_size, name="token_logits", dtype="float32",
              **dense_initializers(dense_init, hidden_dim))
        if token_head else None
    )
    # === Functional Model ===

    def encode(token_ids, mask):  # (batch, length) -> (batch, hidden_dim)
        x = encoder({"token_ids": token_ids, "padding_mask": mask})
        if cls_token:  # the class token, real, at position 0
            mask = with_class_position(mask)
        return token_outputs(x, cls_token), pool(
            x, padding_mask=None if pool_padding else mask)

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
        features = [u, v, u * v, u - v] if pair_features == "nli" else [u, v]
        x = keras.layers.Concatenate(name="pair_features")(
            features
        )  # (batch, 4 or 2 * hidden_dim)
        token_logits = None
        if token_head:
            first, second = keras.ops.split(tokens_head(sequence), 2, axis=0)
            token_logits = keras.ops.stack([first, second], axis=1)
    for layer in head_layers:
        x = layer(x)
    logits = x
    outputs = logits
    if token_head:
        outputs = {"logits": logits, "token_logits": token_logits}
    return keras.Model(inputs, outputs, name=f"{task}_{model}")


def build_pretrainer(task, model="transformer", *, vocabulary_size,
                     pretrain_loss="ce", padded=True, **arch):
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
        vocabulary_size: int. Rows of the token embedding (and outputs of
            the CE head).
        pretrain_loss: `"ce"` or `"l1"`.
        padded: bool. As for `build_encoder`. Defaults to True.
        **arch: as for `build_encoder`; `pretrainer_kwargs(hp)` picks
            them from a resolved hyperparameter row.

    Returns:
        A `keras.Model` from `{"token_ids", "padding_mask"}` (batch,
        length) to the head's output.
    """
    if pretrain_loss not in ("ce", "l1"):
        raise ValueError(
            "`pretrain_loss` must be 'ce' or 'l1'. "
            f"Received: pretrain_loss={pretrain_loss!r}"
        )
    encoder = build_encoder(model, vocabulary_size=vocabulary_size,
                            padded=padded, **arch)
    inputs = model_inputs(encoder.input["token_ids"].shape[1])
    initializers = dense_initializers(arch.get("dense_init", "keras"),
                                      encoder.output.shape[-1])
    if pretrain_loss == "ce":
        head = Dense(vocabulary_size, name="token_logits",
                     dtype="float32", **initializers)
    else:
        head = Dense(1, name="pixel_values", dtype="float32",
                     **initializers)
    outputs = head(token_outputs(encoder(inputs), arch.get("cls_token")))
    return keras.Model(inputs, outputs, name=f"{task}_{model}_pretrainer")
