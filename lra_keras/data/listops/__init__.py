"""ListOps: generator, evaluator, tokenizer and reader of the LRA format.

ListOps sequences are nested prefix expressions over the digits 0-9 with the
operators `[MIN`, `[MAX`, `[MED` (median, truncated to an integer) and `[SM`
(sum modulo 10); `]` closes an operator. The label is the value of the
expression, so the task is 10-way classification. In the Long Range Arena the
sequences are 500-2000 tokens long and trees are up to 10 levels deep.

This package reproduces the official LRA data: `generate()` draws trees from the
same distribution as the official generator, writes them in the same text
form, and `read_tsv()` reads both generated files and the files of the LRA
release (`lra_release/listops-1000/basic_{train,val,test}.tsv`).

One module per job:

- `vocabulary.py`: the tokens, their ids and the sizes of the task;
- `generator.py`: `generate()` (the official distribution, drawn
  breadth-first for many trees at once) and `evaluate()`;
- `tokenizer.py`: `tokenize()` and `tokenize_batch()`;
- `tsv.py`: `write_tsv()` and `read_tsv()`, the files of the LRA release;
- `loader.py`: `load_listops()`: the release files, or data generated once
  into the cache.

The package imports only numpy and the standard library (tqdm when a progress
bar is requested), so it is fast to import and independent of the Keras
backend.

References:
- Tay et al., "Long Range Arena: A Benchmark for Efficient Transformers",
  ICLR 2021, https://arxiv.org/abs/2011.04006
- Nangia & Bowman, "ListOps: A Diagnostic Dataset for Latent Tree Learning",
  NAACL SRW 2018, https://arxiv.org/abs/1804.06028

Original files read: `lra_benchmarks/data/listops.py` (generator) and
`lra_benchmarks/listops/input_pipeline.py` (reader) of
google-research/long-range-arena; `src/dataloaders/lra.py` of
state-spaces/s4 (the reader most later LRA work uses: it drops `(` `)` and
keeps `]`).
"""

from lra_keras.data.listops.generator import evaluate
from lra_keras.data.listops.generator import generate
from lra_keras.data.listops.loader import load_listops
from lra_keras.data.listops.tokenizer import tokenize
from lra_keras.data.listops.tokenizer import tokenize_batch
from lra_keras.data.listops.tsv import read_tsv
from lra_keras.data.listops.tsv import write_tsv
from lra_keras.data.listops.vocabulary import END
from lra_keras.data.listops.vocabulary import MASK_ID
from lra_keras.data.listops.vocabulary import MAX_LENGTH
from lra_keras.data.listops.vocabulary import NUM_CLASSES
from lra_keras.data.listops.vocabulary import OPERATORS
from lra_keras.data.listops.vocabulary import PAD_ID
from lra_keras.data.listops.vocabulary import VOCABULARY
from lra_keras.data.listops.vocabulary import VOCABULARY_SIZE
