"""Our models and the authors' trained side by side: learning curves.

    python benchmarks/reference_curves.py --s4-repo /tmp/s4ref \
        --out runs/reference_curves [--seeds 0 1 2] [--side ours reference]
        [--eval-every 50] [--preset quick] [--set KEY=VALUE ...]
    python benchmarks/reference_curves.py --family mega \
        --mega-repo /tmp/megaref --out runs/reference_curves_mega ...
    python benchmarks/reference_curves.py --out runs/reference_curves \
        --plot docs/results/reference_curves/listops_s4d_quick.png

Item 3d of the side-by-side check (`benchmarks/reference_parity.py` and
`reference_parity_mega.py` do a-c): both models, built from the same
preset (`get_hparams("listops", FAMILY, preset=...)`; for S4D by default
the README's first command), train on the same generated ListOps rows,
in the same length-bucketed batches in the same order
(`lra_keras.training.inputs`, the run's own batching, seeded per seed),
for the same number of steps with the same learning rate at every step
(our schedule's values applied to every PyTorch parameter group, scaled
by the group's own rate). Every `--eval-every` steps both are evaluated
on the same validation rows; at the end on the test rows. Each (side,
seed) writes `<out>/<side>_seed<seed>.json` (the curve, the test
accuracy, the wall time, the backend), so the sides can run in separate
processes (one core each) and a finished curve is not run again.

`--family s4d`: the reference is state-spaces/s4 at d27bdf9 imported
from `--s4-repo` (see `reference_parity.py`): its `s4-lra-listops.yaml`
composition with the preset's sizes, and where the preset departs from
the paper row, the same departure on both sides: the decoder's `mode` is
the preset's pooling ("first" or "pool"), the block's `prenorm` and
`dropout` the preset's, the kernel's `lr` {dt, A, B} the preset's
`ssm_learning_rate` (None: the global rate; `lr: {dt: null}` stays where
`dt_learning_rate="global"`), the optimizer's `lr` and `weight_decay`
the preset's. The parameter groups are checked equal (part a of
`reference_parity.py`) before training.

`--family mega`: the reference is facebookresearch/mega's fairseq
`LRAModel` imported from `--mega-repo` as `reference_parity_mega.py`
imports it: the README's ListOps command (`examples/mega/README.lra.md`
lines 27-42) with `mega_lra_listop`, at the preset's sizes, dropouts,
EMA truncation, classifier width and pooling (`--sen-rep-type cls`, the
first position, for the preset's "first"); fairseq's `Adam` with the
preset's rate, betas, epsilon, weight decay and clip; its trainer's step
(summed cross-entropy, `multiply_grads(1 / rows)`, `clip_grad_norm`,
`step`; trainer.py:529-548) at our schedule's rate. The settings that
still differ from the preset are printed before training (the logits'
bias: fairseq's has none, model.py:62-66).

What stays different: the initial weights (each side draws its own; the
dense layers' distributions differ, see `reference_parity.py` part c),
the order of floating-point operations, and BatchNorm over padded
positions (the reference's statistics count them, ours only real
tokens).

`--plot` reads the JSON files of `--out` and draws validation accuracy
and loss against the step, one thin line per seed, the mean in bold, ours
and the reference in two colours, with the final test accuracies (mean ±
95% interval over seeds, Student's t) in the legend.
"""

import argparse
import ast
import copy
import json
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[0]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import reference_parity_mega as mega_parity  # noqa: E402
from reference_parity import build_ours  # noqa: E402
from reference_parity import build_reference  # noqa: E402
from reference_parity import import_reference  # noqa: E402
from reference_parity import part_a  # noqa: E402
from reference_parity import reference_config  # noqa: E402
from reference_parity import reference_forward  # noqa: E402
from reference_parity import reference_optimizer  # noqa: E402

from lra_keras.hparams import get_hparams  # noqa: E402
from lra_keras.report import mean_ci  # noqa: E402
from lra_keras.training import make_optimizer  # noqa: E402
from lra_keras.training.inputs import load_splits  # noqa: E402
from lra_keras.training.inputs import make_batches  # noqa: E402
from lra_keras.training.optimization import make_schedule  # noqa: E402

POOLING_MODES = {"first": "first", "mean": "pool"}
FAMILIES = {"s4d": "S4D", "mega": "MEGA"}
REFERENCES = {"s4d": "state-spaces/s4", "mega": "facebookresearch/mega"}


