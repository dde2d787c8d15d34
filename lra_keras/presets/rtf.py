"""RTF: its authors' LRA configurations, one row per task.

The RTF authors train on LRA in a copy of the state-spaces/s4 code base
(ruke1ire/RTF at 1d9e1e5, `experiments/state-spaces/`), the RTF layer as
the S4 block's `custom_layer` (`src/models/sequence/modules/
s4block.py` lines 103-105). Each row takes its cells from the task's
config `configs/experiment/lra/rtf-<task>.yaml` (ListOps `rtf-listops`,
Text `rtf-imdb`, Retrieval `rtf-aan`, Image `rtf-cifar`, Pathfinder
`rtf-pathfinder`, Path-X `rtf-pathx`; the paths below are under
`experiments/state-spaces/`), over `configs/model/rtf.yaml` and
`configs/model/layer/rtf.yaml`, and its data and block conventions from
this library's S4D row of the task, which reads the same code base
(`presets.s4`: end token, embeddings, heads, BatchNorm, pixel encoders).
Where each cell comes from:

- From the task's file: `model.{n_layers, d_model, prenorm, norm,
  dropout}`; `model.layer.{state_size, num_a, trunc_len}` ->
  `state_dim`, `num_denominators` (None: one per channel),
  `truncation` (None: `${oc.select:dataset.__l_max,null}`, the task's
  length); `loader.batch_size`; `optimizer.{lr, weight_decay}`;
  `trainer.max_epochs`; `scheduler.{num_warmup_steps,
  num_training_steps}` of `cosine_warmup` -> `warmup_steps`,
  `schedule_steps`; `decoder.mode: pool` (ListOps, IMDB, AAN,
  Pathfinder; the CIFAR pipeline's default, `configs/pipeline/
  cifar.yaml`, for CIFAR and Path-X) -> mean pooling.
- `bidirectional: true` (every file) -> `causal=False`; `activation:
  gelu` and the block's `final_act: glu` (`configs/model/layer/rtf.yaml`)
  -> GELU then the GLU projection; `tie_dropout: true`
  (`configs/model/rtf.yaml`) -> the residual dropout tied along the
  sequence.
- The layer's dropout: `S4Block`'s own `dropout` argument, which the
  layer config sets (`dropout: 0.0` in `configs/model/layer/rtf.yaml`;
  `model.layer.dropout` in the IMDB, AAN, CIFAR, Pathfinder and Path-X
  files): `layer_dropout`. The backbone's `dropout` fills it only when it
  is None (`src/models/sequence/backbones/model.py` lines 69-71), so on
  Path-X the residual drops at 0.1 and the layer at 0.0. The layer config
  passes no `tie_dropout`, so `S4Block` draws its mask per element
  (`s4block.py` line 118, `nn.Dropout`): `tie_layer_dropout=False`.
- The layer's rate and decay: `rtf_wrapper.py` lines 25-26 register `ab`
  and `h_0` with `model.layer.{lr, wd}` (null in `configs/model/layer/
  rtf.yaml`); `register` puts a null rate or decay in no group of its own
  (`src/models/sequence/base.py` lines 51-61), so the parameter trains in
  a group with the optimizer's rate and weight decay (`train.py` lines
  482-493). ListOps and Pathfinder set neither: the layer trains at the
  global rate with the global decay (`ssm_learning_rate=None`,
  `weight_decay_on="all"`). IMDB (0.001, 0), AAN (1e-5, 0) and Path-X
  (0.001, 0) set a rate and no decay: `ssm_learning_rate`,
  `weight_decay_on="all_but_dynamics"`. CIFAR sets 0.005 and 0.05, the
  optimizer's decay: `ssm_learning_rate=0.005`, `weight_decay_on="all"`
  (decay scaled by the group's rate in both codes). Every other
  parameter, norms, biases and embeddings included, decays (no
  `optimizer_param_grouping` in `configs/config.yaml`), as in the S4
  rows.
- Pixel inputs: `configs/dataset/pathfinder.yaml` line 7 (`center:
  False`, "embed to [0, 1] instead of [-1, 1]") overrides the dataset's
  default (`src/dataloaders/lra.py` lines 434 and 457; `base.py` line
  262, `init_args.update(dataset_cfg)`): Pathfinder and Path-X feed the
  grey value in [0, 1] (`pixel_mean=0`, `pixel_std=1`), as the S4 rows; CIFAR
  the grayscale normalisation of `src/dataloaders/basic.py` line 116.

The text tasks' end token comes with the code base: its ListOps, IMDB
and AAN loaders append `<eos>` (`append_eos=True`, as `presets.s4`).
PathX-256 (no RTF run) takes the Path-X cells and says "derived".
"""

from lra_keras.presets.s4 import unmasked_blocks


def cites(config, lines=""):
    return ("ruke1ire/RTF 1d9e1e5 experiments/state-spaces/configs/"
            f"experiment/lra/{config}{lines} over configs/model/rtf.yaml and "
            "configs/model/layer/rtf.yaml (Parnichkun et al. 2024, RTF)")


