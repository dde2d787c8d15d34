"""Our models and the authors' trained side by side: learning curves.

    python benchmarks/reference_curves.py --family s4d --repo /tmp/s4ref \
        --out runs/reference_curves/s4d [--seeds 0 1 2]
        [--side ours reference] [--eval-every 50] [--preset quick]
        [--set KEY=VALUE ...]
    python benchmarks/reference_curves.py --out runs/reference_curves/s4d \
        --plot docs/results/reference_curves/listops_s4d.png

Item 3d of the side-by-side check (`benchmarks/reference_parity*.py` do
a-c): both models, built from the same preset (`get_hparams("listops",
FAMILY, preset=..., **--set)`), train on the same generated ListOps rows,
in the same batches (length-bucketed as the row says) in the same order
(`lra_keras.training.inputs`, the run's own batching, seeded per seed),
for the same number of steps with the same learning rate at every step
(our schedule's value over the peak rate, times each reference parameter
group's own rate). Every `--eval-every` steps both are evaluated on the
same validation rows; at the end on the test rows. Each (side, seed)
writes `<out>/<side>_seed<seed>.json` (the curve, the test accuracy, the
wall time, the backend, the overrides), so the sides can run in separate
processes (one core each) and a finished curve is not run again.

The references, each imported from the checkout `--repo` names (the
`--<x>-repo` of its parity benchmark), never copied, and set to the
preset wherever the preset departs from the paper row; what cannot be
set is checked equal to the preset before training (else the script
exits), and so are the parameter groups (part a of the parity
benchmarks):

`s4d`, `s4`: state-spaces/s4 at d27bdf9 (`reference_parity.py`): the
  `s4-lra-listops.yaml` composition with the preset's sizes, the decoder's
  `mode` the preset's pooling ("first" or "pool"), the block's `prenorm`
  and `dropout`, the kernel's `lr` {dt, A, B} the preset's
  `ssm_learning_rate` (`lr: {dt: null}` where `dt_learning_rate=
  "global"`), the optimizer's rate, decay, betas and epsilon. S4 (DPLR)
  trains C~ attuned to `l_max` = the preset's `kernel_length`
  (`SSMKernelDPLR._setup_C`), as ours with `C_parameterization=
  "c_tilde"`. torch `AdamW` over `configure_optimizers`' groups.
`mega`: facebookresearch/mega's fairseq `LRAModel`
  (`reference_parity_mega.py`): the README's ListOps command
  (`examples/mega/README.lra.md` lines 27-42) with `mega_lra_listop`, at
  the preset's sizes, dropouts, EMA truncation, classifier width and
  pooling (`--sen-rep-type` `cls` for "first", `mp` for "mean") and
  norm (`--norm-type`); its classifier's dropout is the model's, checked
  equal to the preset's `head_dropout`;
  fairseq's `Adam` with the preset's rate, betas, epsilon, decay and clip,
  and its trainer's step (summed cross-entropy, `multiply_grads(1 /
  rows)`, `clip_grad_norm`, `step`; trainer.py:529-548). The settings
  that still differ are printed.
`transformer`, `gmlp`: pablomiralles22/long-transformers at lra-paper
  (`reference_parity_yctfs.py`): the rotary Transformer of
  `rotary_transformer_augment.yaml` or the gMLP of the deleted
  `gmlp_w_augment.json`, at the preset's sizes, heads, dropout, rotary
  frequency and disable_half, gMLP kernel channels; the head's reduction
  the preset's pooling (`mean`, or `cls` for "first"); the optimizer its
  `OptimizerBuilder` builds (AdamW, `WeightDecayParamFilter`'s two
  groups) at the preset's rate, decay, betas and epsilon; the loss of
  `TrainerModule._step` (trainer.py:108-116), in float32 (the reference's
  trainer runs "16-mixed").
`s5`: lindermanlab/S5 at 3c18fdb (`reference_parity_s5.py`, run with the
  Python of a virtual environment that has flax and optax): the
  `run_lra_listops.sh` arguments with the preset's sizes, rates, decay,
  dropout, BatchNorm momentum, pooling (`mode` "pool" for "mean", "last"),
  C_init, clip_eigs and dt range; `create_train_state`'s optax groups and
  `train_step`; every step's rates set in the state as
  `update_learning_rate_per_step` sets them (train_helpers.py:49-65).

The S4 code's batches end at their longest row: with the paper rows'
`batch_norm_count_padding="longest"` its side gets each batch cut there
(ours count the padding up to it, whatever length the batch comes in);
otherwise both get the batch as it is.

What stays different: the initial weights (each side draws its own; the
distributions agree, part c of the parity benchmarks) and the order of
floating-point operations.

`--plot` reads the JSON files of `--out` and draws validation accuracy
and loss against the step, one thin line per seed, the mean in bold, ours
and the reference in two colours, with the final test accuracies (mean ±
95% interval over seeds, Student's t) in the legend.
"""

