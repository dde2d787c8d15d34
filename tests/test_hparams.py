from pathlib import Path

import pytest

from lra_keras import techniques
from lra_keras.hparams import COMMON_KEYS
from lra_keras.hparams import get_hparams
from lra_keras.hparams import main
from lra_keras.hparams import resolve
from lra_keras.models import FAMILIES
from lra_keras.presets import AUGMENT
from lra_keras.presets import COMPUTE_TIED
from lra_keras.presets import EXPECTED
from lra_keras.presets import EXPECTED_LRA
from lra_keras.presets import PAPER
from lra_keras.presets import PRESETS
from lra_keras.presets import SCALED
from lra_keras.presets import SPT_LRA_SIZED
from lra_keras.presets import TECHNIQUE
from lra_keras.presets import YCTFS_TECHNIQUES
from lra_keras.presets import expected_accuracy
from lra_keras.presets.lra import LRA_MODELS
from lra_keras.tasks import TASKS

pytestmark = pytest.mark.numpy_only

YCTFS_TASKS = ("image", "pathfinder", "text", "retrieval", "listops")
LRA_TASKS = ("listops", "text", "retrieval", "image", "pathfinder")
TECHNIQUES = tuple(techniques.TECHNIQUES)


def _known_keys(task, model):
    keys = set(COMMON_KEYS) | set(FAMILIES[model].keys)
    keys |= set(TASKS[task].hparams())
    for each in (*techniques.TECHNIQUES.values(),
                 *techniques.AUGMENTATIONS.values()):
        keys |= set(each.keys)
    return keys


def test_every_task_model_preset_and_technique_resolves():
    for task in TASKS:
        for model in FAMILIES:
            assert (task, model) in PAPER
            for preset in PRESETS:
                for technique in TECHNIQUES:
                    hp = get_hparams(task, model, preset, technique)
                    assert hp["technique"] == technique
                    assert (hp["task"], hp["model"], hp["preset"]) == (
                        task, model, preset)
                    # the end token of `append_eos`: one row more
                    assert hp["vocabulary_size"] == (
                        TASKS[task].vocabulary_size + hp["append_eos"])
                    assert hp["num_classes"] == TASKS[task].num_classes
                    # The paper row's citation leads the resolved source.
                    paper = PAPER[(task, model)]["source"]
                    assert paper in hp["source"]
                    if preset != "paper":
                        assert hp["source"].startswith(f"{preset} preset")
                    else:
                        assert hp["source"].startswith(paper)


@pytest.mark.parametrize("preset", sorted(SCALED))
def test_scaled_rows_name_known_families_and_tasks(preset):
    # A family or task without a row keeps its paper row's sizes beside
    # the preset's common scaling (width 64, 2 blocks).
    _, per_task, per_family, per_pair = SCALED[preset]
    assert set(per_family) <= set(FAMILIES)
    assert set(per_task) <= set(TASKS)
    assert {task for task, _ in per_pair} <= set(TASKS)
    assert {model for _, model in per_pair} <= set(FAMILIES)


def test_every_entry_cites_a_source():
    tables = [PAPER, TECHNIQUE, AUGMENT, EXPECTED, EXPECTED_LRA,
              SPT_LRA_SIZED, COMPUTE_TIED]
    for table in tables:
        assert table
        for key, entry in table.items():
            assert isinstance(entry.get("source"), str), key
            assert entry["source"].strip(), key


def test_every_key_of_every_row_is_known():
    for (task, model), row in PAPER.items():
        assert set(row) <= _known_keys(task, model) | {"source"}, (task, model)
    # A task's quick row applies to every family: common keys, or keys
    # that every family has (its pooling, say).
    every_family = set.intersection(*(set(f.keys) for f in FAMILIES.values()))
    every_row = set.intersection(*(
        _known_keys(task, model) for task in TASKS for model in FAMILIES))
    for common, per_task, per_family, per_pair in SCALED.values():
        assert set(common) <= every_row | {"source"}
        for task, row in per_task.items():
            assert set(row) <= set(COMMON_KEYS) | every_family, task
        for (task, model), row in per_pair.items():
            assert set(row) <= _known_keys(task, model), (task, model)
        for model, row in per_family.items():
            assert set(row) <= set(FAMILIES[model].keys), model
    for (task, model, technique), row in TECHNIQUE.items():
        assert technique in TECHNIQUES and technique != "none"
        assert set(row) <= _known_keys(task, model) | {"source"}
    for (task, objective), row in SPT_LRA_SIZED.items():
        assert objective in ("masked", "causal")
        assert set(row) <= _known_keys(task, "transformer") | {"source"}
    for key in {**EXPECTED, **EXPECTED_LRA}:
        assert key[0] in TASKS and key[1] in FAMILIES, key
        assert len(key) == 2 or key[2] in TECHNIQUES[1:], key


def test_rows_without_a_paper_run_say_derived():
    for task in ("pathx", "pathx256"):
        for model in ("gmlp", "conv"):
            assert PAPER[(task, model)]["source"].startswith("derived:")
    for model in FAMILIES:
        # LRA's code configures its Transformer at 256 pixels
        # (image/configs/pathfinder256/), without a published number
        if model not in ("s4", "lra_transformer"):
            assert "derived" in PAPER[("pathx256", model)]["source"]
    for task in TASKS:
        assert PAPER[(task, "s4d")]["source"].startswith("derived:")


def _without_source(row):
    return {k: v for k, v in row.items() if k != "source"}


# The S4 code trains C~ (SSMKernelDPLR._setup_C); S4D's and DLR's kernels
# have no C~, so their rows leave these keys out.
S4_ONLY = ("C_parameterization", "kernel_length")


def _without_s4_only(row):
    return {k: v for k, v in _without_source(row).items()
            if k not in S4_ONLY}


def test_s4d_rows_are_the_s4_rows():
    # The S4D paper's LRA runs reuse the S4 settings with the diagonal
    # kernel.
    for task in TASKS:
        assert PAPER[(task, "s4")]["C_parameterization"] == "c_tilde"
        assert _without_source(PAPER[(task, "s4d")]) == _without_s4_only(
            PAPER[(task, "s4")]), task
        assert PAPER[(task, "s4")]["source"] in PAPER[(task, "s4d")][
            "source"]


def test_dlr_rows_are_the_s4_rows_with_the_dlr_layer():
    # NTFS C.1.3: the S4 config, the DLR layer's defaults, Table 5's
    # (lr, batch) where it has a DLR run, lr 5e-4 elsewhere; max pooling on
    # PathX.
    table_5 = dict(listops=(5e-4, 16), text=(5e-4, 16), image=(5e-4, 64),
                   pathx=(5e-4, 64), pathx256=(5e-4, 64))
    constant = dict(schedule="constant", schedule_steps=None)
    ntfs_schedules = dict(
        listops=dict(constant, warmup_steps=2000),
        text=dict(constant, warmup_steps=2000),
        retrieval=constant, pathfinder=constant,
        image=dict(constant, warmup_steps=1000, prenorm=True, dropout=0.0),
        pathx=dict(warmup_steps=5000, schedule_steps=250000),
        pathx256=dict(warmup_steps=5000, schedule_steps=250000),
    )
    for task in TASKS:
        s4 = _without_s4_only(PAPER[(task, "s4")])
        lr, batch = table_5.get(task, (5e-4, s4["batch_size"]))
        # "with the exception of the normalization layer that is fixed to
        # LayerNorm"; untied dropout (NTFS configs/model/dlr.yaml) and the
        # schedules of the NTFS DLR files (configs/experiment/lra/
        # dlr-lra-*.yaml; retrieval and Pathfinder from its S4 files).
        # the NTFS code's DLR kernel, Lambda_init omega (layers.DLR)
        expected = dict(s4, state_dim=1024, init="omega", dt_min=1e-4,
                        dt_max=0.1, ssm_learning_rate=1e-4,
                        learning_rate=lr, batch_size=batch, norm="layer",
                        tie_dropout=False)
        expected.pop("batch_norm_unbiased", None)
        expected.pop("batch_norm_count_padding", None)
        expected.pop("bucket_step", None)
        if task in ("listops", "text", "retrieval"):
            # the NTFS code's DLR reads the padding up to each batch's
            # longest row (its batches, random rows): presets.ntfs
            expected.update(read_padding="longest", bucket_step=None)
        # S4's n_ssm and FFTConv dropout: the DLR has neither
        expected.pop("num_ssms", None)
        expected.pop("dropout_before_activation", None)
        expected.update(ntfs_schedules.get(task, {}))
        if task in ("pathx", "pathx256"):
            expected["pooling"] = "max"
        if task in ("pathfinder", "pathx"):
            # the NTFS code's PathFinder centres the grey value; the S4
            # code's config does not (presets.s4)
            expected.update(pixel_mean=0.5, pixel_std=0.5)
        assert _without_source(PAPER[(task, "dlr")]) == expected, task


