"""Our MEGA ListOps model side by side with the MEGA authors' fairseq code.

    python benchmarks/reference_parity_mega.py --mega-repo /tmp/megaref
        [--hidden-dim 32] [--num-layers 2] [--key-dim 64] [--ema-dim 16]
        [--length 128] [--truncation 64] [--batch-size 4] [--seeds 5]
        [--chunk-sizes -1 32] [--norm-type scalenorm|batchnorm|...]
        [--prenorm]

    for b in jax tensorflow torch; do KERAS_BACKEND=$b taskset -c 1 \\
        python benchmarks/reference_parity_mega.py --mega-repo /tmp/megaref
    done

`--mega-repo` is a checkout of facebookresearch/mega (the fairseq fork the
rows of `lra_keras.presets.mega` cite), e.g. `git -C <clone> archive HEAD
| tar -x -C /tmp/megaref`. Its modules are imported from there, never
copied: `fairseq/models/lra/model.py` (`LRAModel`, `LRAEncoder` and the
`mega_lra_listop` architecture), `mega_lra_encoder.py` and
`fairseq/modules/` (`MegaSentenceEncoderLayer`,
`MovingAverageGatedAttention`, `MultiHeadEMA`,
`NormalizedFeedForwardNetwork`, `SequenceNorm`,
`SimpleRelativePositionalBias`), `fairseq/utils.py`, the optimizer
`fairseq/optim/adam.py` (`FairseqAdam`; on a machine without apex and CUDA
it is its own `Adam`, adam.py:44-45) and the schedule
`fairseq/optim/lr_scheduler/linear_decay_schedule.py`. fairseq does not
install here, and the packages' `__init__.py` files import every task,
model and data set of fairseq (`fairseq/data/__init__.py` needs sklearn;
`fairseq/modules/__init__.py` imports `fairseq.data` back), so
`import_reference` registers the packages `fairseq`, `fairseq.data`,
`fairseq.modules`, `fairseq.models`, `fairseq.models.lra`, `fairseq.optim`
and `fairseq.optim.lr_scheduler` without running their `__init__.py`: the
names an `__init__.py` imports from its own modules load from those
modules on first use. Two things of them are not loaded: the model
registry's decorators (`fairseq/models/__init__.py:52-117`, which only
record the classes and architecture functions) are replaced by ones that
only record them; the optimizer and scheduler registries are the
checkout's own `fairseq.registry.setup_registry`, called as their
`__init__.py` lines do (`fairseq/optim/__init__.py:22-26`,
`lr_scheduler/__init__.py:13-17`). Nothing else is stubbed.

The reference's settings are the ListOps command of
`examples/mega/README.lra.md` (lines 27-42), parsed with the checkout's
own argument definitions (`LRAModel.add_args`, `FairseqAdam.add_args`,
`LinearDecaySchedule.add_args`; the trainer's `--lr`, `--clip-norm`,
`--max-update`, `--batch-size` as `fairseq/options.py:351, 468, 472-474,
482` define them), then completed by the architecture function the
command names (`mega_lra_listop`, model.py:406-424, then
`base_architecture`, model.py:351-384). Its `--norm-type 'layernorm'`
overrides the architecture's default `scalenorm` (model.py:421), so the
ListOps run uses LayerNorm, the preset's `norm="layer"`. `--norm-type`
puts the other tasks' norms on both sides (`scalenorm`: Text and AAN;
`batchnorm`: the pixel tasks, whose commands also pass
`--encoder-normalize-before`: `--prenorm`), for the same checks.
The command line of this script replaces the sizes (embed, hidden, FFN,
z and n dims, layers, classifier width = 2 x hidden as 160 = 2 x 80),
`$CHUNK` (-1: full attention, the preset's), the EMA truncation (the
preset's 1024 cuts the kernel of 2000 tokens; the default length // 2
cuts it here too) and `--max-positions` (model.py:420's 2002 for 2000
tokens: length + 2). The task's dictionary is replaced by our ids (pad 0,
`lra_keras.tasks`): `LRAEncoder` reads only its size and pad index
(model.py:227-229).

Ours: `get_hparams("listops", "mega", ...)` with the same sizes,
`build_classifier`, `make_optimizer` (warmup 0, constant schedule), under
the backend of `KERAS_BACKEND` (one backend per process).

It prints:
  a. the full-size preset beside the README command with its
     architecture (every setting, and whether it agrees); the learning
     rate of both schedules (fairseq's `LinearDecaySchedule` stepped as
     trainer.py:548, 577, 827 do; ours `make_schedule`); the parameter
     count of every (learning rate, weight decay) group (fairseq: one
     group of every parameter, trainer.py:190-196, decayed by
     `--weight-decay`; ours from the optimizer's `_use_weight_decay`), and
     whether every reference tensor lands in the group of the variables it
     converts to.
  b. per chunk size: the reference's weights converted to ours
     (`convert_reference_weights`), then the largest logit difference
     relative to the largest logit, in inference and in training mode
     (dropouts 0), on a full-length and a padded batch; then two AdamW
     steps (the full batch, then the padded one; with `--norm-type
     batchnorm` the full one twice: fairseq's BatchNorm1d counts padded
     positions, ours does not, so a padded training batch differs by
     design) on both, fairseq's as its
     trainer takes them (summed cross-entropy, `multiply_grads(1 /
     sample_size)`, `clip_grad_norm(--clip-norm)`, `step`; trainer.py:
     529-548, lra_cross_entropy.py:43-46) at the README's rate, betas,
     epsilon, weight decay and clip, ours with the preset's (neither
     side's logits have a bias, model.py:62-66). fairseq's
     `Adam` decays decoupled (`p -= lr * wd * p` before the Adam update,
     adam.py:201-202, as `torch.optim.AdamW`) and adds epsilon to sqrt(v)
     before the bias correction (adam.py:195-199: `lr * sqrt(c2) / c1 *
     m / (sqrt(v) + eps)`), Keras's placement. The steps are compared
     with the preset's `adam_epsilon_style` and with `"keras"`, fairseq's
     (before that key existed: with the config's epsilon, Keras's
     placement, and with `eps * sqrt(1 - beta_2)`, PyTorch's). The
     reference's steps are also taken in float64 (a float64 copy of the
     model; fairseq's clipping asks for float32 norms, which that copy
     takes in float64), and each kind of weight is judged by
     `reference_parity.step_rows`: within 0.1 of a step and at most 0.5%,
     or one, of its weights further than 1e-3 of one; else "ok
     (rounding)" if within 10x the reference's own float32 distance from
     its float64 step, "ill-conditioned" if that float32 step itself
     fails the gate.
  c. without conversion, over `--seeds` seeds: the initial loss and the
     mean and std of every block's output (and of its attention layer's
     and EMA's) for both models on one batch, and the spread of each kind
     of initial weight, so that initialisations can be compared.

The exit status is 0 when a, the forward passes and the steps with
fairseq's epsilon placement agree (the preset's placement is reported,
not gated).
"""

