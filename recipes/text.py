"""Text: byte-level IMDB sentiment, 2 classes, up to 4096 bytes.

    KERAS_BACKEND=jax python recipes/text.py --data-dir ~/data/aclImdb
    KERAS_BACKEND=torch python recipes/text.py --model s4d \
        --set sequence_length=1024

Reads the IMDB reviews from an `aclImdb/` directory
(https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz) given by
--data-dir, or, without --data-dir, from TFDS `imdb_reviews` if it has been
prepared locally. Reviews are UTF-8 bytes cut to `sequence_length` (LRA
uses 1K-4K). As in LRA, the IMDB test split also serves as validation.
Paper row: "You Can Train from Scratch" Table 5 (8-layer rotary
Transformer); that paper reports 91.03 test accuracy with its techniques.
"""

from lra_keras.cli import main

if __name__ == "__main__":
    main("text")
