"""Our YCTFS gMLP and rotary Transformer (ListOps) beside the authors' code.

    python benchmarks/reference_parity_yctfs.py --yctfs-repo /tmp/yctfsref
        [--models gmlp transformer] [--hidden-dim 32] [--intermediate-dim 64]
        [--num-layers 2] [--length 128] [--batch-size 4] [--seeds 5]
        [--perturbation 0.05] [--parts a b c]

    for b in jax tensorflow torch; do KERAS_BACKEND=$b taskset -c 1 \\
        python benchmarks/reference_parity_yctfs.py --yctfs-repo \\
        /tmp/yctfsref; done

`--yctfs-repo` is a checkout of pablomiralles22/long-transformers at
branch `lra-paper` (86c59f5, the branch of `lra_keras.presets.yctfs`),
e.g. `git -C <clone> archive lra-paper | tar -x -C /tmp/yctfsref`. Its
modules are imported from there, never copied, and built as its
`src/training/trainer.py` `TrainerModule` builds them: `ModelBuilder`
(`src/models/model_builder.py`: `ModelWithEmbedding` around a
`LayeredModel` of `GMLP` or `TransformerEncoderLayer` blocks, the latter
with `RotaryMultiheadAttention`), the task of `TaskBuilder`
(`ClassificationTask`: `ClassificationHead` + its loss), held as the
attributes `model` and `task_classification` so that the parameters have
the names `OptimizerBuilder.build` (`src/training/optimizer_builder.py`,
`WeightDecayParamFilter`) groups them by.

Settings, composed from the checkout's YAML files as hydra would:
- Transformer: `configs/model/rotary_transformer.yaml` with the model and
  optimizer of `configs/experiment/lra/listops/
  rotary_transformer_augment.yaml` over `configs/optimizer/adamw.yaml`.
- gMLP: the branch has no gMLP config (the JSON ones went in b159f18
  "Advanced hydra setup"), so the model is the `single_layer` form of the
  layer dict of the deleted `configs/listops/gmlp_w_augment.json`
  (`gmlp` with `mode: conv`, `num_channels`, `dropout`, `seq_len`), with
  Table 6's learning rate and weight decay over `configs/optimizer/
  adamw.yaml` (that JSON had weight decay 0.05, 8 layers, width 128).
- The task: `configs/task/classification.yaml` with the `task` of
  `configs/dataset/listops.yaml` (10 classes, mean reduction, no hidden
  layer); the vocabulary and padding id of `src/data_loaders/listops.py`
  (read with `ast`: importing it needs pandas and lightning).
The sizes come from the command line. It needs torch and omegaconf;
`torchmetrics`, which the reference imports only for its accuracy metric,
is replaced by a stub when it is not installed.

Ours: `get_hparams("listops", "gmlp" | "transformer", ...)` with the same
sizes, `warmup_steps=0, schedule="constant"` (the plateau schedule is not
compared), `build_classifier`, `make_optimizer`, under the backend of
`KERAS_BACKEND` (one backend per process). Helpers shared with
`benchmarks/reference_parity.py` (the S4D benchmark) are imported from it.

It prints, per model:
  a. the parameter count of every (learning rate, weight decay) group: the
     reference's from the optimizer its `OptimizerBuilder` builds, ours
     from the optimizer's `_use_weight_decay` and rate multipliers; and
     whether every reference tensor lands in the group of the variables it
     converts to.
  b. the reference's weights converted to ours (`convert_gmlp`,
     `convert_transformer`), twice: as initialised, and perturbed (every
     reference tensor + N(0, `--perturbation`^2): norms off 1 and 0, the
     gMLP kernel large against its bias, as after training). For each: the
     largest output difference relative to the largest output, in
     inference and in training mode (dropout 0), on a full-length and a
     padded batch; the loss and weights after one AdamW step on the same
     batch (the task's `CrossEntropyLoss`), with the reference's step also
     taken in float64. A kind of weight passes when every weight is within
     0.1 of a step (the rate) and at most 0.5% of them, or one, further
     than 1e-3 of one (`reference_parity.close_step`); where the
     reference's own float32 step fails that against its float64 step,
     the comparison is ill-conditioned and not gated (the YCTFS gate at
     its initial weights: LayerNorm(1 + c) with |c| ~ 1e-6). With
     `adam_epsilon_style` in our row the step is compared at the config's
     epsilon; without it also at `eps * sqrt(1 - beta_2)`.
  c. without conversion, over `--seeds` seeds: the initial loss and the
     mean and std of every block's output (gMLP: and of its gated unit's)
     on one batch, and the spread of each kind of initial weight.
Before them, the preset's values beside the reference's full-size
settings (informational; for the Transformer also the trainer's precision
and the error of the reference's rotary angles in float16). Exit status 1
when a gated check of a or b fails.
"""

