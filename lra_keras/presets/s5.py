"""S5: the authors' LRA run scripts, one literal row per task.

Smith et al. 2023 (S5), lindermanlab/S5
`bin/run_experiments/run_lra_<task>.sh` over the `run_train.py` defaults:
global lr = lr_factor x ssm_lr_base (`learning_rate`), SSM lr = ssm_lr_base
(`ssm_learning_rate`), P = ssm_size_base (`state_dim`), J = blocks
(`num_blocks`), cosine annealing after a linear warmup of `warmup_end`
epochs (an epoch is int(training rows / batch) steps, S5's
`steps_per_epoch` in `s5/train.py` line 163 with `drop_last=True` in
`s5/dataloading.py` line 28: ListOps 96000, AAN 147086, CIFAR 45000,
Pathfinder and Path-X 160000 rows), prenorm True and mean pooling ("pool")
by default, bidirectional in every script. activation_fn half_glu1 (the
`run_train.py` default) is `output_activation="half_glu"` (y * sigmoid(W
y), y = gelu(x)), half_glu2 (ListOps, IMDB) is `"half_glu2"` (x *
sigmoid(W gelu(x)), `s5/layers.py` lines 76-80). Scripts per task:
run_lra_listops.sh, run_lra_imdb.sh (warmup_end 0), run_lra_aan.sh,
run_lra_cifar.sh, run_lra_pathfinder.sh, run_lra_pathx.sh. Per script:
`C_init` (lecun_normal for ListOps, IMDB and CIFAR, trunc_standard_normal
for AAN and Pathfinder, complex_normal for Path-X), `clip_eigs` (True for
CIFAR), `--batchnorm` in every script -> `norm="batch"` with flax's
BatchNorm (biased moving variance) and `--bn_momentum` (0.95, the
`run_train.py` default line 61, for ListOps, IMDB, AAN and CIFAR; 0.9 for
Pathfinder and Path-X) -> `batch_norm_momentum`; `--dt_global` (IMDB, AAN)
-> `dt_learning_rate="global"` with `dt_weight_decay=True` (log_step
then falls in the "regular" AdamW group, `s5/train_helpers.py` lines
146-150 and 163: the global rate with decay).

The model around the layer (`s5/seq_model.py`, `s5/layers.py`): no input
dropout and no final norm (seq_model.py lines 64-67:
`embedding_dropout=0.0`, `final_norm=False`); the residual dropout shared
along the sequence (layers.py lines 49-53, `broadcast_dims=[0]`:
`tie_dropout=True`); one Dense over the pooled sequence
(seq_model.py lines 143, 174: `head="linear"`); AAN's Dense -> GELU ->
Dense on [u, v, u - v, u * v] (seq_model.py lines 206-220). Optimizer
groups (`s5/train_helpers.py` lines 141-251, an optax `multi_transform`
of Adam "ssm" at ssm_lr, AdamW "regular" at lr with `weight_decay`, and
"none"): `--opt_config=standard` trains Lambda, B and log_step at the SSM
rate without decay (lines 141-166), every other parameter (C, D, norms,
biases, encoder, decoder: flax's "norm" in the SSM list names a module,
never a leaf) at the global rate with decay: `weight_decay_on=
"all_but_dynamics"`. "BandCdecay" (Path-X, lines 168-195) puts B in an
AdamW at the SSM rate with decay (the loop updates its rate with the SSM
rate, lines 60-63): `B_weight_decay=True`. "BfastandCdecay" (ListOps,
CIFAR, lines 197-222) puts B in "regular": `B_learning_rate="global"`,
`B_weight_decay=True`. optax's AdamW eps 1e-8 (the default). flax's Dense
layers start at their default, `lecun_normal` kernels and zero biases
(`out2`, layers.py line 41; the decoder, seq_model.py line 143):
`dense_init="lecun"`. The rate of each step is the loop's,
`schedule_style="s5"` (`lra_keras.optimizers.S5Schedule`): the first step
at the peak (`create_train_state` injects lr, train_helpers.py line 163,
191 or 218; the loop sets the rate only after each step, lines 355-356),
and the cosine counted from step 0 (s5/train.py lines 167-180), so that
it reaches 0 `warmup_steps` early.

The text tasks' encoder is a Dense on one-hot tokens (seq_model.py line
39, `prep_batch`'s one-hot over `in_dim`): an embedding table plus one
bias, `embedding_bias=True` (`layers.BiasedEmbedding`), its kernel flax's
lecun normal at the one-hot width, `embedding_init="lecun"` with
`embedding_fan_in` = `in_dim`: ListOps 20 (`s5/dataloading.py` line 110),
IMDB 135 (line 81, hard-coded), AAN `len(vocab)` (line 238), 98 by the
comment of `s5/dataloaders/lra.py` line 563 ("Full size 98"). The pixel
tasks' Dense on the normalised grey value is `input_encoder="linear"`
with flax's lecun normal init (`s5/dataloaders/basic.py` line 114 and
`lra.py` line 458).

The text tasks' end token: the S5 code loads ListOps, IMDB and AAN with
the S4 code's loaders (`s5/dataloaders/lra.py` lines 33, 230 and 565,
`append_eos: True`; `l_max` 4096, 2048 and 4000, lines 27, 228 and 562):
`append_eos=True` on the three rows, as in `presets.s4`.

The padding as the code treats it (below the rows): every batch is
padded to the task's length (`prep_batch`, `s5/train_helpers.py` lines
301-305: `bucket_step=None`), its BatchNorm's statistics count the padded
positions (`batch_norm_count_padding=True`), and its scans, the backward
one included, run over them as they are (`read_padding`: no layer zeroes
them first), so that a real token's output reads the padding after it, as
the reference's does. On ListOps the code's length is the S4 loader's
`l_max` 2048 (`s5/dataloaders/lra.py` line 228), longer than LRA's trees
(under 2000 tokens): the row generates and reads them at the task's
`sequence_length=2000` and pads every sequence to `padded_length=2048`,
so that each batch carries the code's 48 positions of padding more.

PathX-256 (no S5 run): the Path-X row with max pooling, as NTFS C.1.2 runs
PathX-256.
"""

