"""Cross-backend parity and export checks, one process per backend.

The Keras backend is fixed when Keras is imported, so the backends run in
three processes at once (`work`, with `KERAS_BACKEND` set), each of which:

1. builds every case (family x head) from its seed and saves its
   `.weights.h5`, and a `.keras` file for the EXPORTED cases;
2. waits until the other backends have saved theirs;
3. loads the weights saved by *every* backend into its models and records
   the outputs, then takes one optimizer step (the library's compile:
   AdamW, clipping, the multitask and pretraining losses) from the first
   backend's weights on a fixed batch;
4. exports its `.keras` files with `lra_keras.export` (a TensorFlow
   subprocess under JAX and PyTorch).

Then `serve` loads every SavedModel with `tf.saved_model.load` in a process
that imports neither Keras nor lra_keras, as a server would, and calls the
`serve` endpoint.

`tests/test_backend_parity.py` runs them and asserts. To print the parity
table and the export matrix:

    python tests/backend_parity_worker.py all [DIR]     # run, then report
    python tests/backend_parity_worker.py report DIR

`LRA_KERAS_PARITY_FAMILIES=megalodon,mega` restricts the cases to those
families (for checking a new family without the whole matrix; the suite
runs them all).

Only numpy and the family registry (which imports no Keras backend) are
imported at module level: the parent test must not fix a backend.
"""

import json
import os
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np

from lra_keras.models.families import FAMILIES as REGISTRY

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ("jax", "tensorflow", "torch")
# Every registered family (the registry imports no backend), or those
# named in LRA_KERAS_PARITY_FAMILIES.
_ONLY = os.environ.get("LRA_KERAS_PARITY_FAMILIES")
FAMILIES = tuple(f for f in REGISTRY
                 if not _ONLY or f in _ONLY.split(","))

# Tiny models: every family's own architecture keys at small sizes. Dropout
# is off so that a training step is deterministic (each backend draws its
# own dropout masks). Two values keep float32 rounding from deciding the
# comparison: Adam's first step is lr * g / (|g| + eps), so a weight whose
# exact gradient is 0 (an attention key bias under softmax) steps by up to
# lr in the direction of its rounding noise (~1e-9) when eps is PyTorch's
# 1e-8; and the YCTFS gMLP's gate starts at rounding noise (the LayerNorm of
# 1 + a convolution with a N(0, 1e-5^2) kernel, which rounds to 1), so its
# kernel starts at Keras's glorot scale here. The Performer keeps the
# random features saved with the weights (each backend would redraw its
# own in training).
TINY = dict(hidden_dim=8, num_layers=1, num_heads=2, intermediate_dim=16,
            sequence_length=32, state_dim=8, num_blocks=2, key_dim=8, ema_dim=2,
            ffn_intermediate_dim=16, kernel_size=5, num_kernel_channels=2,
            norm_groups=4, chunk_size=None, dropout=0.0, attention_dropout=0.0,
            head_dropout=0.0, layer_dropout=None, warmup_steps=0,
            learning_rate=1e-3,
            ssm_learning_rate=None,
            adam_epsilon=1e-6, kernel_initializer="glorot_uniform",
            feature_redraw=False,
            # Blocks of 8 so that each block-sparse pattern has several
            # blocks in 32 tokens (33 with a class token): at the rows'
            # own sizes (50, 64, a window of 512) the sequence is one
            # block, and the patterns' gathers, BigBird's random table
            # and Sinkhorn's sorting would never be compared.
            local_block_size=8, sparse_block_size=8, sparse_summary_size=2,
            longformer_window=8, bigbird_block_size=8,
            bigbird_random_blocks=1)
BATCH, LENGTH = 4, 32

