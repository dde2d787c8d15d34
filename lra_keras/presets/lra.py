"""LRA's efficient Transformers, as LRA's code configures them.

LRA (Tay et al. 2021) trains every xformer with one backbone
configuration per task (appendix A.1; google-research/long-range-arena
`lra_benchmarks/<task>/configs/base_*_config.py`, each model's config
setting only `model_type` and its attention's own options).

ListOps, Text and Retrieval (`LRA_BACKBONE`, `LRA_TASK`, `lra_row`) take
that backbone from LRA's code: pre-norm blocks without attention biases
(`attention_bias=False`), GELU MLPs (JAX's tanh form, `"gelu_tanh"`),
dropout 0.1, token embeddings
N(0, 1), summed sinusoidal positions, a final LayerNorm; a CLS token
prepended and pooled (`cls_token=True`, `pooling="first"`;
`layers.ClassToken`) under `Dense(mlp_dim), relu, Dense`; on Retrieval
no CLS (the dual encoder calls its encoder without `classifier`), each
document's first token pooled and `[u, v]` under two hidden layers
(`head="mlp2"`); its widths (ListOps 4 x 512, 8 heads, MLP 1024; Text 4
x 256, 4 heads, MLP 1024 at its code's 1000 bytes; Retrieval 4 x 128, 4
heads, MLP 512); its optimiser (flax's Adam(0.9, 0.98, eps 1e-9) with
decoupled weight decay 0.1 of every weight) and schedule (`schedule=
"rsqrt"`: `0.05 * min(1, t / warmup) / sqrt(max(t, warmup))`, warmup 1000
on ListOps, 8000 on Text and Retrieval, `optimizers.RsqrtDecay`), batch
32, for its number of steps (`train_steps`: 5,000, 20,000, 5,000); its
softmax cross-entropy over both classes on the two-class tasks
(`lra_benchmarks/utils/train_utils.py` lines 152-166; `matching/train.py`
line 84 passes `num_classes=2`); dropout 0.1 on the attention weights
(the encoders' `attention_dropout_rate`, `attention_dropout`; none for
the linear, Performer and Reformer attentions, whose LRA code drops no
weights; nor BigBird's non-causal attention, `_LRA_UNDROPPED`),
flax's LayerNorm epsilon 1e-6 (`layer_norm_epsilon`), its
head's lecun_normal kernels (`head_dense_init="lecun"`) and its MLP
blocks' biases drawn from N(0, 1e-6^2) (`ffn_bias_init_std`).
The Sparse Transformer takes the CLS variant of its pattern
(`sparse_cls_token`), the Sinkhorn Transformer its encoder's own
readout, the mean under one Dense (see `_ATTENTION`).

Image and Pathfinder (`LRA_IMAGE`, `_IMAGE_MODELS`, `lra_image_row`) take
each model's own configuration, as LRA's image configs give every model
its own backbone (`image/configs/{cifar10,pathfinder32}/<model>_base.py`
over the base configs): widths, the attention's width (`attention_dim`,
LRA's `qkv_dim`), dropout, pooling, learned positions N(0, 0.02) on
CIFAR-10 (`position_init_std`) and sinusoids on Pathfinder; batch 256 /
512, 35,000 / 62,400 steps, rate 5e-4 / 1e-3 under a linear warmup and a
cosine over `num_train_steps` from its end, no weight decay (Sinkhorn's
CIFAR-10 config: 0.7). Two of LRA's CIFAR-10 configs do not run as
shipped; their rows read what they meant, said at the rows (BigBird's
`num_head`, Sinkhorn's CLS pooling).

LRA's own Transformer, the baseline of its Table 1, is the family
`lra_transformer` (the Transformer's block, dense softmax attention):
its rows are the backbone itself on ListOps, Text and Retrieval, and its
`transformer_base.py` configs on Image and Pathfinder, and on Path-X and
PathX-256, where only it has configs in LRA's code
(`image/configs/pathfinder128/` and `pathfinder256/`, read as
`LRA_IMAGE["pathx"]` and `["pathx256"]`). The ten xformers have no
configs there: their Path-X and PathX-256 rows put the attentions on
this library's Path-X Transformer rows (NTFS Table 4), and say
"derived". LRA's loss is taken everywhere: a
softmax cross-entropy over both classes on the two-class tasks
(`binary_logit` left at its default, False).

What the attentions do with the padding mask follows each one's LRA
code (`_MASKS`, `mask_semantics`): flax's pair mask in the Synthesizer,
the Sparse Transformer and the Longformer (dense attention under their
masks: a padded query attends uniformly to every key), no mask at all in
the linear, Performer, Linformer and Reformer code, and in the local
and BigBird attentions their inputs padded by a block of zeros counted
real, then in the local attention the pair mask of contiguous blocks
laid over its strided groups, in BigBird's padded keys masked and padded
queries' outputs zeroed, in the Sinkhorn attention its own groups under
those contiguous pair masks and its sorted ones under their union over
the blocks (`"lra_blocks"`); the rows of those seven take
full-length batches, as LRA pads every batch to the task's length. On
the image tasks LRA's encoders make black pixels padding
(`src_padding_mask = inputs > 0`, `transformer.py` line 148), the CLS
token taking the first pixel's mask: those ten rows copy it
(`pixel_padding`). The Sinkhorn
encoder's readout on ListOps, Text, Image and Pathfinder,
`jnp.mean(encoded, axis=1)`, averages the padding (and the black
pixels) in: its rows pool it too (`pool_padding=True`), over
full-length batches.

LRA's own code has further quirks these rows do not copy, said here and
in the README: LRA's BigBird, when causal, falls back to dense attention
under the causal and pair masks (`bigbird_attention.py` lines 562-624), where
`"lra_blocks"` keeps its pattern (no LRA row is causal; the causal
self-pretraining of `--technique spt` is this library's); and its
public Retrieval trainer builds the single encoder and does not run as
shipped (google-research/long-range-arena issue #42); the Retrieval rows
read the dual encoders every model file defines.

Cells of the attentions themselves, from LRA's code:
- positions: `AddPositionEmbs` with `posemb_init=None` (`learn_pos_emb`
  False: the text configs and Pathfinder32), the sinusoidal embedding
  summed into the inputs (`linear_transformer.py`, `performer.py`,
  `linformer.py` encoders): `position_embedding="sinusoidal"`, base
  10000; CIFAR-10's configs learn them (`learn_pos_emb=True`, N(0, 0.02));
- Performer: on ListOps the softmax kernel (FAVOR+) with `nb_features`
  2 and `ortho_scaling` 0 (`listops/configs/performer_base.py:25-27`:
  `attention_fn_cls="softmax"`), orthogonal features, redrawn features;
  everywhere else the encoder's default `attention_fn_cls="generalized"`
  (`performer.py:31`): `relu(x) + 1e-3` features of the queries and
  keys themselves, no random features (`performer_attention.py:263-309`,
  `features_type="deterministic"`): `performer_kernel="relu"`;
- Local attention: `block_size` 50 (`local.py` lines 37, 114, 312; 64
  in the image configs), and
  the groups the code forms: `jnp.reshape(query, (bs, block_size,
  num_query_blocks, ...))` with attention over axis 1 puts position `i *
  n + j` in group `j`, so a "block" is strided
  (`local_layout="strided"`; `"contiguous"` is the method as the paper
  describes it);
- Synthesizer: `synthesizer_mode="random"` with the dot products kept,
  on every task (`synthesizer.py` lines 38-39; the text config sets
  `ignore_dot_product` and `factorized_random` outside `config.model`,
  which `train.py` never passes, lines 175-188);
- Sparse Transformer: the fixed pattern with blocks of 50 and 10
  summary positions, causal: `train_utils.get_model`, which every
  trainer calls, passes `Fixed1Pattern(block_size=50)` and
  `Fixed2Pattern(block_size=50, c=10)` (lines 73-78; the encoder's own
  defaults, 128 and 32 at `sparse_transformer.py` lines 43-46, are never
  used); with the CLS variant (first row and column all ones,
  `sparse_attention.py` lines 185-190) wherever the encoder pools "CLS"
  (`sparse_cls_token`);
- Longformer: a sliding window of 512 and no global position (LRA's
  classifiers pass no `global_mask`);
- BigBird: blocks of 64 (the image configs set it, the others take the
  default), 3 random blocks, the table seeded by the layer's index;
- Reformer: 10 buckets, 1 hash round, chunks of L / 10 (its defaults),
  and the attention as its code computes it, where it departs from the
  paper (`reformer_variant="lra"`; `layers.lsh_attention` lists how):
  inputs padded to a multiple of 10, unnormalised shared keys scored
  `q . k sqrt(d)`, neither the own position nor padding masked, the same
  rotations in every layer, the (heads, L, d) outputs reshaped to (L,
  heads d) without a transpose, no output projection;
- Sinkhorn: blocks of 50, strided as the local attention's, softmax
  sorting (`sinkhorn_attention.py` defaults), the local and sorted
  attentions summed; its sorting einsum `'bskhd,bnhl->bsnhd'` (line
  382), which sums the blocks and the permutation apart, so that every
  sorted block is the sum of all blocks and the sorting network (25
  logits, `max_num_blocks`) gets no gradient: `sinkhorn_sorting="lra"`,
  `sinkhorn_max_blocks=25` (the method's `"permutation"` is the
  family's default); its `sinkhorn_operator` (the `"sinkhorn"` sort,
  which no LRA row takes) is not copied;
- Linformer: `low_rank_features` 16 (`linformer_attention.py:47`; the
  encoders never pass it, so the text config"s 32 is not read).

LRA Table 1 reports Path-X as failed for every model ("all models do
not learn anything on Path-X", section 4); the Path-X and PathX-256 rows
put the attentions on this library's Path-X Transformer rows (Never Train
from Scratch Table 4), so that they can be tried there.
"""

