"""Never Train from Scratch (NTFS): its Tables 4, 5 and 8 and appendix C.

Amos, Berant & Gupta, "Never Train from Scratch: Fair Comparison of
Long-Sequence Models Requires Data-Driven Priors", ICLR 2024,
https://arxiv.org/abs/2310.02980. One literal row per (task, model).

PAPER rows:
- Transformer on PathX (YCTFS has none, Table 2: "not available due to a
  lack of computational resources"): Table 4, PathX, "Transformer + Rotary
  + Masked SPT", fine-tuning values (128 features, depth 5, 4 heads, FF
  512, max pooling, lr 5e-4, batch 32, wd 0). The same row trains the
  from-scratch "Transformers + Rotary" of Table 2 (84.72). Epochs: C.1
  gives only caps (200 epochs, or 5 days on 4 GPUs for Transformers on
  PathX). NTFS splits attention at >= 16K into blocks of 4096 attending to
  themselves and their neighbours; here attention_implementation "auto"
  picks exact (chunked) full attention instead. FFN activation: not in
  Table 4, the family default (ReLU). PathX-256: Table 2 marks the
  Transformer "computationally infeasible"; C.1.2 runs PathX-256 "with the
  same configuration as PathX" and max pooling (for S4).
- DLR: C.1.3, the official DLR layer with its default parameters (state
  size 1024), "for the remaining hyper-parameters (model size, num. layers,
  weight decay) we use the same values as S4", LayerNorm, and "for all
  experiments on PathX we use Max-pooling". DLR layer defaults
  (ag1988/dlr `configs/model/layer/dlr.yaml`): dt_min 1e-4, dt_max 0.1, lr
  1e-4 for Lambda and W (C.1: SSM rates "we always use values provided by
  respective authors"). Epochs, warmup, prenorm and dropout follow the S4
  config too (not stated otherwise). The layer's postact there is null
  while the S4 LRA blocks use GLU; GLU is kept (the S4 block) - an
  assumption. Table 5 row "DLR" gives (FT-LR, FT-BSZ) per task: ListOps
  5e-4,16; Text 5e-4,16; Image 5e-4,64; PathX 5e-4,64; Retrieval and
  Pathfinder are not evaluated (x): lr 5e-4 as every DLR cell, the S4
  config's batch size. A test checks every DLR row against its S4 row.

TECHNIQUE rows ("spt"):
- Transformer: Table 4 rows "Transformer + Rotary + Masked SPT"
  (pre-norm LayerNorm, C.1; rotary without disabled halves). "(FT, PT)"
  pairs -> (learning_rate, pretrain_learning_rate) and (batch_size,
  pretrain_batch_size). Epochs: C.1 caps pretraining and fine-tuning at
  "200 epochs or 24h on a single GPU" each (5 days on 4 GPUs for PathX).
  NTFS leaves its schedules to its repository: "constant", not the YCTFS
  plateau schedule of the technique-none row. Section 2 calls Text "up to
  2048" long; the S4 config it builds on uses 4096, kept here.
- S4 and DLR: Table 5, cells "(FT-LR, FT-BSZ, PT-LR, PT-BSZ)" on top of the
  technique-none row (C.1.2/C.1.3). Max pooling on PathX (C.1.3).
  PathX-256, S4: C.1.2, "For pretraining we use learning rate 1e-3, batch
  size 8 and batch size 64 for fine tuning with the same learning rate".
  The pretraining loss is not given for SSMs (C.1: "CE or L1"); CE here.
  Three cells of Table 5 are malformed with 3 values: "S4 + Rand Init +
  SPT" Text "1e-3,16,32" and "DLR + Rand Init + SPT" Image "1e-3,64,32"
  read as (FT-LR, FT-BSZ, PT-BSZ) with PT-LR missing; they belong to the
  random-initialisation rows, which are not techniques here, so nothing
  uses them. Fine-tuning epochs: the S4 config's (C.1.2 refers to Gu et
  al. for S4's hyperparameters); pretraining epochs: the C.1 cap of 200.

SPT_LRA_SIZED: section 3.1 (Table 1, dagger rows of Table 4), Transformers
of the LRA sizes (Tay et al.) self-pretrained with a masked or a causal
objective. Data only, not a technique of `get_hparams`: apply an entry as
overrides on top of `get_hparams(task, "transformer", technique="spt")`.
Position embeddings: not rotary (section 3.2 "replace[s] the positional
embeddings with ... rotary"); the LRA code's default is sinusoidal
(google-research/long-range-arena `lra_benchmarks/models/transformer/
transformer.py`, learn_pos_emb=False). The causal models are
unidirectional (section 2). Table 4 reading notes: the Image masked LR
cell "1e-3,1e03" is read as (1e-3, 1e-3); Pathfinder and PathX list two
rows both labelled "Masked SPT (dagger)": the second is read as the
causal row, by the masked-then-causal order of every other task.

COMPUTE_TIED: Table 8 (appendix D), compute-tied SPT, the total epochs of
pretraining plus fine-tuning fixed, a share of them pretraining;
`results[share][model]` is the accuracy (percent).
"""

