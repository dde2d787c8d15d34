"""The type and range of every hyperparameter.

`check(hp)` validates a resolved row (`lra_keras.hparams.resolve` calls it
after the user's overrides, before any data is loaded): each value must
have its key's type (an int is not a bool, a bool not an int, `1.5` not
an int; an int is a float), lie in its range, or be one of its choices;
a key without a rule is an error too, so a new key needs one here. The
errors name the key, the value and what is allowed.

Values that only a layer or a technique can judge (an activation's name, a
family's `init`) are checked there; keys whose meaning depends on others
(the SPT objective and loss, `multitask_loss_positions`) by the technique
that owns them (`Technique.check`).

This module imports no Keras backend.
"""

import dataclasses
import math

from lra_keras.data.pathfinder import DIFFICULTIES


@dataclasses.dataclass(frozen=True)
class Rule:
    """What one key accepts.

    Args:
        kind: `int`, `float`, `bool` or `str`; `object` for `choices`
            of mixed types (each value matched with its type).
        minimum: number or None. The smallest value allowed (inclusive).
        maximum: number or None. The largest value allowed (inclusive).
        positive: bool. Numbers must be > 0 (for a float `minimum=0` would
            allow 0).
        choices: tuple or None. The allowed values.
        optional: bool. `None` is allowed (it means "the default" or "off",
            as the key's comment in `hparams.COMMON_KEYS` or its owner
            says).
    """

    kind: type
    minimum: float | None = None
    maximum: float | None = None
    positive: bool = False
    choices: tuple | None = None
    optional: bool = False

    def describe(self):
        what = {int: "an int", float: "a number", bool: "True or False",
                str: "a string", object: "a value"}[self.kind]
        if self.choices is not None:
            what = f"one of {list(self.choices)}"
        if self.positive:
            what += " > 0"
        if self.minimum is not None:
            what += f" >= {self.minimum}"
        if self.maximum is not None:
            what += f" <= {self.maximum}"
        return what + (" or None" if self.optional else "")

    def accepts(self, value):
        if value is None:
            return self.optional
        if self.kind is object:  # True is not 1 here, nor False 0
            return any(type(value) is type(choice) and value == choice
                       for choice in self.choices)
        if self.kind is bool:
            return isinstance(value, bool)
        if isinstance(value, bool):
            return False
        if self.kind is int and not isinstance(value, int):
            return False
        if self.kind is float:
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                return False
        if self.kind is str and not isinstance(value, str):
            return False
        if self.choices is not None and value not in self.choices:
            return False
        if self.positive and value <= 0:
            return False
        if self.minimum is not None and value < self.minimum:
            return False
        return self.maximum is None or value <= self.maximum


def _count(optional=False):
    return Rule(int, minimum=1, optional=optional)


def _rate(optional=False):
    # 0 is allowed: it freezes the weights (the tests use it).
    return Rule(float, minimum=0, optional=optional)


def _fraction(**kwargs):
    return Rule(float, minimum=0, maximum=1, **kwargs)


_TEXT = Rule(str)

# The learning-rate schedules of `lra_keras.training.make_schedule`.
SCHEDULES = ("constant", "cosine", "linear", "plateau", "rsqrt")
# how "constant" and "cosine" count their steps (`make_schedule`; the
# other schedules ignore it): Keras's `CosineDecay`, or the S5 training
# loop's (`optimizers.S5Schedule`)
SCHEDULE_STYLES = ("keras", "s5")
# `lra_keras.training.optimization`'s choices (which weights decay; the rate
# of the step sizes); there with their meaning, here because this module
# imports no Keras.
WEIGHT_DECAY_ON = ("all", "all_but_dynamics",
                   "all_but_norms_biases_dynamics", "kernels")
