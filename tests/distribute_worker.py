"""One training step of a tiny family on one device and on two.

    KERAS_BACKEND=jax python tests/distribute_worker.py MODEL
    KERAS_BACKEND=tensorflow python tests/distribute_worker.py \
        recipe recipes/listops.py ARGS...
    KERAS_BACKEND=tensorflow python tests/distribute_worker.py masks

Gives the backend two devices before it starts (JAX two host platform
devices, TensorFlow two logical CPUs). Then, given a MODEL, for batches
of 4 rows (split 2 + 2) and 2 rows (1 + 1) trains one step
from the same weights without and with
`distribution_scope`, and prints one JSON line: the device count, and per
batch the two losses and the largest gradient and weight differences
after the step (`step_differences`);
then the loss and accuracy of 7 rows evaluated in batches of 3 (the last
of 1, split unevenly) with and without it.
Given `recipe SCRIPT ARGS...`, runs that recipe with those arguments.
Given `masks` (TensorFlow), prints the two replicas' dropout of the same
inputs (`replica_masks`).
"""

import json
import os
import runpy
import sys

if os.environ.get("KERAS_BACKEND", "jax") == "tensorflow":
    import tensorflow as tf

    tf.config.set_logical_device_configuration(
        tf.config.list_physical_devices("CPU")[0],
        [tf.config.LogicalDeviceConfiguration()] * 2,
    )
else:
    # Added to the flags the suite sets (tests/conftest.py).
    os.environ["XLA_FLAGS"] = " ".join(filter(None, [
        os.environ.get("XLA_FLAGS"),
        "--xla_force_host_platform_device_count=2"]))

import keras  # noqa: E402
import numpy as np  # noqa: E402

from lra_keras.distribute import distribution_scope  # noqa: E402
from lra_keras.distribute import single_device  # noqa: E402
from lra_keras.models import build_classifier  # noqa: E402
from lra_keras.models import classifier_kwargs  # noqa: E402
from lra_keras.training import make_optimizer  # noqa: E402
from tests.models.test_builders import _batch  # noqa: E402
from tests.models.test_builders import tiny_hparams  # noqa: E402


def one_step(hp, initial, x, y, distributed):
    with distribution_scope(distributed) as devices:
        net = build_classifier(**classifier_kwargs(hp))
        net.set_weights(initial)
        net.compile(
            optimizer=make_optimizer(hp, total_steps=10),
            loss=keras.losses.SparseCategoricalCrossentropy(
                from_logits=True),
        )
        history = net.fit(x, y, batch_size=len(y), epochs=1, shuffle=False,
                          verbose=0)
        weights = [np.asarray(keras.ops.convert_to_numpy(w))
                   for w in net.weights]
        # After one step Adam's first moment is (1 - beta_1) times the
        # gradient, in the order of the trainable weights.
        gradients = [
            np.asarray(keras.ops.convert_to_numpy(m)) / (
                1 - net.optimizer.beta_1)
            for m in net.optimizer._momentums]
    return devices, history.history["loss"][0], weights, gradients


def step_differences(net_weights, initial, one, distributed, epsilon):
    """How far one device's step and the distributed one lie apart.

    `one` and `distributed` are (weights, gradients) after the step. The
    gradients are compared relative to each weight's largest. The weights
    are compared where the gradient is at least 100 epsilon: Adam's first
    step is lr g / (|g| + epsilon), whose derivative in g is lr epsilon /
    (|g| + epsilon)^2, so a gradient near epsilon (a few of the tiny
    model's are 1e-8) moves its weight by a visible part of the learning
    rate when its last digits change with the order of the replica sum
    (the logits kernel, JAX at -O0: a gradient of -4.53e-8 against
    -4.48e-8, its weight 1.8e-5 apart). `near_epsilon` counts the
    nonzero gradients left out (zero ones, of tokens absent from the
    batch, are compared).
    """
    (w_one, g_one), (w_dist, g_dist) = one, distributed
    trainable = [i for i, w in enumerate(net_weights) if w.trainable]
    gradient_difference, weight_difference, near_epsilon = 0.0, 0.0, 0
    assert [np.shape(g) for g in g_one] == [
        np.shape(w_one[i]) for i in trainable]
    for g_1, g_n, i in zip(g_one, g_dist, trainable):
        scale = float(np.abs(g_1).max()) or 1.0
        gradient_difference = max(
            gradient_difference, float(np.abs(g_1 - g_n).max()) / scale)
        steady = (np.abs(g_1) >= 100 * epsilon) | (g_1 == 0)
        near_epsilon += int(((g_1 != 0) & ~steady).sum())
        if steady.any():
            weight_difference = max(weight_difference, float(
                np.abs(w_one[i] - w_dist[i])[steady].max()))
    untrained = [i for i, w in enumerate(net_weights) if not w.trainable]
    for i in untrained:  # BatchNorm's moving statistics
        weight_difference = max(
            weight_difference, float(np.abs(w_one[i] - w_dist[i]).max()))
    return dict(
        moved=max(float(np.abs(a - b).max())
                  for a, b in zip(w_one, initial)),
        gradient_difference=gradient_difference,
        weight_difference=weight_difference,
        near_epsilon=near_epsilon,
        weights=sum(int(np.size(w)) for w in w_one),
    )


