"""LRA's efficient Transformers: LRA's backbone on the text tasks.

LRA (Tay et al. 2021) trains every xformer with one backbone
configuration per task (appendix A.1; google-research/long-range-arena
`lra_benchmarks/<task>/configs/base_*_config.py`, each model's config
setting only `model_type` and its attention's own options).

ListOps, Text and Retrieval (`LRA_BACKBONE`, `LRA_TASK`, `lra_row`) take
that backbone from LRA's code: pre-norm blocks without attention biases
(`attention_bias=False`), GELU MLPs, dropout 0.1, token embeddings
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
line 84 passes `num_classes=2`). Not taken, said here and in the README:
- dropout on the attention weights (`attention_dropout_rate` 0.1): no
  attention of this library drops its weights;
- flax's LayerNorm epsilon 1e-6 (here 1e-5), the MLP biases' N(0, 1e-6)
  start (here zeros) and the head's lecun_normal kernels (here
  glorot_uniform, as the blocks' xavier_uniform).
The Sparse Transformer takes the CLS variant of its pattern
(`sparse_cls_token`, see `_ATTENTION`).

Image, Pathfinder, Path-X and PathX-256 keep rows derived from the YCTFS
Transformer rows (`presets.yctfs`, Table 5; NTFS Table 4 for Path-X):
the row of `(task, "transformer")` with its attention replaced and
positions summed as LRA's encoders add them, and say "derived". LRA's
image configs give each model its own small backbone (e.g. CIFAR-10's
Transformer: 1 layer of width 128, `qkv_dim` 64, learned positions,
dropout 0.3, a cosine schedule; `image/configs/cifar10/*.py`), not
taken yet. On these rows LRA's loss is taken too (`binary_logit` left
at its default, False).

Cells of the attentions themselves, from LRA's code:
- positions: `AddPositionEmbs` with `posemb_init=None` (`learn_pos_emb`
  is False in every config), the sinusoidal embedding summed into the
  inputs (`linear_transformer.py`, `performer.py`, `linformer.py`
  encoders): `position_embedding="sinusoidal"`, base 10000;
- Performer: on ListOps the softmax kernel (FAVOR+) with `nb_features`
  2 and `ortho_scaling` 0 (`listops/configs/performer_base.py:25-27`:
  `attention_fn_cls="softmax"`), orthogonal features, redrawn features;
  everywhere else the encoder's default `attention_fn_cls="generalized"`
  (`performer.py:31`): `relu(x) + 1e-3` features of the queries and
  keys themselves, no random features (`performer_attention.py:263-309`,
  `features_type="deterministic"`): `performer_kernel="relu"`;
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
        performer_kernel="relu",
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
        performer_kernel="relu",
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
    activation="gelu",  # MlpBlock, common_layers.py line 157
    dropout=0.1,  # dropout_rate: blocks, MLP and embedded tokens
    embedding_dropout=None,
    embedding_init="normal",  # Embed: normal(stddev=1.0), line 143
    position_embedding="sinusoidal",  # AddPositionEmbs, posemb_init None
    attention_bias=False,  # SelfAttention(bias=False), line 59
    dense_init="keras",  # xavier_uniform kernels, lines 57 and 151
    final_norm=True,  # encoder_norm, line 205
    cls_token=True,  # classifier_pool "CLS", lines 148-156
    pooling="first",
    head="mlp",  # classifier_head: Dense(mlp_dim), relu, Dense
    head_activation="relu",
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
    "lra_benchmarks/{config}: widths, CLS pooling, rate 0.05 x linear "
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
# Each xformer's own cells on the three tasks (the options of the derived
# rows above; Performer's ListOps features from
# listops/configs/performer_base.py lines 26-27).
_ATTENTION = dict(
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
    sparse_transformer=(SPARSE, dict(sparse_block_size=128,
                                     sparse_summary_size=32,
                                     sparse_cls_token=True)),
    longformer=(LONGFORMER, dict(longformer_window=512,
                                 longformer_global_tokens=0)),
    bigbird=(BIGBIRD, dict(bigbird_block_size=64, bigbird_random_blocks=3)),
    reformer=(REFORMER, dict(reformer_buckets=10, reformer_hashes=1,
                             reformer_chunk_size=None)),
    sinkhorn=(SINKHORN, dict(local_block_size=50, local_layout="strided",
                             sinkhorn_sort="softmax",
                             sinkhorn_iterations=1)),
)


# LRA's ten efficient Transformers, by `--model` name.
XFORMERS = tuple(_ATTENTION)


def lra_row(task, model):
    """The row of `model` on `task` (ListOps, Text or Retrieval): LRA's
    backbone, the task's widths and schedule, the attention's cells."""
    what, cells = _ATTENTION[model]
    config, steps = _CONFIGS[task]
    row = {**LRA_BACKBONE, **LRA_TASK[task], **cells}
    if task == "listops" and model == "performer":
        # performer_base.py lines 25-27
        row.update(num_random_features=2, performer_kernel="softmax")
    row["source"] = LRA_SOURCE.format(task=task, config=config, steps=steps,
                                      what=what)
    return row


for _task in LRA_TASK:
    for _model in _ATTENTION:
        PAPER[(_task, _model)] = lra_row(_task, _model)