LINEAR = ("linear attention (elu + 1 features; lra_benchmarks/models/"
          "linear_transformer/linear_attention.py)")
PERFORMER = ("Performer attention (lra_benchmarks/models/performer/"
             "performer_attention.py: FAVOR+ with 2 features on ListOps, "
             "listops/configs/performer_base.py:25-27; elsewhere the "
             "default generalized attention, relu + 1e-3 features, "
             "performer.py:31, performer_attention.py:263-309)")
LOCAL = ("local attention (lra_benchmarks/models/local/local_attention.py; "
         "block_size 50 as local.py passes it; the groups its reshape forms, "
         "strided: local_layout='strided')")
SYNTHESIZER = ("random Synthesizer attention added to the dot products "
               "(lra_benchmarks/models/synthesizer/synthesizer.py defaults "
               "synthesizer_mode='random', ignore_dot_product=False: the "
               "text config's settings are not under config.model, so not "
               "passed)")
SPARSE = ("Sparse Transformer fixed pattern (lra_benchmarks/utils/"
          "train_utils.py lines 73-78, for every task: Fixed1Pattern(50) | "
          "Fixed2Pattern(50, c=10), causal; the CLS variant where the "
          "encoder pools CLS)")
LONGFORMER = ("Longformer sliding window (lra_benchmarks/models/longformer/"
              "longformer.py: sliding_window_size 512; no global_mask "
              "passed, so no global position)")
