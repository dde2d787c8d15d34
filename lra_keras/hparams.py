"""The papers' hyperparameter tables as data.

`TASKS` holds each task's data shape, `HPARAMS[(task, model)]` the paper's
configuration (every entry cites its table), `QUICK[(task, model)]` the
overrides of the `quick` preset (a few minutes on 2 CPU cores, to check that
everything runs and learns), and `EXPECTED` the accuracies the papers report.
`get_hparams` merges an entry, a preset and user overrides into one flat dict
and rejects unknown keys.

Name mapping from the papers: "Embed dim" -> hidden_dim, "Depth" ->
num_layers, "Num attn heads" -> num_heads, "FF size" -> intermediate_dim,
"Rotary base freq" -> max_wavelength, "Max epochs" -> epochs.
"""

import copy

TASKS = {
    "listops": dict(
        vocabulary_size=17,  # lra_keras.data.listops.VOCABULARY_SIZE
        sequence_length=2000,
        num_classes=10,
        padding_id=0,
    ),
}

MODELS = ("transformer",)

PRESETS = ("paper", "quick")

# Keys every entry may carry. Model builders read the architecture keys,
# `lra_keras.training.run` the optimisation and data keys.
COMMON_KEYS = dict(
    # data
    sequence_length=None,
    train_samples=None,  # None: the whole training split
    val_samples=None,  # None: the whole validation split
    # Batches are trimmed to their longest row, rounded up to a multiple of
    # bucket_step (lra_keras.batching); None feeds full-length batches.
    bucket_step=256,
    # optimisation
    batch_size=32,
    epochs=1,
    learning_rate=1e-3,
    weight_decay=0.0,
    warmup_steps=0,
    schedule="constant",  # "constant" | "cosine"
    gradient_clipnorm=None,
    # bookkeeping
    source="",
)

MODEL_KEYS = {
    "transformer": dict(
        hidden_dim=128,
        num_layers=4,
        num_heads=4,
        intermediate_dim=256,
        dropout=0.0,
        activation="relu",
        max_wavelength=10000,
        pooling="mean",
        attention_implementation="auto",
    ),
}

HPARAMS = {}

# "You Can Train from Scratch" (anonymous ICLR submission), Table 5, ListOps
# column. The paper trains with AdamW and a learning rate "reduced on
# training plateau and during the last 10% of the training epochs" (A.2);
# that scheduler arrives with the training-techniques work, until then the
# rate is constant.
HPARAMS[("listops", "transformer")] = dict(
    sequence_length=2000,
    hidden_dim=256,
    num_layers=6,
    num_heads=4,
    intermediate_dim=512,
    dropout=0.0,
    activation="relu",
    max_wavelength=10000,
    pooling="mean",
    learning_rate=1e-4,
    batch_size=64,
    weight_decay=0.05,
    epochs=120,
    source="You Can Train from Scratch, Table 5 (ListOps, Transformer)",
)

# Quick preset: the paper's architecture shape (pre-norm rotary, ReLU, mean
# pooling) scaled down, on a slice of the training split, sized to finish in
# about ten minutes on 2 CPU cores under every backend.
QUICK = {}
QUICK[("listops", "transformer")] = dict(
    hidden_dim=64,
    num_layers=2,
    num_heads=4,
    intermediate_dim=128,
    learning_rate=1e-3,
    weight_decay=0.01,
    batch_size=32,
    epochs=1,
    train_samples=4000,
    val_samples=500,
    warmup_steps=10,
    schedule="cosine",
    source="quick preset: scaled-down Table 5 row, for smoke runs",
)

# Test accuracy the papers report (percent).
EXPECTED = {
    ("listops", "transformer"): dict(
        accuracy=62.90,
        source="You Can Train from Scratch, Table 2 (Transformer with the "
        "paper's training techniques, which land in a later release)",
    ),
}


def get_hparams(task, model="transformer", preset="paper", **overrides):
    """Resolves the hyperparameters of one (task, model, preset).

    Args:
        task: a key of `TASKS`.
        model: a key of `MODEL_KEYS`.
        preset: `"paper"` (the cited table row) or `"quick"`.
        **overrides: any known key, applied last.

    Returns:
        A flat dict: task metadata, model architecture, optimisation and data
        keys.
    """
    if task not in TASKS:
        raise ValueError(
            f"Unknown task {task!r}. Known tasks: {sorted(TASKS)}"
        )
    if model not in MODEL_KEYS:
        raise ValueError(
            f"Unknown model {model!r}. Known models: {sorted(MODEL_KEYS)}"
        )
    if preset not in PRESETS:
        raise ValueError(
            f"Unknown preset {preset!r}. Known presets: {list(PRESETS)}"
        )
    if (task, model) not in HPARAMS:
        raise ValueError(
            f"No hyperparameters for task={task!r}, model={model!r} yet. "
            f"Available: {sorted(HPARAMS)}"
        )
    hp = dict(COMMON_KEYS)
    hp.update(MODEL_KEYS[model])
    hp.update(TASKS[task])
    hp.update(copy.deepcopy(HPARAMS[(task, model)]))
    if preset == "quick":
        hp.update(QUICK.get((task, model), {}))
    unknown = sorted(set(overrides) - set(hp))
    if unknown:
        raise ValueError(
            f"Unknown config key(s) {unknown} for task={task!r}, "
            f"model={model!r}. Known keys: {sorted(hp)}"
        )
    hp.update(overrides)
    hp.update(task=task, model=model, preset=preset)
    return hp
