"""Technique "multitask": the task loss plus a masked-token loss.

"You Can Train from Scratch" (YCTFS) §3 and A.4: on every training batch
30% of the real tokens are selected, a third of them replaced by a random
ordinary token and the rest by the mask token; the classifier reads the
corrupted sequence, and a token head on the shared encoder reconstructs
the original ids. The token loss (weight 1) is added to the task loss. It
is the mean over `multitask_loss_positions`: `"real"` (every real token,
as the YCTFS code does) or `"masked"` (the selected tokens only, as BERT
and NTFS). Validation batches are clean and give the token loss weight 0,
so `val_loss` is the task loss alone.

Original files read: `src/tasks/denoise_task.py` and
`src/data_loaders/masked_language_modeling.py` of
pablomiralles22/long-transformers.
"""

import numpy as np

from lra_keras.techniques.base import Technique
from lra_keras.techniques.base import classification_loss
from lra_keras.techniques.base import compile_options
from lra_keras.techniques.masking import check_loss_positions
from lra_keras.techniques.masking import denoising_targets


class Multitask(Technique):
    name = "multitask"
    source = "You Can Train from Scratch, section 3 and A.4"
    keys = dict(
        # A.4: "we mask 30% of the tokens in the input sequence, of which a
        # third are replaced by random tokens, and the rest are replaced by
        # a special mask token"; the loss weight is 1.
        multitask_mask_rate=0.3,
        multitask_random_fraction=1 / 3,
        multitask_loss_weight=1.0,
        multitask_loss_positions="real",
    )

    def check(self, hp):
        check_loss_positions(hp["multitask_loss_positions"])

    def build(self, hp):
        from lra_keras.models import build_classifier
        from lra_keras.models import classifier_kwargs

        return build_classifier(**classifier_kwargs(hp), token_head=True)

    def compile(self, model, optimizer, hp):
        """The task loss plus `multitask_loss_weight` times the token loss,
        the mean of the per-token cross-entropies weighted by the batch's
        token weights (`reduction="mean_with_sample_weight"`: sum(w * ce) /
        sum(w))."""
        import keras

        loss, accuracy = classification_loss(hp)
        model.compile(
            optimizer=optimizer,
            loss={
                "logits": loss,
                "token_logits": keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True, reduction="mean_with_sample_weight"
                ),
            },
            loss_weights={"logits": 1.0,
                          "token_logits": float(hp["multitask_loss_weight"])},
            metrics={"logits": [accuracy]},
            **compile_options(hp),
        )
        # Keras prefixes the output's name.
        return "logits_accuracy"

    def classifier(self, model):
        import keras

        # The same layers without the token head.
        return keras.Model(model.input, model.output["logits"],
                           name=model.name)

    def batch_transform(self, task, hp, training):
        return MultitaskBatch(
            task,
            mask_rate=hp["multitask_mask_rate"],
            random_fraction=hp["multitask_random_fraction"],
            loss_positions=hp["multitask_loss_positions"],
            training=training,
        )


class MultitaskBatch:
    """One batch for the multitask model: `(inputs, {"logits": y,
    "token_logits": ids}, {"logits": 1, "token_logits": weights})`.

    Training batches are corrupted (`denoising_targets`); the others are
    clean and weigh the token loss 0.
    """

    def __init__(self, task, *, mask_rate=0.3, random_fraction=1 / 3,
                 loss_positions="real", training=True):
        self.task = task
        self.mask_rate = mask_rate
        self.random_fraction = random_fraction
        self.loss_positions = loss_positions
        self.training = training

    def __call__(self, token_ids, padding_mask, y, rng):
        weights = {"logits": np.ones(len(y), np.float32)}
        if not self.training:
            inputs = {"token_ids": token_ids, "padding_mask": padding_mask}
            targets = {"logits": y, "token_logits": token_ids}
            weights["token_logits"] = np.zeros(token_ids.shape, np.float32)
            return inputs, targets, weights
        corrupted, token_targets, weights["token_logits"] = (
            denoising_targets(
                token_ids, self.task, rng, "multitask",
                mask_rate=self.mask_rate,
                random_fraction=self.random_fraction,
                loss_positions=self.loss_positions,
            )
        )
        inputs = {"token_ids": corrupted, "padding_mask": padding_mask}
        return inputs, {"logits": y, "token_logits": token_targets}, weights


MULTITASK = Multitask()
