"""LRU: the S5 rows' training setup with the LRU as the mixer.

Orvieto et al. 2023 ("Resurrecting Recurrent Neural Networks for Long
Sequences") train the LRU on LRA in the S5 code base's setup (their
section 5 and appendix D): the same blocks (BatchNorm, pre-norm, GELU,
GLU, residual), AdamW with a separate rate for the recurrence's weights
and cosine annealing after a warmup. Its per-task table (r_min, r_max,
max_phase, widths) is not among this project's papers (shared/papers) and
no copy of it could be read, so these rows say "derived:" and take,
cell for cell, the S5 row of the task (`presets.s5`, lindermanlab/S5
`bin/run_experiments/run_lra_*.sh`) except:

- the mixer's own cells: `state_dim` = the S5 row's P as the LRU's N
  complex states (S5 computes P/2); the ring at the layer's defaults,
  `r_min=0`, `r_max=0.99`, `max_phase=2 pi` (the paper's Path-X runs
  start the eigenvalues on a thinner ring near the unit circle with a
  small phase: set them with `--set r_min=... r_max=... max_phase=...`);
- `output_activation="glu"`: the LRU block's `out1(y) * sigmoid(out2(y))`
  (minimal-LRU `lru/model.py` lines 115-128), not S5's half GLU;
- no S5-only cells (`num_blocks`, `C_init`, `clip_eigs`, `dt_*`: the LRU
  has no discretisation step).

The recurrence's weights (nu, theta, gamma and B, the `dynamics` of the
family) train at `ssm_learning_rate` without weight decay, as minimal-LRU
(`lru/train_helpers.py` lines 91-105) and S5's "standard" groups do;
the S5 rows' `B_learning_rate` / `B_weight_decay` carry over.
"""

import math

from lra_keras.presets.s4 import unmasked_blocks


def derived(task):
    return (
        f"derived: the {task} S5 row (presets.s5) with the LRU's cells; "
        "the LRU paper's per-task ring is not among the project's papers"
    )


