"""S4 and S4D: the authors' LRA configurations, one literal row per task.

Gu et al. 2022a (S4), state-spaces/s4 at commit d27bdf9 (the v4 configs the
S4 paper's final LRA table came from; later commits moved them to
`configs/experiment/lra/old/`): `configs/experiment/lra/s4-lra-<task>.yaml`,
which "Never Train from Scratch" (NTFS) C.1.2 follows ("we refer to Gu et
al. (2022a) - Appendix D.2 Table 11"). Files per task: listops
`s4-lra-listops.yaml`, text `s4-lra-imdb.yaml` (l_max 4096, char level),
retrieval `s4-lra-aan.yaml`, image `s4-lra-cifar.yaml`, pathfinder
`s4-lra-pathfinder.yaml`, pathx `s4-lra-pathx.yaml`. Where each cell comes
from:

- From the task's file: `model.{n_layers, d_model, prenorm, dropout}`;
  `model.norm` -> `norm` ("batch", "layer" for CIFAR);
  `model.layer.{d_state, dt_min, dt_max}`; `loader.batch_size`;
  `optimizer.{lr, weight_decay}`; `trainer.max_epochs`; scheduler
  `cosine_warmup` with `num_warmup_steps` (1000 when the file does not set
  it, `configs/scheduler/cosine_warmup.yaml`) and `num_training_steps` ->
  `schedule_steps` (where the cosine reaches 0: ListOps's 80000 and AAN's
  50000 lie past the last step of 40 and 20 epochs); decoder mode "pool"
  -> mean pooling (over real tokens: `use_lengths`, `configs/pipeline/
  imdb.yaml`), "last" -> the last position.
- `model.layer.lr`: the SSM rate (`ssm_learning_rate`). A dict `{dt:
  null, A: 0.001, B: 0.001}` (ListOps, IMDB, AAN, CIFAR) leaves dt
  without a rate of its own, i.e. at the global rate
  (`dt_learning_rate="global"`; `src/models/sequence/kernels/kernel.py`
  lines 80-90 and `register`, line 111); a number (Pathfinder 0.001,
  PathX 0.0005) is the rate of dt, A and B alike (`"ssm"`).
- `weight_decay_on="all_but_dynamics"`: `register(..., wd=0.0)` gives the
  SSM parameters no decay (`kernel.py` line 111); every other parameter,
  norms, biases and the embedding included, is in the optimizer's base
  group with `optimizer.weight_decay` (`train.py` lines 462-477, no
  `optimizer_param_grouping` in the LRA configs). AdamW betas (0.9,
  0.999) (`configs/optimizer/adamw.yaml`), eps 1e-8 (PyTorch's): the
  defaults of `hparams.COMMON_KEYS`.
- `dt_transform="softplus"`: `configs/model/layer/s4.yaml` line 23
  (`dt_transform: softplus`), which no task file overrides: the trained
  weight is softplus^-1(dt) (`inv_dt`,
  `src/models/sequence/kernels/ssm.py` `init_dt`, `param_transform`),
  not log dt.
- `B_clip=2.0`: the `legs` initialisation of both kernels (`mode: nplr`
  and S4D's `diag`) goes through `hippo.nplr(init, N, rank)` (`src/
  models/sequence/kernels/dplr.py` `ssm`), whose default `B_clip=2.0`
  clips the imaginary part of B (`src/models/hippo/hippo.py` lines 203
  and 274-275).
- `C_parameterization="c_tilde"` (S4 rows only): `SSMKernelDPLR` trains
  C~ = C (I - dA^L), not C (`src/models/sequence/kernels/ssm.py`
  `_setup_C`, lines 673-700, `self.C.copy_` line 698, run by `forward` at
  lines 783-784 before the kernel at length L, lines 795-870). S4D's
  `SSMKernelDiag` (lines 439-669) has no C~: its `forward` (line 560) uses
  C as it is. `kernel_length` is L = the layer's `l_max`,
  `${oc.select:dataset.__l_max,null}` (`configs/model/layer/s4.yaml` line
  31): ListOps 2048 (`configs/dataset/listops.yaml` lines 2, 8; our
  sequence_length is LRA's 2000), IMDB 4096 (`s4-lra-imdb.yaml` line 30,
  `configs/dataset/imdb.yaml` line 21), AAN 4000 (`configs/dataset/
  aan.yaml` lines 5, 10), Pathfinder 1024 and PathX 16384
  (`configs/dataset/pathfinder.yaml` line 16, `resolution**2 // pool**2`
  with resolution 32, pool 1, lines 4, 8; `configs/pipeline/pathx.yaml`
  line 7, resolution 128), PathX-256 65536 (the same formula at
  resolution 256). CIFAR sets no `__l_max` (`configs/dataset/cifar.yaml`
  line 10 is commented out): `l_max` is null, the kernel is asked for the
  input's length 1024 (`kernels/fftconv.py` line 92) and the first call
  sets L = 1024 (`ssm.py` lines 793-794).
- `dropout_before_activation=True`: the block drops twice, before its
  GELU (`FFTConv`, `src/models/sequence/kernels/fftconv.py` lines
  134-137) and after it (`S4Block.drop`, `src/models/sequence/modules/
  s4block.py` line 154), both at `model.dropout` (only CIFAR's 0.1 is
  not 0), besides the residual dropout.
- `tie_dropout=True`: `configs/model/s4.yaml` (`tie_dropout: true`) for
  every task; no input dropout (`embedding_dropout=0.0`: `dropinp` 0,
  `src/models/sequence/backbones/model.py`).
- BatchNorm: `nn.BatchNorm1d` (`src/models/nn/normalization.py` lines
  31-35): momentum 0.1 in PyTorch's convention (Keras's 0.9), eps 1e-5,
  the moving variance from the unbiased batch variance
  (`batch_norm_unbiased=True`), its statistics over the padded
  positions too, as it sees no mask, up to the longest row of the
  batch, where the code's batches end (`batch_norm_count_padding=
  "longest"`, with full-length batches in random order: `unmasked_blocks`
  below the rows). The final norm of pre-norm stacks is of the same kind
  (`backbones/model.py`, `self.norm`).
- The token embedding: `encoder: embedding` (`configs/pipeline/imdb.yaml`,
  `listops.yaml`, `aan.yaml`), PyTorch's `nn.Embedding`, N(0, 1)
  (`embedding_init="normal"`).
- The head: `SequenceDecoder`'s one `nn.Linear(d_model, d_output)`
  (`src/tasks/decoders.py` line 43; `head="linear"`); AAN's
  `RetrievalDecoder` with `nli: true, activation: gelu, d_model: null`
  (`configs/pipeline/aan.yaml`): `[u, v, u - v, u * v]` ->
  Linear(4D, D) -> GELU -> Linear (`decoders.py` lines 178-200), our
  "mlp" head with "nli" features (in the order `[u, v, u * v, u - v]`).

- The dense layers (the block's `output_linear`, the decoders) are
  PyTorch `nn.Linear`s started by `reset_parameters`, kernel and bias
  U(+-1/sqrt(fan_in)): `dense_init="torch"` (the layer config's
  `initializer: null`, `configs/model/layer/s4.yaml`, adds none of its
  own).

- The pixel tasks: `encoder: linear` (`configs/pipeline/cifar.yaml`, which
  `pathfinder.yaml` and `pathx.yaml` extend), an `nn.Linear(1, d_model)`
  (PyTorch's U(-1, 1) at fan-in 1) on the normalised grey value:
  `Normalize(mean=122.6 / 255, std=61.0 / 255)` for CIFAR
  (`src/dataloaders/basic.py`); for Pathfinder and PathX the grey value
  in [0, 1], not centred: `configs/dataset/pathfinder.yaml` line 7
  (`center: False`, "embed to [0, 1] instead of [-1, 1]") overrides the
  dataset's default `center: True` (`src/dataloaders/lra.py` lines 434
  and 457, `Normalize(mean=0.5, std=0.5)` only if centred;
  `src/dataloaders/base.py` line 262 puts the config over the defaults):
  `pixel_mean=0`, `pixel_std=1`. PathX-256 ran in the NTFS code base
  (below), whose `PathFinder` always centres (IdoAmos/not-from-scratch
  `src/dataloaders/lra.py` line 469): `pixel_mean=0.5`, `pixel_std=0.5`.
  `input_encoder="linear"`, `pixel_mean`, `pixel_std`,
  `input_encoder_init="torch"`.

- `num_ssms=2` for CIFAR: `model.layer.n_ssm: 2`
  (`s4-lra-cifar.yaml` line 25) ties the (A, B) of the 512 channels to 2
  sets, channel h using set h mod 2 (`ssm.py` lines 537-541, `repeat(A,
  't n -> (v t) n')`; dt and C stay per channel). Every other task file
  overrides the layer config's `n_ssm: 1` with one set per channel:
  `${..d_model}` (ListOps), 256 = d_model (AAN, Pathfinder) or `null`
  (IMDB, PathX; `ssm.py` line 237, None -> H): `num_ssms=None`.

PathX-256: NTFS C.1.2, "the same configuration as PathX, changing the
pooling method again from Mean to Max ... the trained from scratch model's
learning rate is 1e-4 with batch size 16".

S4D: the S4D paper's LRA runs reuse these S4 settings with the diagonal
kernel (S4D-LegS initialisation); only the kernel differs, so every S4D row
equals the S4 row of its task (a test checks it).

The text tasks' end-of-sequence token: the S4 code appends `<eos>`, a
vocabulary entry of its own, to every ListOps tree, IMDB review and AAN
document, after truncating to `l_max` - 1 (`src/dataloaders/lra.py` at
e757cef: ListOps lines 227-229 and 308-333, IMDB 29-35 and 108-133, AAN
520-523 and 627-653; `configs/dataset/listops.yaml` line 4,
`append_eos: True`): `append_eos=True` on the ListOps, Text and
Retrieval rows, the token `Task.end_id` (one embedding row more),
`lra_keras.training.inputs.append_end_token`. `l_max` is 2048 for ListOps
(`listops.yaml` line 2), whose trees are shorter than 2000 tokens, so at
`sequence_length=2000` every tree keeps all its tokens, as there; 4096
(IMDB) and 4000 (AAN) are the rows' `sequence_length`. The S5 and NTFS
code bases load the three tasks with the same code (`presets.s5`,
`presets.ntfs`).

Conventions of every family, stated once in `lra_keras.presets`:
warmup + cosine as "cosine".
"""