def preset_config(repo, hp):
    """reference_parity's composition of s4-lra-listops.yaml, moved to the
    preset wherever the preset departs from the paper row."""
    model, decoder, optimizer = reference_config(repo, SimpleNamespace(
        hidden_dim=hp["hidden_dim"], num_layers=hp["num_layers"],
        state_dim=hp["state_dim"]))
    if hp["pooling"] not in POOLING_MODES:
        sys.exit(f"pooling {hp['pooling']!r}: the reference's decoder has "
                 f"no such mode (one of {list(POOLING_MODES)})")
    if hp["norm"] != model["norm"] or not hp["tie_dropout"]:
        sys.exit(f"norm {hp['norm']!r}, tie_dropout {hp['tie_dropout']}: "
                 "only the S4 config's BatchNorm and tied dropout are set "
                 "on the reference here")
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


# === one side, one seed ===


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
    peak = float(hp["learning_rate"])
    return np.array([
        float(keras.ops.convert_to_numpy(schedule(s))) / peak
        if callable(schedule) else 1.0
        for s in range(total_steps)])


class Reference:
    """state-spaces/s4: the reference's model and parameter groups; every
    group's rate is its own rate times our schedule's value / the peak
    rate."""

    def __init__(self, modules, config, hp, total_steps, seed):
        import torch

        torch.manual_seed(seed)
        self.torch = torch
        self.model = build_reference(modules, config, hp["vocabulary_size"],
                                     hp["num_classes"])
        self.optimizer = reference_optimizer(self.model, config[2])
        self.base_rates = [g["lr"] for g in self.optimizer.param_groups]
        self.factors = schedule_factors(hp, total_steps)

    def train_step(self, inputs, labels, step):
        torch = self.torch
        for group, rate in zip(self.optimizer.param_groups, self.base_rates):
            group["lr"] = rate * self.factors[step]
        self.model.train()
        logits = reference_forward(self.model, inputs["token_ids"],
                                   inputs["padding_mask"].sum(-1))
        loss = torch.nn.functional.cross_entropy(
            logits, torch.as_tensor(labels, dtype=torch.long))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return float(loss.detach())

    def logits(self, inputs):
        self.model.eval()
        with self.torch.no_grad():
            return reference_forward(self.model, inputs["token_ids"],
                                     inputs["padding_mask"].sum(-1)).numpy()


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
    if hp["pooling"] not in POOLING_MODES:
        sys.exit(f"pooling {hp['pooling']!r}: the reference has no such "
                 f"sentence representation (one of {list(POOLING_MODES)})")
    vars(model_args).update(
        encoder_ffn_embed_dim=hp["ffn_intermediate_dim"],
        classifier_out_dim=hp["head_hidden_dim"],
        sen_rep_type={"first": "cls", "mean": "mp"}[hp["pooling"]],
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
    differ = [(what, theirs, ours, note or "")
              for what, theirs, ours, same, note in rows
              if not same and what not in ours_drive
              # fairseq's "cls" is the first position (mega_lra_encoder.py
              # :238-241), as ours
              and (what, theirs, ours) != (
                  "sentence representation", "cls", "first")]
    return model_args, optimizer_args, differ


class MegaReference:
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
            self.model, inputs["token_ids"], inputs["padding_mask"].sum(-1))}
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
                self.model, inputs["token_ids"],
                inputs["padding_mask"].sum(-1)).numpy()


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


