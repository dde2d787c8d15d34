"""ListOps: nested MIN/MAX/MED/SM expressions, 10 classes, up to 2000 tokens.

    KERAS_BACKEND=jax python recipes/listops.py --preset quick
    KERAS_BACKEND=torch python recipes/listops.py --preset paper

Without --data-dir the 96k/2k/2k data set is generated once with the LRA
generator's parameters and cached under $LRA_KERAS_DATA
(default ~/.cache/lra_keras). With --data-dir DIR the official
`basic_{train,val,test}.tsv` files in DIR are read.
The quick preset reaches about 0.3 test accuracy in ~10 minutes on 2 CPU
cores; the paper row (Table 5 of "You Can Train from Scratch") is 120 epochs
of a 6-layer rotary Transformer.
"""

from lra_keras.cli import main

if __name__ == "__main__":
    main("listops")
