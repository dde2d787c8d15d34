"""Training speed and memory of lra_keras beside the PyTorch references.

    python benchmarks/reference_speed.py --s4-repo PATH [--mega-repo PATH]
        [--ntfs-repo PATH] [--yctfs-repo PATH] [--s5-repo PATH]
        [--rtf-repo PATH]
        [--models s4d s4 transformer mega dlr gmlp s5 ema rtf]
        [--lengths 1024 4096 16384]
        [--backends jax tensorflow torch] [--batch 16 | --tokens 65536]
        [--hidden 128] [--layers 4] [--steps 3]
        [--dtype-policy float32|mixed_bfloat16] [--one-process]
        [--deadline S] [--json-out FILE] [--jit-compile auto|true|false]
        [--rounds N] [--padded]

One configuration on both sides: `--layers` residual blocks of width
`--hidden`, a batch of `--batch` rows of L random tokens (or `--tokens //
L` rows), one training step (forward, backward, AdamW update) timed after
one untimed step. Every position is real and neither side gets a padding
mask: the references take none. `--padded` gives our blocks an all-ones
mask, as on ListOps, and as the README's earlier tables did (it cost
our PyTorch Transformer 0.6-0.9 s of a 12 s step at L = 4096,
docs/results/rounds_xeon). Every measurement runs in its own
subprocess; peak memory is the growth of the process's peak resident
set over its size just before the first step (as `benchmarks/mixers.py`).
Where PyTorch sees a GPU the reference runs there (each step
synchronised) and its memory is the device's peak allocation, weights
included, as ours is there.

`--dtype-policy mixed_bfloat16`: ours under Keras's policy, the reference
under `torch.autocast` to bf16 over fp32 weights. `--one-process` times
all lengths in one child per side, model and backend (on a GPU, start-ups
dominate a short lease; on a CPU only the first length's memory is
comparable). `--rounds N` measures the reference and then ours N times in
turn and prints each cell's median: our ratio as the median of the
rounds' ratios, with their range, so that each ratio pairs measurements
minutes apart (on a 2-core CPU a reference's own tokens/s moved by up to
15% between rounds, docs/results/rounds_xeon). `--deadline S` reports
children not started within S seconds as not run, `--json-out` appends
every measurement as a JSON line, and a SIGTERM (a session script's time
budget) stops the child in flight and prints the rows measured so far.
`--jit-compile true` compiles our steps (`torch.compile` under PyTorch);
the reference stays eager.

The references, imported from the checkouts given on the command line
(nothing of theirs is copied here):
- `s4d`: state-spaces/s4 `models/s4/s4d.py` `S4D` (N = 64) in the stack of
  its `example.py` (`S4Model`: block, dropout, residual, post-LayerNorm),
  after a token embedding, mean-pooled into a linear head;
- `s4`: the same stack with `models/s4/s4.py` `S4Block` (its defaults:
  DPLR kernel, GLU output; N = 64);
- `transformer`: a pre-norm rotary Transformer written here in plain
  PyTorch on `torch.nn.functional.scaled_dot_product_attention` (4 heads,
  feed-forward 256), the fused attention a PyTorch user would call;
- `mega`: facebookresearch/mega's fairseq `LRAModel`, built as
  `reference_parity_mega.py` builds it from the README's ListOps command,
  with MEGA's chunks of 1024, this script's sizes and the command's
  dropout of 0.1, as our ListOps row (`--mega-repo`; the row is left out
  without it);
- `dlr`: IdoAmos/not-from-scratch's `DSS` block with `kernel_type: dlr`
  (`src/models/sequence/ss/dss.py` lines 602-749, `DLRKernel` lines
  406-537; `--ntfs-repo`, a checkout at 3e4b6d9, as
  `reference_parity_dlr.py` takes it) at `configs/model/layer/dlr.yaml`'s
  settings with `dlr-lra-listops.yaml`'s `postact: glu` and
  `bidirectional: true`, N = 256, in the stack of `s4d` (the NTFS
  backbone's post-LayerNorm residual); its kernel by the einsum path, as
  without pykeops;
- `gmlp`: pablomiralles22/long-transformers's model (branch lra-paper,
  `--yctfs-repo`), built as `reference_parity_yctfs.py` builds it from
  its configs: `ModelBuilder`'s embedding, `GMLP` blocks in `mode: conv`
  (a learned kernel of 2L + 1 taps, 2 channels, FFT convolution), the
  classification head, with this script's sizes and intermediate width
  256.

  Both import `omegaconf` (as `reference_parity_dlr.py` and
  `reference_parity_yctfs.py` say): install it into the Python that runs
  this script (`pip install omegaconf`); without it their rows read
  "ModuleNotFoundError: No module named 'omegaconf'".

- `s5`: lindermanlab/S5's JAX/flax `BatchClassificationModel` and its
  jitted `train_helpers.train_step` (`--s5-repo`, a checkout at 3c18fdb),
  built as `reference_parity_s5.py` builds them from
  `bin/run_experiments/run_lra_listops.sh` (`s5/train.py` lines 29-156:
  HiPPO-N blocks, the parallel scan, BatchNorm, the optax groups), with
  this script's width and depth and `mixers.SIZES`'s state of 64 in 4
  blocks. The reference is JAX here, so its child runs under JAX, and it
  needs flax and optax: run the script with the Python of
  `reference_parity_s5.py`'s virtual environment (its children use the
  same interpreter).

- `ema`: fairseq MEGA's `MultiHeadEMA` alone (`fairseq/modules/
  exponential_moving_average.py`; `--mega-repo`), bidirectional, 16
  dimensions, in the stack of `s4d`, beside ours: the same stack of
  `lra_keras.layers.MultiHeadEMA(causal=False)` written in Keras
  (`ema_stack`; no family runs the EMA alone).

- `rtf`: ruke1ire/RTF's `RTF` module (`rtf.py`; `--rtf-repo`, a checkout
  at 1d9e1e5), bidirectional, a kernel as long as the input, its FFT path
  (flashfftconv is a GPU package), then GELU and `Linear(H, 2H)` + GLU (the
  S4 block of its LRA wrapper, as `reference_parity_rtf.py` builds it), N =
  64 and the ListOps row's one denominator, in the `s4d` stack with
  BatchNorms (the row's `norm: batch`).

A model whose checkout is not given is left out, with a line saying so.

lra_keras runs `benchmarks/mixers.py`'s training step of the same family
under each backend, at `mixers.SIZES` (the sizes above). Ratios: our
tokens/s ÷ the reference's (> 1 is faster), our peak memory ÷ the
reference's.
"""

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mixers  # noqa: E402 (benchmarks/mixers.py)

