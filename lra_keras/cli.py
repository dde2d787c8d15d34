"""The command line shared by every recipe in `recipes/`."""

import argparse
import ast

from lra_keras.hparams import get_hparams
from lra_keras.models.families import FAMILIES
from lra_keras.presets import PRESETS
from lra_keras.techniques import TECHNIQUES


def parse_overrides(pairs):
    """["epochs=3", "learning_rate=1e-4"] -> {"epochs": 3, ...}."""
    overrides = {}
    for pair in pairs or []:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"--set expects KEY=VALUE. Received: {pair!r}")
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text  # a bare string such as schedule=cosine
        overrides[key.strip()] = value
    return overrides


def parser_for(task):
    parser = argparse.ArgumentParser(
        description=f"Train and evaluate a model on the LRA {task} task. "
        "The backend is chosen by the KERAS_BACKEND environment variable."
    )
    parser.add_argument("--model", default="transformer",
                        choices=sorted(FAMILIES))
    parser.add_argument(
        "--preset", default="paper", choices=PRESETS,
        help="paper: the cited table row; quick: minutes on a laptop CPU",
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
        help="run directory (default runs/<task>_<model>[_<preset>]); "
        "rerunning with the same directory resumes an interrupted run",
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
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--set", nargs="*", default=[], metavar="KEY=VALUE",
        help="override hyperparameters, e.g. --set epochs=3 batch_size=16",
    )
    return parser


def main(task, argv=None):
    args = parser_for(task).parse_args(argv)
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
    except ValueError as error:
        raise SystemExit(f"error: {error}") from None
    # Imported here so that --help answers without loading a backend.
    from lra_keras.training import run

    return run(
        task,
        hp,
        data_dir=args.data_dir,
        out_dir=args.out,
        saved_models_dir=args.saved_models,
        export=not args.no_export,
        seed=args.seed,
    )
