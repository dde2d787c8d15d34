"""Pathfinder and Path-X: generator, official files and loader.

Pathfinder (Linsley et al. 2018; Kim*, Linsley* et al. 2020) asks whether
two circle markers are joined by one contour of short dashed "paddles", among
distractor contours. The Long Range Arena feeds the 8-bit grayscale image as
a sequence of pixels: 32x32 (Pathfinder, 1024 tokens), 128x128 (Path-X,
16384 tokens) and 256x256 (Path-X-256, 65536 tokens). The official data has
three difficulties, contour lengths 6 ("easy", `curv_baseline`), 9
("intermediate") and 14 ("hard", the one LRA reports).

`generate()` draws images from the process of the official generator with
the LRA parameter blocks, `write_official()` writes them in the official
layout, `read_official()` reads that layout (ours and the LRA release), and
`load_pathfinder()` returns LRA's splits of either. One module per job:

- `_common.py`: the task's constants, the LRA parameter blocks
  (`GENERATOR_PARAMS`), argument checks, the progress bar;
- `paddles.py`: paddles and markers, rasterised once into lookup tables;
- `snakes.py`: the random process of the official generator, per image
  (target contours, distractors, markers);
- `batched.py`: the target contours, many attempts side by side;
- `generator.py`: `generate()`: a random stream per sample, balanced
  labels, chunks of samples over worker processes;
- `official.py`: `write_official()`, `read_official()`, metadata parsing
  and the decode cache;
- `loader.py`: `load_pathfinder()`, `load_pathx()`, `load_pathx256()`:
  LRA's splits, finding the release files, generating missing batches.

Each module's docstring names the decisions it holds and the original
files read.

This package imports only numpy and the standard library; pillow is imported
inside the functions that draw, write or decode images, and tqdm only for
progress bars.

References:
- Linsley, Kim, Veerabadran, Windolf, Serre, "Learning long-range spatial
  dependencies with horizontal gated recurrent units", NeurIPS 2018,
  https://arxiv.org/abs/1805.08315
- Kim*, Linsley*, Thakkar, Serre, "Disentangling neural mechanisms for
  perceptual grouping", ICLR 2020, https://arxiv.org/abs/1906.01558
- Tay et al., "Long Range Arena: A Benchmark for Efficient Transformers",
  ICLR 2021, https://arxiv.org/abs/2011.04006
"""

from lra_keras.data._checks import SPLITS
from lra_keras.data.pathfinder._common import ANTIALIAS_SCALE
from lra_keras.data.pathfinder._common import CONTOUR_LENGTHS
from lra_keras.data.pathfinder._common import DATASET_SIZE
from lra_keras.data.pathfinder._common import DIFFICULTIES
from lra_keras.data.pathfinder._common import GENERATOR_PARAMS
from lra_keras.data.pathfinder._common import GENERATOR_VERSION
from lra_keras.data.pathfinder._common import MASK_ID
from lra_keras.data.pathfinder._common import MAX_DISTRACTOR_CONTOUR_RETRIAL
from lra_keras.data.pathfinder._common import MAX_PADDLE_RETRIAL
from lra_keras.data.pathfinder._common import NUM_CLASSES
from lra_keras.data.pathfinder._common import RELEASE_URL
from lra_keras.data.pathfinder._common import RESOLUTIONS
from lra_keras.data.pathfinder._common import SAMPLES_PER_BATCH
from lra_keras.data.pathfinder._common import VOCABULARY_SIZE
from lra_keras.data.pathfinder.generator import generate
from lra_keras.data.pathfinder.loader import generated_root
from lra_keras.data.pathfinder.loader import load_pathfinder
from lra_keras.data.pathfinder.loader import load_pathx
from lra_keras.data.pathfinder.loader import load_pathx256
from lra_keras.data.pathfinder.official import read_official
from lra_keras.data.pathfinder.official import write_official
