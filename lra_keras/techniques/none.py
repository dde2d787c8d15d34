"""Technique "none": the classifier alone, trained from scratch.

Every hook keeps `Technique`'s default: the classifier of
`lra_keras.models.build_classifier`, the task's cross-entropy, plain
batches.
"""

from lra_keras.techniques.base import Technique


class NoTechnique(Technique):
    name = "none"
    source = "the papers' from-scratch rows"
    has_preset_rows = False


NONE = NoTechnique()