import ast
import copy
import inspect
import math
import re
import sys
import types
from pathlib import Path

import keras
import numpy as np
from reference_parity import GROUP_COLUMNS
from reference_parity import TOLERANCE
from reference_parity import add_checkout
from reference_parity import benchmark_parser
from reference_parity import build_ours
from reference_parity import check_table
from reference_parity import full_and_padded
from reference_parity import group_rows
from reference_parity import hooked_outputs
from reference_parity import init_batch
from reference_parity import load_ours
from reference_parity import loss_row
from reference_parity import our_forward
from reference_parity import our_param_groups
from reference_parity import our_rates
from reference_parity import our_sizes
from reference_parity import our_step
from reference_parity import our_weights
from reference_parity import print_summary
from reference_parity import record
from reference_parity import record_outputs
from reference_parity import relative
from reference_parity import report_group_check
from reference_parity import seeds_table
from reference_parity import spread
from reference_parity import spread_table
from reference_parity import step_rows
from reference_parity import stub_missing
from reference_parity import table
from reference_parity import torch_groups
from reference_parity import verdict

from lra_keras.hparams import get_hparams
from lra_keras.training import make_optimizer

MODELS = ("gmlp", "transformer")

# === The reference ===


def import_reference(repo):
    """The reference's builders, imported from the checkout `repo`."""
    add_checkout(repo, "--yctfs-repo", "long-transformers",
                 "src/models/layers/gmlp.py")
    # Only ClassificationTask's accuracy metric uses it.
    stub_missing("torchmetrics",
                 Accuracy=lambda **kwargs: (lambda logits, labels: None))
    from src.models.layers.gmlp import GMLP
    from src.models.layers.transformer_encoder_layer import (
        TransformerEncoderLayer,
    )
    from src.models.model_builder import ModelBuilder
    from src.tasks.task_builder import TaskBuilder
    from src.training.optimizer_builder import OptimizerBuilder
    from src.utils.rotary_embedding import RotaryEmbedding

    return types.SimpleNamespace(
        ModelBuilder=ModelBuilder, TaskBuilder=TaskBuilder,
        OptimizerBuilder=OptimizerBuilder, GMLP=GMLP,
        TransformerEncoderLayer=TransformerEncoderLayer,
        RotaryEmbedding=RotaryEmbedding)


def module_constants(path):
    """The module-level `NAME = expression` values of a source file,
    evaluated in order without importing the module."""
    scope = {}
    for node in ast.parse(Path(path).read_text()).body:
        if isinstance(node, ast.Assign) and all(
                isinstance(t, ast.Name) for t in node.targets):
            try:
                value = eval(compile(ast.Expression(node.value), path,
                                     "eval"), {"__builtins__": {}}, scope)
            except Exception:  # a value that needs an import: not ours
                continue
            scope.update({t.id: value for t in node.targets})
    return scope