MODELS = ("s4d", "s4", "transformer", "mega", "dlr", "gmlp", "s5", "ema",
          "rtf")
# The optional checkout a model's reference comes from (its argument's
# name); the others need only `--s4-repo`, which is required.
CHECKOUTS = dict(mega="mega_repo", dlr="ntfs_repo", gmlp="yctfs_repo",
                 s5="s5_repo", ema="mega_repo", rtf="rtf_repo")
EMA_DIM = mixers.SIZES["mega"]["ema_dim"]
# The framework of each reference: PyTorch, but for S5's JAX code.
REFERENCE_BACKENDS = dict(s5="jax")
VOCABULARY, CLASSES = 18, 10  # ListOps-sized, as mixers' random tokens


def _reference_stack(layer, hidden, layers, batch_norm=False):
    """`S4Model` of state-spaces/s4 `example.py` (dropout 0, post-norm)
    after a token embedding: the stack its README trains. Its blocks take
    and return (B, H, L), as `S4D`; `batch_norm` swaps its LayerNorms for
    BatchNorms over the channels (the S4 backbone's `norm: batch`)."""
    from torch import nn

    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCABULARY, hidden)
            self.blocks = nn.ModuleList(layer() for _ in range(layers))
            self.norms = nn.ModuleList(
                nn.BatchNorm1d(hidden) if batch_norm else nn.LayerNorm(hidden)
                for _ in range(layers))
            self.head = nn.Linear(hidden, CLASSES)

        def forward(self, tokens):
            x = self.embed(tokens).transpose(-1, -2)  # (B, H, L)
            for block, norm in zip(self.blocks, self.norms):
                z, _ = block(x)
                x = (norm(z + x) if batch_norm else norm(
                    (z + x).transpose(-1, -2)).transpose(-1, -2))
            return self.head(x.mean(dim=-1))

    return Stack()


