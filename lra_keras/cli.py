"""The command line shared by every recipe in `recipes/`."""

import argparse
import ast
import importlib.util
from pathlib import Path

from lra_keras.hparams import get_hparams
from lra_keras.models.families import FAMILIES
from lra_keras.presets import PRESETS
from lra_keras.techniques import TECHNIQUES


def parse_overrides(pairs):
    """["epochs=3", "learning_rate=1e-4"] -> {"epochs": 3, ...}.

    Values are Python literals (`3`, `1e-4`, `None`, `True`, `'a'`); any
    other text is a string (`schedule=cosine`). A key given twice is an
    error. Types and ranges are checked by `lra_keras.schema`.
    """
    overrides = {}
    for pair in pairs or []:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--set expects KEY=VALUE. Received: {pair!r}")
        if key in overrides:
            raise ValueError(
                f"--set gives {key} twice ({key}={overrides[key]!r} and "
                f"{pair!r}); give each key once."
            )
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text  # a bare string such as schedule=cosine
        overrides[key] = value
    return overrides


def _minutes(text):
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(
            f"expected a number of minutes >= 0, got {text!r}"
        )
    return value


def parser_for(task):
    parser = argparse.ArgumentParser(
        description=f"Train and evaluate a model on the LRA {task} task. "
        "The backend is chosen by the KERAS_BACKEND environment variable."
    )
    parser.add_argument("--model", default="transformer",
                        choices=sorted(FAMILIES))
    parser.add_argument(
        "--preset", default="paper", choices=PRESETS,
        help="paper: the cited table row; quick: minutes on a laptop CPU; "
             "small: every family at one CPU-sized budget, full lengths",
    )
    parser.add_argument(
        "--data-dir", default=None,
        help="directory with the task's official files (see the recipe's "
        "docstring); without it ListOps and the Pathfinder tasks are "
        "generated and cached, text and image are read from TFDS if "
        "prepared locally",
    )
    parser.add_argument(
        "--out", default=None,
        help="run directory (default runs/<task>_<model>[_<technique>]"
        "[_augment][_<preset>]; with --seeds, the directory of the seeds' "
        "runs); rerunning with the same settings resumes an interrupted "
        "run, or prints a finished one's result; other settings are "
        "refused",
    )
    parser.add_argument(
        "--overwrite", action="store_true",
        help="replace the run in --out (finished, or interrupted with "
        "other settings) by a new one",
    )
    parser.add_argument("--saved-models", default="saved_models",
                        help="where the .keras file and SavedModel go")
    parser.add_argument("--no-export", action="store_true",
                        help="skip the SavedModel export")
    parser.add_argument(
        "--technique", default="none", choices=list(TECHNIQUES),
        help="none: train the classifier; multitask: add the masked-token "
        "denoising loss on every batch (YCTFS A.4); spt: self-pretrain the "
        "encoder on the training split, then fine-tune (NTFS)",
    )
    parser.add_argument(
        "--pretrain-objective", default=None, choices=("masked", "causal"),
        help="SPT objective (default: the table's, masked); causal makes "
        "every mixer causal",
    )
    parser.add_argument(
        "--augment", action="store_true",
        help="augment the training batches: ListOps operand permutation, "
        "CIFAR-10 AutoAugment-derived policy, Pathfinder D4 and all three "
        "difficulty sets",
    )
    parser.add_argument(
        "--backup-minutes", type=_minutes, default=5.0, metavar="M",
        help="back the training state up every M minutes within an epoch "
        "(and at every epoch's end); an interrupted run started again "
        "resumes at the batch after its last backup (default 5; 0: at "
        "epoch ends only)",
    )
    seeds = parser.add_mutually_exclusive_group()
    seeds.add_argument("--seed", type=int, default=None,
                       help="the run's seed (default 0)")
    seeds.add_argument(
        "--seeds", type=int, nargs="+", metavar="K",
        help="run these seeds one after another, each into "
        "<out>/seed<K>/ (resumable like any run) and saved as "
        "<name>_seed<K> in --saved-models; then print the mean test "
        "accuracy with its 95%% interval",
    )
    parser.add_argument(
        "--distribute", action="store_true",
        help="train data-parallel on every visible device (JAX: Keras's "
        "DataParallel; TensorFlow: a MirroredStrategy; refused under "
        "PyTorch, saying why)",
    )
    parser.add_argument(
        "--tensorboard", action="store_true",
        help="write TensorBoard logs (Keras's callback) to "
        "<run>/tensorboard/, beside metrics.csv; needs the tensorboard "
        "package",
    )
    parser.add_argument(
        "--set", nargs="+", action="extend", default=[], metavar="KEY=VALUE",
        help="override hyperparameters, e.g. --set epochs=3 batch_size=16 "
        "(may be repeated; python -m lra_keras.hparams lists the keys)",
    )
    parser.add_argument(
        "--compilation-cache", default=None, metavar="DIR",
        help="JAX only: keep the compiled training and evaluation steps in "
        "DIR, so that the next run or seed of the same model loads them "
        "instead of compiling each batch shape again (default: "
        "jax_compilation_cache/ in the data cache, $LRA_KERAS_DATA or "
        "~/.cache/lra_keras, unless JAX_COMPILATION_CACHE_DIR is set; "
        "'none': off)",
    )
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error")
    return parser