BIGBIRD = ("BigBird attention (lra_benchmarks/models/bigbird/bigbird.py: "
           "block_size 64, num_rand_blocks 3, connectivity_seed = the "
           "layer's index)")
REFORMER = ("Reformer LSH attention (lra_benchmarks/models/reformer/"
            "reformer_attention.py defaults n_buckets 10, n_hashes 1, never "
            "overridden; as its code runs: inputs padded to a multiple of "
            "10, unnormalised shared keys, scores times sqrt(d), nothing "
            "masked, the same rotations in every layer, the heads' outputs "
            "reshaped into positions without a transpose, no output "
            "projection, lines 128-339)")
SINKHORN = ("Sinkhorn attention (lra_benchmarks/models/sinkhorn_transformer/"
            "sinkhorn_attention.py: block_size 50, strided as its reshape "
            "forms the blocks, sort_activation 'softmax', max_num_blocks "
            "25 (line 216); its sorting einsum (line 382), which "
            "makes every sorted block the sum of all blocks)")
LINFORMER = ("Linformer attention (lra_benchmarks/models/linformer/"
             "linformer_attention.py; low_rank_features 16, line 47)")
SOFTMAX = ("dense softmax attention (lra_benchmarks/models/transformer/"
           "transformer.py: flax's SelfAttention, no biases, line 59)")


PATHX_TRANSFORMER = (
    "derived: the {task} Transformer row (presets.ntfs, Never Train from "
    "Scratch Table 4 and C.1) with LRA's {what}; sinusoidal positions as "
    "LRA's encoders; LRA Table 1 reports Path-X failed for every model"
)


def derived_pathx(task, what):
    return PATHX_TRANSFORMER.format(task=task, what=what)