import argparse
import contextlib
import copy
import dataclasses
import io
import json
import math
import os
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[0]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import reference_parity as s4_parity  # noqa: E402
import reference_parity_mega as mega_parity  # noqa: E402
import reference_parity_s5 as s5_parity  # noqa: E402
import reference_parity_yctfs as yctfs_parity  # noqa: E402
from reference_parity import GROUP_COLUMNS  # noqa: E402
from reference_parity import build_ours  # noqa: E402
from reference_parity import group_rows  # noqa: E402
from reference_parity import our_param_groups  # noqa: E402
from reference_parity import our_sizes  # noqa: E402
from reference_parity import report_group_check  # noqa: E402
from reference_parity import table  # noqa: E402
from reference_parity import torch_groups  # noqa: E402

from lra_keras.cli import parse_overrides  # noqa: E402
from lra_keras.hparams import get_hparams  # noqa: E402
from lra_keras.report import mean_ci  # noqa: E402
from lra_keras.training import make_optimizer  # noqa: E402
from lra_keras.training.inputs import load_splits  # noqa: E402
from lra_keras.training.inputs import make_batches  # noqa: E402
from lra_keras.training.optimization import make_schedule  # noqa: E402

# === our side ===


class Ours:
    """Our classifier with the preset's optimizer and schedule."""

    def __init__(self, hp, total_steps, seed):
        keras.utils.set_random_seed(seed)
        self.model = build_ours(hp)
        self.model.compile(
            optimizer=make_optimizer(hp, total_steps),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))

    def train_step(self, inputs, labels, step):
        loss = self.model.train_on_batch(inputs, labels)
        return float(np.asarray(loss).reshape(-1)[0])

    def logits(self, inputs):
        return np.asarray(self.model.predict_on_batch(inputs))


def schedule_factors(hp, total_steps):
    """Our schedule's rate at every step over the peak rate."""
    schedule = make_schedule(hp, total_steps)
    if not callable(schedule):
        return np.ones(total_steps)
    if keras.backend.backend() == "jax":
        import jax

        # Eagerly, every call compiles its `ops.cond` branches anew (new
        # closures): minutes for a few thousand steps.
        schedule = jax.jit(schedule)
    peak = float(hp["learning_rate"])
    return np.array([float(keras.ops.convert_to_numpy(schedule(s))) / peak
                     for s in range(total_steps)])


def lengths(inputs):
    return inputs["padding_mask"].sum(-1)


def require(hp, fixed, reference):
    """Exits unless the preset holds the reference's value of every key
    of `fixed` ({key: (value, where in the reference)}): what the
    reference cannot be set to."""
    differ = [f"{key}: ours {hp[key]!r}, {reference} {value!r} ({where})"
              for key, (value, where) in fixed.items() if hp[key] != value]
    if differ:
        sys.exit("the preset differs where the reference cannot follow it:"
                 "\n  " + "\n  ".join(differ))


def check_groups(reference_groups, reference_sizes, paths_of, hp):
    """Part a: the (lr, decay) groups of both sides, and every reference
    tensor ({name: (lr, decay)}) in the group of the variables it
    converts to (`paths_of(name)`), under the preset's optimizer. Exits
    unless so."""
    model = build_ours(hp)
    ours = our_param_groups(model, make_optimizer(hp, 1),
                            float(hp["learning_rate"]))
    print("\n## a. Parameter groups (learning rate, weight decay)\n")
    table(GROUP_COLUMNS,
          group_rows("reference", reference_groups, reference_sizes)
          + group_rows("ours", ours, our_sizes(model)))
    mismatched = [f"{name} {key} -> {path} {ours[path]}"
                  for name, key in reference_groups.items()
                  for path in paths_of(name) if ours[path] != key]
    if not report_group_check(mismatched, len(reference_groups)):
        sys.exit("the parameter groups differ; not training")