import argparse
import ast
import copy
import functools
import importlib
import math
import os
import re
import shlex
import string
import sys
import types
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
from reference_parity import GROUP_COLUMNS  # noqa: E402
from reference_parity import TOLERANCE  # noqa: E402
from reference_parity import add_checkout  # noqa: E402
from reference_parity import benchmark_parser  # noqa: E402
from reference_parity import build_ours  # noqa: E402
from reference_parity import check_table  # noqa: E402
from reference_parity import full_and_padded  # noqa: E402
from reference_parity import group_rows  # noqa: E402
from reference_parity import hooked_outputs  # noqa: E402
from reference_parity import init_batch  # noqa: E402
from reference_parity import load_ours  # noqa: E402
from reference_parity import loss_row  # noqa: E402
from reference_parity import our_forward  # noqa: E402
from reference_parity import our_param_groups  # noqa: E402
from reference_parity import our_rates  # noqa: E402
from reference_parity import our_sizes  # noqa: E402
from reference_parity import our_weights  # noqa: E402
from reference_parity import print_summary  # noqa: E402
from reference_parity import record  # noqa: E402
from reference_parity import record_outputs  # noqa: E402
from reference_parity import relative  # noqa: E402
from reference_parity import report_group_check  # noqa: E402
from reference_parity import seeds_table  # noqa: E402
from reference_parity import spread  # noqa: E402
from reference_parity import spread_table  # noqa: E402
from reference_parity import step_rows  # noqa: E402
from reference_parity import table  # noqa: E402
from reference_parity import torch_float64  # noqa: E402
from reference_parity import verdict  # noqa: E402

from lra_keras import schema  # noqa: E402
from lra_keras.hparams import get_hparams  # noqa: E402
from lra_keras.training import make_optimizer  # noqa: E402
from lra_keras.training import make_schedule  # noqa: E402

LISTOPS_TRAIN_ROWS = 96000  # lra_keras/data/listops/loader.py, the LRA split
# fairseq's --norm-type (SequenceNorm) -> our `norm`; syncbatchnorm is the
# batch norm of the whole (multi-GPU) batch.
NORM_TYPES = {"layernorm": "layer", "scalenorm": "scale",
              "batchnorm": "batch", "syncbatchnorm": "batch"}
README = "examples/mega/README.lra.md"

# === The reference ===


def _package(repo, name, **names):
    """`name` as a package of the checkout, without running its
    `__init__.py`: what that file imports from the package's own modules
    (`from .x import A`, `from name.x import A`) loads on first use."""
    directory = Path(repo, *name.split("."))
    exports = {}
    init = directory / "__init__.py"
    for node in ast.parse(init.read_text()).body if init.exists() else ():
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.level == 1:
                module = f"{name}.{node.module}"
            elif node.level == 0 and node.module.startswith(name + "."):
                module = node.module
            else:
                continue
            for alias in node.names:
                exports[alias.asname or alias.name] = (module, alias.name)
    package = types.ModuleType(name)
    package.__path__ = [str(directory)]

    def load(attribute):
        if attribute not in exports:
            raise AttributeError(f"module {name!r} has no {attribute!r}")
        module, real = exports[attribute]
        value = getattr(importlib.import_module(module), real)
        setattr(package, attribute, value)
        return value

    package.__getattr__ = load
    package.__dict__.update(names)
    sys.modules[name] = package
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, package)
    return package


@functools.cache
def import_reference(repo):
    """The reference's modules, imported from the checkout `repo` (once a
    process: fairseq's registries refuse a second set-up)."""
    repo = add_checkout(repo, "--mega-repo", "facebookresearch/mega",
                        "fairseq/models/lra/mega_lra_encoder.py")
    architectures = {}

    def register_model(name):
        return lambda cls: cls

    def register_model_architecture(model_name, arch_name):
        def record(fn):
            architectures[arch_name] = fn
            return fn
        return record

    for name in ("fairseq", "fairseq.data", "fairseq.modules"):
        _package(repo, name)
    _package(repo, "fairseq.models", register_model=register_model,
             register_model_architecture=register_model_architecture)
    _package(repo, "fairseq.models.lra")
    registry = importlib.import_module("fairseq.registry")
    optim = _package(repo, "fairseq.optim")
    (optim.build_optimizer, optim.register_optimizer,
     optim.OPTIMIZER_REGISTRY) = registry.setup_registry(
        "--optimizer", base_class=optim.FairseqOptimizer, required=True)
    schedulers = _package(repo, "fairseq.optim.lr_scheduler")
    (schedulers.build_lr_scheduler, schedulers.register_lr_scheduler,
     schedulers.LR_SCHEDULER_REGISTRY) = registry.setup_registry(
        "--lr-scheduler", base_class=schedulers.FairseqLRScheduler,
        default="fixed")
    model = importlib.import_module("fairseq.models.lra.model")
    return types.SimpleNamespace(
        LRAModel=model.LRAModel,
        architectures=architectures,
        FairseqAdam=importlib.import_module("fairseq.optim.adam").FairseqAdam,
        LinearDecaySchedule=importlib.import_module(
            "fairseq.optim.lr_scheduler.linear_decay_schedule"
        ).LinearDecaySchedule,
    )