def test_pathx256_rows_follow_their_pathx_rows():
    # NTFS C.1.2 runs PathX-256 "with the same configuration as PathX",
    # max pooling; the S4 row also takes C.1.2's lr and batch.
    changes = dict(
        # the S4 row ran in the NTFS code, which centres the grey value;
        # the NTFS Transformer's windows are 8192 at 256x256
        # (transformer-lra-pathx256.yaml line 20)
        transformer=dict(attention_window=8192),
        s4=dict(pooling="max", learning_rate=1e-4, batch_size=16,
                kernel_length=65536, pixel_mean=0.5, pixel_std=0.5),
        s5=dict(pooling="max"), mega=dict(chunk_size=16384, pooling="max"),
        gmlp={}, conv={},
    )
    for model, change in changes.items():
        pathx = _without_source(PAPER[("pathx", model)])
        assert _without_source(PAPER[("pathx256", model)]) == dict(
            pathx, **change), model
    assert _without_source(PAPER[("pathx256", "s4d")]) == _without_s4_only(
        PAPER[("pathx256", "s4")])


def test_gmlp_and_conv_pathx_rows_are_their_pathfinder_rows():
    for model in ("gmlp", "conv"):
        for task in ("pathx", "pathx256"):
            assert _without_source(PAPER[(task, model)]) == _without_source(
                PAPER[("pathfinder", model)]), (task, model)


def test_yctfs_technique_rows_follow_a2():
    # Transformer, gMLP and conv: the published rows are the runs with the
    # techniques (empty overrides). S4, S5 and MEGA: Table 5's epochs and
    # the plateau schedule without warmup, softmax MEGA, full GLU for S5 on
    # Pathfinder and retrieval.
    epochs = dict(listops=120, image=200, pathfinder=200, text=80,
                  retrieval=60)
    for task in YCTFS_TASKS:
        for model in ("transformer", "gmlp", "conv"):
            assert _without_source(TECHNIQUE[(task, model, "multitask")]) \
                == {}
        for model in ("s4", "s5", "mega"):
            expected = dict(epochs=epochs[task], schedule="plateau",
                            warmup_steps=0)
            if model == "mega":
                expected["attention_activation"] = "softmax"
            if model == "s5" and task in ("pathfinder", "retrieval"):
                expected["output_activation"] = "glu"
            assert _without_source(
                TECHNIQUE[(task, model, "multitask")]) == expected
    for (task, model), row in AUGMENT.items():
        # 67 epochs (section 3, Tables 5-7); the Transformer's config, the
        # run behind its number, trains 100 (pathfinder/base.yaml); the
        # code's data module: flips and affine maps, no D4, the three sets
        # pooled for validation and test.
        assert task == "pathfinder" and _without_source(row) == dict(
            epochs=100 if model == "transformer" else 67,
            augment_d4=False, augment_affine=True, eval_difficulty="all")


def test_ntfs_spt_rows_share_the_table_4_and_5_conventions():
    for (task, model, technique), row in TECHNIQUE.items():
        if technique != "spt":
            continue
        assert row["pretrain_objective"] == "masked"
        assert row["pretrain_epochs"] == 200
        if model == "transformer":
            assert (row["position_embedding"], row["rotary_disable_half"],
                    row["dropout"], row["epochs"], row["schedule"]) == (
                "rotary+sinusoidal", False, 0.0, 200, "constant")
        if task in ("pathx", "pathx256"):
            assert row["pooling"] == "max"
    assert _without_source(TECHNIQUE[("pathx256", "transformer", "spt")]) \
        == _without_source(TECHNIQUE[("pathx", "transformer", "spt")])


def test_spt_lra_sized_rows_pair_objectives_with_their_settings():
    for (task, objective), row in SPT_LRA_SIZED.items():
        assert row["pretrain_objective"] == objective
        assert row["causal"] is (objective == "causal")
        assert row["position_embedding"] == "sinusoidal"
        assert objective.capitalize() in row["source"]


def test_transformer_rows_are_yctfs_table_5():
    hp = get_hparams("listops", "transformer", "paper")
    assert (hp["hidden_dim"], hp["num_layers"], hp["num_heads"]) == (256, 6, 4)
    assert (hp["intermediate_dim"], hp["batch_size"], hp["epochs"]) == (
        512, 64, 120)
    assert hp["learning_rate"] == 1e-4 and hp["weight_decay"] == 0.05
    hp = get_hparams("image", "transformer")
    assert (hp["hidden_dim"], hp["num_layers"], hp["num_heads"],
            hp["intermediate_dim"]) == (160, 10, 4, 320)
    # The config behind the published number (cifar10/
    # rotary_transformer_augment.yaml) where Table 5 says 10000, 48, 0.05.
    assert (hp["learning_rate"], hp["batch_size"], hp["weight_decay"],
            hp["epochs"]) == (1e-3, 64, 0.01, 200)
    assert hp["rotary_disable_half"] is True
    assert hp["max_wavelength"] == 1000 and hp["pooling"] == "mean"
    assert "Table 5" in hp["source"]
    # Pathfinder: the config's disable_half true (Table 5: No).
    disabled = {t: get_hparams(t, "transformer")["rotary_disable_half"]
                for t in YCTFS_TASKS}
    assert disabled == dict(image=True, pathfinder=True, text=True,
                            retrieval=True, listops=False)
    for task in YCTFS_TASKS:
        hp = get_hparams(task, "transformer")
        assert (hp["rotary_scope"], hp["final_norm"], hp["embedding_init"],
                hp["adam_beta_2"], hp["weight_decay_on"]) == (
            "model", False, "normal", 0.98, "kernels")
        assert hp["head"] == ("mlp" if task == "retrieval" else "linear")
    hp = get_hparams("pathx", "transformer")
    assert (hp["num_layers"], hp["pooling"], hp["learning_rate"],
            hp["batch_size"]) == (5, "max", 5e-4, 32)


