"""One LRA run: load, (pre)train, evaluate, save.

`run(task, hp)` looks up the run's technique and, with `augment`, the
task's augmentation (`lra_keras.techniques`), and calls their hooks; it
knows no technique or task by name. The run is resumable: restarted with
the same `out_dir`, it continues from its last backup, taken at every
epoch's end and every `backup_seconds` within an epoch (also during
self-pretraining), where it stopped (`training.resume`). See
`run_directory` for what it writes.
"""

import shutil
import sys
import time
from pathlib import Path

import keras
import numpy as np

from lra_keras import techniques
from lra_keras._atomic import atomic_path
from lra_keras._atomic import write_json
from lra_keras.callbacks import NonFiniteLossError
from lra_keras.callbacks import StopAfterTime
from lra_keras.callbacks import StopAtStep
from lra_keras.callbacks import StopWithoutImprovement
from lra_keras.callbacks import swa_weights
from lra_keras.distribute import batch_multiple
from lra_keras.distribute import distribution_scope
from lra_keras.distribute import single_device
from lra_keras.hparams import get_hparams
from lra_keras.models import dtype_policy_scope
from lra_keras.saving import load_initial_weights
from lra_keras.saving import load_model
from lra_keras.saving import save_model
from lra_keras.training.inputs import load_splits
from lra_keras.training.inputs import run_batches
from lra_keras.training.optimization import fit_callbacks
from lra_keras.training.optimization import make_optimizer
from lra_keras.training.resume import TrainingBackup
from lra_keras.training.resume import resumable_fit
from lra_keras.training.run_directory import TIME_LIMIT_MARKER
from lra_keras.training.run_directory import default_out_dir
from lra_keras.training.run_directory import environment
from lra_keras.training.run_directory import prepare
from lra_keras.training.run_directory import run_name
from lra_keras.training.run_directory import save_model_card
from lra_keras.training.run_directory import val_accuracies


def run(
    task,
    hp=None,
    *,
    data_dir=None,
    out_dir=None,
    saved_models_dir="saved_models",
    export=True,
    seed=0,
    verbose="auto",
    callbacks=(),
    overwrite=False,
    backup_seconds=300.0,
    backup_steps=None,
    saved_name=None,
    distribute=False,
    overrides=None,
):
    """Trains, evaluates and saves one model. Returns (model, metrics).

    The technique (`hp["technique"]`) decides what trains: "none" the
    classifier; "multitask" the classifier plus a token head on the shared
    encoder, the two losses summed (`multitask_loss_weight`); "spt" first
    self-pretrains the encoder (in `<out_dir>/pretrain/`), then fine-tunes
    the classifier from it. `hp["augment"]` augments the training batches.
    The returned and saved model is always the classifier alone, with
    its best checkpoint's weights. With stochastic weight averaging
    (`swa_start_fraction`), the weight mean is tested too
    (`swa_test_accuracy`, `swa_test_loss` in the metrics) and saved in
    `<out_dir>/swa.weights.h5` (also when a run whose time limit had
    ended its training is restarted: the mean comes from its backup).

    `callbacks` are added after the run's own (non-finite loss check,
    schedule, best checkpoint, CSV log, backup, progress bar), in both
    stages of a curriculum.

    With `curriculum_epochs` (Pathfinder tasks) the run has two stages.
    The first trains `curriculum_epochs` epochs on the images of
    `curriculum_difficulty` ("easy": contour length 6), validated and
    tested on them, as a run of its own in `<out_dir>/curriculum/` (its
    own warmup and schedule over its steps; it starts from `init_from`
    where one is given). The second trains `epochs` epochs on
    `difficulty`'s images from that stage's best weights, after the
    random seed is set again: it is the run `init_from=<out_dir>/
    curriculum` would be, so one command does what the stage and an
    `init_from` run did in two. Each stage resumes from its own backup;
    a finished first stage is not trained again. The metrics add
    `curriculum_test_accuracy` and `curriculum_seconds` (the stage's
    `wall_seconds`); `wall_seconds` counts the stage too where the same
    process trained it. `time_limit_minutes` limits each stage on its
    own, as it would the two runs.

    `out_dir` defaults to `runs/<name>`, and the model goes to
    `<saved_models_dir>/<saved_name>.keras`, `saved_name` defaulting to
    `<name>` (`run_directory.run_name`).

    The training state is backed up in `<out_dir>/backup/` at every
    epoch's end and, within an epoch, every `backup_seconds` (None: not by
    time) and every `backup_steps` batches (None: not by count). A run
    started again resumes at the batch after its last backup and trains
    as if never interrupted. The backup is removed once `metrics.json` is
    written.

    A directory holding a finished run with the same settings is not
    trained again: its model and metrics are returned. One holding a run
    with other settings is refused (`RunDirectoryError`) unless
    `overwrite=True`, which removes that run's files first. A NaN or
    infinite loss stops the run with `NonFiniteLossError`; nothing is
    saved or exported then, and the last finished epoch's state stays in
    `backup/` (and the best one in `best.weights.h5`).

    Models are built, trained, evaluated and saved under Keras's dtype
    policy `hp["dtype_policy"]` (`models.dtype_policy_scope`), restored
    afterwards. `distribute=True` trains data-parallel on every visible
    device (`lra_keras.distribute`; JAX and TensorFlow, an error naming the
    reason under PyTorch).

    `overrides` (a dict, or None) records which of `hp`'s values were set
    by hand over the preset (the recipes' `--set`): `config.json` keeps it
    for `lra_keras.report`, which reports such runs apart from the
    preset's. It changes nothing in training.
    """
    hp = dict(hp) if hp is not None else get_hparams(task)
    with dtype_policy_scope(hp.get("dtype_policy", "float32")):
        with distribution_scope(distribute):
            classifier, metrics, export_to = _run(
                task, hp, data_dir=data_dir, out_dir=out_dir,
                saved_models_dir=saved_models_dir, export=export,
                seed=seed, verbose=verbose, callbacks=callbacks,
                overwrite=overwrite, backup_seconds=backup_seconds,
                backup_steps=backup_steps, saved_name=saved_name,
                overrides=overrides,
            )
        if export_to is not None:
            # Outside the distribution: a SavedModel traced inside a
            # TensorFlow MirroredStrategy cannot be called outside it.
            from lra_keras.export import export_saved_model

            export_saved_model(*export_to)
    return classifier, metrics