PAPER = {
    ("pathx", "transformer"): dict(
        hidden_dim=128, num_layers=5, num_heads=4, intermediate_dim=512,
        activation="relu", position_embedding="rotary", max_wavelength=10000,
        rotary_disable_half=False, dropout=0.0, pooling="max",
        learning_rate=5e-4, batch_size=32, weight_decay=0.0, epochs=200,
        source=(
            "Never Train from Scratch, Table 4 (PathX, Transformer + "
            "Rotary + Masked SPT, FT values) and C.1 (200-epoch cap)"
        ),
    ),
    ("pathx256", "transformer"): dict(
        hidden_dim=128, num_layers=5, num_heads=4, intermediate_dim=512,
        activation="relu", position_embedding="rotary", max_wavelength=10000,
        rotary_disable_half=False, dropout=0.0, pooling="max",
        learning_rate=5e-4, batch_size=32, weight_decay=0.0, epochs=200,
        source=(
            "derived: the PathX Transformer row (Never Train from Scratch"
            " Table 4) at 256x256, as C.1.2 does for S4"
        ),
    ),
    ("listops", "dlr"): dict(
        sequence_length=2000, hidden_dim=128, num_layers=8, state_dim=1024,
        init="structured", dt_min=1e-4, dt_max=0.1, output_activation="glu",
        dropout=0.0, prenorm=False, pooling="mean", learning_rate=5e-4,
        ssm_learning_rate=1e-4, batch_size=16, weight_decay=0.05, epochs=40,
        warmup_steps=1000, schedule="cosine",
        norm="layer", tie_dropout=True, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        dt_learning_rate="global", weight_decay_on="all_but_dynamics",
        schedule_steps=80000,
        source=(
            "Never Train from Scratch, C.1.3 and Table 5 (DLR, ListOps) "
            "on the S4 config"
        ),
    ),
    ("text", "dlr"): dict(
        hidden_dim=256, num_layers=6, state_dim=1024, init="structured",
        dt_min=1e-4, dt_max=0.1, output_activation="glu", dropout=0.0,
        prenorm=True, pooling="mean", learning_rate=5e-4,
        ssm_learning_rate=1e-4, batch_size=16, weight_decay=0.05, epochs=32,
        warmup_steps=1000, schedule="cosine",
        norm="layer", tie_dropout=True, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        dt_learning_rate="global", weight_decay_on="all_but_dynamics",
        schedule_steps=50000,
        source=(
            "Never Train from Scratch, C.1.3 and Table 5 (DLR, Text) on "
            "the S4 config"
        ),
    ),
    ("retrieval", "dlr"): dict(
        hidden_dim=256, num_layers=6, state_dim=1024, init="structured",
        dt_min=1e-4, dt_max=0.1, output_activation="glu", dropout=0.0,
        prenorm=True, pooling="mean", learning_rate=5e-4,
        ssm_learning_rate=1e-4, batch_size=64, weight_decay=0.05, epochs=20,
        warmup_steps=2500, schedule="cosine",
        norm="layer", tie_dropout=True, embedding_init="normal",
        embedding_dropout=0.0, head="mlp",
        head_activation="gelu", pair_features="nli",
        dt_learning_rate="global", weight_decay_on="all_but_dynamics",
        schedule_steps=50000,
        source=(
            "derived: Never Train from Scratch C.1.3 on the S4 retrieval "
            "config, lr 5e-4 as every DLR cell of Table 5 (no DLR run for"
            " this task)"
        ),
    ),
    ("image", "dlr"): dict(
        hidden_dim=512, num_layers=6, state_dim=1024, init="structured",
        dt_min=1e-4, dt_max=0.1, output_activation="glu", dropout=0.1,
        prenorm=False, pooling="mean", learning_rate=5e-4,
        ssm_learning_rate=1e-4, batch_size=64, weight_decay=0.05, epochs=200,
        warmup_steps=900, schedule="cosine",
        norm="layer", tie_dropout=True, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        dt_learning_rate="global", weight_decay_on="all_but_dynamics",
        schedule_steps=180000,
        input_encoder="linear", pixel_mean=122.6 / 255, pixel_std=61.0 / 255,
        input_encoder_init="torch",
        source=(
            "Never Train from Scratch, C.1.3 and Table 5 (DLR, Image) on "
            "the S4 config"
        ),
    ),
    ("pathfinder", "dlr"): dict(
        hidden_dim=256, num_layers=6, state_dim=1024, init="structured",
        dt_min=1e-4, dt_max=0.1, output_activation="glu", dropout=0.0,
        prenorm=True, pooling="last", learning_rate=5e-4,
        ssm_learning_rate=1e-4, batch_size=64, weight_decay=0.03, epochs=200,
        warmup_steps=2500, schedule="cosine",
        norm="layer", tie_dropout=True, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        dt_learning_rate="ssm", weight_decay_on="all_but_dynamics",
        schedule_steps=500000,
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch",
        source=(
            "derived: Never Train from Scratch C.1.3 on the S4 pathfinder"
            " config, lr 5e-4 as every DLR cell of Table 5 (no DLR run "
            "for this task)"
        ),
    ),
    ("pathx", "dlr"): dict(
        hidden_dim=256, num_layers=6, state_dim=1024, init="structured",
        dt_min=1e-4, dt_max=0.1, output_activation="glu", dropout=0.0,
        prenorm=True, pooling="max", learning_rate=5e-4,
        ssm_learning_rate=1e-4, batch_size=64, weight_decay=0.05, epochs=50,
        warmup_steps=50000, schedule="cosine",
        norm="layer", tie_dropout=True, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        dt_learning_rate="ssm", weight_decay_on="all_but_dynamics",
        schedule_steps=500000,
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch",
        source=(
            "Never Train from Scratch, C.1.3 and Table 5 (DLR, PathX) on "
            "the S4 config"
        ),
    ),
    ("pathx256", "dlr"): dict(
        hidden_dim=256, num_layers=6, state_dim=1024, init="structured",
        dt_min=1e-4, dt_max=0.1, output_activation="glu", dropout=0.0,
        prenorm=True, pooling="max", learning_rate=5e-4,
        ssm_learning_rate=1e-4, batch_size=64, weight_decay=0.05, epochs=50,
        warmup_steps=50000, schedule="cosine",
        norm="layer", tie_dropout=True, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        dt_learning_rate="ssm", weight_decay_on="all_but_dynamics",
        schedule_steps=500000,
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch",
        source=(
            "derived: the DLR PathX row (Never Train from Scratch C.1.3, "
            "Table 5) at 256x256, as C.1.2 does for S4"
        ),
    ),
}