def test_ntfs_masked_pixel_rows_read_the_mask_as_a_channel():
    # NTFS's masked pixel pretraining: [value * (1 - mask), mask] into a
    # Linear(2, D); its causal rows read the value alone.
    for task in ("image", "pathfinder", "pathx", "pathx256"):
        for model in ("transformer", "s4", "dlr", "s5"):
            hp = get_hparams(task, model, technique="spt")
            assert hp["input_encoder"] == "linear", (task, model)
            assert hp["pixel_mask_input"] == "channel", (task, model)
            # left to the builder ("embedding") where nothing is masked
            assert get_hparams(task, model)["pixel_mask_input"] is None
            batch = techniques.get_technique("spt").pretraining_transform(
                task, hp)
            assert batch.pixel_normalization == (hp["pixel_mean"],
                                                 hp["pixel_std"])
    sized = get_hparams("image", "transformer", technique="spt",
                        **{k: v for k, v in SPT_LRA_SIZED[
                            ("image", "masked")].items() if k != "source"})
    assert sized["pixel_mask_input"] == "channel"
    causal = get_hparams("image", "transformer", technique="spt",
                         pretrain_objective="causal")
    assert causal["causal"] and causal["pixel_mask_input"] is None
    assert get_hparams("listops", "s4", technique="spt")[
        "pixel_mask_input"] is None
    # An explicit choice stays; the channel needs the linear encoder.
    assert get_hparams("image", "s4", technique="spt",
                       pixel_mask_input="embedding")[
        "pixel_mask_input"] == "embedding"
    with pytest.raises(ValueError, match="input_encoder='linear'"):
        get_hparams("listops", "s4", pixel_mask_input="channel")


def test_ntfs_transformer_rows_run_neither_early_stopping_nor_swa():
    # configs/callbacks/checkpoint.yaml comments early stopping out; no
    # experiment includes callbacks/swa.yaml.
    for task in ("listops", "text", "retrieval", "image", "pathfinder",
                 "pathx", "pathx256"):
        hp = get_hparams(task, "transformer", technique="spt")
        assert hp["early_stopping_patience"] is None, task
        assert hp["swa_start_fraction"] is None, task


def test_only_yctfs_text_transformer_averages_weights():
    # text_classification/base.yaml (swa_epoch_start 0.75, cos) and
    # rotary_transformer_denoise.yaml (swa_lrs 1e-2, annealing_epochs 4).
    for technique in ("none", "multitask"):
        hp = get_hparams("text", "transformer", technique=technique)
        assert (hp["swa_start_fraction"], hp["swa_learning_rate"],
                hp["swa_annealing_epochs"], hp["swa_annealing"]) == (
            0.75, 0.01, 4, "cos")
        assert "SWA" in hp["source"]
    for task in YCTFS_TASKS:
        for model in ("transformer", "gmlp", "conv"):
            if (task, model) != ("text", "transformer"):
                assert get_hparams(task, model)["swa_start_fraction"] is None
    # The quick and small rows replace the schedule, SWA with it.
    for preset in ("quick", "small"):
        hp = get_hparams("text", "transformer", preset)
        assert hp["swa_start_fraction"] is None
    with pytest.raises(ValueError, match="swa_learning_rate"):
        get_hparams("text", "conv", swa_start_fraction=0.5)
    with pytest.raises(ValueError, match="BatchNorm"):
        get_hparams("text", "s4", swa_start_fraction=0.5,
                    swa_learning_rate=0.01, norm="batch")


def test_pathfinder_trains_fewer_epochs_only_on_all_three_sets():
    for model in ("transformer", "gmlp", "conv"):
        assert get_hparams("pathfinder", model)["epochs"] == 200
        hp = get_hparams("pathfinder", model, augment=True)
        assert hp["epochs"] == (100 if model == "transformer" else 67)
        assert hp["train_difficulty"] == "all"
        assert hp["difficulty"] == "hard"  # val and test
        hp = get_hparams("pathfinder", model, technique="multitask")
        assert hp["epochs"] == 200
    hp = get_hparams("text", "transformer", technique="multitask")
    assert hp["epochs"] == get_hparams("text", "transformer")["epochs"]


def test_conv_kernel_is_the_best_of_table_1():
    # YCTFS Table 1, accuracy per kernel size (5, 7, 11, 21, 31, 61).
    table_1 = dict(
        image=(46.63, 49.05, 64.47, 70.25, 79.84, 83.62),
        pathfinder=(51.80, 51.42, 51.56, 52.01, 51.20, 72.28),
        text=(88.96, 90.61, 90.56, 90.26, 89.33, 85.41),
        retrieval=(90.32, 90.48, 90.41, 89.71, 89.46, 89.04),
        listops=(45.24, 49.26, 50.59, 52.28, 52.93, 52.73),
    )
    kernels = (5, 7, 11, 21, 31, 61)
    for task, accuracies in table_1.items():
        best = kernels[accuracies.index(max(accuracies))]
        hp = get_hparams(task, "conv")
        assert hp["kernel_size"] == best, task
        entry = expected_accuracy(task, "conv", *YCTFS_TECHNIQUES[task])
        assert entry["accuracy"] == max(accuracies)
    assert get_hparams("pathfinder", "conv")["groups"] == 32
    assert get_hparams("text", "conv")["num_layers"] == 4


def test_ssm_and_mega_rows_follow_the_authors_configs():
    hp = get_hparams("pathfinder", "s4")
    assert (hp["pooling"], hp["learning_rate"], hp["weight_decay"],
            hp["ssm_learning_rate"], hp["warmup_steps"]) == (
        "last", 0.004, 0.03, 0.001, 2500)
    hp = get_hparams("pathx256", "s4")
    assert (hp["pooling"], hp["learning_rate"], hp["batch_size"]) == (
        "max", 1e-4, 16)
    hp = get_hparams("listops", "dlr")
    assert (hp["state_dim"], hp["learning_rate"], hp["batch_size"]) == (
        1024, 5e-4, 16)
    assert hp["num_layers"] == get_hparams("listops", "s4")["num_layers"]
    assert get_hparams("pathx", "dlr")["pooling"] == "max"
    # S5: global lr = lr_factor x ssm_lr_base.
    hp = get_hparams("image", "s5")
    assert hp["learning_rate"] == pytest.approx(4.5 * hp["ssm_learning_rate"])
    assert (hp["hidden_dim"], hp["state_dim"], hp["num_blocks"]) == (
        512, 384, 3)
    hp = get_hparams("retrieval", "mega")
    assert (hp["batch_size"], hp["epochs"], hp["weight_decay"]) == (
        64, 40, 0.04)
    assert get_hparams("image", "mega")["attention_activation"] == "laplace"
    hp = get_hparams("image", "mega", technique="multitask")
    assert hp["attention_activation"] == "softmax" and hp["epochs"] == 200


def test_spt_rows_are_ntfs_tables_4_and_5():
    hp = get_hparams("image", "transformer", technique="spt")
    assert (hp["hidden_dim"], hp["num_layers"], hp["intermediate_dim"]) == (
        256, 6, 512)
    assert (hp["learning_rate"], hp["pretrain_learning_rate"]) == (
        1e-3, 1e-3)
    assert (hp["batch_size"], hp["pretrain_batch_size"]) == (64, 32)
    assert hp["pretrain_loss"] == "l1" and hp["weight_decay"] == 0.0
    assert hp["rotary_disable_half"] is False
    assert "Table 4" in hp["source"] and "Table 5" in hp["source"]
    hp = get_hparams("text", "s4", technique="spt")
    assert (hp["learning_rate"], hp["batch_size"],
            hp["pretrain_learning_rate"], hp["pretrain_batch_size"]) == (
        5e-4, 16, 5e-4, 8)
    assert hp["hidden_dim"] == get_hparams("text", "s4")["hidden_dim"]
    hp = get_hparams("pathx", "s4", technique="spt")
    assert hp["pooling"] == "max"
    assert SPT_LRA_SIZED[("listops", "causal")]["pooling"] == "last"
    assert SPT_LRA_SIZED[("listops", "causal")]["causal"] is True


def test_spt_without_a_paper_row_keeps_the_none_row():
    none = get_hparams("retrieval", "dlr")
    spt = get_hparams("retrieval", "dlr", technique="spt")
    assert "no paper row" in spt["source"]
    assert spt["pretrain_objective"] == "masked"
    assert spt["spt_mask_rate"] == 0.15
    differ = {k for k in none if none[k] != spt[k]}
    assert differ == {"technique", "source"}


