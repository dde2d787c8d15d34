"""The model families, one registry entry each.

A `Family` says everything the builders, the optimizer and the
hyperparameter resolution need to know about one sequence mixer: its
architecture hyperparameters with their defaults, how one block of the
stack is built from them, and which of its weights are "dynamics" (the
SSM / EMA parameters that train without weight decay and at
`ssm_learning_rate` where a source sets one). The builders
(`lra_keras.models.builders`), the parity cases, the benchmarks and the
builder tests iterate `FAMILIES`; nothing else keeps a list of families.
The registry imports no Keras backend (the hyperparameter resolution reads
it): the layers are imported when a block is built.

Adding a mixer: its layer file in `lra_keras/layers/`, one `register(...)`
below, and its preset rows in `lra_keras/presets/` (CONTRIBUTING.md walks
through it).

Every block maps `(x, padding_mask)` to `x`. Families whose layer holds its
own residual and norms (the Transformer and MEGA blocks) build that layer;
the others wrap their mixer in `residual_block`: a LayerNorm before
(`prenorm`) or after the residual sum, dropout on the mixer's output.
"""

import dataclasses
import math
import re


@dataclasses.dataclass(frozen=True)
class Family:
    """One model family.

    Args:
        name: str. The registry key and `--model` name.
        keys: dict. The architecture hyperparameters with their defaults;
            `build_encoder` accepts these and no others. A family with a
            `position_embedding` key adds position embeddings to its
            inputs; `prenorm` (default True) also adds a final LayerNorm.
        block: callable `(arch, index) -> fn(x, padding_mask) -> x`, block
            `index` of the stack from the resolved architecture `arch`.
        dynamics: tuple of str. Names of the weights (as given to
            `add_weight`) that are the mixer's dynamics: no weight decay
            (unless `weight_decay_on="all"`), and `ssm_learning_rate` when
            it is set.
        timescales: tuple of str. The names among `dynamics` that are the
            discretisation step (dt): with `dt_learning_rate="global"` they
            train at the global rate instead of `ssm_learning_rate`;
            `dt_weight_decay=True` decays them.
        input_matrix: tuple of str. The names among `dynamics` that hold
            the input matrix B: `B_learning_rate` and `B_weight_decay`
            choose their rate and decay (S5's `--opt_config`).
        paper: str. Where the family comes from.
        can_be_causal: bool. Whether `causal=True` gives a causal mixer
            (False: the Linformer, whose length projection mixes the whole
            sequence; `causal=True` is then an error).
    """

    name: str
    keys: dict
    block: object
    dynamics: tuple = ()
    timescales: tuple = ()
    input_matrix: tuple = ()
    paper: str = ""
    can_be_causal: bool = True

    def __post_init__(self):
        if not set(self.timescales) | set(self.input_matrix) <= set(
                self.dynamics):
            raise ValueError(
                f"The timescales and input matrix of family {self.name!r} "
                f"must be among its dynamics. Received: timescales="
                f"{self.timescales}, input_matrix={self.input_matrix}, "
                f"dynamics={self.dynamics}"
            )

    def dynamics_patterns(self, names=None):
        """`dynamics` (or `names`) as regular expressions over variable
        names or paths (TensorFlow may prefix the layer path or append
        `:0`)."""
        names = self.dynamics if names is None else names
        return tuple(f"(^|/){re.escape(name)}($|:)" for name in names)


FAMILIES = {}

# The classifier's head (`build_classifier` reads them; the encoder
# rejects them), shared by every family.
HEAD_DEFAULTS = dict(
    pooling="mean",
    # True: "mean" and "max" pool the padded positions too (LRA's
    # `jnp.mean(encoded, axis=1)`, the Sinkhorn encoder's readout over its
    # full-length batches); False: the real tokens only
    pool_padding=False,
    # "mlp" (Dense(head_hidden_dim, head_activation) -> Dense), "mlp2"
    # (two hidden layers, the second half as wide: LRA's dual head) or
    # "linear" (one Dense: the S4, S5 and YCTFS classifiers)
    head="mlp",
    head_hidden_dim=None,  # None: hidden_dim
    head_activation="gelu",
    # how the head's dense layers start (`layers.dense_init`: "keras",
    # "torch" or "lecun"); None: the blocks' `dense_init` (LRA's flax
    # classifier head: "lecun", its blocks' xavier_uniform "keras")
    head_dense_init=None,
    # dropout between the MLP head's hidden layer and its activation (the
    # MEGA code's classifier: act(dropout(Linear(x))), model.py:53-56, 195)
    head_dropout=0.0,
    # whether the logits layer has a bias (the MEGA code's has none,
    # model.py:62-66)
    logits_bias=True,
    # two-class tasks: one logit trained with a sigmoid cross-entropy
    # instead of two with a softmax one (the YCTFS code's classifier,
    # long-transformers@lra-paper src/tasks/classification_task.py lines
    # 14-17 and src/tasks/heads/classification_head.py line 162)
    binary_logit=False,
    # retrieval: "nli" ([u, v, u * v, u - v], LRA and S4) or "concat"
    # ([u, v], YCTFS and MEGA)
    pair_features="nli",
)
HEAD_KEYS = tuple(HEAD_DEFAULTS)

