import numpy as np
import pytest

from lra_keras.batching import LengthBucketedBatches
from lra_keras.batching import input_length
from lra_keras.batching import pad_to_length
from lra_keras.hparams import get_hparams
from lra_keras.models import build_classifier
from lra_keras.models import classifier_kwargs
from tests.testing import to_numpy
from tests.testing import token_inputs


def _rows(n=50, length=40, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, length + 1, n)
    x = np.zeros((n, length), np.int32)
    for i, k in enumerate(lengths):
        x[i, :k] = rng.integers(1, 16, k)
    return x, rng.integers(0, 10, n), lengths


def test_batches_cover_every_row_once_and_trim_only_padding():
    x, y, lengths = _rows()
    data = LengthBucketedBatches(x, y, batch_size=8, bucket_step=8,
                                 shuffle=True, seed=1)
    seen = []
    for i in range(len(data)):
        inputs, labels = data[i]
        rows = data.batches[i]
        seen += list(rows)
        width = inputs["token_ids"].shape[1]
        assert width % 8 == 0 or width == x.shape[1]
        assert width >= lengths[rows].max()
        np.testing.assert_array_equal(inputs["token_ids"], x[rows, :width])
        np.testing.assert_array_equal(inputs["padding_mask"],
                                      x[rows, :width] != 0)
        np.testing.assert_array_equal(labels, y[rows])
        assert not x[rows, width:].any()  # only padding was cut
    assert sorted(seen) == list(range(len(x)))


def test_shuffle_changes_order_between_epochs_deterministically():
    x, y, _ = _rows()
    a = LengthBucketedBatches(x, y, batch_size=4, shuffle=True, seed=3)
    b = LengthBucketedBatches(x, y, batch_size=4, shuffle=True, seed=3)
    first = [r.tolist() for r in a.batches]
    assert first == [r.tolist() for r in b.batches]
    a.on_epoch_end()
    assert first != [r.tolist() for r in a.batches]


@pytest.mark.parametrize("shuffle", [False, True])
def test_first_two_batches_differ_in_length(shuffle):
    # Keras's TensorFlow adapter infers the input spec from two batches.
    x, y, _ = _rows(n=200)
    data = LengthBucketedBatches(x, y, batch_size=8, bucket_step=8,
                                 shuffle=shuffle)
    for _ in range(3):
        assert data[0][0]["token_ids"].shape != data[1][0]["token_ids"].shape
        data.on_epoch_end()


def test_no_padding_id_means_full_length():
    x, y, _ = _rows()
    data = LengthBucketedBatches(x, y, batch_size=8, padding_id=None)
    inputs, _ = data[0]
    assert inputs["token_ids"].shape[1] == x.shape[1]
    assert inputs["padding_mask"].all()


def test_without_trimming_padding_is_still_masked():
    x, y, _ = _rows()
    data = LengthBucketedBatches(x, y, batch_size=8, bucket_step=None)
    inputs, _ = data[0]
    assert inputs["token_ids"].shape[1] == x.shape[1]
    np.testing.assert_array_equal(inputs["padding_mask"],
                                  inputs["token_ids"] != 0)


def test_bad_arguments_are_rejected():
    x, y, _ = _rows()
    with pytest.raises(ValueError, match="batch_size"):
        LengthBucketedBatches(x, y, batch_size=0)
    with pytest.raises(ValueError, match="shape"):
        LengthBucketedBatches(x, y[:3])


def test_pad_to_length_appends_padding_only():
    x, _, lengths = _rows(n=20, length=30)
    out = pad_to_length(x.astype(np.uint16), 37, padding_id=0)
    assert out.shape == (20, 37) and out.dtype == np.uint16
    np.testing.assert_array_equal(out[:, :30], x)
    np.testing.assert_array_equal(out[:, 30:], 0)
    np.testing.assert_array_equal((out != 0).sum(1), lengths)
    # pairs: both documents, the last axis only
    pairs = np.stack([x, x[::-1]], axis=1)
    out = pad_to_length(pairs, 32, padding_id=5)
    assert out.shape == (20, 2, 32)
    np.testing.assert_array_equal(out[..., :30], pairs)
    np.testing.assert_array_equal(out[..., 30:], 5)
    # the same length: unchanged
    np.testing.assert_array_equal(pad_to_length(x, 30, 0), x)
    with pytest.raises(ValueError, match="do not fit in length=29"):
        pad_to_length(x, 29, 0)
    with pytest.raises(ValueError, match="padding_id=None"):
        pad_to_length(x, 40, None)


