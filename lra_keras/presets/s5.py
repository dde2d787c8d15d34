"""S5: the authors' LRA run scripts, one literal row per task.

Smith et al. 2023 (S5), lindermanlab/S5
`bin/run_experiments/run_lra_<task>.sh` over the `run_train.py` defaults:
global lr = lr_factor x ssm_lr_base (`learning_rate`), SSM lr = ssm_lr_base
(`ssm_learning_rate`), P = ssm_size_base (`state_dim`), J = blocks
(`num_blocks`), cosine annealing after a linear warmup of `warmup_end`
epochs (steps = training rows / batch: ListOps 96000, AAN 147086, CIFAR
45000, Pathfinder and Path-X 160000), prenorm True and mean pooling
("pool") by default, bidirectional in every script. activation_fn
half_glu1 (default) and half_glu2 (ListOps, IMDB) both map to "half_glu"
(y * sigmoid(W y)). Scripts per task: run_lra_listops.sh, run_lra_imdb.sh
(warmup_end 0), run_lra_aan.sh, run_lra_cifar.sh, run_lra_pathfinder.sh,
run_lra_pathx.sh. Not representable here: C_init (lecun_normal /
trunc_standard_normal / complex_normal), opt_config (which of B, C get
weight decay), dt_global, clip_eigs (CIFAR), bn_momentum.

PathX-256 (no S5 run): the Path-X row with max pooling, as NTFS C.1.2 runs
PathX-256.
"""

PAPER = {
    ("listops", "s5"): dict(
        sequence_length=2000, hidden_dim=128, num_layers=8, state_dim=16,
        num_blocks=8, dt_min=0.001, dt_max=0.1, output_activation="half_glu",
        dropout=0.0, prenorm=True, pooling="mean", learning_rate=0.003,
        ssm_learning_rate=0.001, batch_size=50, weight_decay=0.04, epochs=40,
        warmup_steps=1920, schedule="cosine",
        source="S5 LRA run script run_lra_listops.sh (Smith et al. 2023)",
    ),
    ("text", "s5"): dict(
        hidden_dim=256, num_layers=6, state_dim=192, num_blocks=12,
        dt_min=0.001, dt_max=0.1, output_activation="half_glu", dropout=0.1,
        prenorm=True, pooling="mean", learning_rate=0.004,
        ssm_learning_rate=0.001, batch_size=50, weight_decay=0.07, epochs=35,
        warmup_steps=0, schedule="cosine",
        source="S5 LRA run script run_lra_imdb.sh (Smith et al. 2023)",
    ),
    ("retrieval", "s5"): dict(
        hidden_dim=128, num_layers=6, state_dim=256, num_blocks=16,
        dt_min=0.001, dt_max=0.1, output_activation="half_glu", dropout=0.0,
        prenorm=True, pooling="mean", learning_rate=0.002,
        ssm_learning_rate=0.001, batch_size=32, weight_decay=0.05, epochs=20,
        warmup_steps=4597, schedule="cosine",
        source="S5 LRA run script run_lra_aan.sh (Smith et al. 2023)",
    ),
    ("image", "s5"): dict(
        hidden_dim=512, num_layers=6, state_dim=384, num_blocks=3,
        dt_min=0.001, dt_max=0.1, output_activation="half_glu", dropout=0.1,
        prenorm=True, pooling="mean", learning_rate=0.0045,
        ssm_learning_rate=0.001, batch_size=50, weight_decay=0.07, epochs=250,
        warmup_steps=900, schedule="cosine",
        source="S5 LRA run script run_lra_cifar.sh (Smith et al. 2023)",
    ),
    ("pathfinder", "s5"): dict(
        hidden_dim=192, num_layers=6, state_dim=256, num_blocks=8,
        dt_min=0.001, dt_max=0.1, output_activation="half_glu", dropout=0.05,
        prenorm=True, pooling="mean", learning_rate=0.0045,
        ssm_learning_rate=9e-4, batch_size=64, weight_decay=0.03, epochs=200,
        warmup_steps=2500, schedule="cosine",
        source="S5 LRA run script run_lra_pathfinder.sh (Smith et al. 2023)",
    ),
    ("pathx", "s5"): dict(
        hidden_dim=128, num_layers=6, state_dim=256, num_blocks=16,
        dt_min=1e-4, dt_max=0.1, output_activation="half_glu", dropout=0.0,
        prenorm=True, pooling="mean", learning_rate=0.0018,
        ssm_learning_rate=6e-4, batch_size=32, weight_decay=0.06, epochs=75,
        warmup_steps=5000, schedule="cosine",
        source="S5 LRA run script run_lra_pathx.sh (Smith et al. 2023)",
    ),
    ("pathx256", "s5"): dict(
        hidden_dim=128, num_layers=6, state_dim=256, num_blocks=16,
        dt_min=1e-4, dt_max=0.1, output_activation="half_glu", dropout=0.0,
        prenorm=True, pooling="max", learning_rate=0.0018,
        ssm_learning_rate=6e-4, batch_size=32, weight_decay=0.06, epochs=75,
        warmup_steps=5000, schedule="cosine",
        source=(
            "derived: the S5 Path-X run (run_lra_pathx.sh) at 256x256 "
            "with max pooling, as Never Train from Scratch C.1.2 runs "
            "PathX-256"
        ),
    ),
}