DT_LEARNING_RATES = ("ssm", "global")
# the rate of the input matrix B (`B_learning_rate`), as of dt
B_LEARNING_RATES = DT_LEARNING_RATES
# where AdamW adds epsilon (lra_keras.optimizers.AdamW)
EPSILON_STYLES = ("keras", "torch")
# how dense projections start (lra_keras.layers.dense_init)
DENSE_INITS = ("keras", "torch", "lecun")
# Keras's global dtype policy during a run (`models.dtype_policy_scope`).
DTYPE_POLICIES = ("float32", "mixed_bfloat16", "mixed_float16")
# what an attention does with the padding mask
# (`RotaryMultiHeadAttention(mask_semantics=...)`)
MASK_SEMANTICS = ("keys", "pairs", "none", "longest", "lra_blocks")
# the attentions (and models) whose LRA code masks within its blocks its own
# way (the local and BigBird ones after padding by a whole block), which
# mask_semantics="lra_blocks" copies
LRA_BLOCKED = ("local", "bigbird", "sinkhorn")
# the Sinkhorn attention's sorted blocks: the method's or LRA's einsum
# (`efficient_attention.sinkhorn_attention(sorting=...)`)
SINKHORN_SORTINGS = ("permutation", "lra")
# the Reformer: the paper's LSH attention or LRA's code of it
# (`RotaryMultiHeadAttention(reformer_variant=...)`)
REFORMER_VARIANTS = ("paper", "lra")
# which positions a batch norm counts besides the real tokens
# (`MaskedBatchNormalization(count_padding=...)`): none, every one, or
# those up to the batch's longest row
COUNT_PADDING = (False, True, "longest")
# which padded positions an SSM's mixing reads
# (`StateSpaceLayer(read_padding=...)`): none, every one, or those up to
# the batch's longest row
READ_PADDING = (False, True, "longest")