def _rotary_transformer(hidden, layers, heads=4, ffn=256):
    """A pre-norm rotary Transformer on PyTorch's fused attention."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    def rotate(x, cos, sin):  # (B, heads, L, d), halves rotated together
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
            self.qkv = nn.Linear(hidden, 3 * hidden)
            self.out = nn.Linear(hidden, hidden)
            self.ffn = nn.Sequential(nn.Linear(hidden, ffn), nn.GELU(),
                                     nn.Linear(ffn, hidden))

        def forward(self, x, cos, sin):
            b, length, _ = x.shape
            q, k, v = self.qkv(self.norm1(x)).view(
                b, length, 3, heads, hidden // heads).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(
                rotate(q, cos, sin), rotate(k, cos, sin), v)
            x = x + self.out(a.transpose(1, 2).reshape(b, length, hidden))
            return x + self.ffn(self.norm2(x))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCABULARY, hidden)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.norm = nn.LayerNorm(hidden)
            self.head = nn.Linear(hidden, CLASSES)

        def forward(self, tokens):
            length, half = tokens.shape[1], hidden // heads // 2
            device = tokens.device
            freq = 10000.0 ** (-torch.arange(half, device=device) / half)
            angle = (torch.arange(length, device=device)[:, None]
                     * freq[None, :])
            cos, sin = torch.cos(angle), torch.sin(angle)
            x = self.embed(tokens)
            for block in self.blocks:
                x = block(x, cos, sin)
            return self.head(self.norm(x).mean(dim=1))

    return Model()


class _Classifier:
    """A reference `module` whose logits `logits(tokens)` computes, with
    what the training step asks of an `nn.Module` (`parameters`, `to`)."""

    def __init__(self, module, logits):
        self.module, self.logits = module, logits

    def __call__(self, tokens):
        return self.logits(tokens)

    def parameters(self):
        return self.module.parameters()

    def to(self, device):
        self.module.to(device)
        return self


def _mega(args, length):
    import reference_parity_mega as rpm

    ref = rpm.import_reference(args.mega_repo)
    sizes = argparse.Namespace(
        mega_repo=args.mega_repo, hidden_dim=args.hidden,
        num_layers=args.layers, length=length, truncation=None,
        **{k: mixers.SIZES["mega"][v] for k, v in (
            ("intermediate_dim", "intermediate_dim"),
            ("key_dim", "key_dim"), ("ema_dim", "ema_dim"))},
    )
    # fairseq asserts that chunks divide L; shorter sequences are one chunk
    # (as ours).
    chunk = min(mixers.SIZES["mega"]["chunk_size"], length)
    model_args, _ = rpm.reference_args(ref, sizes, chunk)
    # `reference_args` zeroes the dropout for the parity tests; here both
    # sides train as the ListOps row, whose dropout is the README
    # command's `--dropout 0.1` (`examples/mega/README.lra.md` line 37),
    # one fairseq flag for the blocks and the classifier
    # (`fairseq/models/lra/model.py` lines 51-55). Before, the reference
    # ran without it and ours with it: 13 dropout masks of (16, 1024, 128)
    # a step.
    row = mixers.stack_hparams("mega", length, args.hidden, args.layers)
    if row["dropout"] != row["head_dropout"]:
        raise ValueError("fairseq's MEGA takes one dropout for the blocks "
                         f"and the classifier; the row has {row['dropout']}"
                         f" and {row['head_dropout']}")
    model_args.dropout = row["dropout"]
    hp = dict(vocabulary_size=VOCABULARY, padding_id=0)
    model = rpm.build_reference(ref, model_args, hp)

    def logits(tokens):  # fairseq's LRA model returns the classifier's
        import torch

        lengths = torch.full((tokens.shape[0],), tokens.shape[1],
                             device=tokens.device)
        return rpm.reference_forward(model, tokens, lengths)

    return _Classifier(model, logits)


def _ema(args):
    """fairseq's bidirectional `MultiHeadEMA` in the `s4d` stack."""
    import reference_parity_mega as rpm

    rpm.import_reference(args.mega_repo)
    from fairseq.modules.exponential_moving_average import MultiHeadEMA
    from torch import nn

    class Block(nn.Module):  # (B, H, L) in and out, as the stack's
        def __init__(self):
            super().__init__()
            self.ema = MultiHeadEMA(args.hidden, ndim=EMA_DIM,
                                    bidirectional=True)

        def forward(self, x):
            return self.ema(x.permute(2, 0, 1)).permute(1, 2, 0), None

    return _reference_stack(Block, args.hidden, args.layers)


