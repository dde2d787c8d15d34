"""Resolution of one run's hyperparameters, each with where it came from.

`get_hparams(task, model, preset, technique, augment, **overrides)` merges,
in order:

1. `COMMON_KEYS` (data and optimisation defaults), the keys every
   technique and augmentation owns (`lra_keras.techniques`), and the
   family's architecture defaults (`lra_keras.models.families`);
2. the task's spec (`lra_keras.tasks`: vocabulary, length, classes, ids);
3. the paper row `presets.PAPER[(task, model)]`;
4. with a technique (or with `augment`, since YCTFS's published rows are
   its runs with its techniques), `presets.TECHNIQUE[(task, model,
   technique)]`; with `augment`, `presets.AUGMENT[(task, model)]`;
5. with `preset="quick"` or `"small"`, that scaled preset
   (`presets.quick`, `presets.small`);
6. the user's overrides (unknown keys are an error);

then every value is checked against its key's type and range
(`lra_keras.schema`), the techniques check their keys, the chosen technique
and augmentation derive theirs (e.g. compute-tied SPT sets `epochs`), and
the derived row is checked again: a bad value is an error naming the key
before any data is loaded.
`resolve` returns the same row and, for every key, the layer that set it;
`python -m lra_keras.hparams TASK MODEL [--preset P] [--technique T]
[--augment] [--set KEY=VALUE ...]` prints them:

    python -m lra_keras.hparams pathfinder s4
    python -m lra_keras.hparams --tables      # the papers' numbers

This module imports no Keras backend.
"""

import argparse
import copy
import sys

from lra_keras import presets
from lra_keras import schema
from lra_keras import techniques
from lra_keras.models.families import FAMILIES
from lra_keras.presets import PRESETS
from lra_keras.tasks import TASKS
from lra_keras.tasks import get_task

