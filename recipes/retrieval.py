"""Retrieval: are two ACL Anthology papers linked by a citation? 2 classes.

    KERAS_BACKEND=jax python recipes/retrieval.py --data-dir ~/data/lra_release

Reads `new_aan_pairs.{train,eval,test}.tsv` of the LRA release
(https://storage.googleapis.com/long-range-arena/lra_release.gz, folder
`lra_release/tsv_data/`) from --data-dir. Each paper is cut to 4000 UTF-8
bytes; both go through one shared encoder and the head classifies
[u, v, u*v, u-v] (LRA appendix, eq. 1). Paper row: "You Can Train from
Scratch" Table 5 (6-layer rotary Transformer, 60 epochs).
"""

from lra_keras.cli import main

if __name__ == "__main__":
    main("retrieval")
