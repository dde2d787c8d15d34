"""MEGALODON: the MEGA rows' settings with the MEGALODON block (derived).

The MEGALODON paper (Ma et al. 2024, arXiv 2404.08801) reports LRA results
(Table 6: ListOps 63.79, Pathfinder 98.13, average 88.63), but its
appendix with the LRA settings is not among this project's papers, and the
authors' code (XuezheMax/megalodon at cff8ba5) is the language model
without LRA configs. These rows take, for each task, the MEGA row of the
same authors' LRA commands (`presets.mega`: width, depth, z / value / FFN
widths, EMA dimensions, chunking, dropout, EMA truncation, embedding, head
and the whole training setup), minus what MEGALODON replaced:

- `attention_activation` (MEGALODON's attention is softmax over
  normalised queries and keys), `max_positions` (rotary positions, no
  relative bias table), `prenorm` (MEGALODON's blocks are pre-norm with
  the two-hop residual) and MEGA's `norm` and its batch-norm cells
  (MEGALODON normalises with timestep norms, `norm="timestep"`);
- `norm_groups`: the largest divisor of the width that is <= 32, the
  code's `norm_num_groups` default (32) where the width allows it (ListOps'
  width 80: 20 groups).

One head (the code's `num_heads`, 1 in its 200M configuration), rotary base
10000 (its default), no SwiGLU and no FFN rescale (its `ModelConf`
defaults). All of MEGALODON's weights decay (its AdamW over
`model.parameters()`, megalodon/optim/optimizer.py), as the MEGA rows'
`weight_decay_on="all"`.
"""

from lra_keras.presets import mega

# The MEGA row's keys that MEGALODON's block does not have.
MEGA_ONLY = ("attention_activation", "max_positions", "prenorm", "norm",
             "batch_norm_momentum", "batch_norm_unbiased")


def norm_groups(width, most=32):
    """The largest divisor of `width` that is at most `most`."""
    return max(g for g in range(1, most + 1) if width % g == 0)


def derived(task):
    return (
        f"derived: the {task} MEGA row (presets.mega) with the MEGALODON "
        "block (XuezheMax/megalodon cff8ba5; the paper's LRA settings are "
        "not available here), norm_groups the largest divisor <= 32 of the "
        "width"
    )


PAPER = {
    (task, "megalodon"): dict(
        {k: v for k, v in row.items() if k not in MEGA_ONLY + ("source",)},
        norm_groups=norm_groups(row["hidden_dim"]),
        source=derived(task),
    )
    for (task, model), row in mega.PAPER.items()
    if model == "mega"
}