def _run(task, hp, *, data_dir, out_dir, saved_models_dir, export, seed,
         verbose, callbacks, overwrite, backup_seconds, backup_steps,
         saved_name, overrides, stage=""):
    technique = techniques.get_technique(hp.get("technique", "none"))
    augmentation = (techniques.get_augmentation(task) if hp.get("augment")
                    else None)
    name = saved_name or run_name(hp)
    out_dir = Path(out_dir or default_out_dir(hp))
    finished = prepare(out_dir, hp, seed=seed, data_dir=data_dir,
                       overwrite=overwrite)
    if finished is not None:
        again = ("" if stage else
                 " Pass --overwrite (overwrite=True) to train it again.")
        print(
            f"{stage}{out_dir} holds this run, finished: test accuracy "
            f"{finished['test_accuracy']:.4f} ({out_dir / 'metrics.json'})."
            f"{again}",
            flush=True,
        )
        return load_model(out_dir / "model.keras"), finished, None
    out_dir.mkdir(parents=True, exist_ok=True)
    backup_dir = out_dir / "backup"
    resuming = backup_dir.exists()
    # Written when `time_limit_minutes` stops training, before that
    # epoch's backup: a run interrupted after it (in its test, say) is
    # tested again on its restart, not trained for another limit.
    time_limit_marker = out_dir / TIME_LIMIT_MARKER
    if not resuming:
        # The logs of an attempt stopped before its first backup.
        if (out_dir / "metrics.csv").exists():
            (out_dir / "metrics.csv").unlink()
        if time_limit_marker.exists():
            time_limit_marker.unlink()
        shutil.rmtree(out_dir / "tensorboard", ignore_errors=True)
    keras.utils.set_random_seed(seed)
    env = environment()
    write_json(
        out_dir / "config.json",
        dict(hparams=hp, seed=seed, data_dir=data_dir, argv=sys.argv,
             overrides=dict(overrides or {}), **env),
    )

    started = time.time()
    curriculum = None
    if hp.get("curriculum_epochs"):
        curriculum = _curriculum_stage(
            task, hp, data_dir=data_dir, out_dir=out_dir / "curriculum",
            seed=seed, verbose=verbose, callbacks=callbacks,
            backup_seconds=backup_seconds, backup_steps=backup_steps,
            overrides=overrides)
        # The second stage draws as a run of its own from this seed would.
        keras.utils.set_random_seed(seed)
    splits = load_splits(task, hp, data_dir)
    x_train, y_train = splits["train"]
    padded_note = (f" padded to {hp['padded_length']}"
                   if hp.get("padded_length") else "")
    print(
        f"{task}: {len(y_train)} train / {len(splits['val'][1])} val / "
        f"{len(splits['test'][1])} test rows of length "
        f"{hp['sequence_length']}"
        f"{padded_note}; backend {env['backend']}; "
        f"technique {technique.name}"
        f"{', augmented' if augmentation else ''}",
        flush=True,
    )
    pretrain_started = time.time()
    encoder_weights = technique.pretrain(
        task, hp, splits, out_dir, seed=seed, verbose=verbose,
        backup_seconds=backup_seconds, backup_steps=backup_steps,
    )
    pretrain_seconds = (time.time() - pretrain_started
                        if encoder_weights is not None else 0.0)

    train, val, test = run_batches(task, splits, hp, technique,
                                   augmentation, seed=seed)
    devices = batch_multiple()
    if devices > 1:
        print(
            f"data-parallel over {devices} devices: batches hold multiples "
            f"of {devices} rows; {len(y_train) % devices} training rows an "
            f"epoch and {len(splits['val'][1]) % devices} validation rows "
            "are left out; the test split is evaluated whole",
            flush=True,
        )
    epochs, total_steps = planned_steps(hp, len(train))
    if hp.get("train_steps"):
        last = total_steps - (epochs - 1) * len(train)
        cut = (f", the last cut short at {last}" if last < len(train)
               else "")
        print(f"training {total_steps} steps: {epochs} epochs of "
              f"{len(train)} batches{cut}", flush=True)
    model = technique.build(hp)
    if encoder_weights is not None:
        model.get_layer("encoder").load_weights(str(encoder_weights))
    accuracy_key = technique.compile(
        model, make_optimizer(hp, total_steps), hp
    )
    classifier = technique.classifier(model)
    if curriculum is not None:
        # Before any backup is restored, as `init_from` below.
        source = load_initial_weights(classifier, out_dir / "curriculum")
        print(f"initial weights: {source}, the curriculum's first stage "
              f"({hp['curriculum_difficulty']} images, test accuracy "
              f"{curriculum['test_accuracy']:.4f})", flush=True)
    elif hp.get("init_from") is not None:
        # Before any backup is restored: a resumed run continues from its
        # backup, not from the source again.
        source = load_initial_weights(
            classifier, hp["init_from"].replace("{seed}", str(seed)))
        print(f"initial weights: {source}", flush=True)
    best_path = out_dir / "best.weights.h5"
    # After a resume, only an epoch better than those already logged may
    # replace the best checkpoint.
    best_so_far = max(val_accuracies(out_dir, f"val_{accuracy_key}"),
                      default=None)
    if hp.get("early_stopping_patience"):
        # After the backup and the log: the epoch that stops is in both,
        # and a resumed run counts again from the log.
        callbacks = [StopWithoutImprovement(
            f"val_{accuracy_key}", hp["early_stopping_patience"],
            lambda: val_accuracies(out_dir, f"val_{accuracy_key}")),
            *callbacks]
    run_callbacks = fit_callbacks(
        hp, out_dir, train, val,
        f"Nothing was saved or exported. The state after the last backup, "
        f"if any, is in {backup_dir} (rerunning resumes from it) and "
        f"the best one in {best_path}. Try a lower learning_rate (now "
        f"{hp['learning_rate']:g}) or gradient_clipnorm.",
        checkpoint=keras.callbacks.ModelCheckpoint(
            str(best_path),
            monitor=f"val_{accuracy_key}",
            mode="max",
            save_best_only=True,
            save_weights_only=True,
            initial_value_threshold=best_so_far,
        ),
        backup_seconds=backup_seconds,
        backup_steps=backup_steps,
        seed=seed,
        epochs=epochs,
    ) + list(callbacks)
    # Before the backup: no backup at the stopping batch.
    if hp.get("train_steps"):
        run_callbacks = [StopAtStep(total_steps, len(train)),
                         *run_callbacks]
    if hp.get("time_limit_minutes"):
        timer = StopAfterTime(
            60 * hp["time_limit_minutes"],
            on_stop=lambda: write_json(time_limit_marker,
                                       dict(epoch=timer.stopped_epoch)))
        run_callbacks = [timer, *run_callbacks]
    limit_reached = time_limit_marker.exists()
    if limit_reached and not best_path.exists():
        # Stopped before the stopping epoch's checkpoint: train again.
        time_limit_marker.unlink()
        limit_reached = False
    fit_started = time.time()
    if limit_reached:
        print(f"This run reached its time limit (time_limit_minutes="
              f"{hp['time_limit_minutes']:g}) before it was interrupted: "
              "no more training, its best checkpoint is tested.",
              flush=True)
        if hp.get("swa_start_fraction"):
            # The weight mean lives in the optimizer the backup holds (as
            # at the stop: its epoch's end wrote it).
            backup = TrainingBackup(backup_dir)
            saved = backup.read()
            if saved is not None:
                backup.restore(model, saved)
    else:
        resumable_fit(model, train, epochs=epochs, callbacks=run_callbacks,
                      validation_data=val, verbose=verbose,
                      announce=lambda text: print(text, flush=True))
    fit_seconds = time.time() - fit_started
    # Before the best checkpoint, whose file holds an older optimizer.
    averaged = swa_weights(model.optimizer)
    if best_path.exists():
        model.load_weights(str(best_path))
    _check_finite_weights(classifier, out_dir)
    if classifier is not model:
        # The classifier alone, compiled to be evaluated: the task loss and
        # accuracy. Keras builds an optimizer on the first evaluation, so
        # it gets Keras's default one, which never steps.
        techniques.NONE.compile(classifier, "rmsprop", hp)
    with single_device():  # every test row, whatever the device count
        scores = classifier.evaluate(test, return_dict=True, verbose=0)
    val_acc = val_accuracies(out_dir, f"val_{accuracy_key}")
    metrics = dict(
        task=task,
        model=hp["model"],
        preset=hp["preset"],
        technique=technique.name,
        augment=bool(hp.get("augment")),
        test_accuracy=float(scores["accuracy"]),
        test_loss=float(scores["loss"]),
        best_val_accuracy=max(val_acc, default=float("nan")),
        epochs_run=len(val_acc),
        # the run ended at `time_limit_minutes`, before its planned steps
        stopped_at_time_limit=time_limit_marker.exists(),
        wall_seconds=round(time.time() - started, 1),
        fit_seconds=round(fit_seconds, 1),
        pretrain_seconds=round(pretrain_seconds, 1),
        num_parameters=int(classifier.count_params()),
        **env,
    )
    if curriculum is not None:
        metrics.update(
            curriculum_test_accuracy=curriculum["test_accuracy"],
            curriculum_seconds=curriculum["wall_seconds"])
    model_path = out_dir / "model.keras"
    save_model(classifier, model_path)
    if averaged:
        metrics.update(_test_swa(classifier, averaged, test,
                                 out_dir / "swa.weights.h5"))
    write_json(out_dir / "metrics.json", metrics)
    TrainingBackup(backup_dir).remove()
    export_to = None
    if saved_models_dir:
        save_model_card(model_path, hp, metrics, Path(saved_models_dir),
                        name)
        if export:
            export_to = (model_path, Path(saved_models_dir) / name)
    print(
        f"{stage}test accuracy: {metrics['test_accuracy']:.4f} "
        f"({task}, {hp['model']}, {hp['preset']} preset, "
        f"{env['backend']}, {metrics['wall_seconds']:.0f} s)",
        flush=True,
    )
    return classifier, metrics, export_to


