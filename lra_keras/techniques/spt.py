"""Technique "spt": self-pretraining on the task's own data, then
fine-tuning.

"Never Train from Scratch" (NTFS) §2-3: the encoder is first trained on
the task's training inputs without labels, with a masked objective (the
task's `spt_mask_rate` of the real tokens become the mask token, no random
replacements; the loss is taken at those positions) or a causal one (every
position predicts the next token; every mixer is made causal, also when
fine-tuning). `pretrain_loss="l1"` regresses pixel values instead of
predicting ids, NTFS's option for Image. The classifier is then fine-tuned
from the pretrained encoder. The pretraining loop is
`lra_keras.training.pretraining`.

Compute-tied SPT (NTFS Table 8): `compute_tied_epochs` epochs in all, a
`pretrain_share` of them pretraining.

Original files read: `src/dataloaders/base.py`
(`MaskedSequenceDatasetWrapper`) and `src/models/functional/masking.py` of
IdoAmos/not-from-scratch.
"""

from lra_keras.models.families import get_family
from lra_keras.techniques.base import Technique
from lra_keras.techniques.masking import denoising_targets

PRETRAIN_OBJECTIVES = ("masked", "causal")
PRETRAIN_LOSSES = ("ce", "l1")


class SelfPretraining(Technique):
    name = "spt"
    source = "Never Train from Scratch, sections 2-3, Tables 4-5 and 8"
    defaults_note = ", Never Train from Scratch generic SPT defaults"
    keys = dict(
        spt_mask_rate=0.15,  # masked SPT: share of positions masked
        pretrain_objective="masked",  # "masked" | "causal"
        pretrain_loss="ce",  # "ce" | "l1" (L1 regression of pixel values)
        pretrain_learning_rate=None,  # None: learning_rate
        pretrain_batch_size=None,  # None: batch_size
        pretrain_epochs=None,  # None: epochs
        # the pretraining's schedule and warmup (NTFS's -mlm files:
        # constant_warmup with their own warmups); None: schedule and
        # warmup_steps
        pretrain_schedule=None,
        pretrain_warmup_steps=None,
        # Compute-tied SPT (NTFS Table 8): a total epoch budget of which
        # `pretrain_share` pretrains; sets pretrain_epochs and epochs.
        compute_tied_epochs=None,
        pretrain_share=None,
    )

    def check(self, hp):
        # Keys that start the classifier from other weights, which would
        # replace the self-pretrained encoder.
        for key, weights in (("init_from", "a saved model's weights"),
                             ("curriculum_epochs", "a first stage's weights")):
            if hp["technique"] == self.name and hp.get(key) is not None:
                raise ValueError(
                    f"`{key}` starts the classifier from {weights}, which "
                    "would replace the self-pretrained encoder. Use one or "
                    "the other. Received: technique='spt', "
                    f"{key}={hp[key]!r}"
                )
        objective = hp["pretrain_objective"]
        if objective not in PRETRAIN_OBJECTIVES:
            raise ValueError(
                "`pretrain_objective` must be 'masked' or 'causal'. "
                f"Received: pretrain_objective={objective!r}"
            )
        if objective == "causal" and not get_family(
                hp["model"]).can_be_causal:
            raise ValueError(
                f"The causal objective needs causal mixers; the "
                f"{hp['model']!r} family cannot be causal. Use "
                f"--pretrain-objective masked. Received: "
                f"pretrain_objective={objective!r}"
            )
        if hp["pretrain_loss"] not in PRETRAIN_LOSSES:
            raise ValueError(
                "`pretrain_loss` must be 'ce' or 'l1'. "
                f"Received: pretrain_loss={hp['pretrain_loss']!r}"
            )
        if hp["pretrain_loss"] == "l1" and hp["padding_id"] is not None:
            raise ValueError(
                "pretrain_loss='l1' regresses pixel values and needs a pixel "
                f"task. Received: task={hp['task']!r}"
            )
        total = hp["compute_tied_epochs"]
        if total is None and hp["pretrain_share"] is not None:
            raise ValueError(
                "`pretrain_share` is the share of `compute_tied_epochs` "
                "spent self-pretraining; set both (e.g. compute_tied_epochs="
                "30 pretrain_share=0.2), or set `pretrain_epochs` instead. "
                f"Received: pretrain_share={hp['pretrain_share']!r}"
            )
        if total is not None and hp["technique"] != self.name:
            raise ValueError(
                "`compute_tied_epochs` splits epochs between self-"
                "pretraining and fine-tuning; it needs technique 'spt'. "
                f"Received: technique={hp['technique']!r}"
            )

    def resolve(self, hp):
        if hp["pretrain_objective"] == "causal":
            # Next-token prediction needs mixers that see only the past;
            # the fine-tuned classifier keeps the pretrained causal encoder.
            hp["causal"] = True
        if (hp.get("pixel_mask_input") is None
                and hp["pretrain_objective"] == "masked"
                and hp.get("input_encoder") == "linear"):
            # NTFS's masked pixel inputs are the value and a mask flag into
            # a Linear(2, D) (`MaskedSequenceDatasetWrapper.mask`, lines
            # 443-445); its causal ones the value alone (None: the
            # builder's "embedding", which no mask reaches).
            hp["pixel_mask_input"] = "channel"
        total, share = hp["compute_tied_epochs"], hp["pretrain_share"]
        if total is None:
            return
        if (
            isinstance(total, bool) or not isinstance(total, int)
            or total < 1 or share is None
            or not 0.0 <= float(share) < 1.0
        ):
            raise ValueError(
                "Compute-tied SPT needs `compute_tied_epochs` an int >= 1 "
                "and `pretrain_share` in [0, 1). Received: "
                f"compute_tied_epochs={total!r}, pretrain_share={share!r}"
            )
        hp["pretrain_epochs"] = int(round(float(share) * total))
        hp["epochs"] = total - hp["pretrain_epochs"]
        if hp["epochs"] < 1:
            raise ValueError(
                f"pretrain_share={share} of {total} epochs leaves no "
                "fine-tuning epoch."
            )

    def pretrain(self, task, hp, splits, out_dir, *, seed=0,
                 verbose="auto", backup_seconds=300.0, backup_steps=None):
        from lra_keras.training.pretraining import self_pretrain

        return self_pretrain(task, hp, splits["train"][0], splits["val"][0],
                             out_dir / "pretrain", seed=seed,
                             verbose=verbose, backup_seconds=backup_seconds,
                             backup_steps=backup_steps)

    def pretraining_transform(self, task, hp):
        """The batches of the pretraining phase (training and
        validation alike: both are corrupted)."""
        return PretrainingBatch(
            task, hp["pretrain_objective"], mask_rate=hp["spt_mask_rate"],
            pixel_targets=hp["pretrain_loss"] == "l1",
            pixel_normalization=(hp.get("pixel_mean", 0.5),
                                 hp.get("pixel_std", 0.5)),
        )


class PretrainingBatch:
    """One self-pretraining batch: `(inputs, targets, weights)`.

    Masked: NTFS masks without random replacements and takes the loss at
    the masked positions; causal: the next token wherever both are real.
    The label is dropped.
    """

    def __init__(self, task, objective, *, mask_rate, pixel_targets=False,
                 pixel_normalization=(0.0, 1.0)):
        self.task = task
        self.objective = objective
        self.mask_rate = mask_rate
        self.pixel_targets = pixel_targets
        self.pixel_normalization = tuple(pixel_normalization)

    def __call__(self, token_ids, padding_mask, y, rng):
        corrupted, targets, weights = denoising_targets(
            token_ids, self.task, rng, self.objective,
            mask_rate=self.mask_rate, random_fraction=0.0,
            loss_positions="masked", pixel_targets=self.pixel_targets,
            pixel_normalization=self.pixel_normalization,
        )
        inputs = {"token_ids": corrupted, "padding_mask": padding_mask}
        return inputs, targets, weights


SPT = SelfPretraining()
