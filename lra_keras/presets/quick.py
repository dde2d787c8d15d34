"""The `quick` preset: the paper row scaled down, for smoke runs.

The paper's architecture shape scaled down (width 64, 2 blocks, one
epoch), on a slice of the training split, sized to finish in about ten
minutes on 2 CPU cores under every backend. The resolved row is the paper
row, then `QUICK`, then `QUICK_TASK[task]`, then `QUICK_FAMILY[model]`
(a family without an entry keeps the paper row's architecture), then
`QUICK_TASK_FAMILY[(task, model)]`.

ListOps pools its first token in the quick preset. The first token is
the root operator, and the root operator alone predicts about 36% of the
labels (its most frequent label in the generated training trees, MAX ->
9, MIN -> 0, MED -> 4, SM -> 6 (SM's labels are nearly uniform): 36.3%
of the training trees, 35.4% of the test trees; the majority class alone
predicts 17%), about where LRA's vanilla Transformer ended (36.37, LRA
Table 1 as quoted in Never Train from Scratch Table 1). LRA's ListOps
models pool a CLS token (google-research/long-range-arena
`lra_benchmarks/listops/configs/base_listops_config.py`,
`config.pooling_mode = "CLS"`); mean pooling (the S4 configs) dilutes
the root operator among a thousand tokens and did not leave the 17%
prior within a quick run. `QUICK_TASK_FAMILY[("listops", "s4d")]` is the
README's first command: it reaches 36-37.5% on every backend in 4-7
minutes on a CPU (README, Results); going well past the root operator's
level needs the paper preset's scale.
"""

from lra_keras.presets.lra import XFORMERS

QUICK = dict(
    hidden_dim=64,
    num_layers=2,
    learning_rate=1e-3,
    ssm_learning_rate=None,
    weight_decay=0.01,
    batch_size=32,
    epochs=1,
    train_steps=None,
    warmup_steps=10,
    schedule="cosine",
    schedule_steps=None,
    gradient_clipnorm=None,
    pretrain_learning_rate=None,
    pretrain_batch_size=None,
    pretrain_epochs=1,
    pretrain_schedule=None,
    pretrain_warmup_steps=None,
    source="quick preset: the paper row scaled down, for smoke runs",
)
QUICK_TASK = {
    "listops": dict(train_samples=4000, val_samples=500, pooling="first"),
    # LRA A.1.2 allows 1K-4K bytes for Text; retrieval keeps 4000 per
    # document in the paper, 1024 here only to stay quick.
    "text": dict(train_samples=2000, val_samples=500, test_samples=1000,
                 sequence_length=1024, batch_size=16),
    "retrieval": dict(train_samples=1000, val_samples=250, test_samples=500,
                      sequence_length=1024, batch_size=8),
    "image": dict(train_samples=4000, val_samples=500, test_samples=1000),
    # num_samples images are generated: train 4800 / val 600 / test 600.
    "pathfinder": dict(num_samples=6000),
    "pathx": dict(num_samples=400, batch_size=4),
    "pathx256": dict(num_samples=100, batch_size=1),
}
QUICK_FAMILY = {
    "transformer": dict(num_heads=4, intermediate_dim=128),
    # LRA's xformer rows size their heads' hidden layer as their MLP (1024
    # on ListOps and Text, 512 on Retrieval) and some their attention
    # narrower than the model (`attention_dim`); the quick rows take the
    # width.
    **{model: dict(num_heads=4, intermediate_dim=128, head_hidden_dim=None,
                   attention_dim=None) for model in XFORMERS},
    "s4d": dict(state_dim=32, prenorm=True),
    "s4": dict(state_dim=32, prenorm=True),
    "dlr": dict(state_dim=64, prenorm=True),
    "s5": dict(state_dim=16, num_blocks=4, prenorm=True),
    "lru": dict(state_dim=32, prenorm=True),
    "rtf": dict(state_dim=16, prenorm=True),
    "mega": dict(key_dim=32, intermediate_dim=128, ffn_intermediate_dim=128,
                 ema_dim=8, dropout=0.0, head_dropout=0.0),
    "megalodon": dict(key_dim=32, intermediate_dim=128,
                      ffn_intermediate_dim=128, ema_dim=8, norm_groups=16,
                      dropout=0.0, head_dropout=0.0),
    "gmlp": dict(intermediate_dim=128, num_kernel_channels=4),
    "conv": dict(intermediate_dim=128),
}

# The README's first command: S4D is the fastest family per epoch on a CPU
# (README, Results), so it gets more data and a second epoch; 4000 rows
# for 5 epochs at 1e-3 overfit (training accuracy 0.45, validation 0.38).
QUICK_TASK_FAMILY = {
    ("listops", "s4d"): dict(train_samples=10000, epochs=2,
                             learning_rate=2e-3),
}
