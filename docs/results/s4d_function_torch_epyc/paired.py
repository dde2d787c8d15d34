"""S4D's PyTorch kernel through autograd on complex tensors (as at
e187b46) against `torch_s4d_kernel`'s written-out backward, paired in one
process (between processes this 2-core machine's steps move by more than
the change).

    python docs/results/s4d_function_torch_epyc/paired.py [ROUNDS]

First the kernel alone, forward and backward of its sum, for the quick
preset's layer ((2, 64) channels, 16 modes) at L = 32 and 1024: the
median of 50 calls a round, 15 rounds, the two in turn. Then the quick
ListOps S4D's step as `paired_step.py` in `quick_step_torch_epyc/` times
it (`benchmarks/preset_step.py`'s `recipe_run`, 20 batches of 32 x 32
tokens a round, ROUNDS rounds, default 20, the order alternating).
Prints each variant's median over the rounds, and every round's.
"""

import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "torch")
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from keras import ops  # noqa: E402

from lra_keras.layers import s4d  # noqa: E402
from lra_keras.layers.ssm_kernels import _block_positions  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "docs" / "results" / "quick_step_torch_epyc"))
from paired_step import first_shape_batches  # noqa: E402
from preset_step import _batch_shape  # noqa: E402
from preset_step import recipe_run  # noqa: E402


def autograd_kernel(layer, length):
    """The kernel of e187b46: complex tensors, PyTorch's autograd."""
    H = ops.shape(layer.log_dt)[0]

    def weight(variable):
        return s4d.tile_ssms(ops.convert_to_tensor(variable), H)

    dt = s4d.step_size(layer)[:, None]
    a = torch.complex(-ops.exp(weight(layer.log_A_real)),
                      weight(layer.A_imag))
    dta = a * dt
    b = torch.complex(weight(layer.B_real), weight(layer.B_imag))
    coeff = torch.complex(ops.convert_to_tensor(layer.C_real),
                          ops.convert_to_tensor(layer.C_imag))
    coeff = coeff * ((torch.exp(dta) - 1.0) / a * b)
    starts, offsets = _block_positions(length, None)
    log_z = dta[..., None]
    p = coeff[..., None] * torch.exp(log_z * starts)
    k = torch.matmul(p.transpose(-1, -2), torch.exp(log_z * offsets)).real
    return 2.0 * k.reshape(*k.shape[:-2], -1)[..., :length]


VARIANTS = {"written out": s4d.S4D.ssm_kernel, "autograd": autograd_kernel}


def paired(rounds, run):
    """Each variant's per-round medians of `run(variant)`'s times."""
    medians = {name: [] for name in VARIANTS}
    for r in range(rounds):
        names = list(VARIANTS) if r % 2 else list(VARIANTS)[::-1]
        for name in names:
            s4d.S4D.ssm_kernel = VARIANTS[name]
            medians[name].append(statistics.median(run()))
    s4d.S4D.ssm_kernel = VARIANTS["written out"]
    for name, values in medians.items():
        print(f"  {name}: {statistics.median(values) * 1e3:.3f} ms "
              f"(rounds: {', '.join(f'{v * 1e3:.2f}' for v in values)})")


def timed(call, times):
    out = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        out.append(time.perf_counter() - start)
    return out


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    _, _, train, _, net = recipe_run("listops", "s4d", "quick")
    layer = next(x for x in net._flatten_layers() if isinstance(x, s4d.S4D))
    for length in (32, 1024):
        print(f"kernel alone, L = {length}, 15 rounds of 50")
        paired(15, lambda: timed(
            lambda: layer.ssm_kernel(length).sum().backward(), 50))
    same = first_shape_batches(train, net)
    steps = iter(same * 2 * rounds)
    print(f"step, {_batch_shape(same[0])} tokens, {rounds} rounds of 20")
    paired(rounds, lambda: timed(lambda: net.train_on_batch(*next(steps)),
                                 20))


if __name__ == "__main__":
    main()