class TorchSide:
    """A PyTorch reference: `forward(batch inputs) -> logits` and
    `loss(logits, labels)`; the rate of every optimizer group is its own
    rate times our schedule's factor; the gradient is clipped as ours."""

    def __init__(self, module, optimizer, hp, total_steps):
        import torch

        self.torch, self.module, self.optimizer = torch, module, optimizer
        self.base_rates = [g["lr"] for g in optimizer.param_groups]
        self.factors = schedule_factors(hp, total_steps)
        self.clip = hp["gradient_clipnorm"]

    def train_step(self, inputs, labels, step):
        torch = self.torch
        for group, rate in zip(self.optimizer.param_groups, self.base_rates):
            group["lr"] = rate * self.factors[step]
        self.module.train()
        logits = self.forward(inputs)
        loss = torch.nn.functional.cross_entropy(
            logits, torch.as_tensor(labels, dtype=torch.long))
        self.optimizer.zero_grad()
        loss.backward()
        if self.clip:
            torch.nn.utils.clip_grad_norm_(self.module.parameters(),
                                           self.clip)
        self.optimizer.step()
        return float(loss.detach())

    def logits(self, inputs):
        self.module.eval()
        with self.torch.no_grad():
            return self.forward(inputs).numpy()


# === state-spaces/s4: S4D and S4 ===

POOLING_MODES = {"first": "first", "mean": "pool"}


def s4_config(repo, hp):
    """reference_parity's composition of s4-lra-listops.yaml, moved to the
    preset wherever the preset departs from the paper row."""
    model, decoder, optimizer = s4_parity.reference_config(
        repo, SimpleNamespace(
            family=hp["model"], hidden_dim=hp["hidden_dim"],
            num_layers=hp["num_layers"], state_dim=hp["state_dim"],
            l_max=hp.get("kernel_length")))
    if hp["pooling"] not in POOLING_MODES:
        sys.exit(f"pooling {hp['pooling']!r}: the reference's decoder has "
                 f"no such mode (one of {list(POOLING_MODES)})")
    require(hp, dict(
        norm=(model["norm"], "configs/model/s4.yaml"),
        tie_dropout=(True, "configs/model/s4.yaml"),
        **({"C_parameterization": ("c_tilde", "SSMKernelDPLR._setup_C")}
           if hp["model"] == "s4" else {})), "state-spaces/s4")
    ssm_rate = hp["ssm_learning_rate"]
    model.update(prenorm=bool(hp["prenorm"]), dropout=float(hp["dropout"]))
    model["layer"]["lr"] = {
        "dt": (None if hp["dt_learning_rate"] == "global" else ssm_rate),
        "A": ssm_rate, "B": ssm_rate}
    decoder["mode"] = POOLING_MODES[hp["pooling"]]
    optimizer.update(lr=float(hp["learning_rate"]),
                     weight_decay=float(hp["weight_decay"]),
                     betas=[float(hp["adam_beta_1"]),
                            float(hp["adam_beta_2"])],
                     eps=float(hp["adam_epsilon"]))
    return model, decoder, optimizer


class S4Side(TorchSide):
    """state-spaces/s4's encoder, backbone and decoder with the groups of
    its `configure_optimizers`."""

    def __init__(self, modules, config, hp, total_steps, seed):
        import torch

        torch.manual_seed(seed)
        module = s4_parity.build_reference(
            modules, config, hp["vocabulary_size"], hp["num_classes"])
        super().__init__(module, s4_parity.reference_optimizer(
            module, config[2]), hp, total_steps)
        # The S4 code's batches end at their longest row (`pad_sequence`);
        # ours, with "longest", count the padding up to it whatever
        # length they come in (the paper rows' full-length batches).
        self.cut = hp.get("batch_norm_count_padding") == "longest"

    def forward(self, inputs):
        tokens, length = inputs["token_ids"], lengths(inputs)
        if self.cut:
            tokens = tokens[:, :int(length.max())]
        return s4_parity.reference_forward(self.module, tokens, length)


def s4_setup(repo, hp):
    modules = s4_parity.import_reference(repo)
    config = s4_config(repo, hp)
    print(f"reference {config}")
    if not s4_parity.part_a(None, modules, config, hp):
        sys.exit("the parameter groups differ; not training")
    return lambda seed, total: S4Side(modules, config, hp, total, seed)


# === facebookresearch/mega: MEGA ===

SENTENCE_REPRESENTATIONS = {"first": "cls", "mean": "mp"}