PAPER = {
    ("pathx", "linear_transformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        source=derived_pathx("pathx", LINEAR),
    ),
    ("pathx", "performer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        num_random_features=256, orthogonal_scaling=0,
        performer_kernel="relu",
        source=derived_pathx("pathx", PERFORMER),
    ),
    ("pathx", "linformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        projection_dim=16,
        source=derived_pathx("pathx", LINFORMER),
    ),
    ("pathx256", "linear_transformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        source=derived_pathx("pathx256", LINEAR),
    ),
    ("pathx256", "performer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        num_random_features=256, orthogonal_scaling=0,
        performer_kernel="relu",
        source=derived_pathx("pathx256", PERFORMER),
    ),
    ("pathx256", "linformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        projection_dim=16,
        source=derived_pathx("pathx256", LINFORMER),
    ),
    ("pathx", "local"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        local_block_size=50, local_layout="strided",
        source=derived_pathx("pathx", LOCAL),
    ),
    ("pathx256", "local"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        local_block_size=50, local_layout="strided",
        source=derived_pathx("pathx256", LOCAL),
    ),
    ("pathx", "synthesizer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        synthesizer_mode="random", synthesizer_dot_product=True,
        source=derived_pathx("pathx", SYNTHESIZER),
    ),
    ("pathx256", "synthesizer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        synthesizer_mode="random", synthesizer_dot_product=True,
        source=derived_pathx("pathx256", SYNTHESIZER),
    ),
    ("pathx", "sparse_transformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        sparse_block_size=50, sparse_summary_size=10,
        source=derived_pathx("pathx", SPARSE),
    ),
    ("pathx", "longformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        longformer_window=512, longformer_global_tokens=0,
        source=derived_pathx("pathx", LONGFORMER),
    ),
    ("pathx", "bigbird"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        bigbird_block_size=64, bigbird_random_blocks=3,
        source=derived_pathx("pathx", BIGBIRD),
    ),
    ("pathx256", "sparse_transformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        sparse_block_size=50, sparse_summary_size=10,
        source=derived_pathx("pathx256", SPARSE),
    ),
    ("pathx256", "longformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        longformer_window=512, longformer_global_tokens=0,
        source=derived_pathx("pathx256", LONGFORMER),
    ),
    ("pathx256", "bigbird"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        bigbird_block_size=64, bigbird_random_blocks=3,
        source=derived_pathx("pathx256", BIGBIRD),
    ),
    ("pathx", "reformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        reformer_buckets=10, reformer_hashes=1, reformer_chunk_size=None,
        reformer_variant="lra", mask_semantics="none",
        source=derived_pathx("pathx", REFORMER),
    ),
    ("pathx256", "reformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        reformer_buckets=10, reformer_hashes=1, reformer_chunk_size=None,
        reformer_variant="lra", mask_semantics="none",
        source=derived_pathx("pathx256", REFORMER),
    ),
    ("pathx", "sinkhorn"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        local_block_size=50, local_layout="strided", sinkhorn_sort="softmax",
        sinkhorn_iterations=1, sinkhorn_sorting="lra", sinkhorn_max_blocks=25,
        source=derived_pathx("pathx", SINKHORN),
    ),
    ("pathx256", "sinkhorn"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        local_block_size=50, local_layout="strided", sinkhorn_sort="softmax",
        sinkhorn_iterations=1, sinkhorn_sorting="lra", sinkhorn_max_blocks=25,
        source=derived_pathx("pathx256", SINKHORN),
    ),
}