def run_one(side_name, seed, hp, splits, args, modules, config):
    train = make_batches(*splits["train"], hp, shuffle=True, seed=seed)
    val = make_batches(*splits["val"], hp)
    test = make_batches(*splits["test"], hp)
    total = len(train) * int(hp["epochs"])
    reference = MegaReference if hp["model"] == "mega" else Reference
    side = (Ours(hp, total, seed) if side_name == "ours"
            else reference(modules, config, hp, total, seed))
    curve, window, step = [], [], 0
    start = time.perf_counter()
    for epoch in range(int(hp["epochs"])):
        train.set_epoch(epoch)
        for index in range(len(train)):
            inputs, labels = train[index]
            window.append(side.train_step(inputs, labels, step))
            step += 1
            if step % args.eval_every == 0 or step == total:
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
    _, test_accuracy = evaluate(side, test)
    return dict(side=side_name, seed=seed, curve=curve,
                test_accuracy=test_accuracy,
                wall_seconds=time.perf_counter() - start,
                backend=(keras.backend.backend() if side_name == "ours"
                         else "torch"),
                steps=total, preset=hp["preset"], family=hp["model"])


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
    figure, axes = plt.subplots(1, 2, figsize=(11, 4))
    colours = {"ours": "tab:blue", "reference": "tab:orange"}
    for side in ("ours", "reference"):
        mine = [r for r in runs if r["side"] == side]
        if not mine:
            continue
        accuracies = [r["test_accuracy"] for r in mine]
        mean, half = mean_ci(accuracies)
        backend = mine[0]["backend"].replace(" (reference)", "")
        label = (f"{side} ({backend}): test "
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
    family = runs[0].get("family", "s4d")
    figure.suptitle(f"ListOps {FAMILIES[family]}, preset "
                    f"{runs[0]['preset']}: lra_keras vs "
                    f"{REFERENCES[family]} (same data, batches, schedule)")
    figure.tight_layout()
    Path(png).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(png, dpi=110)
    print(f"wrote {png}")
    for side in ("ours", "reference"):
        mine = [r for r in runs if r["side"] == side]
        if mine:
            mean, half = mean_ci(
                [r["test_accuracy"] for r in mine])
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
    parser.add_argument("--s4-repo",
                        help="checkout of state-spaces/s4 at d27bdf9 "
                        "(--family s4d)")
    parser.add_argument("--mega-repo",
                        help="checkout of facebookresearch/mega "
                        "(--family mega)")
    parser.add_argument("--out", required=True,
                        help="directory of the <side>_seed<seed>.json files")
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--side", nargs="+", default=["ours", "reference"],
                        choices=["ours", "reference"])
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                        help="preset overrides (Python literals), e.g. "
                        "train_samples=2000")
    parser.add_argument("--plot", help="write the PNG here and stop")
    args = parser.parse_args()
    if args.plot:
        return plot(args.out, args.plot)
    repo_flag = "--s4-repo" if args.family == "s4d" else "--mega-repo"
    repo = args.s4_repo if args.family == "s4d" else args.mega_repo
    if not repo:
        parser.error(f"{repo_flag} is required unless --plot is given")
    import torch

    torch.set_num_threads(1)
    overrides = {}
    for item in args.set:
        key, _, value = item.partition("=")
        overrides[key] = ast.literal_eval(value)
    hp = get_hparams("listops", args.family, preset=args.preset, **overrides)
    if args.family == "mega":
        modules = mega_parity.import_reference(repo)
        config = mega_reference_args(modules, hp, repo)
        print(f"backend {keras.backend.backend()}; preset {args.preset}: "
              f"width {hp['hidden_dim']}, {hp['num_layers']} blocks, lr "
              f"{hp['learning_rate']}, {hp['epochs']} epochs of "
              f"{hp['train_samples']} rows; settings the reference still "
              f"has otherwise: {config[2] or 'none'}")
        unknown = [row for row in config[2] if not row[3]]
        if unknown:
            sys.exit(f"settings differ: {unknown}; not training")
        # The relative position biases hold 2 x max positions - 1 lags,
        # fairseq's 2 more each side (length + 2, never read): counted
        # apart.
        ours_model = build_ours(hp)
        ours_count = sum(int(np.prod(v.shape)) for v in ours_model.weights
                         if "rel_pos_bias" not in v.path)
        theirs_count = sum(
            t.numel() for name, t in mega_parity.build_reference(
                modules, config[0], hp).named_parameters()
            if "rel_pos_bias" not in name)
        print(f"parameters besides the relative position biases: ours "
              f"{ours_count} ({hp['num_classes']} of them the logits' "
              f"bias), the reference {theirs_count}")
        if ours_count - hp["num_classes"] != theirs_count:
            sys.exit("the parameter counts differ; not training")
    else:
        modules = import_reference(repo)
        config = preset_config(repo, hp)
        print(f"backend {keras.backend.backend()}; preset {args.preset}: "
              f"width {hp['hidden_dim']}, {hp['num_layers']} blocks, state "
              f"{hp['state_dim']}, pooling {hp['pooling']}, lr "
              f"{hp['learning_rate']}, {hp['epochs']} epochs of "
              f"{hp['train_samples']} rows; reference {config}")
        if not part_a(None, modules, config, hp):
            sys.exit("the parameter groups differ; not training")
    splits = load_splits("listops", hp)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for seed in args.seeds:
        for side in args.side:
            path = out / f"{side}_seed{seed}.json"
            if path.exists():
                print(f"{path} exists; skipped")
                continue
            result = run_one(side, seed, hp, splits, args, modules, config)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(result, indent=1))
            tmp.replace(path)
            print(f"{side} seed {seed}: test accuracy "
                  f"{result['test_accuracy']:.4f} in "
                  f"{result['wall_seconds'] / 60:.1f} min", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
