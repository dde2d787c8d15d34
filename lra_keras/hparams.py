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

MODELS = ("transformer", "s4d", "s4", "dlr", "s5", "mega", "gmlp",
          "conv")

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

# Architecture keys per family, with their defaults. `causal=True` makes
# every family causal (for causal self-pretraining); SSM layers are
# otherwise bidirectional. `prenorm` places the LayerNorm before the mixer
# (else after the residual sum).
_SSM_KEYS = dict(
    hidden_dim=128,
    num_layers=4,
    state_dim=64,
    init="legs",
    dt_min=0.001,
    dt_max=0.1,
    output_activation="glu",
    dropout=0.0,
    prenorm=True,
    pooling="mean",
    causal=False,
)

MODEL_KEYS = {
    "transformer": dict(
        hidden_dim=128,
        num_layers=4,
        num_heads=4,
        intermediate_dim=256,
        dropout=0.0,
        activation="relu",
        # "rotary" | "learned" | "sinusoidal" | "none" (Table 4 ablation);
        # the sinusoidal base is max_wavelength, as the rotary one.
        position_embedding="rotary",
        max_wavelength=10000,
        rotary_disable_half=False,
        pooling="mean",
        attention_implementation="auto",
        causal=False,
    ),
    "s4d": dict(_SSM_KEYS),
    "s4": dict(_SSM_KEYS),
    "dlr": dict(_SSM_KEYS, state_dim=1024, init="structured", dt_min=1e-4),
    "s5": {
        k: v
        for k, v in dict(
            _SSM_KEYS, state_dim=16, blocks=8, output_activation="half_glu"
        ).items()
        if k != "init"  # S5 always starts from HiPPO-N
    },
    "mega": dict(
        hidden_dim=128,
        num_layers=4,
        zdim=64,
        intermediate_dim=256,  # value width (MEGA's "hidden dim")
        ffn_intermediate_dim=256,
        ndim=16,  # EMA dimensions per channel
        attention_activation="softmax",
        chunk_size=None,  # None: full attention
        max_positions=None,  # None: the task's sequence_length
        dropout=0.0,
        attention_dropout=0.0,
        prenorm=False,
        pooling="mean",
        causal=False,
    ),
    "gmlp": dict(
        hidden_dim=128,
        num_layers=6,
        intermediate_dim=256,  # Table 6 "H"
        num_kernel_channels=2,  # Table 6 "Independent channels"
        kernel_size=None,  # None: the full sequence_length
        activation="gelu",
        dropout=0.0,
        prenorm=True,
        pooling="mean",
        causal=False,
    ),
    "conv": dict(
        hidden_dim=128,
        num_layers=6,
        intermediate_dim=256,  # Table 7 "H"
        kernel_size=31,
        groups=1,
        activation="relu",
        dropout=0.0,
        prenorm=True,
        pooling="mean",
        causal=False,
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

# Gu et al. 2022a (S4), the authors' LRA ListOps configuration
# (state-spaces/s4 configs/experiment/lra/s4-lra-listops.yaml), which "Never
# Train from Scratch" C.1.2 follows. Deviation: LayerNorm instead of
# BatchNorm (every family here uses LayerNorm, as that paper does for DLR).
# The paper's SSM parameters train at lr 0.001 without weight decay; that
# split arrives with the training-techniques work.
_S4_LISTOPS = dict(
    sequence_length=2000,
    hidden_dim=128,
    num_layers=8,
    state_dim=64,
    dt_min=0.001,
    dt_max=0.1,
    output_activation="glu",
    dropout=0.0,
    prenorm=False,
    pooling="mean",
    learning_rate=0.01,
    batch_size=50,
    weight_decay=0.05,
    epochs=40,
    schedule="cosine",
)
HPARAMS[("listops", "s4")] = dict(
    _S4_LISTOPS,
    init="legs",
    source="S4 LRA ListOps config (Gu et al. 2022a; Never Train from "
    "Scratch C.1.2), LayerNorm for BatchNorm",
)
HPARAMS[("listops", "s4d")] = dict(
    _S4_LISTOPS,
    init="legs",
    source="S4 LRA ListOps config with the diagonal (S4D-LegS) kernel "
    "(Gu et al. 2022, S4D), LayerNorm for BatchNorm",
)
# "Never Train from Scratch" C.1.3: S4's size, layers and weight decay,
# LayerNorm, state size 1024; Table 5 row "DLR", ListOps: lr 5e-4, batch 16.
HPARAMS[("listops", "dlr")] = dict(
    _S4_LISTOPS,
    state_dim=1024,
    init="structured",
    dt_min=1e-4,
    dt_max=0.1,
    learning_rate=5e-4,
    batch_size=16,
    source="Never Train from Scratch, C.1.3 and Table 5 (DLR, ListOps)",
)
# Smith et al. 2023 (S5), the authors' ListOps run
# (lindermanlab/S5 bin/run_experiments/run_lra_listops.sh): 8 layers of
# width 128, P=16 in 8 blocks, bidirectional, lr 0.001 x 3, batch 50, wd
# 0.04, 40 epochs, half-GLU. Deviation: LayerNorm for BatchNorm.
HPARAMS[("listops", "s5")] = dict(
    sequence_length=2000,
    hidden_dim=128,
    num_layers=8,
    state_dim=16,
    blocks=8,
    dt_min=0.001,
    dt_max=0.1,
    output_activation="half_glu",
    dropout=0.0,
    prenorm=False,
    pooling="mean",
    learning_rate=0.003,
    batch_size=50,
    weight_decay=0.04,
    epochs=40,
    schedule="cosine",
    source="S5 LRA ListOps run script (Smith et al. 2023), LayerNorm for "
    "BatchNorm",
)
# Ma et al. 2023 (MEGA), the authors' ListOps run (facebookresearch/mega
# examples/mega/README.lra.md, architecture mega_lra_listop): 6 layers,
# d=80, value width 160, FFN 160, z=64, 16 EMA dims, softmax attention
# over the full length, LayerNorm after the block, dropout 0.1; Adam lr
# 0.001, batch 64, wd 0.01, clip 1.0, 3000 warmup steps, 90k updates with
# linear decay (60 epochs of 96k rows; cosine here).
HPARAMS[("listops", "mega")] = dict(
    sequence_length=2000,
    hidden_dim=80,
    num_layers=6,
    zdim=64,
    intermediate_dim=160,
    ffn_intermediate_dim=160,
    ndim=16,
    attention_activation="softmax",
    chunk_size=None,
    dropout=0.1,
    attention_dropout=0.0,
    prenorm=False,
    pooling="mean",
    learning_rate=0.001,
    batch_size=64,
    weight_decay=0.01,
    epochs=60,
    warmup_steps=3000,
    gradient_clipnorm=1.0,
    schedule="cosine",
    source="MEGA LRA ListOps run (Ma et al. 2023, README.lra.md)",
)
# "You Can Train from Scratch", Table 6, ListOps column.
HPARAMS[("listops", "gmlp")] = dict(
    sequence_length=2000,
    hidden_dim=128,
    num_layers=6,
    intermediate_dim=256,
    num_kernel_channels=4,
    dropout=0.0,
    activation="gelu",
    pooling="mean",
    learning_rate=0.001,
    batch_size=32,
    weight_decay=0.1,
    epochs=120,
    source="You Can Train from Scratch, Table 6 (ListOps, gMLP)",
)
# "You Can Train from Scratch", Table 7, ListOps column; kernel size 31, the
# best ListOps row of Table 1.
HPARAMS[("listops", "conv")] = dict(
    sequence_length=2000,
    hidden_dim=128,
    num_layers=6,
    intermediate_dim=256,
    kernel_size=31,
    groups=1,
    dropout=0.0,
    activation="relu",
    pooling="mean",
    learning_rate=0.001,
    batch_size=32,
    weight_decay=0.1,
    epochs=120,
    source="You Can Train from Scratch, Tables 7 and 1 (ListOps, K=31)",
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

# The other families at the same scale: width 64, 2 blocks, one epoch.
_QUICK_COMMON = dict(
    hidden_dim=64,
    num_layers=2,
    learning_rate=1e-3,
    weight_decay=0.01,
    batch_size=32,
    epochs=1,
    train_samples=4000,
    val_samples=500,
    warmup_steps=10,
    schedule="cosine",
    gradient_clipnorm=None,
    source="quick preset: the family's paper row scaled down, for smoke "
    "runs",
)
for _family, _arch in {
    "s4d": dict(state_dim=32, prenorm=True),
    "s4": dict(state_dim=32, prenorm=True),
    "dlr": dict(state_dim=64, prenorm=True),
    "s5": dict(state_dim=16, blocks=4, prenorm=True),
    "mega": dict(zdim=32, intermediate_dim=128, ffn_intermediate_dim=128,
                 ndim=8, dropout=0.0),
    "gmlp": dict(intermediate_dim=128, num_kernel_channels=4),
    "conv": dict(intermediate_dim=128),
}.items():
    QUICK[("listops", _family)] = dict(_QUICK_COMMON, **_arch)

# Test accuracy the papers report (percent).
EXPECTED = {
    ("listops", "transformer"): dict(
        accuracy=62.90,
        source="You Can Train from Scratch, Table 2 (Transformer with the "
        "paper's training techniques, which land in a later release)",
    ),
    ("listops", "s4"): dict(
        accuracy=59.60, source="Never Train from Scratch, Table 7 (S4)"
    ),
    ("listops", "dlr"): dict(
        accuracy=57.50, source="Never Train from Scratch, Table 7 (DLR)"
    ),
    ("listops", "s5"): dict(
        accuracy=62.15, source="You Can Train from Scratch, Table 3 (S5)"
    ),
    ("listops", "mega"): dict(
        accuracy=63.14, source="You Can Train from Scratch, Table 1 (MEGA)"
    ),
    ("listops", "gmlp"): dict(
        accuracy=62.45,
        source="You Can Train from Scratch, Table 3 (gMLP, with the "
        "paper's training techniques)",
    ),
    ("listops", "conv"): dict(
        accuracy=52.93,
        source="You Can Train from Scratch, Table 1 (kernel size 31)",
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
