"""MEGA: the authors' LRA commands, one literal row per task.

Ma et al. 2023 (MEGA), facebookresearch/mega `examples/mega/README.lra.md`
(one command per task, lines 26-132) and the architectures they name
(`fairseq/models/lra/model.py`, `mega_lra_<task>`: listop, imdb, aan,
cifar10, pf32, pf128): encoder layers, embed dim -> `hidden_dim`, hidden
dim -> `intermediate_dim`, FFN dim = hidden dim (base_architecture
default, model.py:359), z_dim -> `key_dim`, n_dim -> `ema_dim`, attention
activation, `--encoder-normalize-before` -> `prenorm`, dropout,
attention-dropout 0, act-dropout 0, `--sen-rep-type mp` (mean over the
real tokens, mega_lra_encoder.py:238-239) -> `pooling="mean"`. Adam
betas (0.9, 0.98) (`adam_beta_2`), eps 1e-8 added to sqrt(v) before the
bias correction as Keras adds it (fairseq/optim/adam.py:195-199, 204:
`adam_epsilon_style="keras"`), decoupled weight decay on
every parameter (fairseq/optim/adam.py:201-202, trainer.py:190-196:
`weight_decay_on="all"`), clip 1.0, linear warmup from 1e-7 then linear
decay to 0 at max-update (linear_decay_schedule.py:73-80, `schedule=
"linear"`; Path-X `--warmup-power 2`, `warmup_power`). EMA
`truncation_length` 1024 (4096 for pf128; model.py:419, 474, 517, 575,
635, 663) -> `truncation`. Token embedding N(0, D^-1/2)
(mega_lra_encoder.py:258-260, `embedding_init="scaled_normal"`); the
pixel tasks' `RealNumberEmbedding` (real_number_embedding.py:12-27) of
(pixel / 255 - mean) / std (pixel_sequence_dataset.py:44-45; mean, std
(0.48, 0.24) for CIFAR-10, README.lra.md:85, and (0.5, 0.5) for
Pathfinder and Path-X, :103, :121): `input_encoder="linear"`,
`input_encoder_init="mega"`. The
head (model.py:30-35, 53-66): Linear(in, hidden) -> dropout -> GELU ->
Linear(hidden, classes, no bias), hidden = the `classifier_out_dim` of
each architecture (`head_hidden_dim`); AAN classifies concat(u, v)
(model.py:180-194, `pair_features="concat"`). Effective batch = batch-
size x update-freq (x 8 GPUs for Path-X); epochs = max-update x batch /
training rows: ListOps 90000 x 64 / 96000 = 60; IMDB 25 x 2, 25000 x 50
/ 25000 = 50; AAN 8 x 8, 91960 x 64 / 147086 = 40; CIFAR-10 (45000 rows,
data_process.py:114) 180000 x 50 / 45000 = 200; Pathfinder (160000 rows,
data_process.py:140-147) 250000 x 128 / 160000 = 200. The commands pass
`--chunk-size ${CHUNK}` ("-1 for infinity", README.lra.md:21); the full-
attention runs are these rows (None). The architectures' own chunk sizes
(1024 for cifar10 and pf32, 128 x 128 for pf128) are the whole sequence,
full attention as well.
`head_dropout` = the run's `--dropout` and `logits_bias=False`: the
classifier's Linear is followed by the model's dropout module before its
activation, `act(dropout(Linear(x)))` (model.py:53-56, 195-196), and its
projection to the classes has no bias (model.py:62-66).
`warmup_initial_learning_rate=1e-7`: every command's `--warmup-init-lr
'1e-07'` (README.lra.md:40, 58, 76, 94, 112, 130).
`norm`: `--norm-type` (README.lra.md:34, 52, 70, 88, 106, 124) picks
`SequenceNorm` (`fairseq/modules/sequence_norm.py`) for the attention,
the FFN and the final norm of pre-norm stacks: `layernorm` ListOps ->
"layer"; `scalenorm` Text and AAN -> "scale" (`ScaleNormalization`);
`batchnorm` CIFAR-10 and Pathfinder, `syncbatchnorm` Path-X (the same
statistics gathered over the GPUs; `MaskedBatchNormalization` gathers them
over the replicas under `--distribute`) -> "batch", PyTorch's
`BatchNorm1d` (momentum 0.1 in its convention, eps 1e-5, the unbiased
moving variance: `batch_norm_unbiased=True`). The pixel tasks have no
padding, so a batch norm over the real tokens is theirs exactly.

Path-X (mega_lra_pf128): batch 2 x update-freq 8 x 8 GPUs = 128;
125000 x 128 / 160000 = 100 epochs; `--warmup-updates 25000` with
`--warmup-power 2` (README.lra.md:130; the README's first version had
${WARMUP}, commit e88625f wrote 25000).

PathX-256: no MEGA run exists. The Path-X architecture, attending in
chunks of 16384 (Path-X's whole sequence), max pooling as NTFS C.1.2.
"""

