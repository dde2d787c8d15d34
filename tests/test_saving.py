"""`.keras` files: safe-mode loading, clear errors on damaged files, atomic
saves. Under every backend."""

import zipfile

import keras
import numpy as np
import pytest

from lra_keras.models import build_classifier
from lra_keras.saving import ModelFileError
from lra_keras.saving import assign_in_order
from lra_keras.saving import check_keras_file
from lra_keras.saving import load_initial_weights
from lra_keras.saving import load_model
from lra_keras.saving import save_model
from tests.testing import to_numpy

HP = dict(task="listops", model="conv", num_classes=3, hidden_dim=8,
          num_layers=1, vocabulary_size=17, kernel_size=3,
          intermediate_dim=8, sequence_length=16)


def _inputs():
    rng = np.random.default_rng(0)
    x = rng.integers(1, 17, size=(2, 16)).astype("int32")
    mask = np.ones((2, 16), bool)
    mask[1, 10:] = False
    return {"token_ids": np.where(mask, x, 0), "padding_mask": mask}


@pytest.fixture
def saved(tmp_path):
    model = build_classifier(**HP)
    return model, save_model(model, tmp_path / "model.keras")


def test_load_model_round_trip_in_safe_mode(saved):
    model, path = saved
    loaded = load_model(path)
    np.testing.assert_array_equal(to_numpy(loaded(_inputs())),
                                  to_numpy(model(_inputs())))


def test_safe_mode_is_the_default(tmp_path):
    # A Lambda layer holds Python bytecode: safe mode must refuse it.
    x = keras.Input((4,))
    model = keras.Model(x, keras.layers.Lambda(lambda t: t * 2.0)(x))
    path = save_model(model, tmp_path / "lambda.keras")
    with pytest.raises(ValueError, match="safe_mode"):
        load_model(path)
    assert load_model(path, safe_mode=False) is not None


def test_truncated_file_is_a_clear_error(saved, tmp_path):
    _, path = saved
    data = path.read_bytes()
    for size in (len(data) // 2, len(data) - 10, 100):
        cut = tmp_path / f"cut_{size}.keras"
        cut.write_bytes(data[:size])
        with pytest.raises(ModelFileError, match="truncated"):
            load_model(cut)


def test_empty_file_is_a_clear_error(tmp_path):
    path = tmp_path / "empty.keras"
    path.write_bytes(b"")
    with pytest.raises(ModelFileError, match="empty"):
        load_model(path)


def test_corrupt_member_is_a_clear_error(saved, tmp_path):
    _, path = saved
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("model.weights.h5")
        offset = info.header_offset + 30 + len(info.filename)
    data = bytearray(path.read_bytes())
    for i in range(offset + 200, offset + 264):
        data[i] ^= 0xFF  # inside the stored weights
    bad = tmp_path / "corrupt.keras"
    bad.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="model.weights.h5.*CRC"):
        load_model(bad)


def test_bytes_appended_to_the_archive_are_a_clear_error(saved, tmp_path):
    # Reader fuzzing, [keras-zip seed=3 append model.keras offset=200]:
    # zipfile ignores what follows the end record, so it passed the check.
    _, path = saved
    joined = tmp_path / "joined.keras"
    joined.write_bytes(path.read_bytes() + b"\0" * 200)
    with pytest.raises(ModelFileError, match="end record does not end"):
        check_keras_file(joined)


def test_unsupported_member_flags_are_a_clear_error(saved, tmp_path):
    # Reader fuzzing, [keras-zip seed=3362 flip model.keras
    # flips=11363:0x00->0xa0]: a flag bit set in the central directory
    # raised a bare NotImplementedError (and an unknown compression
    # method, seed=2928, another).
    _, path = saved
    data = bytearray(path.read_bytes())
    central = data.rindex(b"PK\x01\x02")  # the last member's entry
    for offset, value in ((8, 0x20), (10, 99)):  # flags, method
        damaged = data.copy()
        damaged[central + offset] = value
        bad = tmp_path / "flagged.keras"
        bad.write_bytes(bytes(damaged))
        with pytest.raises(ModelFileError, match="NotImplementedError"):
            check_keras_file(bad)


def test_archive_without_weights_is_a_clear_error(saved, tmp_path):
    _, path = saved
    partial = tmp_path / "partial.keras"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(partial, "w") as dst:
        dst.writestr("config.json", src.read("config.json"))
    with pytest.raises(ModelFileError, match="lacks.*model.weights.h5"):
        load_model(partial)


