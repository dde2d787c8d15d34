"""LRA's efficient Transformers, on the rotary Transformer"s rows.

LRA (Tay et al. 2021) trains every xformer with one backbone
configuration per task (appendix A.1; google-research/long-range-arena
`lra_benchmarks/<task>/configs/base_*_config.py`, each model"s config
setting only `model_type` and its attention"s own options). These rows do
the same on this library"s Transformer rows (`presets.yctfs`, the YCTFS
Table 5 rows): the row of `(task, "transformer")` with its attention
replaced and positions summed as LRA's encoders add them. What LRA's
backbone has that these rows do not take yet, so these rows say
"derived":
- a CLS token prepended and pooled (`pooling_mode = "CLS"`); here the
  YCTFS row"s pooling;
- the schedule `constant * linear_warmup * rsqrt_decay` at a base rate of
  0.05 and weight decay 0.1, 5K-20K steps, batch 32; here the YCTFS row"s
  optimiser and epochs;
- its widths (ListOps: 4 layers of width 512, 8 heads, MLP 1024).
One thing of LRA's backbone they do take: its loss, a softmax
cross-entropy over the logits of every class, two on the two-class tasks
(`lra_benchmarks/utils/train_utils.py` lines 152-166;
`matching/train.py` line 84 passes `num_classes=2`), not the YCTFS row's
single logit (`binary_logit` left at its default, False).

Cells of the attentions themselves, from LRA's code:
- positions: `AddPositionEmbs` with `posemb_init=None` (`learn_pos_emb`
  is False in every config), the sinusoidal embedding summed into the
  inputs (`linear_transformer.py`, `performer.py`, `linformer.py`
  encoders): `position_embedding="sinusoidal"`, base 10000;
- Performer: `nb_features` 2 and `ortho_scaling` 0 on ListOps
  (`listops/configs/performer_base.py:26-27`), the default 256 features
  elsewhere (`performer_attention.py:204`); softmax kernel, orthogonal
  features, redrawn features;
- Local attention: `block_size` 50 (`local.py` lines 37, 114, 312), and
  the groups the code forms: `jnp.reshape(query, (bs, block_size,
  num_query_blocks, ...))` with attention over axis 1 puts position `i *
  n + j` in group `j`, so a "block" is strided
  (`local_layout="strided"`; `"contiguous"` is the method as the paper
  describes it);
- Synthesizer: `synthesizer_mode="random"` with the dot products kept,
  on every task (`synthesizer.py` lines 38-39; the text config sets
  `ignore_dot_product` and `factorized_random` outside `config.model`,
  which `train.py` never passes, lines 175-188);
- Sparse Transformer: the fixed pattern with blocks of 128 and 32
  summary positions, causal (`sparse_transformer.py` lines 43-46,
  `sparse_attention.py` `_build_mask`); its CLS variant (first row and
  column all ones) is not taken, as the CLS token;
- Longformer: a sliding window of 512 and no global position (LRA's
  classifiers pass no `global_mask`);
- BigBird: blocks of 64 (the image configs set it, the others take the
  default), 3 random blocks, the table seeded by the layer's index;
- Reformer: 10 buckets, 1 hash round, chunks of L / 10 (its defaults;
  `layers.lsh_attention` lists where LRA's code departs from the paper);
- Sinkhorn: blocks of 50, strided as the local attention's, softmax
  sorting (`sinkhorn_attention.py` defaults), the local and sorted
  attentions summed; its sorting einsum is not taken (see
  `layers.efficient_attention`);
- Linformer: `low_rank_features` 16 (`linformer_attention.py:47`; the
  encoders never pass it, so the text config"s 32 is not read).

LRA Table 1 reports Path-X as failed for every model ("all models do
not learn anything on Path-X", section 4); the Path-X and PathX-256 rows
put the attentions on this library's Path-X Transformer rows (Never Train
from Scratch Table 4), so that they can be tried there.
"""