# === ListOps, Text, Retrieval: LRA's backbone ===
# One backbone per task, every xformer on it (google-research/
# long-range-arena lra_benchmarks/listops/configs/base_listops_config.py,
# text_classification/configs/base_tc_config.py,
# matching/configs/base_match_config.py; the xformers' configs set only
# `model_type`, and Performer's ListOps features, Linformer's and the
# Synthesizer's text options, which `train.py` never passes; see the module
# docstring).
LRA_BACKBONE = dict(
    # encoders (models/transformer/transformer.py; the xformers' copies)
    # MlpBlock's nn.gelu, common_layers.py line 157: JAX's tanh form
    activation="gelu_tanh",
    dropout=0.1,  # dropout_rate: blocks, MLP and embedded tokens
    embedding_dropout=None,
    # the encoders' attention_dropout_rate default (e.g. local.py lines
    # 34 and 113; the trainers pass none): dropout on the attention
    # weights, an independent mask per element (broadcast_dropout=False,
    # e.g. local.py line 75); the `_LRA_UNDROPPED` models drop none
    attention_dropout=0.1,
    # flax's nn.LayerNorm, epsilon 1e-6 (the blocks' and encoder_norm)
    layer_norm_epsilon=1e-6,
    embedding_init="normal",  # Embed: normal(stddev=1.0), line 143
    position_embedding="sinusoidal",  # AddPositionEmbs, posemb_init None
    attention_bias=False,  # SelfAttention(bias=False), line 59
    dense_init="keras",  # xavier_uniform kernels, lines 57 and 151
    # MlpBlock's bias_init normal(stddev=1e-6) (common_layers.py line 152;
    # every encoder's MLP block)
    ffn_bias_init_std=1e-6,
    final_norm=True,  # encoder_norm, line 205
    cls_token=True,  # classifier_pool "CLS", lines 148-156
    pooling="first",
    head="mlp",  # classifier_head: Dense(mlp_dim), relu, Dense
    head_activation="relu",
    # classifier_head's and classifier_head_dual's nn.Dense layers take
    # flax's default lecun_normal kernels (common_layers.py lines
    # 166-241)
    head_dense_init="lecun",
    binary_logit=False,  # softmax cross-entropy over both classes
    # optimiser (listops/train.py lines 73-78, the same in matching and
    # text_classification): flax's Adam, decoupled decay of every weight
    learning_rate=0.05,  # the schedule's constant
    schedule="rsqrt",  # "constant * linear_warmup * rsqrt_decay"
    weight_decay=0.1,
    weight_decay_on="all",
    adam_beta_1=0.9,
    adam_beta_2=0.98,
    adam_epsilon=1e-9,
    adam_epsilon_style="torch",  # eps after sqrt(v_hat), flax's Adam
    batch_size=32,
    early_stopping_patience=None,
    final_decay_factor=0.1,
    head_hidden_dim=None,
)
# Per task: LRA's widths, warmup and steps (`num_train_steps`; its
# trainers count steps: ListOps's 5,000 steps of 32 over 96,000 trees are
# 1.67 epochs, Text's 20,000 over 25,000 reviews 25.6, Retrieval's 5,000
# over 147,086 pairs 1.09; `train_steps` cuts the last epoch short).
LRA_TASK = {
    "listops": dict(sequence_length=2000, hidden_dim=512, num_heads=8,
                    num_layers=4, intermediate_dim=1024,
                    head_hidden_dim=1024, warmup_steps=1000,
                    train_steps=5000),
    # text_classification/configs/base_tc_config.py: max_length 1000
    # (the paper's section 2.2 speaks of up to 4K bytes; the code is read)
    "text": dict(sequence_length=1000, hidden_dim=256, num_heads=4,
                 num_layers=4, intermediate_dim=1024, head_hidden_dim=1024,
                 warmup_steps=8000, train_steps=20000),
    # matching/train.py: TransformerDualEncoder calls its encoder without
    # `classifier`, so no CLS token is prepended and classifier_head_dual
    # pools each document's first token; interaction None: [u, v], then
    # Dense(mlp_dim), relu, Dense(mlp_dim // 2), relu, Dense(2)
    # (common_layers.py lines 225-241)
    "retrieval": dict(sequence_length=4000, hidden_dim=128, num_heads=4,
                      num_layers=4, intermediate_dim=512,
                      head_hidden_dim=512, warmup_steps=8000,
                      train_steps=5000,
                      cls_token=False, head="mlp2", pair_features="concat"),
}
LRA_SOURCE = (
    "Long Range Arena's {task} backbone (google-research/long-range-arena "
    "lra_benchmarks/{config}: widths, pooling, rate 0.05 x linear "
    "warmup x rsqrt decay, Adam(0.9, 0.98, 1e-9), weight decay 0.1, "
    "{steps}) with its {what}"
)
_CONFIGS = dict(
    listops=("listops/configs/base_listops_config.py",
             "5,000 steps"),
    text=("text_classification/configs/base_tc_config.py",
          "20,000 steps"),
    retrieval=("matching/configs/base_match_config.py",
               "5,000 steps"),
)
# Each xformer's own cells, on every task whose row LRA's configs give
# (Performer's ListOps kernel and features: `lra_row`, from
# listops/configs/performer_base.py lines 25-27).
_ATTENTION = dict(
    # LRA's own Transformer (Table 1's baseline): the backbone itself
    lra_transformer=(SOFTMAX, {}),
    linear_transformer=(LINEAR, {}),
    performer=(PERFORMER, dict(num_random_features=256,
                               orthogonal_scaling=0,
                               performer_kernel="relu")),
    linformer=(LINFORMER, dict(projection_dim=16)),
    local=(LOCAL, dict(local_block_size=50, local_layout="strided")),
    synthesizer=(SYNTHESIZER, dict(synthesizer_mode="random",
                                   synthesizer_dot_product=True)),
    # LRA's encoder, pooling "CLS", builds the variant of the fixed
    # pattern whose first row and column are all ones (sparse_attention.py
    # lines 185-190; sparse_transformer.py lines 156-162), the dual
    # encoder of Retrieval too (its `classifier_pool` defaults to "CLS"),
    # where no token is prepended and each document's first token is
    # global
    sparse_transformer=(SPARSE, dict(sparse_block_size=50,
                                     sparse_summary_size=10,
                                     sparse_cls_token=True)),
    longformer=(LONGFORMER, dict(longformer_window=512,
                                 longformer_global_tokens=0)),
    bigbird=(BIGBIRD, dict(bigbird_block_size=64, bigbird_random_blocks=3)),
    reformer=(REFORMER, dict(reformer_buckets=10, reformer_hashes=1,
                             reformer_chunk_size=None,
                             reformer_variant="lra")),
    # The Sinkhorn encoder pools its own way: the mean over every position
    # under one Dense to the classes, no CLS (sinkhorn_transformer.py
    # lines 117, 193-200; any other `classifier_pool` raises, so Text,
    # whose trainer passes "CLS", does not run as shipped: its row reads
    # the mean); Retrieval's dual encoder pools as the others
    sinkhorn=(SINKHORN, dict(local_block_size=50, local_layout="strided",
                             sinkhorn_sort="softmax",
                             sinkhorn_iterations=1, sinkhorn_sorting="lra",
                             sinkhorn_max_blocks=25, cls_token=False,
                             pooling="mean", head="linear")),
)


