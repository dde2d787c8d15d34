"""Our S4D or S4 ListOps model side by side with the S4 authors' PyTorch code.

    python benchmarks/reference_parity.py --s4-repo /tmp/s4ref
        [--family {s4d,s4}] [--hidden-dim 32] [--num-layers 2]
        [--state-dim 64] [--length 256] [--batch-size 4] [--seeds 5]
        [--dt-transforms softplus exp] [--parts a b c] [--l-max L]

    for b in jax tensorflow torch; do KERAS_BACKEND=$b taskset -c 0 \\
        python benchmarks/reference_parity.py --s4-repo /tmp/s4ref \\
        --family s4; done

`--s4-repo` is a checkout of state-spaces/s4 at commit d27bdf9 (the
commit of `lra_keras.presets.s4`), e.g. `git -C <clone> archive d27bdf9
src configs | tar -x -C /tmp/s4ref`. Its modules are imported from there,
never copied: the backbone `SequenceModel`
(`src/models/sequence/backbones/model.py`) of `S4Block`s
(`src/models/sequence/modules/s4block.py`) whose `FFTConv` takes the
kernel of `--family`, the `nn.Embedding` encoder and the
`SequenceDecoder` (`src/tasks/decoders.py`, mode "pool", `use_lengths`).
Their settings are composed from the checkout's YAML files as hydra
would: `configs/model/base.yaml`, `configs/model/s4.yaml`,
`configs/model/layer/s4.yaml`, then `configs/experiment/lra/
s4-lra-listops.yaml` (`configs/pipeline/imdb.yaml` for the decoder,
`configs/optimizer/adamw.yaml` for the optimizer), with the sizes of the
command line and the kernel:
  s4d (the default): `mode: diag` (`SSMKernelDiag`, S4D-LegS);
  s4: the config's own `mode: nplr` (`SSMKernelDPLR` in
      `src/models/sequence/kernels/ssm.py`), `init: legs`, `rank: 1`,
      `n_ssm: ${..d_model}` (one (A, P, B, dt) per channel), `lr: {dt:
      null, A: 0.001, B: 0.001}` (P has A's rate), `wd: 0.0`.
`l_max` is the dataset's 2048 in the config; here it is `--l-max`,
default none (the batch's length). For S4 it is the length the stored C~
is attuned to (see b). It needs torch, einops, omegaconf and hydra-core;
`pytorch_lightning`, which the reference imports only for its logger, is
replaced by a stub when it is not installed.

Ours: `get_hparams("listops", family, ...)` with the same sizes,
`build_classifier`, `make_optimizer` (warmup 0, constant schedule), under
the backend of `KERAS_BACKEND` (one backend per process).

It prints:
  a. the parameter count of every (learning rate, weight decay) group:
     the reference's as its `train.py` `configure_optimizers` (lines
     456-495) forms them from the `_optim` attributes of `Kernel.register`,
     ours from the optimizer's `_use_weight_decay` and rate multipliers;
     and whether every reference tensor lands in the group of the
     variables it converts to.
  b. per `dt_transform` of ours: the reference's weights converted to ours
     (`convert_reference_weights`), then the largest output difference
     relative to the largest output, in inference and in training mode
     (batch statistics, dropout 0), on a full-length and a padded batch,
     and on the padded batch fed to ours with a quarter more columns of
     padding (the reference's as it is: the S4 code pads a batch to its
     longest row, which the preset's `batch_norm_count_padding=
     "longest"` reproduces on the longer batch; S4: while the input fits
     `kernel_length`);
     the BatchNorm running statistics after the training-mode call; the
     loss and weights after one AdamW step on the same batch
     (cross-entropy). The step is compared twice: with the preset's
     `adam_epsilon_style="torch"` (epsilon added after the bias
     correction, as `torch.optim.AdamW` does), and with `"keras"`, Keras's
     own placement (before it), which shows what the placement changes.
     S4: from its first call on, the reference stores and trains C~ = C
     (I - dA^L) in place of C (`SSMKernelDPLR._setup_C`), as ours does
     with the preset's `C_parameterization="c_tilde"` (`kernel_length` =
     the reference's L). The step is compared twice: "reference as is,
     training C~" against ours with "c_tilde" (its C~ from the
     reference's own `_setup_C`), and "reference training C"
     (`reference_training_c`: C~ formed from a trained C inside the
     graph) against ours with "c" (the converter maps C~ back to C for
     the state's own dt, A, P and L); both gated, both with the outputs
     after the step ("forward after it"). Each reference step is also
     taken in float64 (`reference_float64_step`), and each kind of
     weight is judged by `step_rows` against both: the float64 step
     shows how far the reference's own float32 step is from exact
     arithmetic (up to 6e-2 of a step on a few S4 weights whose
     gradients are near Adam's epsilon).
  c. without conversion, over `--seeds` seeds: the initial loss and the
     mean and std of every block's output (and of its S4 layer's) for
     both models on one batch, and the spread of each kind of initial
     weight, so that initialisations can be compared.
  A summary; the exit status is 1 unless a, the forward checks and the
  preset's steps (the preset's dt_transform and epsilon) pass.
"""

import argparse
import contextlib
import copy
import importlib
import os
import re
import sys
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402

from lra_keras.hparams import get_hparams  # noqa: E402
from lra_keras.models import build_classifier  # noqa: E402
from lra_keras.models.builders import classifier_kwargs  # noqa: E402
from lra_keras.training import make_optimizer  # noqa: E402

TOLERANCE = 1e-4  # max |ours - reference| / max |reference|

# === The reference ===


def import_reference(repo):
    """The reference's modules, imported from the checkout `repo`."""
    add_checkout(repo, "--s4-repo", "state-spaces/s4",
                 "src/models/sequence/backbones/model.py")
    # Only src/utils/train.py's logger uses it (`rank_zero_only`).
    stub_missing("pytorch_lightning.utilities", rank_zero_only=lambda f: f)
    import logging

    logging.disable(logging.WARNING)  # the missing CUDA kernels' warnings
    from src.models.sequence.backbones.model import SequenceModel
    from src.tasks.decoders import SequenceDecoder

    return SequenceModel, SequenceDecoder