def ema_stack(length, hidden, layers, padded=True):
    """Ours beside `_ema`: an embedding, `layers` post-norm residual blocks
    of `MultiHeadEMA(causal=False)`, mean pooling, a linear head (the
    `s4d` reference's `S4Model` stack)."""
    import keras

    from lra_keras.layers import LayerNormalization
    from lra_keras.layers import MultiHeadEMA

    tokens = keras.Input((length,), dtype="int32", name="token_ids")
    mask = keras.Input((length,), dtype="bool", name="padding_mask")
    x = keras.layers.Embedding(VOCABULARY, hidden)(tokens)
    for _ in range(layers):
        y = MultiHeadEMA(ema_dim=EMA_DIM, causal=False)(
            x, padding_mask=mask if padded else None)
        x = LayerNormalization()(x + y)
    pooled = keras.layers.GlobalAveragePooling1D()(x)
    logits = keras.layers.Dense(CLASSES)(pooled)
    return keras.Model({"token_ids": tokens, "padding_mask": mask}, logits)


def _child_ours(args, length):
    """One training step of ours at `length` (`mixers.child_model`'s),
    with its live tensors' peak (`_live_mib`) under `--live-memory`."""
    from lra_keras.models import dtype_policy_scope

    batch = _batch(args, length)
    with dtype_policy_scope(args.dtype_policy):
        if args.model == "ema":
            net = ema_stack(length, args.hidden, args.layers,
                            not args.unpadded)
            x, y = mixers.random_batch(batch, length)
        else:
            net, x, y = mixers.stack_and_batch(
                args.model, length, args.hidden, args.layers, batch,
                not args.unpadded)
        result = mixers.train_steps(net, x, y, args.steps,
                                    mixers.jit_value(args.jit_compile))
        return dict(result, **_live_mib(
            args, lambda: net.train_on_batch(x, y)))


def _live_mib(args, step):
    """`{"live_mib": the peak MiB of the tensors one more `step()` holds
    alive}` (`step_memory.torch_live_peak`) under `--live-memory`, when
    the step is PyTorch's, eager (not ours under `--jit-compile true`:
    the watch would see the ops of another step than the one timed), on
    a CPU; else `{}`."""
    import keras

    if not args.live_memory or (args.side == "ours" and (
            keras.backend.backend() != "torch"
            or args.jit_compile == "true")):
        return {}
    if _cuda() is not None:
        return {}
    import step_memory

    return {"live_mib": step_memory.torch_live_peak(step)[0] / 2**20}


def _dlr(args):
    """NTFS's DLR block (`DSS`, `kernel_type: dlr`) in the `s4d` stack."""
    from omegaconf import DictConfig
    from reference_parity_dlr import import_dss

    dss, _ = import_dss(args.ntfs_repo)

    def block():
        # configs/model/layer/dlr.yaml, with dlr-lra-listops.yaml's
        # postact and bidirectional; (B, H, L) in and out as the stack's
        return dss.DSS(
            args.hidden, d_state=mixers.SIZES["dlr"]["state_dim"],
            bidirectional=True, activation="gelu", postact="glu",
            transposed=True, kernel_type="dlr", dt_min=1e-4, dt_max=0.1,
            lr=DictConfig({"Lambda": 1e-4, "Lambda_re": None, "W": 1e-4}),
            Lambda_init="omega", W_scale=None, wd=0, pykeops=False,
            version="", kernel_to_real="real")

    return _reference_stack(block, args.hidden, args.layers)


def _rtf(args, length):
    """ruke1ire/RTF's `RTF` module, GELU and `Linear(H, 2H)` + GLU (the
    block `reference_parity_rtf` compares), in the `s4d` stack with the
    row's BatchNorms."""
    import contextlib
    import io

    from reference_parity_rtf import import_rtf
    from torch import nn
    from torch.nn import functional as F

    with contextlib.redirect_stdout(io.StringIO()):  # its import prints
        rtf = import_rtf(args.rtf_repo)
    sizes = mixers.SIZES["rtf"]
    denominators = mixers.stack_hparams(
        "rtf", length, args.hidden, args.layers)["num_denominators"]

    class Block(nn.Module):  # (B, H, L) in and out, as the stack's
        def __init__(self):
            super().__init__()
            # a kernel as long as the input, as ours (truncation None)
            self.rtf = rtf.RTF(args.hidden, sizes["state_dim"], length,
                               num_a=denominators, bidirectional=True)
            self.linear = nn.Linear(args.hidden, 2 * args.hidden)

        def forward(self, x):
            y = F.gelu(self.rtf(x.transpose(-1, -2)))
            return F.glu(self.linear(y), dim=-1).transpose(-1, -2), None

    return _reference_stack(Block, args.hidden, args.layers,
                            batch_norm=True)