YCTFS_TRANSFORMER = (
    "derived: the {task} Transformer row (presets.yctfs, You Can Train from "
    "Scratch Table 5) with LRA's {what}, on LRA's protocol of one backbone "
    "per task for every xformer (Tay et al. 2021 appendix A.1); sinusoidal "
    "positions as LRA's encoders (AddPositionEmbs, posemb_init=None)"
)
LINEAR = ("linear attention (elu + 1 features; lra_benchmarks/models/"
          "linear_transformer/linear_attention.py)")
PERFORMER = ("FAVOR+ attention (lra_benchmarks/models/performer/"
             "performer_attention.py; features: listops/configs/"
             "performer_base.py:27, else the default 256)")
LOCAL = ("local attention (lra_benchmarks/models/local/local_attention.py; "
         "block_size 50 as local.py passes it; the groups its reshape forms, "
         "strided: local_layout='strided')")
SYNTHESIZER = ("random Synthesizer attention added to the dot products "
               "(lra_benchmarks/models/synthesizer/synthesizer.py defaults "
               "synthesizer_mode='random', ignore_dot_product=False: the "
               "text config's settings are not under config.model, so not "
               "passed)")
SPARSE = ("Sparse Transformer fixed pattern (lra_benchmarks/models/"
          "sparse_transformer/sparse_transformer.py lines 43-46: "
          "Fixed1Pattern(128) | Fixed2Pattern(128, c=32), causal)")
LONGFORMER = ("Longformer sliding window (lra_benchmarks/models/longformer/"
              "longformer.py: sliding_window_size 512; no global_mask "
              "passed, so no global position)")
BIGBIRD = ("BigBird attention (lra_benchmarks/models/bigbird/bigbird.py: "
           "block_size 64, num_rand_blocks 3, connectivity_seed = the "
           "layer's index)")
REFORMER = ("Reformer LSH attention (lra_benchmarks/models/reformer/"
            "reformer_attention.py defaults n_buckets 10, n_hashes 1, never "
            "overridden; its sqrt(d) score multiplier, unnormalised keys "
            "and unmasked self/padding not taken)")
SINKHORN = ("Sinkhorn attention (lra_benchmarks/models/sinkhorn_transformer/"
            "sinkhorn_attention.py: block_size 50, strided as its reshape "
            "forms the blocks, sort_activation 'softmax'; its sorting "
            "einsum, which makes every sorted block the sum of all blocks, "
            "not taken)")
LINFORMER = ("Linformer attention (lra_benchmarks/models/linformer/"
             "linformer_attention.py; low_rank_features 16, line 47)")


PATHX_TRANSFORMER = (
    "derived: the {task} Transformer row (presets.ntfs, Never Train from "
    "Scratch Table 4 and C.1) with LRA's {what}; sinusoidal positions as "
    "LRA's encoders; LRA Table 1 reports Path-X failed for every model"
)


def derived(task, what):
    return YCTFS_TRANSFORMER.format(task=task, what=what)


def derived_pathx(task, what):
    return PATHX_TRANSFORMER.format(task=task, what=what)


