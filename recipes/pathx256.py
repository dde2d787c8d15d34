"""Path-X-256: Pathfinder at 256x256 pixels, sequences of 65536.

    KERAS_BACKEND=jax python recipes/pathx256.py --model s4d

Data as in recipes/pathfinder.py, at 256 pixels (`pathfinder256/`, or
generated with LRA's 256-pixel parameters). As for Path-X, full attention
over 65536 pixels needs a GPU; the SSMs and convolutions run on a CPU.
"""

from lra_keras.cli import main

if __name__ == "__main__":
    main("pathx256")
