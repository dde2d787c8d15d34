"""Our S5 ListOps model side by side with the S5 authors' JAX/flax code.

    python benchmarks/reference_parity_s5.py --s5-repo /tmp/s5ref
        [--hidden-dim 32] [--num-layers 2] [--state-dim 32]
        [--num-blocks J] [--length 128] [--batch-size 4] [--seeds 5]

    python -m venv --system-site-packages /tmp/s5env
    /tmp/s5env/bin/pip install flax optax    # check with --dry-run first
    for b in jax tensorflow torch; do KERAS_BACKEND=$b taskset -c 0 \\
        /tmp/s5env/bin/python benchmarks/reference_parity_s5.py \\
        --s5-repo /tmp/s5ref; done

`--s5-repo` is a checkout of lindermanlab/S5 (read at commit 3c18fdb, e.g.
`git -C <clone> archive 3c18fdb | tar -x -C /tmp/s5ref`). Its modules are
imported from there, never copied: `s5/seq_model.py`
(`BatchClassificationModel`: a Dense encoder on one-hot tokens, a
`StackedEncoderModel` of `SequenceLayer`s (`s5/layers.py`), masked mean
pooling, a Dense decoder, log-softmax), `s5/ssm.py` (`S5SSM` via
`init_S5SSM`, ZOH, the parallel scan), `s5/ssm_init.py`
(`make_DPLR_HiPPO`) and `s5/train_helpers.py` (`create_train_state`: the
optax `multi_transform` groups; `train_step`). The model is assembled as
`s5/train.py` lines 29-156 do it (HiPPO-N blocks, `init_S5SSM`, the model's
partial, `create_train_state`; ListOps: `padded`, `in_dim` 20,
`s5/dataloading.py` line 110), from `run_train.py`'s arguments (their
defaults read from its `add_argument` calls) as
`bin/run_experiments/run_lra_listops.sh` sets them, with the sizes of the
command line. `--num-blocks` defaults to the script's block size
(ssm_size_base / blocks = 16 / 8) kept. The inputs are `prep_batch`'s
(`train_helpers.py` lines 277-329): one-hot tokens over `in_dim` (padding
id 0 included) and the lengths.

The reference needs flax and optax; install them into a virtual
environment that sees the system packages, so that pip cannot move the
project's jax (flax 0.12.8 and optax 0.2.8 install beside jax 0.10.2
without touching it). The checkout was written for jax 0.3.5 and flax
0.5.2 (`requirements_cpu.txt`); three names it uses are put back before it
is imported: `jax.numpy.DeviceArray` (an annotation, `s5/ssm.py` line 92)
as `jax.Array`, `jax.tree_leaves` (`train_helpers.py` line 255) as
`jax.tree_util.tree_leaves`, and flax's FrozenDict results (`.unfreeze()`,
`train_helpers.py` line 135) with `flax_return_frozendict`.

Ours: `get_hparams("listops", "s5", ...)` with the same sizes,
`build_classifier`, `make_optimizer` (warmup 0, constant schedule; the
reference's first step runs at its initial rates too), under the backend
of `KERAS_BACKEND` (the reference runs in JAX whatever it is).

It prints the preset's row beside the script's arguments, and the
preset's global rate at a few steps beside the one `s5/train.py` sets
(ungated: its first step runs at the full rate, its cosine counts from
step 0), then:
  a. the parameter count of every (learning rate, weight decay) group:
     the reference's from the optax labels of `create_train_state` (read
     off its optimizer state: which leaves each group's Adam moments hold,
     and the group's injected hyperparameters), ours from the optimizer's
     `_use_weight_decay` and rate multipliers; and whether every reference
     tensor lands in the group of the variables it converts to.
  b. the reference's weights converted to ours
     (`convert_reference_weights`), then the largest difference of the
     log-probabilities (the reference returns log-softmax) relative to the
     largest, in inference and in training mode (batch statistics,
     dropout 0, as the script's `--p_dropout=0`), on a full-length and a
     padded batch; the BatchNorm running statistics after the
     training-mode call; the loss and weights after one optimiser step on
     the same batch (`train_helpers.train_step` against
     `train_on_batch`), with the preset's optimizer and with ours given
     the reference's groups (`reference_group_optimizer`). optax adds
     epsilon after the bias correction, as PyTorch does; with
     `adam_epsilon_style` in the row, the step is compared with the
     preset's style and with Keras's (`"keras"`), else with the config's
     epsilon and with `eps * sqrt(1 - beta_2)`.
  c. without conversion, over `--seeds` seeds (the reference's keys split
     as `s5/train.py` lines 41-42 and 69 split `--jax_seed`): the initial
     loss, the mean and std of the embedded tokens and of every block's
     output and its mixer's (the block's output less its input) on one
     batch, and the spread of each kind of initial weight.

Differences documented in `lra_keras.presets.s5` or the layers are
marked "known" and do not fail the run; any other is a FAIL.
"""

