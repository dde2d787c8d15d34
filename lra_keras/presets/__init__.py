"""The papers' tables as literal rows, one module per source.

- `yctfs`: You Can Train from Scratch, Tables 1, 5-7 and A.2: the
  Transformer, gMLP and conv rows; S4/S5/MEGA with its techniques;
  Pathfinder on three sets.
- `ntfs`: Never Train from Scratch, Tables 4, 5, 8 and C.1: the
  Transformer on Path-X, DLR; self-pretraining.
- `s4`: state-spaces/s4 `configs/experiment/lra/*.yaml`: S4 and S4D.
- `s5`: lindermanlab/S5 `bin/run_experiments/*.sh`: S5.
- `lra`: google-research/long-range-arena: its efficient attentions
  (linear, Performer, Linformer) on the Transformer rows.
- `lru`: the LRU on the S5 rows' training setup (derived).
- `rtf`: ruke1ire/RTF `experiments/state-spaces/configs/experiment/lra/
  rtf-*.yaml`: RTF.
- `mega`: facebookresearch/mega `README.lra.md` and
  `fairseq/models/lra/model.py`: MEGA.
- `megalodon`: the MEGA rows with the MEGALODON block (derived).
- `quick`: this library's `quick` preset (an installation check).
- `small`: this library's `small` preset (every family at one CPU-sized
  budget, full sequence lengths).
- `expected`: the accuracies of the papers' result tables.

`PAPER[(task, model)]` is the paper preset trained without extra
techniques, `TECHNIQUE[(task, model, technique)]` a technique's overrides,
`AUGMENT[(task, model)]` the overrides of `--augment`. Every row cites its
source in `source` ("derived:" where no paper runs that (task, model), and
from which row); tests check the derived rows against the rows they come
from. `lra_keras.hparams.get_hparams` merges them.

Conventions shared by every family, stated once here (not per row):
- BatchNorm is `MaskedBatchNormalization`. Its default takes statistics
  over real tokens only; the S4 and S5 paper rows count padding as their
  code does (`batch_norm_count_padding`: "longest", up to the batch's
  longest row, in the S4 rows; True, every position, in the S5 rows;
  `presets.s4.unmasked_blocks`). MEGA's ScaleNorm is
  `ScaleNormalization` (`norm="scale"`); DLR's norm is LayerNorm (NTFS
  C.1.3).
- Tokens go through `keras.layers.Embedding`; the S4, S5 and MEGA pixel
  rows through a linear encoder of the normalised grey value
  (`input_encoder="linear"`, `layers.PixelEncoder`) as their code does.
- Warmup+cosine (S4, S5) schedules are "cosine" with the source's warmup
  steps, MEGA's warmup + linear decay "linear". YCTFS trains with AdamW
  and a rate "reduced on training plateau and during the last 10% of the
  training epochs" (A.2): schedule "plateau", whose values (`plateau_*`,
  `final_decay_*` in `hparams.COMMON_KEYS`) are the authors' scheduler
  configs.
- A source's separate rate for the SSM parameters is `ssm_learning_rate`
  (and `dt_learning_rate` says whether dt shares it); which weights decay
  is `weight_decay_on`, AdamW's moments and epsilon `adam_*`; the head,
  pooling, embedding initialisation and final norm are the family's
  shared keys (`models.families.SHARED_KEYS`).

Name mapping from the papers: "Embed dim"/"Features"/d_model/D ->
hidden_dim, "Depth"/n_layers -> num_layers, "Num attn heads" -> num_heads,
"FF size" -> intermediate_dim, "H (hidden dim)" -> intermediate_dim,
"Rotary base freq" -> max_wavelength, "Max epochs" -> epochs, d_state/P ->
state_dim, J -> num_blocks, MEGA z_dim/n_dim/hidden dim -> key_dim/ema_dim/
intermediate_dim, "(FT, PT)" -> (learning_rate, pretrain_learning_rate) and
(batch_size, pretrain_batch_size).
"""

from lra_keras.presets import lra
from lra_keras.presets import lru
from lra_keras.presets import mega
from lra_keras.presets import megalodon
from lra_keras.presets import ntfs
from lra_keras.presets import rtf
from lra_keras.presets import s4
from lra_keras.presets import s5
from lra_keras.presets import yctfs
from lra_keras.presets.expected import EXPECTED
from lra_keras.presets.expected import EXPECTED_LRA
from lra_keras.presets.expected import expected_accuracy
from lra_keras.presets.ntfs import COMPUTE_TIED
from lra_keras.presets.ntfs import SPT_LRA_SIZED
from lra_keras.presets.quick import QUICK
from lra_keras.presets.quick import QUICK_FAMILY
from lra_keras.presets.quick import QUICK_TASK
from lra_keras.presets.quick import QUICK_TASK_FAMILY
from lra_keras.presets.small import SMALL
from lra_keras.presets.small import SMALL_FAMILY
from lra_keras.presets.small import SMALL_TASK
from lra_keras.presets.small import SMALL_TASK_FAMILY
from lra_keras.presets.yctfs import YCTFS_TECHNIQUES

# The scaled presets: their common row and rows per task, family and
# (task, family), applied over the paper row in that order.
SCALED = {
    "quick": (QUICK, QUICK_TASK, QUICK_FAMILY, QUICK_TASK_FAMILY),
    "small": (SMALL, SMALL_TASK, SMALL_FAMILY, SMALL_TASK_FAMILY),
}
PRESETS = ("paper", *SCALED)

# YCTFS's published rows are its runs with its training techniques: with
# `--augment` (and no technique with rows of its own) they apply too.
AUGMENT_TECHNIQUE_ROWS = "multitask"


def _merge(*tables):
    merged = {}
    for table in tables:
        for key, row in table.items():
            if key in merged:
                raise ValueError(f"Two preset modules define {key}.")
            merged[key] = row
    return merged


PAPER = _merge(yctfs.PAPER, ntfs.PAPER, s4.PAPER, s5.PAPER, mega.PAPER,
               lra.PAPER, lru.PAPER, rtf.PAPER, megalodon.PAPER)
TECHNIQUE = _merge(yctfs.TECHNIQUE, ntfs.TECHNIQUE)
AUGMENT = _merge(yctfs.AUGMENT)