# The heads, each from the task row that takes the most paths: (task,
# options). `classifier` is one tower with the plain task loss;
# `retrieval_token_head` two towers through one encoder call, with the
# multitask token head ((batch, 2, length, vocabulary)) and loss;
# `causal_pixel_pretrainer` the self-pretraining head on unpadded pixels,
# causal mixers and the L1 loss. Every family takes the classifier and
# the pretrainer (its bidirectional and causal mixers); the retrieval head
# adds no path of a family's own (the towers, the pair features and the
# token head are the builder's), so it runs on RETRIEVAL_FAMILIES: an
# attention, an SSM and the EMA family. On all 21 families it was 21 of the
# 66 cases, about a third of the time each backend spent on outputs and
# steps (JAX 715 s, TensorFlow 611 s, PyTorch 85 s in one run of this
# pass alone, two cores shared by the three).
RETRIEVAL_FAMILIES = ("transformer", "s4d", "mega")
HEADS = {
    "classifier": ("listops", {}),
    "retrieval_token_head": ("retrieval", {"token_head": True}),
    "causal_pixel_pretrainer": ("image", {"pretrain_loss": "l1",
                                          "causal": True}),
}
# Options of the classifier case that take a family's other paths.
CLASSIFIER_OPTIONS = {
    "s4d": {"pooling": "last"},
    "dlr": {"pooling": "max"},
    "mega": {"chunk_size": 8},
    "megalodon": {"chunk_size": 8},
    "conv": {"groups": 2},
}
VARIANTS = {
    "transformer/learned_positions": ("transformer", "listops",
                                      {"position_embedding": "learned"}),
    "transformer/sinusoidal_positions": ("transformer", "listops",
                                         {"position_embedding":
                                          "sinusoidal"}),
    "transformer/token_head": ("transformer", "text", {"token_head": True}),
    # the DLR rows' kernel is the NTFS code's (init="omega"); the layer's
    # own per-channel parameterisation
    "dlr/structured_init": ("dlr", "listops", {"init": "structured"}),
}
VARIANTS = {case: row for case, row in VARIANTS.items() if row[0] in FAMILIES}


def _head_options(family, head, options):
    """A head's options on a family: the classifier's own path options; a
    family that cannot be causal pretrains bidirectionally."""
    options = dict(options)
    if head == "classifier":
        options.update(CLASSIFIER_OPTIONS.get(family, {}))
    if not REGISTRY[family].can_be_causal:
        options.pop("causal", None)
    return options


CASES = {
    **{f"{family}/{head}": (family, task, _head_options(family, head,
                                                        options))
       for family in FAMILIES for head, (task, options) in HEADS.items()
       if head != "retrieval_token_head" or family in RETRIEVAL_FAMILIES},
    **VARIANTS,
}
# The models `run` saves as `.keras` files, exported from every backend:
# every family's classifier; the two-document retrieval head (its own
# signature, the same encoder) for an attention and an SSM family. When
# every family exported both heads, exporting took 208 s of a backend's
# 355 s of work (one run of the suite), before the serving calls.
RETRIEVAL_EXPORTED = tuple(f for f in ("transformer", "s4d")
                           if f in FAMILIES)
EXPORTED = (tuple(f"{family}/classifier" for family in FAMILIES)
            + tuple(f"{family}/retrieval_token_head"
                    for family in RETRIEVAL_EXPORTED))


def _file(case):
    return case.replace("/", "__")


def _case_rng(case):
    return np.random.default_rng(zlib.crc32(case.encode()))


def case_hparams(case):
    """The case's resolved hyperparameters (imports lra_keras.hparams)."""
    from lra_keras.hparams import get_hparams

    family, task, options = CASES[case]
    known = get_hparams(task, family)
    overrides = {k: v for k, v in {**TINY, **options}.items()
                 if k in known}
    if known["schedule"] == "rsqrt":  # LRA's rows: no step at rate 0
        overrides["schedule"] = "constant"
    if overrides.get("causal"):
        # LRA's class tokens read position 0, which no causal mixer lets
        # see the sequence (refused by the schema)
        for key in ("cls_token", "sparse_cls_token"):
            if known.get(key):
                overrides[key] = False
    return get_hparams(task, family, **overrides)