import argparse
import ast
import contextlib
import inspect
import io
import math
import re
import shlex
import sys
import types
from pathlib import Path

import keras
import numpy as np
from reference_parity import GROUP_COLUMNS
from reference_parity import TOLERANCE
from reference_parity import add_checkout
from reference_parity import benchmark_parser
from reference_parity import build_ours
from reference_parity import check_table
from reference_parity import full_and_padded
from reference_parity import group_rows
from reference_parity import init_batch
from reference_parity import load_ours
from reference_parity import loss_row
from reference_parity import our_forward
from reference_parity import our_param_groups
from reference_parity import our_sizes
from reference_parity import our_step
from reference_parity import our_weights
from reference_parity import print_summary
from reference_parity import record
from reference_parity import record_outputs
from reference_parity import relative
from reference_parity import seeds_table
from reference_parity import spread
from reference_parity import spread_table
from reference_parity import step_rows
from reference_parity import table
from reference_parity import verdict

from lra_keras.data.listops import load_listops
from lra_keras.hparams import get_hparams
from lra_keras.optimizers import ScheduledAdamW
from lra_keras.training import make_optimizer
from lra_keras.training import make_schedule

SCRIPT = "bin/run_experiments/run_lra_listops.sh"
# Our variables per tensor of a reference `SequenceLayer` (`layers_i`).
LAYER_TENSORS = {
    "seq/Lambda_re": ("ssm_Lambda_real",),
    "seq/Lambda_im": ("ssm_Lambda_imag",),
    "seq/log_step": ("ssm_log_dt",),
    "seq/B": ("ssm_B_real", "ssm_B_imag"),
    "seq/C": ("C_real", "C_imag"),
    "seq/C1": ("C_real", "C_imag"),
    "seq/C2": ("C_real", "C_imag"),
    "seq/D": ("D",),
    "out2/kernel": ("output_dense/kernel",),
    "out2/bias": ("output_dense/bias",),
}
# Differences that lra_keras documents, by our variable name: reported,
# not failed. (None left: the one-hot encoder's kernel rows and bias are
# the preset's `BiasedEmbedding`, each with its own Adam step.)
KNOWN = {}

# === The reference ===


def import_reference(repo):
    """The reference's modules, imported from the checkout `repo`."""
    add_checkout(repo, "--s5-repo", "lindermanlab/S5", "s5/ssm.py")
    try:
        import flax
        import jax
        import optax
    except ImportError as error:
        sys.exit(f"The reference needs flax and optax ({error}); see the "
                 "docstring for the virtual environment.")
    # Names of jax 0.3.5 / flax 0.5.2 that the checkout uses.
    if not hasattr(jax.numpy, "DeviceArray"):
        jax.numpy.DeviceArray = jax.Array  # s5/ssm.py:92, an annotation
    if not hasattr(jax, "tree_leaves"):
        jax.tree_leaves = jax.tree_util.tree_leaves  # train_helpers.py:255
    flax.config.update("flax_return_frozendict", True)  # .unfreeze()
    from s5 import seq_model
    from s5 import ssm
    from s5 import ssm_init
    from s5 import train_helpers
    from s5.utils.util import str2bool

    return types.SimpleNamespace(
        jax=jax, flax=flax, optax=optax, seq_model=seq_model, ssm=ssm,
        ssm_init=ssm_init, train_helpers=train_helpers, str2bool=str2bool,
        versions=f"jax {jax.__version__}, flax {flax.__version__}, optax "
        f"{optax.__version__}",
    )


def reference_args(repo, ref):
    """`run_train.py`'s arguments as `run_lra_listops.sh` passes them: an
    `argparse.Namespace`."""
    parser = argparse.ArgumentParser()
    kinds = dict(str=str, int=int, float=float, str2bool=ref.str2bool)
    tree = ast.parse(Path(repo, "run_train.py").read_text())
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call)
                and getattr(node.func, "attr", "") == "add_argument"):
            options = {}
            for keyword in node.keywords:
                if keyword.arg == "type":
                    options["type"] = kinds[keyword.value.id]
                elif keyword.arg == "default":
                    options["default"] = ast.literal_eval(keyword.value)
            parser.add_argument(ast.literal_eval(node.args[0]), **options)
    script = Path(repo, SCRIPT).read_text().replace("\\\n", " ")
    return parser.parse_args(shlex.split(script.split("run_train.py", 1)[1]))


