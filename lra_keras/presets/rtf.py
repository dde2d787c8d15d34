"""RTF: the S4D rows' training setup with the RTF layer's own cells.

The RTF authors train on LRA in the state-spaces/s4 code base
(ruke1ire/RTF at 1d9e1e5, `experiments/state-spaces/configs/experiment/
lra/rtf-*.yaml`, the RTF layer as the S4 block's `custom_layer`). These
rows take, for each task, this library's S4D row of the same code base
(`presets.s4`) and the RTF layer's cells of the task's RTF config:

- `state_dim` = `state_size` (ListOps, IMDB, AAN: 4; CIFAR, Pathfinder:
  64; Path-X: 2048);
- `num_denominators` = `num_a` (1 for ListOps, IMDB, AAN and CIFAR: one
  denominator shared by every channel; null, one per channel, for
  Pathfinder and Path-X);
- `truncation` = `trunc_len` (ListOps 2048, IMDB its `l_max` 4096, AAN
  4000; the others the dataset's length, here `None`: the task's
  `sequence_length`).

The text tasks' end token comes with the code base: its ListOps, IMDB
and AAN loaders append `<eos>` (`append_eos=True`, as `presets.s4`).

They say "derived": the RTF configs also change the training and model
cells (ListOps: 6 layers of width 256, lr 0.002, weight decay 0.07,
batch 32, 12,000 warmup steps; the layer's own rate and decay, or none,
per task), which these rows do not take yet. PathX-256 (no RTF run) takes
the Path-X cells.
"""

from lra_keras.presets.s4 import unmasked_blocks


def derived(task, config):
    return (
        f"derived: the {task} S4D row (presets.s4) with the RTF layer's "
        f"cells of ruke1ire/RTF experiments/state-spaces/configs/experiment/"
        f"lra/{config} (state_size, num_a, trunc_len); its training cells "
        "not taken yet"
    )


PAPER = {
    ("listops", "rtf"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        dense_init="torch", sequence_length=2000, hidden_dim=128, num_layers=8,
        state_dim=4, num_denominators=1, truncation=2048,
        output_activation="glu", dropout=0.0, prenorm=False, pooling="mean",
        learning_rate=0.01, ssm_learning_rate=0.001, batch_size=50,
        weight_decay=0.05, epochs=40, warmup_steps=1000, schedule="cosine",
        norm="batch", batch_norm_unbiased=True, tie_dropout=True,
        embedding_init="normal", embedding_dropout=0.0, head="linear",
        weight_decay_on="all_but_dynamics", schedule_steps=80000,
        source=derived("listops", "rtf-listops.yaml"),
    ),
    ("text", "rtf"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        dense_init="torch", hidden_dim=256, num_layers=6, state_dim=4,
        num_denominators=1, truncation=4096, output_activation="glu",
        dropout=0.0, prenorm=True, pooling="mean", learning_rate=0.01,
        ssm_learning_rate=0.001, batch_size=16, weight_decay=0.05, epochs=32,
        warmup_steps=1000, schedule="cosine", norm="batch",
        batch_norm_unbiased=True, tie_dropout=True, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        weight_decay_on="all_but_dynamics", schedule_steps=50000,
        source=derived("text", "rtf-imdb.yaml"),
    ),
    ("retrieval", "rtf"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        dense_init="torch", hidden_dim=256, num_layers=6, state_dim=4,
        num_denominators=1, truncation=4000, output_activation="glu",
        dropout=0.0, prenorm=True, pooling="mean", learning_rate=0.01,
        ssm_learning_rate=0.001, batch_size=64, weight_decay=0.05, epochs=20,
        warmup_steps=2500, schedule="cosine", norm="batch",
        batch_norm_unbiased=True, tie_dropout=True, embedding_init="normal",
        embedding_dropout=0.0, head="mlp", head_activation="gelu",
        pair_features="nli", weight_decay_on="all_but_dynamics",
        schedule_steps=50000,
        source=derived("retrieval", "rtf-aan.yaml"),
    ),
    ("image", "rtf"): dict(
        dense_init="torch", hidden_dim=512, num_layers=6, state_dim=64,
        num_denominators=1, truncation=None, output_activation="glu",
        dropout=0.1, prenorm=False, pooling="mean", learning_rate=0.01,
        ssm_learning_rate=0.001, batch_size=50, weight_decay=0.05, epochs=200,
        warmup_steps=900, schedule="cosine", norm="layer", tie_dropout=True,
        embedding_init="normal", embedding_dropout=0.0, head="linear",
        weight_decay_on="all_but_dynamics", schedule_steps=180000,
        input_encoder="linear", pixel_mean=0.4807843137254902,
        pixel_std=0.23921568627450981, input_encoder_init="torch",
        source=derived("image", "rtf-cifar.yaml"),
    ),
    ("pathfinder", "rtf"): dict(
        dense_init="torch", hidden_dim=256, num_layers=6, state_dim=64,
        num_denominators=None, truncation=None, output_activation="glu",
        dropout=0.0, prenorm=True, pooling="last", learning_rate=0.004,
        ssm_learning_rate=0.001, batch_size=64, weight_decay=0.03, epochs=200,
        warmup_steps=2500, schedule="cosine", norm="batch",
        batch_norm_unbiased=True, tie_dropout=True, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        weight_decay_on="all_but_dynamics", schedule_steps=500000,
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch",
        source=derived("pathfinder", "rtf-pathfinder.yaml"),
    ),
    ("pathx", "rtf"): dict(
        dense_init="torch", hidden_dim=256, num_layers=6, state_dim=2048,
        num_denominators=None, truncation=None, output_activation="glu",
        dropout=0.0, prenorm=True, pooling="mean", learning_rate=0.001,
        ssm_learning_rate=0.0005, batch_size=16, weight_decay=0.05, epochs=50,
        warmup_steps=50000, schedule="cosine", norm="batch",
        batch_norm_unbiased=True, tie_dropout=True, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        weight_decay_on="all_but_dynamics", schedule_steps=500000,
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch",
        source=derived("pathx", "rtf-pathx.yaml"),
    ),
    ("pathx256", "rtf"): dict(
        dense_init="torch", hidden_dim=256, num_layers=6, state_dim=2048,
        num_denominators=None, truncation=None, output_activation="glu",
        dropout=0.0, prenorm=True, pooling="max", learning_rate=0.0001,
        ssm_learning_rate=0.0005, batch_size=16, weight_decay=0.05, epochs=50,
        warmup_steps=50000, schedule="cosine", norm="batch",
        batch_norm_unbiased=True, tie_dropout=True, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        weight_decay_on="all_but_dynamics", schedule_steps=500000,
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch",
        source=derived("pathx256", "rtf-pathx.yaml"),
    ),
}

# The S4 code base's BatchNorm, which sees no padding mask (see
# `presets.s4`).
unmasked_blocks(PAPER)
