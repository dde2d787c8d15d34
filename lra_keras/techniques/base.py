"""The hooks through which a training technique or augmentation acts.

`lra_keras.training.run` knows no technique by name: it looks the
technique up (`lra_keras.techniques.get_technique(hp["technique"])`) and,
when `hp["augment"]` is set, the task's augmentation
(`get_augmentation(task)`), and calls the hooks below in this order:

1. `get_hparams` merges every technique's and augmentation's `keys` into
   every resolved row, calls `check(hp)` of each (they validate their own
   keys, whatever the technique), then `resolve(hp)` of the chosen
   technique and, with `augment`, of the task's augmentation;
2. `Augmentation.load_train(...)` may replace the training split (CIFAR-10
   keeps its colour images for the colour policy);
3. `Technique.pretrain(...)` runs a phase before training (self-
   pretraining) and returns the encoder weights to start from, or None;
4. `Technique.build(hp)` builds the model that `fit` trains, and
   `compile(model, optimizer, hp)` its losses and metrics;
5. `Technique.batch_transform(task, hp, training)` turns each batch of
   token ids into what that model trains on, after
   `Augmentation.make(hp, seed)` has augmented the training batches;
6. `Technique.classifier(model)` is the classifier alone, which is
   evaluated, saved and exported.

This module imports no Keras backend until a model is built, so that the
numpy-only augmentations and masking can import it.
"""


def compile_options(hp):
    """The `model.compile` arguments every phase takes from `hp`:
    `jit_compile` (None: Keras's "auto")."""
    jit = hp.get("jit_compile")
    return {"jit_compile": "auto" if jit is None else jit}


def classification_loss(hp):
    """(loss, accuracy metric) of the classifier's `logits`.

    Softmax cross-entropy over the classes and their argmax; with
    `hp["binary_logit"]` (one logit, the log-odds of class 1) the sigmoid
    cross-entropy and `logit > 0`, as the YCTFS code's `BCEWithLogitsLoss`
    and torchmetrics' binary `Accuracy` (a 0.5 threshold on the sigmoid).
    The metric is named "accuracy" either way.
    """
    import keras

    if hp.get("binary_logit"):
        return (keras.losses.BinaryCrossentropy(from_logits=True),
                keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0))
    return (keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            "accuracy")


def predicted_classes(logits):
    """The class of each row of a classifier's `logits` (numpy): the argmax,
    or, for one logit (`binary_logit`), 1 where it is > 0."""
    import numpy as np

    logits = np.asarray(logits)
    if logits.shape[-1] == 1:
        return (logits[..., 0] > 0).astype(np.int64)
    return logits.argmax(axis=-1)


class Technique:
    """A training technique. The defaults train the classifier alone.

    Attributes:
        name: str. The `--technique` name.
        keys: dict. The hyperparameters the technique owns, with defaults
            (present in every resolved row).
        source: str. The paper that defines it.
        has_preset_rows: bool. Papers' rows for this technique are
            `presets.TECHNIQUE[(task, model, name)]`.
        defaults_note: str. Added to `source` when a (task, model) has no
            such row.
    """

    name = "none"
    keys = {}
    source = ""
    # Whether papers publish rows for runs with this technique (looked up
    # in `presets.TECHNIQUE` under `name`), and what a run without such a
    # row keeps besides the technique-none row (said in its `source`).
    has_preset_rows = True
    defaults_note = ""

    def check(self, hp):
        """Validates this technique's keys of `hp` (every row)."""

    def resolve(self, hp):
        """Derives keys of `hp` in place when this technique is chosen."""

    def pretrain(self, task, hp, splits, out_dir, *, seed=0,
                 verbose="auto", backup_seconds=300.0, backup_steps=None):
        """A phase before training; returns encoder weights or None.

        Resumable, backed up as the run (`training.run`'s `backup_*`)."""
        return None

    def build(self, hp):
        """The model that `model.fit` trains."""
        from lra_keras.models import build_classifier
        from lra_keras.models import classifier_kwargs

        return build_classifier(**classifier_kwargs(hp))

    def compile(self, model, optimizer, hp):
        """Compiles `model`; returns the logged classification accuracy
        name."""
        loss, accuracy = classification_loss(hp)
        model.compile(optimizer=optimizer, loss=loss, metrics=[accuracy],
                      **compile_options(hp))
        return "accuracy"

    def classifier(self, model):
        """The classifier alone (evaluated, saved, exported)."""
        return model

    def batch_transform(self, task, hp, training):
        """`fn(token_ids, padding_mask, y, rng) -> batch`, or None for
        `({"token_ids", "padding_mask"}, y)` batches."""
        return None


class Augmentation:
    """A label-preserving augmentation of one kind of task.

    Attributes:
        name: str. The name a `Task` gives in `augmentation`.
        keys: dict. Its hyperparameters, with defaults.
        source: str.
    """

    name = ""
    keys = {}
    source = ""

    def resolve(self, hp):
        """Derives keys of `hp` in place when the run augments."""

    def load_train(self, task, hp, data_dir):
        """The training split `(x, y)` the augmentation needs, or None for
        the task's own."""
        return None

    def make(self, hp, seed):
        """`fn(token_ids, rng) -> token_ids` for the training batches, or
        None when nothing is applied batch by batch."""
        raise NotImplementedError