def mega_reference_args(modules, hp, repo):
    """The README's ListOps command at the preset's settings (model
    args, optimizer args), and the settings that still differ."""
    sizes = SimpleNamespace(
        mega_repo=repo, num_layers=hp["num_layers"],
        hidden_dim=hp["hidden_dim"], intermediate_dim=hp["intermediate_dim"],
        key_dim=hp["key_dim"], ema_dim=hp["ema_dim"],
        length=hp["sequence_length"], truncation=hp["truncation"])
    chunk = hp["chunk_size"] or -1
    model_args, optimizer_args = mega_parity.reference_args(
        modules, sizes, chunk)
    if hp["pooling"] not in SENTENCE_REPRESENTATIONS:
        sys.exit(f"pooling {hp['pooling']!r}: the reference has no such "
                 "sentence representation (one of "
                 f"{list(SENTENCE_REPRESENTATIONS)})")
    vars(model_args).update(
        norm_type={"layer": "layernorm", "scale": "scalenorm",
                   "batch": "batchnorm"}[hp["norm"]],
        encoder_ffn_embed_dim=hp["ffn_intermediate_dim"],
        classifier_out_dim=hp["head_hidden_dim"],
        sen_rep_type=SENTENCE_REPRESENTATIONS[hp["pooling"]],
        dropout=float(hp["dropout"]),
        attention_dropout=float(hp["attention_dropout"]),
        encoder_normalize_before=bool(hp["prenorm"]),
    )
    vars(optimizer_args).update(
        lr=[float(hp["learning_rate"])],
        adam_betas=str((float(hp["adam_beta_1"]), float(hp["adam_beta_2"]))),
        adam_eps=float(hp["adam_epsilon"]),
        weight_decay=float(hp["weight_decay"]),
        clip_norm=float(hp["gradient_clipnorm"] or 0.0),
    )
    # Rows about the schedule and the run's length: both sides take our
    # schedule's rate at every step and the same batches.
    ours_drive = ("schedule", "warmup steps", "warmup power",
                  "warmup start rate", "final rate", "batch size",
                  "updates (ours: epochs x 96000 / batch)")
    rows = mega_parity.setting_rows(
        model_args, optimizer_args,
        # fairseq's --clip-norm 0: no clipping, ours None
        dict(hp, gradient_clipnorm=hp["gradient_clipnorm"] or 0.0))
    # fairseq's "cls" is the first position, "mp" the mean over the
    # real tokens (mega_lra_encoder.py:238-245), as ours
    same_pooling = {(theirs, ours)
                    for ours, theirs in SENTENCE_REPRESENTATIONS.items()}
    differ = [(what, theirs, ours, note or "")
              for what, theirs, ours, same, note in rows
              if not same and what not in ours_drive
              and not (what == "sentence representation"
                       and (theirs, ours) in same_pooling)]
    return model_args, optimizer_args, differ


class MegaSide:
    """fairseq's MEGA `LRAModel` and its trainer's step; the rate of every
    step is the preset's peak rate times our schedule's factor."""

    def __init__(self, modules, config, hp, total_steps, seed):
        import torch

        torch.manual_seed(seed)
        self.torch = torch
        model_args, optimizer_args, _ = config
        self.model = mega_parity.build_reference(modules, model_args, hp)
        self.optimizer = modules.FairseqAdam(
            copy.copy(optimizer_args), list(self.model.parameters()))
        self.peak = float(hp["learning_rate"])
        self.clip = (optimizer_args.clip_norm, optimizer_args.clip_mode)
        self.factors = schedule_factors(hp, total_steps)

    def train_step(self, inputs, labels, step):
        torch = self.torch
        self.optimizer.set_lr(self.peak * self.factors[step])
        self.model.train()
        self.optimizer.zero_grad()
        output = {"encoder_out": mega_parity.reference_forward(
            self.model, inputs["token_ids"], lengths(inputs))}
        log_probs = self.model.get_normalized_probs(output, log_probs=True)
        loss = torch.nn.functional.nll_loss(
            log_probs, torch.as_tensor(labels, dtype=torch.long),
            reduction="sum")
        self.optimizer.backward(loss)
        self.optimizer.multiply_grads(1.0 / len(labels))
        self.optimizer.clip_grad_norm(self.clip[0], mode=self.clip[1])
        self.optimizer.step()
        return float(loss.detach()) / len(labels)

    def logits(self, inputs):
        self.model.eval()
        mega_parity.forget_kernels(self.model)
        with self.torch.no_grad():
            return mega_parity.reference_forward(
                self.model, inputs["token_ids"], lengths(inputs)).numpy()


