"""Image: grayscale CIFAR-10 as a sequence of 1024 pixels, 10 classes.

    KERAS_BACKEND=jax python recipes/image.py --data-dir ~/data/cifar10

Reads the CIFAR-10 binary or python batches
(https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz, folder
`cifar-10-batches-bin/`) from --data-dir, or, without --data-dir, TFDS
`cifar10` if it has been prepared locally. Pixels are converted to
grayscale as LRA does; 45k train / 5k val (end of the training set) / 10k
test. Paper row: "You Can Train from Scratch" Table 5 (10-layer rotary
Transformer, 200 epochs).
"""

from lra_keras.cli import main

if __name__ == "__main__":
    main("image")