def resized(script, args):
    """The script's arguments with the sizes of the command line (by
    default the script's block size, ssm_size_base / blocks, kept)."""
    if args.num_blocks is None:
        args.num_blocks = max(1, args.state_dim * script.blocks
                              // script.ssm_size_base)
    return argparse.Namespace(**{
        **vars(script), "d_model": args.hidden_dim,
        "n_layers": args.num_layers, "ssm_size_base": args.state_dim,
        "blocks": args.num_blocks})


class Reference:
    """The reference classifier and its train state, built as
    `s5/train.py` lines 29-156 build them."""

    def __init__(self, ref, config, num_classes, length, batch_size, seed):
        import jax.numpy as jnp
        from jax.scipy.linalg import block_diag

        self.ref, self.config = ref, config
        self.in_dim = 20  # ListOps (s5/dataloading.py:110)
        ssm_size = config.ssm_size_base
        block_size = int(ssm_size / config.blocks)
        key = ref.jax.random.PRNGKey(seed)
        init_rng, _ = ref.jax.random.split(key, num=2)
        init_rng, _ = ref.jax.random.split(init_rng, num=2)  # train.py:69
        Lambda, _, _, V, _ = ref.ssm_init.make_DPLR_HiPPO(block_size)
        if config.conj_sym:
            block_size, ssm_size = block_size // 2, ssm_size // 2
        Lambda, V = Lambda[:block_size], V[:, :block_size]
        Vc = V.conj().T
        Lambda = (Lambda * jnp.ones((config.blocks, block_size))).ravel()
        V = block_diag(*([V] * config.blocks))
        Vinv = block_diag(*([Vc] * config.blocks))
        ssm = ref.ssm.init_S5SSM(
            H=config.d_model, P=ssm_size, Lambda_re_init=Lambda.real,
            Lambda_im_init=Lambda.imag, V=V, Vinv=Vinv,
            C_init=config.C_init, discretization=config.discretization,
            dt_min=config.dt_min, dt_max=config.dt_max,
            conj_sym=config.conj_sym, clip_eigs=config.clip_eigs,
            bidirectional=config.bidirectional)
        self.model_kwargs = dict(
            ssm=ssm, d_output=num_classes, d_model=config.d_model,
            n_layers=config.n_layers, padded=True,
            activation=config.activation_fn, dropout=config.p_dropout,
            mode=config.mode, prenorm=config.prenorm,
            batchnorm=config.batchnorm, bn_momentum=config.bn_momentum)
        with contextlib.redirect_stdout(io.StringIO()):  # its prints
            self.state = ref.train_helpers.create_train_state(
                self.model_cls, init_rng, True, False, in_dim=self.in_dim,
                bsz=batch_size, seq_len=length,
                weight_decay=config.weight_decay,
                batchnorm=config.batchnorm, opt_config=config.opt_config,
                ssm_lr=config.ssm_lr_base,
                lr=config.lr_factor * config.ssm_lr_base,
                dt_global=config.dt_global)

    def model_cls(self, **kwargs):
        return self.ref.seq_model.BatchClassificationModel(
            **self.model_kwargs, **kwargs)

    def variables(self, state=None):
        state = state or self.state
        return {"params": state.params, "batch_stats": state.batch_stats}

    def inputs(self, tokens, lengths):
        """`prep_batch`: one-hot tokens, float lengths, unit timesteps."""
        jax = self.ref.jax
        x = jax.nn.one_hot(np.asarray(tokens), self.in_dim)
        lengths = jax.numpy.asarray(lengths, "float32")
        return (x, lengths), jax.numpy.ones(np.shape(tokens), "float32")

    def forward(self, variables, tokens, lengths, training):
        """Log-probabilities and the batch statistics after the call."""
        inputs, timesteps = self.inputs(tokens, lengths)
        out, mutated = self.model_cls(training=training).apply(
            variables, inputs, timesteps, mutable=["batch_stats"],
            rngs={"dropout": self.ref.jax.random.PRNGKey(0)})
        variables = dict(variables, batch_stats=mutated["batch_stats"])
        return np.asarray(out), variables

    def step(self, tokens, lengths, labels):
        """One `train_helpers.train_step`: (loss, state after)."""
        inputs, timesteps = self.inputs(tokens, lengths)
        state, loss = self.ref.train_helpers.train_step(
            self.state, self.ref.jax.random.PRNGKey(0), inputs,
            self.ref.jax.numpy.asarray(labels, "float32"), timesteps,
            self.model_cls(training=True), self.config.batchnorm)
        return float(loss), state

    def probe(self, tokens, lengths, training):
        """Log-probabilities and the outputs of the encoder's Dense and of
        every `SequenceLayer`: `BatchClassificationModel`'s vmap
        (seq_model.py:179-184) with an axis for the intermediates."""
        from flax import linen as nn

        probe = nn.vmap(
            self.ref.seq_model.ClassificationModel, in_axes=(0, 0),
            out_axes=0, variable_axes={
                "params": None, "dropout": None, "batch_stats": None,
                "cache": 0, "prime": None, "intermediates": 0},
            split_rngs={"params": False, "dropout": True},
            axis_name="batch",
        )(**self.model_kwargs, training=training)
        layers = (nn.Dense, self.ref.seq_model.SequenceLayer)
        inputs, timesteps = self.inputs(tokens, lengths)
        out, mutated = probe.apply(
            self.variables(), inputs, timesteps,
            capture_intermediates=lambda m, name: (
                isinstance(m, layers) and name == "__call__"),
            mutable=["intermediates", "batch_stats"],
            rngs={"dropout": self.ref.jax.random.PRNGKey(0)})
        inter = mutated["intermediates"]["encoder"]
        outputs = [np.asarray(inter["encoder"]["__call__"][0])]
        outputs += [np.asarray(inter[f"layers_{i}"]["__call__"][0])
                    for i in range(self.config.n_layers)]
        return np.asarray(out), outputs

    def param_groups(self):
        """{flat name: (lr, weight decay)} and the groups in label order:
        the leaves each optax group's Adam moments hold
        (`optax.multi_transform` masks the others), with the group's
        injected hyperparameters."""
        optax, jax = self.ref.optax, self.ref.jax
        groups, group_of = [], {}
        for label, masked in self.state.opt_state.inner_states.items():
            hyper = masked.inner_state.hyperparams
            # float32 hyperparameters, to the digits of the config
            key = tuple(float(f"{float(x):.7g}") for x in (
                hyper["learning_rate"], hyper.get("weight_decay", 0.0)))
            moments = [s.mu for s in masked.inner_state.inner_state
                       if hasattr(s, "mu")]
            if not moments:
                raise ValueError(f"Group {label!r} keeps no Adam moments.")
            leaves = jax.tree_util.tree_flatten_with_path(
                moments[0], is_leaf=lambda x: isinstance(
                    x, optax.MaskedNode))[0]
            names = [flat_name(path) for path, leaf in leaves
                     if not isinstance(leaf, optax.MaskedNode)]
            groups.append((label, key, names))
            group_of.update({name: key for name in names})
        return group_of, groups


def flat_name(path):
    return "/".join(str(getattr(k, "key", k)) for k in path)


def flat_variables(variables):
    """{"params/encoder/layers_0/seq/B": array, ...}."""
    import jax

    leaves = jax.tree_util.tree_flatten_with_path(dict(variables))[0]
    return {flat_name(path): np.asarray(leaf, np.float64)
            for path, leaf in leaves}


# === Ours ===


def our_hparams(args, **overrides):
    return get_hparams(
        "listops", "s5", hidden_dim=args.hidden_dim,
        num_layers=args.num_layers, state_dim=args.state_dim,
        num_blocks=args.num_blocks, sequence_length=args.length,
        warmup_steps=0, schedule="constant", **overrides,
    )


def reference_group_optimizer(hp, model, ref_group_of):
    """Ours with the reference's groups: per variable name, the rate and
    decay of the reference tensors it converts from (one group per name,
    else an error)."""
    peak = float(hp["learning_rate"])
    by_name = {}
    for name, key in ref_group_of.items():
        for path in reference_tensor_paths(name):
            by_name.setdefault(path.split("/")[-1], set()).add(key)
    names = {v.path.split("/")[-1] for v in model.trainable_variables}
    if set(by_name) != names or any(len(k) > 1 for k in by_name.values()):
        raise ValueError(f"No one reference group per name: {by_name}")
    pattern = "(^|/){}($|:)".format
    epsilon = {}
    if "adam_epsilon_style" in hp:
        epsilon["epsilon_style"] = hp["adam_epsilon_style"]
    return ScheduledAdamW(
        learning_rate=peak,
        weight_decay=float(hp["weight_decay"]),
        beta_1=float(hp["adam_beta_1"]), beta_2=float(hp["adam_beta_2"]),
        epsilon=float(hp["adam_epsilon"]), **epsilon,
        rate_multipliers={pattern(re.escape(n)): k[0] / peak
                          for n, (k,) in by_name.items() if k[0] != peak},
        weight_decay_excluded=[pattern(re.escape(n))
                               for n, (k,) in by_name.items() if k[1] == 0],
    )


def our_probe(model, num_layers, tokens, mask, training):
    """Logits, the embedded tokens and every mixer's output."""
    encoder = model.get_layer("encoder")
    names = {"embedding": encoder.get_layer("token_embedding").output}
    for i in range(num_layers):
        names[f"mixer {i}"] = encoder.get_layer(f"s5_mixer_{i}").output
    probe = keras.Model(encoder.input, names)
    captured = probe({"token_ids": tokens, "padding_mask": mask},
                     training=training)
    captured = {k: keras.ops.convert_to_numpy(v) for k, v in captured.items()}
    outputs = [captured["embedding"]]
    for i in range(num_layers):  # dropout 0: block = input + mixer
        outputs.append(outputs[-1] + captured[f"mixer {i}"])
    return our_forward(model, tokens, mask, training), outputs


def log_softmax(logits):
    logits = np.asarray(logits, np.float64)
    logits = logits - logits.max(axis=-1, keepdims=True)
    return logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))