# Keys of every family: how tokens enter the stack and how the classifier
# reads it out (`lra_keras.models.builders`). The defaults are this
# library's; the preset rows set the sources' values.
SHARED_KEYS = dict(
    # token embedding: "uniform" (Keras's U(+-0.05)), "normal" (N(0, 1),
    # PyTorch's nn.Embedding: the S4 and YCTFS code), "scaled_normal"
    # (N(0, 1 / hidden_dim), fairseq's MEGA LRA encoder) or "lecun" (flax's
    # lecun_normal of a Dense on one-hot tokens, fan-in `embedding_fan_in`,
    # None: the vocabulary size; the S5 code)
    embedding_init="uniform",
    embedding_fan_in=None,
    # a learned vector added to every token's embedding (a Dense on one-hot
    # tokens is an embedding plus its bias: the S5 code's text encoder)
    embedding_bias=False,
    # the dense projections of the blocks and the head: "keras" (glorot
    # kernel, zero bias), "torch" (PyTorch's Linear/Conv1d: U(+-1/sqrt(
    # fan_in)) kernel and bias; the S4, YCTFS and NTFS code) or "lecun"
    # (flax's lecun_normal, zero bias; the S5 code). MEGA's blocks keep
    # the MEGA code's own N(0, 0.02) (`layers.MegaEncoder`).
    dense_init="keras",
    # the pixel tasks' input: "embedding" (a table row per grey value) or
    # "linear" (`PixelEncoder`: ((value / 255 - pixel_mean) / pixel_std) w
    # + b, the S4, S5 and MEGA code), its weights started as
    # `input_encoder_init` ("torch", "lecun" or "mega")
    input_encoder="embedding",
    pixel_mean=0.5,
    pixel_std=0.5,
    input_encoder_init="torch",
    # how the linear encoder reads the masking techniques' mask id:
    # "embedding" (a learned vector, zero at start) or "channel" (NTFS's
    # masked self-pretraining: a mask flag channel, Linear(2, D), masked
    # pixels give the mask column + bias; `PixelEncoder`); None: "channel"
    # where the technique "spt" pretrains a linear encoder with the masked
    # objective (NTFS's code), "embedding" otherwise
    pixel_mask_input=None,
    # dropout on the embedded tokens; None: `dropout`
    embedding_dropout=None,
    # a learned token prepended to every sequence before the positions and
    # blocks (`layers.ClassToken`, zeros at init; LRA's encoders with
    # `classifier_pool="CLS"`); `pooling="first"` reads it out
    cls_token=False,
    # a norm after the last block of a pre-norm stack
    final_norm=True,
    **HEAD_DEFAULTS,
)

# Keys of the families whose blocks are `residual_block`s.
RESIDUAL_KEYS = dict(
    prenorm=True,
    # "layer" or "batch" (`MaskedBatchNormalization`: statistics over real
    # tokens; the S4 and S5 code's BatchNorm)
    norm="layer",
    batch_norm_momentum=0.9,  # Keras's convention (PyTorch's 0.1)
    # the moving variance from the unbiased batch variance, as PyTorch
    batch_norm_unbiased=False,
    # the batch norm's statistics over padded positions too, which it
    # then normalises, as the S4 and S5 code's BatchNorm, which sees no
    # mask: True every position of the batch (the S5 code's batches, all
    # of the task's length), "longest" those up to the batch's longest
    # row (the S4 code's, each padded to its longest row)
    # (`MaskedBatchNormalization(count_padding=...)`)
    batch_norm_count_padding=False,
    # the residual dropout mask shared along the sequence (S4's
    # `tie_dropout`, DropoutNd)
    tie_dropout=False,
)


def register(family):
    """Adds `family` to `FAMILIES`, with the `SHARED_KEYS`; returns it."""
    if family.name in FAMILIES:
        raise ValueError(f"A family named {family.name!r} exists already.")
    family = dataclasses.replace(family, keys={**SHARED_KEYS, **family.keys})
    FAMILIES[family.name] = family
    return family


def get_family(name):
    """The registered `Family` of a name."""
    if name not in FAMILIES:
        raise ValueError(
            f"Unknown model {name!r}. Known models: {sorted(FAMILIES)}"
        )
    return FAMILIES[name]