# Keys every row carries besides the family's, the task's and the
# techniques'. `lra_keras.training.run` reads the optimisation and data
# keys.
COMMON_KEYS = dict(
    # data
    sequence_length=None,
    train_samples=None,  # None: the whole training split
    val_samples=None,  # None: the whole validation split
    test_samples=None,  # None: the whole test split (quick runs keep less)
    # Pathfinder family: images generated/read per difficulty; None: the
    # official size.
    num_samples=None,
    difficulty=None,  # Pathfinder family: "hard" = contour length 14
    # ListOps generator (generated data only): trees strictly longer than
    # min_length tokens and shorter than sequence_length, at most max_depth
    # deep; None: LRA's 500 and 10 (lra_keras.data.listops.generate).
    min_length=None,
    max_depth=None,
    towers=1,  # sequences per example (2: retrieval's two documents)
    # True: every sequence keeps at most sequence_length - 1 tokens and
    # ends with an end token of its own (`Task.end_id`; one more embedding
    # row), as the S4 code's text loaders append `<eos>`
    # (`lra_keras.training.inputs.append_end_token`)
    append_eos=False,
    # None: sequence_length. Every sequence is right-padded to this many
    # positions once loaded (>= sequence_length; the text tasks), the
    # length of the full-length batches and of the model's inputs: the
    # S5 code pads ListOps to the S4 loader's `l_max` 2048 while LRA's
    # trees stay under 2000 tokens (`presets.s5`). The ListOps generator
    # and the loaders still cut at sequence_length.
    padded_length=None,
    # Batches are trimmed to their longest row, rounded up to a multiple of
    # bucket_step (lra_keras.batching); None feeds full-length batches.
    bucket_step=256,
    # optimisation
    batch_size=32,
    epochs=1,
    # None: `epochs` whole epochs; a count: that many training steps over
    # as many epochs as they need, the last cut short (LRA's trainers count
    # steps; `callbacks.StopAtStep`); `epochs` then sizes only a
    # self-pretraining phase without `pretrain_epochs`
    train_steps=None,
    # None: no budget; minutes: training stops at the first batch past
    # them (with that epoch's validation), then the run finishes as usual
    # (`callbacks.StopAfterTime`; a run started again gets the whole limit
    # again, unless the limit had stopped its training: then it is tested)
    time_limit_minutes=None,
    # None: the model starts from its initialisation. A finished run's
    # directory (its model.keras) or a .keras file: the classifier starts
    # from those weights, which must be of the same architecture (fine-
    # tuning; a curriculum, e.g. easy Pathfinder first, then hard).
    # `{seed}` in it is replaced by the run's seed, so that `--seeds` can
    # start each seed from its own run (`saving.load_initial_weights`)
    init_from=None,
    # None: no curriculum. Epochs (Pathfinder tasks): before training on
    # `difficulty`, the run trains that many epochs on the images of
    # `curriculum_difficulty` (its own warmup and schedule, validated and
    # tested on them), in `<out_dir>/curriculum/`, and starts from that
    # stage's best weights: the two-command curriculum of `init_from` in
    # one resumable run (`training.run`)
    curriculum_epochs=None,
    curriculum_difficulty="easy",
    # None: Keras's "auto" (XLA under JAX; eager under PyTorch, and under
    # TensorFlow on a CPU); True compiles the train, test and predict steps
    # (`torch.compile` under PyTorch, where a GPU step is otherwise bound
    # by dispatching one op at a time; XLA under TensorFlow); False runs
    # them eagerly. Every new batch shape compiles anew: on the bucketed
    # tasks (ListOps, Text, Retrieval) pair True with bucket_step=None
    # (`torch.compile` stops compiling after 8 shapes and runs the rest
    # eagerly)
    jit_compile=None,
    learning_rate=1e-3,
    # learning rate of the family's dynamics weights; None: the global rate
    ssm_learning_rate=None,
    # the family's step-size weights (dt): "ssm" (at ssm_learning_rate) or
    # "global" (at learning_rate, S4's `lr: {dt: null}`)
    dt_learning_rate="ssm",
    # True: dt decays as the weights that `weight_decay_on` decays, though
    # a dynamics weight (S5's --dt_global puts log_step in optax's
    # "regular" AdamW group, s5/train_helpers.py lines 146-150 and 163)
    dt_weight_decay=False,
    # the family's input matrix B (`Family.input_matrix`): its rate, "ssm"
    # or "global" as dt's, and whether it decays, as dt_weight_decay
    # (S5's --opt_config: "BandCdecay" decays B at the SSM rate,
    # "BfastandCdecay" trains it at the global rate with decay;
    # s5/train_helpers.py lines 168-222)
    B_learning_rate="ssm",
    B_weight_decay=False,
    weight_decay=0.0,
    # which weights decay (lra_keras.training.optimization.WEIGHT_DECAY_ON)
    weight_decay_on="all_but_norms_biases_dynamics",
    # AdamW; PyTorch's and optax's defaults (Keras's epsilon is 1e-7)
    adam_beta_1=0.9,
    adam_beta_2=0.999,
    adam_epsilon=1e-8,
    # where epsilon goes: "torch" after the bias correction (PyTorch and
    # optax), "keras" before it (Keras, fairseq; optimizers.AdamW)
    adam_epsilon_style="torch",
    warmup_steps=0,
    # "constant" | "cosine" | "linear" | "plateau" | "rsqrt" (LRA's)
    schedule="constant",
    # how "constant" and "cosine" count steps: "keras" (step t at the
    # schedule's value at t: warmup from 0, the cosine's phase from the
    # warmup's end) or "s5" (S5's loop: step 0 at the peak, the rate set
    # after each step, the cosine's phase from step 0;
    # optimizers.S5Schedule); "linear" and "plateau" ignore it
    schedule_style="keras",
    # where the cosine or linear decay reaches 0; None: the run's last step
    schedule_steps=None,
    warmup_power=1.0,  # "linear": the warmup's power (fairseq's)
    # the rate of the warmup's first step (fairseq's --warmup-init-lr)
    warmup_initial_learning_rate=0.0,
    # schedule="plateau" (YCTFS A.2), from pablomiralles22/long-transformers
    # configs/scheduler/train_plateau.yaml (ReduceLROnPlateau on the
    # epoch's training loss: factor 0.2, patience 3, min_lr 1e-7) and
    # constant_w_cooldown.yaml (x0.1 for the last 10% of the steps).
    plateau_factor=0.2,
    # Keras meaning: reduce at the 4th epoch in a row without improvement,
    # which is PyTorch's patience=3 (it reduces when the count exceeds 3).
    plateau_patience=4,
    plateau_min_learning_rate=1e-7,
    final_decay_factor=0.1,
    final_decay_fraction=0.1,  # share of the training steps, at the end
    # "reset": the final decay starts from the schedule's rate x the factor,
    # forgetting the plateau reductions (the YCTFS code's SequentialLR of
    # ConstantLRs, scheduler_builder.py lines 66-87); "multiply": it
    # multiplies the reduced rate
    final_decay_style="reset",
    # Stochastic weight averaging as PyTorch Lightning's callback
    # (callbacks.StochasticWeightAveraging; YCTFS's text row): from epoch
    # int(fraction x epochs) (1-based) the rate anneals ("cos" or
    # "linear") to swa_learning_rate over swa_annealing_epochs, replacing
    # the schedule, and a mean of the weights is tested beside the best
    # checkpoint (swa_test_accuracy). None: off.
    swa_start_fraction=None,
    swa_learning_rate=None,
    swa_annealing_epochs=10,  # Lightning's default
    swa_annealing="cos",
    gradient_clipnorm=None,
    # stop after this many epochs in a row without a better validation
    # accuracy (PyTorch Lightning's EarlyStopping, the YCTFS runs); None:
    # never
    early_stopping_patience=None,
    # Keras's dtype policy for the run: "float32", or "mixed_bfloat16" /
    # "mixed_float16" (float32 weights, output layers, FFTs and SSM
    # kernels; models.dtype_policy_scope)
    dtype_policy="float32",
    # The training technique (lra_keras.techniques) and whether to augment
    # the training batches; set from get_hparams's arguments.
    technique="none",
    augment=False,
    # bookkeeping
    source="",
)