def reference_config(repo, args):
    """The model, decoder and optimizer settings of s4-lra-listops.yaml,
    composed from the checkout's files in hydra's order, with the S4D
    kernel (`args.family` "s4d", the default) or the config's own NPLR
    kernel ("s4")."""
    from omegaconf import OmegaConf

    def load(path):
        cfg = OmegaConf.load(Path(repo, "configs", path))
        cfg.pop("defaults", None)
        return cfg

    experiment = load("experiment/lra/s4-lra-listops.yaml")
    model = OmegaConf.merge(load("model/base.yaml"), load("model/s4.yaml"))
    model.layer = load("model/layer/s4.yaml")
    model = OmegaConf.merge(model, experiment.model)
    model.merge_with(dict(d_model=args.hidden_dim, n_layers=args.num_layers))
    model.layer.merge_with(dict(d_state=args.state_dim))
    if getattr(args, "family", "s4d") == "s4d":
        # S4D: the diagonal kernel (`kernels/__init__.py`: "diag" ->
        # SSMKernelDiag); `init: legs` stays (S4D-LegS).
        model.layer.merge_with(dict(mode="diag"))
    # S4: `mode: nplr` (SSMKernelDPLR), `rank: 1`, `init: legs` of
    # layer/s4.yaml and the experiment's `n_ssm: ${..d_model}`, as they are.
    root = OmegaConf.create({"model": model})  # for ${model.tie_dropout}
    # `l_max` is the dataset's 2048 there. For S4D it only caps the kernel
    # length; for S4 it is also the length C~ is attuned to (`_setup_C`).
    # None: the batch's length.
    root.model.layer.l_max = getattr(args, "l_max", None)
    # `n_ssm`: the config's ${..d_model} (one set per channel), or the
    # command line's.
    if getattr(args, "num_ssms", None) is not None:
        root.model.layer.n_ssm = args.num_ssms
    model = OmegaConf.to_container(root.model, resolve=True)
    decoder = OmegaConf.merge(load("pipeline/imdb.yaml").decoder,
                              experiment.decoder)
    optimizer = OmegaConf.merge(load("optimizer/adamw.yaml"),
                                experiment.optimizer)
    return (model, OmegaConf.to_container(decoder),
            OmegaConf.to_container(optimizer))


def build_reference(modules, config, vocabulary_size, num_classes):
    """encoder -> backbone -> decoder, as train.py's SequenceLightningModule
    chains them (`forward`, lines 291-305)."""
    import torch

    sequence_model, sequence_decoder = modules
    model_cfg, decoder_cfg, _ = config
    model_cfg = copy.deepcopy(model_cfg)
    for key in ("_name_", "encoder", "decoder"):
        model_cfg.pop(key, None)
    decoder_cfg = {k: v for k, v in decoder_cfg.items() if k != "_name_"}
    return torch.nn.ModuleDict(dict(
        encoder=torch.nn.Embedding(vocabulary_size, model_cfg["d_model"]),
        backbone=sequence_model(**model_cfg),
        # l_output=0: one pooled vector per sequence (classification).
        decoder=sequence_decoder(model_cfg["d_model"], d_output=num_classes,
                                 l_output=0, **decoder_cfg),
    ))


def reference_forward(ref, token_ids, lengths):
    import torch

    tokens = torch.as_tensor(token_ids, dtype=torch.long)
    lengths = torch.as_tensor(lengths, dtype=torch.long)
    x = ref["encoder"](tokens)
    x, _ = ref["backbone"](x, lengths=lengths)
    return ref["decoder"](x, lengths=lengths)


def reference_param_groups(ref, optimizer_cfg):
    """train.py `configure_optimizers` (d27bdf9 lines 456-495): the
    parameters without `_optim` in the optimizer's group, one group more per
    distinct `_optim` dict, each `{**optimizer, **_optim}`."""
    hparams = {k: v for k, v in optimizer_cfg.items() if k != "_name_"}
    all_params = list(ref.parameters())
    groups = [dict(hparams, params=[p for p in all_params
                                    if not hasattr(p, "_optim")])]
    hps = [p._optim for p in all_params if hasattr(p, "_optim")]
    hps = [dict(s) for s in sorted(dict.fromkeys(
        frozenset(hp.items()) for hp in hps))]
    for hp in hps:
        groups.append(dict(hparams, **hp, params=[
            p for p in all_params if getattr(p, "_optim", None) == hp]))
    return groups


def reference_optimizer(ref, optimizer_cfg):
    import torch

    groups = reference_param_groups(ref, optimizer_cfg)
    for group in groups:
        group["betas"] = tuple(group["betas"])
    return torch.optim.AdamW(groups)


# === Ours ===


def our_hparams(args, **overrides):
    if getattr(args, "family", "s4d") == "s4":
        # C~ is attuned to the reference's l_max (None: the batch's length).
        overrides = dict(dict(kernel_length=getattr(args, "l_max", None)
                              or args.length), **overrides)
    return get_hparams(
        "listops", getattr(args, "family", "s4d"), hidden_dim=args.hidden_dim,
        num_layers=args.num_layers, state_dim=args.state_dim,
        sequence_length=args.length, warmup_steps=0, schedule="constant",
        num_ssms=getattr(args, "num_ssms", None), **overrides,
    )


def build_ours(hp):
    return build_classifier(**classifier_kwargs(hp))


def our_param_groups(model, optimizer, learning_rate):
    """(rate, weight decay) of every trainable variable, by path."""
    optimizer.build(model.trainable_variables)
    multipliers = getattr(optimizer, "_rate_multipliers_by_index", None)
    groups = {}
    for variable in model.trainable_variables:
        index = optimizer._get_variable_index(variable)
        rate = learning_rate * (multipliers[index] if multipliers else 1.0)
        decay = (optimizer.weight_decay
                 if optimizer._use_weight_decay(variable) else 0.0)
        groups[variable.path] = (round(float(rate), 12),
                                 round(float(decay), 12))
    return groups


def our_forward(model, token_ids, mask, training):
    logits = model({"token_ids": token_ids, "padding_mask": mask},
                   training=training)
    return keras.ops.convert_to_numpy(logits)


# === The converter ===


def c_tilde_from_c(c, dA, length):
    """C~ = C (I - dA^L) (`_setup_C`), c (channels, H, N/2) complex."""
    half = c.shape[-1]
    c = np.concatenate([c, c.conj()], axis=-1)
    m = np.eye(dA.shape[-1]) - np.linalg.matrix_power(dA, length)
    return np.einsum("chn,hnm->chm", c, m)[..., :half]