from lra_keras.tasks import TASKS

PAPER = {
    ("listops", "s4"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        dense_init="torch",
        sequence_length=2000, hidden_dim=128, num_layers=8, state_dim=64,
        init="legs", dt_min=0.001, dt_max=0.1, output_activation="glu",
        dt_transform="softplus", B_clip=2.0,
        dropout_before_activation=True,
        C_parameterization="c_tilde", kernel_length=2048,
        dropout=0.0, prenorm=False, pooling="mean", learning_rate=0.01,
        ssm_learning_rate=0.001, batch_size=50, weight_decay=0.05, epochs=40,
        warmup_steps=1000, schedule="cosine",
        norm="batch", batch_norm_unbiased=True, tie_dropout=True,
        embedding_init="normal", embedding_dropout=0.0, head="linear",
        dt_learning_rate="global", weight_decay_on="all_but_dynamics",
        schedule_steps=80000,
        source=(
            "S4 LRA config s4-lra-listops.yaml (Gu et al. 2022a; Never "
            "Train from Scratch C.1.2)"
        ),
    ),
    ("listops", "s4d"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        dense_init="torch",
        sequence_length=2000, hidden_dim=128, num_layers=8, state_dim=64,
        init="legs", dt_min=0.001, dt_max=0.1, output_activation="glu",
        dt_transform="softplus", B_clip=2.0,
        dropout_before_activation=True,
        dropout=0.0, prenorm=False, pooling="mean", learning_rate=0.01,
        ssm_learning_rate=0.001, batch_size=50, weight_decay=0.05, epochs=40,
        warmup_steps=1000, schedule="cosine",
        norm="batch", batch_norm_unbiased=True, tie_dropout=True,
        embedding_init="normal", embedding_dropout=0.0, head="linear",
        dt_learning_rate="global", weight_decay_on="all_but_dynamics",
        schedule_steps=80000,
        source=(
            "derived: S4 LRA config s4-lra-listops.yaml (Gu et al. 2022a;"
            " Never Train from Scratch C.1.2), with the diagonal S4D-LegS"
            " kernel (Gu et al. 2022, S4D)"
        ),
    ),
    ("text", "s4"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        dense_init="torch",
        hidden_dim=256, num_layers=6, state_dim=64, init="legs", dt_min=0.001,
        dt_max=0.1, output_activation="glu", dropout=0.0, prenorm=True,
        dt_transform="softplus", B_clip=2.0,
        dropout_before_activation=True,
        C_parameterization="c_tilde", kernel_length=4096,
        pooling="mean", learning_rate=0.01, ssm_learning_rate=0.001,
        batch_size=16, weight_decay=0.05, epochs=32, warmup_steps=1000,
        schedule="cosine",
        norm="batch", batch_norm_unbiased=True, tie_dropout=True,
        embedding_init="normal", embedding_dropout=0.0, head="linear",
        dt_learning_rate="global", weight_decay_on="all_but_dynamics",
        schedule_steps=50000,
        source=(
            "S4 LRA config s4-lra-imdb.yaml (Gu et al. 2022a; Never Train"
            " from Scratch C.1.2)"
        ),
    ),
    ("text", "s4d"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        dense_init="torch",
        hidden_dim=256, num_layers=6, state_dim=64, init="legs", dt_min=0.001,
        dt_max=0.1, output_activation="glu", dropout=0.0, prenorm=True,
        dt_transform="softplus", B_clip=2.0,
        dropout_before_activation=True,
        pooling="mean", learning_rate=0.01, ssm_learning_rate=0.001,
        batch_size=16, weight_decay=0.05, epochs=32, warmup_steps=1000,
        schedule="cosine",
        norm="batch", batch_norm_unbiased=True, tie_dropout=True,
        embedding_init="normal", embedding_dropout=0.0, head="linear",
        dt_learning_rate="global", weight_decay_on="all_but_dynamics",
        schedule_steps=50000,
        source=(
            "derived: S4 LRA config s4-lra-imdb.yaml (Gu et al. 2022a; "
            "Never Train from Scratch C.1.2), with the diagonal S4D-LegS "
            "kernel (Gu et al. 2022, S4D)"
        ),
    ),
    ("retrieval", "s4"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        dense_init="torch",
        hidden_dim=256, num_layers=6, state_dim=64, init="legs", dt_min=0.001,
        dt_max=0.1, output_activation="glu", dropout=0.0, prenorm=True,
        dt_transform="softplus", B_clip=2.0,
        dropout_before_activation=True,
        C_parameterization="c_tilde", kernel_length=4000,
        pooling="mean", learning_rate=0.01, ssm_learning_rate=0.001,
        batch_size=64, weight_decay=0.05, epochs=20, warmup_steps=2500,
        schedule="cosine",
        norm="batch", batch_norm_unbiased=True, tie_dropout=True,
        embedding_init="normal", embedding_dropout=0.0, head="mlp",
        head_activation="gelu", pair_features="nli",
        dt_learning_rate="global", weight_decay_on="all_but_dynamics",
        schedule_steps=50000,
        source=(
            "S4 LRA config s4-lra-aan.yaml (Gu et al. 2022a; Never Train "
            "from Scratch C.1.2)"
        ),
    ),
    ("retrieval", "s4d"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        dense_init="torch",
        hidden_dim=256, num_layers=6, state_dim=64, init="legs", dt_min=0.001,
        dt_max=0.1, output_activation="glu", dropout=0.0, prenorm=True,
        dt_transform="softplus", B_clip=2.0,
        dropout_before_activation=True,
        pooling="mean", learning_rate=0.01, ssm_learning_rate=0.001,
        batch_size=64, weight_decay=0.05, epochs=20, warmup_steps=2500,
        schedule="cosine",
        norm="batch", batch_norm_unbiased=True, tie_dropout=True,
        embedding_init="normal", embedding_dropout=0.0, head="mlp",
        head_activation="gelu", pair_features="nli",
        dt_learning_rate="global", weight_decay_on="all_but_dynamics",
        schedule_steps=50000,
        source=(
            "derived: S4 LRA config s4-lra-aan.yaml (Gu et al. 2022a; "
            "Never Train from Scratch C.1.2), with the diagonal S4D-LegS "
            "kernel (Gu et al. 2022, S4D)"
        ),
    ),
    ("image", "s4"): dict(
        dense_init="torch",
        hidden_dim=512, num_layers=6, state_dim=64, init="legs", dt_min=0.001,
        dt_max=0.1, output_activation="glu", dropout=0.1, prenorm=False,
        dt_transform="softplus", B_clip=2.0,
        dropout_before_activation=True, num_ssms=2,
        C_parameterization="c_tilde", kernel_length=1024,
        pooling="mean", learning_rate=0.01, ssm_learning_rate=0.001,
        batch_size=50, weight_decay=0.05, epochs=200, warmup_steps=900,
        schedule="cosine",
        norm="layer", tie_dropout=True, embedding_init="normal",
        embedding_dropout=0.0, head="linear", dt_learning_rate="global",
        weight_decay_on="all_but_dynamics", schedule_steps=180000,
        input_encoder="linear", pixel_mean=122.6 / 255, pixel_std=61.0 / 255,
        input_encoder_init="torch",
        source=(
            "S4 LRA config s4-lra-cifar.yaml (Gu et al. 2022a; Never "
            "Train from Scratch C.1.2)"
        ),
    ),
    ("image", "s4d"): dict(
        dense_init="torch",
        hidden_dim=512, num_layers=6, state_dim=64, init="legs", dt_min=0.001,
        dt_max=0.1, output_activation="glu", dropout=0.1, prenorm=False,
        dt_transform="softplus", B_clip=2.0,
        dropout_before_activation=True, num_ssms=2,
        pooling="mean", learning_rate=0.01, ssm_learning_rate=0.001,
        batch_size=50, weight_decay=0.05, epochs=200, warmup_steps=900,
        schedule="cosine",
        norm="layer", tie_dropout=True, embedding_init="normal",
        embedding_dropout=0.0, head="linear", dt_learning_rate="global",
        weight_decay_on="all_but_dynamics", schedule_steps=180000,
        input_encoder="linear", pixel_mean=122.6 / 255, pixel_std=61.0 / 255,
        input_encoder_init="torch",
        source=(
            "derived: S4 LRA config s4-lra-cifar.yaml (Gu et al. 2022a; "
            "Never Train from Scratch C.1.2), with the diagonal S4D-LegS "
            "kernel (Gu et al. 2022, S4D)"
        ),
    ),
    ("pathfinder", "s4"): dict(
        dense_init="torch",
        hidden_dim=256, num_layers=6, state_dim=64, init="legs", dt_min=0.001,
        dt_max=0.1, output_activation="glu", dropout=0.0, prenorm=True,
        dt_transform="softplus", B_clip=2.0,
        dropout_before_activation=True,
        C_parameterization="c_tilde", kernel_length=1024,
        pooling="last", learning_rate=0.004, ssm_learning_rate=0.001,
        batch_size=64, weight_decay=0.03, epochs=200, warmup_steps=2500,
        schedule="cosine",
        norm="batch", batch_norm_unbiased=True, tie_dropout=True,
        embedding_init="normal", embedding_dropout=0.0, head="linear",
        dt_learning_rate="ssm", weight_decay_on="all_but_dynamics",
        schedule_steps=500000,
        input_encoder="linear", pixel_mean=0.0, pixel_std=1.0,
        input_encoder_init="torch",
        source=(
            "S4 LRA config s4-lra-pathfinder.yaml (Gu et al. 2022a; Never"
            " Train from Scratch C.1.2)"
        ),
    ),
    ("pathfinder", "s4d"): dict(
        dense_init="torch",
        hidden_dim=256, num_layers=6, state_dim=64, init="legs", dt_min=0.001,
        dt_max=0.1, output_activation="glu", dropout=0.0, prenorm=True,
        dt_transform="softplus", B_clip=2.0,
        dropout_before_activation=True,
        pooling="last", learning_rate=0.004, ssm_learning_rate=0.001,
        batch_size=64, weight_decay=0.03, epochs=200, warmup_steps=2500,
        schedule="cosine",
        norm="batch", batch_norm_unbiased=True, tie_dropout=True,
        embedding_init="normal", embedding_dropout=0.0, head="linear",
        dt_learning_rate="ssm", weight_decay_on="all_but_dynamics",
        schedule_steps=500000,
        input_encoder="linear", pixel_mean=0.0, pixel_std=1.0,
        input_encoder_init="torch",
        source=(
            "derived: S4 LRA config s4-lra-pathfinder.yaml (Gu et al. "
            "2022a; Never Train from Scratch C.1.2), with the diagonal "
            "S4D-LegS kernel (Gu et al. 2022, S4D)"
        ),
    ),
    ("pathx", "s4"): dict(
        dense_init="torch",
        hidden_dim=256, num_layers=6, state_dim=64, init="legs", dt_min=1e-4,
        dt_max=0.1, output_activation="glu", dropout=0.0, prenorm=True,
        dt_transform="softplus", B_clip=2.0,
        dropout_before_activation=True,
        C_parameterization="c_tilde", kernel_length=16384,
        pooling="mean", learning_rate=0.001, ssm_learning_rate=5e-4,
        batch_size=16, weight_decay=0.05, epochs=50, warmup_steps=50000,
        schedule="cosine",
        norm="batch", batch_norm_unbiased=True, tie_dropout=True,
        embedding_init="normal", embedding_dropout=0.0, head="linear",
        dt_learning_rate="ssm", weight_decay_on="all_but_dynamics",
        schedule_steps=500000,
        input_encoder="linear", pixel_mean=0.0, pixel_std=1.0,
        input_encoder_init="torch",
        source=(
            "S4 LRA config s4-lra-pathx.yaml (Gu et al. 2022a; Never "
            "Train from Scratch C.1.2)"
        ),
    ),
    ("pathx", "s4d"): dict(
        dense_init="torch",
        hidden_dim=256, num_layers=6, state_dim=64, init="legs", dt_min=1e-4,
        dt_max=0.1, output_activation="glu", dropout=0.0, prenorm=True,
        dt_transform="softplus", B_clip=2.0,
        dropout_before_activation=True,
        pooling="mean", learning_rate=0.001, ssm_learning_rate=5e-4,
        batch_size=16, weight_decay=0.05, epochs=50, warmup_steps=50000,
        schedule="cosine",
        norm="batch", batch_norm_unbiased=True, tie_dropout=True,
        embedding_init="normal", embedding_dropout=0.0, head="linear",
        dt_learning_rate="ssm", weight_decay_on="all_but_dynamics",
        schedule_steps=500000,
        input_encoder="linear", pixel_mean=0.0, pixel_std=1.0,
        input_encoder_init="torch",
        source=(
            "derived: S4 LRA config s4-lra-pathx.yaml (Gu et al. 2022a; "
            "Never Train from Scratch C.1.2), with the diagonal S4D-LegS "
            "kernel (Gu et al. 2022, S4D)"
        ),
    ),
    ("pathx256", "s4"): dict(
        dense_init="torch",
        hidden_dim=256, num_layers=6, state_dim=64, init="legs", dt_min=1e-4,
        dt_max=0.1, output_activation="glu", dropout=0.0, prenorm=True,
        dt_transform="softplus", B_clip=2.0,
        dropout_before_activation=True,
        C_parameterization="c_tilde", kernel_length=65536,
        pooling="max", learning_rate=1e-4, ssm_learning_rate=5e-4,
        batch_size=16, weight_decay=0.05, epochs=50, warmup_steps=50000,
        schedule="cosine",
        norm="batch", batch_norm_unbiased=True, tie_dropout=True,
        embedding_init="normal", embedding_dropout=0.0, head="linear",
        dt_learning_rate="ssm", weight_decay_on="all_but_dynamics",
        schedule_steps=500000,
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch",
        source=(
            "Never Train from Scratch C.1.2 (PathX-256: the S4 PathX "
            "config, max pooling, lr 1e-4, batch 16)"
        ),
    ),
    ("pathx256", "s4d"): dict(
        dense_init="torch",
        hidden_dim=256, num_layers=6, state_dim=64, init="legs", dt_min=1e-4,
        dt_max=0.1, output_activation="glu", dropout=0.0, prenorm=True,
        dt_transform="softplus", B_clip=2.0,
        dropout_before_activation=True,
        pooling="max", learning_rate=1e-4, ssm_learning_rate=5e-4,
        batch_size=16, weight_decay=0.05, epochs=50, warmup_steps=50000,
        schedule="cosine",
        norm="batch", batch_norm_unbiased=True, tie_dropout=True,
        embedding_init="normal", embedding_dropout=0.0, head="linear",
        dt_learning_rate="ssm", weight_decay_on="all_but_dynamics",
        schedule_steps=500000,
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch",
        source=(
            "derived: Never Train from Scratch C.1.2 (PathX-256: the S4 "
            "PathX config, max pooling, lr 1e-4, batch 16), with the "
            "diagonal S4D-LegS kernel (Gu et al. 2022, S4D)"
        ),
    ),
}


