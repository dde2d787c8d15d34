"""Path-X: Pathfinder at 128x128 pixels, sequences of 16384.

    KERAS_BACKEND=jax python recipes/pathx.py --model s4d

Data as in recipes/pathfinder.py, at 128 pixels (`pathfinder128/` of the
LRA release, or generated with LRA's 128-pixel parameters). On a CPU, use a
sub-quadratic model (s4d, s4, s5, gmlp, conv, mega with chunks): full
attention over 16384 pixels needs a GPU's memory under JAX and TensorFlow.
"""

from lra_keras.cli import main

if __name__ == "__main__":
    main("pathx")
