"""Never Train from Scratch (NTFS): its Tables 4, 5 and 8 and appendix C.

Amos, Berant & Gupta, "Never Train from Scratch: Fair Comparison of
Long-Sequence Models Requires Data-Driven Priors", ICLR 2024,
https://arxiv.org/abs/2310.02980. One literal row per (task, model).
C.1 leaves the rest to the code ("Additional specifications such as
learning rate schedules and optimizers can be found in our repository"):
IdoAmos/not-from-scratch, a fork of state-spaces/s4 (read at f919137;
paths below are in it, `configs/experiment/lra/` shortened to `lra/`).
Its experiment files are templates run with command-line overrides
(`README.md`: `dataset.mlm_prob=0.5`, `train.pretrained_model_path=...`;
the Transformer files' `optimizer.lr: 0.05` are no Table 4 value), so
the tables give sizes, rates, batches and weight decay, and the files the
rest: schedule and warmup, heads, encoders, norms, optimizer.

The NTFS Transformer (`configs/model/transformer.yaml`, `lra/transformer-
lra-<task>.yaml`), the same for every row:
- Pre-norm LayerNorm blocks (C.1; `model.prenorm: true, norm: layer`),
  attention then a feed-forward block with GELU (`activation: gelu`, every
  `lra/transformer-lra-*.yaml`, e.g. `transformer-lra-pathx-small.yaml`
  line 33; `configs/model/layer/transformer.yaml` line 13), biases on,
  dropout 0; a final LayerNorm after the last block of the pre-norm stack
  (`src/models/sequence/model.py` lines 75-83, 114): `final_norm=True`.
- Rotary (`src/models/sequence/mha.py` lines 29-73, 125-126, 147-150):
  `RotaryEmbedding(d_k)` per head after the heads are split, base 10000,
  every frequency used: `rotary_scope="head"`, `max_wavelength=10000`,
  `rotary_disable_half=False` (pairs of adjacent channels; ours pairs the
  two halves, the same model up to a fixed permutation of the q/k
  projections: `benchmarks/reference_parity_ntfs_attention.py`).
- Positions: `configs/model/transformer.yaml` lines 6-8 add the
  sinusoidal `PositionalEncoder` (`src/tasks/encoders.py` lines 82-131,
  sin/cos interleaved, base 10000, dropout = the model's dropout:
  `embedding_dropout=None`) in every run; the files all say `rotary:
  false`, the rotary runs setting it on the command line. Section 3.2
  "replace[s] the positional embeddings with ... rotary", but the code
  that produced the numbers adds both: `position_embedding=
  "rotary+sinusoidal"` (the summed sinusoids, then rotary in every
  attention).
- Dense layers: PyTorch `nn.Linear`s at `reset_parameters` (the
  attention's projections, the feed-forward block, DLR's output, the
  decoders), kernel and bias U(+-1/sqrt(fan_in)): `dense_init="torch"`,
  every row.
- Inputs: `encoder: embedding` (PyTorch `nn.Embedding`, N(0, 1):
  `embedding_init="normal"`) for the token tasks; `encoder: linear`
  (`configs/pipeline/cifar.yaml` line 14, extended by `pathfinder.yaml`
  and `pathx.yaml`) on the normalised grey value for the pixel tasks:
  `input_encoder="linear"`, `input_encoder_init="torch"`, CIFAR's
  `Normalize(122.6 / 255, 61.0 / 255)` (`src/dataloaders/basic.py` lines
  113-117), PathFinder's `Normalize(0.5, 0.5)` (`src/dataloaders/lra.py`
  line 469).
- Token tasks end with `<eos>`: the S4 code's loaders, kept in the fork
  (`src/dataloaders/lra.py` lines 44-45, 119-143 (IMDB), 239-240,
  320-343 (ListOps), 534-535 (AAN); `configs/dataset/{listops,imdb,aan}
  .yaml`, `append_eos: True`): `append_eos=True` on the ListOps, Text
  and Retrieval rows (`presets.s4`).
- Padding: the S4 code's loaders pad each batch to its longest row
  (`pad_sequence` in `src/dataloaders/lra.py`'s collate functions, lines
  91-98, 287-295 and 584-606; AAN's two documents to the longer) and
  its attention sees no mask (`src/models/sequence/mha.py`,
  `MultiheadAttentionFlash.forward` lines 128-164: no
  `key_padding_mask`; the `lengths` the blocks receive land in
  `**kwargs` unread): every key up to the batch's longest row gets
  weight, the shorter rows' padding included. The ListOps, Text and
  Retrieval rows take `mask_semantics="longest"` (checked against
  `MultiheadAttentionFlash` on a padded batch: `benchmarks/
  reference_parity_ntfs_attention.py`) and full-length batches of
  random rows (`bucket_step=None`), as the S4 rows' BatchNorm
  (`presets.s4.unmasked_blocks`); the pooling is the mean over real
  tokens (`use_lengths: true`).
  The DLR layer reads the padding too (`DSS.forward`,
  `src/models/sequence/ss/dss.py` lines 703-748: the `lengths` absorbed
  unread, the bidirectional kernel convolved over every position of the
  batch), so that a real token's output reads the padding after it up
  to the batch's longest row, where the S4 code's `S4Block` zeroes it:
  the DLR rows of those tasks take `read_padding="longest"` and
  full-length random batches (the block checked against `DSS` on a
  padded batch: `benchmarks/reference_parity_dlr.py`, part c).
- Heads (`src/tasks/decoders.py`): `sequence` is one Linear (line 44,
  `head="linear"`): ListOps (`transformer-lra-listops.yaml` lines 46-49),
  Pathfinder (`transformer-lra-pathfinder.yaml` lines 33-35 with
  `pipeline/cifar.yaml` lines 16-18), PathX (`transformer-lra-pathx-
  small.yaml` lines 36-38); `sequence_nonelinear` is Linear(D, D) -> ReLU
  -> Linear (lines 147-162; `head="mlp"`, `head_activation="relu"`,
  `head_hidden_dim=None`): Text (`transformer-lra-imdb.yaml` lines 51-54)
  and Image (`transformer-lra-cifar.yaml` lines 33-35); Retrieval
  `configs/pipeline/aan.yaml` lines 7-13: `[u, v, u - v, u * v]` ->
  Linear(4D, D) -> GELU -> Linear (lines 306-325, 365-366;
  `pair_features="nli"`, `head_activation="gelu"`).
- AdamW (`configs/optimizer/adamw.yaml` line 5: betas (0.9, 0.999), eps
  PyTorch's 1e-8) over every parameter, embeddings, norms and biases
  included (`train.py` lines 499-519; no `optimizer_param_grouping` in
  any file): `weight_decay_on="all"`. Schedule `constant_warmup`
  (`configs/scheduler/constant_warmup.yaml`, linear warmup then constant:
  `schedule="constant"` with `warmup_steps`), the fine-tuning warmups of
  `lra/transformer-lra-<task>.yaml`: ListOps 2000 (line 37), Text 2000
  (line 43), Retrieval 5000 (line 38), Image 2000 (line 9), Pathfinder
  5000 (line 9), PathX 5000 (`transformer-lra-pathx-small.yaml` line 9),
  PathX-256 5000 (`transformer-lra-pathx256.yaml` line 9).
The TECHNIQUE rows below sit on the YCTFS PAPER rows of the five LRA
tasks, so they restate every key where the NTFS code differs from
YCTFS's (activation, rotary scope and base, final norm, head, encoder,
betas, weight decay exclusions, schedule). Two of YCTFS's training
callbacks are turned off on every Transformer row (`_NO_YCTFS_CALLBACKS`):
early stopping (`configs/callbacks/checkpoint.yaml` comments NTFS's
out; `config.yaml` lists only `base` and `checkpoint`) and the text
row's weight averaging (NTFS's `callbacks/swa.yaml` is included by no
experiment).

PAPER rows:
- Transformer on PathX (YCTFS has none, Table 2: "not available due to a
  lack of computational resources"): Table 4, PathX, "Transformer + Rotary
  + Masked SPT", fine-tuning values (128 features, depth 5, 4 heads, FF
  512, max pooling, lr 5e-4, batch 32, wd 0), with the conventions above;
  `lra/transformer-lra-pathx-small.yaml` agrees on width, heads, lr,
  batch, wd, max pooling, 200 epochs and dropout 0 and gives depth 4 "#
  5" and expand 1 "# 4" (Table 4: 5, 512). The same row trains the
  from-scratch "Transformers + Rotary" of Table 2 (84.72). Epochs: C.1
  gives only caps (200 epochs, or 5 days on 4 GPUs for Transformers on
  PathX). NTFS splits attention at >= 16K into windows of 4096 attending
  to themselves and one neighbour on each side (`mhfla`, `window_size:
  4096`, `look_backward: 1`, `look_forward: 1`, `transformer-lra-pathx-
  small.yaml` lines 18-22; `LocalFlashAttention`, whole windows): so does
  the row, `attention_window=4096` (`attention_kernels.
  windowed_attention`, checked against `LocalFlashAttention`:
  `benchmarks/reference_parity_ntfs_attention.py`). PathX-256: Table 2
  marks the Transformer "computationally infeasible"; C.1.2 runs PathX-256
  "with the same configuration as PathX" and max pooling (for S4), so the
  PathX row; `lra/transformer-lra-pathx256.yaml` (depth 4, FF 512,
  windows of 8192) and `transformer-lra-pathx256-mlm.yaml` (depth 8)
  disagree with each other on the depth and no number comes from them;
  both give windows of 8192 (line 20 and line 19), which the row takes
  (`attention_window=8192`). A causal Transformer cannot look forward
  there (`LocalFlashAttention` asserts it) and the NTFS files hold no
  causal windowed configuration: the causal objective on these rows
  asks for `--set attention_window=None` (every earlier position), which
  the causal SPT row of PathX in SPT_LRA_SIZED sets.
- DLR: C.1.3, the official DLR layer with its default parameters (state
  size 1024), "for the remaining hyper-parameters (model size, num. layers,
  weight decay) we use the same values as S4", LayerNorm, and "for all
  experiments on PathX we use Max-pooling". The rest from the NTFS DLR
  files `lra/dlr-lra-{listops,imdb,cifar,pathx}.yaml` (no DLR file for
  Retrieval and Pathfinder, which Table 5 does not run: derived rows):
  - the layer (`configs/model/layer/dlr.yaml`): state 1024 (line 2),
    dt_min 1e-4 and dt_max 0.1 (lines 8-9), lr 1e-4 for Lambda and W
    (lines 13-16), no weight decay on W (line 21, `wd: 0`), the kernel's
    own parameterisation and `Lambda_init: omega` (line 19): `init=
    "omega"` (one Lambda per mode shared by the channels, `-x^2 + i
    theta`, W ~ N(0, 1/N^2) per part, W among the dynamics so that
    `ssm_learning_rate` 1e-4 and no decay reach it; `layers.DLR`); the
    experiment files set GELU and `postact: glu` (lines 14-15; GLU
    confirmed) and bidirectional kernels. Their `dt_min: 0.0001, dt_max:
    0.001` sit under `layer.lr` (e.g. `dlr-lra-listops.yaml` lines
    17-21), where they only add unused keys to the kernel's rate dict
    (`src/models/sequence/ss/dss.py` DLRKernel, lines 436-438): the layer
    defaults 1e-4 and 0.1 hold. `dt_learning_rate`, `dt_transform` and
    `B_clip` are inert for DLR (no step-size weight, no LegS B; the S4
    row's values are kept).
  - `tie_dropout=False` (`configs/model/dlr.yaml` line 6), LayerNorm
    (`norm: layer`), sizes, prenorm, dropout and weight decay 0.05 of the
    files (which equal the S4 config's except Image: `prenorm: true`,
    `dropout: 0.0`, `dlr-lra-cifar.yaml` lines 8 and 11, where the S4
    CIFAR config has post-norm and dropout 0.1).
  - Schedules: `constant_warmup` (ListOps warmup 2000, `dlr-lra-
    listops.yaml` lines 5 and 35; Text 2000, `dlr-lra-imdb.yaml` lines 5
    and 40; Image the default 1000, `dlr-lra-cifar.yaml` line 5 and
    `configs/scheduler/constant_warmup.yaml` line 7); PathX
    `cosine_warmup` with warmup 5000 and `num_training_steps` 250000
    (`dlr-lra-pathx.yaml` lines 5-9). Derived Retrieval and Pathfinder:
    `constant_warmup` as every DLR file but PathX's, with the warmup 2500
    of NTFS's S4 files for those tasks (`lra/s4-lra-aan.yaml` and
    `lra/s4-lra-pathfinder.yaml`, both `constant_warmup`, lines 5 and 9).
  - Epochs 40 / 32 / 200 / 50 (the files' `max_epochs`), the S4 config's
    pooling and heads (`sequence` pool, `use_lengths`; AAN's retrieval
    head); PathX max pooling per C.1.3 (`dlr-lra-pathx.yaml` keeps the
    pipeline's mean).
  - Pathfinder and PathX pixels centred to [-1, 1] (`pixel_mean=0.5`,
    `pixel_std=0.5`): the NTFS code's `PathFinder` always normalises
    (`src/dataloaders/lra.py` line 469), where the S4 code's dataset
    config switches it off (`presets.s4`).
  Table 5 row "DLR" gives (FT-LR, FT-BSZ) per task: ListOps 5e-4,16; Text
  5e-4,16; Image 5e-4,64; PathX 5e-4,64 (the files' lr 0.01 / batch 50,
  and PathX's batch 32, are overridden); Retrieval and Pathfinder are not
  evaluated (x): lr 5e-4 as every DLR cell, the S4 config's batch size. A
  test checks every DLR row against its S4 row.

TECHNIQUE rows ("spt"):
- Transformer: Table 4 rows "Transformer + Rotary + Masked SPT"
  (pre-norm LayerNorm, C.1; rotary without disabled halves) with the
  conventions above. Two logits and a softmax cross-entropy on the
  two-class tasks (`binary_logit=False` over the YCTFS rows' single
  logit): the S4 code base's `multiclass_classification` task,
  `loss: cross_entropy` (`configs/task/multiclass_classification.yaml`
  line 3, taken by `configs/pipeline/imdb.yaml` line 6, which `aan.yaml`
  extends; Pathfinder through `cifar.yaml`). "(FT, PT)" pairs -> (learning_rate,
  pretrain_learning_rate) and (batch_size, pretrain_batch_size). Epochs:
  C.1 caps pretraining and fine-tuning at "200 epochs or 24h on a single
  GPU" each (5 days on 4 GPUs for PathX); the files' `max_epochs` (ListOps
  100, Text 65, Retrieval 32, Image 200, Pathfinder 200, PathX 200) are
  not used. Pretraining: `lra/transformer-lra-<task>-mlm.yaml`,
  `constant_warmup` too. Section 2 calls Text "up to 2048" long; the NTFS
  files use `l_max: 4096` (`transformer-lra-imdb.yaml` line 30), kept
  here.
- S4 and DLR: Table 5, cells "(FT-LR, FT-BSZ, PT-LR, PT-BSZ)" on top of the
  technique-none row (C.1.2/C.1.3). Max pooling on PathX (C.1.3).
  PathX-256, S4: C.1.2, "For pretraining we use learning rate 1e-3, batch
  size 8 and batch size 64 for fine tuning with the same learning rate".
  S4 fine-tunes with NTFS's S4 files, whose schedules differ from the
  state-spaces files of the S4 rows: `lra/s4-lra-listops.yaml`
  `constant_warmup`, warmup 2000 (lines 5, 37); `s4-lra-imdb.yaml`
  cosine, warmup 5000, 50000 steps (lines 5, 41-42); `s4-lra-aan.yaml`
  `constant_warmup`, 2500 (lines 5, 9); `s4-lra-cifar.yaml` cosine,
  warmup 1000 (`configs/scheduler/cosine_warmup.yaml` line 7), 200000
  steps (line 41); `s4-lra-pathfinder.yaml` `constant_warmup`, 2500
  (lines 5, 9); `s4-lra-pathx.yaml` cosine, warmup 10000, 500000 steps
  (lines 5-9). DLR's come with its PAPER rows. Pretraining loss (C.1:
  "CE or L1"): L1 on Image (`lra/s4-lra-cifar-mlm.yaml` line 30,
  `lra/dlr-lra-cifar-mlm.yaml` line 27), CE elsewhere (`lm_loss: ce`,
  e.g. `s4-lra-pathx-mlm.yaml` line 35, `dlr-lra-pathx-mlm.yaml` line
  36). Three cells of Table 5 are malformed with 3 values: "S4 + Rand
  Init + SPT" Text "1e-3,16,32" and "DLR + Rand Init + SPT" Image
  "1e-3,64,32" read as (FT-LR, FT-BSZ, PT-BSZ) with PT-LR missing; they
  belong to the random-initialisation rows, which are not techniques
  here, so nothing uses them. Fine-tuning epochs: the S4 config's (C.1.2
  refers to Gu et al. for S4's hyperparameters); pretraining epochs: the
  C.1 cap of 200.
- The self-pretraining data (`src/dataloaders/base.py`
  `MaskedSequenceDatasetWrapper.mask`, lines 397-460; `lra.py`
  `PathFinderLMDataset`, lines 752-806): masked positions drawn per token
  (`rand < mlm_prob`), the rates of section 2 (the tasks'
  `spt_mask_rate`); tokens become `<mask>` (id 0 of the LM vocabularies),
  no random replacement, loss only at masked positions; pixels become 0
  (the normalised mean grey) with a second input channel flagging the
  mask (`torch.cat((x * (1 - mask), mask))`, a Linear(2, D) encoder whose
  mask column `train.py` drops when fine-tuning, lines 865-872: the
  technique's masked pixel rows with a linear encoder read the mask so,
  `pixel_mask_input` None resolving to "channel", `layers.PixelEncoder`;
  the causal rows read the value alone); the CE target is the byte 0..255 and
  the L1 target the normalised value, `(value / 255 - pixel_mean) /
  pixel_std` (`masked_mae`, `src/tasks/metrics.py` line 218;
  `masking.denoising_targets`); the pretraining head one Linear per
  position (`decoder: sequence, mode: last`, full length).

SPT_LRA_SIZED: section 3.1 (Table 1, dagger rows of Table 4), Transformers
of the LRA sizes (Tay et al.) self-pretrained with a masked or a causal
objective. Data only, not a technique of `get_hparams`: apply an entry as
overrides on top of `get_hparams(task, "transformer", technique="spt")`.
Position embeddings: not rotary (section 3.2 "replace[s] the positional
embeddings with ... rotary"); the NTFS Transformer's sinusoidal
`PositionalEncoder` (`configs/model/transformer.yaml` lines 6-8,
`src/tasks/encoders.py` lines 82-131; `rotary: false` in every
`lra/transformer-lra-*.yaml`), as the LRA code's default
(google-research/long-range-arena `lra_benchmarks/models/transformer/
transformer.py`, learn_pos_emb=False). The causal models are
unidirectional (section 2; `README.md`: `model.layer.0.causal=true`).
Table 4 reading notes: the Image masked LR cell "1e-3,1e03" is read as
(1e-3, 1e-3); Pathfinder and PathX list two rows both labelled "Masked SPT
(dagger)": the second is read as the causal row, by the masked-then-causal
order of every other task. Where the NTFS files disagree with Table 4 the
table is kept: ListOps and Text FF 2048 (`expand: 4` at width 512,
`transformer-lra-listops.yaml` line 25, `transformer-lra-imdb.yaml` line
25; Table 4: 1024), ListOps weight decay 0.0 (`transformer-lra-
listops.yaml` line 34; Table 4: 0.1), Image mean pooling
(`transformer-lra-cifar.yaml` line 35; Table 4: Max), PathX 4 heads
(`transformer-lra-pathx-small.yaml` line 23; Table 4: 8).

COMPUTE_TIED: Table 8 (appendix D), compute-tied SPT, the total epochs of
pretraining plus fine-tuning fixed, a share of them pretraining;
`results[share][model]` is the accuracy (percent).

Pretraining schedules (`pretrain_schedule`, `pretrain_warmup_steps`): every
NTFS -mlm file overrides its scheduler with `constant_warmup`
(`configs/experiment/lra/*-mlm.yaml` line 5), a constant rate after its
own warmup, also where fine-tuning is cosine: Transformer ListOps 2000,
Text 5000, Retrieval 2000, Image 2500, Pathfinder 2500, PathX and
PathX-256 5000; S4 ListOps 2000, Text 1000, Retrieval 2500, Image 1000
(unset: `configs/scheduler/constant_warmup.yaml`'s), Pathfinder 2500,
PathX 5000 (PathX-256 the PathX file's); DLR ListOps 2000, Text 1000,
Image 1000, PathX 5000 (`num_warmup_steps` in each file).


S4's `n_ssm`: the NTFS S4 files set S4's (`configs/experiment/lra/
s4-lra-*.yaml` and their `-mlm` pretraining files: ListOps and IMDB
`${..d_model}`, AAN and Pathfinder 256 = d_model, PathX null, i.e. one
set per channel; CIFAR 2), which the S4 rows' `num_ssms` states and the
SPT rows inherit.
"""