def all_dynamics_patterns():
    """The dynamics patterns of every family (for models built by hand)."""
    return tuple(p for f in FAMILIES.values() for p in f.dynamics_patterns())


def layer(name):
    """The class `name` of `lra_keras.layers`, imported on first use."""
    from lra_keras import layers

    return getattr(layers, name)


def make_norm(arch, name):
    """The norm of a residual block (`arch["norm"]`: "layer", "batch" or
    "scale", `lra_keras.layers.sequence_norm`), called as `norm(x, mask)`;
    also the final norm of such stacks."""
    norm = layer("sequence_norm")(
        arch.get("norm", "layer"), name,
        epsilon=arch.get("layer_norm_epsilon", 1e-5),
        momentum=arch.get("batch_norm_momentum", 0.9),
        unbiased=arch.get("batch_norm_unbiased", False),
        count_padding=arch.get("batch_norm_count_padding", False),
        num_groups=arch.get("norm_groups"),
    )
    return lambda x, mask: layer("normalize")(norm, x, mask)


def residual_block(family, make_mixer):
    """A `block` for a mixer without its own residual: `make_mixer(arch,
    name)` inside `x + dropout(mixer(norm(x)))` (prenorm) or
    `norm(x + dropout(mixer(x)))`; the norm per `arch["norm"]`, the
    dropout mask tied along the sequence with `arch["tie_dropout"]`."""

    def block(arch, index):
        import keras

        mixer = make_mixer(arch, f"{family}_mixer_{index}")
        norm = make_norm(arch, f"{family}_norm_{index}")
        dropout = keras.layers.Dropout(
            arch["dropout"], name=f"{family}_dropout_{index}",
            noise_shape=(None, 1, None) if arch["tie_dropout"] else None,
        )

        def apply(x, mask):
            h = norm(x, mask) if arch["prenorm"] else x
            x = x + dropout(mixer(h, padding_mask=mask))
            return x if arch["prenorm"] else norm(x, mask)

        return apply

    return block


def _layer_block(make_layer):
    """A `block` for a layer that holds its own residual and norms."""

    def block(arch, index):
        layer = make_layer(arch, index)
        return lambda x, mask: layer(x, padding_mask=mask)

    return block


# === Transformer ===
# "You Can Train from Scratch" (YCTFS), Tables 4-5: pre-norm blocks with
# rotary, learned or sinusoidal positions.
_TRANSFORMER_KEYS = dict(
    hidden_dim=128,
    num_layers=4,
    num_heads=4,
    intermediate_dim=256,
    dropout=0.0,
    # dropout on the attention weights (LRA's `attention_dropout_rate`;
    # `RotaryMultiHeadAttention`: the exact attention then forms the
    # (L, L) weights)
    attention_dropout=0.0,
    activation="relu",
    # the blocks' and the final LayerNorm's epsilon (flax's: 1e-6)
    layer_norm_epsilon=1e-5,
    # "rotary" | "learned" | "sinusoidal" | "none" (YCTFS Table 4
    # ablation); the sinusoidal base is max_wavelength, as the rotary.
    position_embedding="rotary",
    max_wavelength=10000,
    rotary_disable_half=False,
    # "model": the frequencies range over the width, a band per head
    # (the YCTFS code); "head": every head the whole range
    rotary_scope="model",
    attention_implementation="auto",
    causal=False,
    # biases of the query, key, value and output projections (LRA's
    # SelfAttention has none: transformer.py line 59, `bias=False`)
    attention_bias=True,
    # the queries', keys' and values' total width; None: hidden_dim (LRA's
    # `qkv_dim`)
    attention_dim=None,
    # learned positions (`position_embedding="learned"`) start N(0, std^2);
    # None: Keras's glorot_uniform (LRA's `posemb_init` normal(0.02))
    position_init_std=None,
    # the feed-forward biases start N(0, std^2); None: as dense_init
    # (LRA's MlpBlock: normal(1e-6), common_layers.py line 152)
    ffn_bias_init_std=None,
    # what the attention does with the padding mask
    # (`RotaryMultiHeadAttention`): "keys" (padded keys get no weight),
    # "pairs" (LRA's flax pair mask: padded queries attend uniformly to
    # every key), "none" (ignored, as LRA's linear, Performer,
    # Linformer and Reformer code ignores it) or "longest" (every key up
    # to the batch's longest row: the S4 code base's Transformers, which
    # see no mask in batches padded to that row)
    mask_semantics="keys",
    # LRA's image tasks: pixel value 0 is padding for the attention
    # (`src_padding_mask = inputs > 0`, transformer.py line 148), the CLS
    # token taking the first pixel's (lines 161-167); with
    # mask_semantics "pairs" or "none" (`models.build_encoder`)
    pixel_padding=False,
)


