"""Training, evaluation and saving of one LRA run, shared by every recipe.

| module | its one job |
|---|---|
| `run` | `run(task, hp)`: the orchestration of one run |
| `inputs` | the task's splits and the batches of a split |
| `optimization` | AdamW, the learning-rate schedule and its callbacks |
| `pretraining` | the self-pretraining phase |
| `resume` | the training state backed up within epochs, and resumed |
| `run_directory` | what a run writes, and whether it may resume |
"""

from lra_keras.training.inputs import load_splits
from lra_keras.training.inputs import make_batches
from lra_keras.training.inputs import run_batches
from lra_keras.training.optimization import make_callbacks
from lra_keras.training.optimization import make_optimizer
from lra_keras.training.optimization import make_schedule
from lra_keras.training.pretraining import compile_pretrainer
from lra_keras.training.pretraining import self_pretrain
from lra_keras.training.resume import BackupCallback
from lra_keras.training.resume import TrainingBackup
from lra_keras.training.resume import resumable_fit
from lra_keras.training.run import run
from lra_keras.training.run_directory import run_name
