import pytest

from lra_keras.hparams import EXPECTED
from lra_keras.hparams import HPARAMS
from lra_keras.hparams import get_hparams

pytestmark = pytest.mark.numpy_only


def test_paper_row_is_table_5():
    hp = get_hparams("listops", "transformer", "paper")
    assert (hp["hidden_dim"], hp["num_layers"], hp["num_heads"]) == (256, 6, 4)
    assert (hp["intermediate_dim"], hp["batch_size"], hp["epochs"]) == (
        512, 64, 120)
    assert hp["learning_rate"] == 1e-4 and hp["weight_decay"] == 0.05
    assert "Table 5" in hp["source"]


def test_every_entry_cites_a_source():
    for key, entry in {**HPARAMS, **EXPECTED}.items():
        assert entry.get("source"), key


def test_quick_preset_and_overrides():
    hp = get_hparams("listops", preset="quick", epochs=7)
    assert hp["epochs"] == 7 and hp["preset"] == "quick"
    assert hp["hidden_dim"] < 256


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (("nope",), {}, "Unknown task"),
        (("listops", "rnn"), {}, "Unknown model"),
        (("listops",), {"preset": "huge"}, "Unknown preset"),
        (("listops",), {"hiden_dim": 3}, "Unknown config key"),
    ],
)
def test_bad_keys_are_rejected(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        get_hparams(*args, **kwargs)