def evaluation(hp, initial, x, y, distributed):
    """Loss and accuracy of batches of 3 rows (the last of 1), evaluated
    as `run` evaluates the test split."""
    with distribution_scope(distributed):
        net = build_classifier(**classifier_kwargs(hp))
        net.set_weights(initial)
        net.compile(loss=keras.losses.SparseCategoricalCrossentropy(
            from_logits=True), metrics=["accuracy"])
        with single_device():
            return net.evaluate(x, y, batch_size=3, verbose=0,
                                return_dict=True)


def replica_masks():
    """TensorFlow: what each of the two replicas' dropout makes of the
    same inputs, in a `tf.function` under the strategy as `fit`'s step:
    `keras.layers.Dropout(0.5)` of a row of ones, and the blockwise
    attention's weights dropout (`WeightsDropout`, the chunked path)."""
    import tensorflow as tf

    from lra_keras.layers.attention_kernels import WeightsDropout
    from lra_keras.layers.attention_kernels import attention

    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(1, 16, 2, 8)).astype("float32")
               for _ in range(3))
    with distribution_scope(True) as devices:
        strategy = tf.distribute.get_strategy()
        dropout = keras.layers.Dropout(0.5, seed=1)
        weights = WeightsDropout(keras.layers.Dropout(0.5, seed=2))

        def replica(ones):
            return dropout(ones, training=True), attention(
                q, k, v, implementation="chunked", weights_dropout=weights)

        outputs = tf.function(lambda x: strategy.run(replica, args=(x,)))(
            tf.ones((1, 256)))
        masks, attended = (
            [keras.ops.convert_to_numpy(t).tolist()
             for t in strategy.experimental_local_results(o)]
            for o in outputs)
    undropped = keras.ops.convert_to_numpy(attention(
        q, k, v, implementation="chunked")).tolist()
    print("RESULT " + json.dumps(dict(
        devices=devices, masks=masks, attended=attended,
        undropped=undropped)), flush=True)


def main(model):
    longest = model.endswith("_longest")
    model = model.removesuffix("_longest")
    hp = tiny_hparams("listops", model)
    if longest:
        # The S4D paper row's BatchNorm, which counts the padding up to the
        # batch's longest row, and the NTFS Transformer's attention, which
        # attends to every key up to it: on rows of 20, 9, 13 and 6
        # tokens a replica's own longest row (13 of the 2 + 2 split, 9 of
        # the 1 + 1 split of the first two) is not the batch's 20, so the
        # replicas must agree on it.
        if model == "transformer":
            hp["mask_semantics"] = "longest"
        else:
            assert hp["batch_norm_count_padding"] == "longest"
    elif hp.get("batch_norm_count_padding"):
        # The BatchNorm over real tokens, whose replica sums are the ones
        # to check. With the S4D row's (padding counted, as the S4 code's)
        # the same sums run over every position, but the gradients reach
        # the padded positions too, and one Adam step from them moved an
        # A_imag entry 1.6e-6 apart between the two reduction orders
        # (TensorFlow, measured), above the 1e-6 this check allows.
        hp["batch_norm_count_padding"] = False
    keras.utils.set_random_seed(0)
    net = build_classifier(**classifier_kwargs(hp))
    initial = net.get_weights()
    x, y = _batch(hp, batch=4)
    if longest:
        real = np.arange(32) < np.array([20, 9, 13, 6])[:, None]
        x = {"token_ids": np.where(real, x["token_ids"], 0),
             "padding_mask": real}
    result = {}
    for rows in (4, 2):
        xs = {k: v[:rows] for k, v in x.items()}
        _, loss_1, *one = one_step(hp, initial, xs, y[:rows], False)
        devices, loss_n, *distributed = one_step(hp, initial, xs,
                                                 y[:rows], True)
        result["devices"] = devices
        result[f"rows{rows}"] = dict(
            loss_one_device=loss_1, loss_distributed=loss_n,
            **step_differences(net.weights, initial, one, distributed,
                               float(hp.get("adam_epsilon", 1e-8))))
    # 7 rows: the labels of 4 are the predicted classes, of 3 not.
    x, _ = _batch(hp, batch=7)
    predicted = np.argmax(keras.ops.convert_to_numpy(net(x)), -1)
    y = np.where(np.arange(7) < 4, predicted, (predicted + 1) % 10)
    result["evaluation"] = dict(
        one_device=evaluation(hp, initial, x, y, False),
        distributed=evaluation(hp, initial, x, y, True))
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "recipe":
        sys.argv = sys.argv[2:]
        runpy.run_path(sys.argv[0], run_name="__main__")
    elif sys.argv[1] == "masks":
        replica_masks()
    else:
        main(sys.argv[1])