PAPER = {
    ("listops", "mega"): dict(
        sequence_length=2000, hidden_dim=80, num_layers=6,
        intermediate_dim=160, ffn_intermediate_dim=160, key_dim=64, ema_dim=16,
        attention_activation="softmax", chunk_size=None, dropout=0.1,
        attention_dropout=0.0, prenorm=False, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.01, epochs=60,
        warmup_steps=3000, schedule="linear", gradient_clipnorm=1.0,
        truncation=1024, embedding_init="scaled_normal",
        adam_beta_2=0.98, adam_epsilon_style="keras",
        weight_decay_on="all", head="mlp",
        head_hidden_dim=160, head_activation="gelu",
        head_dropout=0.1, logits_bias=False,
        warmup_initial_learning_rate=1e-7, norm="layer",
        source=(
            "MEGA LRA run (Ma et al. 2023, README.lra.md:26-42, "
            "model.py:406-424 mega_lra_listop)"
        ),
    ),
    ("text", "mega"): dict(
        hidden_dim=128, num_layers=4, intermediate_dim=256,
        ffn_intermediate_dim=256, key_dim=64, ema_dim=16,
        attention_activation="softmax", chunk_size=None, dropout=0.1,
        attention_dropout=0.0, prenorm=False, pooling="mean",
        learning_rate=0.004, batch_size=50, weight_decay=0.01, epochs=50,
        warmup_steps=10000, schedule="linear", gradient_clipnorm=1.0,
        truncation=1024, embedding_init="scaled_normal",
        adam_beta_2=0.98, adam_epsilon_style="keras",
        weight_decay_on="all", head="mlp",
        head_hidden_dim=256, head_activation="gelu",
        head_dropout=0.1, logits_bias=False,
        warmup_initial_learning_rate=1e-7, norm="scale",
        source=(
            "MEGA LRA run (Ma et al. 2023, README.lra.md:44-60, "
            "model.py:461-478 mega_lra_imdb)"
        ),
    ),
    ("retrieval", "mega"): dict(
        hidden_dim=128, num_layers=6, intermediate_dim=256,
        ffn_intermediate_dim=256, key_dim=64, ema_dim=16,
        attention_activation="softmax", chunk_size=None, dropout=0.1,
        attention_dropout=0.0, prenorm=False, pooling="mean",
        learning_rate=0.003, batch_size=64, weight_decay=0.04, epochs=40,
        warmup_steps=10000, schedule="linear", gradient_clipnorm=1.0,
        truncation=1024, embedding_init="scaled_normal",
        adam_beta_2=0.98, adam_epsilon_style="keras",
        weight_decay_on="all", head="mlp",
        head_hidden_dim=256, head_activation="gelu",
        pair_features="concat",
        head_dropout=0.1, logits_bias=False,
        warmup_initial_learning_rate=1e-7, norm="scale",
        source=(
            "MEGA LRA run (Ma et al. 2023, README.lra.md:62-78, "
            "model.py:503-520 mega_lra_aan)"
        ),
    ),
    ("image", "mega"): dict(
        hidden_dim=160, num_layers=8, intermediate_dim=320,
        ffn_intermediate_dim=320, key_dim=96, ema_dim=16,
        attention_activation="laplace", chunk_size=None, dropout=0.0,
        attention_dropout=0.0, prenorm=True, pooling="mean",
        learning_rate=0.01, batch_size=50, weight_decay=0.02, epochs=200,
        warmup_steps=9000, schedule="linear", gradient_clipnorm=1.0,
        truncation=1024, embedding_init="scaled_normal",
        adam_beta_2=0.98, adam_epsilon_style="keras",
        weight_decay_on="all", head="mlp",
        head_hidden_dim=320, head_activation="gelu",
        input_encoder="linear", pixel_mean=0.48, pixel_std=0.24,
        input_encoder_init="mega",
        head_dropout=0.0, logits_bias=False,
        warmup_initial_learning_rate=1e-7, norm="batch",
        batch_norm_unbiased=True,
        source=(
            "MEGA LRA run (Ma et al. 2023, README.lra.md:80-96, "
            "model.py:560-578 mega_lra_cifar10)"
        ),
    ),
    ("pathfinder", "mega"): dict(
        hidden_dim=128, num_layers=6, intermediate_dim=256,
        ffn_intermediate_dim=256, key_dim=64, ema_dim=16,
        attention_activation="laplace", chunk_size=None, dropout=0.0,
        attention_dropout=0.0, prenorm=True, pooling="mean",
        learning_rate=0.01, batch_size=128, weight_decay=0.01, epochs=200,
        warmup_steps=50000, schedule="linear", gradient_clipnorm=1.0,
        truncation=1024, embedding_init="scaled_normal",
        adam_beta_2=0.98, adam_epsilon_style="keras",
        weight_decay_on="all", head="mlp",
        head_hidden_dim=256, head_activation="gelu",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="mega",
        head_dropout=0.0, logits_bias=False,
        warmup_initial_learning_rate=1e-7, norm="batch",
        batch_norm_unbiased=True,
        source=(
            "MEGA LRA run (Ma et al. 2023, README.lra.md:98-114, "
            "model.py:620-638 mega_lra_pf32)"
        ),
    ),
    ("pathx", "mega"): dict(
        hidden_dim=64, num_layers=4, intermediate_dim=128,
        ffn_intermediate_dim=128, key_dim=32, ema_dim=16,
        attention_activation="laplace", chunk_size=None, dropout=0.0,
        attention_dropout=0.0, prenorm=True, pooling="mean",
        learning_rate=0.01, batch_size=128, weight_decay=0.01, epochs=100,
        warmup_steps=25000, schedule="linear", gradient_clipnorm=1.0,
        truncation=4096, embedding_init="scaled_normal",
        adam_beta_2=0.98, adam_epsilon_style="keras",
        weight_decay_on="all", head="mlp",
        head_hidden_dim=128, head_activation="gelu",
        warmup_power=2.0,
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="mega",
        head_dropout=0.0, logits_bias=False,
        warmup_initial_learning_rate=1e-7, norm="batch",
        batch_norm_unbiased=True,
        source=(
            "MEGA LRA run (Ma et al. 2023, README.lra.md:116-132, "
            "model.py:648-666 mega_lra_pf128)"
        ),
    ),
    ("pathx256", "mega"): dict(
        hidden_dim=64, num_layers=4, intermediate_dim=128,
        ffn_intermediate_dim=128, key_dim=32, ema_dim=16,
        attention_activation="laplace", chunk_size=16384, dropout=0.0,
        attention_dropout=0.0, prenorm=True, pooling="max", learning_rate=0.01,
        batch_size=128, weight_decay=0.01, epochs=100, warmup_steps=25000,
        schedule="linear", gradient_clipnorm=1.0,
        truncation=4096, embedding_init="scaled_normal",
        adam_beta_2=0.98, adam_epsilon_style="keras",
        weight_decay_on="all", head="mlp",
        head_hidden_dim=128, head_activation="gelu",
        warmup_power=2.0,
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="mega",
        head_dropout=0.0, logits_bias=False,
        warmup_initial_learning_rate=1e-7, norm="batch",
        batch_norm_unbiased=True,
        source=(
            "derived: the MEGA Path-X run (mega_lra_pf128) at 256x256, "
            "chunks of 16384, max pooling as Never Train from Scratch "
            "C.1.2"
        ),
    ),
}