def reference_config(repo, model, args, hp):
    """The reference's model, task, optimizer, dataset and trainer
    settings for `model`, at full size (`args=None`) or at the command
    line's sizes."""
    from omegaconf import OmegaConf

    def load(path):
        cfg = OmegaConf.load(Path(repo, "configs", path))
        cfg.pop("defaults", None)
        return cfg

    task = OmegaConf.merge(load("task/classification.yaml"),
                           load("dataset/listops.yaml").task).classification
    dataset = load("dataset/listops.yaml").dataset
    optimizer = load("optimizer/adamw.yaml")
    trainer = load("trainer/default.yaml")
    if model == "transformer":
        experiment = load(
            "experiment/lra/listops/rotary_transformer_augment.yaml")
        base = load("experiment/lra/listops/base.yaml")
        cfg = OmegaConf.merge(load("model/rotary_transformer.yaml"),
                              experiment.model)
        optimizer = OmegaConf.merge(optimizer, experiment.optimizer)
        dataset = OmegaConf.merge(dataset, experiment.dataset)
        trainer = OmegaConf.merge(trainer, base.trainer, experiment.trainer)
        if args is not None:
            cfg.layer.params.merge_with(dict(
                d_model=args.hidden_dim, dim_feedforward=args.intermediate_dim))
            cfg.num_layers = args.num_layers
    else:
        # The layer dict of configs/listops/gmlp_w_augment.json (deleted in
        # b159f18), as one `single_layer` model; Table 6's optimizer.
        width = hp["hidden_dim"] if args is None else args.hidden_dim
        cfg = OmegaConf.create(dict(
            _name_="gmlp", type="single_layer",
            layer=dict(type="gmlp", params=dict(
                d_model=width,
                hidden_dim=(hp["intermediate_dim"] if args is None
                            else args.intermediate_dim),
                seq_len=(hp["sequence_length"] if args is None
                         else args.length),
                dropout=0.0, mode="conv",
                num_channels=hp["num_kernel_channels"])),
            num_layers=hp["num_layers"] if args is None else args.num_layers,
            input_embedding_dim=width, output_embedding_dim=width))
        optimizer.merge_with(dict(lr=hp["learning_rate"],
                                  weight_decay=hp["weight_decay"]))
    to = OmegaConf.to_container
    return types.SimpleNamespace(
        model=to(cfg, resolve=True), task=to(task), optimizer=to(optimizer),
        dataset=to(dataset), trainer=to(trainer))


def build_reference(ref, config, listops):
    """`TrainerModule.__init__`'s model and task (trainer.py lines 42-62),
    under the attribute names that `configure_optimizers` sees."""
    import torch

    model_cfg = copy.deepcopy(config.model)
    del model_cfg["_name_"]
    model = ref.ModelBuilder.build_model(
        model_cfg.pop("type"), model_cfg,
        vocab_size=listops["NUM_EMBEDDINGS"],
        padding_idx=listops["PAD_TOKEN"])
    task_cfg = copy.deepcopy(config.task)
    task_cfg["head_params"]["input_dim"] = model.get_output_embedding_dim()
    module = torch.nn.Module()
    module.model = model
    module.task_classification = ref.TaskBuilder.build_task(task_cfg)
    return module


def reference_optimizer(ref, module, config):
    return ref.OptimizerBuilder.build(module, copy.deepcopy(config.optimizer))


def reference_batch(tokens, mask, labels):
    """The batch dict of the reference's ListOps collator (float mask)."""
    import torch

    return dict(input_ids=torch.as_tensor(tokens, dtype=torch.long),
                attention_mask=torch.as_tensor(mask, dtype=torch.float32),
                labels=torch.as_tensor(labels, dtype=torch.long))


def reference_logits(module, batch):
    outputs = module.model(batch["input_ids"], batch["attention_mask"])
    return module.task_classification.head(outputs, batch["attention_mask"])


def reference_loss(module, batch):
    """`TrainerModule._step` (trainer.py lines 108-116)."""
    outputs = module.model(batch["input_ids"], batch["attention_mask"])
    return module.task_classification(batch, outputs)["loss"]


# === Ours ===


def our_hparams(model, args, **overrides):
    sizes = dict(hidden_dim=args.hidden_dim, num_layers=args.num_layers,
                 intermediate_dim=args.intermediate_dim,
                 sequence_length=args.length)
    return get_hparams("listops", model, **sizes, warmup_steps=0,
                       schedule="constant", **overrides)


# === The converters ===


class StateDict:
    """Reads a reference state dict into our variables: `put(path, value,
    *names)` records which reference tensors fill which variable, and
    `result()` raises on a tensor that fills none."""

    def __init__(self, state):
        self.state = state
        self.weights = {}
        self.paths_of = {}  # reference name -> our paths

    def __call__(self, name):
        return self.state[name].detach().cpu().numpy().astype(np.float64)

    def put(self, path, value, *names):
        self.weights[path] = value
        for name in names:
            self.paths_of.setdefault(name, []).append(path)

    def linear(self, path, name):
        """nn.Linear `name` as the Dense at `path` (kernel transposed)."""
        self.put(f"{path}/kernel", self(f"{name}.weight").T, f"{name}.weight")
        self.put(f"{path}/bias", self(f"{name}.bias"), f"{name}.bias")

    def norm(self, path, name):
        self.put(f"{path}/gamma", self(f"{name}.weight"), f"{name}.weight")
        self.put(f"{path}/beta", self(f"{name}.bias"), f"{name}.bias")

    def result(self):
        unused = sorted(set(self.state) - set(self.paths_of))
        if unused:
            raise ValueError(f"Reference tensors without a variable: {unused}")
        return self.weights, self.paths_of