def test_padded_length_sizes_the_models_weights():
    # the learned positions of a row padded further take every position
    hp = get_hparams("listops", hidden_dim=8, num_layers=1, num_heads=2,
                     intermediate_dim=16, sequence_length=48,
                     padded_length=64, position_embedding="learned")
    assert input_length(hp) == 64
    assert classifier_kwargs(hp)["sequence_length"] == 64
    model = build_classifier(**classifier_kwargs(hp))
    table = model.get_layer("encoder").get_layer("position_embedding")
    assert tuple(table.weights[0].shape) == (64, 8)
    x, _, _ = _rows(n=4, length=64)
    assert to_numpy(model(token_inputs(x, hp["padding_id"]))).shape == (
        4, hp["num_classes"])
    plain = get_hparams("listops", sequence_length=48)
    assert input_length(plain) == 48
    assert classifier_kwargs(plain)["sequence_length"] == 48


def test_trimmed_batches_give_the_full_length_logits():
    x, y, _ = _rows(n=12, length=48)
    hp = get_hparams("listops", hidden_dim=8, num_layers=1, num_heads=2,
                     intermediate_dim=16, sequence_length=48, batch_size=4,
                     bucket_step=16)
    model = build_classifier(**classifier_kwargs(hp))
    data = LengthBucketedBatches(x, y, batch_size=4, bucket_step=16)
    for i in range(len(data)):
        inputs, _ = data[i]
        rows = data.batches[i]
        full = token_inputs(x[rows], hp["padding_id"])
        np.testing.assert_allclose(to_numpy(model(inputs)),
                                   to_numpy(model(full)), atol=1e-5)


def test_pairs_are_trimmed_to_their_longer_document():
    x, y, lengths = _rows(n=30, length=40)
    pairs = np.stack([x, x[::-1]], axis=1).astype(np.uint16)  # (N, 2, L)
    longer = np.maximum(lengths, lengths[::-1])
    data = LengthBucketedBatches(pairs, y, batch_size=4, bucket_step=8,
                                 shuffle=True)
    seen = []
    for i in range(len(data)):
        inputs, labels = data[i]
        rows = data.batches[i]
        seen += list(rows)
        width = inputs["token_ids"].shape[-1]
        assert inputs["token_ids"].shape == (len(rows), 2, width)
        assert inputs["token_ids"].dtype == np.int32
        assert width >= longer[rows].max()
        np.testing.assert_array_equal(inputs["token_ids"],
                                      pairs[rows, :, :width])
        np.testing.assert_array_equal(inputs["padding_mask"],
                                      pairs[rows, :, :width] != 0)
        assert not pairs[rows, :, width:].any()
    assert sorted(seen) == list(range(len(x)))


def test_shuffled_order_is_a_function_of_seed_and_epoch():
    x = np.tile(np.arange(1, 41)[:, None], (1, 8)).astype(np.int32)
    y = np.arange(40, dtype=np.int32)

    def order(batches):
        return [batches[i][1].tolist() for i in range(len(batches))]

    counted = LengthBucketedBatches(x, y, batch_size=8, shuffle=True, seed=3)
    epochs = [order(counted)]
    for _ in range(2):
        counted.on_epoch_end()
        epochs.append(order(counted))
    assert epochs[0] != epochs[1] != epochs[2]
    # A fresh dataset told the epoch (as EpochSync does on resume) gives
    # that epoch's order; later on_epoch_end calls no longer move it.
    fresh = LengthBucketedBatches(x, y, batch_size=8, shuffle=True, seed=3)
    fresh.set_epoch(2)
    fresh.on_epoch_end()
    assert order(fresh) == epochs[2]
    fresh.set_epoch(1)
    assert order(fresh) == epochs[1]


@pytest.mark.parametrize("devices", [2, 4])
def test_batches_split_evenly_among_devices(devices):
    # 51 rows in several length buckets: every batch a multiple of the
    # device count, each row at most once, and only 51 % devices rows left
    # out, other rows in another epoch.
    x, y, lengths = _rows(n=51)
    data = LengthBucketedBatches(x, y, batch_size=8, bucket_step=8,
                                 shuffle=True, seed=1, multiple_of=devices)
    left_out = []
    for epoch in (0, 1):
        data.set_epoch(epoch)
        seen = []
        for i in range(len(data)):
            inputs, _ = data[i]
            rows = data.batches[i]
            assert len(rows) % devices == 0
            assert inputs["token_ids"].shape[1] >= lengths[rows].max()
            seen += list(rows)
        assert len(seen) == len(set(seen)) == len(x) - len(x) % devices
        assert data.left_out == len(x) % devices
        left_out.append(set(range(len(x))) - set(seen))
    assert left_out[0] != left_out[1]


def test_one_device_batches_are_unchanged_and_uneven_splits_refused():
    x, y, _ = _rows()
    one = LengthBucketedBatches(x, y, batch_size=8, bucket_step=8)
    same = LengthBucketedBatches(x, y, batch_size=8, bucket_step=8,
                                 multiple_of=1)
    assert [list(b) for b in one.batches] == [list(b) for b in same.batches]
    with pytest.raises(ValueError, match="does not split evenly among 3"):
        LengthBucketedBatches(x, y, batch_size=8, multiple_of=3)