def _gmlp(args, length):
    """long-transformers's gMLP model as `reference_parity_yctfs` builds
    it, at this script's sizes."""
    import reference_parity_yctfs as yctfs

    from lra_keras.hparams import get_hparams

    ref = yctfs.import_reference(args.yctfs_repo)
    repo = Path(args.yctfs_repo).resolve()
    listops = yctfs.module_constants(repo / "src/data_loaders/listops.py")
    sizes = argparse.Namespace(
        hidden_dim=args.hidden, num_layers=args.layers, length=length,
        intermediate_dim=mixers.SIZES["gmlp"]["intermediate_dim"])
    hp = get_hparams("listops", "gmlp", **mixers.SIZES["gmlp"])
    config = yctfs.reference_config(repo, "gmlp", sizes, hp)
    module = yctfs.build_reference(ref, config, listops)

    def logits(tokens):  # the head of `TrainerModule`'s classification task
        import torch

        mask = torch.ones(tokens.shape, device=tokens.device)
        return module.task_classification.head(module.model(tokens, mask),
                                               mask)

    return _Classifier(module, logits)


def build_reference(args, model, length):
    from reference_parity import add_checkout
    from reference_parity import stub_missing

    if model == "mega":
        return _mega(args, length)
    if model == "dlr":
        return _dlr(args)
    if model == "ema":
        return _ema(args)
    if model == "rtf":
        return _rtf(args, length)
    if model == "gmlp":
        return _gmlp(args, length)
    if model == "transformer":
        return _rotary_transformer(args.hidden, args.layers)
    add_checkout(args.s4_repo, "--s4-repo", "state-spaces/s4",
                 "models/s4/s4d.py")
    if model == "s4d":
        from models.s4.s4d import S4D

        return _reference_stack(lambda: S4D(args.hidden, d_state=64),
                                args.hidden, args.layers)
    # s4.py imports pytorch_lightning for one logging decorator.
    stub_missing("pytorch_lightning.utilities",
                 rank_zero_only=lambda fn: fn)
    from models.s4.s4 import S4Block

    return _reference_stack(lambda: S4Block(args.hidden, d_state=64),
                            args.hidden, args.layers)


def _cuda():
    """The CUDA device when PyTorch sees one (the reference then runs
    there, as ours does), else None."""
    import torch

    return torch.device("cuda") if torch.cuda.is_available() else None