def test_spt_mask_rates_are_ntfs_section_2():
    rates = {task: get_hparams(task)["spt_mask_rate"] for task in TASKS}
    assert rates == {task: spec.spt_mask_rate for task, spec in TASKS.items()}
    assert rates == dict(listops=0.1, text=0.15, retrieval=0.15, image=0.5,
                         pathfinder=0.5, pathx=0.5, pathx256=0.5)


@pytest.mark.parametrize(
    "model, technique, tasks, average",
    [
        # YCTFS Table 4 (rotary, no techniques), Tables 2 and 3.
        ("transformer", "none", YCTFS_TASKS, 64.98),
        ("transformer", "multitask", YCTFS_TASKS, 85.69),
        ("mega", "none", YCTFS_TASKS, 86.25),
        ("mega", "multitask", YCTFS_TASKS, 85.15),
        ("s4", "none", YCTFS_TASKS, 84.03),
        ("s5", "none", YCTFS_TASKS, 85.21),
        ("s4", "multitask", YCTFS_TASKS, 84.19),
        ("s5", "multitask", YCTFS_TASKS, 84.61),
        ("gmlp", "multitask", YCTFS_TASKS, 85.98),
        # NTFS Table 7 and Table 2.
        ("s4", "none", ("listops", "text", "image", "pathx"), 82.85),
        ("s4", "spt", ("listops", "text", "image", "pathx"), 84.47),
        ("dlr", "none", ("listops", "text", "image", "pathx"), 77.33),
        ("transformer", "spt", YCTFS_TASKS + ("pathx",), 86.21),
        ("mega", "none", YCTFS_TASKS + ("pathx",), 88.21),
        # LRA Table 1 (the authors' README at cd31e5c): the mean of the
        # five tasks, Path-X's FAIL left out. The Sinkhorn row's printed
        # 51.29 is not the mean of its numbers (51.48): see below.
        *[(model, "none", LRA_TASKS, average) for model, average in (
            ("local", 46.06), ("linear_transformer", 50.55),
            ("reformer", 50.67), ("sparse_transformer", 51.24),
            ("linformer", 51.36), ("performer", 51.41),
            ("synthesizer", 52.88), ("longformer", 53.46),
            ("lra_transformer", 54.39), ("bigbird", 55.01))],
    ],
)
def test_expected_accuracies_match_the_printed_averages(model, technique,
                                                        tasks, average):
    # "multitask" rows are YCTFS's runs with its techniques: the flags of
    # YCTFS_TECHNIQUES per task.
    flags = {t: YCTFS_TECHNIQUES[t] if technique == "multitask"
             else (technique, False) for t in tasks}
    values = [expected_accuracy(t, model, *flags[t])["accuracy"]
              for t in tasks]
    assert sum(values) / len(values) == pytest.approx(average, abs=0.006)


def test_lra_table_1_has_every_model_on_every_task():
    # Eleven models by five tasks (Path-X failed for all), and the one
    # row whose printed average does not follow from its numbers: the
    # Sinkhorn Transformer's five give 51.476, the table prints 51.29.
    assert len(LRA_MODELS) == 11
    assert set(EXPECTED_LRA) == {(t, m) for t in LRA_TASKS
                                 for m in LRA_MODELS}
    sinkhorn = [EXPECTED_LRA[(t, "sinkhorn")]["accuracy"] for t in LRA_TASKS]
    assert sum(sinkhorn) / 5 == pytest.approx(51.476)
    assert EXPECTED_LRA[("retrieval", "sparse_transformer")]["accuracy"] \
        == max(EXPECTED_LRA[("retrieval", m)]["accuracy"] for m in LRA_MODELS)


def test_expected_lookup_and_compute_tied_budgets():
    assert expected_accuracy("listops", "transformer")["accuracy"] == 43.90
    assert expected_accuracy("pathx256", "gmlp") is None
    # YCTFS's techniques: augmentation for ListOps, the denoising loss for
    # Text; the other combinations have no published row.
    assert expected_accuracy("listops", "transformer", "none",
                             True)["accuracy"] == 62.90
    assert expected_accuracy("listops", "transformer", "multitask") is None
    assert expected_accuracy("text", "transformer",
                             "multitask")["accuracy"] == 90.33
    assert expected_accuracy("text", "transformer", "none", True) is None
    assert EXPECTED_LRA[("listops", "lra_transformer")]["accuracy"] == 36.37
    assert COMPUTE_TIED["text"]["total_epochs"] == 30
    assert COMPUTE_TIED["image"]["total_epochs"] == 150
    # Table 8's TFS Text Transformer is Table 2's "Transformers + Rotary".
    assert COMPUTE_TIED["text"]["results"][0.0]["transformer"] == 79.08


def test_quick_preset_and_overrides():
    hp = get_hparams("listops", preset="quick", epochs=7)
    assert hp["epochs"] == 7 and hp["preset"] == "quick"
    assert hp["hidden_dim"] < 256
    assert hp["source"].startswith("quick preset")
    assert "Table 5" in hp["source"]
    hp = get_hparams("pathfinder", "conv", "quick")
    assert hp["num_samples"] == 6000 and hp["epochs"] == 1
    hp = get_hparams("text", "transformer", "quick", "spt")
    assert hp["hidden_dim"] == 64 and hp["pretrain_epochs"] == 1


def test_small_preset_keeps_the_lra_setting():
    # Full sequence lengths (the task's: LRA's xformer rows read Text at
    # its code's 1000 bytes, the small rows at 4096 as every family) and
    # hard Pathfinder; the same data, batch, epochs and schedule for every
    # family of a task.
    for task in TASKS:
        rows = [get_hparams(task, model, "small") for model in FAMILIES]
        for hp in rows:
            full = TASKS[task].hparams()["sequence_length"]
            assert hp["sequence_length"] == full, hp
            assert (hp["hidden_dim"], hp["num_layers"]) == (64, 2)
            assert hp["source"].startswith("small preset")
            if task.startswith("path"):
                assert hp["difficulty"] == "hard"
        for key in ("train_samples", "num_samples", "batch_size", "epochs",
                    "learning_rate", "schedule", "warmup_steps"):
            assert len({hp[key] for hp in rows}) == 1, (task, key)


@pytest.mark.parametrize(
    "model, overrides, match",
    [
        # the class token under a causal mixer sees only itself
        ("performer", dict(causal=True), "cls_token=True prepends"),
        ("sparse_transformer", dict(sparse_cls_token=False),
         "sees only itself unless sparse_cls_token"),
        ("sparse_transformer", dict(sparse_pattern="strided"),
         "the strided pattern .sparse_pattern='strided'. has none"),
        ("linformer", dict(attention_dim=30), "num_heads=8 must divide"),
        ("transformer", dict(technique="spt", pretrain_schedule="rsqrt",
                             pretrain_warmup_steps=0),
         "pretrain_schedule='rsqrt'"),
        # LRA's blocked attentions' masks, on another attention
        ("linformer", dict(mask_semantics="lra_blocks"),
         "only model='local', 'bigbird' or 'sinkhorn'"),
    ],
)
def test_lra_keys_refuse_what_cannot_work(model, overrides, match):
    with pytest.raises(ValueError, match=match):
        get_hparams("listops", model, **overrides)


def test_time_limit_is_positive_minutes_or_none():
    assert get_hparams("listops", "s4d")["time_limit_minutes"] is None
    assert get_hparams("listops", "s4d", time_limit_minutes=2.5)[
        "time_limit_minutes"] == 2.5
    for bad in (0, -1.0, "2"):
        with pytest.raises(ValueError, match="time_limit_minutes"):
            get_hparams("listops", "s4d", time_limit_minutes=bad)