# The code base's conventions of every row (`presets.s4`): PyTorch's
# Linear and N(0, 1) embeddings, BatchNorm with the unbiased running
# variance, no input dropout, the RTF layer bidirectional and GLU-ended.
_COMMON = dict(
    dense_init="torch", output_activation="glu", schedule="cosine",
    batch_norm_unbiased=True, tie_dropout=True, tie_layer_dropout=False,
    embedding_init="normal", embedding_dropout=0.0, pooling="mean",
)
_PIXELS = dict(input_encoder="linear", input_encoder_init="torch")
# Path-X's cells (rtf-pathx.yaml), also PathX-256's
_PATHX = dict(
    _COMMON, **_PIXELS, pixel_mean=0.0, pixel_std=1.0,
    hidden_dim=256, num_layers=6, prenorm=True, norm="batch",
    dropout=0.1, layer_dropout=0.0, state_dim=2048, num_denominators=None,
    truncation=None, learning_rate=0.001, ssm_learning_rate=0.001,
    weight_decay=0.025, weight_decay_on="all_but_dynamics", batch_size=16,
    epochs=50, warmup_steps=50000, schedule_steps=500000,
)

PAPER = {
    ("listops", "rtf"): dict(
        _COMMON,
        append_eos=True,  # <eos> ends each sequence (see above)
        sequence_length=2000, hidden_dim=256, num_layers=6, prenorm=False,
        norm="batch", dropout=0.0, layer_dropout=0.0, state_dim=4,
        num_denominators=1, truncation=2048, learning_rate=0.002,
        ssm_learning_rate=None, weight_decay=0.07, weight_decay_on="all",
        batch_size=32, epochs=40, warmup_steps=12000, schedule_steps=120000,
        head="linear", source=cites("rtf-listops.yaml", " lines 7-35"),
    ),
    ("text", "rtf"): dict(
        _COMMON,
        append_eos=True,  # <eos> ends each sequence (see above)
        hidden_dim=256, num_layers=6, prenorm=True, norm="batch",
        dropout=0.1, layer_dropout=0.1, state_dim=4, num_denominators=1,
        truncation=4096, learning_rate=0.005, ssm_learning_rate=0.001,
        weight_decay=0.05, weight_decay_on="all_but_dynamics",
        batch_size=16, epochs=32, warmup_steps=5000, schedule_steps=50000,
        head="linear", source=cites("rtf-imdb.yaml", " lines 7-42"),
    ),
    ("retrieval", "rtf"): dict(
        _COMMON,
        append_eos=True,  # <eos> ends each sequence (see above)
        hidden_dim=256, num_layers=6, prenorm=True, norm="batch",
        dropout=0.0, layer_dropout=0.0, state_dim=4, num_denominators=1,
        truncation=4000, learning_rate=0.002, ssm_learning_rate=1e-5,
        weight_decay=0.0, weight_decay_on="all_but_dynamics",
        batch_size=64, epochs=20, warmup_steps=5704, schedule_steps=57040,
        # the AAN pipeline's decoder: `retrieval`, nli, GELU
        # (configs/pipeline/aan.yaml), as the S4D row
        head="mlp", head_activation="gelu", pair_features="nli",
        source=cites("rtf-aan.yaml", " lines 7-38"),
    ),
    ("image", "rtf"): dict(
        _COMMON, **_PIXELS,
        pixel_mean=0.4807843137254902, pixel_std=0.23921568627450981,
        hidden_dim=512, num_layers=6, prenorm=False, norm="batch",
        dropout=0.1, layer_dropout=0.1, state_dim=64, num_denominators=1,
        truncation=None, learning_rate=0.006, ssm_learning_rate=0.005,
        weight_decay=0.05, weight_decay_on="all", batch_size=50,
        epochs=200, warmup_steps=18000, schedule_steps=180000,
        head="linear", source=cites("rtf-cifar.yaml", " lines 7-38"),
    ),
    ("pathfinder", "rtf"): dict(
        _COMMON, **_PIXELS, pixel_mean=0.0, pixel_std=1.0,
        hidden_dim=256, num_layers=6, prenorm=True, norm="batch",
        dropout=0.1, layer_dropout=0.1, state_dim=64, num_denominators=None,
        truncation=None, learning_rate=0.002, ssm_learning_rate=None,
        weight_decay=0.05, weight_decay_on="all", batch_size=64,
        epochs=200, warmup_steps=50000, schedule_steps=500000,
        head="linear", source=cites("rtf-pathfinder.yaml", " lines 7-35"),
    ),
    ("pathx", "rtf"): dict(
        _PATHX, head="linear",
        source=cites("rtf-pathx.yaml", " lines 7-34"),
    ),
    ("pathx256", "rtf"): dict(
        _PATHX, head="linear",
        source=("derived: the Path-X row's cells (" + cites("rtf-pathx.yaml")
                + "); the RTF authors ran no PathX-256"),
    ),
}

# The S4 code base's BatchNorm, which sees no padding mask (see
# `presets.s4`).
unmasked_blocks(PAPER)