def convert_common(reader):
    """`model.embedding` (nn.Embedding) and the head's Linear."""
    reader.put("token_embedding/embeddings", reader("model.embedding.weight"),
               "model.embedding.weight")
    reader.linear("logits", "task_classification.head.ff")


def convert_gmlp(state, num_layers, sequence_length):
    """The reference gMLP's state dict as our variables: ({path: array},
    {reference name: [paths]}).

    Per block i (`model.model.layers.i`, `GMLP`, src/models/layers/gmlp.py):
    - `norm_1` (LayerNorm before the block, gmlp.py:181): our residual
      block's `gmlp_norm_i`.
    - `ff_z1.0`, `ff_z2.0` (two Linear(D, H), each then GELU): our
      `input_dense` (D -> 2H, then GELU; its first H outputs are Z1), the
      kernels side by side.
    - `spatial_layer.kernel` (C, 2S + 1), S = seq_len: tap m is lag m - S
      (gmlp.py:44, 52). Our `spatial_kernel` (C, S) holds lags 0..S-1 (taps
      S..2S-1), `spatial_backward_kernel` (C, S-1) lags -1..-(S-1) (taps
      S-1 down to 1); taps 0 and 2S (lags -S and S) reach no position of a
      sequence of S tokens and have no variable.
    - `spatial_layer.bias` (C,): `spatial_bias`; `norm_2` (LayerNorm after
      the convolution, gmlp.py:190): `gate_norm`; `proj_out.0`:
      `output_dense`.
    """
    reader = StateDict(state)
    convert_common(reader)
    S = sequence_length
    for i in range(num_layers):
        block, mixer = f"model.model.layers.{i}", f"gmlp_mixer_{i}"
        reader.norm(f"gmlp_norm_{i}", f"{block}.norm_1")
        z1, z2 = f"{block}.ff_z1.0", f"{block}.ff_z2.0"
        names = [f"{z}.{n}" for z in (z1, z2) for n in ("weight", "bias")]
        reader.put(f"{mixer}/input_dense/kernel", np.concatenate(
            [reader(f"{z1}.weight").T, reader(f"{z2}.weight").T], axis=1),
            *names[0::2])
        reader.put(f"{mixer}/input_dense/bias", np.concatenate(
            [reader(f"{z1}.bias"), reader(f"{z2}.bias")]), *names[1::2])
        name = f"{block}.spatial_layer.kernel"
        kernel = reader(name)  # (C, 2S + 1)
        if kernel.shape[1] != 2 * S + 1:
            raise ValueError(f"{name}: {kernel.shape[1]} taps, not 2 * "
                             f"{S} + 1")
        reader.put(f"{mixer}/spatial_kernel", kernel[:, S:2 * S], name)
        reader.put(f"{mixer}/spatial_backward_kernel",
                   kernel[:, S - 1:0:-1], name)
        name = f"{block}.spatial_layer.bias"
        reader.put(f"{mixer}/spatial_bias", reader(name), name)
        reader.norm(f"{mixer}/gate_norm", f"{block}.norm_2")
        reader.linear(f"{mixer}/output_dense", f"{block}.proj_out.0")
    return reader.result()