def case_batch(case, hp):
    """Inputs, targets and sample weights of the case, from numpy only."""
    from lra_keras.techniques.masking import denoising_targets

    family, task, options = CASES[case]
    rng = _case_rng(case)
    shape = (BATCH, LENGTH) if hp.get("towers", 1) == 1 else (
        BATCH, 2, LENGTH)
    padding_id = hp.get("padding_id")
    low = 0 if padding_id is None else padding_id + 1
    # The mask token (the last id, where there is one) is not an input.
    token_ids = rng.integers(low, hp["vocabulary_size"] - 1, size=shape)
    mask = np.ones(shape, bool)
    if padding_id is not None:
        mask[1::2, ..., LENGTH - 12:] = False
        token_ids[~mask] = padding_id
    token_ids = token_ids.astype("int32")
    inputs = {"token_ids": token_ids, "padding_mask": mask}
    labels = rng.integers(0, hp["num_classes"], size=BATCH)
    if "pretrain_loss" in options:
        objective = "causal" if options.get("causal") else "masked"
        corrupted, targets, weights = denoising_targets(
            token_ids, task, rng, objective, mask_rate=0.3,
            random_fraction=0.0, pixel_targets=options["pretrain_loss"] == "l1",
        )
        return ({"token_ids": corrupted, "padding_mask": mask}, targets,
                weights)
    if options.get("token_head"):
        corrupted, targets, weights = denoising_targets(
            token_ids, task, rng, "multitask", mask_rate=0.3,
            random_fraction=1 / 3, loss_positions="real",
        )
        return (
            {"token_ids": corrupted, "padding_mask": mask},
            {"logits": labels, "token_logits": targets},
            {"logits": np.ones(BATCH, np.float32),
             "token_logits": weights},
        )
    return inputs, labels, None


def build(case, hp):
    import keras

    from lra_keras.models import build_classifier
    from lra_keras.models import build_pretrainer
    from lra_keras.models import classifier_kwargs
    from lra_keras.models import pretrainer_kwargs

    family, task, options = CASES[case]
    # Without the full garbage collection, which walks every live object
    # of this process (tests/conftest.py, `_fresh_keras_session`).
    keras.utils.clear_session(free_memory=False)
    keras.utils.set_random_seed(zlib.crc32(case.encode()))
    if "pretrain_loss" in options:
        return build_pretrainer(**pretrainer_kwargs(hp))
    return build_classifier(**classifier_kwargs(hp),
                            token_head=options.get("token_head", False))


def _outputs(model, inputs):
    import keras

    out = model(inputs, training=False)
    if isinstance(out, dict):
        return {k: keras.ops.convert_to_numpy(v) for k, v in out.items()}
    return {"output": keras.ops.convert_to_numpy(out)}