# LRA's ten efficient Transformers, by `--model` name, and with LRA's own
# Transformer the eleven models of its Table 1.
XFORMERS = tuple(m for m in _ATTENTION if m != "lra_transformer")
LRA_MODELS = tuple(_ATTENTION)
# The xformers whose LRA attention drops no weights whatever its
# `dropout_rate`: linear_attention.py line 55 (`del dropout_rate`), the
# Performer's fast attention (performer_attention.py, no dropout), the
# Reformer's LSH attention (reformer_attention.py, no dropout; the layer
# refuses a rate for these three) and BigBird's, whose encoder is never
# causal (bigbird.py line 33) and whose non-causal branch,
# `sparse_dot_product_attention` (bigbird_attention.py line 317), takes
# no dropout (only the causal fallback passes it, lines 613-623):
# `attention_dropout` 0.
_LRA_UNDROPPED = ("linear_transformer", "performer", "reformer", "bigbird")
# What each attention's LRA code does with the `padding_mask` its encoder
# passes every block (`mask_semantics`): the Synthesizer builds flax's
# pair mask (`synthesizer_attention.py` lines 390-422, a -1e10 bias
# unless query and key are both real: a padded query attends uniformly),
# as the Transformer's flax `SelfAttention` does (`transformer.py` line
# 59), and so do the Sparse Transformer and the Longformer, which run
# dense attention under their pattern and the pair mask combined
# (`sparse_attention.py` lines 176-222, `longformer_attention.py` lines
# 85-135: a padded query attends uniformly to every key, outside its
# pattern too); the linear, Performer, Linformer and Reformer attentions
# take the argument and never read it (`linear_attention.py` lines 137-141 only
# state that decoding is unsupported; `performer_attention.py`'s
# attention functions drop `bias`; `linformer_attention.py` and
# `reformer_attention.py` name it in their signatures only), so every
# padded position is a key. LRA pads every batch to the task's length
# (`padded_batch(..., padded_shapes=[max_length])`, each task's
# `input_pipeline.py`), so those four rows take full-length batches
# (`bucket_step=None`). The local and BigBird attentions' code pads its
# inputs with `b - L % b` zero positions, a whole block when b divides
# L, and its boolean mask with -1e9, which reads as real
# (`local_attention.py` lines 228-237, `bigbird_attention.py` lines
# 484-490). The local attention reshapes its queries and keys into
# strided groups (lines 318-323) but its mask into contiguous blocks, and
# gives group j block j's pair mask (lines 342-356): its mask does not
# line up with the groups it masks. BigBird masks the padded keys and
# multiplies the padded queries' outputs by 0 (line 312). The Sinkhorn
# attention pads nothing but masks its own groups as the local one does
# and its sorted ones by the union of those pair masks over the blocks
# (`sinkhorn_attention.py` lines 401-420). Their rows copy that
# (`"lra_blocks"`), over full-length batches, as what the padding
# does depends on the batch's length.
_MASKS = dict(lra_transformer="pairs", synthesizer="pairs",
              sparse_transformer="pairs", longformer="pairs",
              linear_transformer="none", performer="none",
              linformer="none", reformer="none", local="lra_blocks",
              bigbird="lra_blocks", sinkhorn="lra_blocks")


def lra_row(task, model):
    """The row of `model` on `task` (ListOps, Text or Retrieval): LRA's
    backbone, the task's widths and schedule, the attention's cells."""
    what, cells = _ATTENTION[model]
    config, steps = _CONFIGS[task]
    row = {**LRA_BACKBONE, **LRA_TASK[task], **cells}
    if model in _LRA_UNDROPPED:
        row.update(attention_dropout=0.0)
    if task == "retrieval" and model == "sinkhorn":
        row.update(pooling="first", head="mlp2")  # the dual encoder's
    elif model == "sinkhorn":
        # `jnp.mean(encoded, axis=1)` over LRA's full-length batches
        # (sinkhorn_transformer.py line 196): the padding counted
        row.update(pool_padding=True, bucket_step=None)
    if task == "listops" and model == "performer":
        # performer_base.py lines 25-27
        row.update(num_random_features=2, performer_kernel="softmax")
    if model in _MASKS:
        row.update(mask_semantics=_MASKS[model])
        if _MASKS[model] in ("none", "lra_blocks"):
            # padded positions are keys: as many as LRA's full length has
            row.update(bucket_step=None)
    row["source"] = LRA_SOURCE.format(task=task, config=config, steps=steps,
                                      what=what)
    return row


