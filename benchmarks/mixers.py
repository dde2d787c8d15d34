"""Sequence-mixer benchmark: training-step time, tokens/s and peak memory.

    python benchmarks/mixers.py [--backends jax tensorflow torch]
        [--models transformer s4d ...] [--lengths 1024 4096 16384]
        [--tokens 16384] [--hidden 128] [--layers 4] [--steps 3]
        [--dtype-policy {float32,mixed_bfloat16,mixed_float16}]
        [--one-process] [--deadline S] [--json-out FILE]
        [--jit-compile {auto,true,false}]
    python benchmarks/mixers.py --kernel-study [--lengths ...]

Part 1 (default): for each backend, model family and length, one
subprocess builds the family's classifier (`build_classifier`, width
`--hidden`, `--layers` blocks, the family's default sizes otherwise) and
times `model.train_on_batch` on random tokens, after one untimed step that
compiles. The batch holds `--tokens` tokens (batch = tokens // L, at least
1), so every length does the same work per step for a linear-cost mixer.
Peak memory is the growth of the process's peak resident set during
training over its size just before the first step. Ratios are against the
rotary Transformer at the same backend and length, run by the same command.

Part 2 (`--kernel-study`): the S4D kernel alone (H=128, N=64, forward and
backward), computed with the blocked generation the layers use against the
plain H x N x L Vandermonde product (`block_size=1`), in one process per
backend, with each length's ratio printed; and the share of an S4D training
step (the stack of part 1) that the blocked kernels of its layers take.

On a GPU (JAX or PyTorch seeing one) the memory column is the device's
peak allocation, weights included, rather than the growth of the
process's resident set. `--one-process` cuts the process and import
start-ups, which dominate a short GPU lease: under JAX one child times all
lengths of a family (its peak is then the child's over its lengths in
ascending order: JAX cannot start a new one); under PyTorch and
TensorFlow one child times every family and length, starting a new peak
for each. On a CPU only a child's first memory is comparable.
`--deadline S` reports the children not started within S seconds as not
run, and `--json-out` appends every result as a JSON line.
`--jit-compile true` compiles our models' steps (`torch.compile` under
PyTorch, XLA under TensorFlow; the `jit_compile` hyperparameter).

Runs that fail (out of memory, timeout) are reported as such, not hidden,
with the exception's message.
"""

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lra_keras.models.families import FAMILIES  # noqa: E402 (no backend)
from lra_keras.presets.lra import LRA_MODELS  # noqa: E402 (no backend)

BACKENDS = ("jax", "tensorflow", "torch")
MODELS = tuple(FAMILIES)  # every registered family
# Per-family sizes of the benchmark stack (a family not listed: its
# ListOps paper row).
SIZES = dict(
    transformer=dict(num_heads=4, intermediate_dim=256),
    s4d=dict(state_dim=64),
    # A kernel as long as the input, as state-spaces/s4's S4Block (l_max
    # None); ListOps's row trains C~ for kernels of 2048.
    s4=dict(state_dim=64, kernel_length=None, C_parameterization="c"),
    dlr=dict(state_dim=256),
    s5=dict(state_dim=64, num_blocks=4),
    lru=dict(state_dim=64),
    # A kernel as long as the input (the ListOps row folds it at 2048:
    # longer inputs are refused).
    rtf=dict(state_dim=64, truncation=None),
    # Chunks of 1024, as MEGA's Image and Pathfinder configurations: full
    # attention would make MEGA quadratic like the Transformer.
    mega=dict(key_dim=64, intermediate_dim=256, ffn_intermediate_dim=256,
              ema_dim=16, chunk_size=1024),
    # MEGALODON at MEGA's sizes and chunks; the code's 32 norm groups.
    megalodon=dict(key_dim=64, intermediate_dim=256,
                   ffn_intermediate_dim=256, ema_dim=16, chunk_size=1024,
                   norm_groups=32),
    gmlp=dict(intermediate_dim=256, num_kernel_channels=2),
    conv=dict(intermediate_dim=256, kernel_size=31),
    # LRA's xformers with the Transformer's heads, MLP and head width, no
    # class token (their ListOps rows take LRA's 8 heads, MLP 1024, a class
    # token and a head of 1024); the rest of their rows as they are
    # (dropout 0.1 and, since 4d855bc, LRA's dropout 0.1 on the attention
    # weights where its code drops them; no attention biases, the
    # Performer's 2 features)
    **{model: dict(num_heads=4, intermediate_dim=256, cls_token=False,
                   pooling="mean", head_hidden_dim=None,
                   **({"sparse_cls_token": False}
                      if model == "sparse_transformer" else {}))
       for model in LRA_MODELS},
)