PAPER = {
    ("listops", "lru"): dict(
        append_eos=True,  # <eos> ends each sequence, as the S5 row
        dense_init="lecun", sequence_length=2000,
        padded_length=2048,  # the S5 row's batches of 2048 positions
        hidden_dim=128, num_layers=8,
        state_dim=16, r_min=0.0, r_max=0.99, max_phase=2 * math.pi,
        recurrence="chunked", output_activation="glu", dropout=0.0,
        prenorm=True, pooling="mean", learning_rate=0.003,
        ssm_learning_rate=0.001, batch_size=50, weight_decay=0.04, epochs=40,
        warmup_steps=1920, schedule="cosine", norm="batch",
        batch_norm_momentum=0.95, tie_dropout=True, final_norm=False,
        embedding_dropout=0.0, weight_decay_on="all_but_dynamics",
        head="linear", B_learning_rate="global", B_weight_decay=True,
        schedule_style="s5",
        embedding_init="lecun", embedding_fan_in=20, embedding_bias=True,
        source=derived("listops"),
    ),
    ("text", "lru"): dict(
        append_eos=True,  # <eos> ends each sequence, as the S5 row
        dense_init="lecun", hidden_dim=256, num_layers=6, state_dim=192,
        r_min=0.0, r_max=0.99, max_phase=2 * math.pi, recurrence="chunked",
        output_activation="glu", dropout=0.1, prenorm=True, pooling="mean",
        learning_rate=0.004, ssm_learning_rate=0.001, batch_size=50,
        weight_decay=0.07, epochs=35, warmup_steps=0, schedule="cosine",
        norm="batch", batch_norm_momentum=0.95, tie_dropout=True,
        final_norm=False, embedding_dropout=0.0,
        weight_decay_on="all_but_dynamics", head="linear", schedule_style="s5",
        embedding_init="lecun", embedding_fan_in=135, embedding_bias=True,
        source=derived("text"),
    ),
    ("retrieval", "lru"): dict(
        append_eos=True,  # <eos> ends each sequence, as the S5 row
        dense_init="lecun", hidden_dim=128, num_layers=6, state_dim=256,
        r_min=0.0, r_max=0.99, max_phase=2 * math.pi, recurrence="chunked",
        output_activation="glu", dropout=0.0, prenorm=True, pooling="mean",
        learning_rate=0.002, ssm_learning_rate=0.001, batch_size=32,
        weight_decay=0.05, epochs=20, warmup_steps=4596, schedule="cosine",
        norm="batch", batch_norm_momentum=0.95, tie_dropout=True,
        final_norm=False, embedding_dropout=0.0,
        weight_decay_on="all_but_dynamics", head="mlp", head_activation="gelu",
        pair_features="nli", schedule_style="s5",
        embedding_init="lecun", embedding_fan_in=98, embedding_bias=True,
        source=derived("retrieval"),
    ),
    ("image", "lru"): dict(
        dense_init="lecun", hidden_dim=512, num_layers=6, state_dim=384,
        r_min=0.0, r_max=0.99, max_phase=2 * math.pi, recurrence="chunked",
        output_activation="glu", dropout=0.1, prenorm=True, pooling="mean",
        learning_rate=0.0045, ssm_learning_rate=0.001, batch_size=50,
        weight_decay=0.07, epochs=250, warmup_steps=900, schedule="cosine",
        norm="batch", batch_norm_momentum=0.95, tie_dropout=True,
        final_norm=False, embedding_dropout=0.0,
        weight_decay_on="all_but_dynamics", head="linear",
        input_encoder="linear", pixel_mean=0.4807843137254902,
        pixel_std=0.23921568627450981, input_encoder_init="lecun",
        B_learning_rate="global", B_weight_decay=True, schedule_style="s5",
        source=derived("image"),
    ),
    ("pathfinder", "lru"): dict(
        dense_init="lecun", hidden_dim=192, num_layers=6, state_dim=256,
        r_min=0.0, r_max=0.99, max_phase=2 * math.pi, recurrence="chunked",
        output_activation="glu", dropout=0.05, prenorm=True, pooling="mean",
        learning_rate=0.0045, ssm_learning_rate=0.0009, batch_size=64,
        weight_decay=0.03, epochs=200, warmup_steps=2500, schedule="cosine",
        norm="batch", batch_norm_momentum=0.9, tie_dropout=True,
        final_norm=False, embedding_dropout=0.0,
        weight_decay_on="all_but_dynamics", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="lecun", schedule_style="s5",
        source=derived("pathfinder"),
    ),
    ("pathx", "lru"): dict(
        dense_init="lecun", hidden_dim=128, num_layers=6, state_dim=256,
        r_min=0.0, r_max=0.99, max_phase=2 * math.pi, recurrence="chunked",
        output_activation="glu", dropout=0.0, prenorm=True, pooling="mean",
        learning_rate=0.0018, ssm_learning_rate=0.0006, batch_size=32,
        weight_decay=0.06, epochs=75, warmup_steps=5000, schedule="cosine",
        norm="batch", batch_norm_momentum=0.9, tie_dropout=True,
        final_norm=False, embedding_dropout=0.0,
        weight_decay_on="all_but_dynamics", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="lecun", B_weight_decay=True, schedule_style="s5",
        source=derived("pathx"),
    ),
    ("pathx256", "lru"): dict(
        dense_init="lecun", hidden_dim=128, num_layers=6, state_dim=256,
        r_min=0.0, r_max=0.99, max_phase=2 * math.pi, recurrence="chunked",
        output_activation="glu", dropout=0.0, prenorm=True, pooling="max",
        learning_rate=0.0018, ssm_learning_rate=0.0006, batch_size=32,
        weight_decay=0.06, epochs=75, warmup_steps=5000, schedule="cosine",
        norm="batch", batch_norm_momentum=0.9, tie_dropout=True,
        final_norm=False, embedding_dropout=0.0,
        weight_decay_on="all_but_dynamics", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="lecun", B_weight_decay=True, schedule_style="s5",
        source=derived("pathx256"),
    ),
}

# S5's blocks, which see no padding mask (see `presets.s5`): the mixer
# reads the padding, the BatchNorm counts it.
unmasked_blocks(PAPER, read_padding=True)