def _timed_steps(step, steps):
    """(the first call's seconds, the median of the `steps` calls after
    it) of the training step `step()`, which waits for its device."""
    times = []
    for _ in range(steps + 1):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    rest = sorted(times[1:])
    return times[0], rest[len(rest) // 2]


def _child_reference_s5(args, length):
    """`child_reference` for S5's JAX code: its jitted `train_step` on
    the batch `prep_batch` makes (one-hot tokens, full lengths), the
    state carried from step to step. Memory as `mixers`' JAX children:
    the peak resident set's growth on a CPU, the device's peak on a GPU.
    """
    if args.dtype_policy != "float32":
        raise ValueError("the S5 reference runs in float32 only here")
    import reference_parity_s5 as s5

    ref = s5.import_reference(args.s5_repo)
    sizes = argparse.Namespace(
        hidden_dim=args.hidden, num_layers=args.layers,
        state_dim=mixers.SIZES["s5"]["state_dim"],
        num_blocks=mixers.SIZES["s5"]["num_blocks"])
    config = s5.resized(s5.reference_args(args.s5_repo, ref), sizes)
    batch = _batch(args, length)
    net = s5.Reference(ref, config, CLASSES, length, batch, seed=0)
    rng = np.random.default_rng(0)
    tokens = rng.integers(1, VOCABULARY - 1, (batch, length))
    labels = rng.integers(0, CLASSES, (batch,))
    lengths = np.full((batch,), length)
    device = ref.jax.devices()[0]
    losses = []

    def step():
        loss, net.state = net.step(tokens, lengths, labels)  # float: synced
        ref.jax.block_until_ready(net.state.params)
        losses.append(loss)

    before = mixers._rss_mib()
    compile_s, seconds = _timed_steps(step, args.steps)
    if device.platform == "cpu":
        memory = mixers._peak_mib() - before
    else:
        memory = device.memory_stats()["peak_bytes_in_use"] / 2**20
    return dict(step_s=seconds, tokens_per_s=batch * length / seconds,
                memory_mib=memory, batch=batch, compile_s=compile_s,
                device=device.device_kind, loss=losses[-1])


def reference_training_step(args, length):
    """(the reference's training step at `length`, a function that runs
    one and waits for its device; its batch; the CUDA device or None):
    seeded, with `torch.optim.AdamW` and a cross-entropy loss on random
    tokens, for every model but S5 (`_child_reference_s5`)."""
    import contextlib

    import torch
    from torch.nn import functional as F

    torch.manual_seed(0)
    cuda = _cuda()
    batch = _batch(args, length)
    net = build_reference(args, args.model, length)
    if cuda is not None:
        net = net.to(cuda)
        torch.cuda.reset_peak_memory_stats()
    optimizer = torch.optim.AdamW(list(net.parameters()), lr=1e-4)
    tokens = torch.randint(1, VOCABULARY - 1, (batch, length), device=cuda)
    labels = torch.randint(0, CLASSES, (batch,), device=cuda)
    # Keras's mixed_bfloat16 as PyTorch writes it: fp32 weights, the
    # forward pass's matrix products and convolutions in bf16.
    mixed = args.dtype_policy == "mixed_bfloat16"
    autocast = (torch.autocast("cuda" if cuda is not None else "cpu",
                               dtype=torch.bfloat16) if mixed
                else contextlib.nullcontext())

    def step():
        optimizer.zero_grad(set_to_none=True)
        with autocast:
            loss = F.cross_entropy(net(tokens).float(), labels)
        loss.backward()
        optimizer.step()
        if cuda is not None:
            torch.cuda.synchronize()

    return step, batch, cuda


def child_reference(args, length):
    """One training step of the reference at `length`, as a dict: on a
    CPU, memory is the growth of the peak resident set; on a GPU, the
    device's peak allocation (weights included), as `mixers`."""
    if args.model == "s5":
        return _child_reference_s5(args, length)
    import torch

    step, batch, cuda = reference_training_step(args, length)
    before = mixers._rss_mib()
    compile_s, seconds = _timed_steps(step, args.steps)
    memory = (torch.cuda.max_memory_allocated() / 2**20 if cuda is not None
              else mixers._peak_mib() - before)
    return dict(step_s=seconds, tokens_per_s=batch * length / seconds,
                memory_mib=memory, batch=batch, compile_s=compile_s,
                device=(torch.cuda.get_device_name() if cuda is not None
                        else "cpu"),
                threads=torch.get_num_threads(), **_live_mib(args, step))


def _batch(args, length):
    """`--batch` rows, or `--tokens // L` (at least 1) when given."""
    return max(1, args.tokens // length) if args.tokens else args.batch


def measure(args, side, model, lengths, backend):
    """`{length: result}` of one child timing `lengths` in turn (a length
    that failed, or was not reached, gets the child's error)."""
    extra = ["--side", side, "--model", model,
             "--child-lengths", *map(str, lengths),
             "--batch", str(args.batch), "--hidden", str(args.hidden),
             "--layers", str(args.layers), "--steps", str(args.steps),
             "--s4-repo", str(args.s4_repo), *mixers.model_flags(args)]
    if args.tokens:
        extra += ["--tokens", str(args.tokens)]
    if args.live_memory:
        extra.append("--live-memory")
    for name in CHECKOUTS.values():
        if getattr(args, name, None):
            extra += ["--" + name.replace("_", "-"), str(getattr(args, name))]
    rows = mixers.run_child_results(args, backend, extra,
                                    args.timeout * len(lengths),
                                    script=__file__)
    done = {row["length"]: row for row in rows if "length" in row}
    return {length: done.get(length, rows[-1]) for length in lengths}


def _mask_note(args):
    return (", no padding mask on either side" if args.unpadded else
            ", our blocks with an all-ones padding mask (--padded), the "
            "references without one")


def table(args):
    models = [m for m in args.models
              if m not in CHECKOUTS or getattr(args, CHECKOUTS[m], None)]
    for model in args.models:
        if model not in models:
            flag = "--" + CHECKOUTS[model].replace("_", "-")
            print(f"{model}: left out (its reference needs {flag})")
    size = (f"{args.tokens} tokens a batch (batch = tokens // L)"
            if args.tokens else f"batch {args.batch}")
    print(f"Measured on: {mixers.machine_note()}.")
    print(f"Training step, {args.layers} blocks of width {args.hidden}, "
          f"{size}, {args.dtype_policy}{mixers._jit_note(args)}"
          f"{_mask_note(args)}, "
          f"{os.cpu_count()} CPUs visible; "
          "ratios: ours / reference (tokens/s: > 1 is faster; memory: "
          "< 1 is leaner). Memory: on a CPU the growth of the peak "
          "resident set, on a GPU the device's peak allocation."
          + (f" Each cell: the median of {args.rounds} rounds, each round "
             "the reference and then ours under every backend; ours: the "
             "median of the rounds' ratios (their range in brackets)."
             if args.rounds > 1 else ""),
          flush=True)
    head = ["model", "L", "reference tok/s, MiB"] + [
        f"{b} tok/s ×, mem ×" for b in args.backends]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head), flush=True)
    started = time.monotonic()
    groups = ([sorted(args.lengths)] if args.one_process
              else [[length] for length in args.lengths])
    # A SIGTERM (`timeout` ending a GPU session's budget) stops the child
    # in flight; the rows measured so far are printed, the rest marked.
    stopped, measuring = [], []

    def stop(signum, frame):
        stopped.append(signum)
        if measuring:  # subprocess.run kills its child on the way out
            raise _Stopped

    previous = signal.signal(signal.SIGTERM, stop)

    def timed(side, model, lengths, backend, round_index=0):
        results = None
        if not stopped and (args.deadline is None or time.monotonic()
                            - started <= args.deadline):
            measuring.append(True)
            try:
                results = measure(args, side, model, lengths, backend)
            except _Stopped:
                pass
            finally:
                measuring.clear()
        if results is None:
            why = "stopped (SIGTERM)" if stopped else "not run (deadline)"
            results = {n: {"error": why} for n in lengths}
        where = dict(round=round_index) if args.rounds > 1 else {}
        for n, result in results.items():
            mixers.record_json(args, result, side=side, model=model,
                               length=n, backend=backend, **where)
        return results

    measured = []
    try:
        _rows(args, models, groups, timed, measured)
    finally:
        signal.signal(signal.SIGTERM, previous)
    if args.live_memory:
        _live_table(args, measured)
    return 1 if stopped else None


