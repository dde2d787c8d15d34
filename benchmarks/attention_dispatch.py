"""Which kernel does our exact attention get, and is its answer right?

    python benchmarks/attention_dispatch.py [--backends jax torch]
        [--lengths 4096 16384] [--tokens 65536] [--dtypes float32 bfloat16]
        [--implementations fused chunked] [--json-out FILE]

One process per backend; in it, for every length, dtype, mask and
implementation of `lra_keras.layers.attention_kernels.attention`: one
training step of the attention alone (forward and the gradients of q, k,
v) on (batch, L, 4 heads, 32) inputs with batch x L = `--tokens`, and

- the step's time (median of `--repeats` after a compiling one) and the
  attention's TFLOP/s (12 B H L^2 D: 2 products forward, 4 backward);
- the kernel it ran: under JAX whether the compiled program calls cuDNN's
  fused attention (a `__cudnn$fmha` custom call), under PyTorch the
  scaled-dot-product backends seen by `torch.profiler` (flash,
  memory-efficient, cuDNN or the unfused "math" path);
- its memory: under JAX XLA's own count of the compiled step's temporary
  buffers (`memory_analysis()`), under PyTorch the device's peak
  allocation above the inputs;
- its error: the largest |out - exact| / max |exact|, `exact` the float32
  chunked attention of the same (rounded) inputs. A kernel that
  overflows an index shows here as an error near 1.

The mask is either none or an all-ones (batch, L) padding mask, which is
what the classifier passes on tasks without padding (Pathfinder, Path-X):
the two settings show whether a mask alone keeps a backend off its flash
kernel. On a CPU the same runs go through the same code (no cuDNN there).
"""

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mixers  # noqa: E402

HEADS, HEAD_DIM = 4, 32


def attention_flops(batch, length):
    """Multiply-adds x 2 of one training step of exact attention."""
    return 12 * batch * HEADS * length * length * HEAD_DIM


def _inputs(batch, length, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    shape = (batch, length, HEADS, HEAD_DIM)
    return [rng.standard_normal(shape, dtype=np.float32) for _ in range(3)]


def _relative_error(out, exact):
    import numpy as np
    out = np.asarray(out, dtype=np.float64)
    exact = np.asarray(exact, dtype=np.float64)
    if not np.all(np.isfinite(out)):
        return float("inf")
    return float(np.max(np.abs(out - exact)) / np.max(np.abs(exact)))


def _jax_case(length, batch, dtype, masked, impl, repeats):
    import jax
    import jax.numpy as jnp

    from lra_keras.layers.attention_kernels import attention

    arrays = _inputs(batch, length)
    q, k, v = (jnp.asarray(a, dtype=dtype) for a in arrays)
    mask = jnp.ones((batch, length), bool) if masked else None

    def forward(q, k, v, implementation=impl):
        return attention(q, k, v, padding_mask=mask,
                         implementation=implementation)

    def loss(q, k, v):
        return jnp.sum(forward(q, k, v).astype(jnp.float32))

    step = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))
    compiled = step.lower(q, k, v).compile()
    hlo = compiled.as_text()
    memory = compiled.memory_analysis()
    temp = getattr(memory, "temp_size_in_bytes", None)
    seconds = mixers._timed(
        lambda: jax.block_until_ready(compiled(q, k, v)), repeats)
    out = jax.jit(forward)(q, k, v)
    exact = jax.jit(lambda q, k, v: forward(q, k, v, "chunked"))(
        *(x.astype(jnp.float32) for x in (q, k, v)))
    return {
        "kernel": "cudnn fused" if "cudnn$fmha" in hlo else "xla",
        "memory_mib": None if temp is None else temp / 2**20,
        "seconds": seconds,
        "error": _relative_error(out.astype(jnp.float32), exact),
    }


def _torch_kernels(prof):
    names = {e.key.lower() for e in prof.key_averages()}
    found = []
    for label, keys in (("flash", ("flash",)),
                        ("memory-efficient", ("efficient", "fmha_cutlass")),
                        ("cudnn", ("cudnn_attention", "cudnn_fmha")),
                        ("math", ("_scaled_dot_product_attention_math",))):
        if any(key in name for name in names for key in keys):
            found.append(label)
    return " + ".join(found) or "unfused ops"


