"""PyTorch's ops in one training step of a `reference_speed.py` row, ours
or the reference's, by name and input shape.

    python torch_profile.py mega 1024 ours [--rows 40]
    python torch_profile.py mega 1024 reference --mega-repo PATH

Run from the repository root. Builds the row as `reference_speed.py` does
(4 blocks of width 128, 16,384 tokens, no padding mask, AdamW), times 5
steps after 2 untimed, then records 2 steps under `torch.profiler` and
prints each op's self CPU time a step (the profiler's own overhead
included), its calls a step and its input shapes, the largest first.
"""

import argparse
import os
import sys
import time
from pathlib import Path

os.environ["KERAS_BACKEND"] = "torch"
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("length", type=int)
    parser.add_argument("side", choices=("ours", "reference"))
    parser.add_argument("--rows", type=int, default=40)
    parser.add_argument("--mega-repo", type=Path, default=None)
    args = parser.parse_args()

    import torch
    from torch.profiler import profile

    batch = 16384 // args.length
    if args.side == "ours":
        import mixers

        net, x, y = mixers.stack_and_batch(args.model, args.length, 128, 4,
                                           batch, padded=False)
        optimizer, loss = mixers.optimizer_and_loss()
        net.compile(optimizer=optimizer, loss=loss)

        def step():
            net.train_on_batch(x, y)
    else:
        import reference_speed as rs
        from torch.nn import functional as F

        ref_args = argparse.Namespace(mega_repo=args.mega_repo, hidden=128,
                                      layers=4)
        torch.manual_seed(0)
        net = rs.build_reference(ref_args, args.model, args.length)
        optimizer = torch.optim.AdamW(list(net.parameters()), lr=1e-4)
        tokens = torch.randint(1, rs.VOCABULARY - 1, (batch, args.length))
        labels = torch.randint(0, rs.CLASSES, (batch,))

        def step():
            optimizer.zero_grad(set_to_none=True)
            F.cross_entropy(net(tokens).float(), labels).backward()
            optimizer.step()

    for _ in range(2):
        step()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    print(f"{args.side} {args.model} L={args.length}: steps "
          + " ".join(f"{t:.3f}" for t in sorted(times)) + " s")
    with profile(record_shapes=True) as prof:
        for _ in range(2):
            step()
    events = sorted(prof.key_averages(group_by_input_shape=True),
                    key=lambda e: -e.self_cpu_time_total)
    total = sum(e.self_cpu_time_total for e in events) / 2e3
    print(f"self CPU time a step under the profiler: {total:.1f} ms")
    for e in events[:args.rows]:
        print(f"{e.self_cpu_time_total / 2e3:8.1f} ms {e.count // 2:4d}x "
              f"{e.key[:40]:40s} {str(e.input_shapes)[:110]}")


if __name__ == "__main__":
    main()