# The keys that choose a task's data (`Task.loader_options`), with the
# tasks that read each: setting one for another task is an error.
_LOADER_KEYS = {
    key: [name for name, spec in TASKS.items() if key in spec.loader_options]
    for key in sorted({k for spec in TASKS.values()
                       for k in spec.loader_options})
}

# Hyperparameters renamed since a release: the error names the new key.
RENAMED_KEYS = dict(zdim="key_dim", ndim="ema_dim", blocks="num_blocks")


def resolve(task, model="transformer", preset="paper", technique="none",
            augment=False, **overrides):
    """`get_hparams`'s row and, per key, where its value came from.

    Returns:
        `(hp, origins)`: the flat row, and a dict key -> str naming the
        layer that set it last (a default, the task spec, a preset row's
        source, "override", or "derived by ...").
    """
    # `--set technique=... augment=...` mean the arguments.
    technique = overrides.pop("technique", technique)
    augment = bool(overrides.pop("augment", augment))
    spec = get_task(task)
    if model not in FAMILIES:
        raise ValueError(
            f"Unknown model {model!r}. Known models: {sorted(FAMILIES)}"
        )
    if preset not in PRESETS:
        raise ValueError(
            f"Unknown preset {preset!r}. Known presets: {list(PRESETS)}"
        )
    chosen = techniques.get_technique(technique)
    if (task, model) not in presets.PAPER:
        raise ValueError(
            f"No hyperparameters for task={task!r}, model={model!r}. "
            f"Available: {sorted(presets.PAPER)}"
        )
    hp, origins = {}, {}

    def apply(row, origin):
        for key, value in row.items():
            hp[key] = copy.deepcopy(value)
            origins[key] = origin

    apply(COMMON_KEYS, "default (hparams.COMMON_KEYS)")
    for name, each in techniques.TECHNIQUES.items():
        apply(each.keys, f"default of technique {name!r}")
    for name, each in techniques.AUGMENTATIONS.items():
        apply(each.keys, f"default of augmentation {name!r}")
    apply(FAMILIES[model].keys, f"default of the {model} family")
    apply(spec.hparams(), f"task {task} (lra_keras.tasks)")
    row = dict(presets.PAPER[(task, model)])
    sources = [row.pop("source")]
    apply(row, sources[0])
    name = chosen.name if chosen.has_preset_rows else (
        presets.AUGMENT_TECHNIQUE_ROWS if augment else None)
    if name is not None:
        row = presets.TECHNIQUE.get((task, model, name))
        if row is None:
            sources.append(
                f"{name}: no paper row for ({task}, {model}); the "
                "technique-none hyperparameters"
                + techniques.get_technique(name).defaults_note
            )
        else:
            row = dict(row)
            sources.append(f"{name}: {row.pop('source')}")
            apply(row, sources[-1])
    if augment and (task, model) in presets.AUGMENT:
        row = dict(presets.AUGMENT[(task, model)])
        sources.append(f"augment: {row.pop('source')}")
        apply(row, sources[-1])
    hp["source"] = "; ".join(sources)
    if preset != "paper":
        # A scaled preset: its common row, then its rows per task, family
        # and (task, family) (`presets.quick`, `presets.small`).
        module, name = f"presets.{preset}", preset.upper()
        common, per_task, per_family, per_pair = presets.SCALED[preset]
        common = dict(common)
        hp["source"] = f"{common.pop('source')}, from: {hp['source']}"
        apply(common, f"{preset} preset ({module}.{name})")
        apply(per_task.get(task, {}),
              f"{preset} preset ({module}.{name}_TASK[{task!r}])")
        apply(per_family.get(model, {}),
              f"{preset} preset ({module}.{name}_FAMILY[{model!r}])")
        apply(per_pair.get((task, model), {}),
              f"{preset} preset ({module}.{name}_TASK_FAMILY"
              f"[{(task, model)!r}])")
    origins["source"] = "the rows above"
    unknown = sorted(set(overrides) - set(hp))
    if unknown:
        renamed = {k: RENAMED_KEYS[k] for k in unknown if k in RENAMED_KEYS}
        hint = f" Renamed: {renamed}." if renamed else ""
        raise ValueError(
            f"Unknown config key(s) {unknown} for task={task!r}, "
            f"model={model!r}.{hint} Known keys: {sorted(hp)}"
        )
    foreign = {key: owners for key, owners in _LOADER_KEYS.items()
               if key in overrides and key not in spec.loader_options
               and overrides[key] is not None}
    if foreign:
        raise ValueError(
            f"{sorted(foreign)} choose the data of other tasks ({foreign}); "
            f"task {task!r} reads "
            f"{list(spec.loader_options) or 'none of them'}."
        )
    apply(overrides, "override")
    apply(dict(task=task, model=model, preset=preset, technique=technique,
               augment=augment), "get_hparams arguments")
    if (hp["append_eos"] is True and spec.end_id is not None
            and hp["vocabulary_size"] == spec.vocabulary_size):
        # the end token's row (a vocabulary set by an override stays)
        hp["vocabulary_size"] = spec.end_id + 1
        origins["vocabulary_size"] = (
            f"derived by append_eos (the end token, id {spec.end_id})")
    schema.check(hp, origins)
    for each in techniques.TECHNIQUES.values():
        each.check(hp)
    before = dict(hp)
    chosen.resolve(hp)
    _mark_derived(hp, before, origins, f"technique {technique!r}")
    if augment:
        augmentation = techniques.get_augmentation(spec)
        before = dict(hp)
        augmentation.resolve(hp)
        _mark_derived(hp, before, origins,
                      f"augmentation {augmentation.name!r}")
    schema.check(hp, origins)
    return hp, origins