def test_wrong_kinds_of_path_are_clear_errors(saved, tmp_path):
    model, _ = saved
    with pytest.raises(FileNotFoundError, match="No model file"):
        load_model(tmp_path / "missing.keras")
    with pytest.raises(ModelFileError, match="directory"):
        load_model(tmp_path)
    weights = tmp_path / "model.weights.h5"
    model.save_weights(str(weights))
    with pytest.raises(ModelFileError, match="weights only"):
        check_keras_file(weights)


def test_interrupted_save_keeps_the_previous_file(saved, monkeypatch):
    model, path = saved
    before = path.read_bytes()

    def failing_save(filepath, *args, **kwargs):
        with open(filepath, "wb") as f:
            f.write(b"PK\x03\x04 half a file")
        raise KeyboardInterrupt

    monkeypatch.setattr(model, "save", failing_save)
    with pytest.raises(KeyboardInterrupt):
        save_model(model, path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["model.keras"]
    assert load_model(path) is not None


def test_save_model_wants_a_keras_suffix(saved, tmp_path):
    model, _ = saved
    with pytest.raises(ValueError, match=r"\.keras"):
        save_model(model, tmp_path / "model.h5")


def test_initial_weights_come_from_a_run_or_a_file(saved, tmp_path):
    source, path = saved
    run_dir = path.parent  # a run directory: its model.keras
    keras.utils.set_random_seed(7)
    for where in (run_dir, path):
        model = build_classifier(**HP)
        assert any(not np.array_equal(to_numpy(a), to_numpy(b))
                   for a, b in zip(model.weights, source.weights))
        assert load_initial_weights(model, str(where)) == path
        for a, b in zip(model.weights, source.weights):
            np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
        np.testing.assert_array_equal(to_numpy(model(_inputs())),
                                      to_numpy(source(_inputs())))


def test_initial_weights_of_another_architecture_are_refused(saved,
                                                             tmp_path):
    _, path = saved
    wider = build_classifier(**{**HP, "hidden_dim": 16})
    with pytest.raises(ValueError, match=r"another architecture: its "
                       r"weight 0 .* has shape \(17, 8\)"):
        load_initial_weights(wider, path)
    deeper = build_classifier(**{**HP, "num_layers": 2})
    with pytest.raises(ValueError, match="another architecture"):
        load_initial_weights(deeper, path)
    unfinished = tmp_path / "interrupted"
    unfinished.mkdir()
    with pytest.raises(FileNotFoundError, match="holds no finished run"):
        load_initial_weights(deeper, unfinished)
    with pytest.raises(FileNotFoundError, match="nothing there"):
        load_initial_weights(deeper, tmp_path / "missing.keras")


def test_assign_in_order_assigns_all_or_nothing():
    variables = [keras.Variable(np.zeros((2, 3), "float32")),
                 keras.Variable(np.zeros((4,), "float32"))]
    good = [np.ones((2, 3), "float32"), np.full((4,), 2.0, "float32")]

    def mismatch(index):
        return ValueError(f"at {index}")

    # the second shape differs: the first variable stays as it was
    with pytest.raises(ValueError, match="at 1"):
        assign_in_order(variables, [good[0], np.ones((5,))], mismatch)
    # one value too many, one too few: shapes agree as far as both go
    for values in (good + [np.ones(1)], good[:1]):
        with pytest.raises(ValueError, match="at None"):
            assign_in_order(variables, values, mismatch)
    assert all(not to_numpy(v).any() for v in variables)
    assign_in_order(variables, good, mismatch)
    for variable, value in zip(variables, good):
        np.testing.assert_array_equal(to_numpy(variable), value)


def test_every_layer_is_registered_under_its_own_name():
    """Every layer class `lra_keras.layers` exports is registered as
    `lra_keras>ClassName`, so a saved model that holds it loads; the one
    exception is `StateSpaceLayer`, a base class (its subclasses
    implement the kernel) that no model holds itself."""
    import inspect

    from lra_keras import layers

    exported = [value for value in vars(layers).values()
                if inspect.isclass(value)
                and issubclass(value, keras.layers.Layer)
                and value.__module__.startswith("lra_keras.")]
    assert len(exported) > 20
    wrong = {cls.__name__: keras.saving.get_registered_name(cls)
             for cls in exported
             if cls.__name__ != "StateSpaceLayer"
             and keras.saving.get_registered_name(cls)
             != f"lra_keras>{cls.__name__}"}
    assert not wrong
