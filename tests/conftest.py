import atexit
import os
import shutil
import tempfile

import pytest

from tests.run_all_backends import BACKENDS

# Exact float32 matmuls on GPUs, as Keras's own conftest does.
os.environ.setdefault("NVIDIA_TF32_OVERRIDE", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# Most of the JAX pass's time is XLA compiling: every eager op and every
# jitted step, once per shape, on small arrays (a test of a layer compiles
# hundreds of programs, 30-70 ms each). Two of XLA's CPU options cut
# that: LLVM at -O0 instead of -O2, and the classic loop emitters instead
# of the newer MLIR fusion emitters. The same programs then compile about
# 2.5x sooner (60 distinct small eager ops: 74 -> 28 ms each; tests/
# models/test_builders.py and tests/layers/test_rotary_attention.py on
# one core: 307 s, 197 s with -O0 alone, 138 s with both) and compute the
# same operations, rounded differently within the tests' tolerances.
# TensorFlow's pass does not change (135 s either way). Only the JAX
# pass (and the processes its tests start) compiles so; the
# cross-backend pass compares the backends as users run them, at XLA's
# defaults (its one-step comparisons, an Adam step from gradients near
# epsilon, moved past their tolerance in 2 of 201 cases at -O0).
TEST_XLA_FLAGS = ("--xla_backend_optimization_level=0",
                  "--xla_cpu_use_fusion_emitters=false")
if os.environ.get("KERAS_BACKEND") == "jax":
    _set = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = " ".join(filter(None, [_set, *(
        flag for flag in TEST_XLA_FLAGS
        if flag.split("=")[0] not in _set)]))
    # The recipes' command line keeps JAX's compiled steps on disk, by
    # default in the user's data cache; the tests' (and the processes they
    # start) go to a folder of this pass, removed at its end.
    if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
        os.environ["JAX_COMPILATION_CACHE_DIR"] = tempfile.mkdtemp(
            prefix="lra_keras_jax_cache_")
        atexit.register(shutil.rmtree,
                        os.environ["JAX_COMPILATION_CACHE_DIR"], True)


def pytest_report_header(config):
    backend = os.environ.get("KERAS_BACKEND", "tensorflow (Keras default)")
    return f"KERAS_BACKEND: {backend}"


@pytest.fixture(autouse=True)
def _fresh_keras_session(request):
    # Keras's global state (layer names, the functional graph) is reset
    # before each test; the full garbage collection `clear_session` runs
    # by default is not: it walks every live object of the process, and
    # the backends' caches of traced and compiled programs grow through a
    # pass (under JAX 0.15 s a test at the start of the layers' pass, about
    # 1.5 s late in it). Python's own collector still frees cycles. With
    # it, the layers' pieces took 1,337 s under JAX (alone, this day),
    # 379 s and 315 s under TensorFlow and PyTorch (at 59e6550); without
    # it 491, 145 and 40 s (1b45868, beside another piece).
    if request.node.get_closest_marker("numpy_only") is None:
        import keras

        keras.utils.clear_session(free_memory=False)
    yield


# The turn the `one_backend` cases that name no backend take: PyTorch
# half of them, JAX and TensorFlow a quarter each. PyTorch runs these
# end-to-end cases (short fits, recipes, resumption) several times sooner
# on CPU: in the per-test timings of commit 20864f2 (an equal turn), the 69
# cases of the PyTorch pass took 61 s, the 71 of the TensorFlow pass 595 s.
SHARED_TURN = ("torch", "jax", "torch", "tensorflow")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Shares the `one_backend` cases among the backends' passes.

    The `one_backend` cases (collection order, the same in every pass) are
    dealt in turn: those whose marker names backends to the k-th of them
    (k counting such cases), the others by `SHARED_TURN`, so a
    parametrized test spreads its cases over the backends. These are
    end-to-end runs (recipes, resumption, distribution, fitting every
    family) whose numerics the cross-backend pass compares for every
    family and head. Set LRA_ALL_BACKENDS=1 to run every case in every
    pass.
    """
    if os.environ.get("LRA_ALL_BACKENDS") == "1":
        return
    backend = os.environ.get("KERAS_BACKEND", "tensorflow")
    keep, elsewhere = [], []
    named = shared = 0
    for item in items:
        marker = item.get_closest_marker("one_backend")
        if marker is None:
            keep.append(item)
            continue
        unknown = set(marker.args) - set(BACKENDS)
        if unknown:
            raise pytest.UsageError(
                f"{item.nodeid}: one_backend names {sorted(unknown)}, "
                f"not among {BACKENDS}")
        if marker.args:
            owner = marker.args[named % len(marker.args)]
            named += 1
        else:
            owner = SHARED_TURN[shared % len(SHARED_TURN)]
            shared += 1
        (keep if owner == backend else elsewhere).append(item)
    if elsewhere:
        config.hook.pytest_deselected(items=elsewhere)
        items[:] = keep