def _save_npz(path, arrays):
    tmp = path.with_name(path.name + ".partial.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def work(workdir, backends=BACKENDS, timeout=1800):
    """Everything one backend does, in one process (one build per case):

    1. builds every case from its seed and saves `.weights.h5` (and
       `.keras` for the EXPORTED cases) under `workdir/<backend>/`;
    2. waits until every backend has saved;
    3. loads the weights saved by each backend into its models and
       records the outputs, then takes one step from the first backend's;
    4. exports the EXPORTED `.keras` files with `lra_keras.export`.
    """
    import keras

    from lra_keras import techniques
    from lra_keras.export import export_saved_models
    from lra_keras.training import compile_pretrainer
    from lra_keras.training import make_optimizer

    workdir = Path(workdir)
    backend = keras.backend.backend()
    started = time.monotonic()
    here = workdir / backend
    here.mkdir(parents=True, exist_ok=True)
    models, inputs_to_serve = {}, {}
    for case in CASES:
        hp = case_hparams(case)
        model = build(case, hp)
        model.save_weights(str(here / f"{_file(case)}.weights.h5"))
        if case in EXPORTED:
            model.save(str(here / f"{_file(case)}.keras"))
            inputs, _, _ = case_batch(case, hp)
            for key, value in inputs.items():
                inputs_to_serve[f"{case}|{key}"] = value
        models[case] = (hp, model)
    _save_npz(here / "inputs.npz", inputs_to_serve)
    (here / "saved").write_text("")
    print(f"built and saved: {time.monotonic() - started:.0f} s", flush=True)
    _wait_for([workdir / b / "saved" for b in backends], timeout)
    print(f"all saved: {time.monotonic() - started:.0f} s", flush=True)

    arrays, names = {}, {}
    for case, (hp, model) in models.items():
        inputs, targets, weights = case_batch(case, hp)
        for source in backends:
            model.load_weights(
                str(workdir / source / f"{_file(case)}.weights.h5")
            )
            for name, value in _outputs(model, inputs).items():
                arrays[f"{case}|{source}|{name}"] = value
        model.load_weights(
            str(workdir / backends[0] / f"{_file(case)}.weights.h5")
        )
        options = CASES[case][2]
        if "pretrain_loss" in options:
            compile_pretrainer(model, hp, total_steps=10)
        else:
            # The library's compile: the multitask technique's losses for
            # the token head, the plain classifier's otherwise.
            technique = techniques.get_technique(
                "multitask" if options.get("token_head") else "none")
            technique.compile(model, make_optimizer(hp, 10), hp)
        names[case] = [w.path for w in model.weights]
        for i, w in enumerate(model.weights):
            arrays[f"{case}|start|{i}"] = keras.ops.convert_to_numpy(w)
        loss = model.train_on_batch(inputs, targets, sample_weight=weights)
        arrays[f"{case}|loss"] = np.asarray(loss, np.float64).reshape(-1)[:1]
        for i, w in enumerate(model.weights):
            arrays[f"{case}|step|{i}"] = keras.ops.convert_to_numpy(w)
    _save_npz(workdir / f"run_{backend}.npz", arrays)
    (workdir / f"weight_names_{backend}.json").write_text(json.dumps(names))
    print(f"outputs and steps: {time.monotonic() - started:.0f} s",
          flush=True)
    export_saved_models(
        [(here / f"{_file(c)}.keras", here / "saved_models" / _file(c))
         for c in EXPORTED]
    )
    print(f"exported: {time.monotonic() - started:.0f} s", flush=True)


def _wait_for(paths, timeout):
    deadline = time.monotonic() + timeout
    while not all(p.exists() for p in paths):
        if time.monotonic() > deadline:
            missing = [str(p) for p in paths if not p.exists()]
            raise TimeoutError(f"other backends did not save: {missing}")
        time.sleep(0.5)


def serve(workdir, sources=BACKENDS):
    """Calls every exported SavedModel from plain TensorFlow."""
    import tensorflow as tf

    arrays = {}
    for source in sources:
        inputs = np.load(Path(workdir) / source / "inputs.npz")
        for case in EXPORTED:
            path = Path(workdir) / source / "saved_models" / _file(case)
            loaded = tf.saved_model.load(str(path))
            out = loaded.serve({
                "token_ids": tf.constant(inputs[f"{case}|token_ids"]),
                "padding_mask": tf.constant(inputs[f"{case}|padding_mask"]),
            })
            if not isinstance(out, dict):
                out = {"output": out}
            for name, value in out.items():
                arrays[f"{case}|{source}|{name}"] = np.asarray(value)
    # A server has neither: the SavedModels must stand alone. The one part
    # of lra_keras loaded here is the family registry (names and builder
    # functions, no layer, no Keras), for the list of cases.
    loaded = {name for name in sys.modules if name.startswith("lra_keras")}
    assert loaded <= {"lra_keras", "lra_keras.models",
                      "lra_keras.models.families"}, loaded
    _save_npz(Path(workdir) / "serve.npz", arrays)


def _start(phase, backend, workdir):
    log = open(Path(workdir) / f"{phase}_{backend}.log", "w")
    return subprocess.Popen(
        [sys.executable, str(Path(__file__)), phase, str(workdir)],
        env={**os.environ, "KERAS_BACKEND": backend,
             "PYTHONPATH": os.pathsep.join(
                 filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))},
        stdout=log,
        stderr=subprocess.STDOUT,
    )


def _finish(workdir, processes):
    """Waits for `processes` [(phase, backend, Popen)]; on the first
    failure stops the others and raises with its log."""
    running = list(processes)
    while running:
        for item in list(running):
            phase, backend, process = item
            code = process.poll()
            if code is None:
                continue
            running.remove(item)
            if code != 0:
                for _, _, other in running:
                    other.kill()
                log = (Path(workdir) / f"{phase}_{backend}.log").read_text()
                raise RuntimeError(
                    f"{phase} under {backend} failed (exit {code}):\n"
                    f"{log[-6000:]}"
                )
        time.sleep(0.5)