def _transformer_block(attention_type, options=(), by_length=False,
                       seeded_by_index=False):
    """The Transformer's block with `attention_type`, passing the family's
    keys named in `options` to the attention; `by_length`: the attention's
    weights are sized by the task's `sequence_length` (`max_length`);
    `seeded_by_index`: BigBird's random table seeded by the block's index,
    as LRA's encoder does (`connectivity_seed=lyr`)."""

    def make(a, i):
        options_of_length = {}
        if by_length:
            options_of_length["max_length"] = a["sequence_length"]
        if seeded_by_index:
            options_of_length["bigbird_seed"] = i
        return layer("TransformerEncoder")(
            num_heads=a["num_heads"],
            intermediate_dim=a["intermediate_dim"],
            dropout=a["dropout"],
            attention_dropout=a["attention_dropout"],
            activation=a["activation"],
            layer_norm_epsilon=a["layer_norm_epsilon"],
            max_wavelength=a["max_wavelength"],
            use_rotary=a["position_embedding"] in ("rotary",
                                                   "rotary+sinusoidal"),
            rotary_disable_half=a["rotary_disable_half"],
            rotary_scope=a["rotary_scope"],
            causal=a["causal"],
            attention_implementation=a["attention_implementation"],
            dense_init=a["dense_init"],
            attention_bias=a["attention_bias"],
            attention_dim=a["attention_dim"],
            ffn_bias_init_std=a["ffn_bias_init_std"],
            attention_type=attention_type,
            mask_semantics=a["mask_semantics"],
            **{key: a[key] for key in options},
            **options_of_length,
            name=f"transformer_block_{i}",
        )

    return _layer_block(make)


register(Family(
    name="transformer",
    # attention within windows of positions and their neighbours (the
    # NTFS code's Path-X attention, `mhfla`); None: every key
    keys=dict(_TRANSFORMER_KEYS, attention_window=None,
              window_look_backward=1, window_look_forward=1),
    block=_transformer_block("softmax", (
        "attention_window", "window_look_backward", "window_look_forward")),
    paper="Vaswani et al. 2017; rotary: Su et al. 2021; YCTFS Tables 4-5",
))

# LRA's own Transformer baseline (Table 1): the same block, registered
# under its own name so that its preset rows can be LRA's configurations
# (`presets.lra`) beside the YCTFS rows of "transformer".
register(Family(
    name="lra_transformer",
    keys=dict(_TRANSFORMER_KEYS),
    block=_transformer_block("softmax"),
    paper="Vaswani et al. 2017, as Long Range Arena's code configures it "
    "(LRA Table 1)",
))