def _live_table(args, measured):
    """`--live-memory`'s table: each row's live tensors' peak under
    PyTorch, the reference's and ours, and their ratio."""
    print("\nPyTorch on a CPU, the tensors one more step holds alive, at "
          "their peak (`step_memory.torch_live_peak`: what the resident "
          "set's growth holds less the allocator's keeping of freed "
          "blocks); ratio: ours / reference.")
    print("| model | L | reference live MiB | ours live MiB, × |")
    print("|---|---|---|---|")
    for model, length, ref, ours in measured:
        mine = ours.get("torch", {})
        if "live_mib" not in ref or "live_mib" not in mine:
            why = (ref.get("error") or mine.get("error")
                   or "no PyTorch figure")
            print(f"| {model} | {length} | {why} | |")
            continue
        print(f"| {model} | {length} | {ref['live_mib']:,.0f} | "
              f"{mine['live_mib']:,.0f}, "
              f"{mine['live_mib'] / ref['live_mib']:.2f} |")


class _Stopped(Exception):
    """A SIGTERM arrived while a child ran."""


def _rows(args, models, groups, timed, measured):
    """Measures and prints the table's rows, model by model; appends
    (model, length, the reference's result, {backend: ours}) of each to
    `measured`. With `--rounds N` the reference and ours alternate N
    times, so that each ratio pairs measurements minutes apart, which a
    machine's drift moves alike."""
    for model in models:
        for lengths in groups:
            rounds = []
            for index in range(args.rounds):
                round_refs = timed("reference", model, lengths,
                                   REFERENCE_BACKENDS.get(model, "torch"),
                                   index)
                rounds.append((round_refs, {
                    b: timed("ours", model, lengths, b, index)
                    for b in args.backends}))
            for length in lengths:
                refs = [r[length] for r, _ in rounds]
                ours = {b: [o[b][length] for _, o in rounds]
                        for b in args.backends}
                ref = _median_result(refs)
                measured.append((model, length, ref,
                                 {b: _median_result(ours[b])
                                  for b in ours}))
                cells = [model, str(length), _cell(ref, refs)]
                cells += [_ratio_cell(ours[b], refs) for b in args.backends]
                print("| " + " | ".join(cells) + " |", flush=True)