def readme_command(repo, chunk_size):
    """The arguments of the README's ListOps `train.py` command."""
    text = Path(repo, README).read_text()
    block = text[text.index("# ListOps\n"):]
    block = block[:block.index("```")].replace("\\\n", " ")
    variables = dict(DATA="data", SAVE="save", seed="1",
                     CHUNK=str(chunk_size))
    for line in block.splitlines():
        if re.fullmatch(r"\w+=\S+", line.strip()):
            key, value = line.strip().split("=")
            variables[key] = value
        elif "train.py" in line:
            command = string.Template(line).safe_substitute(variables)
            tokens = shlex.split(command)
            return tokens[tokens.index("train.py") + 1:]
    raise ValueError(f"{README}: no ListOps train.py command")


def reference_args(ref, args, chunk_size, sizes=True):
    """(model args, optimizer args) of the README command, completed by
    its architecture function; `sizes`: this script's sizes and
    `--norm-type`, dropouts 0."""
    tokens = readme_command(args.mega_repo, chunk_size)
    # fairseq's model options default to SUPPRESS (options.py
    # add_model_args), so that the architecture function sets the rest.
    parser = argparse.ArgumentParser(argument_default=argparse.SUPPRESS,
                                     allow_abbrev=False)
    parser.add_argument("-a", "--arch")
    ref.LRAModel.add_args(parser)
    model_args, _ = parser.parse_known_args(tokens)
    if sizes and getattr(args, "norm_type", None):
        model_args.norm_type = args.norm_type
    if sizes and getattr(args, "prenorm", False):
        model_args.encoder_normalize_before = True
    if sizes:
        hidden = args.intermediate_dim or 2 * args.hidden_dim
        vars(model_args).update(
            encoder_layers=args.num_layers,
            encoder_embed_dim=args.hidden_dim,
            encoder_hidden_dim=hidden,
            encoder_ffn_embed_dim=hidden,
            z_dim=args.key_dim,
            n_dim=args.ema_dim,
            classifier_out_dim=2 * args.hidden_dim,
            max_positions=args.length + 2,
            truncation_length=args.truncation,
            dropout=0.0,
        )
    ref.architectures[model_args.arch](model_args)
    parser = argparse.ArgumentParser(allow_abbrev=False)
    ref.FairseqAdam.add_args(parser)
    ref.LinearDecaySchedule.add_args(parser)
    parser.add_argument("--lr", "--learning-rate", default=[0.25],
                        type=lambda s: [float(x) for x in s.split(",")])
    parser.add_argument("--clip-norm", default=0.0, type=float)
    parser.add_argument("--clip-mode", default="total")
    parser.add_argument("--max-update", "--mu", default=0, type=int)
    parser.add_argument("--max-sentences", "--batch-size", type=int)
    parser.add_argument("--lr-scheduler", default="fixed")
    optimizer_args, _ = parser.parse_known_args(tokens)
    return model_args, optimizer_args


class _Dictionary:
    """What `LRAEncoder` reads of the task's dictionary (model.py:227-229):
    its size and pad index, here our vocabulary and padding id."""

    def __init__(self, size, pad_index):
        self.size, self.pad_index = size, pad_index

    def __len__(self):
        return self.size


def build_reference(ref, model_args, hp):
    task = types.SimpleNamespace(dictionary=_Dictionary(
        hp["vocabulary_size"], hp["padding_id"]))
    return ref.LRAModel.build_model(copy.copy(model_args), task)


def reference_forward(model, tokens, lengths):
    import torch

    sample = {"net_input": {
        "src_tokens": torch.as_tensor(tokens, dtype=torch.long),
        "src_lengths": torch.as_tensor(lengths, dtype=torch.long)}}
    return model(sample)["encoder_out"]


def forget_kernels(model):
    # In eval mode MultiHeadEMA caches its kernel and coefficients
    # (exponential_moving_average.py:92-107) and keeps them when weights
    # are loaded; a training-mode call clears them.
    for module in model.modules():
        if hasattr(module, "_kernel"):
            module._kernel = module._coeffs = None


def reference_steps(ref, model, optimizer_args, batches):
    """fairseq's trainer on each batch in turn (trainer.py:529-548, the
    criterion lra_cross_entropy.py:43-46 with --sentence-avg) at the
    README's peak rate: the mean losses, the state after each step, the
    optimizer class that ran and the largest |gradient| of every parameter
    at the first step (clipped, as stepped)."""
    import torch
    import torch.nn.functional as F

    optimizer = ref.FairseqAdam(optimizer_args, list(model.parameters()))
    optimizer.set_lr(optimizer_args.lr[0])  # no warmup
    model.train()
    losses, states, gradients = [], [], None
    for tokens, _, lengths, labels in batches:
        optimizer.zero_grad()
        output = {"encoder_out": reference_forward(model, tokens, lengths)}
        lprobs = model.get_normalized_probs(output, log_probs=True)
        targets = torch.as_tensor(labels, dtype=torch.long)
        loss = F.nll_loss(lprobs, targets, reduction="sum")
        optimizer.backward(loss)
        optimizer.multiply_grads(1.0 / len(labels))  # sample_size: rows
        optimizer.clip_grad_norm(optimizer_args.clip_norm,
                                 mode=optimizer_args.clip_mode)
        if gradients is None:
            gradients = {name: float(p.grad.abs().max())
                         for name, p in model.named_parameters()
                         if p.grad is not None}
        optimizer.step()
        losses.append(float(loss.detach()) / len(labels))
        states.append(copy.deepcopy(model.state_dict()))
    inner = type(optimizer.optimizer)
    return (losses, states, f"{inner.__module__}.{inner.__name__}",
            gradients)