TECHNIQUE = {
    ("listops", "transformer", "spt"): dict(
        hidden_dim=512, num_layers=6, num_heads=8, intermediate_dim=1024,
        position_embedding="rotary", rotary_disable_half=False, dropout=0.0,
        pooling="mean", learning_rate=1e-4, pretrain_learning_rate=0.001,
        batch_size=64, pretrain_batch_size=256, weight_decay=0.05, epochs=200,
        pretrain_epochs=200, schedule="constant", pretrain_objective="masked",
        pretrain_loss="ce",
        source=(
            "Never Train from Scratch, Table 4 (ListOps, Transformer + "
            "Rotary + Masked SPT) and C.1 (200-epoch caps)"
        ),
    ),
    ("text", "transformer", "spt"): dict(
        hidden_dim=512, num_layers=6, num_heads=8, intermediate_dim=1024,
        position_embedding="rotary", rotary_disable_half=False, dropout=0.0,
        pooling="mean", learning_rate=5e-4, pretrain_learning_rate=5e-4,
        batch_size=64, pretrain_batch_size=8, weight_decay=0.1, epochs=200,
        pretrain_epochs=200, schedule="constant", pretrain_objective="masked",
        pretrain_loss="ce",
        source=(
            "Never Train from Scratch, Table 4 (Text, Transformer + "
            "Rotary + Masked SPT) and C.1 (200-epoch caps)"
        ),
    ),
    ("retrieval", "transformer", "spt"): dict(
        hidden_dim=128, num_layers=6, num_heads=4, intermediate_dim=512,
        position_embedding="rotary", rotary_disable_half=False, dropout=0.0,
        pooling="mean", learning_rate=5e-4, pretrain_learning_rate=0.005,
        batch_size=16, pretrain_batch_size=32, weight_decay=0.0, epochs=200,
        pretrain_epochs=200, schedule="constant", pretrain_objective="masked",
        pretrain_loss="ce",
        source=(
            "Never Train from Scratch, Table 4 (Retrieval, Transformer + "
            "Rotary + Masked SPT) and C.1 (200-epoch caps)"
        ),
    ),
    ("image", "transformer", "spt"): dict(
        hidden_dim=256, num_layers=6, num_heads=4, intermediate_dim=512,
        position_embedding="rotary", rotary_disable_half=False, dropout=0.0,
        pooling="mean", learning_rate=0.001, pretrain_learning_rate=0.001,
        batch_size=64, pretrain_batch_size=32, weight_decay=0.0, epochs=200,
        pretrain_epochs=200, schedule="constant", pretrain_objective="masked",
        pretrain_loss="l1",
        source=(
            "Never Train from Scratch, Table 4 (Image, Transformer + "
            "Rotary + Masked SPT) and C.1 (200-epoch caps)"
        ),
    ),
    ("pathfinder", "transformer", "spt"): dict(
        hidden_dim=128, num_layers=6, num_heads=4, intermediate_dim=512,
        position_embedding="rotary", rotary_disable_half=False, dropout=0.0,
        pooling="mean", learning_rate=5e-4, pretrain_learning_rate=0.001,
        batch_size=64, pretrain_batch_size=32, weight_decay=0.0, epochs=200,
        pretrain_epochs=200, schedule="constant", pretrain_objective="masked",
        pretrain_loss="ce",
        source=(
            "Never Train from Scratch, Table 4 (Pathfinder, Transformer +"
            " Rotary + Masked SPT) and C.1 (200-epoch caps)"
        ),
    ),
    ("pathx", "transformer", "spt"): dict(
        hidden_dim=128, num_layers=5, num_heads=4, intermediate_dim=512,
        position_embedding="rotary", rotary_disable_half=False, dropout=0.0,
        pooling="max", learning_rate=5e-4, pretrain_learning_rate=0.001,
        batch_size=32, pretrain_batch_size=8, weight_decay=0.0, epochs=200,
        pretrain_epochs=200, schedule="constant", pretrain_objective="masked",
        pretrain_loss="ce",
        source=(
            "Never Train from Scratch, Table 4 (PathX, Transformer + "
            "Rotary + Masked SPT) and C.1 (200-epoch caps)"
        ),
    ),
    ("pathx256", "transformer", "spt"): dict(
        hidden_dim=128, num_layers=5, num_heads=4, intermediate_dim=512,
        position_embedding="rotary", rotary_disable_half=False, dropout=0.0,
        pooling="max", learning_rate=5e-4, pretrain_learning_rate=0.001,
        batch_size=32, pretrain_batch_size=8, weight_decay=0.0, epochs=200,
        pretrain_epochs=200, schedule="constant", pretrain_objective="masked",
        pretrain_loss="ce",
        source=(
            "derived: Never Train from Scratch Table 4 PathX row "
            "(Transformer + Rotary + Masked SPT) at 256x256"
        ),
    ),
    ("listops", "s4", "spt"): dict(
        learning_rate=0.001, pretrain_learning_rate=0.001, batch_size=16,
        pretrain_batch_size=128, pretrain_epochs=200,
        pretrain_objective="masked", pretrain_loss="ce",
        source="Never Train from Scratch, Table 5 (S4 + SPT, ListOps)",
    ),
    ("text", "s4", "spt"): dict(
        learning_rate=5e-4, pretrain_learning_rate=5e-4, batch_size=16,
        pretrain_batch_size=8, pretrain_epochs=200,
        pretrain_objective="masked", pretrain_loss="ce",
        source="Never Train from Scratch, Table 5 (S4 + SPT, Text)",
    ),
    ("retrieval", "s4", "spt"): dict(
        learning_rate=5e-4, pretrain_learning_rate=5e-4, batch_size=256,
        pretrain_batch_size=8, pretrain_epochs=200,
        pretrain_objective="masked", pretrain_loss="ce",
        source="Never Train from Scratch, Table 5 (S4 + SPT, Retrieval)",
    ),
    ("image", "s4", "spt"): dict(
        learning_rate=0.001, pretrain_learning_rate=0.001, batch_size=512,
        pretrain_batch_size=32, pretrain_epochs=200,
        pretrain_objective="masked", pretrain_loss="ce",
        source="Never Train from Scratch, Table 5 (S4 + SPT, Image)",
    ),
    ("pathfinder", "s4", "spt"): dict(
        learning_rate=0.001, pretrain_learning_rate=0.001, batch_size=64,
        pretrain_batch_size=8, pretrain_epochs=200,
        pretrain_objective="masked", pretrain_loss="ce",
        source="Never Train from Scratch, Table 5 (S4 + SPT, Pathfinder)",
    ),
    ("pathx", "s4", "spt"): dict(
        pooling="max", learning_rate=0.001, pretrain_learning_rate=0.001,
        batch_size=64, pretrain_batch_size=8, pretrain_epochs=200,
        pretrain_objective="masked", pretrain_loss="ce",
        source="Never Train from Scratch, Table 5 (S4 + SPT, PathX)",
    ),
    ("listops", "dlr", "spt"): dict(
        learning_rate=5e-4, pretrain_learning_rate=0.001, batch_size=16,
        pretrain_batch_size=128, pretrain_epochs=200,
        pretrain_objective="masked", pretrain_loss="ce",
        source="Never Train from Scratch, Table 5 (DLR + SPT, ListOps)",
    ),
    ("text", "dlr", "spt"): dict(
        learning_rate=0.001, pretrain_learning_rate=5e-4, batch_size=16,
        pretrain_batch_size=8, pretrain_epochs=200,
        pretrain_objective="masked", pretrain_loss="ce",
        source="Never Train from Scratch, Table 5 (DLR + SPT, Text)",
    ),
    ("image", "dlr", "spt"): dict(
        learning_rate=0.001, pretrain_learning_rate=0.001, batch_size=64,
        pretrain_batch_size=32, pretrain_epochs=200,
        pretrain_objective="masked", pretrain_loss="ce",
        source="Never Train from Scratch, Table 5 (DLR + SPT, Image)",
    ),
    ("pathx", "dlr", "spt"): dict(
        pooling="max", learning_rate=5e-4, pretrain_learning_rate=5e-4,
        batch_size=64, pretrain_batch_size=8, pretrain_epochs=200,
        pretrain_objective="masked", pretrain_loss="ce",
        source="Never Train from Scratch, Table 5 (DLR + SPT, PathX)",
    ),
    ("pathx256", "s4", "spt"): dict(
        pooling="max", learning_rate=0.001, pretrain_learning_rate=0.001,
        batch_size=64, pretrain_batch_size=8, pretrain_epochs=200,
        pretrain_objective="masked", pretrain_loss="ce",
        source="Never Train from Scratch, C.1.2 (PathX-256, S4 + SPT)",
    ),
}