def _median_result(results):
    """One cell's result over its rounds: the first error if a round
    failed, else the median of each figure every round has."""
    for result in results:
        if "error" in result:
            return result
    keys = set.intersection(*(set(r) for r in results))
    return {key: float(np.median([r[key] for r in results]))
            for key in ("tokens_per_s", "memory_mib", "live_mib")
            if key in keys}


def _ratio_cell(mine, refs):
    """ours ÷ the reference, tokens/s and memory: the medians of the
    rounds' ratios, with the range of the tokens/s ratios when there is
    more than one round."""
    ours, ref = _median_result(mine), _median_result(refs)
    if "error" in ours or "error" in ref:  # our error, or ours alone
        return _cell(ours, mine)
    speed = [m["tokens_per_s"] / r["tokens_per_s"]
             for m, r in zip(mine, refs)]
    memory = [m["memory_mib"] / r["memory_mib"] for m, r in zip(mine, refs)]
    spread = (f" ({min(speed):.2f}-{max(speed):.2f})" if len(speed) > 1
              else "")
    return f"{np.median(speed):.2f}{spread}, {np.median(memory):.2f}"


def _cell(result, rounds=()):
    if "error" in result:
        return result["error"]
    rates = [r["tokens_per_s"] for r in rounds]
    spread = (f" ({min(rates):,.0f}-{max(rates):,.0f})" if len(rates) > 1
              else "")
    return (f"{result['tokens_per_s']:,.0f} tok/s{spread}, "
            f"{result['memory_mib']:,.0f} MiB")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--s4-repo", required=True, type=Path,
                        help="a state-spaces/s4 checkout")
    parser.add_argument("--mega-repo", type=Path, default=None,
                        help="a facebookresearch/mega checkout")
    parser.add_argument("--ntfs-repo", type=Path, default=None,
                        help="an IdoAmos/not-from-scratch checkout "
                        "(3e4b6d9), for dlr")
    parser.add_argument("--yctfs-repo", type=Path, default=None,
                        help="a pablomiralles22/long-transformers "
                        "checkout (branch lra-paper), for gmlp")
    parser.add_argument("--rtf-repo", type=Path, default=None,
                        help="a ruke1ire/RTF checkout (1d9e1e5), for rtf")
    parser.add_argument("--s5-repo", type=Path, default=None,
                        help="a lindermanlab/S5 checkout (3c18fdb), for s5 "
                        "(with flax and optax installed)")
    parser.add_argument("--models", nargs="+", default=list(MODELS),
                        choices=MODELS)
    parser.add_argument("--backends", nargs="+", default=list(
        mixers.BACKENDS), choices=mixers.BACKENDS)
    parser.add_argument("--lengths", nargs="+", type=int,
                        default=[1024, 4096, 16384])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=None,
                        help="tokens a batch (batch = tokens // L); "
                        "default: --batch rows at every length")
    parser.add_argument("--dtype-policy", default="float32",
                        choices=("float32", "mixed_bfloat16"),
                        help="ours: the Keras policy; the reference: "
                        "bf16 autocast over fp32 weights")
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument("--rounds", type=int, default=1,
                        help="measure the reference and ours this many "
                        "times, alternating, and report the medians")
    mixers.add_session_options(
        parser, "one child per side, model and backend for all lengths "
        "(on a CPU only the first length's memory is comparable)",
        padded=False)
    parser.add_argument("--live-memory", action="store_true",
                        help="after the table, PyTorch's live tensors' "
                        "peak of one more step, ours and the reference's "
                        "(CPU, eager steps; the allocator's keeping left "
                        "out)")
    parser.add_argument("--side", choices=("ours", "reference"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--child-lengths", nargs="+", type=int,
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, not {args.rounds}")
    if not args.side:
        return table(args)
    for length in args.child_lengths:
        if args.side == "reference":
            result = child_reference(args, length)
        else:
            result = _child_ours(args, length)
        print("RESULT " + json.dumps(dict(result, length=length)),
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