RULES = dict(
    # --- identity of the row (set from get_hparams's arguments) ---
    task=_TEXT,
    model=_TEXT,
    preset=_TEXT,
    technique=_TEXT,
    augment=Rule(bool),
    source=_TEXT,
    # --- data ---
    sequence_length=_count(),
    # A size of 0 would keep nothing (and `x[:0]` is no prefix): None
    # means the whole split.
    train_samples=_count(optional=True),
    val_samples=_count(optional=True),
    test_samples=_count(optional=True),
    num_samples=_count(optional=True),
    difficulty=Rule(str, choices=tuple(DIFFICULTIES), optional=True),
    min_length=Rule(int, minimum=0, optional=True),
    max_depth=Rule(int, minimum=1, optional=True),
    train_difficulty=Rule(str, choices=(*DIFFICULTIES, "all"),
                          optional=True),
    eval_difficulty=Rule(str, choices=(*DIFFICULTIES, "all"),
                         optional=True),
    augment_affine=Rule(bool),
    towers=Rule(int, minimum=1, maximum=2),
    append_eos=Rule(bool),
    padded_length=_count(optional=True),
    bucket_step=_count(optional=True),
    vocabulary_size=_count(),
    num_classes=Rule(int, minimum=2),
    padding_id=Rule(int, minimum=0, optional=True),
    # --- optimisation ---
    batch_size=_count(),
    epochs=_count(),
    train_steps=_count(optional=True),
    time_limit_minutes=Rule(float, positive=True, optional=True),
    init_from=Rule(str, optional=True),
    curriculum_epochs=_count(optional=True),
    curriculum_difficulty=Rule(str, choices=tuple(DIFFICULTIES)),
    jit_compile=Rule(bool, optional=True),
    learning_rate=_rate(),
    ssm_learning_rate=_rate(optional=True),
    dt_learning_rate=Rule(str, choices=DT_LEARNING_RATES),
    dt_weight_decay=Rule(bool),
    B_learning_rate=Rule(str, choices=B_LEARNING_RATES),
    B_weight_decay=Rule(bool),
    weight_decay=Rule(float, minimum=0),
    weight_decay_on=Rule(str, choices=WEIGHT_DECAY_ON),
    adam_beta_1=Rule(float, minimum=0, maximum=0.999999),
    adam_beta_2=Rule(float, minimum=0, maximum=0.999999),
    adam_epsilon=Rule(float, positive=True),
    adam_epsilon_style=Rule(str, choices=EPSILON_STYLES),
    warmup_steps=Rule(int, minimum=0),
    schedule=Rule(str, choices=SCHEDULES),
    schedule_style=Rule(str, choices=SCHEDULE_STYLES),
    schedule_steps=_count(optional=True),
    warmup_power=Rule(float, positive=True),
    warmup_initial_learning_rate=Rule(float, minimum=0.0),
    plateau_factor=Rule(float, positive=True, maximum=1),
    plateau_patience=_count(),
    plateau_min_learning_rate=Rule(float, minimum=0),
    final_decay_factor=Rule(float, positive=True, maximum=1),
    final_decay_fraction=_fraction(),
    final_decay_style=Rule(str, choices=("reset", "multiply")),
    swa_start_fraction=_fraction(optional=True),
    swa_learning_rate=Rule(float, positive=True, optional=True),
    swa_annealing_epochs=Rule(int, minimum=0),
    swa_annealing=Rule(str, choices=("cos", "linear")),
    gradient_clipnorm=Rule(float, positive=True, optional=True),
    early_stopping_patience=_count(optional=True),
    dtype_policy=Rule(str, choices=DTYPE_POLICIES),
    # --- techniques (their owners check how the keys combine) ---
    multitask_loss_weight=Rule(float, minimum=0),
    multitask_mask_rate=_fraction(),
    multitask_random_fraction=_fraction(),
    multitask_loss_positions=_TEXT,
    spt_mask_rate=_fraction(),
    pretrain_objective=_TEXT,
    pretrain_loss=_TEXT,
    pretrain_epochs=Rule(int, minimum=0, optional=True),
    pretrain_batch_size=_count(optional=True),
    pretrain_schedule=Rule(str, choices=SCHEDULES, optional=True),
    pretrain_warmup_steps=Rule(int, minimum=0, optional=True),
    pretrain_learning_rate=_rate(optional=True),
    pretrain_share=Rule(float, minimum=0, maximum=1, optional=True),
    compute_tied_epochs=_count(optional=True),
    augment_d4=Rule(bool),
    # --- architecture (`lra_keras.models.families`) ---
    hidden_dim=_count(),
    num_layers=_count(),
    num_heads=_count(),
    intermediate_dim=_count(),
    ffn_intermediate_dim=_count(),
    key_dim=_count(),
    ema_dim=_count(),
    state_dim=_count(),
    num_blocks=_count(),
    num_kernel_channels=_count(),
    groups=_count(),
    kernel_size=_count(optional=True),
    chunk_size=_count(optional=True),
    max_positions=_count(optional=True),
    max_wavelength=_count(),
    dropout=Rule(float, minimum=0, maximum=1),
    attention_dropout=Rule(float, minimum=0, maximum=1),
    layer_norm_epsilon=Rule(float, positive=True),
    dt_min=Rule(float, positive=True),
    dt_max=Rule(float, positive=True),
    dt_transform=Rule(str, choices=("exp", "softplus")),
    B_clip=Rule(float, positive=True, optional=True),
    # S4's trained C or C~ = C (I - A_bar^L) (`lra_keras.layers.S4`)
    C_parameterization=Rule(str, choices=("c", "c_tilde")),
    kernel_length=_count(optional=True),
    # S4D and S4: (A, B) sets shared by the channels (S4's n_ssm)
    num_ssms=_count(optional=True),
    dropout_before_activation=Rule(bool),
    causal=Rule(bool),
    prenorm=Rule(bool),
    # lra_keras.layers.sequence_norm.NORMS
    norm=Rule(str, choices=("layer", "batch", "scale", "timestep")),
    batch_norm_momentum=_fraction(),
    batch_norm_unbiased=Rule(bool),
    batch_norm_count_padding=Rule(object, choices=COUNT_PADDING),
    read_padding=Rule(object, choices=READ_PADDING),
    tie_dropout=Rule(bool),
    final_norm=Rule(bool),
    embedding_init=Rule(str, choices=("uniform", "normal", "scaled_normal",
                                      "lecun")),
    embedding_fan_in=_count(optional=True),
    embedding_bias=Rule(bool),
    cls_token=Rule(bool),
    attention_bias=Rule(bool),
    attention_dim=_count(optional=True),
    position_init_std=Rule(float, positive=True, optional=True),
    ffn_bias_init_std=Rule(float, positive=True, optional=True),
    dense_init=Rule(str, choices=DENSE_INITS),
    embedding_dropout=Rule(float, minimum=0, maximum=1, optional=True),
    input_encoder=Rule(str, choices=("embedding", "linear")),
    pixel_mean=Rule(float, minimum=0, maximum=1),
    pixel_std=Rule(float, positive=True),
    input_encoder_init=Rule(str, choices=("torch", "lecun", "mega")),
    pixel_mask_input=Rule(str, choices=("embedding", "channel"),
                          optional=True),
    truncation=_count(optional=True),
    gate_norm=Rule(str, choices=("before", "after"), optional=True),
    gate_bias=Rule(str, choices=("position", "channel")),
    kernel_initializer=_TEXT,
    fft_norm=Rule(str, choices=("ortho",), optional=True),
    gate_dropout=Rule(float, minimum=0, maximum=1),
    C_init=Rule(str, choices=("trunc_standard_normal", "lecun_normal",
                              "complex_normal")),
    clip_eigs=Rule(bool),
    # the LRU's ring initialisation and recurrence (`lra_keras.layers.LRU`)
    r_min=Rule(float, minimum=0, maximum=1),
    r_max=Rule(float, positive=True, maximum=1),
    max_phase=Rule(float, positive=True),
    recurrence=Rule(str, choices=("chunked", "convolution", "scan")),
    # MEGALODON (`lra_keras.layers.MegalodonEncoder`): the timestep
    # norms' groups, the SwiGLU FFN, the code's `rescale_nffn`, dropout on
    # the normalised EMA output and the gated attention
    norm_groups=_count(),
    swiglu=Rule(bool),
    rescale_ffn=Rule(bool),
    hidden_dropout=Rule(float, minimum=0, maximum=1),
    # RTF (`lra_keras.layers.RTF`; its `truncation` is MEGA's key)
    num_denominators=_count(optional=True),
    layer_dropout=Rule(float, minimum=0, maximum=1, optional=True),
    tie_layer_dropout=Rule(bool),
    rotary_disable_half=Rule(bool),
    rotary_scope=Rule(str, choices=("head", "model")),
    # the efficient attentions (lra_keras.layers.efficient_attention)
    num_random_features=_count(),
    orthogonal_scaling=Rule(int, choices=(0, 1)),
    feature_redraw=Rule(bool),
    performer_kernel=Rule(str, choices=("softmax", "relu")),
    projection_dim=_count(),
    local_block_size=_count(),
    local_layout=Rule(str, choices=("contiguous", "strided")),
    synthesizer_mode=Rule(str, choices=("random", "factorized_random",
                                        "dense", "dense+random")),
    synthesizer_rank=_count(),
    synthesizer_dot_product=Rule(bool),
    sparse_block_size=_count(),
    sparse_summary_size=Rule(int, minimum=0),
    sparse_cls_token=Rule(bool),
    sparse_pattern=Rule(str, choices=("fixed", "strided")),
    longformer_window=_count(),
    attention_window=_count(optional=True),
    window_look_backward=Rule(int, minimum=0),
    window_look_forward=Rule(int, minimum=0),
    longformer_global_tokens=Rule(int, minimum=0),
    bigbird_block_size=_count(),
    bigbird_random_blocks=Rule(int, minimum=0),
    reformer_buckets=_count(),
    reformer_hashes=_count(),
    reformer_chunk_size=_count(optional=True),
    reformer_variant=Rule(str, choices=REFORMER_VARIANTS),
    sinkhorn_sort=Rule(str, choices=("softmax", "sinkhorn")),
    mask_semantics=Rule(str, choices=MASK_SEMANTICS),
    pixel_padding=Rule(bool),
    sinkhorn_iterations=_count(),
    sinkhorn_sorting=Rule(str, choices=SINKHORN_SORTINGS),
    sinkhorn_max_blocks=_count(optional=True),
    pooling=Rule(str, choices=("mean", "max", "first", "last")),
    pool_padding=Rule(bool),
    head=Rule(str, choices=("mlp", "mlp2", "linear")),
    head_hidden_dim=_count(optional=True),
    head_activation=_TEXT,
    head_dense_init=Rule(str, choices=DENSE_INITS, optional=True),
    head_dropout=Rule(float, minimum=0.0, maximum=0.99),
    logits_bias=Rule(bool),
    binary_logit=Rule(bool),
    pair_features=Rule(str, choices=("nli", "concat")),
    position_embedding=_TEXT,
    activation=_TEXT,
    attention_activation=_TEXT,
    attention_implementation=_TEXT,
    output_activation=_TEXT,
    init=_TEXT,
)


