"""ListOps: nested MIN/MAX/MED/SM expressions, 10 classes, up to 2000 tokens.

    KERAS_BACKEND=jax python recipes/listops.py --model s4d --preset quick
    KERAS_BACKEND=torch python recipes/listops.py --preset paper

Without --data-dir the 96k/2k/2k data set is generated once with the LRA
generator's parameters and cached under $LRA_KERAS_DATA
(default ~/.cache/lra_keras). With --data-dir DIR the official
`basic_{train,val,test}.tsv` files in DIR are read.
The quick S4D (the README's first command: 2 epochs on 10,000 rows, a
2-layer width-64 S4D that pools the first token, the root operator) ends
near the root operator's level (about 36%, README Results) in minutes on
2 CPU cores; the other families' quick rows train one epoch on 4000 rows,
a check of the pipeline rather than of accuracy (`presets/quick.py`).
The paper row (Table 5 of "You Can Train from Scratch", 120 epochs of a
6-layer rotary Transformer) reaches 0.629 in that paper's Table 2, with
its training techniques (multitask loss, augmentation).
"""

from lra_keras.cli import main

if __name__ == "__main__":
    main("listops")
