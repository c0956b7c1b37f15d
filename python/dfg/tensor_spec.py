"""A program's inputs and outputs (TensorSpec) and the arrays that feed
them: NumPy arrays, anything NumPy can read, and DLPack producers such as
torch CPU tensors, taken without a copy when already laid out right."""
import numpy as np

_NUMPY_DTYPES = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "u8": np.dtype(np.uint8),
    "bool": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "u16": np.dtype(np.uint16),
    "f64": np.dtype(np.float64),
    # NumPy has no bfloat16: such tensors travel as their uint16 bits.
    "bf16": np.dtype(np.uint16),
}

# ONNX Runtime's NodeArg.type strings.
_ORT_TYPES = {
    "f32": "float", "f16": "float16", "bf16": "bfloat16", "f64": "double",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "bool": "bool",
}


class TensorSpec:
    """A program input or output: its name, dtype ("f32", ...) and shape.
    Also what ONNX Runtime's NodeArg offers: .type ("tensor(float)")."""

    __slots__ = ("name", "dtype", "shape")

    def __init__(self, name, dtype, shape):
        self.name, self.dtype, self.shape = name, dtype, tuple(shape)

    @property
    def numpy_dtype(self):
        return _NUMPY_DTYPES[self.dtype]

    @property
    def type(self):
        """The ONNX Runtime type string, e.g. "tensor(float)"."""
        return f"tensor({_ORT_TYPES[self.dtype]})"

    def __repr__(self):
        return f"TensorSpec({self.name!r}, {self.dtype!r}, {self.shape})"

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and
                (self.name, self.dtype, self.shape) ==
                (other.name, other.dtype, other.shape))


def _host_array(value, name):
    """value as a NumPy array, sharing its memory when it can: an ndarray
    as is, a DLPack producer in host memory (torch CPU tensors, also those
    that require grad) through numpy.from_dlpack, else numpy.asarray."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "__dlpack__") and hasattr(np, "from_dlpack"):
        device = getattr(value, "__dlpack_device__", lambda: (1, 0))()
        if device[0] != 1:  # kDLCPU
            raise ValueError(f"input '{name}' is in device memory (DLPack "
                             f"device {device}); pass host memory")
        try:
            return np.from_dlpack(value.detach() if hasattr(value, "detach")
                                  else value)
        except (TypeError, BufferError, RuntimeError):
            pass  # a dtype NumPy's DLPack lacks (bool): its own route
    return np.asarray(value)


def _check_type(where, spec, array):
    """ValueError naming where (the caller's argument) unless array has
    spec's dtype and shape."""
    if array.dtype != spec.numpy_dtype:
        raise ValueError(f"{where} wants dtype {spec.dtype} "
                         f"({spec.numpy_dtype}), not {array.dtype}")
    if array.shape != spec.shape:
        raise ValueError(f"{where} wants shape {list(spec.shape)}, not "
                         f"{list(array.shape)}")


def input_array(spec, value):
    """value checked against spec, as a C-contiguous array of its dtype and
    shape: the caller's own memory when it already is one (no copy)."""
    array = _host_array(value, spec.name)
    _check_type(f"input '{spec.name}'", spec, array)
    return np.ascontiguousarray(array)


def output_array(spec, out):
    """out, a caller's array for output spec, checked to be written in
    place: an ndarray of the output's dtype and shape, C-contiguous and
    writeable (else ValueError naming the output, or TypeError)."""
    where = f"out['{spec.name}']"
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{where} must be a numpy.ndarray, not "
                        f"{type(out).__name__}")
    _check_type(where, spec, out)
    if not out.flags.c_contiguous:
        raise ValueError(f"{where} is not C-contiguous (dfg writes it in "
                         "place; pass numpy.empty(shape, dtype))")
    if not out.flags.writeable:
        raise ValueError(f"{where} is read-only")
    return out