def run_all(workdir):
    """Every phase (the three backends at once, then serving); returns
    the results."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    _finish(workdir, [("work", b, _start("work", b, workdir))
                      for b in BACKENDS])
    _finish(workdir, [("serve", "tensorflow",
                       _start("serve", "tensorflow", workdir))])
    return load_results(workdir)


def load_results(workdir):
    workdir = Path(workdir)
    run = {b: dict(np.load(workdir / f"run_{b}.npz")) for b in BACKENDS}
    # What each backend's own model gave: its outputs on its own weights.
    keras_outputs = {
        b: {k.replace(f"|{b}|", "|"): v for k, v in run[b].items()
            if k.count("|") == 2 and k.split("|")[1] == b}
        for b in BACKENDS
    }
    return dict(
        keras=keras_outputs,
        run=run,
        names={b: json.loads(
            (workdir / f"weight_names_{b}.json").read_text())
            for b in BACKENDS},
        serve=dict(np.load(workdir / "serve.npz")),
    )


def output_names(results, case):
    return sorted(key.split("|")[-1] for key in results["keras"]["jax"]
                  if key.split("|")[0] == case)


def max_output_difference(results, case, a, b):
    """Max abs difference of the outputs under backends a and b, over the
    weights saved by every backend, and the largest output magnitude."""
    diff = scale = 0.0
    for source in BACKENDS:
        for name in output_names(results, case):
            x = results["run"][a][f"{case}|{source}|{name}"]
            y = results["run"][b][f"{case}|{source}|{name}"]
            diff = max(diff, float(np.max(np.abs(x - y))))
            scale = max(scale, float(np.max(np.abs(y))))
    return diff, scale


def max_step_difference(results, case, a, b):
    """Max abs difference of the weights after one step under a and b."""
    keys = [k for k in results["run"][a] if k.startswith(f"{case}|step|")]
    return max(float(np.max(np.abs(results["run"][a][k]
                                   - results["run"][b][k]))) for k in keys)


PAIRS = (("jax", "tensorflow"), ("jax", "torch"), ("tensorflow", "torch"))


def _table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|---" * len(header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()


def _served_difference(results, cases, source):
    return max(
        float(np.max(np.abs(results["serve"][f"{case}|{source}|{name}"]
                            - results["keras"][source][f"{case}|{name}"])))
        for case in cases for name in output_names(results, case)
    )


def report(workdir):
    """Prints the parity tables (per case, per family) and the export
    matrix: max abs differences of outputs / of one-step weights."""
    results = load_results(workdir)
    header = [f"{a}–{b} out / step" for a, b in PAIRS]

    def cells(cases):
        row = []
        for a, b in PAIRS:
            out = max(max_output_difference(results, c, a, b)[0]
                      for c in cases)
            step = max(max_step_difference(results, c, a, b) for c in cases)
            row.append(f"{out:.1e} / {step:.1e}")
        return row

    _table(["case", *header], [[c, *cells([c])] for c in CASES])
    by_family = {f: [c for c in CASES if c.split("/")[0] == f]
                 for f in FAMILIES}
    _table(["family (cases)", *header],
           [[f"{f} ({len(cases)})", *cells(cases)]
            for f, cases in by_family.items()])
    exported = {f: [c for c in EXPORTED if c.split("/")[0] == f]
                for f in FAMILIES}
    _table(["exported family", *(f"from {b}" for b in BACKENDS)],
           [[f, *(f"{_served_difference(results, cases, b):.1e}"
                  for b in BACKENDS)] for f, cases in exported.items()])


def main(argv):
    phase, workdir = argv[0], (argv[1] if len(argv) > 1 else
                               "/tmp/lra_keras_parity")
    if phase == "work":
        work(workdir)
    elif phase == "serve":
        serve(workdir)
    elif phase == "all":
        run_all(workdir)
        report(workdir)
    elif phase == "report":
        report(workdir)
    else:
        raise SystemExit(f"unknown phase {phase!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