# === LRA's efficient Transformers ===
# The Transformer's block with the attention replaced
# (`layers.efficient_attention`); LRA Table 1 compares them on one
# backbone configuration per task (appendix A.1).
register(Family(
    name="linear_transformer",
    keys=dict(_TRANSFORMER_KEYS),
    block=_transformer_block("linear"),
    paper="Katharopoulos et al. 2020, Transformers are RNNs (LRA Table 1)",
))
register(Family(
    name="performer",
    keys=dict(
        _TRANSFORMER_KEYS,
        # LRA's `nb_features` (performer_attention.py:204; the ListOps
        # config sets 2) and `ortho_scaling`
        num_random_features=256,
        orthogonal_scaling=0,
        feature_redraw=True,
        # "softmax" (FAVOR+) or "relu" (LRA's default generalized
        # attention: relu + 1e-3 features, no random features)
        performer_kernel="softmax",
    ),
    block=_transformer_block("performer", ("num_random_features",
                                           "orthogonal_scaling",
                                           "feature_redraw",
                                           "performer_kernel")),
    paper="Choromanski et al. 2021, Rethinking Attention with Performers "
    "(LRA Table 1)",
))
register(Family(
    name="local",
    keys=dict(
        _TRANSFORMER_KEYS,
        # LRA's `block_size` (local.py passes 50) and which positions form
        # a block: "contiguous" (the method) or "strided" (LRA's code)
        local_block_size=50,
        local_layout="contiguous",
    ),
    block=_transformer_block("local", ("local_block_size", "local_layout")),
    paper="Local attention, the baseline of Long Range Arena section 3 "
    "(Table 1)",
))
register(Family(
    name="synthesizer",
    keys=dict(
        _TRANSFORMER_KEYS,
        # what LRA's encoder runs on every task (synthesizer.py defaults:
        # 'random', dot products kept)
        synthesizer_mode="random",
        synthesizer_rank=32,
        synthesizer_dot_product=True,
    ),
    block=_transformer_block("synthesizer", ("synthesizer_mode",
                                             "synthesizer_rank",
                                             "synthesizer_dot_product"),
                             by_length=True),
    paper="Tay et al. 2021, Synthesizer (LRA Table 1)",
))
register(Family(
    name="sparse_transformer",
    keys=dict(
        _TRANSFORMER_KEYS,
        # the encoder's Fixed1Pattern(128) | Fixed2Pattern(128, c=32)
        # (sparse_transformer.py lines 43-46; LRA's trainers pass 50 and 10,
        # train_utils.py lines 73-78: the preset rows); the pattern is causal
        sparse_block_size=128,
        sparse_summary_size=32,
        # position 0 global, the pattern over the rest (LRA's
        # use_cls_token, sparse_attention.py lines 185-190)
        sparse_cls_token=False,
        # Child et al.'s other pattern, "strided" (section 4.2): not LRA's
        sparse_pattern="fixed",
    ),
    block=_transformer_block("sparse_transformer", ("sparse_block_size",
                                                    "sparse_summary_size",
                                                    "sparse_cls_token",
                                                    "sparse_pattern")),
    paper="Child et al. 2019, Generating Long Sequences with Sparse "
    "Transformers (LRA Table 1)",
))
register(Family(
    name="longformer",
    keys=dict(
        _TRANSFORMER_KEYS,
        # LRA's sliding_window_size 512 (longformer.py); its classifiers
        # pass no global_mask
        longformer_window=512,
        longformer_global_tokens=0,
    ),
    block=_transformer_block("longformer", ("longformer_window",
                                            "longformer_global_tokens")),
    paper="Beltagy et al. 2020, Longformer (LRA Table 1)",
))
register(Family(
    name="bigbird",
    keys=dict(
        _TRANSFORMER_KEYS,
        # LRA's block_size 64 and num_rand_blocks 3 (bigbird.py,
        # bigbird_attention.py line 323)
        bigbird_block_size=64,
        bigbird_random_blocks=3,
    ),
    block=_transformer_block("bigbird", ("bigbird_block_size",
                                         "bigbird_random_blocks"),
                             seeded_by_index=True),
    paper="Zaheer et al. 2020, Big Bird (LRA Table 1)",
))
register(Family(
    name="reformer",
    keys=dict(
        _TRANSFORMER_KEYS,
        # LRA's defaults, which reformer.py never overrides: n_buckets 10,
        # n_hashes 1, chunks of L / 10 (reformer_attention.py lines
        # 242-245, 145)
        reformer_buckets=10,
        reformer_hashes=1,
        reformer_chunk_size=None,
        # the paper's attention; LRA's rows take its code's ("lra")
        reformer_variant="paper",
    ),
    block=_transformer_block("reformer", ("reformer_buckets",
                                          "reformer_hashes",
                                          "reformer_chunk_size",
                                          "reformer_variant")),
    paper="Kitaev et al. 2020, Reformer (LRA Table 1)",
    can_be_causal=False,
))
register(Family(
    name="sinkhorn",
    keys=dict(
        _TRANSFORMER_KEYS,
        # LRA's block_size 50 and sort_activation 'softmax'
        # (sinkhorn_attention.py lines 215-217); its blocks are strided
        local_block_size=50,
        local_layout="contiguous",
        sinkhorn_sort="softmax",
        sinkhorn_iterations=1,
        # the method's sorted blocks; LRA's rows take its einsum ("lra")
        # and its 25 sort logits (sinkhorn_attention.py lines 216, 382)
        sinkhorn_sorting="permutation",
        sinkhorn_max_blocks=None,
    ),
    block=_transformer_block("sinkhorn", ("local_block_size", "local_layout",
                                          "sinkhorn_sort",
                                          "sinkhorn_iterations",
                                          "sinkhorn_sorting",
                                          "sinkhorn_max_blocks"),
                             by_length=True),
    paper="Tay et al. 2020, Sparse Sinkhorn Attention (LRA Table 1)",
    can_be_causal=False,
))
register(Family(
    name="linformer",
    keys=dict(
        _TRANSFORMER_KEYS,
        # LRA's `low_rank_features` (linformer_attention.py:47)
        projection_dim=16,
    ),
    block=_transformer_block("linformer", ("projection_dim",),
                             by_length=True),
    paper="Wang et al. 2020, Linformer (LRA Table 1)",
    can_be_causal=False,
))