def convert_transformer(state, num_layers, num_heads):
    """The reference Transformer's state dict as our variables.

    Per block i (`model.model.layers.i`, `TransformerEncoderLayer`,
    src/models/layers/transformer_encoder_layer.py, norm_first):
    `layer_norm_1` -> `attention_norm`, `layer_norm_2` -> `ffn_norm`,
    `ff.0` -> `ffn_inner`, `ff.2` -> `ffn_outer`; `mh_attention.W_Q`,
    `W_K`, `W_V` (Linear(D, D), output channel h * D/heads + k is head h's
    k-th: `AttentionHeadHandler.separate_heads`) -> `query`, `key`,
    `value` kernels (D, heads, D/heads); `W_O` -> `attention_output`
    (heads, D/heads, D).
    """
    reader = StateDict(state)
    convert_common(reader)
    for i in range(num_layers):
        block, ours = f"model.model.layers.{i}", f"transformer_block_{i}"
        reader.norm(f"{ours}/attention_norm", f"{block}.layer_norm_1")
        reader.norm(f"{ours}/ffn_norm", f"{block}.layer_norm_2")
        reader.linear(f"{ours}/ffn_inner", f"{block}.ff.0")
        reader.linear(f"{ours}/ffn_outer", f"{block}.ff.2")
        for theirs, path in (("W_Q", "query"), ("W_K", "key"),
                             ("W_V", "value"), ("W_O", "attention_output")):
            name = f"{block}.mh_attention.{theirs}"
            weight, bias = reader(f"{name}.weight"), reader(f"{name}.bias")
            width = weight.shape[1]
            if theirs == "W_O":
                kernel = weight.T.reshape(num_heads, -1, weight.shape[0])
            else:
                kernel, bias = (weight.T.reshape(width, num_heads, -1),
                                bias.reshape(num_heads, -1))
            reader.put(f"{ours}/attention/{path}/kernel", kernel,
                       f"{name}.weight")
            reader.put(f"{ours}/attention/{path}/bias", bias, f"{name}.bias")
    return reader.result()


def convert(model, state, args, hp):
    if model == "gmlp":
        return convert_gmlp(state, args.num_layers, args.length)
    return convert_transformer(state, args.num_layers, hp["num_heads"])


# === Settings ===