def _rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _accelerator():
    """`(name, peak_mib, reset)` of the process's accelerator, or None
    on a CPU: its peak allocated memory so far and a function that starts
    a new peak (JAX has none: its peak is the process's)."""
    import keras

    if keras.backend.backend() == "jax":
        import jax

        device = jax.local_devices()[0]
        if device.platform != "gpu":
            return None
        return (device.device_kind,
                lambda: device.memory_stats()["peak_bytes_in_use"] / 2**20,
                None)
    if keras.backend.backend() == "torch":
        import torch

        if not torch.cuda.is_available():
            return None
        return (torch.cuda.get_device_name(),
                lambda: torch.cuda.max_memory_allocated() / 2**20,
                torch.cuda.reset_peak_memory_stats)
    import tensorflow as tf

    if not tf.config.list_logical_devices("GPU"):
        return None
    return (tf.config.experimental.get_device_details(
                tf.config.list_physical_devices("GPU")[0]).get(
                    "device_name", "GPU"),
            lambda: tf.config.experimental.get_memory_info("GPU:0")[
                "peak"] / 2**20,
            lambda: tf.config.experimental.reset_memory_stats("GPU:0"))


def child_model(model, length, tokens, hidden, layers, steps,
                dtype_policy="float32", jit_compile="auto", padded=True):
    """One training step's time and memory, as a dict. `padded=False`:
    the blocks get no padding mask, as on the tasks without padding
    (`build_classifier(padded=False)`)."""
    from lra_keras.models import dtype_policy_scope

    with dtype_policy_scope(dtype_policy):
        return _child_model(model, length, tokens, hidden, layers, steps,
                            jit_compile, padded)


def child_models(models, lengths, *args):
    """`child_model` of each of `models` at each of `lengths` in turn,
    printing a RESULT line for each as it finishes. A measurement that
    raises (out of memory) gets an error line and the next one runs: a
    later one loses nothing."""
    import gc

    import keras

    for model in models:
        for length in lengths:
            try:
                result = child_model(model, length, *args)
            except Exception as error:  # reported, as a failed child's
                result = {"error": _error_message(
                    f"{type(error).__name__}: {error}")}
            print("RESULT " + json.dumps(dict(result, length=length,
                                              model=model)), flush=True)
            keras.backend.clear_session()
            gc.collect()
            if keras.backend.backend() == "torch":
                import torch

                if torch.cuda.is_available():
                    torch.cuda.empty_cache()


def stack_hparams(model, length, hidden, layers):
    """The benchmarked stack's row: the family's ListOps row at `length`,
    `hidden` wide and `layers` deep (imports no backend)."""
    from lra_keras.hparams import get_hparams

    # padded_length=None: the S5 and LRU ListOps rows pad every batch to
    # 2048 positions (S5's loader), which a longer length cannot take
    return get_hparams("listops", model, hidden_dim=hidden,
                       num_layers=layers, sequence_length=length,
                       padded_length=None, **SIZES.get(model, {}))


def stack_and_batch(model, length, hidden, layers, batch, padded=True):
    """(the benchmarked stack, a batch of `batch` rows of L random tokens,
    every position real, its labels): the family's classifier at
    `stack_hparams`, with or without its padding mask (`padded`)."""

    from lra_keras.models import build_classifier
    from lra_keras.models import classifier_kwargs

    hp = stack_hparams(model, length, hidden, layers)
    net = build_classifier(**dict(classifier_kwargs(hp), padded=padded))
    return (net, *random_batch(batch, length))


def random_batch(batch, length):
    """(inputs, labels): `batch` rows of L random ListOps-sized tokens,
    every position real, and their labels (seeded: the same every call)."""
    import numpy as np

    rng = np.random.default_rng(0)
    x = {
        "token_ids": rng.integers(1, 17, size=(batch, length)).astype(
            "int32"),
        "padding_mask": np.ones((batch, length), bool),
    }
    return x, rng.integers(0, 10, size=(batch,))