# === State-space models ===
# Keys shared by the SSM families; `causal=False` (the LRA setting) adds
# the backward kernel.
_SSM_KEYS = dict(
    hidden_dim=128,
    num_layers=4,
    state_dim=64,
    init="legs",
    dt_min=0.001,
    dt_max=0.1,
    # S4D and S4 only (DLR and S5 do not read them): how the trained step
    # is parameterised, "exp" (dt = exp(ssm_log_dt)) or "softplus" (dt =
    # softplus(ssm_log_dt), the S4 LRA configs); and the clip of the
    # initial LegS B's imaginary part (None, or the S4 code's 2.0)
    dt_transform="exp",
    B_clip=None,
    output_activation="glu",
    dropout=0.0,
    causal=False,
    # the mixer reads the padded positions as they are (True: the S5
    # code's scan; "longest": those up to the batch's longest row, the
    # NTFS code's DLR); False zeroes them first (the S4 code's S4Block)
    read_padding=False,
    **RESIDUAL_KEYS,
)


def _ssm_args(a, name):
    return dict(
        state_dim=a["state_dim"],
        dt_min=a["dt_min"],
        dt_max=a["dt_max"],
        causal=a["causal"],
        output_activation=a["output_activation"],
        dropout=a["dropout"],
        dense_init=a["dense_init"],
        read_padding=a["read_padding"],
        name=name,
    )


# S4D and S4: the number of independent (A, B) sets the channels share
# (the S4 code's `n_ssm`), None: one per channel; whether `dropout` also
# acts before the activation (the S4 code's FFTConv drops there too).
_S4_KEYS = dict(_SSM_KEYS, num_ssms=None, dropout_before_activation=False)

register(Family(
    name="s4d",
    keys=dict(_S4_KEYS),
    block=residual_block("s4d", lambda a, name: layer("S4D")(
        init=a["init"], dt_transform=a["dt_transform"], B_clip=a["B_clip"],
        num_ssms=a["num_ssms"],
        dropout_before_activation=a["dropout_before_activation"],
        **_ssm_args(a, name))),
    dynamics=("ssm_log_dt", "ssm_log_A_real", "ssm_A_imag", "ssm_B_real",
              "ssm_B_imag"),
    timescales=("ssm_log_dt",),
    input_matrix=("ssm_B_real", "ssm_B_imag"),
    paper="Gu et al. 2022, On the Parameterization and Initialization of "
    "Diagonal State Space Models (S4D)",
))
register(Family(
    name="s4",
    # C_parameterization: "c" (the weights are C) or "c_tilde" (C~ = C (I -
    # A_bar^L), L = kernel_length, as the S4 code's SSMKernelDPLR trains;
    # `layers.S4`); kernel_length is required with "c_tilde".
    keys=dict(_S4_KEYS, C_parameterization="c", kernel_length=None),
    block=residual_block("s4", lambda a, name: layer("S4")(
        init=a["init"], dt_transform=a["dt_transform"], B_clip=a["B_clip"],
        C_parameterization=a["C_parameterization"],
        kernel_length=a["kernel_length"], num_ssms=a["num_ssms"],
        dropout_before_activation=a["dropout_before_activation"],
        **_ssm_args(a, name))),
    dynamics=("ssm_log_dt", "ssm_log_A_real", "ssm_A_imag", "ssm_P_real",
              "ssm_P_imag", "ssm_B_real", "ssm_B_imag"),
    timescales=("ssm_log_dt",),
    paper="Gu et al. 2022, Efficiently Modeling Long Sequences with "
    "Structured State Spaces (S4)",
))
register(Family(
    name="dlr",
    keys=dict(_SSM_KEYS, state_dim=1024, init="structured", dt_min=1e-4),
    block=residual_block("dlr", lambda a, name: layer("DLR")(
        init=a["init"], **_ssm_args(a, name))),
    # init="omega" (the NTFS code's kernel): its shared Lambda and its W
    dynamics=("ssm_log_neg_real", "ssm_theta", "ssm_Lambda_x", "ssm_W_real",
              "ssm_W_imag"),
    paper="Gupta et al. 2022 (DLR); Never Train from Scratch eq. 3",
))
register(Family(
    name="s5",
    # S5 always starts from HiPPO-N: no `init`.
    keys={k: v for k, v in dict(_SSM_KEYS, state_dim=16, num_blocks=8,
                                output_activation="half_glu",
                                C_init="trunc_standard_normal",
                                clip_eigs=False).items()
          if k != "init"},
    block=residual_block("s5", lambda a, name: layer("S5")(
        num_blocks=a["num_blocks"], C_init=a["C_init"],
        clip_eigs=a["clip_eigs"], **_ssm_args(a, name))),
    dynamics=("ssm_Lambda_real", "ssm_Lambda_imag", "ssm_log_dt",
              "ssm_B_real", "ssm_B_imag"),
    timescales=("ssm_log_dt",),
    input_matrix=("ssm_B_real", "ssm_B_imag"),
    paper="Smith et al. 2023, Simplified State Space Layers (S5)",
))