def mega_setup(repo, hp):
    modules = mega_parity.import_reference(repo)
    config = mega_reference_args(modules, hp, repo)
    print(f"settings the reference still has otherwise: "
          f"{config[2] or 'none'}")
    unknown = [row for row in config[2] if not row[3]]
    if unknown:
        sys.exit(f"settings differ: {unknown}; not training")
    # fairseq's Adam has one group: every parameter at the rate, decayed,
    # as the preset's weight_decay_on="all" (checked by setting_rows). The
    # relative position biases hold 2 x max positions - 1 lags, fairseq's
    # 2 more each side (length + 2, never read): counted apart.
    ours_count = sum(int(np.prod(v.shape)) for v in build_ours(hp).weights
                     if "rel_pos_bias" not in v.path)
    theirs_count = sum(
        t.numel() for name, t in mega_parity.build_reference(
            modules, config[0], hp).named_parameters()
        if "rel_pos_bias" not in name)
    print(f"parameters besides the relative position biases: ours "
          f"{ours_count}, the reference {theirs_count}")
    if ours_count != theirs_count:
        sys.exit("the parameter counts differ; not training")
    return lambda seed, total: MegaSide(modules, config, hp, total, seed)


# === pablomiralles22/long-transformers (YCTFS): Transformer and gMLP ===

REDUCTIONS = {"first": "cls", "mean": "mean"}


def yctfs_fixed(hp):
    """What the YCTFS code does and cannot be told otherwise here."""
    common = dict(
        final_norm=(False, "LayeredModel: no norm after the blocks"),
        head=("linear", "configs/task/classification.yaml"),
        embedding_init=("normal", "nn.Embedding"),
        dense_init=("torch", "nn.Linear"),
        weight_decay_on=("kernels", "weight_decay_param_filter.py"),
        adam_epsilon_style=("torch", "torch.optim.AdamW"),
    )
    if hp["model"] == "transformer":
        return dict(common,
                    activation=("relu", "TransformerEncoderLayer default"),
                    position_embedding=("rotary", "rotary_transformer.yaml"),
                    rotary_scope=("model", "rotary_multihead_attention.py"))
    return dict(common,
                activation=("gelu", "GMLP default"),
                prenorm=(True, "gmlp.py:181"),
                norm=("layer", "gmlp.py:181, 190"),
                gate_norm=("after", "gmlp.py:190"),
                gate_bias=("channel", "gmlp.py:21"),
                kernel_initializer=("yctfs", "gmlp.py:25-27"),
                fft_norm=("ortho", "fft_conv1d.py"),
                kernel_size=(None, "GMLP default: 2 * seq_len + 1 taps"),
                causal=(False, "GMLP default: bidirectional"),
                gate_dropout=(0.0, "gmlp.py:158-161"))


def yctfs_config(repo, hp):
    """reference_parity_yctfs's model, task and optimizer at the preset's
    sizes and settings."""
    args = SimpleNamespace(
        hidden_dim=hp["hidden_dim"], intermediate_dim=hp["intermediate_dim"],
        num_layers=hp["num_layers"], length=hp["sequence_length"])
    if hp["pooling"] not in REDUCTIONS:
        sys.exit(f"pooling {hp['pooling']!r}: the reference's head has no "
                 f"such reduction (one of {list(REDUCTIONS)})")
    require(hp, yctfs_fixed(hp), "long-transformers")
    config = yctfs_parity.reference_config(repo, hp["model"], args, hp)
    params = config.model["layer"]["params"]
    params["dropout"] = float(hp["dropout"])
    if hp["model"] == "transformer":
        params["nhead"] = hp["num_heads"]
        params["attention_params"].update(
            freq=hp["max_wavelength"],
            disable_half=bool(hp["rotary_disable_half"]))
    else:
        params["num_channels"] = hp["num_kernel_channels"]
    config.task["head_params"]["reduction_method"] = REDUCTIONS[hp["pooling"]]
    config.optimizer.update(
        lr=float(hp["learning_rate"]), weight_decay=float(hp["weight_decay"]),
        betas=[float(hp["adam_beta_1"]), float(hp["adam_beta_2"])],
        eps=float(hp["adam_epsilon"]))
    return config, args


class YctfsSide(TorchSide):
    """The YCTFS model and classification task as `TrainerModule` holds
    them, with the optimizer of its `OptimizerBuilder`."""

    def __init__(self, ref, config, listops, hp, total_steps, seed):
        import torch

        torch.manual_seed(seed)
        module = yctfs_parity.build_reference(ref, config, listops)
        super().__init__(module, yctfs_parity.reference_optimizer(
            ref, module, config), hp, total_steps)

    def forward(self, inputs):
        # The loss of `ClassificationTask` on 10 classes is this
        # cross-entropy of the head's logits (trainer.py:108-116).
        batch = yctfs_parity.reference_batch(
            inputs["token_ids"], inputs["padding_mask"],
            np.zeros(len(inputs["token_ids"])))
        return yctfs_parity.reference_logits(self.module, batch)