def reference_steps_float64(ref, model, state, optimizer_args, batches):
    """`reference_steps` of a float64 copy of `model` from `state`: the
    state after each step."""
    import torch

    model64 = copy.deepcopy(model)
    model64.load_state_dict(state)
    forget_kernels(model64)
    norm = torch.norm

    def norm64(tensor, *args, dtype=None, **kwargs):
        # fairseq's clipping asks for float32 norms (utils.py:286, 311,
        # 322), which torch refuses for a float64 gradient.
        if tensor.dtype == torch.float64:
            dtype = None
        return norm(tensor, *args, dtype=dtype, **kwargs)

    torch.norm = norm64
    try:
        with torch_float64():
            states = reference_steps(ref, model64.double(), optimizer_args,
                                     batches)[1]
    finally:
        torch.norm = norm
    return states


# === Ours ===


def our_hparams(args, chunk_size=-1, **overrides):
    hidden = args.intermediate_dim or 2 * args.hidden_dim
    if getattr(args, "norm_type", None):
        overrides = dict(dict(norm=NORM_TYPES[args.norm_type]), **overrides)
    if getattr(args, "prenorm", False):
        overrides = dict(dict(prenorm=True), **overrides)
    return get_hparams(
        "listops", "mega", hidden_dim=args.hidden_dim,
        num_layers=args.num_layers, intermediate_dim=hidden,
        ffn_intermediate_dim=hidden, key_dim=args.key_dim,
        ema_dim=args.ema_dim, head_hidden_dim=2 * args.hidden_dim,
        sequence_length=args.length,
        chunk_size=chunk_size if chunk_size > 0 else None,
        truncation=args.truncation, dropout=0.0, head_dropout=0.0,
        warmup_steps=0, schedule="constant", **overrides,
    )