register(Family(
    name="lru",
    # No discretisation, hence no init / dt keys: the LRU's eigenvalues
    # start on a ring (`layers.LRU`).
    keys=dict(
        {k: v for k, v in _SSM_KEYS.items()
         if k not in ("init", "dt_min", "dt_max", "dt_transform", "B_clip")},
        r_min=0.0,
        r_max=0.99,
        max_phase=2 * math.pi,
        recurrence="chunked",
    ),
    block=residual_block("lru", lambda a, name: layer("LRU")(
        state_dim=a["state_dim"], r_min=a["r_min"], r_max=a["r_max"],
        max_phase=a["max_phase"], recurrence=a["recurrence"],
        causal=a["causal"], output_activation=a["output_activation"],
        dropout=a["dropout"], dense_init=a["dense_init"],
        read_padding=a["read_padding"], name=name)),
    # the weights minimal-LRU trains at its SSM rate without weight decay
    # (lru/train_helpers.py lines 91-96)
    dynamics=("ssm_nu_log", "ssm_theta_log", "ssm_gamma_log", "ssm_B_real",
              "ssm_B_imag"),
    input_matrix=("ssm_B_real", "ssm_B_imag"),
    paper="Orvieto et al. 2023, Resurrecting Recurrent Neural Networks for "
    "Long Sequences (LRU)",
))

register(Family(
    name="rtf",
    # The transfer function has no discretisation: no init / dt keys.
    keys=dict(
        {k: v for k, v in _SSM_KEYS.items()
         if k not in ("init", "dt_min", "dt_max", "dt_transform", "B_clip")},
        num_denominators=None,  # RTF's num_a; None: one per channel
        truncation=None,  # RTF's trunc_len; None: the task's length
        # the dropout inside the layer, after its activation; None:
        # `dropout` (the RTF configs set the layer's apart: its
        # `model.layer.dropout`, 0.0 in `configs/model/layer/rtf.yaml`)
        layer_dropout=None,
        # that dropout's mask shared along the sequence; the RTF code's
        # layer draws one per element (`layers.StateSpaceLayer`)
        tie_layer_dropout=True,
    ),
    block=residual_block("rtf", lambda a, name: layer("RTF")(
        state_dim=a["state_dim"], num_denominators=a["num_denominators"],
        truncation=a["truncation"] or a["sequence_length"],
        causal=a["causal"], output_activation=a["output_activation"],
        dropout=(a["dropout"] if a["layer_dropout"] is None
                 else a["layer_dropout"]),
        tie_dropout=a["tie_layer_dropout"], dense_init=a["dense_init"],
        read_padding=a["read_padding"], name=name)),
    # `ab` and `h_0`, which the RTF wrapper registers with the layer's
    # own rate and decay (rtf_wrapper.py lines 25-26)
    dynamics=("ssm_numerator", "ssm_denominator", "ssm_feedthrough"),
    paper="Parnichkun et al. 2024, State-Free Inference of State-Space "
    "Models: The Transfer Function Approach (RTF)",
))

# === MEGA ===
register(Family(
    name="mega",
    keys=dict(
        hidden_dim=128,
        num_layers=4,
        key_dim=64,  # MEGA's z_dim
        intermediate_dim=256,  # value width (MEGA's "hidden dim")
        ffn_intermediate_dim=256,
        ema_dim=16,  # MEGA's n_dim: EMA dimensions per channel
        attention_activation="softmax",
        chunk_size=None,  # None: full attention
        max_positions=None,  # None: the task's sequence_length
        truncation=None,  # EMA kernel length cap; None: the whole length
        dropout=0.0,
        attention_dropout=0.0,
        prenorm=False,  # the MEGA code's encoder_normalize_before default
        # the MEGA code's --norm-type: "layer", "scale" or "batch" (its
        # BatchNorm1d: PyTorch's momentum and unbiased moving variance)
        norm="layer",
        batch_norm_momentum=0.9,
        batch_norm_unbiased=True,
        causal=False,
    ),
    block=_layer_block(lambda a, i: layer("MegaEncoder")(
        key_dim=a["key_dim"],
        intermediate_dim=a["intermediate_dim"],
        ffn_intermediate_dim=a["ffn_intermediate_dim"],
        ema_dim=a["ema_dim"],
        attention_activation=a["attention_activation"],
        causal=a["causal"],
        chunk_size=a["chunk_size"],
        max_positions=a["max_positions"] or a["sequence_length"],
        truncation=a["truncation"],
        dropout=a["dropout"],
        attention_dropout=a["attention_dropout"],
        prenorm=a["prenorm"],
        norm=a["norm"],
        batch_norm_momentum=a["batch_norm_momentum"],
        batch_norm_unbiased=a["batch_norm_unbiased"],
        name=f"mega_block_{i}",
    )),
    dynamics=("ema_delta", "ema_alpha", "ema_beta", "ema_gamma",
              "ema_omega"),
    paper="Ma et al. 2023, Mega: Moving Average Equipped Gated Attention",
))

