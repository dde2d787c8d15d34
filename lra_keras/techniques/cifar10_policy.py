"""Image augmentation: the YCTFS CIFAR-10 colour policy, then grayscale.

YCTFS (§3, A.3) augments each CIFAR-10 training image in colour
(horizontal flip, AutoAugment's CIFAR-10 policy, its own nine extra ops and
a random affine map; `cifar10_autoaugment.CIFAR10Policy`, built from Keras
preprocessing layers), then converts it to grayscale. With `--augment` the
Image task's training split is read in colour, flattened to
(N, 32 * 32 * 3), and each batch is augmented and turned into LRA's
grayscale token ids (N, 1024) (`lra_keras.data.image.to_grayscale`, so an
image the policy leaves unchanged gives LRA's tokens exactly).

References:
- Miralles et al., "You Can Train from Scratch: Further Analysis of the Long
  Range Arena" (YCTFS), §3 and appendix A.3.
"""

import numpy as np

from lra_keras.data import image as image_data
from lra_keras.techniques.base import Augmentation


class CIFAR10ColourPolicy(Augmentation):
    name = "cifar10_policy"
    source = "You Can Train from Scratch, section 3 and A.3 (CIFAR-10)"

    def load_train(self, task, hp, data_dir):
        x, y = image_data.load_cifar10_rgb("train", data_dir=data_dir)
        return x.reshape(len(x), -1), y

    def make(self, hp, seed):
        """Colour policy then grayscale. The Keras preprocessing layers
        draw from a `keras.random.SeedGenerator(seed)`, not from the
        batch's numpy generator."""
        import keras

        from lra_keras.techniques.cifar10_autoaugment import CIFAR10Policy

        policy = CIFAR10Policy(seed=keras.random.SeedGenerator(seed))
        side = image_data.IMAGE_SIZE

        def augment(x, rng):
            rgb = policy(x.reshape(len(x), side, side, 3).astype(np.uint8))
            return image_data.to_grayscale(rgb).reshape(len(x), side * side)

        return augment


CIFAR10_COLOUR_POLICY = CIFAR10ColourPolicy()