PAPER = {
    ("listops", "linear_transformer"): dict(
        dense_init="torch", sequence_length=2000, hidden_dim=256,
        num_layers=6, num_heads=4, intermediate_dim=512, activation="relu",
        dropout=0.0, pooling="mean", learning_rate=0.0001, batch_size=64,
        weight_decay=0.05, epochs=120, schedule="plateau", final_norm=False,
        embedding_init="normal", embedding_dropout=0.0, adam_beta_2=0.98,
        weight_decay_on="kernels", head="linear",
        position_embedding="sinusoidal",
        early_stopping_patience=20,
        source=derived("listops", LINEAR),
    ),
    ("listops", "performer"): dict(
        dense_init="torch", sequence_length=2000, hidden_dim=256,
        num_layers=6, num_heads=4, intermediate_dim=512, activation="relu",
        dropout=0.0, pooling="mean", learning_rate=0.0001, batch_size=64,
        weight_decay=0.05, epochs=120, schedule="plateau", final_norm=False,
        embedding_init="normal", embedding_dropout=0.0, adam_beta_2=0.98,
        weight_decay_on="kernels", head="linear",
        position_embedding="sinusoidal", num_random_features=2,
        orthogonal_scaling=0,
        early_stopping_patience=20,
        source=derived("listops", PERFORMER),
    ),
    ("listops", "linformer"): dict(
        dense_init="torch", sequence_length=2000, hidden_dim=256,
        num_layers=6, num_heads=4, intermediate_dim=512, activation="relu",
        dropout=0.0, pooling="mean", learning_rate=0.0001, batch_size=64,
        weight_decay=0.05, epochs=120, schedule="plateau", final_norm=False,
        embedding_init="normal", embedding_dropout=0.0, adam_beta_2=0.98,
        weight_decay_on="kernels", head="linear",
        position_embedding="sinusoidal", projection_dim=16,
        early_stopping_patience=20,
        source=derived("listops", LINFORMER),
    ),
    ("text", "linear_transformer"): dict(
        dense_init="torch", hidden_dim=256, num_layers=8, num_heads=4,
        intermediate_dim=512, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=16, weight_decay=0.1, epochs=80,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0,
        position_embedding="sinusoidal",
        early_stopping_patience=20,
        source=derived("text", LINEAR),
    ),
    ("text", "performer"): dict(
        dense_init="torch", hidden_dim=256, num_layers=8, num_heads=4,
        intermediate_dim=512, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=16, weight_decay=0.1, epochs=80,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0,
        position_embedding="sinusoidal", num_random_features=256,
        orthogonal_scaling=0,
        early_stopping_patience=20,
        source=derived("text", PERFORMER),
    ),
    ("text", "linformer"): dict(
        dense_init="torch", hidden_dim=256, num_layers=8, num_heads=4,
        intermediate_dim=512, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=16, weight_decay=0.1, epochs=80,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0,
        position_embedding="sinusoidal", projection_dim=16,
        early_stopping_patience=20,
        source=derived("text", LINFORMER),
    ),
    ("retrieval", "linear_transformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.0, epochs=60,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="mlp", head_hidden_dim=512, head_activation="relu",
        pair_features="concat", position_embedding="sinusoidal",
        early_stopping_patience=20,
        source=derived("retrieval", LINEAR),
    ),
    ("retrieval", "performer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.0, epochs=60,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="mlp", head_hidden_dim=512, head_activation="relu",
        pair_features="concat", position_embedding="sinusoidal",
        num_random_features=256, orthogonal_scaling=0,
        early_stopping_patience=20,
        source=derived("retrieval", PERFORMER),
    ),
    ("retrieval", "linformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.0, epochs=60,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="mlp", head_hidden_dim=512, head_activation="relu",
        pair_features="concat", position_embedding="sinusoidal",
        projection_dim=16,
        early_stopping_patience=20,
        source=derived("retrieval", LINFORMER),
    ),
    ("image", "linear_transformer"): dict(
        dense_init="torch", hidden_dim=160, num_layers=10, num_heads=4,
        intermediate_dim=320, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0,
        plateau_min_learning_rate=1e-08, position_embedding="sinusoidal",
        early_stopping_patience=100,
        source=derived("image", LINEAR),
    ),
    ("image", "performer"): dict(
        dense_init="torch", hidden_dim=160, num_layers=10, num_heads=4,
        intermediate_dim=320, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0,
        plateau_min_learning_rate=1e-08, position_embedding="sinusoidal",
        num_random_features=256, orthogonal_scaling=0,
        early_stopping_patience=100,
        source=derived("image", PERFORMER),
    ),
    ("image", "linformer"): dict(
        dense_init="torch", hidden_dim=160, num_layers=10, num_heads=4,
        intermediate_dim=320, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0,
        plateau_min_learning_rate=1e-08, position_embedding="sinusoidal",
        projection_dim=16,
        early_stopping_patience=100,
        source=derived("image", LINFORMER),
    ),
    ("pathfinder", "linear_transformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=128, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", position_embedding="sinusoidal",
        early_stopping_patience=20,
        source=derived("pathfinder", LINEAR),
    ),
    ("pathfinder", "performer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=128, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", position_embedding="sinusoidal",
        num_random_features=256, orthogonal_scaling=0,
        early_stopping_patience=20,
        source=derived("pathfinder", PERFORMER),
    ),
    ("pathfinder", "linformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=128, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", position_embedding="sinusoidal", projection_dim=16,
        early_stopping_patience=20,
        source=derived("pathfinder", LINFORMER),
    ),
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
    ("listops", "local"): dict(
        dense_init="torch", sequence_length=2000, hidden_dim=256,
        num_layers=6, num_heads=4, intermediate_dim=512, activation="relu",
        dropout=0.0, pooling="mean", learning_rate=0.0001, batch_size=64,
        weight_decay=0.05, epochs=120, schedule="plateau", final_norm=False,
        embedding_init="normal", embedding_dropout=0.0, adam_beta_2=0.98,
        weight_decay_on="kernels", head="linear",
        position_embedding="sinusoidal", local_block_size=50,
        local_layout="strided",
        early_stopping_patience=20,
        source=derived("listops", LOCAL),
    ),
    ("text", "local"): dict(
        dense_init="torch", hidden_dim=256, num_layers=8, num_heads=4,
        intermediate_dim=512, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=16, weight_decay=0.1, epochs=80,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0,
        position_embedding="sinusoidal", local_block_size=50,
        local_layout="strided",
        early_stopping_patience=20,
        source=derived("text", LOCAL),
    ),
    ("retrieval", "local"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.0, epochs=60,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="mlp", head_hidden_dim=512, head_activation="relu",
        pair_features="concat", position_embedding="sinusoidal",
        local_block_size=50, local_layout="strided",
        early_stopping_patience=20,
        source=derived("retrieval", LOCAL),
    ),
    ("image", "local"): dict(
        dense_init="torch", hidden_dim=160, num_layers=10, num_heads=4,
        intermediate_dim=320, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0,
        plateau_min_learning_rate=1e-08, position_embedding="sinusoidal",
        local_block_size=50, local_layout="strided",
        early_stopping_patience=100,
        source=derived("image", LOCAL),
    ),
    ("pathfinder", "local"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=128, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", position_embedding="sinusoidal", local_block_size=50,
        local_layout="strided",
        early_stopping_patience=20,
        source=derived("pathfinder", LOCAL),
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
    ("listops", "synthesizer"): dict(
        dense_init="torch", sequence_length=2000, hidden_dim=256,
        num_layers=6, num_heads=4, intermediate_dim=512, activation="relu",
        dropout=0.0, pooling="mean", learning_rate=0.0001, batch_size=64,
        weight_decay=0.05, epochs=120, schedule="plateau", final_norm=False,
        embedding_init="normal", embedding_dropout=0.0, adam_beta_2=0.98,
        weight_decay_on="kernels", head="linear",
        position_embedding="sinusoidal", synthesizer_mode="random",
        synthesizer_dot_product=True,
        early_stopping_patience=20,
        source=derived("listops", SYNTHESIZER),
    ),
    ("text", "synthesizer"): dict(
        dense_init="torch", hidden_dim=256, num_layers=8, num_heads=4,
        intermediate_dim=512, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=16, weight_decay=0.1, epochs=80,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0,
        position_embedding="sinusoidal", synthesizer_mode="random",
        synthesizer_dot_product=True,
        early_stopping_patience=20,
        source=derived("text", SYNTHESIZER),
    ),
    ("retrieval", "synthesizer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.0, epochs=60,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="mlp", head_hidden_dim=512, head_activation="relu",
        pair_features="concat", position_embedding="sinusoidal",
        synthesizer_mode="random", synthesizer_dot_product=True,
        early_stopping_patience=20,
        source=derived("retrieval", SYNTHESIZER),
    ),
    ("image", "synthesizer"): dict(
        dense_init="torch", hidden_dim=160, num_layers=10, num_heads=4,
        intermediate_dim=320, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0,
        plateau_min_learning_rate=1e-08, position_embedding="sinusoidal",
        synthesizer_mode="random", synthesizer_dot_product=True,
        early_stopping_patience=100,
        source=derived("image", SYNTHESIZER),
    ),
    ("pathfinder", "synthesizer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=128, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", position_embedding="sinusoidal",
        synthesizer_mode="random", synthesizer_dot_product=True,
        early_stopping_patience=20,
        source=derived("pathfinder", SYNTHESIZER),
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
    ("listops", "sparse_transformer"): dict(
        dense_init="torch", sequence_length=2000, hidden_dim=256, num_layers=6,
        num_heads=4, intermediate_dim=512, activation="relu", dropout=0.0,
        pooling="mean", learning_rate=0.0001, batch_size=64, weight_decay=0.05,
        epochs=120, schedule="plateau", final_norm=False,
        embedding_init="normal", embedding_dropout=0.0, adam_beta_2=0.98,
        weight_decay_on="kernels", head="linear",
        position_embedding="sinusoidal", sparse_block_size=128,
        sparse_summary_size=32,
        early_stopping_patience=20,
        source=derived("listops", SPARSE),
    ),
    ("listops", "longformer"): dict(
        dense_init="torch", sequence_length=2000, hidden_dim=256, num_layers=6,
        num_heads=4, intermediate_dim=512, activation="relu", dropout=0.0,
        pooling="mean", learning_rate=0.0001, batch_size=64, weight_decay=0.05,
        epochs=120, schedule="plateau", final_norm=False,
        embedding_init="normal", embedding_dropout=0.0, adam_beta_2=0.98,
        weight_decay_on="kernels", head="linear",
        position_embedding="sinusoidal", longformer_window=512,
        longformer_global_tokens=0,
        early_stopping_patience=20,
        source=derived("listops", LONGFORMER),
    ),
    ("listops", "bigbird"): dict(
        dense_init="torch", sequence_length=2000, hidden_dim=256, num_layers=6,
        num_heads=4, intermediate_dim=512, activation="relu", dropout=0.0,
        pooling="mean", learning_rate=0.0001, batch_size=64, weight_decay=0.05,
        epochs=120, schedule="plateau", final_norm=False,
        embedding_init="normal", embedding_dropout=0.0, adam_beta_2=0.98,
        weight_decay_on="kernels", head="linear",
        position_embedding="sinusoidal", bigbird_block_size=64,
        bigbird_random_blocks=3,
        early_stopping_patience=20,
        source=derived("listops", BIGBIRD),
    ),
    ("text", "sparse_transformer"): dict(
        dense_init="torch", hidden_dim=256, num_layers=8, num_heads=4,
        intermediate_dim=512, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=16, weight_decay=0.1, epochs=80,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0, position_embedding="sinusoidal",
        sparse_block_size=128, sparse_summary_size=32,
        early_stopping_patience=20,
        source=derived("text", SPARSE),
    ),
    ("text", "longformer"): dict(
        dense_init="torch", hidden_dim=256, num_layers=8, num_heads=4,
        intermediate_dim=512, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=16, weight_decay=0.1, epochs=80,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0, position_embedding="sinusoidal",
        longformer_window=512, longformer_global_tokens=0,
        early_stopping_patience=20,
        source=derived("text", LONGFORMER),
    ),
    ("text", "bigbird"): dict(
        dense_init="torch", hidden_dim=256, num_layers=8, num_heads=4,
        intermediate_dim=512, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=16, weight_decay=0.1, epochs=80,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0, position_embedding="sinusoidal",
        bigbird_block_size=64, bigbird_random_blocks=3,
        early_stopping_patience=20,
        source=derived("text", BIGBIRD),
    ),
    ("retrieval", "sparse_transformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.0, epochs=60,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="mlp", head_hidden_dim=512, head_activation="relu",
        pair_features="concat", position_embedding="sinusoidal",
        sparse_block_size=128, sparse_summary_size=32,
        early_stopping_patience=20,
        source=derived("retrieval", SPARSE),
    ),
    ("retrieval", "longformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.0, epochs=60,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="mlp", head_hidden_dim=512, head_activation="relu",
        pair_features="concat", position_embedding="sinusoidal",
        longformer_window=512, longformer_global_tokens=0,
        early_stopping_patience=20,
        source=derived("retrieval", LONGFORMER),
    ),
    ("retrieval", "bigbird"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.0, epochs=60,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="mlp", head_hidden_dim=512, head_activation="relu",
        pair_features="concat", position_embedding="sinusoidal",
        bigbird_block_size=64, bigbird_random_blocks=3,
        early_stopping_patience=20,
        source=derived("retrieval", BIGBIRD),
    ),
    ("image", "sparse_transformer"): dict(
        dense_init="torch", hidden_dim=160, num_layers=10, num_heads=4,
        intermediate_dim=320, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0, plateau_min_learning_rate=1e-08,
        position_embedding="sinusoidal", sparse_block_size=128,
        sparse_summary_size=32,
        early_stopping_patience=100,
        source=derived("image", SPARSE),
    ),
    ("image", "longformer"): dict(
        dense_init="torch", hidden_dim=160, num_layers=10, num_heads=4,
        intermediate_dim=320, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0, plateau_min_learning_rate=1e-08,
        position_embedding="sinusoidal", longformer_window=512,
        longformer_global_tokens=0,
        early_stopping_patience=100,
        source=derived("image", LONGFORMER),
    ),
    ("image", "bigbird"): dict(
        dense_init="torch", hidden_dim=160, num_layers=10, num_heads=4,
        intermediate_dim=320, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0, plateau_min_learning_rate=1e-08,
        position_embedding="sinusoidal", bigbird_block_size=64,
        bigbird_random_blocks=3,
        early_stopping_patience=100,
        source=derived("image", BIGBIRD),
    ),
    ("pathfinder", "sparse_transformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=128, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", position_embedding="sinusoidal", sparse_block_size=128,
        sparse_summary_size=32,
        early_stopping_patience=20,
        source=derived("pathfinder", SPARSE),
    ),
    ("pathfinder", "longformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=128, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", position_embedding="sinusoidal", longformer_window=512,
        longformer_global_tokens=0,
        early_stopping_patience=20,
        source=derived("pathfinder", LONGFORMER),
    ),
    ("pathfinder", "bigbird"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=128, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", position_embedding="sinusoidal", bigbird_block_size=64,
        bigbird_random_blocks=3,
        early_stopping_patience=20,
        source=derived("pathfinder", BIGBIRD),
    ),
    ("pathx", "sparse_transformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=5, num_heads=4,
        intermediate_dim=512, activation="gelu", dropout=0.0, pooling="max",
        learning_rate=0.0005, batch_size=32, weight_decay=0.0, epochs=200,
        schedule="constant", warmup_steps=5000, final_norm=True,
        embedding_dropout=None, weight_decay_on="all", head="linear",
        input_encoder="linear", pixel_mean=0.5, pixel_std=0.5,
        input_encoder_init="torch", position_embedding="sinusoidal",
        sparse_block_size=128, sparse_summary_size=32,
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
        sparse_block_size=128, sparse_summary_size=32,
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
    ("listops", "reformer"): dict(
        dense_init="torch", sequence_length=2000, hidden_dim=256, num_layers=6,
        num_heads=4, intermediate_dim=512, activation="relu", dropout=0.0,
        pooling="mean", learning_rate=0.0001, batch_size=64, weight_decay=0.05,
        epochs=120, schedule="plateau", final_norm=False,
        embedding_init="normal", embedding_dropout=0.0, adam_beta_2=0.98,
        weight_decay_on="kernels", head="linear",
        position_embedding="sinusoidal", reformer_buckets=10,
        reformer_hashes=1, reformer_chunk_size=None,
        early_stopping_patience=20,
        source=derived("listops", REFORMER),
    ),
    ("text", "reformer"): dict(
        dense_init="torch", hidden_dim=256, num_layers=8, num_heads=4,
        intermediate_dim=512, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=16, weight_decay=0.1, epochs=80,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0, position_embedding="sinusoidal",
        reformer_buckets=10, reformer_hashes=1, reformer_chunk_size=None,
        early_stopping_patience=20,
        source=derived("text", REFORMER),
    ),
    ("retrieval", "reformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.0, epochs=60,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="mlp", head_hidden_dim=512, head_activation="relu",
        pair_features="concat", position_embedding="sinusoidal",
        reformer_buckets=10, reformer_hashes=1, reformer_chunk_size=None,
        early_stopping_patience=20,
        source=derived("retrieval", REFORMER),
    ),
    ("image", "reformer"): dict(
        dense_init="torch", hidden_dim=160, num_layers=10, num_heads=4,
        intermediate_dim=320, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0, plateau_min_learning_rate=1e-08,
        position_embedding="sinusoidal", reformer_buckets=10,
        reformer_hashes=1, reformer_chunk_size=None,
        early_stopping_patience=100,
        source=derived("image", REFORMER),
    ),
    ("pathfinder", "reformer"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=128, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", position_embedding="sinusoidal", reformer_buckets=10,
        reformer_hashes=1, reformer_chunk_size=None,
        early_stopping_patience=20,
        source=derived("pathfinder", REFORMER),
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
        source=derived_pathx("pathx256", REFORMER),
    ),
    ("listops", "sinkhorn"): dict(
        dense_init="torch", sequence_length=2000, hidden_dim=256, num_layers=6,
        num_heads=4, intermediate_dim=512, activation="relu", dropout=0.0,
        pooling="mean", learning_rate=0.0001, batch_size=64, weight_decay=0.05,
        epochs=120, schedule="plateau", final_norm=False,
        embedding_init="normal", embedding_dropout=0.0, adam_beta_2=0.98,
        weight_decay_on="kernels", head="linear",
        position_embedding="sinusoidal", local_block_size=50,
        local_layout="strided", sinkhorn_sort="softmax", sinkhorn_iterations=1,
        early_stopping_patience=20,
        source=derived("listops", SINKHORN),
    ),
    ("text", "sinkhorn"): dict(
        dense_init="torch", hidden_dim=256, num_layers=8, num_heads=4,
        intermediate_dim=512, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=16, weight_decay=0.1, epochs=80,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0, position_embedding="sinusoidal",
        local_block_size=50, local_layout="strided", sinkhorn_sort="softmax",
        sinkhorn_iterations=1,
        early_stopping_patience=20,
        source=derived("text", SINKHORN),
    ),
    ("retrieval", "sinkhorn"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.0, epochs=60,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="mlp", head_hidden_dim=512, head_activation="relu",
        pair_features="concat", position_embedding="sinusoidal",
        local_block_size=50, local_layout="strided", sinkhorn_sort="softmax",
        sinkhorn_iterations=1,
        early_stopping_patience=20,
        source=derived("retrieval", SINKHORN),
    ),
    ("image", "sinkhorn"): dict(
        dense_init="torch", hidden_dim=160, num_layers=10, num_heads=4,
        intermediate_dim=320, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=64, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", final_decay_factor=1.0, plateau_min_learning_rate=1e-08,
        position_embedding="sinusoidal", local_block_size=50,
        local_layout="strided", sinkhorn_sort="softmax", sinkhorn_iterations=1,
        early_stopping_patience=100,
        source=derived("image", SINKHORN),
    ),
    ("pathfinder", "sinkhorn"): dict(
        dense_init="torch", hidden_dim=128, num_layers=6, num_heads=4,
        intermediate_dim=256, activation="relu", dropout=0.0, pooling="mean",
        learning_rate=0.001, batch_size=128, weight_decay=0.01, epochs=200,
        schedule="plateau", final_norm=False, embedding_init="normal",
        embedding_dropout=0.0, adam_beta_2=0.98, weight_decay_on="kernels",
        head="linear", position_embedding="sinusoidal", local_block_size=50,
        local_layout="strided", sinkhorn_sort="softmax", sinkhorn_iterations=1,
        early_stopping_patience=20,
        source=derived("pathfinder", SINKHORN),
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
        sinkhorn_iterations=1,
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
        sinkhorn_iterations=1,
        source=derived_pathx("pathx256", SINKHORN),
    ),
}