def yctfs_setup(repo, hp):
    ref = yctfs_parity.import_reference(repo)
    repo = Path(repo).resolve()
    listops = yctfs_parity.module_constants(
        repo / "src/data_loaders/listops.py")
    config, args = yctfs_config(repo, hp)
    print(f"reference model {config.model}; optimizer {config.optimizer}; "
          f"task {config.task}")
    import torch

    torch.manual_seed(0)
    module = yctfs_parity.build_reference(ref, config, listops)
    groups, sizes = torch_groups(module, yctfs_parity.reference_optimizer(
        ref, module, config).param_groups)
    _, paths_of = yctfs_parity.convert(hp["model"], module.state_dict(),
                                       args, hp)
    check_groups(groups, sizes, lambda name: paths_of[name], hp)
    return lambda seed, total: YctfsSide(ref, config, listops, hp, total,
                                         seed)


# === lindermanlab/S5 ===

S5_MODES = {"mean": "pool", "last": "last"}


def s5_config(repo, ref, hp):
    """`run_lra_listops.sh`'s arguments at the preset's sizes and
    settings; exits where they cannot follow the preset."""
    script = s5_parity.reference_args(repo, ref)
    if hp["pooling"] not in S5_MODES:
        sys.exit(f"pooling {hp['pooling']!r}: the reference has no such "
                 f"mode (one of {list(S5_MODES)})")
    config = s5_parity.resized(script, SimpleNamespace(
        hidden_dim=hp["hidden_dim"], num_layers=hp["num_layers"],
        state_dim=hp["state_dim"], num_blocks=hp["num_blocks"]))
    ssm_rate = float(hp["ssm_learning_rate"] or hp["learning_rate"])
    vars(config).update(
        ssm_lr_base=ssm_rate,
        lr_factor=float(hp["learning_rate"]) / ssm_rate,
        weight_decay=float(hp["weight_decay"]), p_dropout=float(hp["dropout"]),
        bn_momentum=float(hp["batch_norm_momentum"]),
        prenorm=bool(hp["prenorm"]), mode=S5_MODES[hp["pooling"]],
        C_init=hp["C_init"], clip_eigs=bool(hp["clip_eigs"]),
        dt_min=float(hp["dt_min"]), dt_max=float(hp["dt_max"]))
    # Both sides take our batches, steps and schedule.
    ours_drive = {"batch_size", "epochs", "warmup_steps", "schedule"}
    differ = [(key, ours, theirs)
              for key, ours, theirs, same in s5_parity.preset_vs_script(
                  config, dict(hp, ssm_learning_rate=ssm_rate))
              if same is False and key not in ours_drive]
    if differ:
        sys.exit(f"settings differ from the script's: {differ}")
    return config


class S5Side:
    """S5's `BatchClassificationModel` and train state
    (`reference_parity_s5.Reference`), trained by its `train_step` and
    evaluated by its `eval_step` as `train_epoch` and `validate` call them
    (train_helpers.py:332-374), with one model object per mode so that
    their jitted steps compile once per batch shape."""

    def __init__(self, ref, config, hp, total_steps, seed, batch_size):
        self.ref, self.config = ref, config
        with contextlib.redirect_stdout(io.StringIO()):
            self.reference = s5_parity.Reference(
                ref, config, hp["num_classes"], hp["sequence_length"],
                batch_size, seed)
        self.models = {mode: self.reference.model_cls(training=mode)
                       for mode in (True, False)}
        self.rng = ref.jax.random.PRNGKey(seed)
        self.factors = schedule_factors(hp, total_steps)
        self.rates = dict(regular=config.lr_factor * config.ssm_lr_base,
                          ssm=config.ssm_lr_base)
        if config.opt_config == "BandCdecay":
            self.rates["none"] = config.ssm_lr_base

    def train_step(self, inputs, labels, step):
        # update_learning_rate_per_step (train_helpers.py:49-65) sets the
        # rates of the next step after each step; here before it, to our
        # schedule's value of this step.
        groups = self.reference.state.opt_state.inner_states
        for label, rate in self.rates.items():
            groups[label].inner_state.hyperparams["learning_rate"] = (
                np.array(rate * self.factors[step], dtype=np.float32))
        x, timesteps = self.reference.inputs(inputs["token_ids"],
                                             lengths(inputs))
        self.rng, dropout_rng = self.ref.jax.random.split(self.rng)
        self.reference.state, loss = self.ref.train_helpers.train_step(
            self.reference.state, dropout_rng, x,
            np.asarray(labels, "float32"), timesteps, self.models[True],
            self.config.batchnorm)
        return float(loss)

    def logits(self, inputs):
        # log-probabilities: the evaluation's log-softmax keeps them
        x, timesteps = self.reference.inputs(inputs["token_ids"],
                                             lengths(inputs))
        _, _, logits = self.ref.train_helpers.eval_step(
            x, np.zeros(len(inputs["token_ids"]), "float32"), timesteps,
            self.reference.state, self.models[False], self.config.batchnorm)
        return np.asarray(logits)