def main(task, argv=None):
    """Runs the recipe of `task`; returns 0, or exits with one line.

    Exit status 2 for usage errors (a bad flag or hyperparameter, a run
    directory holding another run), 1 for errors while loading data or
    training (a missing or malformed file, a non-finite loss). `--debug`
    raises them with their traceback instead.
    """
    parser = parser_for(task)
    args = parser.parse_args(argv)
    try:
        overrides = parse_overrides(args.set)
        if args.pretrain_objective is not None:
            if args.technique != "spt":
                raise ValueError(
                    "--pretrain-objective needs --technique spt. Received: "
                    f"--technique {args.technique}"
                )
            overrides["pretrain_objective"] = args.pretrain_objective
        hp = get_hparams(task, args.model, args.preset, args.technique,
                         augment=args.augment, **overrides)
        if args.seeds and len(set(args.seeds)) < len(args.seeds):
            twice = sorted({k for k in args.seeds if args.seeds.count(k) > 1})
            raise ValueError(
                f"--seeds gives {', '.join(map(str, twice))} more than "
                f"once. Received: --seeds {' '.join(map(str, args.seeds))}"
            )
        if args.distribute:
            from lra_keras.distribute import check_backend

            check_backend()
        if (args.tensorboard
                and importlib.util.find_spec("tensorboard") is None):
            # Keras's callback would fail at the first epoch's end.
            raise ValueError(
                "--tensorboard needs the tensorboard package, which is not "
                "installed (TensorFlow 2.21 does not bring it): pip install "
                "tensorboard"
            )
    except ValueError as error:
        if args.debug:
            raise
        _exit(parser, 2, error)
    # Imported here so that --help answers without loading a backend.
    from lra_keras.backend_utils import tensorboard_callback
    from lra_keras.backend_utils import use_compilation_cache
    from lra_keras.data import cache_dir
    from lra_keras.training import run
    from lra_keras.training.run_directory import RunDirectoryError
    from lra_keras.training.run_directory import default_out_dir
    from lra_keras.training.run_directory import run_name

    if args.compilation_cache is None:
        use_compilation_cache(cache_dir() / "jax_compilation_cache",
                              replace=False)
    else:
        use_compilation_cache(None if args.compilation_cache == "none"
                              else args.compilation_cache)
    out = Path(args.out) if args.out else default_out_dir(hp)
    if args.seeds is None:
        jobs = [(args.seed or 0, out, run_name(hp))]
    else:
        jobs = [(k, out / f"seed{k}", f"{run_name(hp)}_seed{k}")
                for k in args.seeds]
    results = []
    for seed, out_dir, saved_name in jobs:
        if len(jobs) > 1:
            print(f"seed {seed}: {out_dir}", flush=True)
        callbacks = ([tensorboard_callback(out_dir / "tensorboard")]
                     if args.tensorboard else [])
        try:
            _, metrics = run(
                task,
                hp,
                data_dir=args.data_dir,
                out_dir=out_dir,
                saved_models_dir=args.saved_models,
                export=not args.no_export,
                seed=seed,
                overwrite=args.overwrite,
                backup_seconds=(60.0 * args.backup_minutes
                                if args.backup_minutes else None),
                callbacks=callbacks,
                saved_name=saved_name,
                distribute=args.distribute,
                overrides=overrides,
            )
        except Exception as error:  # one line at the command line
            if args.debug:
                raise
            _exit(parser, 2 if isinstance(error, RunDirectoryError) else 1,
                  error)
        results.append(metrics["test_accuracy"])
    if args.seeds is not None:
        print(seeds_summary(args.seeds, results, out), flush=True)
    return 0


def seeds_summary(seeds, accuracies, out_dir):
    """The line printed after a `--seeds` run: mean test accuracy ± the
    half-width of its 95% interval (`lra_keras.report.mean_ci`)."""
    from lra_keras.report import mean_ci

    mean, half = mean_ci(accuracies)
    interval = ("no interval from one seed" if half is None
                else f"± {half:.4f} (95% CI)")
    each = ", ".join(f"{a:.4f}" for a in accuracies)
    return (
        f"test accuracy over seeds {' '.join(map(str, seeds))}: "
        f"{mean:.4f} {interval}; each: {each}. Table and plots: "
        f"python -m lra_keras.report {out_dir}"
    )


def _exit(parser, code, error):
    """Exits with `code` and the error on one line."""
    text = " ".join(str(error).split()) or type(error).__name__
    if not isinstance(error, (ValueError, OSError, RuntimeError)):
        text = f"{type(error).__name__}: {text}"
    parser.exit(code, f"{parser.prog}: error: {text} "
                      "(--debug shows the traceback)\n")
