import pytest

from lra_keras.hparams import AUGMENT_HPARAMS
from lra_keras.hparams import COMMON_KEYS
from lra_keras.hparams import COMPUTE_TIED
from lra_keras.hparams import EXPECTED
from lra_keras.hparams import EXPECTED_LRA
from lra_keras.hparams import HPARAMS
from lra_keras.hparams import MODEL_KEYS
from lra_keras.hparams import MODELS
from lra_keras.hparams import PRESETS
from lra_keras.hparams import QUICK
from lra_keras.hparams import SPT_LRA_SIZED
from lra_keras.hparams import TASKS
from lra_keras.hparams import TECHNIQUE_HPARAMS
from lra_keras.hparams import TECHNIQUES
from lra_keras.hparams import YCTFS_TECHNIQUES
from lra_keras.hparams import expected_accuracy
from lra_keras.hparams import get_hparams

pytestmark = pytest.mark.numpy_only

YCTFS_TASKS = ("image", "pathfinder", "text", "retrieval", "listops")


def _known_keys(task, model):
    return set(COMMON_KEYS) | set(MODEL_KEYS[model]) | set(TASKS[task])


def test_every_task_model_preset_and_technique_resolves():
    for task in TASKS:
        for model in MODELS:
            assert (task, model) in HPARAMS
            assert (task, model) in QUICK
            for preset in PRESETS:
                for technique in TECHNIQUES:
                    hp = get_hparams(task, model, preset, technique)
                    assert hp["technique"] == technique
                    assert (hp["task"], hp["model"], hp["preset"]) == (
                        task, model, preset)
                    assert hp["vocabulary_size"] == (
                        TASKS[task]["vocabulary_size"])
                    assert hp["num_classes"] == TASKS[task]["num_classes"]
                    assert hp["source"]


def test_every_entry_cites_a_source():
    tables = [HPARAMS, TECHNIQUE_HPARAMS, AUGMENT_HPARAMS, EXPECTED,
              EXPECTED_LRA, SPT_LRA_SIZED, COMPUTE_TIED, QUICK]
    for table in tables:
        assert table
        for key, entry in table.items():
            assert isinstance(entry.get("source"), str), key
            assert entry["source"].strip(), key


def test_every_key_of_every_row_is_known():
    for (task, model), row in {**HPARAMS, **QUICK}.items():
        assert set(row) <= _known_keys(task, model), (task, model)
    for (task, model, technique), row in TECHNIQUE_HPARAMS.items():
        assert technique in TECHNIQUES and technique != "none"
        assert set(row) <= _known_keys(task, model), (task, model)
    for (task, objective), row in SPT_LRA_SIZED.items():
        assert objective in ("masked", "causal")
        assert set(row) <= _known_keys(task, "transformer"), task
    for key in {**EXPECTED, **EXPECTED_LRA}:
        assert key[0] in TASKS and key[1] in MODELS, key
        assert len(key) == 2 or key[2] in TECHNIQUES[1:], key


def test_rows_without_a_paper_run_say_derived():
    for task in ("pathx", "pathx256"):
        for model in ("gmlp", "conv"):
            assert HPARAMS[(task, model)]["source"].startswith("derived:")
    for model in MODELS:
        if model != "s4":
            assert "derived" in HPARAMS[("pathx256", model)]["source"]
    for task in TASKS:
        assert HPARAMS[(task, "s4d")]["source"].startswith("derived:")


def test_transformer_rows_are_yctfs_table_5():
    hp = get_hparams("listops", "transformer", "paper")
    assert (hp["hidden_dim"], hp["num_layers"], hp["num_heads"]) == (256, 6, 4)
    assert (hp["intermediate_dim"], hp["batch_size"], hp["epochs"]) == (
        512, 64, 120)
    assert hp["learning_rate"] == 1e-4 and hp["weight_decay"] == 0.05
    hp = get_hparams("image", "transformer")
    assert (hp["hidden_dim"], hp["num_layers"], hp["num_heads"],
            hp["intermediate_dim"]) == (160, 10, 4, 320)
    assert (hp["learning_rate"], hp["batch_size"], hp["weight_decay"],
            hp["epochs"]) == (1e-3, 48, 0.05, 200)
    assert hp["rotary_disable_half"] is True
    assert hp["max_wavelength"] == 10000 and hp["pooling"] == "mean"
    assert "Table 5" in hp["source"]
    disabled = {t: get_hparams(t, "transformer")["rotary_disable_half"]
                for t in YCTFS_TASKS}
    assert disabled == dict(image=True, pathfinder=False, text=True,
                            retrieval=True, listops=False)
    hp = get_hparams("pathx", "transformer")
    assert (hp["num_layers"], hp["pooling"], hp["learning_rate"],
            hp["batch_size"]) == (5, "max", 5e-4, 32)


def test_pathfinder_epochs_67_only_with_all_three_sets():
    for model in ("transformer", "gmlp", "conv"):
        assert get_hparams("pathfinder", model)["epochs"] == 200
        hp = get_hparams("pathfinder", model, augment=True)
        assert hp["epochs"] == 67
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
    assert (hp["hidden_dim"], hp["state_dim"], hp["blocks"]) == (512, 384, 3)
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
    assert EXPECTED_LRA[("listops", "transformer")]["accuracy"] == 36.37
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


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (("nope",), {}, "Unknown task"),
        (("listops", "rnn"), {}, "Unknown model"),
        (("listops",), {"preset": "huge"}, "Unknown preset"),
        (("listops",), {"technique": "distill"}, "Unknown technique"),
        (("listops",), {"hiden_dim": 3}, "Unknown config key"),
        (("listops", "s4"), {"num_heads": 3}, "Unknown config key"),
    ],
)
def test_bad_keys_are_rejected(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        get_hparams(*args, **kwargs)
