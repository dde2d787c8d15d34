"""One PyTorch training step of our Transformer stack or of the
reference's (`benchmarks/reference_speed.py`'s rotary Transformer on
`scaled_dot_product_attention`), timed and optionally profiled.

    B=16 N=3 python torch_step_profile.py ours 4096
    B=16 N=1 PROF=1 SHAPES=1 python torch_step_profile.py reference 4096

N timed steps after 2 untimed (the median is printed); B rows of L
tokens (default 16,384 tokens); PADDED=0 gives ours no padding mask;
PROF=1 prints `torch.profiler`'s table of one more step (SHAPES=1 by
input shape); ADDMM=1 runs ours with `torch_addmm_prototype`'s layers;
R=<checkout> times another checkout's library (an A/B).
"""

import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
R = os.environ.get("R", str(HERE.parents[2]))
sys.path.insert(0, os.path.join(R, "benchmarks"))
sys.path.insert(0, R)
os.environ["KERAS_BACKEND"] = "torch"

import mixers  # noqa: E402
import reference_speed  # noqa: E402
import torch  # noqa: E402
from torch.nn import functional as F  # noqa: E402

if os.environ.get("ADDMM"):
    sys.path.insert(0, str(HERE))
    import torch_addmm_prototype  # noqa: E402, F401


def step_function(which, length, batch):
    if which == "ours":
        net, x, y = mixers.stack_and_batch(
            "transformer", length, 128, 4, batch,
            os.environ.get("PADDED", "1") == "1")
        optimizer, loss = mixers.optimizer_and_loss()
        net.compile(optimizer=optimizer, loss=loss)
        return lambda: net.train_on_batch(x, y)
    torch.manual_seed(0)
    net = reference_speed._rotary_transformer(128, 4)
    optimizer = torch.optim.AdamW(list(net.parameters()), lr=1e-4)
    tokens = torch.randint(1, 17, (batch, length))
    labels = torch.randint(0, 10, (batch,))

    def step():
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(net(tokens).float(), labels).backward()
        optimizer.step()

    return step


def main():
    which, length = sys.argv[1], int(sys.argv[2])
    batch = int(os.environ.get("B", 16384 // length))
    step = step_function(which, length, batch)
    for _ in range(2):
        step()
    times = []
    for _ in range(int(os.environ.get("N", 5))):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    times.sort()
    print(which, length, batch, f"median {times[len(times) // 2]:.3f} s",
          [f"{t:.3f}" for t in times])
    if os.environ.get("PROF"):
        from torch.profiler import ProfilerActivity
        from torch.profiler import profile

        shapes = bool(os.environ.get("SHAPES"))
        with profile(activities=[ProfilerActivity.CPU],
                     record_shapes=shapes) as prof:
            step()
        print(prof.key_averages(group_by_input_shape=shapes).table(
            sort_by="self_cpu_time_total", row_limit=30))


if __name__ == "__main__":
    main()