SPT_LRA_SIZED = {
    ("listops", "masked"): dict(
        hidden_dim=512, num_layers=6, num_heads=8, intermediate_dim=1024,
        position_embedding="sinusoidal", rotary_disable_half=False,
        pooling="mean", causal=False, learning_rate=1e-4,
        pretrain_learning_rate=0.001, batch_size=64, pretrain_batch_size=128,
        weight_decay=0.1, pretrain_objective="masked", pretrain_loss="ce",
        source=(
            "Never Train from Scratch, Table 4 (ListOps, Transformer + "
            "Masked SPT, section 3.1)"
        ),
    ),
    ("listops", "causal"): dict(
        hidden_dim=512, num_layers=6, num_heads=8, intermediate_dim=1024,
        position_embedding="sinusoidal", rotary_disable_half=False,
        pooling="last", causal=True, learning_rate=5e-4,
        pretrain_learning_rate=5e-4, batch_size=128, pretrain_batch_size=32,
        weight_decay=0.1, pretrain_objective="causal", pretrain_loss="ce",
        source=(
            "Never Train from Scratch, Table 4 (ListOps, Transformer + "
            "Causal SPT, section 3.1)"
        ),
    ),
    ("text", "masked"): dict(
        hidden_dim=512, num_layers=6, num_heads=8, intermediate_dim=1024,
        position_embedding="sinusoidal", rotary_disable_half=False,
        pooling="mean", causal=False, learning_rate=1e-4,
        pretrain_learning_rate=5e-4, batch_size=64, pretrain_batch_size=32,
        weight_decay=0.1, pretrain_objective="masked", pretrain_loss="ce",
        source=(
            "Never Train from Scratch, Table 4 (Text, Transformer + "
            "Masked SPT, section 3.1)"
        ),
    ),
    ("text", "causal"): dict(
        hidden_dim=512, num_layers=6, num_heads=8, intermediate_dim=1024,
        position_embedding="sinusoidal", rotary_disable_half=False,
        pooling="mean", causal=True, learning_rate=1e-4,
        pretrain_learning_rate=0.001, batch_size=64, pretrain_batch_size=32,
        weight_decay=0.1, pretrain_objective="causal", pretrain_loss="ce",
        source=(
            "Never Train from Scratch, Table 4 (Text, Transformer + "
            "Causal SPT, section 3.1)"
        ),
    ),
    ("retrieval", "masked"): dict(
        hidden_dim=128, num_layers=4, num_heads=4, intermediate_dim=512,
        position_embedding="sinusoidal", rotary_disable_half=False,
        pooling="mean", causal=False, learning_rate=5e-4,
        pretrain_learning_rate=0.005, batch_size=16, pretrain_batch_size=32,
        weight_decay=0.0, pretrain_objective="masked", pretrain_loss="ce",
        source=(
            "Never Train from Scratch, Table 4 (Retrieval, Transformer + "
            "Masked SPT, section 3.1)"
        ),
    ),
    ("retrieval", "causal"): dict(
        hidden_dim=128, num_layers=4, num_heads=4, intermediate_dim=512,
        position_embedding="sinusoidal", rotary_disable_half=False,
        pooling="mean", causal=True, learning_rate=0.001,
        pretrain_learning_rate=0.005, batch_size=48, pretrain_batch_size=32,
        weight_decay=0.0, pretrain_objective="causal", pretrain_loss="ce",
        source=(
            "Never Train from Scratch, Table 4 (Retrieval, Transformer + "
            "Causal SPT, section 3.1)"
        ),
    ),
    ("image", "masked"): dict(
        hidden_dim=64, num_layers=3, num_heads=4, intermediate_dim=128,
        position_embedding="sinusoidal", rotary_disable_half=False,
        pooling="max", causal=False, learning_rate=0.001,
        pretrain_learning_rate=0.001, batch_size=16, pretrain_batch_size=32,
        weight_decay=0.0, pretrain_objective="masked", pretrain_loss="l1",
        source=(
            "Never Train from Scratch, Table 4 (Image, Transformer + "
            "Masked SPT, section 3.1)"
        ),
    ),
    ("image", "causal"): dict(
        hidden_dim=64, num_layers=3, num_heads=4, intermediate_dim=128,
        position_embedding="sinusoidal", rotary_disable_half=False,
        pooling="max", causal=True, learning_rate=0.001,
        pretrain_learning_rate=0.005, batch_size=32, pretrain_batch_size=32,
        weight_decay=0.0, pretrain_objective="causal", pretrain_loss="l1",
        source=(
            "Never Train from Scratch, Table 4 (Image, Transformer + "
            "Causal SPT, section 3.1)"
        ),
    ),
    ("pathfinder", "masked"): dict(
        hidden_dim=128, num_layers=4, num_heads=8, intermediate_dim=128,
        position_embedding="sinusoidal", rotary_disable_half=False,
        pooling="mean", causal=False, learning_rate=5e-4,
        pretrain_learning_rate=0.001, batch_size=16, pretrain_batch_size=16,
        weight_decay=0.0, pretrain_objective="masked", pretrain_loss="ce",
        source=(
            "Never Train from Scratch, Table 4 (Pathfinder, Transformer +"
            " Masked SPT, section 3.1)"
        ),
    ),
    ("pathfinder", "causal"): dict(
        hidden_dim=128, num_layers=4, num_heads=8, intermediate_dim=128,
        position_embedding="sinusoidal", rotary_disable_half=False,
        pooling="mean", causal=True, learning_rate=0.001,
        pretrain_learning_rate=0.001, batch_size=256, pretrain_batch_size=128,
        weight_decay=0.0, pretrain_objective="causal", pretrain_loss="ce",
        source=(
            "Never Train from Scratch, Table 4 (Pathfinder, Transformer +"
            " Causal SPT, section 3.1)"
        ),
    ),
    ("pathx", "masked"): dict(
        hidden_dim=128, num_layers=4, num_heads=8, intermediate_dim=128,
        position_embedding="sinusoidal", rotary_disable_half=False,
        pooling="max", causal=False, learning_rate=5e-4,
        pretrain_learning_rate=5e-4, batch_size=32, pretrain_batch_size=8,
        weight_decay=0.0, pretrain_objective="masked", pretrain_loss="ce",
        source=(
            "Never Train from Scratch, Table 4 (PathX, Transformer + "
            "Masked SPT, section 3.1)"
        ),
    ),
    ("pathx", "causal"): dict(
        hidden_dim=128, num_layers=4, num_heads=8, intermediate_dim=128,
        position_embedding="sinusoidal", rotary_disable_half=False,
        pooling="max", causal=True, learning_rate=5e-4,
        pretrain_learning_rate=0.001, batch_size=256, pretrain_batch_size=8,
        weight_decay=0.0, pretrain_objective="causal", pretrain_loss="ce",
        source=(
            "Never Train from Scratch, Table 4 (PathX, Transformer + "
            "Causal SPT, section 3.1)"
        ),
    ),
}

COMPUTE_TIED = {
    "text": dict(
        total_epochs=30,
        spt_shares=(0.0, 0.2, 0.4, 0.6),
        results={
            0.0: dict(transformer=79.08, s4=87.51),
            0.2: dict(transformer=90.20, s4=89.50),
            0.4: dict(transformer=90.56, s4=89.10),
            0.6: dict(transformer=90.65, s4=88.87),
        },
        source="Never Train from Scratch, Table 8 (Text, 30 epochs)",
    ),
    "image": dict(
        total_epochs=150,
        spt_shares=(0.0, 0.2, 0.4, 0.6),
        results={
            0.0: dict(transformer=75.04, s4=87.83),
            0.2: dict(transformer=84.45, s4=87.15),
            0.4: dict(transformer=84.95, s4=87.72),
            0.6: dict(transformer=84.32, s4=87.63),
        },
        source="Never Train from Scratch, Table 8 (Image, 150 epochs)",
    ),
}