for _task in LRA_TASK:
    for _model in _ATTENTION:
        PAPER[(_task, _model)] = lra_row(_task, _model)


# === Image and Pathfinder: each xformer's own backbone ===
# LRA's image configs give each model its own (lra_benchmarks/image/
# configs/{cifar10,pathfinder32}/<model>_base.py over base_cifar10_config.py
# and base_pathfinder32_config.py). The trainer (image/train.py lines
# 70-74, 120-131, 370-375) takes the same Adam as the text tasks, clips no
# gradient, and steps `constant * linear_warmup * cosine_decay` with
# `steps_per_cycle` = `num_train_steps`: a cosine from the warmup's end
# over that many steps, here `schedule="cosine"` with `schedule_steps` =
# train_steps + warmup_steps. The pixels enter as tokens 0..255 through an
# N(0, 1) embedding (input_pipeline.py, `normalize=False` for the
# Transformers, train.py lines 312-315).
LRA_IMAGE = {
    # base_cifar10_config.py lines 19-55: batch 256, 35,000 steps (200
    # epochs of 175), rate 5e-4, no decay, warmup 175, dropout 0.3
    # (attention dropout 0.2, line 53), CLS, learned positions N(0, 0.02)
    "image": dict(batch_size=256, train_steps=35000, learning_rate=5e-4,
                  weight_decay=0.0, warmup_steps=175, schedule="cosine",
                  schedule_steps=35175, dropout=0.3, attention_dropout=0.2,
                  cls_token=True,
                  pooling="first", position_embedding="learned",
                  position_init_std=0.02),
    # base_pathfinder32_config.py lines 18-55: batch 512, 62,400 steps
    # (200 epochs of 312), rate 1e-3, no decay, warmup 312, dropout 0.1
    # (attention dropout 0.1, line 53, the backbone's), mean pooling,
    # sinusoidal positions
    "pathfinder": dict(batch_size=512, train_steps=62400, learning_rate=1e-3,
                       weight_decay=0.0, warmup_steps=312, schedule="cosine",
                       schedule_steps=62712, dropout=0.1, cls_token=False,
                       pooling="mean", position_embedding="sinusoidal"),
    # Path-X and PathX-256: only LRA's Transformer has configs there.
    # base_pathfinder128_config.py lines 18-57: batch 64, 500,000 steps
    # (200 epochs of 2,500), rate 1e-3, no decay, warmup 2,500, global-norm
    # clipping at 1 (image/train.py lines 125-131), dropout 0.1 (attention
    # 0.1), mean pooling, learned positions N(0, 0.02)
    "pathx": dict(batch_size=64, train_steps=500000, learning_rate=1e-3,
                  weight_decay=0.0, warmup_steps=2500, schedule="cosine",
                  schedule_steps=502500, gradient_clipnorm=1.0, dropout=0.1,
                  cls_token=False, pooling="mean",
                  position_embedding="learned", position_init_std=0.02),
    # base_pathfinder256_config.py: batch 32, 500,000 steps (100 epochs of
    # 5,000), rate 1e-3, no decay, warmup 5,000, no clipping, dropout 0.1
    # (attention 0.1), CLS, learned positions N(0, 0.02)
    "pathx256": dict(batch_size=32, train_steps=500000, learning_rate=1e-3,
                     weight_decay=0.0, warmup_steps=5000, schedule="cosine",
                     schedule_steps=505000, dropout=0.1, cls_token=True,
                     pooling="first", position_embedding="learned",
                     position_init_std=0.02),
}
# (emb_dim, num_heads, num_layers, qkv_dim, mlp_dim) and the rest of each
# model's config.model, from its <model>_base.py; qkv_dim None: the
# Reformer projects to emb_dim whatever qkv_dim says
# (reformer_attention.py line 301).
_IMAGE_MODELS = {
    # transformer_base.py of cifar10 (lines 22-28) and pathfinder32 (lines
    # 22-29); pathfinder128's and pathfinder256's set only `model_type`,
    # their base configs the widths
    ("image", "lra_transformer"): ((128, 8, 1, 64, 128), {}),
    ("pathfinder", "lra_transformer"): ((32, 4, 4, 16, 32), dict(
        dropout=0.2)),
    ("pathx", "lra_transformer"): ((32, 2, 1, 16, 32), {}),
    ("pathx256", "lra_transformer"): ((32, 4, 2, 32, 32), {}),
    ("image", "local"): ((128, 2, 1, 64, 128), dict(
        pooling="mean", cls_token=False)),
    ("image", "synthesizer"): ((128, 8, 1, 64, 128), {}),
    ("image", "linear_transformer"): ((128, 8, 1, 64, 128), {}),
    ("image", "performer"): ((128, 8, 1, 64, 128), {}),
    ("image", "linformer"): ((128, 8, 1, 64, 128), {}),
    # the patterns of every task (utils/train_utils.py lines 73-78), the
    # CLS variant as the encoder pools "CLS"
    ("image", "sparse_transformer"): ((128, 8, 1, 64, 128), dict(
        sparse_cls_token=True)),
    ("image", "longformer"): ((128, 4, 4, 64, 128), dict(
        pooling="mean", cls_token=False)),
    # bigbird_base.py line 28 sets `config.model.num_head = 4`, a key
    # BigBirdEncoder does not take: as shipped the run stops at init; the
    # row reads the 4 heads it meant
    ("image", "bigbird"): ((128, 4, 1, 64, 128), {}),
    ("image", "reformer"): ((64, 8, 4, None, 64), {}),
    # sinkhorn_base.py lines 23-26: one block of width 32, dropout 0.1,
    # weight decay 0.7; it inherits "CLS", which the Sinkhorn encoder
    # refuses: the row reads its own mean pooling
    ("image", "sinkhorn"): ((32, 1, 1, 32, 64), dict(
        dropout=0.1, weight_decay=0.7)),
    ("pathfinder", "local"): ((64, 4, 2, 32, 64), {}),
    ("pathfinder", "synthesizer"): ((64, 4, 2, 32, 64), dict(dropout=0.2)),
    ("pathfinder", "linear_transformer"): ((128, 2, 1, 64, 128), dict(
        dropout=0.2)),
    ("pathfinder", "performer"): ((32, 8, 4, 16, 32), dict(dropout=0.2)),
    ("pathfinder", "linformer"): ((32, 2, 1, 16, 32), dict(dropout=0.2)),
    ("pathfinder", "sparse_transformer"): ((32, 8, 1, 16, 32), dict(
        dropout=0.2, sparse_cls_token=False)),
    ("pathfinder", "longformer"): ((32, 2, 2, 16, 32), {}),
    ("pathfinder", "bigbird"): ((64, 2, 4, 32, 64), dict(dropout=0.2)),
    ("pathfinder", "reformer"): ((64, 8, 2, None, 64), dict(dropout=0.2)),
    ("pathfinder", "sinkhorn"): ((32, 4, 2, 16, 64), dict(dropout=0.2)),
}
_IMAGE_CONFIGS = dict(image="cifar10", pathfinder="pathfinder32",
                      pathx="pathfinder128", pathx256="pathfinder256")


