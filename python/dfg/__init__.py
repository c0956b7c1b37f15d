"""dfg: compile a model ahead of time, see where its memory goes, and run it.

    import dfg
    program = dfg.compile("resnet18.onnx")          # or bytes, or "example:cnn"
    print(program.arena_bytes, program.lower_bound_bytes)
    program.to_html("plan.html")
    with program.session() as session:
        outputs = session.run({"input": x})           # dict of NumPy arrays

Everything is done by the C library (a thin extension module, dfg._dfg);
errors it reports raise dfg.Error with its message.
"""
import io
import json
import threading

import numpy as np

from . import _dfg

Error = _dfg.Error
__version__ = _dfg.version()

__all__ = ["Error", "Program", "Session", "compile", "load", "from_torch",
           "example_models"]

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

_EXAMPLE_PREFIX = "example:"


class TensorSpec:
    """A program input or output: its name, dtype ("f32", ...) and shape."""

    __slots__ = ("name", "dtype", "shape")

    def __init__(self, name, dtype, shape):
        self.name, self.dtype, self.shape = name, dtype, tuple(shape)

    @property
    def numpy_dtype(self):
        return _NUMPY_DTYPES[self.dtype]

    def __repr__(self):
        return f"TensorSpec({self.name!r}, {self.dtype!r}, {self.shape})"

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and
                (self.name, self.dtype, self.shape) ==
                (other.name, other.dtype, other.shape))


def example_models():
    """The names of the bundled models ("mlp", "cnn", ...)."""
    return _dfg.model_names()


def compile(model, shapes=None, planner=None, training=None,
            memory_budget=None, precision=None, alignment=None):
    """Compiles a model into a Program.

    model: an ONNX file's path (str or os.PathLike), its bytes, or
    "example:NAME" for a bundled model. shapes binds an ONNX model's
    symbolic dimensions: {"input": (1, 3, 224, 224)} or {"N": 1}. planner:
    "greedy_size" (default), "greedy_breadth", "no_reuse", ... training:
    True compiles one training step of a bundled model (its loss and the
    optimizer update). precision: "f32" (default) or "bf16", the dtype
    activations (and a training step's gradients) are stored in, weights
    and optimizer state staying f32. memory_budget is not in this version
    of the binding and is refused.
    """
    if memory_budget is not None:
        raise NotImplementedError(
            "memory_budget is not supported by this version of dfg")
    if isinstance(model, (bytes, bytearray, memoryview)):
        kind, source = "onnx_bytes", bytes(model)
    elif isinstance(model, str) and model.startswith(_EXAMPLE_PREFIX):
        kind, source = "example", model[len(_EXAMPLE_PREFIX):]
    elif isinstance(model, str) or hasattr(model, "__fspath__"):
        kind, source = "onnx_path", model
    else:
        raise TypeError("model must be an ONNX path, ONNX bytes or "
                        f"'example:NAME', not {type(model).__name__}")
    if training and kind != "example":
        raise NotImplementedError(
            "training programs are compiled from bundled models only in "
            "this version of dfg")
    if alignment is not None and (alignment <= 0 or
                                  alignment & (alignment - 1)):
        raise ValueError(f"alignment must be a power of two, not {alignment}")
    if shapes is not None:
        shapes = {str(k): (int(v) if isinstance(v, int) else
                           tuple(int(d) for d in v))
                  for k, v in shapes.items()}
    return Program(_dfg.compile(kind, source, shapes, planner,
                                int(alignment or 0), bool(training),
                                precision))


def load(path):
    """Loads a compiled program file (.dfgp)."""
    return Program(_dfg.load(path))


def from_torch(module, example_inputs, input_names=None, output_names=None,
               opset_version=13, **compile_options):
    """Exports a torch.nn.Module through torch.onnx and compiles it.

    example_inputs: a tensor or a tuple of tensors with the shapes to
    compile for. Keyword arguments go to dfg.compile."""
    try:
        import torch
    except ImportError as error:
        raise ImportError("dfg.from_torch needs PyTorch") from error
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    names = input_names or [f"input{i}" if len(example_inputs) > 1 else
                            "input" for i in range(len(example_inputs))]
    buffer = io.BytesIO()
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad():
            torch.onnx.export(module, tuple(example_inputs), buffer,
                              opset_version=opset_version,
                              input_names=list(names),
                              output_names=output_names or ["output"],
                              do_constant_folding=True)
    finally:
        module.train(was_training)
    return compile(buffer.getvalue(), **compile_options)