# === The converter ===


def convert_reference_weights(variables, num_layers, vocabulary_size):
    """The reference's variables as ours: {path: array}.

    - `encoder/encoder` (Dense(H) on one-hot tokens over in_dim 20): our
      `token_embedding` (the preset's `BiasedEmbedding`): row i is kernel
      row i, its bias the Dense's bias; the rows past our vocabulary
      (one-hot positions no token of ours takes) are dropped.
    - Per `encoder/layers_i`, our `s5_mixer_i`: `seq/Lambda_re`,
      `Lambda_im` (P/2,) as `ssm_Lambda_real`, `ssm_Lambda_imag`;
      `log_step` (P/2, 1) as `ssm_log_dt` (dt = exp on both sides);
      `B` (P/2, H, 2) (real, imag in the last axis) as `ssm_B_real/imag`;
      `C1`, `C2` (H, P/2, 2) as direction 0 and 1 of `C_real/imag`
      (`C` alone when unidirectional); `D`; `out2` (the half-GLU's Dense,
      kernel (in, out) as Keras's) as `output_dense`; `norm` (flax
      BatchNorm) scale and bias as `s5_norm_i` gamma and beta, its
      `batch_stats` mean and var as the moving statistics.
    - `decoder` as `logits`.
    """
    flat = flat_variables(variables)
    used = set()

    def array(name):
        used.add(name)
        return flat[name]

    kernel = array("params/encoder/encoder/kernel")  # (in_dim, H)
    if kernel.shape[0] < vocabulary_size:
        raise ValueError(f"One-hot width {kernel.shape[0]} < vocabulary "
                         f"{vocabulary_size}")
    out = {"token_embedding/embeddings": kernel[:vocabulary_size],
           "token_embedding/bias": array("params/encoder/encoder/bias")}
    for i in range(num_layers):
        layer = f"params/encoder/layers_{i}"
        seq, mixer, norm = f"{layer}/seq", f"s5_mixer_{i}", f"s5_norm_{i}"
        out[f"{mixer}/ssm_Lambda_real"] = array(f"{seq}/Lambda_re")
        out[f"{mixer}/ssm_Lambda_imag"] = array(f"{seq}/Lambda_im")
        out[f"{mixer}/ssm_log_dt"] = array(f"{seq}/log_step")[:, 0]
        b = array(f"{seq}/B")  # (P/2, H, 2)
        out[f"{mixer}/ssm_B_real"], out[f"{mixer}/ssm_B_imag"] = (
            b[..., 0], b[..., 1])
        cs = ["C1", "C2"] if f"{seq}/C1" in flat else ["C"]
        c = np.stack([array(f"{seq}/{n}") for n in cs])  # (dirs, H, P/2, 2)
        out[f"{mixer}/C_real"], out[f"{mixer}/C_imag"] = c[..., 0], c[..., 1]
        out[f"{mixer}/D"] = array(f"{seq}/D")
        for part in ("kernel", "bias"):
            out[f"{mixer}/output_dense/{part}"] = array(f"{layer}/out2/{part}")
        out[f"{norm}/gamma"] = array(f"{layer}/norm/scale")
        out[f"{norm}/beta"] = array(f"{layer}/norm/bias")
        stats = f"batch_stats/encoder/layers_{i}/norm"
        out[f"{norm}/moving_mean"] = array(f"{stats}/mean")
        out[f"{norm}/moving_variance"] = array(f"{stats}/var")
    out["logits/kernel"] = array("params/decoder/kernel")
    out["logits/bias"] = array("params/decoder/bias")
    unused = sorted(set(flat) - used)
    if unused:
        raise ValueError(f"Reference tensors without a variable: {unused}")
    return out