from lra_keras.presets.s4 import unmasked_blocks

PAPER = {
    ("listops", "s5"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        dense_init="lecun",
        # the S4 loader's l_max (s5/dataloaders/lra.py line 228)
        sequence_length=2000, padded_length=2048,
        hidden_dim=128, num_layers=8, state_dim=16, num_blocks=8,
        dt_min=0.001, dt_max=0.1,
        # --activation_fn=half_glu2 (run_lra_listops.sh line 1)
        output_activation="half_glu2",
        dropout=0.0, prenorm=True, pooling="mean", learning_rate=0.003,
        ssm_learning_rate=0.001, batch_size=50, weight_decay=0.04, epochs=40,
        warmup_steps=1920, schedule="cosine",
        C_init="lecun_normal", clip_eigs=False, norm="batch",
        batch_norm_momentum=0.95, tie_dropout=True, final_norm=False,
        embedding_dropout=0.0, weight_decay_on="all_but_dynamics",
        head="linear",
        # --opt_config=BfastandCdecay (run_lra_listops.sh line 3): B in
        # the "regular" AdamW group (s5/train_helpers.py lines 209-213)
        B_learning_rate="global", B_weight_decay=True,
        # first step at the peak, cosine counted from step 0 (s5/train.py
        # lines 167-180; s5/train_helpers.py lines 49-65, 218, 355-356)
        schedule_style="s5",
        embedding_init="lecun", embedding_fan_in=20, embedding_bias=True,
        source="S5 LRA run script run_lra_listops.sh (Smith et al. 2023)",
    ),
    ("text", "s5"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        dense_init="lecun",
        hidden_dim=256, num_layers=6, state_dim=192, num_blocks=12,
        dt_min=0.001, dt_max=0.1,
        # --activation_fn=half_glu2 (run_lra_imdb.sh line 1)
        output_activation="half_glu2", dropout=0.1,
        prenorm=True, pooling="mean", learning_rate=0.004,
        ssm_learning_rate=0.001, batch_size=50, weight_decay=0.07, epochs=35,
        warmup_steps=0, schedule="cosine",
        C_init="lecun_normal", clip_eigs=False, norm="batch",
        batch_norm_momentum=0.95, tie_dropout=True, final_norm=False,
        embedding_dropout=0.0, weight_decay_on="all_but_dynamics",
        head="linear",
        dt_learning_rate="global",
        # --dt_global=True (run_lra_imdb.sh line 4): log_step in the
        # "regular" AdamW group (s5/train_helpers.py lines 146-150)
        dt_weight_decay=True,
        # first step at the peak, cosine counted from step 0 (s5/train.py
        # lines 167-180; s5/train_helpers.py lines 49-65, 163, 355-356)
        schedule_style="s5",
        embedding_init="lecun", embedding_fan_in=135, embedding_bias=True,
        source="S5 LRA run script run_lra_imdb.sh (Smith et al. 2023)",
    ),
    ("retrieval", "s5"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        dense_init="lecun",
        hidden_dim=128, num_layers=6, state_dim=256, num_blocks=16,
        dt_min=0.001, dt_max=0.1, output_activation="half_glu", dropout=0.0,
        prenorm=True, pooling="mean", learning_rate=0.002,
        ssm_learning_rate=0.001, batch_size=32, weight_decay=0.05, epochs=20,
        # warmup_end=1 epoch = int(147086 / 32) = 4596 steps (s5/train.py
        # lines 163 and 170; the last partial batch is dropped,
        # s5/dataloading.py line 28)
        warmup_steps=4596, schedule="cosine",
        C_init="trunc_standard_normal", clip_eigs=False, norm="batch",
        batch_norm_momentum=0.95, tie_dropout=True, final_norm=False,
        embedding_dropout=0.0, weight_decay_on="all_but_dynamics",
        head="mlp", head_activation="gelu", pair_features="nli",
        dt_learning_rate="global",
        # --dt_global=True (run_lra_aan.sh line 3): log_step in the
        # "regular" AdamW group (s5/train_helpers.py lines 146-150)
        dt_weight_decay=True,
        # first step at the peak, cosine counted from step 0 (s5/train.py
        # lines 167-180; s5/train_helpers.py lines 49-65, 163, 355-356)
        schedule_style="s5",
        embedding_init="lecun", embedding_fan_in=98, embedding_bias=True,
        source="S5 LRA run script run_lra_aan.sh (Smith et al. 2023)",
    ),
    ("image", "s5"): dict(
        dense_init="lecun",
        hidden_dim=512, num_layers=6, state_dim=384, num_blocks=3,
        dt_min=0.001, dt_max=0.1, output_activation="half_glu", dropout=0.1,
        prenorm=True, pooling="mean", learning_rate=0.0045,
        ssm_learning_rate=0.001, batch_size=50, weight_decay=0.07, epochs=250,
        warmup_steps=900, schedule="cosine",
        C_init="lecun_normal", clip_eigs=True, norm="batch",
        batch_norm_momentum=0.95, tie_dropout=True, final_norm=False,
        embedding_dropout=0.0, weight_decay_on="all_but_dynamics",
        head="linear",
        input_encoder="linear", pixel_mean=122.6 / 255, pixel_std=61.0 / 255,
        input_encoder_init="lecun",
        # --opt_config=BfastandCdecay (run_lra_cifar.sh line 3): B in
        # the "regular" AdamW group (s5/train_helpers.py lines 209-213)
        B_learning_rate="global", B_weight_decay=True,
        # first step at the peak, cosine counted from step 0 (s5/train.py
        # lines 167-180; s5/train_helpers.py lines 49-65, 218, 355-356)
        schedule_style="s5",
        source="S5 LRA run script run_lra_cifar.sh (Smith et al. 2023)",
    ),
    ("pathfinder", "s5"): dict(
        dense_init="lecun",
        hidden_dim=192, num_layers=6, state_dim=256, num_blocks=8,
        dt_min=0.001, dt_max=0.1, output_activation="half_glu", dropout=0.05,
        prenorm=True, pooling="mean", learning_rate=0.0045,
        ssm_learning_rate=9e-4, batch_size=64, weight_decay=0.03, epochs=200,
        warmup_steps=2500, schedule="cosine",
        C_init="trunc_standard_normal", clip_eigs=False, norm="batch",
        batch_norm_momentum=0.9, tie_dropout=True, final_norm=False,
        embedding_dropout=0.0, weight_decay_on="all_but_dynamics",
        head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="lecun",
        # first step at the peak, cosine counted from step 0 (s5/train.py
        # lines 167-180; s5/train_helpers.py lines 49-65, 163, 355-356)
        schedule_style="s5",
        source="S5 LRA run script run_lra_pathfinder.sh (Smith et al. 2023)",
    ),
    ("pathx", "s5"): dict(
        dense_init="lecun",
        hidden_dim=128, num_layers=6, state_dim=256, num_blocks=16,
        dt_min=1e-4, dt_max=0.1, output_activation="half_glu", dropout=0.0,
        prenorm=True, pooling="mean", learning_rate=0.0018,
        ssm_learning_rate=6e-4, batch_size=32, weight_decay=0.06, epochs=75,
        warmup_steps=5000, schedule="cosine",
        C_init="complex_normal", clip_eigs=False, norm="batch",
        batch_norm_momentum=0.9, tie_dropout=True, final_norm=False,
        embedding_dropout=0.0, weight_decay_on="all_but_dynamics",
        head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="lecun",
        # --opt_config=BandCdecay (run_lra_pathx.sh line 4): B in an
        # AdamW at the SSM rate with decay (s5/train_helpers.py lines
        # 181-189, 60-63)
        B_weight_decay=True,
        # first step at the peak, cosine counted from step 0 (s5/train.py
        # lines 167-180; s5/train_helpers.py lines 49-65, 191, 355-356)
        schedule_style="s5",
        source="S5 LRA run script run_lra_pathx.sh (Smith et al. 2023)",
    ),
    ("pathx256", "s5"): dict(
        dense_init="lecun",
        hidden_dim=128, num_layers=6, state_dim=256, num_blocks=16,
        dt_min=1e-4, dt_max=0.1, output_activation="half_glu", dropout=0.0,
        prenorm=True, pooling="max", learning_rate=0.0018,
        ssm_learning_rate=6e-4, batch_size=32, weight_decay=0.06, epochs=75,
        warmup_steps=5000, schedule="cosine",
        C_init="complex_normal", clip_eigs=False, norm="batch",
        batch_norm_momentum=0.9, tie_dropout=True, final_norm=False,
        embedding_dropout=0.0, weight_decay_on="all_but_dynamics",
        head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="lecun",
        # as the Path-X row (run_lra_pathx.sh line 4, BandCdecay)
        B_weight_decay=True,
        # first step at the peak, cosine counted from step 0 (s5/train.py
        # lines 167-180; s5/train_helpers.py lines 49-65, 191, 355-356)
        schedule_style="s5",
        source=(
            "derived: the S5 Path-X run (run_lra_pathx.sh) at 256x256 "
            "with max pooling, as Never Train from Scratch C.1.2 runs "
            "PathX-256"
        ),
    ),
}

# The code sees no padding mask in its blocks: `SequenceLayer`'s
# `nn.BatchNorm` (s5/layers.py lines 44 and 65/89) normalises over every
# position of the batch, and its `S5SSM` (`self.seq`, line 66; s5/ssm.py
# `apply_ssm`) scans the whole padded sequence in both directions; only
# the pooling reads the lengths (s5/seq_model.py `masked_meanpool`).
unmasked_blocks(PAPER, read_padding=True)
