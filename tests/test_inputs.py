"""The end token of `append_eos` (the S4 code's `<eos>`)."""

import numpy as np
import pytest

from lra_keras.hparams import get_hparams
from lra_keras.tasks import TASKS
from lra_keras.training.inputs import append_end_token

pytestmark = pytest.mark.numpy_only


def reference_append(rows, end_id, length):
    """The S4 loaders' rule, row by row: `tokens[:l_max - 1] + [<eos>]`,
    right-padded with 0 to `length` (src/dataloaders/lra.py 320-343)."""
    out = []
    for row in rows:
        tokens = [t for t in row if t != 0][:length - 1] + [end_id]
        out.append(tokens + [0] * (length - len(tokens)))
    return np.array(out)


def test_append_end_token_equals_the_s4_rule():
    rng = np.random.default_rng(0)
    length = 12
    lengths = np.concatenate([[0, 1, length - 1, length], rng.integers(
        0, length + 1, 60)])
    x = np.zeros((len(lengths), length), np.uint8)
    for i, n in enumerate(lengths):
        x[i, :n] = rng.integers(1, 16, n)
    out = append_end_token(x, 17)
    np.testing.assert_array_equal(out, reference_append(x, 17, length))
    assert out.shape == x.shape
    np.testing.assert_array_equal(x[0], 0)  # the input is not changed
    # The byte tasks' end id 258 needs a wider dtype than uint8.
    wide = append_end_token(x, 258)
    assert wide.dtype == np.uint16
    np.testing.assert_array_equal(wide, reference_append(x, 258, length))


def test_append_end_token_ends_each_document_of_a_pair():
    x = np.zeros((2, 2, 5), np.uint16)
    x[0, 0, :3], x[0, 1, :5], x[1, 1, :1] = 7, 8, 9
    out = append_end_token(x, 258)
    np.testing.assert_array_equal(out[0, 0], [7, 7, 7, 258, 0])
    np.testing.assert_array_equal(out[0, 1], [8, 8, 8, 8, 258])
    np.testing.assert_array_equal(out[1, 0], [258, 0, 0, 0, 0])
    np.testing.assert_array_equal(out[1, 1], [9, 258, 0, 0, 0])


def test_append_end_token_refuses_what_it_cannot_end():
    with pytest.raises(ValueError, match=r"Row \(1,\) has padding"):
        append_end_token(np.array([[1, 2, 0], [0, 3, 0]]), 17)
    with pytest.raises(ValueError, match="integer array"):
        append_end_token(np.ones((2, 3), np.float32), 17)
    with pytest.raises(ValueError, match="a length of at least 1"):
        append_end_token(np.ones((2, 0), np.int32), 17)


@pytest.mark.parametrize("task", ["listops", "text", "retrieval"])
@pytest.mark.parametrize("model", ["s4", "s4d", "s5", "dlr", "rtf", "lru"])
def test_the_s4_code_base_rows_end_with_eos(task, model):
    hp = get_hparams(task, model)
    spec = TASKS[task]
    assert hp["append_eos"] is True
    # one embedding row more, the end token's
    assert spec.end_id == spec.vocabulary_size
    assert hp["vocabulary_size"] == spec.vocabulary_size + 1
    # the quick and small rows keep the paper row's data
    assert get_hparams(task, model, "quick")["vocabulary_size"] == (
        spec.vocabulary_size + 1)


def test_rows_of_other_code_bases_have_no_end_token():
    for task, model in [("listops", "transformer"), ("text", "mega"),
                        ("retrieval", "conv"), ("listops", "gmlp")]:
        hp = get_hparams(task, model)
        assert hp["append_eos"] is False
        assert hp["vocabulary_size"] == TASKS[task].vocabulary_size
    # NTFS's SPT Transformer rows run in the S4 code base
    assert get_hparams("listops", "transformer",
                       technique="spt")["append_eos"] is True


def test_append_eos_is_refused_on_pixel_tasks():
    assert TASKS["image"].end_id is None
    with pytest.raises(ValueError, match="pixel tasks' sequences have none"):
        get_hparams("pathfinder", "s4", append_eos=True)
    # set by hand on a row without it: the vocabulary grows with it
    hp = get_hparams("listops", "transformer", append_eos=True)
    assert hp["vocabulary_size"] == TASKS["listops"].vocabulary_size + 1