def check(hp, origins=None):
    """Raises ValueError unless every key of `hp` has a rule it meets.

    Args:
        hp: dict. A resolved row.
        origins: dict or None. Key -> where its value came from; named in
            the error.
    """
    problems = []
    for key in sorted(hp):
        rule = RULES.get(key)
        where = f" (from {origins[key]})" if origins and key in origins else ""
        if rule is None:
            problems.append(f"{key}: no rule in lra_keras.schema.RULES")
        elif not rule.accepts(hp[key]):
            problems.append(
                f"{key}={hp[key]!r}{where}: expected {rule.describe()}"
            )
    if hp.get("input_encoder") == "linear" and hp.get("padding_id") is not None:
        problems.append(
            "input_encoder='linear' encodes grey values: only the pixel "
            f"tasks (no padding) take it, not task={hp.get('task')!r}"
        )
    if (hp.get("append_eos") is True and "padding_id" in hp
            and hp["padding_id"] is None):
        problems.append(
            "append_eos=True ends a token sequence with an end token; the "
            f"pixel tasks' sequences have none (task={hp.get('task')!r})"
        )
    padded = hp.get("padded_length")
    if isinstance(padded, int) and not isinstance(padded, bool):
        if "padding_id" in hp and hp["padding_id"] is None:
            problems.append(
                f"padded_length={padded!r} pads token sequences; the pixel "
                f"tasks' have no padding (task={hp.get('task')!r})"
            )
        length = hp.get("sequence_length")
        if isinstance(length, int) and padded < length:
            problems.append(
                f"padded_length={padded!r} < sequence_length={length!r}: "
                "padding lengthens the loaded sequences, never cuts them; "
                "set padded_length to at least sequence_length, or None "
                "(the S5 and LRU ListOps rows pad to 2048)"
            )
    if hp.get("curriculum_epochs") and hp.get("difficulty") is None:
        problems.append(
            f"curriculum_epochs={hp['curriculum_epochs']!r} trains first on "
            "images of curriculum_difficulty: only the Pathfinder tasks "
            f"have difficulty sets, not task={hp.get('task')!r}"
        )
    if hp.get("weight_decay_on") == "kernels":
        for key in ("B_weight_decay", "dt_weight_decay"):
            if hp.get(key):
                problems.append(
                    f"{key}=True decays a dynamics weight, which "
                    "weight_decay_on='kernels' (matrices only) never decays"
                )
    if hp.get("C_parameterization") == "c_tilde":
        # C~ is attuned to kernel_length: no input may be longer (`S4`).
        length = hp.get("kernel_length")
        if length is None:
            problems.append(
                "C_parameterization='c_tilde' needs kernel_length (an int)"
            )
        else:
            for key in ("sequence_length", "padded_length"):
                longest = hp.get(key)
                if isinstance(longest, int) and length < longest:
                    problems.append(
                        f"kernel_length={length!r} < {key}={longest!r}: "
                        "with C_parameterization='c_tilde' no input may be "
                        "longer than kernel_length"
                    )
    if hp.get("binary_logit") and hp.get("num_classes", 2) != 2:
        problems.append(
            "binary_logit=True gives the log-odds of a two-class task; "
            f"task={hp.get('task')!r} has {hp['num_classes']} classes"
        )
    if (hp.get("init") == "dfout" and hp.get("model") == "s4d"
            and hp.get("num_ssms") is not None):
        problems.append(
            "init='dfout' places each channel's poles from its own step: "
            f"num_ssms must be None, not {hp['num_ssms']!r}"
        )
    if hp.get("train_steps") and hp.get("compute_tied_epochs"):
        problems.append(
            "compute_tied_epochs ties pretraining and finetuning by epochs; "
            f"train_steps={hp['train_steps']!r} counts steps: set one"
        )
    # rsqrt divides by sqrt(max(step, warmup)); pretraining takes its own
    # warmup where set (`training.pretraining`)
    pretrain_warmup = hp.get("pretrain_warmup_steps")
    if pretrain_warmup is None:
        pretrain_warmup = hp.get("warmup_steps")
    for schedule, warmup, named in (
            ("schedule", hp.get("warmup_steps"), "warmup_steps"),
            ("pretrain_schedule", pretrain_warmup,
             "pretrain_warmup_steps (else warmup_steps)")):
        if hp.get(schedule) == "rsqrt" and not warmup:
            problems.append(
                f"{schedule}='rsqrt' divides by sqrt(max(step, warmup)): "
                f"{named} must be >= 1, not {warmup!r}"
            )
    if hp.get("causal") and hp.get("cls_token"):
        problems.append(
            "cls_token=True prepends the token the head reads at position "
            "0, which a causal model lets see only itself: with "
            "causal=True (a causal objective sets it) set cls_token=False "
            "and a pooling that reads the sequence (NTFS's causal rows pool "
            "the last token: pooling='last')"
        )
    if hp.get("causal") and hp.get("sparse_cls_token"):
        problems.append(
            "sparse_cls_token=True lets position 0 attend to every "
            "position, the future included: not with causal=True (a "
            "causal objective sets it; set sparse_cls_token=False)"
        )
    if hp.get("sparse_pattern") == "strided" and hp.get("sparse_cls_token"):
        problems.append(
            "sparse_cls_token=True is LRA's class-token variant of the fixed "
            "pattern; the strided pattern (sparse_pattern='strided') has "
            "none: set sparse_cls_token=False and cls_token=False, and pool "
            "the sequence (pooling='mean')"
        )
    if (hp.get("model") == "sparse_transformer" and hp.get("cls_token")
            and not hp.get("sparse_cls_token")):
        problems.append(
            "the Sparse Transformer's pattern is causal: its class token "
            "(cls_token=True) sees only itself unless sparse_cls_token=True "
            "makes position 0 global, as LRA's encoder does"
        )
    if (hp.get("attention_dim") and hp.get("num_heads")
            and hp["attention_dim"] % hp["num_heads"]):
        problems.append(
            f"attention_dim={hp['attention_dim']!r} is split over the "
            f"heads: num_heads={hp['num_heads']!r} must divide it"
        )
    if (hp.get("pixel_mask_input") == "channel"
            and hp.get("input_encoder") != "linear"):
        problems.append(
            "pixel_mask_input='channel' is a channel of the pixel tasks' "
            "linear encoder: it needs input_encoder='linear', not "
            f"{hp.get('input_encoder')!r}"
        )
    if (hp.get("swa_start_fraction") is not None
            and hp.get("norm") == "batch"):
        problems.append(
            "stochastic weight averaging (swa_start_fraction) averages the "
            "trained weights only, without Lightning's BatchNorm refresh "
            "pass: not with norm='batch'"
        )
    if (hp.get("swa_start_fraction") is not None
            and hp.get("swa_learning_rate") is None):
        problems.append(
            "swa_start_fraction turns on stochastic weight averaging, which "
            "anneals the rate to swa_learning_rate: set it (YCTFS's text "
            "row: 0.01), not None"
        )
    if hp.get("pixel_padding") and (
            hp.get("padding_id") is not None
            or hp.get("mask_semantics") in ("keys", "longest")):
        problems.append(
            "pixel_padding=True masks black pixels as LRA's image tasks do: "
            "only on the pixel tasks (no padding id; task="
            f"{hp.get('task')!r}), and with mask_semantics 'pairs', "
            "'lra_blocks' or 'none', the attentions LRA's code masks that "
            "way (with 'keys' "
            "or 'longest' a padded query would be a real one, which no LRA "
            "attention "
            f"does; mask_semantics={hp.get('mask_semantics')!r})"
        )
    if hp.get("attention_window") is not None and (
            hp.get("causal") or hp.get("mask_semantics") == "pairs"):
        problems.append(
            f"attention_window={hp['attention_window']!r} attends whole "
            "windows, neighbours on both sides: not with causal=True (the "
            "NTFS code's local attention refuses to look forward when "
            "causal) nor mask_semantics='pairs'; set attention_window=None"
        )
    if (hp.get("mask_semantics") == "pairs" and hp.get("model") not in (
            "transformer", "lra_transformer", "synthesizer",
            "sparse_transformer", "longformer")):
        problems.append(
            "mask_semantics='pairs' defines padded queries (uniform over "
            "every key) for the attentions LRA's code runs densely under "
            "its masks (the Transformer, Synthesizer, Sparse Transformer "
            f"and Longformer), not model={hp.get('model')!r}"
        )
    if hp.get("reformer_variant") == "lra" and (
            hp.get("mask_semantics") != "none"
            or hp.get("reformer_chunk_size") is not None
            or hp.get("reformer_buckets", 2) < 2
            or hp.get("attention_dim") not in (None, hp.get("hidden_dim"))):
        problems.append(
            "reformer_variant='lra' reads no padding mask, cuts each round "
            "into one chunk per bucket and returns its heads as the width, "
            "as LRA's Reformer: it needs mask_semantics='none', "
            "reformer_chunk_size=None, reformer_buckets >= 2 and "
            "attention_dim=None (the width), not "
            f"{hp.get('mask_semantics')!r}, "
            f"{hp.get('reformer_chunk_size')!r}, "
            f"{hp.get('reformer_buckets')!r} and "
            f"{hp.get('attention_dim')!r}"
        )
    length = hp.get("padded_length") or hp.get("sequence_length")
    if (hp.get("sinkhorn_sorting") == "permutation"
            and hp.get("sinkhorn_max_blocks") is not None and length
            and hp["sinkhorn_max_blocks"]
            < math.ceil(length / hp["local_block_size"])):
        problems.append(
            "sinkhorn_sorting='permutation' sorts every block: "
            f"{math.ceil(length / hp['local_block_size'])} blocks of "
            f"{hp['local_block_size']} in {length} positions need as many "
            "sort logits, not "
            f"sinkhorn_max_blocks={hp['sinkhorn_max_blocks']}; set "
            "sinkhorn_max_blocks=None (or sinkhorn_sorting='lra', LRA's)"
        )
    if (hp.get("mask_semantics") == "lra_blocks"
            and hp.get("model") not in LRA_BLOCKED):
        problems.append(
            "mask_semantics='lra_blocks' pads and masks as LRA's local, "
            "BigBird and Sinkhorn attentions do (their masks within blocks; "
            "the first two after a whole block of padding counted real): "
            "only model='local', 'bigbird' or 'sinkhorn', "
            f"not model={hp.get('model')!r}"
        )
    if hp.get("dt_min") is not None and hp.get("dt_max") is not None:
        if hp["dt_min"] > hp["dt_max"]:
            problems.append(
                f"dt_min={hp['dt_min']!r} > dt_max={hp['dt_max']!r}"
            )
    if problems:
        raise ValueError("Invalid hyperparameter(s): " + "; ".join(problems))
