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
            `add_weight`) that are the mixer's dynamics: no weight decay,
            and `ssm_learning_rate` when it is set.
        paper: str. Where the family comes from.
    """

    name: str
    keys: dict
    block: object
    dynamics: tuple = ()
    paper: str = ""

    def dynamics_patterns(self):
        """`dynamics` as regular expressions over variable names or paths
        (TensorFlow may prefix the layer path or append `:0`)."""
        return tuple(f"(^|/){re.escape(name)}($|:)" for name in self.dynamics)


FAMILIES = {}


def register(family):
    """Adds `family` to `FAMILIES`; returns it."""
    if family.name in FAMILIES:
        raise ValueError(f"A family named {family.name!r} exists already.")
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


def residual_block(family, make_mixer):
    """A `block` for a mixer without its own residual: `make_mixer(arch,
    name)` inside `x + dropout(mixer(norm(x)))` (prenorm) or
    `norm(x + dropout(mixer(x)))`."""

    def block(arch, index):
        import keras

        mixer = make_mixer(arch, f"{family}_mixer_{index}")
        norm = keras.layers.LayerNormalization(
            epsilon=1e-5, name=f"{family}_norm_{index}"
        )
        dropout = keras.layers.Dropout(
            arch["dropout"], name=f"{family}_dropout_{index}"
        )

        def apply(x, mask):
            h = norm(x) if arch["prenorm"] else x
            x = x + dropout(mixer(h, padding_mask=mask))
            return x if arch["prenorm"] else norm(x)

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
register(Family(
    name="transformer",
    keys=dict(
        hidden_dim=128,
        num_layers=4,
        num_heads=4,
        intermediate_dim=256,
        dropout=0.0,
        activation="relu",
        # "rotary" | "learned" | "sinusoidal" | "none" (YCTFS Table 4
        # ablation); the sinusoidal base is max_wavelength, as the rotary.
        position_embedding="rotary",
        max_wavelength=10000,
        rotary_disable_half=False,
        pooling="mean",
        attention_implementation="auto",
        causal=False,
    ),
    block=_layer_block(lambda a, i: layer("TransformerEncoder")(
        num_heads=a["num_heads"],
        intermediate_dim=a["intermediate_dim"],
        dropout=a["dropout"],
        activation=a["activation"],
        max_wavelength=a["max_wavelength"],
        use_rotary=a["position_embedding"] == "rotary",
        rotary_disable_half=a["rotary_disable_half"],
        causal=a["causal"],
        attention_implementation=a["attention_implementation"],
        name=f"transformer_block_{i}",
    )),
    paper="Vaswani et al. 2017; rotary: Su et al. 2021; YCTFS Tables 4-5",
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
    output_activation="glu",
    dropout=0.0,
    prenorm=True,
    pooling="mean",
    causal=False,
)


def _ssm_args(a, name):
    return dict(
        state_dim=a["state_dim"],
        dt_min=a["dt_min"],
        dt_max=a["dt_max"],
        causal=a["causal"],
        output_activation=a["output_activation"],
        dropout=a["dropout"],
        name=name,
    )


register(Family(
    name="s4d",
    keys=dict(_SSM_KEYS),
    block=residual_block("s4d", lambda a, name: layer("S4D")(
        init=a["init"], **_ssm_args(a, name))),
    dynamics=("ssm_log_dt", "ssm_log_A_real", "ssm_A_imag", "ssm_B_real",
              "ssm_B_imag"),
    paper="Gu et al. 2022, On the Parameterization and Initialization of "
    "Diagonal State Space Models (S4D)",
))
register(Family(
    name="s4",
    keys=dict(_SSM_KEYS),
    block=residual_block("s4", lambda a, name: layer("S4")(
        init=a["init"], **_ssm_args(a, name))),
    dynamics=("ssm_log_dt", "ssm_log_A_real", "ssm_A_imag", "ssm_P_real",
              "ssm_P_imag", "ssm_B_real", "ssm_B_imag"),
    paper="Gu et al. 2022, Efficiently Modeling Long Sequences with "
    "Structured State Spaces (S4)",
))
register(Family(
    name="dlr",
    keys=dict(_SSM_KEYS, state_dim=1024, init="structured", dt_min=1e-4),
    block=residual_block("dlr", lambda a, name: layer("DLR")(
        init=a["init"], **_ssm_args(a, name))),
    dynamics=("ssm_log_neg_real", "ssm_theta"),
    paper="Gupta et al. 2022 (DLR); Never Train from Scratch eq. 3",
))
register(Family(
    name="s5",
    # S5 always starts from HiPPO-N: no `init`.
    keys={k: v for k, v in dict(_SSM_KEYS, state_dim=16, num_blocks=8,
                                output_activation="half_glu").items()
          if k != "init"},
    block=residual_block("s5", lambda a, name: layer("S5")(
        num_blocks=a["num_blocks"], **_ssm_args(a, name))),
    dynamics=("ssm_Lambda_real", "ssm_Lambda_imag", "ssm_log_dt",
              "ssm_B_real", "ssm_B_imag"),
    paper="Smith et al. 2023, Simplified State Space Layers (S5)",
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
        dropout=0.0,
        attention_dropout=0.0,
        prenorm=False,  # the MEGA code's encoder_normalize_before default
        pooling="mean",
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
        dropout=a["dropout"],
        attention_dropout=a["attention_dropout"],
        prenorm=a["prenorm"],
        name=f"mega_block_{i}",
    )),
    dynamics=("ema_delta", "ema_alpha", "ema_beta", "ema_gamma",
              "ema_omega"),
    paper="Ma et al. 2023, Mega: Moving Average Equipped Gated Attention",
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
        dropout=0.0,
        prenorm=True,
        pooling="mean",
        causal=False,
    ),
    block=residual_block("gmlp", lambda a, name: layer("GatedLongConvolution")(
        intermediate_dim=a["intermediate_dim"],
        sequence_length=a["sequence_length"],
        num_kernel_channels=a["num_kernel_channels"],
        kernel_size=a["kernel_size"],
        activation=a["activation"],
        causal=a["causal"],
        dropout=a["dropout"],
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
        prenorm=True,
        pooling="mean",
        causal=False,
    ),
    block=residual_block("conv", lambda a, name: layer("ConvBlock")(
        kernel_size=a["kernel_size"],
        intermediate_dim=a["intermediate_dim"],
        groups=a["groups"],
        activation=a["activation"],
        causal=a["causal"],
        dropout=a["dropout"],
        name=name,
    )),
    paper="YCTFS Table 7 and A.2 (the locality probe)",
))