def _child_model(model, length, tokens, hidden, layers, steps,
                 jit_compile="auto", padded=True):
    batch = max(1, tokens // length)
    net, x, y = stack_and_batch(model, length, hidden, layers, batch,
                                padded)
    return train_steps(net, x, y, steps, jit_compile)


def optimizer_and_loss():
    """(optimizer, loss) of the benchmarked training step: AdamW at
    1e-4 and the sparse cross-entropy of logits, as every stack here and
    in `step_memory.py` trains."""
    import keras

    return (keras.optimizers.AdamW(1e-4),
            keras.losses.SparseCategoricalCrossentropy(from_logits=True))


def train_steps(net, x, y, steps, jit_compile="auto"):
    """`net`'s training step on the batch `x, y` (`x["token_ids"]` (batch,
    L)): the median of `steps` timed `train_on_batch` calls after an
    untimed one, and the memory they took, as a dict."""

    batch, length = x["token_ids"].shape
    optimizer, loss = optimizer_and_loss()
    net.compile(optimizer=optimizer, loss=loss, jit_compile=jit_compile)
    accelerator = _accelerator()
    if accelerator and accelerator[2]:
        accelerator[2]()
    before = _rss_mib()
    start = time.perf_counter()
    net.train_on_batch(x, y)
    compile_s = time.perf_counter() - start
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        net.train_on_batch(x, y)
        times.append(time.perf_counter() - start)
    step = sorted(times)[len(times) // 2]
    if accelerator:  # the device's peak allocation, weights included
        device, memory = accelerator[0], accelerator[1]()
    else:  # the growth of the process's peak resident set
        device, memory = "cpu", _peak_mib() - before
    return dict(step_s=step, tokens_per_s=batch * length / step,
                memory_mib=memory, batch=batch, device=device,
                compile_s=compile_s, params=net.count_params())


def _timed(fn, repeats, best=False):
    """Seconds of `fn()`: the median of `repeats` timed calls after an
    untimed one (compilation, warm-up), or with `best` the fastest."""
    fn()  # compile
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) if best else sorted(times)[len(times) // 2]


def _grad_runner(loss_fn, weights):
    """A callable that runs loss_fn's gradient w.r.t. `weights`, compiled."""
    import keras

    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        step = jax.jit(jax.grad(loss_fn))
        return lambda: jax.block_until_ready(step(weights))
    if backend == "tensorflow":
        import tensorflow as tf

        @tf.function(jit_compile=True)
        def step():
            with tf.GradientTape() as tape:
                tape.watch(weights)
                loss = loss_fn(weights)
            return tape.gradient(loss, weights)

        return lambda: [g.numpy() for g in step()]
    import torch

    def run():
        ws = [w.detach().requires_grad_(True) for w in weights]
        torch.autograd.grad(loss_fn(ws), ws)

    return run


def child_kernel(length, block_size, hidden, state_dim, repeats):
    """Forward + backward of the S4D kernel alone."""
    import keras

    from lra_keras.layers import S4D
    from lra_keras.layers.ssm_kernels import vandermonde_kernel

    layer = S4D(state_dim=state_dim, causal=False)
    layer.build((None, None, hidden))
    # The kernel's own weights (not D or the output projection).
    variables = [w for w in layer.trainable_weights
                 if w.path.split("/")[-1].startswith(("ssm_", "C_"))]
    weights = [w.value for w in variables]

    def loss_fn(ws):
        (c_re, c_im), (z_re, z_im) = _stateless_discretize(
            layer, variables, ws)
        k = vandermonde_kernel(c_re, c_im, z_re, z_im, length,
                               block_size=block_size)
        return keras.ops.sum(k**2)

    before = _rss_mib()
    step = _timed(_grad_runner(loss_fn, weights), repeats)
    return dict(step_s=step, memory_mib=_peak_mib() - before)


def _stateless_discretize(layer, variables, weights):
    from keras import StatelessScope

    mapping = list(zip(variables, weights))
    with StatelessScope(state_mapping=mapping):
        return layer.discretize()


def run_child(args, backend, extra, timeout, script=None):
    """Runs `script` (this file, in `--child` mode, by default) with
    `extra` under `backend`; its last RESULT line as a dict (also when
    the child failed after printing it), or an error."""
    rows = run_child_results(args, backend, extra, timeout, script)
    results = [row for row in rows if "error" not in row]
    return results[-1] if results else rows[-1]


def run_backends(args, extra, script):
    """{backend: `run_child`'s dict} for each of `args.backends` in turn,
    each printed as it ends; `script` in `--child` mode under each."""
    results = {}
    for backend in args.backends:
        results[backend] = run_child(args, backend, extra, args.timeout,
                                     script=script)
        print(f"{backend}: {results[backend]}", flush=True)
    return results


def run_child_results(args, backend, extra, timeout, script=None):
    """Every RESULT line of the child as a dict, in order, then an error
    dict if it did not end well (a timeout, or a crash: out of memory)."""
    cmd = ([sys.executable, script, *extra] if script
           else [sys.executable, __file__, "--child", *extra])
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                              timeout=timeout)
        stdout, stderr, error = proc.stdout, proc.stderr, None
        if proc.returncode in (-9, 137):
            error = "killed (out of memory)"
        elif proc.returncode:
            error = "failed"
    except subprocess.TimeoutExpired as timed_out:
        stdout, stderr = (_text(timed_out.stdout), _text(timed_out.stderr))
        error = f"timeout > {timeout}s"
    results = [json.loads(line[7:]) for line in stdout.splitlines()
               if line.startswith("RESULT ")]
    if error == "failed":
        error = _error_message(stderr or stdout)
    if not error and not results:
        error = "no RESULT line"
    return results + ([{"error": error}] if error else [])


def _error_message(text):
    """The last exception line of a traceback and the line after it (Keras
    puts the message there), else the last line."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
             for line in text.strip().splitlines() if line.strip()] or ["?"]
    found = [i for i, line in enumerate(lines)
             if re.match(r"^[\w.]*(Error|Exception)\b.*:", line)]
    if not found:
        return lines[-1][:200]
    return " ".join(lines[found[-1]:found[-1] + 2])[:200]


def _text(output):
    if isinstance(output, bytes):
        return output.decode(errors="replace")
    return output or ""


def _fmt_ratio(value, base):
    if not base or value is None:
        return "   -  "
    return f"{value / base:6.2f}"


VERSIONED = ("keras", "jax", "jaxlib", "tensorflow", "torch")
# The vector extensions a table's header names (`machine_note`).
CPU_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_tile")


def machine_note():
    """The machine a table was measured on, for its header: the CPU's
    model and which of `CPU_FLAGS` it has (from /proc/cpuinfo, where
    there is one), and the installed versions of Keras and the backends.
    Ratios move between machines: on a 2-core AVX-512 / AMX Xeon the
    PyTorch reference Transformer ran 1.5x faster than on the machine of
    the table before, and ours under JAX and TensorFlow fell from 1.15x
    and 1.01x of it to 0.51x and 0.56x at L = 1024, the same code
    (docs/results/reference_speed_chunked_recurrence_cpu/)."""
    from importlib import metadata

    cpu, flags = "CPU unknown", ()
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
    except OSError:
        info = ""
    for line in info.splitlines():
        if line.startswith("model name") and cpu == "CPU unknown":
            cpu = line.split(":", 1)[1].strip()
        elif line.startswith("flags") and not flags:
            have = set(line.split(":", 1)[1].split())
            flags = tuple(f for f in CPU_FLAGS if f in have)
    versions = []
    for name in VERSIONED:
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} absent")
    return (f"{cpu} ({' '.join(flags) or 'none of ' + ' '.join(CPU_FLAGS)}"
            f"), {', '.join(versions)}")


def models_table(args):
    print(f"Measured on: {machine_note()}.")
    print(f"Training step of a {args.layers}-block stack, width "
          f"{args.hidden}, {args.tokens} tokens per batch, "
          f"{args.dtype_policy}{_jit_note(args)}{_mask_note(args)}; "
          "ratios vs. the "
          "rotary Transformer (same backend, same L). Memory: on a CPU "
          "the growth of the process's peak resident set, on a GPU the "
          "device's peak allocation (weights included"
          + ("; JAX's peak is the child process's, over its lengths in "
             "ascending order" if args.one_process else "") + ").",
          flush=True)
    started = time.monotonic()
    results = {}
    for backend in args.backends:
        for models, lengths in _child_groups(args, backend):
            left = (None if args.deadline is None
                    else args.deadline - (time.monotonic() - started))
            if left is not None and left < 0:
                for model in models:
                    for length in lengths:
                        _print_row(args, results, backend, length, model,
                                   {"error": "not run (deadline)"})
                continue
            extra = ["--mode", "model", "--model", *models,
                     "--lengths", *map(str, lengths), "--tokens",
                     str(args.tokens), "--hidden", str(args.hidden),
                     "--layers", str(args.layers), "--steps",
                     str(args.steps), *model_flags(args)]
            timeout = args.timeout * len(lengths) * len(models)
            if left is not None and len(models) > 1:
                # a child of many models stops at the deadline (with a
                # minute's grace): what it finished by then is kept
                timeout = min(timeout, int(left) + 60)
            rows = run_child_results(args, backend, extra, timeout)
            done = {(row.get("model", models[0]), row["length"]): row
                    for row in rows if "length" in row}
            for model in models:
                for length in lengths:
                    _print_row(args, results, backend, length, model,
                               done.get((model, length), rows[-1]))
    return results


def _child_groups(args, backend):
    """`(models, lengths)` of each child: one per model and length; with
    `--one-process`, one per model (JAX, whose peak memory cannot be
    started anew) or one for every model (PyTorch, TensorFlow)."""
    if not args.one_process:
        return [([m], [n]) for m in args.models for n in args.lengths]
    lengths = sorted(args.lengths)
    if backend == "jax":
        return [([m], lengths) for m in args.models]
    return [(list(args.models), lengths)]


def _print_row(args, results, backend, length, model, result):
    results[(backend, length, model)] = result
    record_json(args, result, backend=backend, length=length, model=model)
    if "error" in result:
        print(f"{backend:10s} L={length:6d} {model:11s} "
              f"failed: {result['error']}", flush=True)
        return
    base = results.get((backend, length, "transformer")) or {}
    r_step = _fmt_ratio(result["step_s"], base.get("step_s"))
    r_mem = _fmt_ratio(result["memory_mib"], base.get("memory_mib"))
    gpu = result.get("device", "cpu") != "cpu"
    print(
        f"{backend:10s} L={length:6d} {model:11s} "
        f"B={result['batch']:3d} step {result['step_s']:8.4f} s "
        f"({r_step}x)  {result['tokens_per_s']:9.0f} tok/s"
        f"  mem {'' if gpu else '+'}{result['memory_mib']:7.0f} MiB "
        f"({r_mem}x)  compile {result['compile_s']:5.1f} s",
        flush=True,
    )


def kernel_study(args):
    print("S4D kernel generation, forward + backward, H=128, N=64 (32 "
          "complex modes), 2 directions: blocked vs. plain Vandermonde "
          "(block_size=1) in the same command.")
    for backend in args.backends:
        for length in args.lengths:
            row = {}
            for name, block in (("plain", 1), ("blocked", 0)):
                extra = ["--mode", "kernel", "--length", str(length),
                         "--block-size", str(block), "--steps",
                         str(args.steps)]
                row[name] = run_child(args, backend, extra, args.timeout)
            plain, blocked = row["plain"], row["blocked"]
            if "error" in plain or "error" in blocked:
                print(f"{backend:10s} L={length:6d} plain={plain} "
                      f"blocked={blocked}")
                continue
            extra = ["--mode", "model", "--model", "s4d", "--lengths",
                     str(length), "--tokens", str(args.tokens), "--hidden",
                     "128", "--layers", str(args.layers), "--steps",
                     str(args.steps)]
            step = run_child(args, backend, extra, args.timeout)
            share = (
                f"{args.layers * blocked['step_s'] / step['step_s']:.0%}"
                if "error" not in step else step["error"]
            )
            print(
                f"{backend:10s} L={length:6d} plain {plain['step_s']:.4f} s "
                f"+{plain['memory_mib']:.0f} MiB | blocked "
                f"{blocked['step_s']:.4f} s +{blocked['memory_mib']:.0f} MiB"
                f" | time x{blocked['step_s'] / plain['step_s']:.3f}"
                f" | kernels of {args.layers} layers: {share} of an S4D "
                "training step",
                flush=True,
            )


def record_json(args, result, **where):
    """Appends `result`, with `where` and the command's dtype policy and
    `--jit-compile`, as a JSON line to `--json-out` when given."""
    if args.json_out:
        with open(args.json_out, "a") as f:
            f.write(json.dumps(dict(
                result, **where, dtype_policy=args.dtype_policy,
                jit_compile=args.jit_compile,
                padded=not args.unpadded)) + "\n")


def jit_value(flag):
    """`--jit-compile`'s "auto", "true" or "false" as `model.compile`
    takes it."""
    return {"auto": "auto", "true": True, "false": False}[flag]


def _jit_note(args):
    return ("" if args.jit_compile == "auto"
            else f", jit_compile={args.jit_compile}")


def model_flags(args):
    """The child's flags of how our model is built and compiled:
    `--dtype-policy`, `--jit-compile` and `--unpadded` or `--padded`
    (named either way: the two benchmarks' defaults differ)."""
    return ["--dtype-policy", args.dtype_policy,
            "--jit-compile", args.jit_compile,
            "--unpadded" if args.unpadded else "--padded"]


def _mask_note(args):
    return (", the blocks without a padding mask (--unpadded)"
            if args.unpadded else "")


def add_session_options(parser, one_process_help, padded=True):
    """`--one-process`, `--deadline`, `--json-out` and `--jit-compile`:
    what a short GPU lease needs of a benchmark; and `--unpadded` /
    `--padded`, whether our blocks get a padding mask, `padded` by
    default."""
    parser.add_argument("--jit-compile", default="auto",
                        choices=("auto", "true", "false"),
                        help="our models' `model.compile(jit_compile=)`: "
                        "true is torch.compile under PyTorch, XLA under "
                        "TensorFlow")
    parser.add_argument("--one-process", action="store_true",
                        help=one_process_help)
    parser.add_argument("--deadline", type=float, default=None,
                        help="seconds: children not started by then are "
                        "reported as not run")
    parser.add_argument("--json-out", default=None,
                        help="append every result as a JSON line here")
    mask = parser.add_mutually_exclusive_group()
    mask.add_argument("--unpadded", dest="unpadded", action="store_true",
                      help="our blocks get no padding mask, as on the "
                      "tasks without padding (Image, Pathfinder, Path-X)"
                      + ("" if padded else " (the default)"))
    mask.add_argument("--padded", dest="unpadded", action="store_false",
                      help="our blocks get an all-ones padding mask, as "
                      "on ListOps" + (" (the default)" if padded else ""))
    parser.set_defaults(unpadded=not padded)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backends", nargs="*", default=list(BACKENDS))
    parser.add_argument("--models", nargs="*", default=list(MODELS))
    parser.add_argument("--lengths", nargs="*", type=int,
                        default=[1024, 4096, 16384])
    parser.add_argument("--tokens", type=int, default=16384)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--kernel-study", action="store_true")
    add_session_options(
        parser, "for a GPU: one child for every model and length "
        "(PyTorch, TensorFlow) or per model (JAX), less start-up and "
        "import time; JAX's peak memory is then the child's, and on a CPU "
        "only a child's first memory is comparable")
    parser.add_argument("--dtype-policy", default="float32",
                        help="Keras dtype policy of the models: float32, "
                        "mixed_bfloat16 or mixed_float16")
    # child-only arguments
    parser.add_argument("--child", action="store_true",
                        help=argparse.SUPPRESS)
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    parser.add_argument("--model", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--length", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--block-size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        if args.mode == "model":
            child_models(args.model, args.lengths, args.tokens,
                         args.hidden, args.layers, args.steps,
                         args.dtype_policy, jit_value(args.jit_compile),
                         not args.unpadded)
            return
        result = child_kernel(args.length, args.block_size or None, 128,
                              64, args.steps)
        print("RESULT " + json.dumps(result), flush=True)
        return
    if "transformer" in args.models:  # the baseline runs first
        args.models = ["transformer"] + [
            m for m in args.models if m != "transformer"]
    if args.kernel_study:
        kernel_study(args)
    else:
        models_table(args)


if __name__ == "__main__":
    main()