def reference_tensor_paths(name):
    """Our variable paths that the reference parameter `name` (flat, under
    `params`) fills."""
    parts = name.split("/")
    if parts[0] == "decoder":
        return [f"logits/{parts[-1]}"]
    if parts[1] == "encoder":
        return ["token_embedding/" + {"kernel": "embeddings",
                                      "bias": "bias"}[parts[-1]]]
    index = parts[1].split("_")[-1]
    if parts[2] == "norm":
        return [f"s5_norm_{index}/"
                f"{'gamma' if parts[3] == 'scale' else 'beta'}"]
    return [f"s5_mixer_{index}/{n}" for n in LAYER_TENSORS["/".join(
        parts[2:])]]


def known(path):
    return KNOWN.get(path.split("/")[-1])


# === The preset row beside the script ===


def steps_per_epoch(script):
    """`s5/train.py` line 163: int(training rows / batch), ListOps's
    training rows (the LRA release's, our loader's default)."""
    rows = inspect.signature(load_listops).parameters["num_train"].default
    return int(rows / script.bsz)


def preset_vs_script(script, hp=None):
    """The preset's row (`hp`, by default the paper row) against the
    script's arguments: [(key, ours, theirs, same)]."""
    hp = hp or get_hparams("listops", "s5")
    activation = {"half_glu1": "half_glu", "half_glu2": "half_glu2",
                  "full_glu": "glu", "gelu": None}[script.activation_fn]
    theirs = dict(
        hidden_dim=script.d_model, num_layers=script.n_layers,
        state_dim=script.ssm_size_base, num_blocks=script.blocks,
        C_init=script.C_init, output_activation=activation,
        causal=not script.bidirectional, clip_eigs=script.clip_eigs,
        dt_min=script.dt_min, dt_max=script.dt_max, prenorm=script.prenorm,
        norm="batch" if script.batchnorm else "layer",
        batch_norm_momentum=script.bn_momentum, dropout=script.p_dropout,
        pooling={"pool": "mean", "last": "last"}[script.mode],
        batch_size=script.bsz, epochs=script.epochs,
        learning_rate=script.lr_factor * script.ssm_lr_base,
        ssm_learning_rate=script.ssm_lr_base,
        weight_decay=script.weight_decay,
        dt_learning_rate="global" if script.dt_global else "ssm",
        warmup_steps=steps_per_epoch(script) * script.warmup_end,
        schedule="cosine" if script.cosine_anneal else "constant",
    )
    rows = []
    for key, value in theirs.items():
        ours = hp[key]
        same = (math.isclose(ours, value, rel_tol=1e-9)
                if isinstance(value, float) else ours == value)
        rows.append((key, ours, value, same))
    # Always so in ours: ZOH, conjugate symmetry, no lr floor.
    for key, value, fixed in (("discretization", script.discretization,
                               "zoh"),
                              ("conj_sym", script.conj_sym, True),
                              ("lr_min", script.lr_min, 0.0)):
        rows.append((key, fixed, value, value == fixed))
    rows.append(("opt_config", f"weight_decay_on={hp['weight_decay_on']!r}",
                 script.opt_config, "see a."))
    return rows