def _mark_derived(hp, before, origins, by):
    for key, value in hp.items():
        if before.get(key) != value:
            origins[key] = f"derived by {by}"


def get_hparams(task, model="transformer", preset="paper", technique="none",
                augment=False, **overrides):
    """Resolves the hyperparameters of one (task, model, preset, technique).

    See the module docstring for the order of the layers. A technique
    without a paper row for (task, model) keeps the technique-none
    hyperparameters (for "spt": the technique's defaults, i.e. masked
    objective, CE loss, the fine-tuning rate, batch and epochs, and the
    task's `spt_mask_rate`), and `source` says so.

    Args:
        task: a key of `lra_keras.tasks.TASKS`.
        model: a key of `lra_keras.models.FAMILIES`.
        preset: `"paper"` (the cited table row), `"quick"` or `"small"`
            (the row scaled down: `presets.quick`, `presets.small`).
        technique: a key of `lra_keras.techniques.TECHNIQUES`.
        augment: bool. Augment the training batches.
        **overrides: any known key, applied before the technique keys
            are checked and derived.

    Returns:
        A flat dict: task metadata, model architecture, optimisation, data
        and technique keys, plus `task`, `model`, `preset`, `technique`,
        `augment`.
    """
    return resolve(task, model, preset, technique, augment, **overrides)[0]