def s5_setup(repo, hp):
    ref = s5_parity.import_reference(repo)
    config = s5_config(repo, ref, hp)
    print(f"reference ({ref.versions}): {vars(config)}")
    with contextlib.redirect_stdout(io.StringIO()):
        reference = s5_parity.Reference(
            ref, config, hp["num_classes"], hp["sequence_length"],
            hp["batch_size"], 0)
    if not s5_parity.part_a(reference, hp):
        sys.exit("the parameter groups differ; not training")
    return lambda seed, total: S5Side(ref, config, hp, total, seed,
                                      hp["batch_size"])


@dataclasses.dataclass(frozen=True)
class Family:
    title: str
    reference: str
    setup: object  # setup(repo, hp) -> side(seed, total_steps)


FAMILIES = {
    "s4d": Family("S4D", "state-spaces/s4", s4_setup),
    "s4": Family("S4 (DPLR)", "state-spaces/s4", s4_setup),
    "mega": Family("MEGA", "facebookresearch/mega", mega_setup),
    "transformer": Family("YCTFS rotary Transformer",
                          "pablomiralles22/long-transformers",
                          yctfs_setup),
    "gmlp": Family("YCTFS gMLP", "pablomiralles22/long-transformers",
                   yctfs_setup),
    "s5": Family("S5", "lindermanlab/S5", s5_setup),
}


# === training ===


def evaluate(side, batches):
    """(mean cross-entropy, accuracy) over every row of `batches`."""
    losses, correct, count = 0.0, 0, 0
    for index in range(len(batches)):
        inputs, labels = batches[index]
        logits = side.logits(inputs).astype(np.float64)
        logits -= logits.max(-1, keepdims=True)
        log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        losses -= float(log_probs[np.arange(len(labels)), labels].sum())
        correct += int((logits.argmax(-1) == labels).sum())
        count += len(labels)
    return losses / count, correct / count


def run_one(side_name, seed, hp, splits, eval_every, make_reference):
    train = make_batches(*splits["train"], hp, shuffle=True, seed=seed)
    val = make_batches(*splits["val"], hp)
    test = make_batches(*splits["test"], hp)
    total = len(train) * int(hp["epochs"])
    side = (Ours(hp, total, seed) if side_name == "ours"
            else make_reference(seed, total))
    curve, window, step = [], [], 0
    start = time.perf_counter()
    for epoch in range(int(hp["epochs"])):
        train.set_epoch(epoch)
        for index in range(len(train)):
            inputs, labels = train[index]
            window.append(side.train_step(inputs, labels, step))
            step += 1
            if step % eval_every == 0 or step == total:
                val_loss, val_accuracy = evaluate(side, val)
                curve.append(dict(step=step, epoch=epoch + 1,
                                  train_loss=float(np.mean(window)),
                                  val_loss=val_loss,
                                  val_accuracy=val_accuracy))
                window = []
                print(f"{side_name} seed {seed} step {step}/{total}: train "
                      f"loss {curve[-1]['train_loss']:.4f}, val loss "
                      f"{val_loss:.4f}, val acc {val_accuracy:.4f}",
                      flush=True)
                if not math.isfinite(val_loss):
                    sys.exit(f"{side_name} seed {seed}: the validation loss "
                             f"is {val_loss} at step {step}; stopped")
    _, test_accuracy = evaluate(side, test)
    reference = keras.backend.backend() if side_name == "ours" else (
        "jax" if hp["model"] == "s5" else "torch")
    return dict(side=side_name, seed=seed, curve=curve,
                test_accuracy=test_accuracy,
                wall_seconds=time.perf_counter() - start,
                backend=reference, steps=total, preset=hp["preset"],
                family=hp["model"])


# === the plot ===


def interval(mean, half):
    return (f"{100 * mean:.2f}" if half is None
            else f"{100 * mean:.2f} ± {100 * half:.2f}")


