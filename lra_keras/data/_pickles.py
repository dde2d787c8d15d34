"""Unpickling numpy arrays from downloaded files, and nothing else.

The CIFAR-10 python batches (`image.py`) and pickled Pathfinder metadata
(`pathfinder/official.py`) are pickles from the internet. A plain pickle
load calls whatever the file names (`os.system`, ...); `NumpyUnpickler`
resolves only numpy's array, dtype and scalar reconstructors. These get
stand-ins that check each state before numpy sees it: numpy's own
`ndarray.__setstate__` and `dtype.__setstate__` crash the interpreter (a
segmentation fault, numpy 2.4) on states that one flipped byte of a file
gives, such as an object array whose element list is shorter than its
shape, or a dtype state tuple of 6 items with a number for its fields.

Original files read: `numpy/_core/src/multiarray/descriptor.c`
(`arraydescr_reduce`, `arraydescr_setstate`: the dtype states) and
`methods.c` (`array_reduce`, `array_setstate`: the array states) of
numpy/numpy.
"""

import codecs
import math
import pickle

import numpy as np

try:
    from numpy._core.multiarray import scalar as _numpy_scalar
except ImportError:  # numpy 1
    from numpy.core.multiarray import scalar as _numpy_scalar

_BYTE_ORDERS = ("<", ">", "|", "=")


def _text(value):
    # Python 2 pickles read with encoding="bytes" give bytes for str.
    return value.decode("latin-1") if isinstance(value, bytes) else value


class _Dtype:
    """Stands for a pickled dtype without fields: `dtype(spec, align,
    copy)`, then its state, of which only the byte order is used."""

    def __init__(self, spec, align=False, copy=True):
        spec = _text(spec)
        if not isinstance(spec, str):
            raise pickle.UnpicklingError(f"not a dtype name: {spec!r}")
        self.dtype = np.dtype(spec)
        if self.dtype.fields is not None or self.dtype.subdtype is not None:
            raise pickle.UnpicklingError(f"a structured dtype: {spec!r}")

    def __setstate__(self, state):
        # (byte order, subarray, fields, item size, alignment); later
        # versions put a version first, names before the fields, flags and
        # metadata last. A dtype without fields has None for subarray,
        # names and fields.
        if not isinstance(state, tuple) or not 5 <= len(state) <= 9:
            raise pickle.UnpicklingError(f"not a dtype state: {state!r}")
        order = _text(state[0] if len(state) == 5 else state[1])
        empty = {5: state[1:3], 6: state[2:4]}.get(len(state), state[2:5])
        if order not in _BYTE_ORDERS or any(v is not None for v in empty):
            raise pickle.UnpicklingError(f"not a plain dtype: {state!r}")
        if order in "<>":
            self.dtype = self.dtype.newbyteorder(order)


def _dtype(value):
    if not isinstance(value, _Dtype):
        raise pickle.UnpicklingError(f"not a dtype: {value!r}")
    return value.dtype


class _Array:
    """Stands for a pickled ndarray: built only from a state whose data
    has exactly the size of its shape and dtype."""

    def __init__(self, *args):
        self.array = None

    def __setstate__(self, state):
        if not isinstance(state, tuple) or len(state) not in (4, 5):
            raise pickle.UnpicklingError(f"not an array state: {state!r}")
        shape, dtype, fortran, data = state[-4:]
        dtype = _dtype(dtype)
        if not (
            isinstance(shape, tuple)
            and all(type(n) is int and n >= 0 for n in shape)
            and isinstance(fortran, bool)
        ):
            raise pickle.UnpicklingError(
                f"not an array state: shape {shape!r}, order {fortran!r}"
            )
        size = math.prod(shape)
        if dtype.hasobject:
            complete = isinstance(data, list) and len(data) == size
            data = [unwrap(item) for item in data] if complete else data
        else:
            complete = (
                isinstance(data, bytes) and len(data) == size * dtype.itemsize
            )
        if not complete:
            raise pickle.UnpicklingError(
                f"the data of an array of shape {shape} and dtype {dtype} "
                f"has the wrong size ({len(data)})"
            )
        self.array = np.ndarray((0,), np.int8)
        self.array.__setstate__((shape, dtype, fortran, data))


def _reconstruct(subtype, shape, dtype):
    if subtype is not _Array:
        raise pickle.UnpicklingError(f"not an ndarray: {subtype!r}")
    return _Array()


def _frombuffer(buffer, dtype, shape, order):
    # Protocol 5 pickles: np.frombuffer checks the size.
    return np.frombuffer(buffer, _dtype(dtype)).reshape(shape, order=order)


def _scalar(dtype, *args):
    return _numpy_scalar(_dtype(dtype), *args)


_GLOBALS = {
    ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy._core.multiarray", "scalar"): _scalar,
    ("numpy._core.numeric", "_frombuffer"): _frombuffer,
    ("numpy", "ndarray"): _Array,
    ("numpy", "dtype"): _Dtype,
    ("_codecs", "encode"): codecs.encode,  # bytes in protocol 2 pickles
}


def unwrap(value):
    """The object a stand-in stands for, in dicts, lists and tuples too."""
    if isinstance(value, _Array):
        if value.array is None:
            raise pickle.UnpicklingError("an array without its state")
        return value.array
    if isinstance(value, _Dtype):
        return value.dtype
    if isinstance(value, dict):
        return {unwrap(k): unwrap(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(unwrap(item) for item in value)
    return value


class NumpyUnpickler(pickle.Unpickler):
    """Loads pickles of numpy arrays, dtypes, scalars and plain containers.

    Subclasses set `refusal`, the reason given after "Refusing to load the
    global <module>.<name>:" for any other global.
    """

    refusal = "only numpy arrays are accepted."

    def find_class(self, module, name):
        # numpy 2 moved numpy.core to numpy._core; pickles from numpy 1
        # and Python 2 name the old module.
        found = _GLOBALS.get(
            (module.replace("numpy.core.", "numpy._core.", 1), name)
        )
        if found is None:
            raise pickle.UnpicklingError(
                f"Refusing to load the global {module}.{name}: {self.refusal}"
            )
        return found

    def load(self):
        return unwrap(super().load())