def schedule_vs_script(ref, script):
    """The global rate of step k at the preset's sizes: [(k, theirs,
    ours)]. Theirs as `s5/train.py` lines 163-194 and
    `train_helpers.py` lines 49-65 and 342-356 set it: the first step at
    `create_train_state`'s rate, then after step k the rate of step k + 1
    from the epoch's function of k (warmup, then the cosine over
    `epochs - warmup_end` epochs counted from step 0)."""
    helpers = ref.train_helpers
    per_epoch = steps_per_epoch(script)
    warmup, total = per_epoch * script.warmup_end, per_epoch * script.epochs
    peak = script.lr_factor * script.ssm_lr_base

    def theirs(k):
        if k == 0:
            return peak
        step = k - 1
        if step // per_epoch < script.warmup_end:
            return helpers.linear_warmup(step, peak, warmup, script.lr_min)
        if script.cosine_anneal:
            return helpers.cosine_annealing(step, peak, total - warmup,
                                            script.lr_min)
        return peak

    schedule = make_schedule(get_hparams("listops", "s5"), total)
    steps = [0, 1, 2, warmup - 1, warmup, warmup + 1, warmup + 2,
             (total + warmup) // 2, total - warmup, total - warmup + 1,
             total - 1]
    return [(k, float(theirs(k)), float(keras.ops.convert_to_numpy(
        schedule(k))) if callable(schedule) else float(schedule))
        for k in steps]


# === a. parameter groups ===


def part_a(reference, hp):
    print("\n## a. Parameter groups (learning rate, weight decay)\n")
    flat = flat_variables(reference.variables())
    ref_group_of, groups = reference.param_groups()
    rows = [(f"reference ({label})", f"{key[0]:g}", f"{key[1]:g}",
             len(names), sum(flat["params/" + n].size for n in names),
             ", ".join(sorted({n.split("/")[-1] for n in names})))
            for label, key, names in groups]
    model = build_ours(hp)
    learning_rate = float(hp["learning_rate"])
    sizes = our_sizes(model)
    variants = [("ours", make_optimizer(hp, 1), known),
                ("ours, reference groups",
                 reference_group_optimizer(hp, model, ref_group_of),
                 lambda path: None)]
    ok, notes = True, []
    for who, optimizer, excuse in variants:
        ours = our_param_groups(model, optimizer, learning_rate)
        rows += group_rows(who, ours, sizes)
        differs = [(name, key, path, ours[path])
                   for name, key in ref_group_of.items()
                   for path in reference_tensor_paths(name)
                   if ours[path] != key]
        unknown = [d for d in differs if not excuse(d[2])]
        ok &= not unknown
        answer = ("yes" if not differs else "NO" if unknown
                  else "no, only the known differences")
        notes.append(f"\n{who}: every reference tensor in the group of the "
                     f"variables it converts to: {answer} "
                     f"({len(ref_group_of)} tensors)")
        for name, key, path, mine in differs:
            why = excuse(path)
            notes.append(f"  differs: {name} {key} -> {path} {mine}"
                         + (f" (known: {why})" if why else ""))
    table(GROUP_COLUMNS, rows)
    print("\n".join(notes))
    print("\n(parameters: the reference's encoder kernel has in_dim = 20 "
          f"rows and a bias; ours {hp['vocabulary_size']} embedding rows "
          "and the bias: the one-hot positions no token of ours takes are "
          "never trained there)")
    return ok