def plot(out_dir, png):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [json.loads(p.read_text()) for p in sorted(
        Path(out_dir).glob("*_seed*.json"))]
    if not runs:
        sys.exit(f"no <side>_seed<seed>.json in {out_dir}")
    settings = {json.dumps(r.get("overrides", {}), sort_keys=True)
                for r in runs}
    if len(settings) > 1:
        sys.exit(f"{out_dir} holds runs of different settings: {settings}")
    figure, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    colours = {"ours": "tab:blue", "reference": "tab:orange"}
    for side in ("ours", "reference"):
        mine = [r for r in runs if r["side"] == side]
        if not mine:
            continue
        accuracies = [r["test_accuracy"] for r in mine]
        mean, half = mean_ci(accuracies)
        label = (f"{side} ({mine[0]['backend']}): test "
                 f"{interval(mean, half)}, {len(mine)} seeds")
        for axis, key in zip(axes, ("val_accuracy", "val_loss")):
            steps = [p["step"] for p in mine[0]["curve"]]
            values = np.array([[p[key] for p in r["curve"]] for r in mine])
            for row in values:
                axis.plot(steps, row, color=colours[side], alpha=0.35,
                          linewidth=0.8)
            axis.plot(steps, values.mean(0), color=colours[side],
                      linewidth=2.2, label=label)
    for axis, title in zip(axes, ("validation accuracy", "validation loss")):
        axis.set_xlabel("training step")
        axis.set_title(title)
        axis.grid(alpha=0.3)
    axes[0].legend(fontsize=8, loc="lower right")
    family = FAMILIES[runs[0].get("family", "s4d")]
    overrides = runs[0].get("overrides") or {}
    shown = " ".join(f"{k}={v}" for k, v in overrides.items())
    figure.suptitle(textwrap.fill(
        f"ListOps {family.title}: lra_keras vs {family.reference}, same "
        f"data, batches and rate at every step; preset {runs[0]['preset']}"
        f"{' + ' + shown if shown else ''}", 120), fontsize=9)
    figure.tight_layout()
    Path(png).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(png, dpi=110)
    print(f"wrote {png}")
    for side in ("ours", "reference"):
        mine = [r for r in runs if r["side"] == side]
        if mine:
            mean, half = mean_ci([r["test_accuracy"] for r in mine])
            walls = [r["wall_seconds"] / 60 for r in mine]
            print(f"{side}: test {interval(mean, half)} "
                  f"(seeds {[r['seed'] for r in mine]}: "
                  f"{[round(100 * r['test_accuracy'], 2) for r in mine]}); "
                  f"final val acc "
                  f"{[round(r['curve'][-1]['val_accuracy'], 4) for r in mine]}"
                  f"; {np.mean(walls):.1f} min per run "
                  f"({mine[0]['backend']})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--family", choices=sorted(FAMILIES),
                        default="s4d")
    parser.add_argument("--repo", help="checkout of the family's reference "
                        "(see the docstring)")
    parser.add_argument("--out", required=True,
                        help="directory of the <side>_seed<seed>.json files")
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--side", nargs="+", default=["ours", "reference"],
                        choices=["ours", "reference"])
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="preset overrides, as the recipes' --set, e.g. "
                        "train_samples=2000")
    parser.add_argument("--plot", help="write the PNG here and stop")
    args = parser.parse_args()
    if args.plot:
        return plot(args.out, args.plot)
    if not args.repo:
        parser.error("--repo is required unless --plot is given")
    import torch

    torch.set_num_threads(1)
    overrides = parse_overrides(args.set)
    hp = get_hparams("listops", args.family, preset=args.preset, **overrides)
    print(f"backend {keras.backend.backend()}; preset {args.preset} + "
          f"{overrides}: width {hp['hidden_dim']}, {hp['num_layers']} "
          f"blocks, pooling {hp['pooling']}, lr {hp['learning_rate']}, "
          f"{hp['epochs']} epochs of {hp['train_samples']} rows of at most "
          f"{hp['sequence_length']} tokens")
    make_reference = FAMILIES[args.family].setup(args.repo, hp)
    splits = load_splits("listops", hp)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for seed in args.seeds:
        for side in args.side:
            path = out / f"{side}_seed{seed}.json"
            if path.exists():
                print(f"{path} exists; skipped")
                continue
            result = run_one(side, seed, hp, splits, args.eval_every,
                             make_reference)
            result["overrides"] = overrides
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(result, indent=1))
            tmp.replace(path)
            print(f"{side} seed {seed}: test accuracy "
                  f"{result['test_accuracy']:.4f} in "
                  f"{result['wall_seconds'] / 60:.1f} min", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