# === MEGALODON ===
register(Family(
    name="megalodon",
    keys=dict(
        hidden_dim=128,
        num_layers=4,
        key_dim=64,  # z_dim, split over the heads
        num_heads=1,
        intermediate_dim=256,  # value width (value_dim)
        ffn_intermediate_dim=256,
        ema_dim=16,  # cema_ndim
        chunk_size=None,  # None: full attention
        truncation=None,  # CEMA kernel length cap
        # the timestep norms' groups (norm_num_groups, 32 in the code's
        # models); the stack's final norm is one (MegaOutputLayer.final_norm)
        norm="timestep",
        norm_groups=32,
        max_wavelength=10000,  # rope_base
        swiglu=False,
        # the code's rescale_nffn: block i's FFN branch scaled, from
        # 0.1 * 0.5^i
        rescale_ffn=False,
        dropout=0.0,
        attention_dropout=0.0,
        hidden_dropout=0.0,
        causal=False,
    ),
    block=_layer_block(lambda a, i: layer("MegalodonEncoder")(
        key_dim=a["key_dim"],
        intermediate_dim=a["intermediate_dim"],
        ffn_intermediate_dim=a["ffn_intermediate_dim"],
        num_heads=a["num_heads"],
        ema_dim=a["ema_dim"],
        causal=a["causal"],
        chunk_size=a["chunk_size"],
        truncation=a["truncation"],
        norm_groups=a["norm_groups"],
        max_wavelength=a["max_wavelength"],
        dropout=a["dropout"],
        attention_dropout=a["attention_dropout"],
        hidden_dropout=a["hidden_dropout"],
        swiglu=a["swiglu"],
        ffn_rescale=0.1 * 0.5**i if a["rescale_ffn"] else None,
        name=f"megalodon_block_{i}",
    )),
    dynamics=("cema_alpha", "cema_delta", "cema_theta", "cema_gamma",
              "cema_omega"),
    paper="Ma et al. 2024, Megalodon: Efficient LLM Pretraining and "
    "Inference with Unlimited Context Length",
))

# === Convolutions ===
register(Family(
    name="gmlp",
    keys=dict(
        hidden_dim=128,
        num_layers=6,
        intermediate_dim=256,  # YCTFS Table 6 "H"
        num_kernel_channels=2,  # YCTFS Table 6 "Independent channels"
        kernel_size=None,  # None: the full sequence_length
        activation="gelu",
        # The YCTFS block (long-transformers@lra-paper
        # src/models/layers/gmlp.py, src/models/functional/fft_conv1d.py):
        # z1 * LN(conv(z2) + b) with a bias per kernel channel, kernel
        # N(0, 1e-5^2), orthonormal FFT; "before" / "position" / "gmlp" /
        # None give Liu et al.'s gMLP (see GatedLongConvolution).
        gate_norm="after",
        gate_bias="channel",
        kernel_initializer="yctfs",
        fft_norm="ortho",
        # dropout on the gated product before V; the YCTFS block has none
        # (only the residual's `dropout`, gmlp.py lines 158-161)
        gate_dropout=0.0,
        dropout=0.0,
        causal=False,
        **RESIDUAL_KEYS,
    ),
    block=residual_block("gmlp", lambda a, name: layer("GatedLongConvolution")(
        intermediate_dim=a["intermediate_dim"],
        sequence_length=a["sequence_length"],
        num_kernel_channels=a["num_kernel_channels"],
        kernel_size=a["kernel_size"],
        activation=a["activation"],
        causal=a["causal"],
        gate_norm=a["gate_norm"],
        gate_bias=a["gate_bias"],
        kernel_initializer=a["kernel_initializer"],
        fft_norm=a["fft_norm"],
        dropout=a["gate_dropout"],
        dense_init=a["dense_init"],
        name=name,
    )),
    paper="Liu et al. 2021 (gMLP); YCTFS eq. 5 and Table 6",
))
register(Family(
    name="conv",
    keys=dict(
        hidden_dim=128,
        num_layers=6,
        intermediate_dim=256,  # YCTFS Table 7 "H"
        kernel_size=31,
        groups=1,
        activation="relu",
        dropout=0.0,
        causal=False,
        **RESIDUAL_KEYS,
    ),
    block=residual_block("conv", lambda a, name: layer("ConvBlock")(
        kernel_size=a["kernel_size"],
        intermediate_dim=a["intermediate_dim"],
        groups=a["groups"],
        activation=a["activation"],
        causal=a["causal"],
        dropout=a["dropout"],
        dense_init=a["dense_init"],
        name=name,
    )),
    paper="YCTFS Table 7 and A.2 (the locality probe)",
))