# === b. converted weights: forward and one step ===


def step_variants(hp):
    """(label, hp overrides, gated) of the steps with the preset's
    groups."""
    if "adam_epsilon_style" in hp:
        return [(f"preset, {hp['adam_epsilon_style']!r} epsilon", {}, True),
                ("Keras's epsilon", dict(adam_epsilon_style="keras"),
                 False)]
    eps, beta_2 = float(hp["adam_epsilon"]), float(hp["adam_beta_2"])
    return [("config eps", {}, False),
            ("eps * sqrt(1 - beta_2)",
             dict(adam_epsilon=eps * math.sqrt(1.0 - beta_2)), True)]


def running_stats_gap(model, after):
    """The largest relative gap of the BatchNorm moving statistics."""
    mine = our_weights(model)
    moving = [p for p in after if "/moving_" in p]
    return max(relative(mine[p], after[p]) for p in moving)


def part_b(args, reference):
    hp = our_hparams(args)
    batches = full_and_padded(hp, args)
    variables = reference.variables()
    weights = convert_reference_weights(variables, args.num_layers,
                                        hp["vocabulary_size"])
    model = build_ours(hp)
    rows, verdicts, ok = [], {}, True
    for batch_name, (tokens, mask, lengths, labels) in batches.items():
        for mode in ("inference", "training"):
            load_ours(model, weights)
            expected, after = reference.forward(
                variables, tokens, lengths, mode == "training")
            got = log_softmax(our_forward(model, tokens, mask,
                                          mode == "training"))
            value = relative(got, expected)
            note = verdict(value)
            if mode == "training":
                gap = running_stats_gap(model, convert_reference_weights(
                    after, args.num_layers, hp["vocabulary_size"]))
                note += f"; running stats {gap:.1e} {verdict(gap)}"
                value = max(value, gap)
            # The reference encodes the padding tokens, its scans (the
            # backward one reaching the real tokens) and its BatchNorm
            # statistics read them: the preset's `read_padding` and
            # `batch_norm_count_padding` do the same. Without them the
            # padded batch differs, as known.
            padding_read = hp.get("read_padding") and (
                mode == "inference" or hp.get("batch_norm_count_padding"))
            if batch_name == "padded" and not padding_read:
                note += " (known: without read_padding and "  \
                        "batch_norm_count_padding the padding is not read)"
            else:
                ok &= value <= TOLERANCE
            rows.append((f"forward, {mode}, {batch_name} batch",
                         f"{relative(got, expected):.1e}", note))
    verdicts["forward" if hp.get("read_padding")
             else "forward (full-length batch)"] = (ok, True)
    # One step on the full batch.
    tokens, mask, lengths, labels = batches["full"]
    ref_loss, state = reference.step(tokens, lengths, labels)
    after = convert_reference_weights(reference.variables(state),
                                      args.num_layers, hp["vocabulary_size"])
    ref_group_of, _ = reference.param_groups()
    # The reference's rate per variable (a step in each kind's units).
    rates = {}
    for name, (rate, _) in ref_group_of.items():
        for path in reference_tensor_paths(name):
            rates[path] = rate
    variants = []
    for label, overrides, gated in step_variants(hp):
        step_hp = our_hparams(args, **overrides)
        variants.append((label, make_optimizer(step_hp, 1), gated,
                         set(KNOWN)))
        if gated:  # the same epsilon, the reference's groups
            variants.append((
                f"{label}, reference groups",
                reference_group_optimizer(step_hp, model, ref_group_of),
                True, set(KNOWN)))
    for label, optimizer, gated, excused in variants:
        load_ours(model, weights)
        loss = our_step(model, optimizer, tokens, mask, labels)
        row, loss_ok = loss_row(f"step ({label})", loss, ref_loss)
        # Per kind of weight: its difference in units of the reference's
        # step (its lr); the `excused` kinds, documented, are "known".
        more, step_ok = step_rows(f"step ({label})", rates, weights, after,
                                  our_weights(model), excused=excused)
        rows += [row] + more
        verdicts[f"one step, {label}"] = (step_ok and loss_ok, gated)
    print(f"\n## b. Converted weights ({keras.backend.backend()})\n")
    check_table(rows)
    return verdicts


# === c. initialisation, without conversion ===


def named_outputs(outputs, mode):
    """{name: array} of the embedded tokens, blocks and mixers."""
    found = {}
    if mode == "inference":
        found["embedded tokens"] = outputs[0]
    for i in range(1, len(outputs)):
        found[f"block {i - 1}, {mode}"] = outputs[i]
        found[f"mixer {i - 1}, {mode}"] = outputs[i] - outputs[i - 1]
    return found