def rotary_angle_errors(ref, length, width, heads, freq):
    """The largest error (radians) of the rotary angles at `length`:
    (ours, the reference's in float16). Both are read by rotating (1, 0)
    in every pair. The reference builds its rotation matrix in the
    input's dtype (rotary_embedding.py lines 18-20, 36-47), float16 under
    the trainer's "16-mixed"; it caches the matrix by (L, D, freq) alone
    (lines 33-34, 58-59), so one dtype per process is measured here."""
    import torch

    from lra_keras.layers.rotary_attention import apply_rotary_across_heads

    pairs = np.zeros((1, length, width // 2, 2), "float32")
    pairs[..., 0] = 1
    ours = keras.ops.convert_to_numpy(apply_rotary_across_heads(
        pairs.reshape(1, length, heads, width // heads), freq))
    theirs = ref.RotaryEmbedding.apply(
        torch.as_tensor(pairs.reshape(1, length, width), dtype=torch.float16),
        freq=freq).double().numpy()
    exact = np.arange(length)[:, None] * np.exp(
        -2 * math.log(freq) * np.arange(width // 2) / width)[None]
    errors = []
    for out in (ours, theirs):
        out = out.reshape(length, width // 2, 2).astype(np.float64)
        angles = np.arctan2(out[..., 1], out[..., 0])  # (L, D/2)
        errors.append(float(np.abs(np.angle(np.exp(1j * (angles - exact))))
                            .max()))
    return errors


def print_settings(model, ref, repo, listops):
    """The full-size preset beside the reference's settings."""
    import torch

    hp = get_hparams("listops", model)
    config = reference_config(repo, model, None, hp)
    optimizer = config.optimizer
    torch_eps = inspect.signature(torch.optim.AdamW).parameters["eps"].default
    rows = [
        ("vocabulary_size", hp["vocabulary_size"],
         listops["NUM_EMBEDDINGS"], "src/data_loaders/listops.py"),
        ("padding_id", hp["padding_id"], listops["PAD_TOKEN"],
         "src/data_loaders/listops.py"),
        ("num_classes", hp["num_classes"], config.task["num_classes"],
         "configs/dataset/listops.yaml"),
        ("pooling", hp["pooling"],
         config.task["head_params"]["reduction_method"],
         "configs/dataset/listops.yaml"),
        ("learning_rate", hp["learning_rate"], optimizer["lr"], "optimizer"),
        ("weight_decay", hp["weight_decay"], optimizer["weight_decay"],
         "optimizer"),
        ("adam_beta_1, adam_beta_2", (hp["adam_beta_1"], hp["adam_beta_2"]),
         tuple(optimizer["betas"]), "configs/optimizer/adamw.yaml"),
        ("adam_epsilon", hp["adam_epsilon"], optimizer.get("eps", torch_eps),
         "torch.optim.AdamW default"),
    ]
    params = config.model["layer"]["params"]
    if model == "transformer":
        layer = inspect.signature(ref.TransformerEncoderLayer).parameters
        attention = params["attention_params"]
        where = "rotary_transformer_augment.yaml"
        rows += [
            ("hidden_dim", hp["hidden_dim"], params["d_model"], where),
            ("num_heads", hp["num_heads"], params["nhead"], where),
            ("intermediate_dim", hp["intermediate_dim"],
             params["dim_feedforward"], where),
            ("num_layers", hp["num_layers"], config.model["num_layers"],
             where),
            ("dropout", hp["dropout"], params["dropout"], where),
            ("max_wavelength", hp["max_wavelength"], attention["freq"],
             where),
            ("rotary_disable_half", hp["rotary_disable_half"],
             attention["disable_half"], where),
            ("activation", hp["activation"],
             layer["activation_fn"].default,
             "TransformerEncoderLayer default"),
            ("prenorm", True, layer["norm_first"].default,
             "TransformerEncoderLayer default"),
            ("sequence_length", hp["sequence_length"],
             config.dataset["max_len"], "configs/dataset/listops.yaml"),
            ("batch_size", hp["batch_size"], config.dataset["batch_size"]
             * config.trainer["accumulate_grad_batches"],
             f"{where} (batch x accumulation)"),
            ("epochs", hp["epochs"], config.trainer["max_epochs"],
             "configs/experiment/lra/listops/base.yaml"),
            ("precision", keras.config.dtype_policy().name,
             config.trainer["precision"], "configs/trainer/default.yaml"),
        ]
        # Under "16-mixed" the projections, hence the reference's rotation
        # matrix, are float16; ours computes the angles in float32.
        errors = rotary_angle_errors(ref, hp["sequence_length"],
                                     hp["hidden_dim"], hp["num_heads"],
                                     hp["max_wavelength"])
        rows.append(("largest rotary angle error at full length (rad)",
                     f"{errors[0]:.1e} (float32)",
                     f"{errors[1]:.2f} (float16 matrix)",
                     "rotary_embedding.py:36-47 (X.dtype)"))
    else:
        layer = inspect.signature(ref.GMLP).parameters
        rows += [
            ("activation", hp["activation"], (
                layer["activation"].default, layer["selection"].default),
             "GMLP defaults (activation, selection)"),
            ("num_kernel_channels", hp["num_kernel_channels"],
             params["num_channels"], "gmlp_w_augment.json (b159f18^)"),
            ("kernel_size", hp["kernel_size"], layer["kernel_size"].default,
             "GMLP default: 2 * seq_len + 1 taps"),
            ("causal", hp["causal"], layer["direction"].default,
             "GMLP default"),
        ]
    print(f"\n## Settings: {model}, the preset at full size beside the "
          "reference\n")
    print("| key | ours | reference | where |")
    print("|---|---|---|---|")
    for key, ours, theirs, where in rows:
        print(f"| {key} | {ours} | {theirs} | {where} |")


# === a. parameter groups ===


def part_a(model, args, ref, config, listops):
    import torch

    torch.manual_seed(0)
    module = build_reference(ref, config, listops)
    ref_group_of, ref_sizes = torch_groups(
        module, reference_optimizer(ref, module, config).param_groups)
    hp = our_hparams(model, args)
    ours_model = build_ours(hp)
    ours = our_param_groups(ours_model, make_optimizer(hp, 1),
                            float(hp["learning_rate"]))
    print(f"\n## a. Parameter groups (learning rate, weight decay): {model}\n")
    table(GROUP_COLUMNS, group_rows("reference", ref_group_of, ref_sizes)
          + group_rows("ours", ours, our_sizes(ours_model)))
    _, paths_of = convert(model, module.state_dict(), args, hp)
    mismatched = [f"{name} {key} -> {path} {ours[path]}"
                  for name, key in ref_group_of.items()
                  for path in paths_of[name] if ours[path] != key]
    passed = report_group_check(mismatched, len(ref_group_of))
    if model == "gmlp":
        print("(The reference's kernels hold 2 taps per channel more: taps 0 "
              "and 2S, lags -S and S, reach no position of S tokens and have"
              " no variable here.)")
    return passed


# === b. converted weights: forward and one step ===


def block_kind(path):
    """A kind of weight: its path without the block index."""
    return re.sub(r"_\d+/", "/", path)


def reference_step(ref, module, config, batch, dtype):
    """One step of the reference optimizer on a copy of `module` in
    `dtype`: (loss, state dict after)."""
    import torch

    module = copy.deepcopy(module).to(dtype)
    module.train()
    batch = dict(batch, attention_mask=batch["attention_mask"].to(dtype))
    optimizer = reference_optimizer(ref, module, config)
    loss = reference_loss(module, batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        return float(loss), module.state_dict()


def perturb(module, scale, seed):
    """Every reference tensor plus N(0, scale^2): weights off their
    initial values (norms not 1 and 0, biases not 1, the gMLP kernel
    large against its bias), as after training."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(scale * torch.randn(p.shape, generator=generator))


def part_b(model, args, ref, config, listops):
    import torch

    hp = our_hparams(model, args)
    batches = full_and_padded(hp, args)
    ours = build_ours(hp)
    rates = our_rates(hp)
    eps = float(hp["adam_epsilon"])
    epsilons = [("config eps", eps)]
    if "adam_epsilon_style" not in hp:
        # Keras's placement of epsilon: the config's shows the convention
        # (informational), this one matches PyTorch's first step.
        epsilons = [("config eps, informational", eps),
                    ("eps * sqrt(1 - beta_2)",
                     eps * math.sqrt(1.0 - float(hp["adam_beta_2"])))]
    rows, verdicts = [], {}
    for weights_name in ("initial", "perturbed"):
        torch.manual_seed(0)
        module = build_reference(ref, config, listops)
        if weights_name == "perturbed":
            perturb(module, args.perturbation, seed=1)
        state = copy.deepcopy(module.state_dict())
        weights, _ = convert(model, state, args, hp)
        load_ours(ours, weights)
        forward_ok = True
        for batch_name, (tokens, mask, _, labels) in batches.items():
            batch = reference_batch(tokens, mask, labels)
            for training in (False, True):
                module.train(training)
                with torch.no_grad():
                    expected = reference_logits(module, batch).numpy()
                value = relative(our_forward(ours, tokens, mask, training),
                                 expected)
                forward_ok &= value <= TOLERANCE
                mode = "training" if training else "inference"
                rows.append((f"{weights_name}: forward, {mode}, {batch_name}"
                             " batch", f"{value:.1e}", verdict(value)))
        verdicts[f"{weights_name} weights: forward"] = forward_ok
        # One AdamW step on the full batch.
        tokens, mask, _, labels = batches["full"]
        batch = reference_batch(tokens, mask, labels)
        ref_loss, after = reference_step(ref, module, config, batch,
                                         torch.float32)
        _, after64 = reference_step(ref, module, config, batch,
                                    torch.float64)
        after = convert(model, after, args, hp)[0]
        after64 = convert(model, after64, args, hp)[0]
        for label, epsilon in epsilons:
            load_ours(ours, weights)
            step_hp = our_hparams(model, args, adam_epsilon=epsilon)
            loss = our_step(ours, make_optimizer(step_hp, 1), tokens, mask,
                            labels)
            label = f"{weights_name}, {label}"
            row, loss_ok = loss_row(f"step ({label})", loss, ref_loss)
            # Per kind of weight: its difference in units of the step
            # (lr); where the reference's float32 step is off its float64
            # step, ill-conditioned and not gated (the perturbed weights
            # check it).
            more, passed = step_rows(f"step ({label})", rates, weights,
                                     after, our_weights(ours),
                                     kind=block_kind, after64=after64)
            rows += [row] + more
            verdicts[f"one step, {label}"] = passed and loss_ok
    style = hp.get("adam_epsilon_style", "(no adam_epsilon_style key)")
    print(f"\n## b. Converted weights: {model} ({keras.backend.backend()}; "
          f"ours adam_epsilon_style={style!r}; perturbed: + N(0, "
          f"{args.perturbation:g}^2) on every reference tensor)\n")
    check_table(rows)
    return verdicts


# === c. initialisation, without conversion ===


def reference_probe(model, module, batch):
    """Logits and, by forward hooks, every block's output (and the gMLP's
    gated unit's, `proj_out`, before the residual)."""
    modules = {}
    for i, block in enumerate(module.model.model.layers):
        modules[f"block {i}"] = block
        if model == "gmlp":
            modules[f"unit {i}"] = block.proj_out
    module.eval()
    logits, captured = hooked_outputs(
        modules, lambda: reference_logits(module, batch))
    return logits.numpy(), captured


def our_probe(model, ours, num_layers, tokens, mask):
    encoder = ours.get_layer("encoder")
    outputs = {}
    for i in range(num_layers):
        if model == "transformer":
            outputs[f"block {i}"] = encoder.get_layer(
                f"transformer_block_{i}").output
            continue
        # The residual sum is no layer: read it where the next block's
        # norm (or the encoder's end) takes it.
        outputs[f"block {i}"] = (
            encoder.get_layer(f"gmlp_norm_{i + 1}").input
            if i + 1 < num_layers else encoder.output)
        outputs[f"unit {i}"] = encoder.get_layer(f"gmlp_mixer_{i}").output
    probe = keras.Model(encoder.input, outputs)
    captured = probe({"token_ids": tokens, "padding_mask": mask})
    captured = {k: keras.ops.convert_to_numpy(v) for k, v in captured.items()}
    return our_forward(ours, tokens, mask, False), captured


def part_c(model, args, ref, config, listops):
    import torch

    hp = our_hparams(model, args)
    tokens, mask, _, labels = init_batch(hp, args)
    batch = reference_batch(tokens, mask, labels)
    stats, spreads = {}, {}
    for seed in range(args.seeds):
        torch.manual_seed(seed)
        module = build_reference(ref, config, listops)
        keras.utils.set_random_seed(seed)
        ours = build_ours(hp)
        converted, _ = convert(model, module.state_dict(), args, hp)
        mine = our_weights(ours)
        for path, theirs in converted.items():
            record(spreads, block_kind(path), "ref", spread(theirs))
            record(spreads, block_kind(path), "ours", spread(mine[path]))
        sides = dict(zip(("ref", "ours"), (
            reference_probe(model, module, batch),
            our_probe(model, ours, args.num_layers, tokens, mask))))
        for side, (logits, captured) in sides.items():
            record_outputs(stats, side, "initial loss", logits, labels,
                           captured)
    print(f"\n## c. Initialisation: {model}, {args.seeds} seeds, no "
          f"conversion ({keras.backend.backend()})\n")
    seeds_table(stats, "quantity (mean ± sd over seeds)")
    print(f"\nloss of uniform logits: ln {hp['num_classes']} = "
          f"{math.log(hp['num_classes']):.3f}\n")
    spread_table(spreads, "initial weights")


def main():
    parser = benchmark_parser(
        __doc__, "--yctfs-repo", "checkout of long-transformers at "
        "lra-paper", length=128)
    parser.add_argument("--models", nargs="+", default=list(MODELS),
                        choices=MODELS)
    parser.add_argument("--intermediate-dim", type=int, default=64)
    parser.add_argument("--perturbation", type=float, default=0.05,
                        help="std of the noise on the perturbed weights")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    ref = import_reference(args.yctfs_repo)
    repo = Path(args.yctfs_repo).resolve()
    listops = module_constants(repo / "src/data_loaders/listops.py")
    print(f"backend {keras.backend.backend()}; reference {repo}; batch "
          f"{args.batch_size} x {args.length}, width {args.hidden_dim}, "
          f"{args.num_layers} blocks, intermediate {args.intermediate_dim}")
    summary = {}
    for model in args.models:
        config = reference_config(repo, model, args,
                                  get_hparams("listops", model))
        print(f"\n# {model}: reference model {config.model}; optimizer "
              f"{config.optimizer}; task {config.task}")
        print_settings(model, ref, repo, listops)
        if "a" in args.parts:
            summary[f"{model}: a. parameter groups"] = part_a(
                model, args, ref, config, listops)
        if "b" in args.parts:
            for check, passed in part_b(model, args, ref, config,
                                        listops).items():
                summary[f"{model}: b. {check}"] = passed
        if "c" in args.parts:
            part_c(model, args, ref, config, listops)
    return print_summary({check: (passed, "informational" not in check)
                          for check, passed in summary.items()})


if __name__ == "__main__":
    sys.exit(main())