def lra_image_row(task, model):
    """The row of `model` on Image or Pathfinder: LRA's image trainer,
    the task's base config and the model's own config."""
    what, cells = _ATTENTION[model]
    (emb, heads, layers, qkv, mlp), own = _IMAGE_MODELS[(task, model)]
    row = {**LRA_BACKBONE, **cells, **LRA_IMAGE[task]}
    if model == "sinkhorn":  # its own head (see _ATTENTION), black pixels
        # averaged in (`jnp.mean(encoded, axis=1)`)
        row.update(cls_token=False, pooling="mean", head="linear",
                   pool_padding=True)
    if model in ("local", "sinkhorn"):
        row.update(local_block_size=64)  # local_base.py, sinkhorn_base.py
    row.update(hidden_dim=emb, num_heads=heads, num_layers=layers,
               attention_dim=qkv, intermediate_dim=mlp, head_hidden_dim=mlp,
               **own)
    if model in _LRA_UNDROPPED:
        row.update(attention_dropout=0.0)
    if model in _MASKS:
        # black pixels are padding (`src_padding_mask = inputs > 0`): the
        # real pixels of the Synthesizer, Sparse Transformer and
        # Longformer ignore them, they attend uniformly; the local
        # and Sinkhorn attentions' groups take their contiguous blocks'
        # pair masks (Sinkhorn's sorted ones their union); BigBird's
        # ignore them and their outputs are zeroed; the other four
        # attentions ignore the mask
        row.update(pixel_padding=True, mask_semantics=_MASKS[model])
    stem = "transformer" if model == "lra_transformer" else model
    config = f"image/configs/{_IMAGE_CONFIGS[task]}/{stem}_base.py"
    row["source"] = (
        f"Long Range Arena's {task} configuration of the model "
        f"(google-research/long-range-arena lra_benchmarks/{config} over "
        "its base config: widths, dropout, pooling, rate x linear warmup "
        f"x cosine decay, Adam(0.9, 0.98, 1e-9), batch, steps) with its "
        f"{what}"
    )
    return row


for _task, _model in _IMAGE_MODELS:
    PAPER[(_task, _model)] = lra_image_row(_task, _model)