def part_c(args, ref, config):
    hp = our_hparams(args)
    tokens, mask, lengths, labels = init_batch(hp, args)
    # quantity -> side -> one value per seed; kind of weight -> side ->
    # spread per tensor and seed
    stats, spreads, lambda_gap = {}, {}, 0.0
    for seed in range(args.seeds):
        reference = Reference(ref, config, hp["num_classes"], args.length,
                              args.batch_size, seed)
        keras.utils.set_random_seed(seed)
        model = build_ours(hp)
        sides = dict(ref=convert_reference_weights(
            reference.variables(), args.num_layers, hp["vocabulary_size"]),
            ours=our_weights(model))
        for path in sides["ref"]:
            if "Lambda" in path:  # deterministic: HiPPO-N
                lambda_gap = max(lambda_gap, relative(sides["ours"][path],
                                                      sides["ref"][path]))
            kind = re.sub(r"^s5_(mixer|norm)_\d+/", r"\1 ", path)
            for side, values in sides.items():
                record(spreads, kind, side, spread(values[path]))
        for mode in ("inference", "training"):
            ref_logp, ref_out = reference.probe(tokens, lengths,
                                                mode == "training")
            logits, out = our_probe(model, args.num_layers, tokens, mask,
                                    mode == "training")
            # The reference's log-probabilities are logits too.
            record_outputs(stats, "ref", f"loss, {mode}", ref_logp, labels,
                           named_outputs(ref_out, mode))
            record_outputs(stats, "ours", f"loss, {mode}", logits, labels,
                           named_outputs(out, mode))
    print(f"\n## c. Initialisation over {args.seeds} seeds, no conversion "
          f"({keras.backend.backend()}); mean ± sd over seeds\n")
    seeds_table(stats)
    print(f"\nLambda (deterministic, HiPPO-N): largest difference "
          f"{lambda_gap:.1e} relative to the largest |Lambda|.\n")
    spread_table(spreads)


def main():
    parser = benchmark_parser(__doc__, "--s5-repo",
                              "checkout of lindermanlab/S5 (3c18fdb)",
                              length=128)
    parser.add_argument("--state-dim", type=int, default=32)
    parser.add_argument("--num-blocks", type=int, default=None,
                        help="default: the script's block size kept")
    args = parser.parse_args()
    ref = import_reference(args.s5_repo)
    script = reference_args(args.s5_repo, ref)
    config = resized(script, args)
    print(f"backend {keras.backend.backend()}; reference "
          f"{Path(args.s5_repo).resolve()} ({ref.versions}): {SCRIPT} "
          f"with d_model={config.d_model} n_layers={config.n_layers} "
          f"ssm_size_base={config.ssm_size_base} blocks={config.blocks}; "
          f"activation_fn={config.activation_fn} C_init={config.C_init} "
          f"bidirectional={config.bidirectional} prenorm={config.prenorm} "
          f"batchnorm={config.batchnorm} bn_momentum={config.bn_momentum} "
          f"p_dropout={config.p_dropout} opt_config={config.opt_config} "
          f"lr={config.lr_factor * config.ssm_lr_base:g} "
          f"ssm_lr={config.ssm_lr_base:g} weight_decay="
          f"{config.weight_decay:g} dt_global={config.dt_global}; batch "
          f"{args.batch_size} x {args.length}")
    print("\n## The preset row beside the script's arguments\n")
    rows = preset_vs_script(script)
    table(("key", "ours (presets/s5.py)", "run_lra_listops.sh / "
           "run_train.py", "same"),
          [(key, ours, theirs, same if isinstance(same, str)
            else "yes" if same else "NO")
           for key, ours, theirs, same in rows])
    summary = {"preset row = script arguments": (
        all(row[3] is not False for row in rows), True)}
    print("\n## The preset's global rate beside train.py's (preset sizes)"
          "\n")
    rates = [(step, theirs, ours, math.isclose(theirs, ours, rel_tol=1e-5,
                                               abs_tol=1e-12))
             for step, theirs, ours in schedule_vs_script(ref, script)]
    table(("step", "reference", "ours", ""),
          [(step, f"{theirs:.6g}", f"{ours:.6g}",
            "same" if same else "DIFFERS")
           for step, theirs, ours, same in rates])
    summary["schedule = train.py's"] = (all(r[3] for r in rates), False)
    hp = our_hparams(args)
    reference = Reference(ref, config, hp["num_classes"], args.length,
                          args.batch_size, config.jax_seed)
    if "a" in args.parts:
        summary["a. parameter groups (all but the known)"] = (
            part_a(reference, hp), True)
    if "b" in args.parts:
        for check, result in part_b(args, reference).items():
            summary[f"b. {check}"] = result
    if "c" in args.parts:
        part_c(args, ref, config)
    return print_summary(summary, " (not gated)")


if __name__ == "__main__":
    sys.exit(main())