def test_the_s5_code_rows_pad_listops_to_its_l_max():
    # lindermanlab/S5 `s5/dataloaders/lra.py` line 228: ListOps `l_max`
    # 2048, every batch padded to it (`train_helpers.py` 301-305); the
    # trees stay LRA's, under 2000 tokens
    for model in ("s5", "lru"):
        hp = get_hparams("listops", model)
        assert (hp["sequence_length"], hp["padded_length"]) == (2000, 2048)
        assert hp["bucket_step"] is None
        # the scaled rows pad to their own (bucketed) lengths
        for preset in ("quick", "small"):
            assert get_hparams("listops", model, preset)[
                "padded_length"] is None
    # its text and AAN lengths are the tasks' (4096, 4000: lines 27, 562)
    for task in ("text", "retrieval"):
        hp = get_hparams(task, "s5")
        assert hp["padded_length"] is None
        assert hp["sequence_length"] == TASKS[task].sequence_length
    assert get_hparams("listops", "s4")["padded_length"] is None


def test_padded_length_is_checked():
    with pytest.raises(ValueError, match="padded_length=1999 < "
                       "sequence_length=2000"):
        get_hparams("listops", "s5", padded_length=1999)
    with pytest.raises(ValueError, match="pixel tasks' have no padding"):
        get_hparams("image", "s5", padded_length=2048)
    with pytest.raises(ValueError, match="kernel_length=2048 < "
                       "padded_length=4096"):
        get_hparams("listops", "s4", padded_length=4096)


def test_the_ntfs_transformer_attends_to_padding_up_to_the_longest_row():
    # IdoAmos/not-from-scratch: batches padded to their longest row, an
    # attention without a key padding mask (`presets.ntfs`)
    for task in ("listops", "text", "retrieval"):
        hp = get_hparams(task, "transformer", technique="spt")
        assert (hp["mask_semantics"], hp["bucket_step"]) == ("longest", None)
        for preset in ("quick", "small"):  # their measured batches
            hp = get_hparams(task, "transformer", preset, technique="spt")
            assert hp["mask_semantics"] == "keys"
            assert hp["bucket_step"] is not None
        # the YCTFS rows mask the padded keys
        assert get_hparams(task, "transformer")["mask_semantics"] == "keys"
    for task in ("image", "pathfinder", "pathx"):  # no padding
        assert get_hparams(task, "transformer", technique="spt")[
            "mask_semantics"] == "keys"


def test_the_ntfs_dlr_reads_padding_up_to_the_longest_row():
    # IdoAmos/not-from-scratch `DSS.forward` absorbs the lengths unread
    for task in ("listops", "text", "retrieval"):
        for technique in ("none", "spt"):
            hp = get_hparams(task, "dlr", technique=technique)
            assert (hp["read_padding"], hp["bucket_step"]) == (
                "longest", None)
        for preset in ("quick", "small"):  # their measured batches
            hp = get_hparams(task, "dlr", preset)
            assert hp["read_padding"] is False
            assert hp["bucket_step"] is not None
    for task in ("image", "pathfinder", "pathx"):  # no padding
        assert get_hparams(task, "dlr")["read_padding"] is False


def test_the_ntfs_path_x_transformers_attend_within_windows():
    # IdoAmos/not-from-scratch `mhfla`: windows of 4096 at Path-X
    # (transformer-lra-pathx-small.yaml), 8192 at Path-X-256
    # (transformer-lra-pathx256.yaml), one neighbour per side
    for task, window in (("pathx", 4096), ("pathx256", 8192)):
        for technique in ("none", "spt"):
            hp = get_hparams(task, "transformer", technique=technique)
            assert (hp["attention_window"], hp["window_look_backward"],
                    hp["window_look_forward"]) == (window, 1, 1)
            assert hp["sequence_length"] % window == 0
        # the causal objective: every earlier position, asked for
        with pytest.raises(ValueError, match="attention_window=None"):
            get_hparams(task, "transformer", technique="spt",
                        pretrain_objective="causal")
        hp = get_hparams(task, "transformer", technique="spt",
                         pretrain_objective="causal", attention_window=None)
        assert hp["causal"] is True and hp["attention_window"] is None
        with pytest.raises(ValueError, match="attention_window=.* not "
                           "with causal=True"):
            get_hparams(task, "transformer", causal=True)
    # the other rows attend to every key
    assert get_hparams("pathfinder", "transformer")["attention_window"] is None
    assert get_hparams("listops", "transformer",
                       technique="spt")["attention_window"] is None
