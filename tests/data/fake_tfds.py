"""A stand-in for a TFDS builder, shared by the reader tests."""


class FakeBuilder:
    """Stands in for a TFDS builder; returns eager tensors like TFDS."""

    def __init__(self, splits, data_dir):
        self.splits = splits
        self.data_dir = data_dir

    def is_prepared(self):
        return self.splits is not None

    def as_dataset(self, split, batch_size, shuffle_files):
        import tensorflow as tf

        assert batch_size == -1 and shuffle_files is False
        return {k: tf.constant(v) for k, v in self.splits[split].items()}