def _torch_case(length, batch, dtype, masked, impl, repeats):
    import torch

    from lra_keras.layers.attention_kernels import attention

    device = "cuda" if torch.cuda.is_available() else "cpu"
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    arrays = _inputs(batch, length)
    q, k, v = (torch.tensor(a, device=device).to(getattr(torch, dtype))
               .requires_grad_() for a in arrays)
    mask = (torch.ones((batch, length), dtype=torch.bool, device=device)
            if masked else None)

    def step():
        for x in (q, k, v):
            x.grad = None
        out = attention(q, k, v, padding_mask=mask, implementation=impl)
        out.float().sum().backward()
        sync()

    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated() if device == "cuda" else 0
    seconds = mixers._timed(step, repeats)
    peak = (torch.cuda.max_memory_allocated() - base) / 2**20 \
        if device == "cuda" else None
    activities = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=activities) as prof:
        step()
    with torch.no_grad():
        out = attention(q, k, v, padding_mask=mask, implementation=impl)
        exact = attention(*(x.float() for x in (q, k, v)),
                          padding_mask=mask, implementation="chunked")
    return {
        "kernel": _torch_kernels(prof),
        "memory_mib": peak,
        "seconds": seconds,
        "error": _relative_error(out.float().cpu().numpy(),
                                 exact.cpu().numpy()),
    }


def child(args):
    """Runs every case of one backend, one JSON line each."""
    backend = os.environ["KERAS_BACKEND"]
    case = _jax_case if backend == "jax" else _torch_case
    for length in args.lengths:
        batch = max(1, args.tokens // length)
        for dtype in args.dtypes:
            for masked in (False, True):
                for impl in args.implementations:
                    row = {"backend": backend, "length": length,
                           "batch": batch, "dtype": dtype, "mask": masked,
                           "implementation": impl}
                    try:
                        row.update(case(length, batch, dtype, masked, impl,
                                        args.repeats))
                        row["tflops"] = (attention_flops(batch, length)
                                         / row["seconds"] / 1e12)
                    except Exception as error:  # noqa: BLE001 - reported
                        row["failed"] = f"{type(error).__name__}: " \
                            f"{str(error).splitlines()[0][:120]}"
                    print("RESULT " + json.dumps(row), flush=True)


def _format(row):
    if "failed" in row:
        return f"failed: {row['failed']}"
    memory = ("-" if row["memory_mib"] is None
              else f"{row['memory_mib'] / 1024:.2f} GiB")
    return (f"{row['seconds'] * 1e3:9.1f} ms {row['tflops']:7.1f} TFLOP/s "
            f"{memory:>10} err {row['error']:.1e}  {row['kernel']}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", default=["jax", "torch"],
                        choices=("jax", "torch"))
    parser.add_argument("--lengths", nargs="+", type=int,
                        default=[4096, 16384])
    parser.add_argument("--tokens", type=int, default=65536)
    parser.add_argument("--dtypes", nargs="+", default=["float32",
                                                        "bfloat16"],
                        choices=("float32", "bfloat16", "float16"))
    parser.add_argument("--implementations", nargs="+",
                        default=["fused", "chunked"],
                        choices=("fused", "chunked", "reference"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=int, default=600,
                        help="seconds for each backend's child")
    parser.add_argument("--json-out", type=Path, default=None)
    parser.add_argument("--child", action="store_true",
                        help=argparse.SUPPRESS)
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    rows = []
    for backend in args.backends:
        got = mixers.run_child_results(args, backend, ["--child", *argv],
                                       args.timeout, script=__file__)
        if set(got[-1]) == {"error"}:  # the child's end, not a row
            print(f"{backend}: the child ended after {len(got) - 1} rows: "
                  f"{got.pop()['error']}", flush=True)
        rows += got
        for row in got:
            print(f"{row['backend']:5} L={row['length']:6} B={row['batch']:3}"
                  f" {row['dtype']:8} mask={'ones' if row['mask'] else 'none'}"
                  f" {row['implementation']:8} {_format(row)}", flush=True)
    if args.json_out:
        with open(args.json_out, "a") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
