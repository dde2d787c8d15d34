import os

import pytest

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