class Program:
    """A compiled program: its memory plan, its reports, and sessions."""

    def __init__(self, handle):
        self._handle = handle
        self._stats = handle.stats()
        self.inputs = [TensorSpec(*t) for t in handle.inputs()]
        self.outputs = [TensorSpec(*t) for t in handle.outputs()]

    arena_bytes = property(lambda self: self._stats["arena_bytes"])
    lower_bound_bytes = property(lambda self: self._stats["lower_bound_bytes"])
    weights_bytes = property(lambda self: self._stats["weights_bytes"])
    no_reuse_bytes = property(lambda self: self._stats["no_reuse_bytes"])

    @property
    def stats(self):
        """arena, lower bound, no-reuse and weights bytes, planner, ..."""
        return dict(self._stats)

    @property
    def plan(self):
        """The plan as in `dfgc plan --json` (docs/plan-json.md)."""
        return json.loads(self._handle.report("json"))

    def save(self, path):
        self._handle.save(path)

    def summary(self):
        return self._handle.report("summary")

    def to_dot(self):
        return self._handle.report("dot")

    def to_svg(self):
        return self._handle.report("svg")

    def to_html(self, path=None):
        """The self-contained HTML page of the plan, written to path if
        given (the old file replaced only by the whole new one); returns
        the text."""
        html = self._handle.report("html")
        if path is not None:
            _dfg.write_file(path, html.encode("utf-8"))
        return html

    def to_trace(self):
        return self._handle.report("trace")

    def compare(self):
        """Every planner on the same lifetimes, and a simulated PyTorch
        caching allocator, as a dict."""
        return self._handle.compare()

    def session(self, device="cpu"):
        return Session(self, device)

    def _repr_html_(self):
        return self.to_svg()

    def __repr__(self):
        return (f"<dfg.Program arena={self.arena_bytes} "
                f"lower_bound={self.lower_bound_bytes} "
                f"weights={self.weights_bytes}>")


class Session:
    """A program bound to a device, with its one arena. One thread runs a
    session at a time (another thread's run raises RuntimeError); use one
    session per thread, all sharing the program."""

    def __init__(self, program, device="cpu"):
        if not isinstance(program, Program):
            raise TypeError("program must be a dfg.Program")
        self.program = program
        self._handle = _dfg.session(program._handle, str(device))
        self._lock = threading.Lock()

    def close(self):
        with self._lock:
            self._handle.close()

    @property
    def closed(self):
        return self._handle.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _input_array(self, spec, value):
        array = np.asarray(value)
        if array.dtype != spec.numpy_dtype:
            raise ValueError(f"input '{spec.name}' wants dtype {spec.dtype} "
                             f"({spec.numpy_dtype}), not {array.dtype}")
        if array.shape != spec.shape:
            raise ValueError(f"input '{spec.name}' wants shape "
                             f"{list(spec.shape)}, not {list(array.shape)}")
        # No copy when the array is already C-contiguous (the common case).
        return np.ascontiguousarray(array)

    def run(self, inputs):
        """inputs: {name: array}; returns {name: numpy.ndarray}."""
        if self.closed:
            raise ValueError("the session is closed")
        if not isinstance(inputs, dict):
            raise TypeError("inputs must be a dict of name to array")
        specs = {s.name: s for s in self.program.inputs}
        unknown = sorted(set(inputs) - set(specs))
        if unknown:
            raise ValueError(f"unknown input(s) {unknown}; the program's "
                             f"inputs are {sorted(specs)}")
        missing = sorted(set(specs) - set(inputs))
        if missing:
            raise ValueError(f"missing input(s) {missing}")
        arrays = [self._input_array(s, inputs[s.name])
                  for s in self.program.inputs]
        outputs = [np.empty(s.shape, dtype=s.numpy_dtype)
                   for s in self.program.outputs]
        if not self._lock.acquire(blocking=False):
            raise RuntimeError("the session is running in another thread "
                               "(use one session per thread)")
        try:
            self._handle.run(arrays, outputs)
        finally:
            self._lock.release()
        return {s.name: a for s, a in zip(self.program.outputs, outputs)}
