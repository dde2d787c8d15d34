import os

import pytest

from tests.run_all_backends import BACKENDS

# Exact float32 matmuls on GPUs, as Keras's own conftest does.
os.environ.setdefault("NVIDIA_TF32_OVERRIDE", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def pytest_report_header(config):
    backend = os.environ.get("KERAS_BACKEND", "tensorflow (Keras default)")
    return f"KERAS_BACKEND: {backend}"


@pytest.fixture(autouse=True)
def _fresh_keras_session(request):
    if request.node.get_closest_marker("numpy_only") is None:
        import keras

        keras.utils.clear_session()
    yield


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Shares the `one_backend` cases among the backends' passes.

    The k-th collected `one_backend` case (collection order, the same in
    every pass) runs in the pass of the (k mod n)-th of its marker's
    backends (all three when the marker names none), so a parametrized
    test spreads its cases over the backends. These are end-to-end runs
    (recipes, resumption, distribution, fitting every family) whose
    numerics the cross-backend pass compares for every family and head.
    Set LRA_ALL_BACKENDS=1 to run every case in every pass.
    """
    if os.environ.get("LRA_ALL_BACKENDS") == "1":
        return
    backend = os.environ.get("KERAS_BACKEND", "tensorflow")
    keep, elsewhere = [], []
    k = 0
    for item in items:
        marker = item.get_closest_marker("one_backend")
        if marker is None:
            keep.append(item)
            continue
        among = marker.args or BACKENDS
        unknown = set(among) - set(BACKENDS)
        if unknown:
            raise pytest.UsageError(
                f"{item.nodeid}: one_backend names {sorted(unknown)}, "
                f"not among {BACKENDS}")
        (keep if among[k % len(among)] == backend
         else elsewhere).append(item)
        k += 1
    if elsewhere:
        config.hook.pytest_deselected(items=elsewhere)
        items[:] = keep
