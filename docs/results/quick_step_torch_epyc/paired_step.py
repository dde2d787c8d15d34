"""The quick S4D's PyTorch step with and without this folder's two changes,
paired in one process (between processes this 2-core machine's steps move
by more than the changes).

    python docs/results/quick_step_torch_epyc/paired_step.py [ROUNDS]

Builds the ListOps S4D quick preset with `benchmarks/preset_step.py`'s
`recipe_run`, takes 20 of its first training batches of one shape (32 x
32 tokens), and times `train_on_batch` on them in rounds, the two
variants in turn (order alternating): "before" puts back the rate
evaluated at each ask (`AdamW._rate`, as before ea0b817) and S4D's
kernel on (real, imaginary) pairs (the path JAX and TensorFlow take, as
before e187b46); "after" is the library as it is. Prints each variant's
median over the rounds of the rounds' median step, and every round's.
"""

import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "torch")
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

import keras  # noqa: E402

from lra_keras import optimizers  # noqa: E402
from lra_keras.layers import s4d  # noqa: E402
from lra_keras.layers.ssm_kernels import vandermonde_kernel  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from preset_step import _batch_shape  # noqa: E402
from preset_step import recipe_run  # noqa: E402


def pairs_kernel(layer, length):
    """S4D's kernel through `discretize` and `vandermonde_kernel`."""
    (c_real, c_imag), (dta_real, dta_imag) = layer.discretize()
    return 2.0 * vandermonde_kernel(c_real, c_imag, dta_real, dta_imag,
                                    length)


def every_ask(optimizer):
    return optimizer._rate()


VARIANTS = {
    "after": (optimizers.AdamW._get_current_learning_rate,
              s4d.S4D.ssm_kernel),
    "before": (every_ask, pairs_kernel),
}


def first_shape_batches(train, net, count=20):
    """`count` of the first 60 training batches, those of the first one's
    shape, after `net` has taken the first 20 untimed (its shapes
    compiled, its optimiser built)."""
    batches = [train[i] for i in range(60)]
    same = [b for b in batches
            if _batch_shape(b) == _batch_shape(batches[0])][:count]
    for x, y in batches[:20]:
        net.train_on_batch(x, y)
    return same


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    _, _, train, _, net = recipe_run("listops", "s4d", "quick")
    same = first_shape_batches(train, net)
    medians = {name: [] for name in VARIANTS}
    for r in range(rounds):
        names = list(VARIANTS) if r % 2 else list(VARIANTS)[::-1]
        for name in names:
            rate, kernel = VARIANTS[name]
            optimizers.AdamW._get_current_learning_rate = rate
            s4d.S4D.ssm_kernel = kernel
            times = []
            for x, y in same:
                start = time.perf_counter()
                net.train_on_batch(x, y)
                times.append(time.perf_counter() - start)
            medians[name].append(statistics.median(times))
    print(f"{keras.backend.backend()}, {len(same)} steps of "
          f"{_batch_shape(same[0])} tokens a round, {rounds} rounds")
    for name, values in medians.items():
        print(f"{name}: {statistics.median(values) * 1e3:.2f} ms "
              f"(rounds: {', '.join(f'{v * 1e3:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
