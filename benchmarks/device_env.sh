# Sourced by the GPU session scripts (`gpu_session.sh`, `gpu_speed.sh`)
# from the checkout's root: the device machine of DEVELOPERS.md has Python
# with JAX and PyTorch on CUDA but no Keras, so Keras, namex and optree come
# as wheels in .whl/ (carried) and lra_keras runs from the checkout
# (PYTHONPATH). Where Keras imports already, only PYTHONPATH is set.
if ! python3 -c "import keras" 2>/dev/null && ls .whl/*.whl >/dev/null 2>&1
then
  python3 -m pip install -q --no-index --no-deps --no-compile \
    --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false \
  TF_CPP_MIN_LOG_LEVEL=3
