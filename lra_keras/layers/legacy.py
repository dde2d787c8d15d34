"""Argument names our layers had before a rename, so old `.keras` files load.

Keras rebuilds a saved layer with `cls.from_config(config)`, where `config`
holds the argument names of the version that saved it. The layers that
renamed arguments translate such configs here; the old names are accepted
nowhere else.

- `bidirectional` (SSM layers, `MultiHeadEMA`, and, beside `causal`, the
  MEGA layers) became `causal`: every family spells directionality one way.
  The MEGA layers' mix of a one-way EMA with full attention (both flags
  false), which no builder ever made, has no new spelling and is refused.
- MEGA's `zdim` became `key_dim` (Keras's name for the query/key width) and
  `ndim` became `ema_dim` (Keras's `ndim` is a tensor's rank).
- S5's `blocks` became `num_blocks`; S4D's `learn_B` became `trainable_B`.
"""

RENAMED = dict(
    zdim="key_dim",
    ndim="ema_dim",
    blocks="num_blocks",
    learn_B="trainable_B",
)


def upgrade_config(config):
    """A layer config with the old argument names translated."""
    config = dict(config)
    if "bidirectional" in config:
        bidirectional = bool(config.pop("bidirectional"))
        causal = bool(config.get("causal", False))
        if "causal" in config and not bidirectional and not causal:
            raise ValueError(
                "This layer was saved with bidirectional=False and "
                "causal=False (a one-way EMA with full attention), which "
                "MEGA's code never uses and `causal` cannot express. "
                f"Received config: {config}"
            )
        config["causal"] = causal or not bidirectional
    for old, new in RENAMED.items():
        if old in config:
            config[new] = config.pop(old)
    return config
