"""Pathfinder: are the two circles joined by one dashed path? 32x32 pixels.

    KERAS_BACKEND=jax python recipes/pathfinder.py --preset quick
    KERAS_BACKEND=torch python recipes/pathfinder.py --model s4d

Without --data-dir the images are generated on first use by our Pathfinder
generator (lra_keras.data.pathfinder, LRA's 32-pixel parameters, contour
length 14 = "hard") in the official layout, cached under $LRA_KERAS_DATA
(default ~/.cache/lra_keras), and split 80/10/10. With --data-dir DIR the
official `pathfinder32/` folders of the LRA release are read. The sequence
is the 1024 pixels in row-major order. `--set difficulty=all` uses the
three difficulty sets.
"""

from lra_keras.cli import main

if __name__ == "__main__":
    main("pathfinder")