def test_jit_compile_is_a_bool_or_none():
    assert get_hparams("listops", "s4d")["jit_compile"] is None
    assert get_hparams("listops", "s4d", jit_compile=True)["jit_compile"]
    for bad in ("true", 1, "auto"):
        with pytest.raises(ValueError, match="jit_compile"):
            get_hparams("listops", "s4d", jit_compile=bad)


def test_a_causal_objective_refuses_the_class_tokens():
    # SPT's causal objective sets causal=True on LRA's rows
    for model in ("performer", "sparse_transformer"):
        with pytest.raises(ValueError, match="causal"):
            get_hparams("listops", model, technique="spt",
                        pretrain_objective="causal")
    hp = get_hparams("listops", "performer", technique="spt",
                     pretrain_objective="causal", cls_token=False,
                     pooling="mean")
    assert hp["causal"] is True


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (("nope",), {}, "Unknown task"),
        (("listops", "rnn"), {}, "Unknown model"),
        (("listops",), {"preset": "huge"}, "Unknown preset"),
        (("listops",), {"technique": "distill"}, "Unknown technique"),
        (("listops",), {"hiden_dim": 3}, "Unknown config key"),
        (("listops", "s4"), {"num_heads": 3}, "Unknown config key"),
        # a key of another task's data: never silently ignored
        (("pathfinder",), {"max_depth": 4}, r"\['max_depth'\] choose the "
         r"data of other tasks \({'max_depth': \['listops'\]}\); task "
         r"'pathfinder' reads \['difficulty', 'num_samples'\]"),
        (("listops",), {"num_samples": 100}, r"task 'listops' reads "
         r"\['min_length', 'max_depth'\]"),
        # checked before any data is loaded, not when the model is built
        (("listops",), {"binary_logit": True},
         "task='listops' has 10 classes"),
        (("image", "s4d"), {"init": "dfout"}, "num_ssms must be None"),
    ],
)
def test_bad_keys_are_rejected(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        get_hparams(*args, **kwargs)
    with pytest.raises(ValueError, match="Renamed: {'zdim': 'key_dim'}"):
        get_hparams("listops", "mega", zdim=16)


def test_resolve_names_where_each_value_came_from():
    hp, origins = resolve("pathfinder", "s4", "quick", "spt",
                          batch_size=8, compute_tied_epochs=4,
                          pretrain_share=0.5)
    assert set(origins) == set(hp)
    assert origins["state_dim"].startswith("quick preset")
    assert origins["weight_decay"] == "quick preset (presets.quick.QUICK)"
    assert origins["learning_rate"] == "quick preset (presets.quick.QUICK)"
    assert origins["dt_min"] == PAPER[("pathfinder", "s4")]["source"]
    assert origins["pooling"] == PAPER[("pathfinder", "s4")]["source"]
    assert origins["pretrain_learning_rate"].startswith("quick preset")
    assert origins["vocabulary_size"] == "task pathfinder (lra_keras.tasks)"
    assert origins["batch_size"] == "override"
    # Compute-tied SPT derives both epoch counts.
    assert (hp["pretrain_epochs"], hp["epochs"]) == (2, 2)
    assert origins["epochs"] == "derived by technique 'spt'"
    assert origins["multitask_mask_rate"] == (
        "default of technique 'multitask'")
    assert origins["plateau_factor"] == "default (hparams.COMMON_KEYS)"
    hp, origins = resolve("pathfinder", "conv", augment=True)
    assert origins["epochs"].startswith("augment: You Can Train")
    assert hp["train_difficulty"] == "all"
    assert origins["train_difficulty"] == (
        "derived by augmentation 'pathfinder_augment'")
    assert origins["kernel_size"] == PAPER[("pathfinder", "conv")]["source"]
    # the YCTFS code's data: no D4, its flips and affine maps, the three
    # sets pooled for validation and test
    assert (hp["augment_d4"], hp["augment_affine"],
            hp["eval_difficulty"]) == (False, True, "all")
    assert origins["augment_d4"].startswith("augment: You Can Train")
    hp, origins = resolve("pathfinder", "s4d", augment=True)
    assert (hp["augment_d4"], hp["augment_affine"],
            hp["eval_difficulty"]) == (True, False, None)
    assert origins["augment_d4"] == (
        "default of augmentation 'pathfinder_augment'")


def test_hparams_command_prints_every_key_with_its_origin(capsys):
    assert main(["listops", "mega", "--set", "epochs=3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    hp = get_hparams("listops", "mega", epochs=3)
    assert len(lines) == len(hp)
    by_key = {line.split()[0]: line for line in lines}
    assert by_key["epochs"].split()[1:] == ["3", "override"]
    assert by_key["key_dim"].endswith(PAPER[("listops", "mega")]["source"])
    assert main(["listops", "mega", "--set", "zdim=3"]) == 2
    assert "Renamed" in capsys.readouterr().err
    assert main(["--tables"]) == 0
    tables = capsys.readouterr().out
    rows = [line for line in tables.splitlines()
            if line.startswith("| ") and not line.startswith("| task")]
    assert len(rows) == (len(EXPECTED) + len(EXPECTED_LRA)
                         + sum(len(t["results"])
                               for t in COMPUTE_TIED.values())
                         + len(SPT_LRA_SIZED))
    assert "| listops | transformer | none | 43.90 |" in tables
    assert "| text | 30 | 0.2 | 90.20 | 89.50 |" in tables
    assert "| listops | causal | 512 | 6 | 8 | 1024 | last |" in tables


def test_readme_paper_numbers_are_the_generated_tables(capsys):
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    start = "<!-- paper-tables: python -m lra_keras.hparams --tables -->\n"
    block = readme[readme.index(start) + len(start):
                   readme.index("<!-- /paper-tables -->")]
    main(["--tables"])
    assert block == capsys.readouterr().out


def test_a_family_that_cannot_be_causal_refuses_the_causal_objective():
    assert not FAMILIES["linformer"].can_be_causal
    with pytest.raises(ValueError, match="cannot be causal"):
        get_hparams("listops", "linformer", technique="spt",
                    pretrain_objective="causal")
    hp = get_hparams("listops", "linformer", technique="spt")
    assert hp["pretrain_objective"] == "masked"


def test_lra_xformer_rows_are_the_transformer_rows_with_their_attention():
    # presets.lra: the Transformer row of the task, rotary cells dropped,
    # sinusoidal positions, and the attention's own cells.
    rotary = {"position_embedding", "rotary_disable_half", "rotary_scope",
              "max_wavelength", "source"}
    own = {"linear_transformer": {},
           "performer": {"num_random_features", "orthogonal_scaling",
                         "performer_kernel"},
           "linformer": {"projection_dim"},
           "local": {"local_block_size", "local_layout"},
           "synthesizer": {"synthesizer_mode", "synthesizer_dot_product"}}
    for task in TASKS:
        if task not in ("pathx", "pathx256"):
            continue  # LRA's own configurations: the tests below
        # LRA's loss: two logits on the two-class tasks (presets.lra)
        # and the NTFS softmax attention's windows, which LRA's efficient
        # attentions do not take
        windows = {"attention_window", "window_look_backward",
                   "window_look_forward"}
        base = {k: v for k, v in PAPER[(task, "transformer")].items()
                if k not in rotary | windows and k != "binary_logit"}
        for model, cells in own.items():
            row = PAPER[(task, model)]
            assert row["source"].startswith("derived:"), (task, model)
            assert row["position_embedding"] == "sinusoidal"
            rest = {k: v for k, v in row.items()
                    if k not in rotary and k not in cells}
            assert rest == base, (task, model)
    assert PAPER[("listops", "performer")]["num_random_features"] == 2
    assert PAPER[("text", "performer")]["num_random_features"] == 256
    assert PAPER[("listops", "local")]["local_layout"] == "strided"


def test_lra_xformer_rows_on_the_text_tasks_are_lras_configs():
    # google-research/long-range-arena lra_benchmarks/{listops,
    # text_classification,matching}/configs/base_*_config.py: emb_dim,
    # num_heads, num_layers, mlp_dim, max_length, warmup; learning_rate
    # 0.05, weight_decay 0.1, batch 32, "constant * linear_warmup *
    # rsqrt_decay"; listops/train.py: Adam(0.9, 0.98, eps 1e-9).
    configs = dict(listops=(512, 8, 4, 1024, 2000, 1000),
                   text=(256, 4, 4, 1024, 1000, 8000),
                   retrieval=(128, 4, 4, 512, 4000, 8000))
    for task, (emb, heads, layers, mlp, length, warmup) in configs.items():
        for model in LRA_MODELS:
            hp = get_hparams(task, model)
            assert (hp["hidden_dim"], hp["num_heads"], hp["num_layers"],
                    hp["intermediate_dim"], hp["head_hidden_dim"],
                    hp["sequence_length"], hp["warmup_steps"]) == (
                emb, heads, layers, mlp, mlp, length, warmup), (task, model)
            assert (hp["learning_rate"], hp["schedule"], hp["weight_decay"],
                    hp["weight_decay_on"], hp["batch_size"]) == (
                0.05, "rsqrt", 0.1, "all", 32)
            assert (hp["adam_beta_1"], hp["adam_beta_2"],
                    hp["adam_epsilon"]) == (0.9, 0.98, 1e-9)
            assert (hp["activation"], hp["dropout"], hp["embedding_init"],
                    hp["position_embedding"], hp["attention_bias"],
                    hp["final_norm"], hp["binary_logit"]) == (
                "gelu_tanh", 0.1, "normal", "sinusoidal", False, True, False)
            # the encoders' attention_dropout_rate 0.1 where the attention
            # drops weights (linear_attention.py line 55: `del
            # dropout_rate`; the Performer's, the Reformer's and BigBird's
            # non-causal attention drop none),
            # flax's LayerNorm epsilon and lecun_normal Dense head
            assert hp["attention_dropout"] == (
                0.0 if model in ("linear_transformer", "performer",
                                 "reformer", "bigbird") else 0.1), (task, model)
            assert (hp["layer_norm_epsilon"], hp["head_dense_init"]) == (
                1e-6, "lecun")
            assert hp["source"].startswith("Long Range Arena's"), hp
            # CLS pooling; the dual encoder pools each document's first
            # token, which LRA's Sparse Transformer makes global there too
            if model == "sinkhorn":  # its encoder's own readout
                assert hp["cls_token"] is False
                assert (hp["pooling"], hp["head"]) == (
                    ("first", "mlp2") if task == "retrieval" else
                    ("mean", "linear")), task
                continue
            assert hp["cls_token"] is (task != "retrieval"), (task, model)
            assert hp["pooling"] == "first"
            if model == "sparse_transformer":
                assert hp["sparse_cls_token"] is True
            if task == "retrieval":
                assert (hp["head"], hp["pair_features"]) == ("mlp2",
                                                             "concat")
            else:
                assert (hp["head"], hp["head_activation"]) == ("mlp",
                                                               "relu")
    # Performer: FAVOR+ with 2 features on ListOps (performer_base.py
    # lines 25-27), the generalized relu kernel elsewhere (performer.py
    # line 31)
    listops = get_hparams("listops", "performer")
    assert (listops["performer_kernel"], listops["num_random_features"]) \
        == ("softmax", 2)
    for task in TASKS:
        if task != "listops":
            assert get_hparams(task, "performer")["performer_kernel"] \
                == "relu", task


def test_lra_transformer_rows_on_path_x_are_lras_configs():
    # image/configs/pathfinder128/ and pathfinder256/: transformer_base.py
    # over base_pathfinder{128,256}_config.py (the only Path-X configs of
    # LRA's code); image/train.py clips the global norm (lines 125-131)
    for task, (batch, warmup, clip, cls, widths) in dict(
            pathx=(64, 2500, 1.0, False, (32, 2, 1, 16, 32)),
            pathx256=(32, 5000, None, True, (32, 4, 2, 32, 32))).items():
        hp = get_hparams(task, "lra_transformer")
        assert (hp["hidden_dim"], hp["num_heads"], hp["num_layers"],
                hp["attention_dim"], hp["intermediate_dim"]) == widths
        assert (hp["batch_size"], hp["train_steps"], hp["learning_rate"],
                hp["warmup_steps"], hp["schedule"], hp["schedule_steps"],
                hp["weight_decay"], hp["gradient_clipnorm"]) == (
            batch, 500000, 1e-3, warmup, "cosine", 500000 + warmup, 0.0,
            clip)
        assert (hp["dropout"], hp["attention_dropout"], hp["cls_token"],
                hp["pooling"], hp["position_embedding"],
                hp["position_init_std"]) == (
            0.1, 0.1, cls, "first" if cls else "mean", "learned", 0.02)
        assert (hp["mask_semantics"], hp["pixel_padding"]) == ("pairs", True)
        assert "pathfinder" in hp["source"] and "derived" not in hp["source"]


def test_lra_xformer_rows_on_image_and_pathfinder_are_lras_configs():
    # lra_benchmarks/image/configs/{cifar10,pathfinder32}/<model>_base.py
    # over their base configs: (emb_dim, num_heads, num_layers, qkv_dim,
    # mlp_dim, dropout_rate, classifier_pool); qkv None: the Reformer's
    # attention takes emb_dim.
    cifar = dict(lra_transformer=(128, 8, 1, 64, 128, 0.3, "CLS"),
                 local=(128, 2, 1, 64, 128, 0.3, "MEAN"),
                 synthesizer=(128, 8, 1, 64, 128, 0.3, "CLS"),
                 linear_transformer=(128, 8, 1, 64, 128, 0.3, "CLS"),
                 performer=(128, 8, 1, 64, 128, 0.3, "CLS"),
                 linformer=(128, 8, 1, 64, 128, 0.3, "CLS"),
                 sparse_transformer=(128, 8, 1, 64, 128, 0.3, "CLS"),
                 longformer=(128, 4, 4, 64, 128, 0.3, "MEAN"),
                 bigbird=(128, 4, 1, 64, 128, 0.3, "CLS"),
                 reformer=(64, 8, 4, None, 64, 0.3, "CLS"),
                 sinkhorn=(32, 1, 1, 32, 64, 0.1, "MEAN"))
    pathfinder = dict(lra_transformer=(32, 4, 4, 16, 32, 0.2, "MEAN"),
                      local=(64, 4, 2, 32, 64, 0.1, "MEAN"),
                      synthesizer=(64, 4, 2, 32, 64, 0.2, "MEAN"),
                      linear_transformer=(128, 2, 1, 64, 128, 0.2, "MEAN"),
                      performer=(32, 8, 4, 16, 32, 0.2, "MEAN"),
                      linformer=(32, 2, 1, 16, 32, 0.2, "MEAN"),
                      sparse_transformer=(32, 8, 1, 16, 32, 0.2, "MEAN"),
                      longformer=(32, 2, 2, 16, 32, 0.1, "MEAN"),
                      bigbird=(64, 2, 4, 32, 64, 0.2, "MEAN"),
                      reformer=(64, 8, 2, None, 64, 0.2, "MEAN"),
                      sinkhorn=(32, 4, 2, 16, 64, 0.2, "MEAN"))
    # (batch, steps, rate, warmup, positions)
    bases = dict(image=(256, 35000, 5e-4, 175, "learned"),
                 pathfinder=(512, 62400, 1e-3, 312, "sinusoidal"))
    for task, table in (("image", cifar), ("pathfinder", pathfinder)):
        batch, steps, rate, warmup, positions = bases[task]
        assert sorted(table) == sorted(LRA_MODELS)
        for model, (emb, heads, layers, qkv, mlp, drop, pool) in \
                table.items():
            hp = get_hparams(task, model)
            assert (hp["hidden_dim"], hp["num_heads"], hp["num_layers"],
                    hp["attention_dim"], hp["intermediate_dim"],
                    hp["dropout"]) == (emb, heads, layers, qkv, mlp, drop), \
                (task, model)
            assert hp["cls_token"] is (pool == "CLS"), (task, model)
            assert hp["pooling"] == ("first" if pool == "CLS" else "mean")
            assert (hp["batch_size"], hp["train_steps"], hp["learning_rate"],
                    hp["warmup_steps"], hp["position_embedding"]) == (
                batch, steps, rate, warmup, positions), (task, model)
            # cosine over num_train_steps from the warmup's end
            assert hp["schedule"] == "cosine"
            assert hp["schedule_steps"] == steps + warmup
            assert hp["weight_decay"] == (
                0.7 if (task, model) == ("image", "sinkhorn") else 0.0)
            assert hp["head"] == ("linear" if model == "sinkhorn" else "mlp")
            # attention_dropout_rate: base_cifar10_config.py line 53 (0.2),
            # base_pathfinder32_config.py line 53 (0.1)
            assert hp["attention_dropout"] == (
                0.0 if model in ("linear_transformer", "performer",
                                 "reformer", "bigbird")
                else 0.2 if task == "image" else 0.1), (task, model)
            assert (hp["layer_norm_epsilon"], hp["head_dense_init"]) == (
                1e-6, "lecun")
            assert hp["source"].startswith("Long Range Arena's"), hp
    # the patterns of every task (utils/train_utils.py lines 73-78)
    for task in TASKS:
        hp = get_hparams(task, "sparse_transformer")
        assert (hp["sparse_block_size"], hp["sparse_summary_size"]) == (
            50, 10), task
    assert get_hparams("image", "local")["local_block_size"] == 64
    assert get_hparams("image", "linformer")["position_init_std"] == 0.02


def test_lru_rows_are_the_s5_rows_with_the_lru_cells():
    # presets.lru: the S5 row of the task, S5's own cells dropped, the
    # LRU's ring and the full GLU of its block.
    s5_only = {"num_blocks", "C_init", "clip_eigs", "dt_min", "dt_max",
               "dt_learning_rate", "dt_weight_decay", "source",
               "output_activation"}
    lru_only = {"r_min", "r_max", "max_phase", "recurrence", "source",
                "output_activation"}
    for task in TASKS:
        s5 = PAPER[(task, "s5")]
        row = PAPER[(task, "lru")]
        assert row["source"].startswith("derived:"), task
        assert row["output_activation"] == "glu"
        assert {k: v for k, v in row.items() if k not in lru_only} == {
            k: v for k, v in s5.items() if k not in s5_only}, task
        hp = get_hparams(task, "lru")
        assert hp["state_dim"] == s5["state_dim"]
        assert (hp["r_min"], hp["r_max"]) == (0.0, 0.99)


def test_rtf_rows_take_their_configs_cells_and_the_s4d_rows_conventions():
    # presets.rtf: the cells of ruke1ire/RTF's configs/experiment/lra/
    # rtf-<task>.yaml; the code base's data and block conventions of the
    # S4D row of the task (the same code base), but the pixel tasks'
    # [0, 1] input everywhere (PathX-256's S4D row ran in the NTFS code).
    configs = {  # width, depth, prenorm, dropout, layer dropout, N, num_a,
        # lr, layer lr, wd, decay on, batch, epochs, warmup, total steps
        "listops": (256, 6, False, 0.0, 0.0, 4, 1, 0.002, None, 0.07, "all",
                    32, 40, 12000, 120000),
        "text": (256, 6, True, 0.1, 0.1, 4, 1, 0.005, 0.001, 0.05,
                 "all_but_dynamics", 16, 32, 5000, 50000),
        "retrieval": (256, 6, True, 0.0, 0.0, 4, 1, 0.002, 1e-5, 0.0,
                      "all_but_dynamics", 64, 20, 5704, 57040),
        "image": (512, 6, False, 0.1, 0.1, 64, 1, 0.006, 0.005, 0.05, "all",
                  50, 200, 18000, 180000),
        "pathfinder": (256, 6, True, 0.1, 0.1, 64, None, 0.002, None, 0.05,
                       "all", 64, 200, 50000, 500000),
        "pathx": (256, 6, True, 0.1, 0.0, 2048, None, 0.001, 0.001, 0.025,
                  "all_but_dynamics", 16, 50, 50000, 500000),
    }
    configs["pathx256"] = configs["pathx"]
    cells = ("hidden_dim", "num_layers", "prenorm", "dropout",
             "layer_dropout", "state_dim", "num_denominators",
             "learning_rate", "ssm_learning_rate", "weight_decay",
             "weight_decay_on", "batch_size", "epochs", "warmup_steps",
             "schedule_steps")
    conventions = ("append_eos", "dense_init", "embedding_init",
                   "embedding_dropout", "head", "head_activation",
                   "pair_features", "input_encoder", "input_encoder_init",
                   "tie_dropout", "output_activation",
                   "schedule", "causal")
    for task in TASKS:
        hp, s4d = get_hparams(task, "rtf"), get_hparams(task, "s4d")
        assert tuple(hp[k] for k in cells) == configs[task], task
        assert {k: hp.get(k) for k in conventions} == {
            k: s4d.get(k) for k in conventions}, task
        assert (hp["norm"], hp["batch_norm_unbiased"], hp["pooling"],
                hp["tie_layer_dropout"]) == ("batch", True, "mean", False), task
        if hp["input_encoder"] == "linear" and task != "image":
            assert (hp["pixel_mean"], hp["pixel_std"]) == (0.0, 1.0), task
        assert PAPER[(task, "rtf")]["source"].startswith("derived:") == (
            task == "pathx256"), task
    assert get_hparams("image", "rtf")["pixel_mean"] == get_hparams(
        "image", "s4d")["pixel_mean"]
    truncation = {t: get_hparams(t, "rtf")["truncation"] for t in TASKS}
    assert truncation == dict(listops=2048, text=4096, retrieval=4000,
                              image=None, pathfinder=None, pathx=None,
                              pathx256=None)


def test_s4_pathfinder_rows_feed_the_uncentred_grey_value():
    # state-spaces/s4 configs/dataset/pathfinder.yaml `center: False`:
    # [0, 1] on Pathfinder and PathX; NTFS's PathX-256 run centres.
    for model in ("s4", "s4d"):
        for task, expected in (("pathfinder", (0.0, 1.0)),
                               ("pathx", (0.0, 1.0)),
                               ("pathx256", (0.5, 0.5))):
            hp = get_hparams(task, model)
            assert (hp["pixel_mean"], hp["pixel_std"]) == expected


def test_megalodon_rows_are_the_mega_rows_with_the_megalodon_cells():
    # presets.megalodon: the MEGA row of the task without the cells that
    # MEGALODON's block replaced, with timestep-norm groups dividing the
    # width.
    mega_only = {"attention_activation", "max_positions", "prenorm", "norm",
                 "batch_norm_momentum", "batch_norm_unbiased", "source"}
    for task in TASKS:
        row = PAPER[(task, "megalodon")]
        assert row["source"].startswith("derived:"), task
        assert {k: v for k, v in row.items()
                if k not in ("norm_groups", "source")} == {
            k: v for k, v in PAPER[(task, "mega")].items()
            if k not in mega_only}, task
        width, groups = row["hidden_dim"], row["norm_groups"]
        assert width % groups == 0 and groups <= 32, task
        assert all(width % g for g in range(groups + 1, 33)), task
    assert PAPER[("listops", "megalodon")]["norm_groups"] == 20
    hp = get_hparams("listops", "megalodon")
    assert (hp["norm"], hp["num_heads"], hp["weight_decay_on"]) == (
        "timestep", 1, "all")


def test_batch_norm_counts_padding_where_the_reference_code_does():
    # The S4 and S5 code bases' BatchNorm sees no mask (presets.s4,
    # presets.s5): their rows, and the LRU's and RTF's built on them, count
    # the padded positions; every other row keeps the real-token statistics.
    counted = {(task, model) for (task, model), row in PAPER.items()
               if get_hparams(task, model).get("batch_norm_count_padding")}
    assert counted == {(task, model) for (task, model), row in PAPER.items()
                       if model in ("s4", "s4d", "s5", "lru", "rtf")
                       and row.get("norm") == "batch"}
    assert ("listops", "s4") in counted and ("text", "s5") in counted
    assert not get_hparams("listops", "dlr")["batch_norm_count_padding"]


@pytest.mark.parametrize("model", ["s4", "s4d", "rtf", "s5", "lru"])
def test_unmasked_rows_take_their_code_bases_batches(model):
    # Whatever a real token's output or the BatchNorm's statistics read of
    # the padding depends on the batch it comes in: the paper rows take
    # the reference code bases' batches (presets.s4.unmasked_blocks).
    # The S4 code's (S4, S4D, RTF): random rows, each batch padded to its
    # longest row, the BatchNorm counting up to it ("longest"); the S5
    # code's (S5, LRU): random rows padded to the task's length, every
    # position counted and read.
    s5_code = model in ("s5", "lru")
    for task in ("listops", "text", "retrieval"):
        for technique in ("none", "spt"):
            row = get_hparams(task, model, technique=technique)
            assert row["bucket_step"] is None, (task, technique)
            assert row["batch_norm_count_padding"] == (
                True if s5_code else "longest"), (task, technique)
            assert row["read_padding"] is s5_code
        # The quick and small rows keep length buckets (a CPU's cost) and
        # count the bucketed batch's padding, as their measured runs.
        for preset, step in (("quick", 32 if task == "listops" else 256),
                             ("small", 256)):
            row = get_hparams(task, model, preset)
            assert row["bucket_step"] == step, (task, preset)
            assert row["batch_norm_count_padding"] is True, (task, preset)
    # The pixel tasks have no padding: every position is real.
    for task in ("image", "pathfinder", "pathx"):
        row = get_hparams(task, model)
        assert row["batch_norm_count_padding"] is (row["norm"] == "batch")
        assert row["bucket_step"] == 256  # unused: no padding to cut


def test_only_the_sinkhorn_rows_pool_the_padding():
    # LRA's Sinkhorn encoder reads out `jnp.mean(encoded, axis=1)` over
    # its full-length batches on ListOps and Text, and over the black
    # pixels on Image and Pathfinder; its Retrieval dual encoder and every
    # other row pool the real tokens (or a CLS token).
    pooled = {(task, model) for (task, model) in PAPER
              if get_hparams(task, model)["pool_padding"]}
    assert pooled == {(task, "sinkhorn") for task in (
        "listops", "text", "image", "pathfinder")}
    for task in ("listops", "text"):
        row = get_hparams(task, "sinkhorn")
        assert (row["pooling"], row["bucket_step"]) == ("mean", None)
        for preset in ("quick", "small"):  # as their measured runs
            row = get_hparams(task, "sinkhorn", preset)
            assert row["pool_padding"] is False
            assert row["bucket_step"] == (
                32 if (task, preset) == ("listops", "quick") else 256)


def test_the_sinkhorn_rows_sort_with_lras_einsum():
    # sinkhorn_attention.py line 382 (every sorted block the sum of all
    # blocks) and its 25 sort logits (line 216), on every row that cites
    # it, LRA's own and the Path-X ones; the family keeps the method's.
    rows = [task for (task, model) in PAPER if model == "sinkhorn"]
    assert sorted(rows) == sorted(("listops", "text", "retrieval", "image",
                                   "pathfinder", "pathx", "pathx256"))
    for task in rows:
        hp = get_hparams(task, "sinkhorn")
        assert (hp["sinkhorn_sorting"], hp["sinkhorn_max_blocks"]) == (
            "lra", 25), task
        # LRA's blocks pass bias=False, the sorting network's too
        assert hp["attention_bias"] is task.startswith("pathx"), task
    assert FAMILIES["sinkhorn"].keys["sinkhorn_sorting"] == "permutation"
    assert FAMILIES["sinkhorn"].keys["sinkhorn_max_blocks"] is None
    # the method's sorting on a row sized for LRA's: 40 blocks, 25 logits
    with pytest.raises(ValueError, match="40 blocks of 50"):
        get_hparams("listops", "sinkhorn", sinkhorn_sorting="permutation")
    assert get_hparams("listops", "sinkhorn", sinkhorn_sorting="permutation",
                       sinkhorn_max_blocks=None)["sinkhorn_max_blocks"] is None


def test_the_reformer_rows_run_lras_reformer_code():
    # reformer_attention.py as it runs (`reformer_variant="lra"`), on
    # every row that cites it, Path-X's too (no padding there: nothing to
    # mask); the family keeps the paper's attention.
    rows = [task for (task, model) in PAPER if model == "reformer"]
    assert len(rows) == 7
    for task in rows:
        hp = get_hparams(task, "reformer")
        assert (hp["reformer_variant"], hp["mask_semantics"],
                hp["attention_dim"]) == ("lra", "none", None), task
    assert FAMILIES["reformer"].keys["reformer_variant"] == "paper"
    with pytest.raises(ValueError, match="needs mask_semantics='none'"):
        get_hparams("listops", "reformer", mask_semantics="keys")
    with pytest.raises(ValueError, match="reformer_chunk_size=None"):
        get_hparams("listops", "reformer", reformer_chunk_size=64)
    with pytest.raises(ValueError, match="attention_dim=None"):
        get_hparams("listops", "reformer", attention_dim=256)


def test_lra_rows_mask_padding_as_each_attentions_lra_code():
    # flax's pair mask where LRA's code masks a dense (query, key) grid;
    # no mask where it never reads it (then LRA's full-length batches);
    # LRA's blocked masks in the local, BigBird and Sinkhorn attentions
    # (the first two after a real block of padding, set by the length:
    # full-length batches too) (presets.lra._MASKS)
    expected = dict(lra_transformer="pairs", synthesizer="pairs",
                    sparse_transformer="pairs", longformer="pairs",
                    linear_transformer="none", performer="none",
                    linformer="none", reformer="none", local="lra_blocks",
                    sinkhorn="lra_blocks", bigbird="lra_blocks")
    assert sorted(expected) == sorted(LRA_MODELS)
    for model, semantics in expected.items():
        for task in ("listops", "text", "retrieval", "image", "pathfinder"):
            hp = get_hparams(task, model)
            assert hp["mask_semantics"] == semantics, (task, model)
            image = task in ("image", "pathfinder")
            assert hp["pixel_padding"] is (image and semantics != "keys"), (
                task, model)
            if not image:  # full-length batches where LRA's are read
                assert (hp["bucket_step"] is None) is (
                    semantics in ("none", "lra_blocks")
                    or hp["pool_padding"]), (task, model)
    for model in ("transformer", "s4d", "mega"):
        assert not get_hparams("pathfinder", model).get("pixel_padding")