from lra_keras.presets.s4 import PADDED_TASKS

PAPER = {
    ("pathx", "transformer"): dict(
        dense_init="torch",
        hidden_dim=128, num_layers=5, num_heads=4, intermediate_dim=512,
        activation="gelu", position_embedding="rotary+sinusoidal",
        max_wavelength=10000,
        rotary_disable_half=False, rotary_scope="head", dropout=0.0,
        pooling="max", learning_rate=5e-4, batch_size=32, weight_decay=0.0,
        epochs=200, schedule="constant", warmup_steps=5000,
        final_norm=True, embedding_dropout=None, weight_decay_on="all",
        head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch",
        # mhfla: windows of 4096 and their neighbours (see above)
        attention_window=4096, window_look_backward=1, window_look_forward=1,
        source=(
            "Never Train from Scratch, Table 4 (PathX, Transformer + "
            "Rotary + Masked SPT, FT values) and C.1 (200-epoch cap); "
            "IdoAmos/not-from-scratch configs/experiment/lra/"
            "transformer-lra-pathx-small.yaml (constant_warmup 5000, GELU, "
            "linear head, lines 5, 9, 33, 38)"
        ),
    ),
    ("pathx256", "transformer"): dict(
        dense_init="torch",
        hidden_dim=128, num_layers=5, num_heads=4, intermediate_dim=512,
        activation="gelu", position_embedding="rotary+sinusoidal",
        max_wavelength=10000,
        rotary_disable_half=False, rotary_scope="head", dropout=0.0,
        pooling="max", learning_rate=5e-4, batch_size=32, weight_decay=0.0,
        epochs=200, schedule="constant", warmup_steps=5000,
        final_norm=True, embedding_dropout=None, weight_decay_on="all",
        head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch",
        # mhfla at 256x256: windows of 8192 (transformer-lra-pathx256.yaml
        # line 20, -mlm.yaml line 19) and their neighbours
        attention_window=8192, window_look_backward=1, window_look_forward=1,
        source=(
            "derived: the PathX Transformer row (Never Train from Scratch"
            " Table 4) at 256x256, as C.1.2 does for S4; windows of 8192 "
            "from IdoAmos/not-from-scratch configs/experiment/lra/"
            "transformer-lra-pathx256.yaml"
        ),
    ),
    ("listops", "dlr"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        dense_init="torch",
        sequence_length=2000, hidden_dim=128, num_layers=8, state_dim=1024,
        init="omega", dt_min=1e-4, dt_max=0.1, output_activation="glu",
        dt_transform="softplus", B_clip=2.0,
        dropout=0.0, prenorm=False, pooling="mean", learning_rate=5e-4,
        ssm_learning_rate=1e-4, batch_size=16, weight_decay=0.05, epochs=40,
        warmup_steps=2000, schedule="constant", schedule_steps=None,
        norm="layer", tie_dropout=False, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        dt_learning_rate="global", weight_decay_on="all_but_dynamics",
        source=(
            "Never Train from Scratch, C.1.3 and Table 5 (DLR, ListOps) "
            "on the S4 config; IdoAmos/not-from-scratch configs/experiment/"
            "lra/dlr-lra-listops.yaml (constant_warmup 2000, lines 5, 35)"
        ),
    ),
    ("text", "dlr"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        dense_init="torch",
        hidden_dim=256, num_layers=6, state_dim=1024, init="omega",
        dt_min=1e-4, dt_max=0.1, output_activation="glu", dropout=0.0,
        dt_transform="softplus", B_clip=2.0,
        prenorm=True, pooling="mean", learning_rate=5e-4,
        ssm_learning_rate=1e-4, batch_size=16, weight_decay=0.05, epochs=32,
        warmup_steps=2000, schedule="constant", schedule_steps=None,
        norm="layer", tie_dropout=False, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        dt_learning_rate="global", weight_decay_on="all_but_dynamics",
        source=(
            "Never Train from Scratch, C.1.3 and Table 5 (DLR, Text) on "
            "the S4 config; IdoAmos/not-from-scratch configs/experiment/lra/"
            "dlr-lra-imdb.yaml (constant_warmup 2000, lines 5, 40)"
        ),
    ),
    ("retrieval", "dlr"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        dense_init="torch",
        hidden_dim=256, num_layers=6, state_dim=1024, init="omega",
        dt_min=1e-4, dt_max=0.1, output_activation="glu", dropout=0.0,
        dt_transform="softplus", B_clip=2.0,
        prenorm=True, pooling="mean", learning_rate=5e-4,
        ssm_learning_rate=1e-4, batch_size=64, weight_decay=0.05, epochs=20,
        warmup_steps=2500, schedule="constant", schedule_steps=None,
        norm="layer", tie_dropout=False, embedding_init="normal",
        embedding_dropout=0.0, head="mlp",
        head_activation="gelu", pair_features="nli",
        dt_learning_rate="global", weight_decay_on="all_but_dynamics",
        source=(
            "derived: Never Train from Scratch C.1.3 on the S4 retrieval "
            "config, lr 5e-4 as every DLR cell of Table 5 (no DLR run for"
            " this task); constant_warmup 2500 as IdoAmos/not-from-scratch"
            " configs/experiment/lra/s4-lra-aan.yaml (lines 5, 9) and "
            "every non-PathX DLR config"
        ),
    ),
    ("image", "dlr"): dict(
        dense_init="torch",
        hidden_dim=512, num_layers=6, state_dim=1024, init="omega",
        dt_min=1e-4, dt_max=0.1, output_activation="glu", dropout=0.0,
        dt_transform="softplus", B_clip=2.0,
        prenorm=True, pooling="mean", learning_rate=5e-4,
        ssm_learning_rate=1e-4, batch_size=64, weight_decay=0.05, epochs=200,
        warmup_steps=1000, schedule="constant", schedule_steps=None,
        norm="layer", tie_dropout=False, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        dt_learning_rate="global", weight_decay_on="all_but_dynamics",
        input_encoder="linear", pixel_mean=122.6 / 255, pixel_std=61.0 / 255,
        input_encoder_init="torch",
        source=(
            "Never Train from Scratch, C.1.3 and Table 5 (DLR, Image) on "
            "the S4 config; IdoAmos/not-from-scratch configs/experiment/lra/"
            "dlr-lra-cifar.yaml (dropout 0, prenorm, constant_warmup 1000,"
            " lines 5, 8, 11)"
        ),
    ),
    ("pathfinder", "dlr"): dict(
        dense_init="torch",
        hidden_dim=256, num_layers=6, state_dim=1024, init="omega",
        dt_min=1e-4, dt_max=0.1, output_activation="glu", dropout=0.0,
        dt_transform="softplus", B_clip=2.0,
        prenorm=True, pooling="last", learning_rate=5e-4,
        ssm_learning_rate=1e-4, batch_size=64, weight_decay=0.03, epochs=200,
        warmup_steps=2500, schedule="constant", schedule_steps=None,
        norm="layer", tie_dropout=False, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        dt_learning_rate="ssm", weight_decay_on="all_but_dynamics",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch",
        source=(
            "derived: Never Train from Scratch C.1.3 on the S4 pathfinder"
            " config, lr 5e-4 as every DLR cell of Table 5 (no DLR run "
            "for this task); constant_warmup 2500 as IdoAmos/not-from-"
            "scratch configs/experiment/lra/s4-lra-pathfinder.yaml (lines"
            " 5, 9) and every non-PathX DLR config"
        ),
    ),
    ("pathx", "dlr"): dict(
        dense_init="torch",
        hidden_dim=256, num_layers=6, state_dim=1024, init="omega",
        dt_min=1e-4, dt_max=0.1, output_activation="glu", dropout=0.0,
        dt_transform="softplus", B_clip=2.0,
        prenorm=True, pooling="max", learning_rate=5e-4,
        ssm_learning_rate=1e-4, batch_size=64, weight_decay=0.05, epochs=50,
        warmup_steps=5000, schedule="cosine", schedule_steps=250000,
        norm="layer", tie_dropout=False, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        dt_learning_rate="ssm", weight_decay_on="all_but_dynamics",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch",
        source=(
            "Never Train from Scratch, C.1.3 and Table 5 (DLR, PathX) on "
            "the S4 config; IdoAmos/not-from-scratch configs/experiment/lra/"
            "dlr-lra-pathx.yaml (cosine_warmup 5000 / 250000, lines 5-9)"
        ),
    ),
    ("pathx256", "dlr"): dict(
        dense_init="torch",
        hidden_dim=256, num_layers=6, state_dim=1024, init="omega",
        dt_min=1e-4, dt_max=0.1, output_activation="glu", dropout=0.0,
        dt_transform="softplus", B_clip=2.0,
        prenorm=True, pooling="max", learning_rate=5e-4,
        ssm_learning_rate=1e-4, batch_size=64, weight_decay=0.05, epochs=50,
        warmup_steps=5000, schedule="cosine", schedule_steps=250000,
        norm="layer", tie_dropout=False, embedding_init="normal",
        embedding_dropout=0.0, head="linear",
        dt_learning_rate="ssm", weight_decay_on="all_but_dynamics",
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
        append_eos=True,  # <eos> ends each sequence (see above)
        hidden_dim=512, num_layers=6, num_heads=8, intermediate_dim=1024,
        activation="gelu", position_embedding="rotary+sinusoidal",
        max_wavelength=10000,
        rotary_disable_half=False, rotary_scope="head", dropout=0.0,
        pooling="mean", learning_rate=1e-4, pretrain_learning_rate=0.001,
        batch_size=64, pretrain_batch_size=256, weight_decay=0.05, epochs=200,
        pretrain_epochs=200, schedule="constant", warmup_steps=2000,
        final_norm=True, embedding_init="normal", embedding_dropout=None,
        adam_beta_2=0.999, weight_decay_on="all", head="linear",
        pretrain_objective="masked", pretrain_loss="ce",
        pretrain_schedule="constant", pretrain_warmup_steps=2000,
        source=(
            "Never Train from Scratch, Table 4 (ListOps, Transformer + "
            "Rotary + Masked SPT) and C.1 (200-epoch caps); IdoAmos/not-"
            "from-scratch configs/experiment/lra/transformer-lra-"
            "listops.yaml (warmup 2000, linear head, lines 37, 46-49)"
        ),
    ),
    ("text", "transformer", "spt"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        hidden_dim=512, num_layers=6, num_heads=8, intermediate_dim=1024,
        activation="gelu", position_embedding="rotary+sinusoidal",
        max_wavelength=10000,
        rotary_disable_half=False, rotary_scope="head", dropout=0.0,
        pooling="mean", learning_rate=5e-4, pretrain_learning_rate=5e-4,
        batch_size=64, pretrain_batch_size=8, weight_decay=0.1, epochs=200,
        pretrain_epochs=200, schedule="constant", warmup_steps=2000,
        final_norm=True, embedding_init="normal", embedding_dropout=None,
        adam_beta_2=0.999, weight_decay_on="all", head="mlp",
        binary_logit=False,
        head_hidden_dim=None, head_activation="relu",
        pretrain_objective="masked", pretrain_loss="ce",
        pretrain_schedule="constant", pretrain_warmup_steps=5000,
        source=(
            "Never Train from Scratch, Table 4 (Text, Transformer + "
            "Rotary + Masked SPT) and C.1 (200-epoch caps); IdoAmos/not-"
            "from-scratch configs/experiment/lra/transformer-lra-imdb.yaml"
            " (warmup 2000, ReLU MLP head, lines 43, 51-54)"
        ),
    ),
    ("retrieval", "transformer", "spt"): dict(
        append_eos=True,  # <eos> ends each sequence (see above)
        hidden_dim=128, num_layers=6, num_heads=4, intermediate_dim=512,
        activation="gelu", position_embedding="rotary+sinusoidal",
        max_wavelength=10000,
        rotary_disable_half=False, rotary_scope="head", dropout=0.0,
        pooling="mean", learning_rate=5e-4, pretrain_learning_rate=0.005,
        batch_size=16, pretrain_batch_size=32, weight_decay=0.0, epochs=200,
        pretrain_epochs=200, schedule="constant", warmup_steps=5000,
        final_norm=True, embedding_init="normal", embedding_dropout=None,
        adam_beta_2=0.999, weight_decay_on="all", head="mlp",
        binary_logit=False,
        head_hidden_dim=None, head_activation="gelu", pair_features="nli",
        pretrain_objective="masked", pretrain_loss="ce",
        pretrain_schedule="constant", pretrain_warmup_steps=2000,
        source=(
            "Never Train from Scratch, Table 4 (Retrieval, Transformer + "
            "Rotary + Masked SPT) and C.1 (200-epoch caps); IdoAmos/not-"
            "from-scratch configs/experiment/lra/transformer-lra-aan.yaml "
            "(warmup 5000, line 38) and configs/pipeline/aan.yaml (NLI "
            "GELU head, lines 7-13)"
        ),
    ),
    ("image", "transformer", "spt"): dict(
        hidden_dim=256, num_layers=6, num_heads=4, intermediate_dim=512,
        activation="gelu", position_embedding="rotary+sinusoidal",
        max_wavelength=10000,
        rotary_disable_half=False, rotary_scope="head", dropout=0.0,
        pooling="mean", learning_rate=0.001, pretrain_learning_rate=0.001,
        batch_size=64, pretrain_batch_size=32, weight_decay=0.0, epochs=200,
        pretrain_epochs=200, schedule="constant", warmup_steps=2000,
        final_norm=True, embedding_dropout=None, adam_beta_2=0.999,
        weight_decay_on="all", head="mlp", head_hidden_dim=None,
        head_activation="relu",
        input_encoder="linear", pixel_mean=122.6 / 255, pixel_std=61.0 / 255,
        input_encoder_init="torch",
        pretrain_objective="masked", pretrain_loss="l1",
        pretrain_schedule="constant", pretrain_warmup_steps=2500,
        source=(
            "Never Train from Scratch, Table 4 (Image, Transformer + "
            "Rotary + Masked SPT) and C.1 (200-epoch caps); IdoAmos/not-"
            "from-scratch configs/experiment/lra/transformer-lra-cifar.yaml"
            " (warmup 2000, ReLU MLP head, lines 9, 33-35) and configs/"
            "pipeline/cifar.yaml (linear encoder, line 14)"
        ),
    ),
    ("pathfinder", "transformer", "spt"): dict(
        hidden_dim=128, num_layers=6, num_heads=4, intermediate_dim=512,
        activation="gelu", position_embedding="rotary+sinusoidal",
        max_wavelength=10000,
        rotary_disable_half=False, rotary_scope="head", dropout=0.0,
        pooling="mean", learning_rate=5e-4, pretrain_learning_rate=0.001,
        batch_size=64, pretrain_batch_size=32, weight_decay=0.0, epochs=200,
        pretrain_epochs=200, schedule="constant", warmup_steps=5000,
        final_norm=True, embedding_dropout=None, adam_beta_2=0.999,
        weight_decay_on="all", head="linear",
        binary_logit=False,
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch",
        pretrain_objective="masked", pretrain_loss="ce",
        pretrain_schedule="constant", pretrain_warmup_steps=2500,
        source=(
            "Never Train from Scratch, Table 4 (Pathfinder, Transformer +"
            " Rotary + Masked SPT) and C.1 (200-epoch caps); IdoAmos/not-"
            "from-scratch configs/experiment/lra/transformer-lra-"
            "pathfinder.yaml (warmup 5000, linear head, lines 9, 33-35)"
        ),
    ),
    ("pathx", "transformer", "spt"): dict(
        hidden_dim=128, num_layers=5, num_heads=4, intermediate_dim=512,
        activation="gelu", position_embedding="rotary+sinusoidal",
        max_wavelength=10000,
        rotary_disable_half=False, rotary_scope="head", dropout=0.0,
        pooling="max", learning_rate=5e-4, pretrain_learning_rate=0.001,
        batch_size=32, pretrain_batch_size=8, weight_decay=0.0, epochs=200,
        pretrain_epochs=200, schedule="constant", warmup_steps=5000,
        final_norm=True, embedding_dropout=None, adam_beta_2=0.999,
        weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch",
        pretrain_objective="masked", pretrain_loss="ce",
        pretrain_schedule="constant", pretrain_warmup_steps=5000,
        source=(
            "Never Train from Scratch, Table 4 (PathX, Transformer + "
            "Rotary + Masked SPT) and C.1 (200-epoch caps); IdoAmos/not-"
            "from-scratch configs/experiment/lra/transformer-lra-pathx-"
            "small.yaml (warmup 5000, linear head, lines 9, 36-38)"
        ),
    ),
    ("pathx256", "transformer", "spt"): dict(
        hidden_dim=128, num_layers=5, num_heads=4, intermediate_dim=512,
        activation="gelu", position_embedding="rotary+sinusoidal",
        max_wavelength=10000,
        rotary_disable_half=False, rotary_scope="head", dropout=0.0,
        pooling="max", learning_rate=5e-4, pretrain_learning_rate=0.001,
        batch_size=32, pretrain_batch_size=8, weight_decay=0.0, epochs=200,
        pretrain_epochs=200, schedule="constant", warmup_steps=5000,
        final_norm=True, embedding_dropout=None, adam_beta_2=0.999,
        weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch",
        pretrain_objective="masked", pretrain_loss="ce",
        pretrain_schedule="constant", pretrain_warmup_steps=5000,
        source=(
            "derived: Never Train from Scratch Table 4 PathX row "
            "(Transformer + Rotary + Masked SPT) at 256x256"
        ),
    ),
    ("listops", "s4", "spt"): dict(
        learning_rate=0.001, pretrain_learning_rate=0.001, batch_size=16,
        pretrain_batch_size=128, pretrain_epochs=200,
        schedule="constant", warmup_steps=2000, schedule_steps=None,
        pretrain_objective="masked", pretrain_loss="ce",
        pretrain_schedule="constant", pretrain_warmup_steps=2000,
        source=(
            "Never Train from Scratch, Table 5 (S4 + SPT, ListOps); "
            "IdoAmos/not-from-scratch configs/experiment/lra/s4-lra-"
            "listops.yaml (constant_warmup 2000, lines 5, 37)"
        ),
    ),
    ("text", "s4", "spt"): dict(
        learning_rate=5e-4, pretrain_learning_rate=5e-4, batch_size=16,
        pretrain_batch_size=8, pretrain_epochs=200,
        schedule="cosine", warmup_steps=5000, schedule_steps=50000,
        pretrain_objective="masked", pretrain_loss="ce",
        pretrain_schedule="constant", pretrain_warmup_steps=1000,
        source=(
            "Never Train from Scratch, Table 5 (S4 + SPT, Text); "
            "IdoAmos/not-from-scratch configs/experiment/lra/s4-lra-"
            "imdb.yaml (cosine_warmup 5000 / 50000, lines 5, 41-42)"
        ),
    ),
    ("retrieval", "s4", "spt"): dict(
        learning_rate=5e-4, pretrain_learning_rate=5e-4, batch_size=256,
        pretrain_batch_size=8, pretrain_epochs=200,
        schedule="constant", warmup_steps=2500, schedule_steps=None,
        pretrain_objective="masked", pretrain_loss="ce",
        pretrain_schedule="constant", pretrain_warmup_steps=2500,
        source=(
            "Never Train from Scratch, Table 5 (S4 + SPT, Retrieval); "
            "IdoAmos/not-from-scratch configs/experiment/lra/s4-lra-"
            "aan.yaml (constant_warmup 2500, lines 5, 9)"
        ),
    ),
    ("image", "s4", "spt"): dict(
        learning_rate=0.001, pretrain_learning_rate=0.001, batch_size=512,
        pretrain_batch_size=32, pretrain_epochs=200,
        schedule="cosine", warmup_steps=1000, schedule_steps=200000,
        pretrain_objective="masked", pretrain_loss="l1",
        pretrain_schedule="constant", pretrain_warmup_steps=1000,
        source=(
            "Never Train from Scratch, Table 5 (S4 + SPT, Image); "
            "IdoAmos/not-from-scratch configs/experiment/lra/s4-lra-"
            "cifar.yaml (cosine_warmup 1000 / 200000, lines 5, 41) and "
            "s4-lra-cifar-mlm.yaml (L1, line 30)"
        ),
    ),
    ("pathfinder", "s4", "spt"): dict(
        learning_rate=0.001, pretrain_learning_rate=0.001, batch_size=64,
        pretrain_batch_size=8, pretrain_epochs=200,
        schedule="constant", warmup_steps=2500, schedule_steps=None,
        pretrain_objective="masked", pretrain_loss="ce",
        pretrain_schedule="constant", pretrain_warmup_steps=2500,
        source=(
            "Never Train from Scratch, Table 5 (S4 + SPT, Pathfinder); "
            "IdoAmos/not-from-scratch configs/experiment/lra/s4-lra-"
            "pathfinder.yaml (constant_warmup 2500, lines 5, 9)"
        ),
    ),
    ("pathx", "s4", "spt"): dict(
        pooling="max", learning_rate=0.001, pretrain_learning_rate=0.001,
        batch_size=64, pretrain_batch_size=8, pretrain_epochs=200,
        schedule="cosine", warmup_steps=10000, schedule_steps=500000,
        pretrain_objective="masked", pretrain_loss="ce",
        pretrain_schedule="constant", pretrain_warmup_steps=5000,
        source=(
            "Never Train from Scratch, Table 5 (S4 + SPT, PathX); "
            "IdoAmos/not-from-scratch configs/experiment/lra/s4-lra-"
            "pathx.yaml (cosine_warmup 10000 / 500000, lines 5-9)"
        ),
    ),
    ("listops", "dlr", "spt"): dict(
        learning_rate=5e-4, pretrain_learning_rate=0.001, batch_size=16,
        pretrain_batch_size=128, pretrain_epochs=200,
        pretrain_objective="masked", pretrain_loss="ce",
        pretrain_schedule="constant", pretrain_warmup_steps=2000,
        source="Never Train from Scratch, Table 5 (DLR + SPT, ListOps)",
    ),
    ("text", "dlr", "spt"): dict(
        learning_rate=0.001, pretrain_learning_rate=5e-4, batch_size=16,
        pretrain_batch_size=8, pretrain_epochs=200,
        pretrain_objective="masked", pretrain_loss="ce",
        pretrain_schedule="constant", pretrain_warmup_steps=1000,
        source="Never Train from Scratch, Table 5 (DLR + SPT, Text)",
    ),
    ("image", "dlr", "spt"): dict(
        learning_rate=0.001, pretrain_learning_rate=0.001, batch_size=64,
        pretrain_batch_size=32, pretrain_epochs=200,
        pretrain_objective="masked", pretrain_loss="l1",
        pretrain_schedule="constant", pretrain_warmup_steps=1000,
        source=(
            "Never Train from Scratch, Table 5 (DLR + SPT, Image); "
            "IdoAmos/not-from-scratch configs/experiment/lra/dlr-lra-"
            "cifar-mlm.yaml (L1, line 27)"
        ),
    ),
    ("pathx", "dlr", "spt"): dict(
        pooling="max", learning_rate=5e-4, pretrain_learning_rate=5e-4,
        batch_size=64, pretrain_batch_size=8, pretrain_epochs=200,
        pretrain_objective="masked", pretrain_loss="ce",
        pretrain_schedule="constant", pretrain_warmup_steps=5000,
        source="Never Train from Scratch, Table 5 (DLR + SPT, PathX)",
    ),
    ("pathx256", "s4", "spt"): dict(
        pooling="max", learning_rate=0.001, pretrain_learning_rate=0.001,
        batch_size=64, pretrain_batch_size=8, pretrain_epochs=200,
        schedule="cosine", warmup_steps=10000, schedule_steps=500000,
        pretrain_objective="masked", pretrain_loss="ce",
        pretrain_schedule="constant", pretrain_warmup_steps=5000,
        source=(
            "Never Train from Scratch, C.1.2 (PathX-256, S4 + SPT: the "
            "PathX configuration, IdoAmos/not-from-scratch configs/"
            "experiment/lra/s4-lra-pathx.yaml lines 5-9)"
        ),
    ),
}

# YCTFS's early stopping and SWA, which the NTFS code does not run.
_NO_YCTFS_CALLBACKS = dict(early_stopping_patience=None,
                           swa_start_fraction=None, swa_learning_rate=None)
for _key, _row in TECHNIQUE.items():
    if _key[1] == "transformer":
        for _name, _value in _NO_YCTFS_CALLBACKS.items():
            _row.setdefault(_name, _value)
        if _key[0] in PADDED_TASKS:  # attention without a mask (above)
            _row.update(mask_semantics="longest", bucket_step=None)
# The DLR layer reads the padding up to each batch's longest row (above).
for _key, _row in PAPER.items():
    if _key[1] == "dlr" and _key[0] in PADDED_TASKS:
        _row.update(read_padding="longest", bucket_step=None)

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
        # no windows: the local attention cannot be causal (see above)
        attention_window=None,
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