def _curriculum_stage(task, hp, *, out_dir, **kwargs):
    """Trains (or resumes, or reads) the first stage of `hp`'s curriculum
    in `out_dir` and returns its metrics."""
    stage_hp = dict(
        hp, difficulty=hp["curriculum_difficulty"],
        epochs=hp["curriculum_epochs"], curriculum_epochs=None,
        train_steps=None, train_difficulty=None, eval_difficulty=None)
    print(f"curriculum: {hp['curriculum_epochs']} epochs on "
          f"{stage_hp['difficulty']} images in {out_dir}, then "
          f"{hp['epochs']} on {hp['difficulty']} ones from its best "
          "weights", flush=True)
    _, metrics, _ = _run(
        task, stage_hp, out_dir=out_dir, saved_models_dir=None,
        export=False, overwrite=False, saved_name=None,
        stage=f"curriculum stage ({stage_hp['difficulty']} images): ",
        **kwargs)
    return metrics


def _test_swa(classifier, averaged, test, path):
    """Tests the weight mean of stochastic weight averaging, saves it to
    `path` (the classifier's weights) and puts the best checkpoint's
    weights back. Returns the metrics to add."""
    best = [(variable, keras.ops.convert_to_numpy(variable))
            for variable, _ in averaged]
    try:
        for variable, value in averaged:
            variable.assign(value)
        with single_device():
            result = classifier.evaluate(test, return_dict=True, verbose=0)
        with atomic_path(path, suffix=".weights.h5") as temporary:
            classifier.save_weights(str(temporary))
    finally:
        for variable, value in best:
            variable.assign(value)
    print(f"stochastic weight averaging: test accuracy "
          f"{result['accuracy']:.4f} of the weight mean ({path})",
          flush=True)
    return dict(swa_test_accuracy=float(result["accuracy"]),
                swa_test_loss=float(result["loss"]))


def planned_steps(hp, batches_per_epoch):
    """`(epochs, steps)` a run trains: `epochs` whole epochs, or, with
    `train_steps`, that many steps over as many epochs as they need."""
    steps = hp.get("train_steps")
    if not steps:
        return hp["epochs"], batches_per_epoch * hp["epochs"]
    return -(-int(steps) // batches_per_epoch), int(steps)


def _check_finite_weights(model, out_dir):
    for weight in model.weights:
        if not np.isfinite(keras.ops.convert_to_numpy(weight)).all():
            raise NonFiniteLossError(
                f"The weight {weight.path} of the trained model is not "
                f"finite; nothing was saved to {out_dir} or exported."
            )