# The tasks whose batches carry padding (ListOps, Text, Retrieval).
PADDED_TASKS = tuple(name for name, task in TASKS.items()
                     if task.padding_id is not None)


def unmasked_blocks(rows, read_padding=False):
    """Sets, on `rows`, the padding of a code base whose blocks see no
    mask, and the batches that padding comes in.

    The S4 code's (`read_padding=False`): each batch is padded to its
    longest row (`pad_sequence` in the collate functions of
    state-spaces/s4 `src/dataloaders/lra.py`, lines 81-88, 276-283 and
    572-598; AAN's two documents to the longer of the two batches) and
    drawn at random, not grouped by length; its BatchNorm counts the
    padding up to that row (`batch_norm_count_padding="longest"`); its
    blocks zero the padded positions before the convolution, as ours.

    The S5 code's (`read_padding=True`): every batch is padded to the
    task's length (`prep_batch`, lindermanlab/S5 `s5/train_helpers.py`
    lines 301-305, `seq_len` the loader's `l_max`), its scans read the
    padding as it is (`read_padding`) and its BatchNorm counts all of
    it (`batch_norm_count_padding=True`).

    Either way what a real token's output reads depends on how much
    padding its batch carries, so on the tasks with padding the rows take
    full-length batches in random order (`bucket_step=None`) instead of
    length buckets; the S4 code's "longest" then cuts the statistics at
    the batch's longest row, where its batch ends.
    """
    for (task, _), row in rows.items():
        padded = task in PADDED_TASKS  # else every position is real
        if read_padding:
            row["read_padding"] = True
        if row.get("norm") == "batch":
            row["batch_norm_count_padding"] = (
                "longest" if padded and not read_padding else True)
        if padded:
            row["bucket_step"] = None


# The code's BatchNorm sees no padding mask (`Normalization.forward`,
# src/models/nn/normalization.py lines 44-60, called on every position by
# `SequenceResidualBlock`, src/models/sequence/backbones/block.py lines
# 102 and 119): the padded positions of a batch, up to its longest row,
# enter its statistics.
unmasked_blocks(PAPER)