def convert_reference_weights(state, num_layers, dt_transform,
                              family="s4d", c_parameterization="c",
                              kernel_length=None, num_ssms=None):
    """The reference's state dict as our variables: {path: array}.

    Per block i (`backbone.layers.i`):
    - `layer.layer.kernel.inv_dt` (H, 1): dt = softplus(inv_dt) (the
      config's `dt_transform: softplus`): our `ssm_log_dt` is inv_dt as it
      is with `dt_transform="softplus"`, log(softplus(inv_dt)) with
      `"exp"`.
    - `kernel.A_real` (S, N/2): A.real = -exp(A_real) (`real_transform`
      exp), our `ssm_log_A_real` as it is; `kernel.A_imag`: A.imag =
      -A_imag (`imag_transform` none), ours `ssm_A_imag = -A_imag`. S =
      `n_ssm` copies repeated over the H channels (`repeat(A, 't n -> (v
      t) n')`): ours holds the S sets as they are with `num_ssms` = S,
      else (one set per channel) the sets repeated so.
    - `kernel.B` (1, S, N/2, 2) and `kernel.C` (2, H, N/2, 2), complex as
      (real, imag) in the last axis: `ssm_B_real/imag` and `C_real/imag`
      (direction 0 causal, 1 the backward kernel, both sides' first axis).
    - `layer.layer.D` (1, H): `D`.
    - `layer.output_linear.0` (Linear(H, 2H), then GLU): `output_dense`,
      kernel transposed.
    - `norm.norm` (BatchNorm1d): gamma, beta, moving mean and variance.
    The embedding is `token_embedding`, the decoder's `output_transform`
    our `logits` layer.

    The NPLR kernel (S4, `SSMKernelDPLR`) has, besides these, `kernel.P`
    (R, S, N/2, 2), A = diag(Lambda) - P P^*: our `ssm_P_real/imag` (rank
    R = 1 only), and the buffer `kernel.l_kernel`. While `l_kernel` is 0
    (a fresh model, before its first call), `kernel.C` is C itself. From
    the first call on it is C~ = C (I - dA^L), L = `l_kernel`
    (`_setup_C`), and our C is C~ (I - dA^L)^{-1}, computed in complex128
    from the state's own dt, A and P (`c_from_c_tilde`).
    """

    def array(name):
        return state[name].detach().cpu().numpy().astype(np.float64)

    out = {"token_embedding/embeddings": array("encoder.weight")}
    used = {"encoder.weight"}
    for i in range(num_layers):
        block = f"backbone.layers.{i}"
        kernel = f"{block}.layer.layer.kernel"
        mixer, norm = f"{family}_mixer_{i}", f"{family}_norm_{i}"
        inv_dt = array(f"{kernel}.inv_dt")[:, 0]  # (H,)
        hidden = inv_dt.shape[0]
        out[f"{mixer}/ssm_log_dt"] = (
            inv_dt if dt_transform == "softplus"
            else np.log(np.logaddexp(inv_dt, 0.0)))

        def channels(x):  # (S, ...) -> (H, ...)
            return np.tile(x, (hidden // x.shape[0],) + (1,) * (x.ndim - 1))

        def sets(x):  # (S, ...) -> ours: (num_ssms or H, ...)
            if num_ssms is None:
                return channels(x)
            if x.shape[0] != num_ssms:
                raise ValueError(f"{kernel}: {x.shape[0]} (A, B) sets, ours "
                                 f"num_ssms={num_ssms}")
            return x

        log_a_real = array(f"{kernel}.A_real")  # (S, N/2)
        a_imag = -array(f"{kernel}.A_imag")
        out[f"{mixer}/ssm_log_A_real"] = sets(log_a_real)
        out[f"{mixer}/ssm_A_imag"] = sets(a_imag)
        b = sets(array(f"{kernel}.B")[0])  # (S or H, N/2, 2)
        out[f"{mixer}/ssm_B_real"], out[f"{mixer}/ssm_B_imag"] = b[..., 0], \
            b[..., 1]
        c = array(f"{kernel}.C")  # (2, H, N/2, 2)
        if f"{kernel}.P" in state:  # NPLR
            p = array(f"{kernel}.P")  # (R, S, N/2, 2)
            if p.shape[0] != 1:
                raise ValueError(f"{kernel}.P: rank {p.shape[0]}; our S4 "
                                 "has rank 1")
            out[f"{mixer}/ssm_P_real"], out[f"{mixer}/ssm_P_imag"] = \
                sets(p[0, ..., 0]), sets(p[0, ..., 1])
            p = channels(p[0])  # (H, N/2, 2)
            length = int(state[f"{kernel}.l_kernel"])
            dA = nplr_bilinear(
                np.logaddexp(inv_dt, 0.0),
                channels(-np.exp(log_a_real) + 1j * a_imag),
                p[None, ..., 0] + 1j * p[None, ..., 1])
            cc = c[..., 0] + 1j * c[..., 1]
            if c_parameterization == "c_tilde":
                if length == 0:
                    cc = c_tilde_from_c(cc, dA, kernel_length)
                elif length != kernel_length:
                    raise ValueError(f"l_kernel {length} != {kernel_length}")
            elif length:
                cc = c_from_c_tilde(cc, dA, length)
            c = np.stack([cc.real, cc.imag], axis=-1)
            used |= {f"{kernel}.P", f"{kernel}.l_kernel"}
        prefix = "C_tilde" if c_parameterization == "c_tilde" else "C"
        out[f"{mixer}/{prefix}_real"] = c[..., 0]
        out[f"{mixer}/{prefix}_imag"] = c[..., 1]
        out[f"{mixer}/D"] = array(f"{block}.layer.layer.D")[0]
        linear = f"{block}.layer.output_linear.0"
        out[f"{mixer}/output_dense/kernel"] = array(f"{linear}.weight").T
        out[f"{mixer}/output_dense/bias"] = array(f"{linear}.bias")
        bn = f"{block}.norm.norm"
        out[f"{norm}/gamma"] = array(f"{bn}.weight")
        out[f"{norm}/beta"] = array(f"{bn}.bias")
        out[f"{norm}/moving_mean"] = array(f"{bn}.running_mean")
        out[f"{norm}/moving_variance"] = array(f"{bn}.running_var")
        used |= {f"{kernel}.{n}" for n in ("inv_dt", "A_real", "A_imag",
                                           "B", "C")}
        used |= {f"{block}.layer.layer.D", f"{linear}.weight",
                 f"{linear}.bias", f"{bn}.num_batches_tracked"}
        used |= {f"{bn}.{n}" for n in ("weight", "bias", "running_mean",
                                       "running_var")}
    out["logits/kernel"] = array("decoder.output_transform.weight").T
    out["logits/bias"] = array("decoder.output_transform.bias")
    used |= {"decoder.output_transform.weight",
             "decoder.output_transform.bias"}
    unused = sorted(set(state) - used)
    if unused:
        raise ValueError(f"Reference tensors without a variable: {unused}")
    return out


def nplr_bilinear(dt, lambda_, p):
    """The reference's dA (H, N, N), complex128, in its basis (x, conj x).

    A = diag(Lambda, conj Lambda) - sum_r p_r p_r^*, p_r = (P_r, conj P_r),
    and dA = (I - dt/2 A)^{-1} (I + dt/2 A): what `_setup_state` builds by
    stepping the identity through `_step_state_linear` (ssm.py, the
    Woodbury form of `_setup_linear`).

    Args:
        dt: (H,). lambda_: (H, N/2) complex. p: (R, H, N/2) complex.
    """
    lam = np.concatenate([lambda_, lambda_.conj()], axis=-1)  # (H, N)
    p = np.concatenate([p, p.conj()], axis=-1)  # (R, H, N)
    eye = np.eye(lam.shape[-1])
    a = lam[..., None] * eye - np.einsum("rhn,rhm->hnm", p, p.conj())
    half = dt[:, None, None] / 2.0  # (H, 1, 1)
    return np.linalg.solve(eye - half * a, eye + half * a)  # (H, N, N)


def c_from_c_tilde(c_tilde, dA, length):
    """C from the reference's C~ = C (I - dA^L) (`_setup_C`): C~ (I -
    dA^L)^{-1}, as its `_setup_step` recovers it (`dC`).

    Args:
        c_tilde: (channels, H, N/2) complex. dA: (H, N, N). length: L.

    Returns:
        (channels, H, N/2) complex128.
    """
    half = c_tilde.shape[-1]
    c_tilde = np.concatenate([c_tilde, c_tilde.conj()], axis=-1)  # (., N)
    m = np.eye(dA.shape[-1]) - np.linalg.matrix_power(dA, length)
    # Row vectors: C = C~ M^{-1}, i.e. M^T C^T = C~^T, per channel h.
    c = np.linalg.solve(np.swapaxes(m, -1, -2)[None],
                        c_tilde[..., None])[..., 0]  # (channels, H, N)
    return c[..., :half]


def reference_tensor_paths(name, family="s4d", c_parameterization="c"):
    """Our variable paths that the reference parameter `name` fills (its C
    our C~ with `c_parameterization="c_tilde"`: the called reference's C
    is C~)."""
    parts = name.split(".")
    leaf = parts[-1]
    if parts[0] == "encoder":
        return ["token_embedding/embeddings"]
    if parts[0] == "decoder":
        return [f"logits/{'kernel' if leaf == 'weight' else 'bias'}"]
    if parts[1] == "norm":  # a pre-norm backbone's final norm
        return [f"final_norm/{'gamma' if leaf == 'weight' else 'beta'}"]
    mixer, norm = f"{family}_mixer_{parts[2]}", f"{family}_norm_{parts[2]}"
    if "kernel" in parts:
        names = dict(inv_dt=["ssm_log_dt"], A_real=["ssm_log_A_real"],
                     A_imag=["ssm_A_imag"], B=["ssm_B_real", "ssm_B_imag"],
                     P=["ssm_P_real", "ssm_P_imag"],
                     C=["C_real", "C_imag"])[leaf]
        if leaf == "C" and c_parameterization == "c_tilde":
            names = ["C_tilde_real", "C_tilde_imag"]
        return [f"{mixer}/{n}" for n in names]
    if leaf == "D":
        return [f"{mixer}/D"]
    if "output_linear" in parts:
        return [f"{mixer}/output_dense/"
                f"{'kernel' if leaf == 'weight' else 'bias'}"]
    return [f"{norm}/{'gamma' if leaf == 'weight' else 'beta'}"]


def load_ours(model, weights):
    missing = [v.path for v in model.variables if v.path not in weights]
    if missing:
        raise ValueError(f"Variables the converter does not fill: {missing}")
    for variable in model.variables:
        variable.assign(weights[variable.path].astype(variable.dtype))


def our_weights(model):
    return {v.path: keras.ops.convert_to_numpy(v).astype(np.float64)
            for v in model.variables}


# === Batches ===


def make_batch(rng, vocabulary_size, batch_size, length, padded):
    """Tokens 1..V-1, suffix padding with id 0 (ListOps's padding id)."""
    lengths = np.full(batch_size, length)
    if padded:
        lengths = rng.integers(length // 2, length + 1, size=batch_size)
        lengths[0] = length
    tokens = rng.integers(1, vocabulary_size, size=(batch_size, length))
    mask = np.arange(length)[None] < lengths[:, None]
    tokens = np.where(mask, tokens, 0).astype("int32")
    labels = rng.integers(0, 10, size=batch_size).astype("int32")
    return tokens, mask, lengths, labels


def relative(ours, ref):
    ours, ref = np.asarray(ours, np.float64), np.asarray(ref, np.float64)
    return float(np.max(np.abs(ours - ref)) / max(np.max(np.abs(ref)),
                                                  1e-30))


def verdict(value, tolerance=TOLERANCE):
    return "ok" if value <= tolerance else "FAIL"


# === Shared by the side-by-side benchmarks ===
# (reference_parity_yctfs.py, _mega.py and _s5.py import these.)


def add_checkout(repo, flag, what, marker):
    """The checkout `repo` (the command line's `flag`), resolved and put
    first on `sys.path`; exits unless it holds the file `marker`."""
    repo = str(Path(repo).resolve())
    if not Path(repo, marker).exists():
        sys.exit(f"{flag} {repo}: no {what} checkout there")
    sys.path.insert(0, repo)
    return repo


def stub_missing(name, **attributes):
    """Unless `name` imports, registers it (and the packages above it) as
    an empty module holding `attributes`: for what a reference imports
    but the compared code never runs."""
    try:
        importlib.import_module(name)
        return
    except ImportError:
        pass
    parent = None
    for part in name.split("."):
        path = f"{parent.__name__}.{part}" if parent else part
        module = sys.modules.setdefault(path, types.ModuleType(path))
        if parent is not None:
            setattr(parent, part, module)
        parent = module
    parent.__dict__.update(attributes)


def benchmark_parser(doc, repo_flag, repo_help, length):
    """The arguments every benchmark takes: the checkout, the sizes, the
    seeds of part c and the parts to run."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument(repo_flag, required=True, help=repo_help)
    parser.add_argument("--hidden-dim", type=int, default=32)
    parser.add_argument("--num-layers", type=int, default=2)
    parser.add_argument("--length", type=int, default=length)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--parts", nargs="+", default=["a", "b", "c"],
                        choices=["a", "b", "c"])
    return parser


def full_and_padded(hp, args):
    """The batches of part b: {"full": batch, "padded": batch}."""
    rng = np.random.default_rng(1234)
    return {name: make_batch(rng, hp["vocabulary_size"], args.batch_size,
                             args.length, padded=name == "padded")
            for name in ("full", "padded")}


def table(header, rows):
    """Prints a markdown table."""
    lines = ["| " + " | ".join(map(str, r)) + " |" for r in (header, *rows)]
    lines.insert(1, "|" + "---|" * len(header))
    print("\n".join(lines))


def check_table(rows):
    """Prints part b's rows (check, difference, result)."""
    table(("check", "max abs diff / max abs reference", "result"), rows)


GROUP_COLUMNS = ("model", "lr", "weight decay", "tensors", "parameters",
                 "what")


def group_rows(who, group_of, sizes):
    """Rows of `GROUP_COLUMNS`, one per (lr, weight decay) of `group_of`
    ({name: key}), highest first; `sizes` is {name: parameter count}."""
    rows = []
    for key in sorted(set(group_of.values()), reverse=True):
        names = [n for n, k in group_of.items() if k == key]
        kinds = sorted({re.split(r"[./]", n)[-1] for n in names})
        rows.append((who, f"{key[0]:g}", f"{key[1]:g}", len(names),
                     sum(sizes[n] for n in names), ", ".join(kinds)))
    return rows


def torch_groups(module, param_groups):
    """{name: (lr, weight decay)} and {name: parameter count} of the
    parameters of the torch `module` in the optimizer's `param_groups`."""
    names = {id(p): n for n, p in module.named_parameters()}
    group_of, sizes = {}, {}
    for group in param_groups:
        key = (round(float(group["lr"]), 12),
               round(float(group["weight_decay"]), 12))
        for p in group["params"]:
            group_of[names[id(p)]], sizes[names[id(p)]] = key, p.numel()
    return group_of, sizes


def our_sizes(model):
    """{path: parameter count} of the trainable variables."""
    return {v.path: int(np.prod(v.shape)) for v in model.trainable_variables}


def report_group_check(mismatched, count):
    """Prints whether every one of the `count` reference tensors lands in
    the group of the variables it converts to; `mismatched` lists those
    that do not. Returns whether all do."""
    print(f"\nEvery reference tensor in the group of the variables it "
          f"converts to: {'yes' if not mismatched else 'NO'} "
          f"({count} tensors)")
    for line in mismatched:
        print("  differs:", line)
    return not mismatched


def loss_row(label, loss, ref_loss):
    """A row comparing our loss with the reference's, and whether they
    agree within `TOLERANCE`."""
    gap = abs(loss - ref_loss) / abs(ref_loss)
    return (f"{label}: loss", f"{gap:.1e}",
            f"{verdict(gap)} ({loss:.7f} vs {ref_loss:.7f})"), gap <= TOLERANCE


def weight_name(path):
    """The kind of a weight by default: the last part of its path."""
    return path.split("/")[-1]


def step_stats(rates, before, after, mine, kind):
    """Per (rate, kind(path)): [the largest |mine - after| in units of
    the rate, how many weights differ by more than 1e-3 of it, of how
    many, the largest |after - before| in the same units]."""
    stats = {}
    for path, rate in rates.items():
        gap = np.abs(mine[path] - after[path]) / rate
        moved = np.abs(after[path] - before[path]) / rate
        entry = stats.setdefault((rate, kind(path)), [0.0, 0, 0, 0.0])
        entry[0] = max(entry[0], float(gap.max()))
        entry[1] += int((gap > 1e-3).sum())
        entry[2] += gap.size
        entry[3] = max(entry[3], float(moved.max()))
    return stats


def close_step(largest, far, total):
    """The verdict on one kind of weight after an optimiser step.

    Adam's first step, lr g / (|g| + eps), is ill-conditioned where |g| is
    near eps: there the float32 rounding of the gradients moves a weight
    by a few hundredths of a step. So every weight must be within 0.1 of
    a step, and at most 0.5% of the kind, or one weight, further than
    1e-3 of one. The one: 0.5% allows no outlier in a kind of fewer than
    200 weights, and on TensorFlow and PyTorch one element of a
    138-element bias whose reference gradient is 6e-8 (6x Adam's epsilon,
    3000x below the kind's median) differs by up to 2e-2 of a step.
    """
    return largest <= 0.1 and far <= max(1, 5e-3 * total)


def within_rounding(ours64, reference64, factor=10.0):
    """Whether our step, `ours64` of a step from the float64 reference's,
    is within 0.1 of a step and within `factor` times the reference's own
    float32 step's distance from it (`reference64`): float32 rounding
    alone, in another order of operations. MEGA's FFN biases under a
    batch norm (TensorFlow, chunks of 32): ours 1.2e-3 of a step from the
    float64 step, the reference's float32 1.6e-4; a wrong formula is
    1e-2 of a step off or more."""
    return ours64 <= min(0.1, factor * max(reference64, 1e-4))


def step_rows(label, rates, before, after, mine, kind=weight_name,
              excused=(), after64=None):
    """Rows comparing our weights after a step (`mine`) with the
    reference's (`after`), per (rate, kind of weight), and the verdict.

    Args:
        label: the rows' prefix, e.g. "step (PyTorch's epsilon)".
        rates: {path: the reference's learning rate}, the unit of a step;
            the paths compared.
        before, after, mine: {path: array}: the weights before the step,
            the reference's after it (converted) and ours after it.
        kind: path -> the name the rows group weights by.
        excused: kinds whose failure is a documented difference, reported
            as "known" and not failing the verdict.
        after64: the reference's step taken in float64, or None. Where the
            reference's own float32 step is not `close_step` to it, float32
            rounding of the gradients decides the comparison (e.g. the
            YCTFS gate at its initial weights, LayerNorm(1 + c) with |c| ~
            1e-6): such a kind is reported as ill-conditioned and not
            failed. A kind that is not `close_step` to the reference's
            float32 step but `within_rounding` of its float64 step passes
            as "ok (rounding)".

    Returns:
        (rows, ok): rows (check, largest difference, result) and whether
        every kind passes but the excused and ill-conditioned.
    """
    stats = step_stats(rates, before, after, mine, kind)
    if after64 is not None:
        ours64 = step_stats(rates, before, after64, mine, kind)
        floor = step_stats(rates, before, after64, after, kind)
    rows, ok = [], True
    for key, (largest, far, total, moved) in sorted(stats.items()):
        rate, name = key
        detail = ""
        if after64 is not None:
            detail = (f"from the float64 reference: ours {ours64[key][0]:.1e}"
                      f", reference float32 {floor[key][0]:.1e}; ")
        if close_step(largest, far, total):
            result = "ok"
        elif name in excused:
            result = "known"
        elif after64 is not None and not close_step(*floor[key][:3]):
            result = "ill-conditioned, not gated"
        elif after64 is not None and within_rounding(ours64[key][0],
                                                     floor[key][0]):
            result = "ok (rounding)"
        else:
            result = "FAIL"
        ok &= result != "FAIL"
        rows.append((f"{label}: {name} (lr {rate:g})",
                     f"{largest:.1e} of a step",
                     f"{result}: {far} of {total} further than 1e-3 step; "
                     f"{detail}the reference moved up to {moved:.2f} step"))
    return rows, ok


def init_batch(hp, args):
    """The batch of part c: full length."""
    return make_batch(np.random.default_rng(4321), hp["vocabulary_size"],
                      args.batch_size, args.length, padded=False)


def hooked_outputs(modules, call):
    """`call()`, without gradients, and by forward hooks the output of
    every torch module of {name: module} (a tuple's first element) as
    numpy: (result, {name: array}), in the order the modules ran."""
    import torch

    captured = {}

    def save(name):
        def hook(module, inputs, output):
            if isinstance(output, tuple):  # (x, state or weights)
                output = output[0]
            captured[name] = output.detach().numpy()
        return hook

    handles = [m.register_forward_hook(save(n)) for n, m in modules.items()]
    try:
        with torch.no_grad():
            result = call()
    finally:
        for handle in handles:
            handle.remove()
    return result, captured


def record(values, what, side, value):
    """Appends `value` to values[what][side] (side "ref" or "ours")."""
    values.setdefault(what, {"ref": [], "ours": []})[side].append(value)


def record_outputs(stats, side, loss_name, logits, labels, outputs):
    """Records into `stats` the loss of `logits` under `loss_name` and the
    mean and std of every output in {name: array}."""
    record(stats, loss_name, side,
           cross_entropy(np.asarray(logits, np.float64), labels))
    for name, x in outputs.items():
        record(stats, f"{name} mean", side, float(x.mean()))
        record(stats, f"{name} std", side, float(x.std()))


def spread(x):
    """(mean, std, min, max) of an array: one entry of `spread_table`."""
    return (float(np.mean(x)), float(np.std(x)), float(np.min(x)),
            float(np.max(x)))


def seeds_table(stats, title="quantity"):
    """Prints {quantity: {side: [value per seed]}}: mean ± sd over seeds
    per side."""
    def cell(values):
        return f"{np.mean(values):.3f} ± {np.std(values):.3f}"

    table((title, "reference", "ours"), [
        (what, cell(sides["ref"]), cell(sides["ours"]))
        for what, sides in stats.items()])


def spread_table(spreads, title="initial weights (seed 0..)"):
    """Prints {kind of weight: {side: [spread per tensor and seed]}}: the
    mean of the means and of the stds, the smallest min, the largest
    max."""
    def cell(values):
        v = np.asarray(values)
        return (f"{v[:, 0].mean():.3g} / {v[:, 1].mean():.3g} "
                f"[{v[:, 2].min():.3g}, {v[:, 3].max():.3g}]")

    table((title, "reference mean / std [min, max]",
           "ours mean / std [min, max]"),
          [(kind, cell(sides["ref"]), cell(sides["ours"]))
           for kind, sides in spreads.items()])


def print_summary(summary, not_gated=""):
    """Prints {check: passed, or (passed, gated)}, `not_gated` after the
    checks not gated; returns the exit status: 1 when a gated check
    failed."""
    print(f"\n## Summary ({keras.backend.backend()})\n")
    failed = False
    for check, result in summary.items():
        passed, gated = result if isinstance(result, tuple) else (result,
                                                                  True)
        print(f"- {check}: {'PASS' if passed else 'FAIL'}"
              + ("" if gated else not_gated))
        failed |= gated and not passed
    return int(failed)


# === a. parameter groups ===


def part_a(args, modules, config, hp):
    import torch

    torch.manual_seed(0)
    ref = build_reference(modules, config, hp["vocabulary_size"],
                          hp["num_classes"])
    print("\n## a. Parameter groups (learning rate, weight decay)\n")
    ref_group_of, ref_sizes = torch_groups(
        ref, reference_param_groups(ref, config[2]))
    model = build_ours(hp)
    ours = our_param_groups(model, make_optimizer(hp, 1),
                            float(hp["learning_rate"]))
    table(GROUP_COLUMNS, group_rows("reference", ref_group_of, ref_sizes)
          + group_rows("ours", ours, our_sizes(model)))
    mismatched = [f"{name} {key} -> {path} {ours[path]}"
                  for name, key in ref_group_of.items()
                  for path in reference_tensor_paths(
                      name, hp["model"], hp.get("C_parameterization", "c"))
                  if ours[path] != key]
    return report_group_check(mismatched, len(ref_group_of))


# === b. converted weights: forward and one step ===


def our_rates(hp):
    """{path: learning rate} of the trainable variables under `hp`."""
    groups = our_param_groups(build_ours(hp), make_optimizer(hp, 1),
                              float(hp["learning_rate"]))
    return {path: rate for path, (rate, _) in groups.items()}


def our_step(model, optimizer, tokens, mask, labels):
    """One `train_on_batch` with `optimizer`: the loss."""
    model.compile(
        optimizer=optimizer,
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    loss = model.train_on_batch(
        {"token_ids": tokens, "padding_mask": mask}, labels)
    return float(np.asarray(loss).reshape(-1)[0])


def reference_step(ref, config, tokens, lengths, labels):
    import torch

    optimizer = reference_optimizer(ref, config[2])
    ref.train()
    logits = reference_forward(ref, tokens, lengths)
    loss = torch.nn.functional.cross_entropy(
        logits, torch.as_tensor(labels, dtype=torch.long))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return float(loss.detach())


@contextlib.contextmanager
def torch_float64():
    """torch's default dtype float64 inside: the tensors a float64
    reference creates in its forward pass are float64 too."""
    import torch

    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


def reference_float64_step(factory, config, tokens, lengths, labels):
    """`reference_step` of `factory()` in float64; the stepped module."""
    with torch_float64():
        module = factory().double()
        reference_step(module, config, tokens, lengths, labels)
    return module


# The two references the S4 step is compared with (S4D has one).
TRAINS_C = "reference training C"
AS_IS = "reference as is, training C~"


def reference_training_c(ref, length):
    """The NPLR reference `ref` (not called yet: `l_kernel` 0), changed in
    place to train C, as ours does, instead of C~.

    Each call forms C~ = C (I - dA^L) from the parameter `C_plain` with
    gradients (the reference's own `_setup_state`, `_setup_linear` and
    `krylov.power`, the last two without their `@torch.no_grad()`, and
    `_setup_C`'s formula), then runs the reference's
    `SSMKernelDPLR.forward` unchanged on it, `l_kernel` = L fixed. Only
    the parameterisation differs from the reference as it is, so this
    isolates what training C~ changes in a step.
    """
    import torch
    from src.models.functional.krylov import power
    from src.models.sequence.kernels import ssm

    def forward(kernel, state=None, rate=1.0, L=None):
        kernel.__dict__["C"] = kernel.C_plain  # `_setup_state` reads dtype
        dA, _ = kernel._setup_state()  # (H, N, N), with gradients
        dA_L = power.__wrapped__(kernel.l_kernel.item(), dA)
        c = ssm._conj(ssm._r2c(kernel.C_plain))  # (C, H, N)
        c_tilde = c - torch.einsum("hmn,chn->chm", dA_L.transpose(-1, -2),
                                   c)
        kernel.__dict__["C"] = ssm._c2r(
            c_tilde[..., :kernel.N].contiguous())
        return ssm.SSMKernelDPLR.forward(kernel, state=state, rate=rate, L=L)

    for kernel in ref.modules():
        if not isinstance(kernel, ssm.SSMKernelDPLR):
            continue
        if kernel.l_kernel.item():
            raise ValueError("reference_training_c: called before")
        c = kernel.C.detach().clone()
        del kernel.C
        kernel.C_plain = torch.nn.Parameter(c)  # no `_optim`, as C
        kernel.l_kernel.fill_(length)
        kernel._setup_linear = types.MethodType(
            ssm.SSMKernelDPLR._setup_linear.__wrapped__, kernel)
        kernel.forward = types.MethodType(forward, kernel)
    return ref


def trained_c_state(state):
    """`reference_training_c`'s state dict in the reference's form."""
    out = {}
    for name, value in state.items():
        if name.endswith(".C_plain"):
            name = name[:-len("_plain")]
        elif name.endswith(".l_kernel"):
            value = value * 0  # C itself
        out[name] = value
    return out


def part_b(args, modules, config, dt_transform):
    import torch

    hp = our_hparams(args, dt_transform=dt_transform)
    family = hp["model"]
    batches = full_and_padded(hp, args)
    torch.manual_seed(0)
    ref = build_reference(modules, config, hp["vocabulary_size"],
                          hp["num_classes"])
    state = copy.deepcopy(ref.state_dict())
    cp = hp.get("C_parameterization", "c")
    conv = dict(c_parameterization=cp,
                kernel_length=hp.get("kernel_length"),
                num_ssms=hp["num_ssms"])
    weights = convert_reference_weights(state, args.num_layers, dt_transform,
                                        family, **conv)
    model = build_ours(hp)
    rows, ok = [], True
    verdicts = {}
    # The S4 code pads each batch to its longest row (`pad_sequence`);
    # the preset's rows take full-length batches and count the padding up
    # to the longest row (`batch_norm_count_padding="longest"`): ours is
    # fed the padded batch with a quarter more columns of padding, the
    # reference the batch as it is. (S4's C~ is attuned to `kernel_length`:
    # not past it, where the reference would convert C~ in place.)
    tokens, mask, lengths, labels = batches["padded"]
    extra = max(1, args.length // 4)
    fed = {}
    if (hp.get("kernel_length") or np.inf) >= args.length + extra:
        fed["padded, fed longer"] = (np.pad(tokens, ((0, 0), (0, extra))),
                                     np.pad(mask, ((0, 0), (0, extra))))
        batches["padded, fed longer"] = batches["padded"]
    for batch_name, (tokens, mask, lengths, labels) in batches.items():
        ours_tokens, ours_mask = fed.get(batch_name, (tokens, mask))
        for mode in ("inference", "training"):
            ref.load_state_dict(state)
            load_ours(model, weights)
            ref.train(mode == "training")
            with torch.no_grad():
                expected = reference_forward(ref, tokens, lengths).numpy()
            got = our_forward(model, ours_tokens, ours_mask,
                              mode == "training")
            value = relative(got, expected)
            note = verdict(value)
            if mode == "training":
                after = convert_reference_weights(
                    ref.state_dict(), args.num_layers, dt_transform, family,
                    **conv)
                mine = our_weights(model)
                stats = max(relative(mine[p], after[p]) for p in after
                            if p.endswith(("moving_mean",
                                           "moving_variance")))
                note += f"; running stats {stats:.1e} {verdict(stats)}"
                value = max(value, stats)
            if (batch_name != "full" and mode == "training"
                    and not hp.get("batch_norm_count_padding")):
                # Known: a BatchNorm of real tokens only
                # (`batch_norm_count_padding=False`) differs.
                note += " (expected: BatchNorm statistics)"
            else:
                ok &= value <= TOLERANCE
            rows.append((f"forward, {mode}, {batch_name} batch",
                         f"{relative(got, expected):.1e}", note))
    # One AdamW step on the full batch: per reference, its loss, weights
    # after the step (ours) and the module itself.
    tokens, mask, lengths, labels = batches["full"]

    def fresh():  # the reference at `state`, not called yet
        module = build_reference(modules, config, hp["vocabulary_size"],
                                 hp["num_classes"])
        module.load_state_dict(state)
        return module

    factories = {None: fresh}
    if family == "s4":
        length = config[0]["layer"]["l_max"] or args.length
        factories = {TRAINS_C: lambda: reference_training_c(fresh(), length),
                     AS_IS: fresh}
    stepped, stepped64 = {}, {}
    for variant, factory in factories.items():
        # The same step also in float64: where the reference's own float32
        # step is off it, rounding decides (`step_rows`).
        module64 = reference_float64_step(factory, config, tokens, lengths,
                                          labels)
        module = factory()
        ref_loss = reference_step(module, config, tokens, lengths, labels)
        after, after64 = module.state_dict(), module64.state_dict()
        if variant == TRAINS_C:
            after, after64 = trained_c_state(after), trained_c_state(after64)
        vconv = dict(conv, c_parameterization="c") if variant == TRAINS_C \
            else conv
        stepped[variant] = (ref_loss, module, convert_reference_weights(
            after, args.num_layers, dt_transform, family, **vconv))
        stepped64[variant] = convert_reference_weights(
            after64, args.num_layers, dt_transform, family, **vconv)
    rates = our_rates(hp)
    torch_label = "PyTorch's epsilon, the preset"
    comparisons = [(None, torch_label, "torch"),
                   (None, "Keras's epsilon", "keras")]
    if family == "s4":
        comparisons = [(TRAINS_C, torch_label, "torch"),
                       (TRAINS_C, "Keras's epsilon", "keras"),
                       (AS_IS, torch_label, "torch"),
                       (AS_IS, "Keras's epsilon", "keras")]
    for variant, label, style in comparisons:
        ref_loss, module, after = stepped[variant]
        if variant is not None:
            label = f"{label}, {variant}"
        vcp = "c" if variant == TRAINS_C else cp
        overrides = {}
        if family == "s4":
            label += f", ours C_parameterization={vcp!r}"
            overrides["C_parameterization"] = vcp
        step_hp = our_hparams(args, dt_transform=dt_transform,
                              adam_epsilon_style=style, **overrides)
        model = build_ours(step_hp)
        rates = our_rates(step_hp)
        start = state
        if vcp == "c_tilde":
            # The reference's own float32 C~ (its first call's `_setup_C`).
            from src.models.sequence.kernels import ssm
            setup = build_reference(modules, config, hp["vocabulary_size"],
                                    hp["num_classes"])
            setup.load_state_dict(state)
            for kernel in setup.modules():
                if isinstance(kernel, ssm.SSMKernelDPLR):
                    kernel._setup_C(conv["kernel_length"])
            start = copy.deepcopy(setup.state_dict())
        weights = convert_reference_weights(
            start, args.num_layers, dt_transform, family,
            **dict(conv, c_parameterization=vcp))
        load_ours(model, weights)
        loss = our_step(model, make_optimizer(step_hp, 1), tokens, mask,
                        labels)
        row, _ = loss_row(f"step ({label})", loss, ref_loss)  # not gated
        # Per kind of weight: its difference in units of the step (lr).
        more, step_ok = step_rows(f"step ({label})", rates, weights, after,
                                  our_weights(model),
                                  after64=stepped64[variant])
        rows += [row] + more
        if variant is not None:
            # What the step's differences do to the outputs (inference).
            module.eval()
            with torch.no_grad():
                expected = reference_forward(module, tokens, lengths).numpy()
            value = relative(our_forward(model, tokens, mask, False),
                             expected)
            step_ok &= value <= TOLERANCE
            rows.append((f"step ({label}): forward after it",
                         f"{value:.1e}", verdict(value)))
        verdicts[f"one step, {label}"] = step_ok
    print(f"\n## b. Converted weights, ours with dt_transform="
          f"{dt_transform!r} ({keras.backend.backend()})\n")
    check_table(rows)
    if family == "s4":
        print(f"\n{AS_IS}: the reference's parameter is C~ = C (I - dA^L) "
              "(ssm.py `_setup_C`), as ours with the preset's "
              "C_parameterization='c_tilde'.\n"
              f"{TRAINS_C}: the reference with C~ formed from C inside the "
              "graph (`reference_training_c`), against ours with 'c'.")
    forward = ("forward" if hp.get("batch_norm_count_padding")
               else "forward (all but padded training)")
    return {forward: ok, **verdicts}


# === c. initialisation, without conversion ===


def reference_probe(ref, tokens, lengths, training):
    modules = {}
    for i, block in enumerate(ref["backbone"].layers):
        modules[f"block {i}"], modules[f"s4 {i}"] = block, block.layer
    ref.train(training)
    logits, captured = hooked_outputs(
        modules, lambda: reference_forward(ref, tokens, lengths))
    return logits.numpy(), captured


def our_probe(model, num_layers, tokens, mask, training, family="s4d"):
    encoder = model.get_layer("encoder")
    names = {}
    for i in range(num_layers):
        names[f"block {i}"] = encoder.get_layer(f"{family}_norm_{i}").output
        names[f"s4 {i}"] = encoder.get_layer(f"{family}_mixer_{i}").output
    probe = keras.Model(encoder.input, names)
    inputs = {"token_ids": tokens, "padding_mask": mask}
    captured = probe(inputs, training=training)
    captured = {k: keras.ops.convert_to_numpy(v) for k, v in captured.items()}
    return our_forward(model, tokens, mask, training), captured


def cross_entropy(logits, labels):
    logits = logits - logits.max(axis=-1, keepdims=True)
    log_p = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    return float(-log_p[np.arange(len(labels)), labels].mean())


def part_c(args, modules, config):
    import torch

    hp = our_hparams(args)
    family = hp["model"]
    tokens, mask, lengths, labels = init_batch(hp, args)
    stats, spreads = {}, {}  # what -> side -> list over seeds
    for seed in range(args.seeds):
        torch.manual_seed(seed)
        ref = build_reference(modules, config, hp["vocabulary_size"],
                              hp["num_classes"])
        keras.utils.set_random_seed(seed)
        model = build_ours(hp)
        converted = convert_reference_weights(
            ref.state_dict(), args.num_layers, hp["dt_transform"], family,
            c_parameterization=hp.get("C_parameterization", "c"),
            kernel_length=hp.get("kernel_length"), num_ssms=hp["num_ssms"])
        mine = our_weights(model)
        for path, ref_value in converted.items():
            kind = re.sub(rf"^{family}_(mixer|norm)_\d+/", r"\1 ", path)
            our_value = mine[path]
            if path.endswith("_dt"):  # compare dt itself
                kind = "mixer dt"
                ref_value, our_value = (
                    np.exp(v) if hp["dt_transform"] == "exp"
                    else np.logaddexp(v, 0.0) for v in (ref_value, our_value))
            record(spreads, kind, "ref", spread(ref_value))
            record(spreads, kind, "ours", spread(our_value))
        for training in (False, True):
            mode = "training" if training else "inference"
            ref_logits, ref_out = reference_probe(ref, tokens, lengths,
                                                  training)
            logits, out = our_probe(model, args.num_layers, tokens, mask,
                                    training, family)
            if training:  # post-norm blocks: batch statistics give 0 / 1
                ref_out, out = {}, {}
            record_outputs(stats, "ref", f"loss, {mode}", ref_logits, labels,
                           ref_out)
            record_outputs(stats, "ours", f"loss, {mode}", logits, labels,
                           {name: out[name] for name in ref_out})
    print(f"\n## c. Initialisation over {args.seeds} seeds, no conversion "
          f"({keras.backend.backend()}); mean ± sd over seeds\n")
    seeds_table(stats)
    print("\nBlock outputs in inference mode (fresh BatchNorm statistics: "
          "x / sqrt(1 + eps)); in training mode both are standardised.\n")
    spread_table(spreads)


def main():
    parser = benchmark_parser(__doc__, "--s4-repo",
                              "checkout of state-spaces/s4 at d27bdf9",
                              length=256)
    parser.add_argument("--family", default="s4d", choices=["s4d", "s4"],
                        help="s4d: the diagonal kernel; s4: the config's "
                        "NPLR kernel")
    parser.add_argument("--l-max", type=int, default=None,
                        help="the reference kernel's l_max (the LRA "
                        "config's: 2048); default: the batch's length")
    parser.add_argument("--state-dim", type=int, default=64)
    parser.add_argument("--num-ssms", type=int, default=None,
                        help="(A, B) sets the channels share: the "
                        "reference's n_ssm and ours num_ssms (the CIFAR "
                        "config's 2); default: one per channel")
    parser.add_argument("--dt-transforms", nargs="+",
                        default=["softplus", "exp"],
                        choices=["softplus", "exp"])
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    modules = import_reference(args.s4_repo)
    config = reference_config(args.s4_repo, args)
    model_cfg, decoder_cfg, optimizer_cfg = config
    print(f"backend {keras.backend.backend()}; reference "
          f"{Path(args.s4_repo).resolve()}: S4Block {model_cfg['layer']}; "
          f"backbone n_layers={model_cfg['n_layers']} d_model="
          f"{model_cfg['d_model']} prenorm={model_cfg['prenorm']} norm="
          f"{model_cfg['norm']} dropout={model_cfg['dropout']} tie_dropout="
          f"{model_cfg['tie_dropout']}; decoder {decoder_cfg}; optimizer "
          f"{optimizer_cfg}; batch {args.batch_size} x {args.length}")
    summary = {}  # check -> (passed, gated)
    if "a" in args.parts:
        summary["a. parameter groups"] = part_a(args, modules, config,
                                                our_hparams(args))
    if "b" in args.parts:
        # Gated: the preset's dt_transform, forward and the preset's step
        # (the step with Keras's epsilon shows what its placement changes).
        preset = our_hparams(args)["dt_transform"]
        for dt_transform in args.dt_transforms:
            for check, passed in part_b(args, modules, config,
                                        dt_transform).items():
                gated = (dt_transform == preset and "Keras's" not in check
                         and "not gated" not in check)
                summary[f"b. dt_transform={dt_transform!r}: {check}"] = (
                    passed, gated)
    if "c" in args.parts:
        part_c(args, modules, config)
    return print_summary(summary)


if __name__ == "__main__":
    sys.exit(main())