def our_steps(model, hp, batches):
    """`train_on_batch` on each batch in turn: the losses and the weights
    after each."""
    model.compile(
        optimizer=make_optimizer(hp, len(batches)),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    losses, weights = [], []
    for tokens, mask, _, labels in batches:
        loss = model.train_on_batch(
            {"token_ids": tokens, "padding_mask": mask}, labels)
        losses.append(float(np.asarray(loss).reshape(-1)[0]))
        weights.append(our_weights(model))
    return losses, weights


# === The converter ===

# Per block: reference tensor (under `encoder.encoder.layers.{i}.`) -> our
# variable (under `mega_block_{i}/`). Dense kernels are the transposed
# `weight`s.
BLOCK_TENSORS = {
    # The reference's kernel is sigmoid(delta) * beta * q^l with q = 1 -
    # sigmoid(delta) * sigmoid(alpha) (exponential_moving_average.py:77-
    # 90): its `delta` scales the input, the paper's alpha (eq. 2), which
    # ours names `ema_alpha`; q is symmetric in the two.
    "mega_layer.move.delta": "mega_attention/ema/ema_alpha",
    "mega_layer.move.alpha": "mega_attention/ema/ema_delta",
    "mega_layer.move.beta": "mega_attention/ema/ema_beta",
    "mega_layer.move.gamma": "mega_attention/ema/ema_gamma",
    "mega_layer.move.omega": "mega_attention/ema/ema_omega",
    "mega_layer.v_proj.weight": "mega_attention/v_proj/kernel",
    "mega_layer.v_proj.bias": "mega_attention/v_proj/bias",
    "mega_layer.mx_proj.weight": "mega_attention/mx_proj/kernel",
    "mega_layer.mx_proj.bias": "mega_attention/mx_proj/bias",
    "mega_layer.h_proj.weight": "mega_attention/h_proj/kernel",
    "mega_layer.h_proj.bias": "mega_attention/h_proj/bias",
    "mega_layer.gamma": "mega_attention/qk_gamma",
    "mega_layer.beta": "mega_attention/qk_beta",
    "mega_layer.rel_pos_bias.rel_pos_bias": "mega_attention/rel_pos_bias",
    "nffn.fc1.weight": "ffn_inner/kernel",
    "nffn.fc1.bias": "ffn_inner/bias",
    "nffn.fc2.weight": "ffn_outer/kernel",
    "nffn.fc2.bias": "ffn_outer/bias",
}
# Per norm (`SequenceNorm.norm`, under `mega_layer.norm.`, `nffn.norm.` and
# the pre-norm encoder's `final_norm.`): its tensors -> our variables.
# LayerNorm and BatchNorm1d: weight, bias (and running statistics);
# ScaleNorm: its one `scalar` (scale_norm.py:17-18).
NORM_TENSORS = {
    "norm.weight": "gamma", "norm.bias": "beta",
    "norm.running_mean": "moving_mean", "norm.running_var": "moving_variance",
    "norm.scalar": "gain",
}
NORM_PREFIXES = {"mega_layer.norm.": "mega_attention/norm/",
                 "nffn.norm.": "ffn_norm/"}
# Read by nothing: BatchNorm1d's update counter.
UNREAD = ("num_batches_tracked",)
MODEL_TENSORS = {
    "encoder.encoder.embed_tokens.embed.weight": "token_embedding/embeddings",
    "classifier.0.0.weight": "head_hidden/kernel",
    "classifier.0.0.bias": "head_hidden/bias",
    "sentence_projection_layer.weight": "logits/kernel",
    **{f"encoder.encoder.final_norm.{k}": f"final_norm/{v}"
       for k, v in NORM_TENSORS.items()},
}


def convert_reference_weights(state, shapes):
    """The reference's state dict as our variables: `(weights, sources)`,
    `{path: array}` and `{path: reference name}`.

    Tensors map one to one (`BLOCK_TENSORS`, `MODEL_TENSORS`); our
    `shapes` (`{path: shape}`) give the relative position table's size:
    the reference's `2 P - 1` lags (P = `--max-positions`, or the chunk)
    are cut to our `2 P' - 1` around lag 0 (the lags beyond the sequence
    are never read). With `logits_bias=True` ours has a bias the
    reference lacks (model.py:62-66): 0. Raises on a tensor without a
    variable.
    """
    names = {k: v for k, v in MODEL_TENSORS.items() if k in state}
    for name in state:
        match = re.fullmatch(r"encoder\.encoder\.layers\.(\d+)\.(.+)", name)
        if not match:
            continue
        block, rest = f"mega_block_{match[1]}/", match[2]
        if rest in BLOCK_TENSORS:
            names[name] = block + BLOCK_TENSORS[rest]
        for prefix, path in NORM_PREFIXES.items():
            leaf = rest[len(prefix):]
            if rest.startswith(prefix) and leaf in NORM_TENSORS:
                names[name] = block + path + NORM_TENSORS[leaf]
    unused = sorted(n for n in set(state) - set(names)
                    if not n.endswith(UNREAD))
    if unused:
        raise ValueError(f"Reference tensors without a variable: {unused}")
    weights, sources = {}, {}
    for name, path in names.items():
        value = state[name].detach().cpu().numpy().astype(np.float64)
        if path.endswith("/kernel"):
            value = value.T  # torch Linear (out, in) -> Dense (in, out)
        if path.endswith("rel_pos_bias"):
            cut = (value.shape[0] - shapes[path][0]) // 2
            value = value[cut:value.shape[0] - cut]
        if path.endswith("/gain"):  # ScaleNorm's scalar (1,): ours ()
            value = value.reshape(shapes[path])
        if value.shape != tuple(shapes[path]):
            raise ValueError(f"{name} {value.shape} -> {path} "
                             f"{tuple(shapes[path])}")
        weights[path], sources[path] = value, name
    if "logits/bias" in shapes:
        weights["logits/bias"] = np.zeros(shapes["logits/bias"])
    return weights, sources


def our_shapes(model):
    return {v.path: tuple(v.shape) for v in model.variables}


# === a. settings, schedule and parameter groups ===


def setting_rows(model_args, optimizer_args, hp):
    """(setting, reference, ours, same?, not gated because) of the
    full-size preset against the README command and its architecture."""
    betas = ast.literal_eval(optimizer_args.adam_betas)
    style = hp.get("adam_epsilon_style")
    updates = hp["epochs"] * LISTOPS_TRAIN_ROWS // hp["batch_size"]
    chunk = model_args.chunk_size if model_args.chunk_size > 0 else None
    rows = [
        ("layers", model_args.encoder_layers, hp["num_layers"]),
        ("embed dim / hidden_dim", model_args.encoder_embed_dim,
         hp["hidden_dim"]),
        ("hidden dim / intermediate_dim", model_args.encoder_hidden_dim,
         hp["intermediate_dim"]),
        ("FFN dim / ffn_intermediate_dim", model_args.encoder_ffn_embed_dim,
         hp["ffn_intermediate_dim"]),
        ("z dim / key_dim", model_args.z_dim, hp["key_dim"]),
        ("n dim / ema_dim", model_args.n_dim, hp["ema_dim"]),
        ("chunk (-1: none)", chunk, hp["chunk_size"]),
        ("EMA truncation", model_args.truncation_length, hp["truncation"]),
        ("relative positions (max positions)", model_args.max_positions,
         hp["max_positions"] or hp["sequence_length"]),
        ("attention", model_args.attention_activation_fn,
         hp["attention_activation"]),
        ("norm type", NORM_TYPES.get(model_args.norm_type,
                                     model_args.norm_type), hp["norm"]),
        ("activation (ours: silu, fixed)", model_args.activation_fn,
         "silu"),
        ("FFN / value dropout (ours: 0, fixed)", model_args.act_dropout,
         0.0),
        ("relative position bias (ours: simple)", model_args.rel_pos_bias,
         "simple"),
        ("embedding norm (ours: none)", model_args.normalize_embedding,
         False),
        ("feature dropout (ours: none)", model_args.feature_dropout, False),
        ("pre-norm", model_args.encoder_normalize_before, hp["prenorm"]),
        ("sentence representation", model_args.sen_rep_type,
         {"mean": "mp"}.get(hp["pooling"], hp["pooling"])),
        ("classifier hidden layers", model_args.classifier_layers,
         int(hp["head"] == "mlp")),
        ("classifier width", model_args.classifier_out_dim,
         hp["head_hidden_dim"]),
        ("classifier activation", model_args.classifier_activation_fn,
         hp["head_activation"]),
        ("classifier dropout (model.py:51-55)", model_args.dropout,
         hp["head_dropout"]),
        ("logits bias (model.py:62-66)", False, hp["logits_bias"]),
        ("dropout", model_args.dropout, hp["dropout"]),
        ("attention dropout", model_args.attention_dropout,
         hp["attention_dropout"]),
        ("embedding init std", "D^-1/2 (mega_lra_encoder.py:259)",
         {"scaled_normal": "D^-1/2 (mega_lra_encoder.py:259)"}.get(
             hp["embedding_init"], hp["embedding_init"])),
        ("learning rate", optimizer_args.lr[0], hp["learning_rate"]),
        ("Adam betas", tuple(betas), (hp["adam_beta_1"], hp["adam_beta_2"])),
        ("Adam epsilon", optimizer_args.adam_eps, hp["adam_epsilon"]),
        ("epsilon placement", "keras (adam.py:195-199)",
         f"{style or 'keras'}"),
        ("weight decay", optimizer_args.weight_decay, hp["weight_decay"]),
        ("decayed weights", "all (trainer.py:190-196, adam.py:201-202)",
         f"{hp['weight_decay_on']}"),
        ("gradient clip norm", optimizer_args.clip_norm,
         hp["gradient_clipnorm"]),
        ("schedule", optimizer_args.lr_scheduler,
         {"linear": "linear_decay"}.get(hp["schedule"], hp["schedule"])),
        ("warmup steps", optimizer_args.warmup_updates, hp["warmup_steps"]),
        ("warmup power", optimizer_args.warmup_power, hp["warmup_power"]),
        ("warmup start rate", optimizer_args.warmup_init_lr,
         hp["warmup_initial_learning_rate"]),
        ("final rate", optimizer_args.end_learning_rate, 0.0),
        ("batch size", optimizer_args.max_sentences, hp["batch_size"]),
        ("updates (ours: epochs x 96000 / batch)",
         optimizer_args.total_num_update, updates),
    ]
    known = {
        "relative positions (max positions)": "lags beyond the sequence "
        "are never read",
        "epsilon placement": "a finding: see the steps in b",
    }
    out = []
    for what, theirs, ours in rows:
        same = (theirs == ours if not isinstance(theirs, float)
                else math.isclose(theirs, float(ours), rel_tol=1e-12))
        if what == "decayed weights":
            same = ours == "all"
        out.append((what, theirs, ours, same, known.get(what, "")))
    return out


def schedule_rows(ref, optimizer_args, hp):
    """The rate of update k on both sides: fairseq's trainer steps with
    the scheduler's rate, then calls `step_update(k + 1)` (trainer.py:548,
    577, 827); ours evaluates the schedule at the iteration."""
    import torch

    total = optimizer_args.total_num_update
    optimizer = ref.FairseqAdam(copy.copy(optimizer_args), [torch.zeros(1)])
    scheduler = ref.LinearDecaySchedule(copy.copy(optimizer_args), optimizer)
    ours = make_schedule(hp, total)
    warmup = optimizer_args.warmup_updates
    rows = []
    for step in sorted({0, 1, warmup // 2, warmup - 1, warmup, warmup + 1,
                        (warmup + total) // 2, total - 1, total}):
        if step:
            scheduler.step_update(step)
        theirs = optimizer.get_lr()
        mine = float(keras.ops.convert_to_numpy(ours(step)))
        rows.append((step, theirs, mine))
    return rows


def part_a(args, ref):
    hp_full = get_hparams("listops", "mega")
    model_args, optimizer_args = reference_args(ref, args, -1, sizes=False)
    print("\n## a. Settings: the full-size preset against README.lra.md:"
          "27-42 with mega_lra_listop\n")
    settings = setting_rows(model_args, optimizer_args, hp_full)
    settings_ok = all(same or bool(note) for *_, same, note in settings)
    table(("setting", "reference", "ours", "same"), [
        (what, theirs, ours,
         "yes" if same else f"NO ({note})" if note else "NO")
        for what, theirs, ours, same, note in settings])
    print("\nThe reference's architecture default `norm_type='scalenorm'` "
          f"(model.py:421) is overridden by the command's "
          f"`--norm-type {model_args.norm_type}` (README.lra.md:34).")
    print()
    schedule_ok, rows = True, []
    for step, theirs, mine in schedule_rows(ref, optimizer_args, hp_full):
        diff = abs(mine - theirs) / max(theirs, 1e-30)
        if step >= optimizer_args.warmup_updates:
            schedule_ok &= diff <= 1e-6
        rows.append((step, f"{theirs:.6g}", f"{mine:.6g}", f"{diff:.1e}"))
    table(("update", "reference rate", "our rate", "|ours - ref| / ref"),
          rows)
    print("\nBoth warmups start at --warmup-init-lr "
          f"{optimizer_args.warmup_init_lr:g} "
          "(`warmup_initial_learning_rate`).")

    import torch

    hp = our_hparams(args)
    model_args, optimizer_args = reference_args(ref, args, -1)
    torch.manual_seed(0)
    reference = build_reference(ref, model_args, hp)
    model = build_ours(hp)
    _, sources = convert_reference_weights(reference.state_dict(),
                                           our_shapes(model))
    key = (round(float(optimizer_args.lr[0]), 12),
           round(float(optimizer_args.weight_decay), 12))
    params = dict(reference.named_parameters())
    print("\n## a. Parameter groups (learning rate, weight decay), the "
          "script's sizes\n")
    ours = our_param_groups(model, make_optimizer(hp, 1),
                            float(hp["learning_rate"]))
    sizes = our_sizes(model)
    table(GROUP_COLUMNS, [(
        "reference", f"{key[0]:g}", f"{key[1]:g}", len(params),
        sum(p.numel() for p in params.values()),
        "every parameter (one group, trainer.py:190-196)",
    )] + group_rows("ours", ours, sizes))
    # (BatchNorm's running statistics are buffers there, not trained here.)
    mismatched = [f"{sources[p]} {key} -> {p} {ours[p]}" for p in sources
                  if p in ours and ours[p] != key]
    extra = sorted(set(ours) - set(sources))
    groups_ok = report_group_check(mismatched, len(params))
    print(f"Ours only: {extra or 'nothing'}; the relative position tables "
          "differ by "
          f"{sum(p.numel() for n, p in params.items() if 'rel_pos' in n)}"
          f" - {sum(sizes[p] for p in ours if 'rel_pos' in p)} entries "
          "(max positions length + 2 against length).")
    return {"a. settings (all but the noted)": settings_ok,
            "a. schedule after warmup": schedule_ok,
            "a. parameter groups": groups_ok}


# === b. converted weights: forward and two steps ===


def block_kind(path):
    """A kind of weight: its path in the block."""
    return re.sub(r"^mega_block_\d+/", "", path)


def epsilon_cases(hp):
    """(label, our overrides, reproduces fairseq's Adam?) per epsilon
    case: fairseq adds epsilon before the bias correction (adam.py:
    195-199), Keras's placement."""
    eps, beta_2 = float(hp["adam_epsilon"]), float(hp["adam_beta_2"])
    if "adam_epsilon_style" not in hp:  # Keras's placement only
        return [("config eps", {}, True),
                ("eps * sqrt(1 - beta_2)",
                 dict(adam_epsilon=eps * math.sqrt(1.0 - beta_2)), False)]
    preset = hp["adam_epsilon_style"]
    styles = [preset] + [s for s in getattr(schema, "EPSILON_STYLES", ())
                         if s != preset]
    return [(f"config eps, {s!r} placement"
             f"{' (preset)' if s == preset else ''}",
             dict(adam_epsilon_style=s), s == "keras") for s in styles]


def part_b(args, ref, chunk_size):
    import torch

    hp = our_hparams(args, chunk_size)
    model_args, optimizer_args = reference_args(ref, args, chunk_size)
    batches = full_and_padded(hp, args)
    torch.manual_seed(0)
    reference = build_reference(ref, model_args, hp)
    state = copy.deepcopy(reference.state_dict())
    model = build_ours(hp)
    shapes = our_shapes(model)
    weights, sources = convert_reference_weights(state, shapes)
    rows, forward_ok = [], True
    for batch_name, (tokens, mask, lengths, _) in batches.items():
        for mode in ("inference", "training"):
            reference.load_state_dict(state)
            forget_kernels(reference)
            load_ours(model, weights)
            reference.train(mode == "training")
            with torch.no_grad():
                expected = reference_forward(reference, tokens,
                                             lengths).numpy()
            got = our_forward(model, tokens, mask, mode == "training")
            value = relative(got, expected)
            note = verdict(value)
            if (hp["norm"] == "batch" and mode == "training"
                    and batch_name == "padded"):
                # Known: our batch norm counts real tokens only.
                note += " (expected: BatchNorm statistics)"
            else:
                forward_ok &= value <= TOLERANCE
            rows.append((f"forward, {mode}, {batch_name} batch",
                         f"{value:.1e}", note))
    verdicts = {"forward": (forward_ok, True)}
    # Two steps: the full batch, then the padded one (with a batch norm,
    # whose statistics over padding differ by design, the full one twice).
    steps = [batches["full"], batches["full" if hp["norm"] == "batch"
                                      else "padded"]]
    reference.load_state_dict(state)
    forget_kernels(reference)
    ref_losses, states, optimizer_class, gradients = reference_steps(
        ref, reference, optimizer_args, steps)
    theirs = [convert_reference_weights(s, shapes)[0] for s in states]
    # The same steps in float64 (the model, its inputs' embedding and
    # fairseq's Adam, which keeps a float64 parameter's state in float64,
    # adam.py:157-169): where the reference's own float32 step is not
    # `close_step` to it, rounding decides the comparison (`step_rows`).
    theirs64 = [convert_reference_weights(s, shapes)[0]
                for s in reference_steps_float64(ref, reference, state,
                                                 optimizer_args, steps)]
    rates = our_rates(hp)
    # A bias whose only path to the loss is a constant shift of a batch
    # norm's input has the gradient 0 in exact arithmetic: the last FFN's
    # output bias under the final norm of a pre-norm stack (every FFN's
    # output bias before the next norm of a post-norm one). Its float32
    # gradient is rounding noise, which Adam's first step, lr g / (|g| +
    # eps), turns into any step up to lr: listed with the reference's
    # largest |gradient|, not compared.
    shifts = []
    if hp["norm"] == "batch":
        last = hp["num_layers"] - 1
        shifts = [f"mega_block_{i}/ffn_outer/bias"
                  for i in ([last] if hp["prenorm"] else range(last + 1))]
        rows.append(("biases only shifting a batch norm's input (gradient "
                     "0; not compared)", "reference max |g| "
                     f"{max(gradients[sources[p]] for p in shifts):.1e}",
                     ", ".join(shifts)))
    rates = {p: r for p, r in rates.items() if p not in shifts}
    for label, overrides, fairseq_like in epsilon_cases(hp):
        step_hp = our_hparams(args, chunk_size, **overrides)
        load_ours(model, weights)
        losses, mine = our_steps(model, step_hp, steps)
        case_ok = True
        for i, (ours_loss, ref_loss) in enumerate(zip(losses, ref_losses)):
            step = f"step {i + 1} ({label})"
            row, loss_ok = loss_row(step, ours_loss, ref_loss)
            before = weights if i == 0 else theirs[i - 1]
            # Per kind of weight: its difference in units of the step (lr).
            more, good = step_rows(step, rates, before, theirs[i], mine[i],
                                   kind=block_kind, after64=theirs64[i])
            rows += [row] + more
            case_ok &= loss_ok and good
        verdicts[f"two steps, {label}"] = (case_ok, fairseq_like)
    chunk = f"chunk {chunk_size}" if chunk_size > 0 else "no chunks"
    print(f"\n## b. Converted weights, {chunk} ({keras.backend.backend()}; "
          f"reference optimizer {optimizer_class})\n")
    check_table(rows)
    return {f"b. {chunk}: {k}": v for k, v in verdicts.items()}


# === c. initialisation, without conversion ===


def reference_probe(model, num_layers, tokens, lengths):
    modules = {}
    for i, block in enumerate(model.encoder.encoder.layers[:num_layers]):
        modules.update({f"EMA {i}": block.mega_layer.move,
                        f"attention {i}": block.mega_layer,
                        f"block {i}": block})
    model.eval()
    logits, captured = hooked_outputs(
        modules, lambda: reference_forward(model, tokens, lengths))
    # (length, batch, hidden) -> (batch, length, hidden)
    return logits.numpy(), {name: x.transpose(1, 0, 2)
                            for name, x in captured.items()}


def our_probe(model, num_layers, tokens, mask):
    encoder = model.get_layer("encoder")
    blocks = [encoder.get_layer(f"mega_block_{i}") for i in range(num_layers)]
    outputs = {"embedding": encoder.get_layer("embedding_dropout").output}
    outputs.update({f"block {i}": b.output for i, b in enumerate(blocks)})
    inputs = {"token_ids": tokens, "padding_mask": mask}
    found = keras.Model(encoder.input, outputs)(inputs, training=False)
    captured = {}
    previous = found["embedding"]
    for i, block in enumerate(blocks):
        # post-norm (the preset's): the EMA reads the block's input
        captured[f"EMA {i}"] = block.attention.ema(previous,
                                                   padding_mask=mask)
        captured[f"attention {i}"] = block.attention(
            previous, padding_mask=mask, training=False)
        captured[f"block {i}"] = previous = found[f"block {i}"]
    captured = {k: keras.ops.convert_to_numpy(v) for k, v in captured.items()}
    return our_forward(model, tokens, mask, False), captured


def part_c(args, ref):
    import torch

    hp = our_hparams(args)
    model_args, _ = reference_args(ref, args, -1)
    tokens, mask, lengths, labels = init_batch(hp, args)
    stats, spreads = {}, {}  # what -> side -> list over seeds
    for seed in range(args.seeds):
        torch.manual_seed(seed)
        reference = build_reference(ref, model_args, hp)
        keras.utils.set_random_seed(seed)
        model = build_ours(hp)
        converted, _ = convert_reference_weights(reference.state_dict(),
                                                 our_shapes(model))
        mine = our_weights(model)
        for path, value in converted.items():
            kind = re.sub(r"^mega_block_\d+/(mega_attention/)?", "", path)
            record(spreads, kind, "ref", spread(value))
            record(spreads, kind, "ours", spread(mine[path]))
        ref_logits, ref_out = reference_probe(reference, args.num_layers,
                                              tokens, lengths)
        logits, out = our_probe(model, args.num_layers, tokens, mask)
        record_outputs(stats, "ref", "loss", ref_logits, labels, ref_out)
        record_outputs(stats, "ours", "loss", logits, labels,
                       {name: out[name] for name in ref_out})
    print(f"\n## c. Initialisation over {args.seeds} seeds, no conversion "
          f"({keras.backend.backend()}, inference mode); mean ± sd over "
          "seeds\n")
    seeds_table(stats)
    print("\nPost-norm blocks (the preset's): the attention layer and "
          "the block end in a LayerNorm, so their outputs are standardised"
          " per token; the EMA output (silu(EMA(x) + omega x)) is not.\n")
    spread_table(spreads, "initial weights")
    print("\nNeither side's logits have a bias (model.py:62-66, "
          "`logits_bias=False`).")


def main():
    parser = benchmark_parser(__doc__, "--mega-repo",
                              "checkout of facebookresearch/mega",
                              length=128)
    parser.add_argument("--intermediate-dim", type=int, default=None,
                        help="default 2 x hidden, as the preset's 160")
    parser.add_argument("--key-dim", type=int, default=64)
    parser.add_argument("--ema-dim", type=int, default=16)
    parser.add_argument("--truncation", type=int, default=None,
                        help="EMA kernel length cap; default length // 2")
    parser.add_argument("--chunk-sizes", type=int, nargs="+",
                        default=[-1, 32], help="-1: full attention")
    parser.add_argument("--norm-type", choices=sorted(NORM_TYPES),
                        help="the reference's --norm-type and ours `norm` "
                        "(default: the ListOps command's layernorm)")
    parser.add_argument("--prenorm", action="store_true",
                        help="--encoder-normalize-before and ours prenorm "
                        "(the pixel tasks' commands); default post-norm, "
                        "the ListOps command's")
    args = parser.parse_args()
    if args.truncation is None:
        args.truncation = args.length // 2
    import torch

    torch.set_num_threads(1)
    ref = import_reference(args.mega_repo)
    model_args, optimizer_args = reference_args(ref, args, -1)
    print(f"backend {keras.backend.backend()}; reference "
          f"{Path(args.mega_repo).resolve()} ({README} ListOps, "
          f"-a {model_args.arch}): layers {model_args.encoder_layers}, "
          f"embed {model_args.encoder_embed_dim}, hidden "
          f"{model_args.encoder_hidden_dim}, FFN "
          f"{model_args.encoder_ffn_embed_dim}, z {model_args.z_dim}, n "
          f"{model_args.n_dim}, norm {model_args.norm_type}, prenorm "
          f"{model_args.encoder_normalize_before}, truncation "
          f"{model_args.truncation_length}, max positions "
          f"{model_args.max_positions}, classifier "
          f"{model_args.classifier_out_dim}; Adam lr "
          f"{optimizer_args.lr[0]:g} betas {optimizer_args.adam_betas} eps "
          f"{optimizer_args.adam_eps:g} weight decay "
          f"{optimizer_args.weight_decay:g} clip {optimizer_args.clip_norm:g}"
          f"; dropouts 0; batch {args.batch_size} x {args.length}")
    summary = {}  # check -> (passed, gated)
    if "a" in args.parts:
        summary.update({k: (v, True) for k, v in part_a(args, ref).items()})
    if "b" in args.parts:
        for chunk_size in args.chunk_sizes:
            summary.update(part_b(args, ref, chunk_size))
    if "c" in args.parts:
        part_c(args, ref)
    return print_summary(
        summary, " (not gated: not fairseq's epsilon placement)")


if __name__ == "__main__":
    sys.exit(main())