def run_name(hp):
    """`<task>_<model>[_<technique>][_augment][_<preset>]`: a run's name
    (its default directory `runs/<name>`, its saved model), read by the
    report too, which loads no backend."""
    name = f"{hp['task']}_{hp['model']}"
    if hp.get("technique", "none") != "none":
        name += f"_{hp['technique']}"
    if hp.get("augment"):
        name += "_augment"
    if hp["preset"] != "paper":
        name += f"_{hp['preset']}"
    return name


def paper_tables():
    """The papers' numbers kept as data, as Markdown: the accuracies
    (`presets.EXPECTED`, `EXPECTED_LRA`), NTFS's compute-tied results
    (`presets.COMPUTE_TIED`) and its LRA-sized self-pretrained
    Transformers (`presets.SPT_LRA_SIZED`). The README's *Paper numbers*
    section is this output."""
    out = ["### Accuracies the papers report (`presets.EXPECTED`)", "",
           "| task | model | technique | accuracy | source |",
           "|---|---|---|---|---|"]
    entries = list(presets.EXPECTED.items())
    entries += [((t, m, "none (LRA)"), e)
                for (t, m), e in presets.EXPECTED_LRA.items()]
    for key, entry in sorted(entries, key=lambda item: item[0]):
        task, model, technique = (*key, "none")[:3]
        out.append(f"| {task} | {model} | {technique} | "
                   f"{entry['accuracy']:.2f} | {entry['source']} |")
    out += ["", "### Compute-tied self-pretraining (`presets.COMPUTE_TIED`)",
            "", "| task | epochs | SPT share | transformer | s4 | source |",
            "|---|---|---|---|---|---|"]
    for task, table in presets.COMPUTE_TIED.items():
        for share, result in table["results"].items():
            out.append(f"| {task} | {table['total_epochs']} | {share:.1f} | "
                       f"{result['transformer']:.2f} | {result['s4']:.2f} | "
                       f"{table['source']} |")
    out += ["", "### LRA-sized self-pretrained Transformers "
            "(`presets.SPT_LRA_SIZED`)", "",
            "| task | objective | width | depth | heads | FFN | pooling | "
            "lr (FT, PT) | batch (FT, PT) | weight decay | loss |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (task, objective), r in presets.SPT_LRA_SIZED.items():
        out.append(
            f"| {task} | {objective} | {r['hidden_dim']} | "
            f"{r['num_layers']} | {r['num_heads']} | "
            f"{r['intermediate_dim']} | {r['pooling']} | "
            f"{r['learning_rate']:g}, {r['pretrain_learning_rate']:g} | "
            f"{r['batch_size']}, {r['pretrain_batch_size']} | "
            f"{r['weight_decay']:g} | {r['pretrain_loss']} |")
    return "\n".join(out)


def main(argv=None):
    from lra_keras.cli import parse_overrides

    parser = argparse.ArgumentParser(
        description="Print the resolved hyperparameters of one run, each "
        "with the row it came from."
    )
    parser.add_argument("task", nargs="?", choices=sorted(TASKS))
    parser.add_argument("model", nargs="?", default="transformer",
                        choices=sorted(FAMILIES))
    parser.add_argument("--preset", default="paper", choices=PRESETS)
    parser.add_argument("--technique", default="none",
                        choices=list(techniques.TECHNIQUES))
    parser.add_argument("--augment", action="store_true")
    parser.add_argument("--set", nargs="+", action="extend", default=[],
                        metavar="KEY=VALUE")
    parser.add_argument("--tables", action="store_true",
                        help="print the papers' numbers kept as data "
                        "(the README's Paper numbers) instead")
    args = parser.parse_args(argv)
    if args.tables:
        print(paper_tables())
        return 0
    if args.task is None:
        parser.error("a task is required (or --tables)")
    try:
        hp, origins = resolve(args.task, args.model, args.preset,
                              args.technique, args.augment,
                              **parse_overrides(args.set))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    width = max(map(len, hp))
    for key in sorted(hp):
        print(f"{key:<{width}}  {hp[key]!r:<24}  {origins[key]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
