"""Model builders."""

from lra_keras.models.builders import build_classifier
from lra_keras.models.builders import build_encoder
from lra_keras.models.builders import build_pretrainer
