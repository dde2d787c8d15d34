"""Model builders and the registry of model families.

`families` imports no Keras backend; the builders do, on first use.
"""

import importlib

_BUILDERS = ("build_classifier", "build_encoder", "build_pretrainer",
             "classifier_kwargs", "pretrainer_kwargs", "model_inputs",
             "dtype_policy_scope")
_FAMILIES = ("FAMILIES", "Family", "get_family")


def __getattr__(name):
    if name in _BUILDERS:
        module = importlib.import_module("lra_keras.models.builders")
    elif name in _FAMILIES:
        module = importlib.import_module("lra_keras.models.families")
    else:
        raise AttributeError(
            f"module 'lra_keras.models' has no attribute {name!r}"
        )
    return getattr(module, name)


__all__ = [*_BUILDERS, *_FAMILIES]
