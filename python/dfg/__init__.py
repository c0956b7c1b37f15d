"""dfg: compile a model ahead of time, see where its memory goes, and run it.

    import dfg
    program = dfg.compile("resnet18.onnx")          # or bytes, or "example:cnn"
    print(program.arena_bytes, program.lower_bound_bytes)
    program.to_html("plan.html")
    with program.session() as session:
        outputs = session.run({"input": x})           # dict of NumPy arrays
        probs, = session.run(["probs"], {"input": x}) # ONNX Runtime's form
    session = dfg.InferenceSession("model.onnx")      # compile + session

Everything is done by the C library (a thin extension module, dfg._dfg);
errors it reports raise dfg.Error with its message (dfg.ArgumentError,
also a ValueError, when a name, shape or dtype passed is wrong).
"""
import io
import json
import time

from . import _dfg
from .bench import bench as _bench
from .errors import python_words
from .options import SessionOptions
from .session import Session
from .tensor_spec import TensorSpec
from .training import Trainer, memory_budget_options, train

Error = _dfg.Error
ArgumentError = _dfg.ArgumentError
__version__ = _dfg.version()

__all__ = ["Error", "ArgumentError", "Program", "Session", "SessionOptions",
           "TensorSpec",
           "InferenceSession", "compile", "load", "from_torch",
           "example_models", "Trainer", "train"]

_EXAMPLE_PREFIX = "example:"


def example_models():
    """The names of the bundled models ("mlp", "cnn", ...)."""
    return _dfg.model_names()


# compile's prefer: dfg_compile_options.prefer_memory.
_PREFER = {"speed": 0, "memory": 1, "smallest": 2}


def compile(model, shapes=None, planner=None, training=None,
            memory_budget=None, precision=None, alignment=None, device=None,
            prefer="speed", tiling=True, fuse=True):
    """Compiles a model into a Program.

    model: an ONNX file's path (str or os.PathLike), its bytes, or
    "example:NAME" for a bundled model. shapes binds an ONNX model's
    symbolic dimensions: {"input": (1, 3, 224, 224)} or {"N": 1}. planner:
    "greedy_size" (default), "greedy_breadth", "no_reuse", ... training:
    True compiles one training step (forward, loss, backward, optimizer
    update) of a bundled model, or of an ONNX classifier with its cross
    entropy appended (labels int64 [N]); dfg.train and dfg.Trainer run
    one. memory_budget (training): bytes (an int, or "130MiB", "512KiB",
    "2GiB"), or "P%" of the arena the step needs without one. precision: "f32" (default) or "bf16", the dtype
    activations (and a training step's gradients) are stored in, weights
    and optimizer state staying f32; with device="cuda", for inference,
    "tf32" (f32 products on TF32 tensor cores) or "f16" / "bf16" (every
    tensor 16-bit, weights included: products on tensor cores, other
    kernels computing in f32; docs/precision.md). device: the backend the program is
    for ("cpu", the default, or "cuda": its workspaces, no fused post-ops,
    ops it has no kernel for refused); Program.session(device=...) on
    another device compiles the model again for that one. prefer:
    "speed" (the default: library scratch and blocked layouts wherever
    the backend wants them), "memory" (the arena planned at the lower
    bound without library scratch, as `dfgc compile --prefer memory`;
    plan["scratch_free_lower_bound_bytes"] is that bound; the smallest
    arena among programs costing at most 10% more to run than the
    fastest, counting FLOPs, the steps, copies and filter reads tiling
    adds, once per thread of OpenMP's default (OMP_NUM_THREADS, else one
    per core: a session run on fewer threads may afford more bands), and
    the Winograd convs its bands lose) or "smallest" (the
    smallest arena whatever kernels run it,
    as `dfgc compile --prefer smallest`). tiling: True
    (the default) lets CPU inference with prefer="memory" run an image
    model's first layers band by band of rows where that lowers the arena
    at most 10% more FLOPs (plan["tiling"] says how); False never, as
    `dfgc compile --no-tiling`. fuse: True (the default) runs an
    activation or residual add after a conv or matmul as its post-op and
    folds a batch norm into the conv before it; False keeps each its own
    step, as `dfgc compile --no-fuse`.
    """
    if prefer not in _PREFER:
        raise ValueError(f"prefer must be 'speed', 'memory' or "
                         f"'smallest', not {prefer!r}")
    budget = memory_budget_options(memory_budget)
    if budget and not training:
        raise ValueError("memory_budget applies to training programs "
                         "(training=True)")
    if isinstance(model, (bytes, bytearray, memoryview)):
        kind, source = "onnx_bytes", bytes(model)
    elif isinstance(model, str) and model.startswith(_EXAMPLE_PREFIX):
        kind, source = "example", model[len(_EXAMPLE_PREFIX):]
    elif isinstance(model, str) or hasattr(model, "__fspath__"):
        kind, source = "onnx_path", model
    else:
        raise TypeError("model must be an ONNX path, ONNX bytes or "
                        f"'example:NAME', not {type(model).__name__}")
    if alignment is not None and (alignment <= 0 or
                                  alignment & (alignment - 1)):
        raise ValueError(f"alignment must be a power of two, not {alignment}")
    if shapes is not None:
        shapes = {str(k): (int(v) if isinstance(v, int) else
                           tuple(int(d) for d in v))
                  for k, v in shapes.items()}
    start = time.perf_counter()
    with python_words():
        handle = _dfg.compile(kind, source, shapes, planner,
                              int(alignment or 0), bool(training), precision,
                              None if device is None else str(device),
                              _PREFER[prefer],
                              budget.get("memory_budget_bytes", 0),
                              budget.get("memory_budget_percent", 0.0),
                              bool(tiling), bool(fuse))
    program = Program(handle, model if isinstance(model, str) else
                      getattr(model, "__fspath__", lambda: "<bytes>")(),
                      time.perf_counter() - start)
    program.device = "cpu" if device is None else str(device)
    program._recompile = lambda other: compile(
        model, shapes, planner, training, memory_budget, precision,
        alignment, other, prefer, tiling, fuse)
    return program


def load(path):
    """Loads a compiled program file (.dfgp)."""
    start = time.perf_counter()
    with python_words():
        handle = _dfg.load(path)
    return Program(handle, str(path), time.perf_counter() - start)


_PROVIDERS = {"CPUExecutionProvider": "cpu", "CUDAExecutionProvider": "cuda"}


def InferenceSession(model, sess_options=None, providers=None, device=None,
                     enable_profiling=False, profile_file_prefix="dfg_profile",
                     threads=None, **compile_options):
    """ONNX Runtime's entry point: compiles model (as dfg.compile, whose
    keyword arguments it takes: shapes, planner, precision, alignment,
    prefer)
    and returns a Session on device ("cpu" or "cuda"), or on the first of
    providers (ONNX Runtime's names: "CPUExecutionProvider",
    "CUDAExecutionProvider"); enable_profiling, profile_file_prefix and
    threads as for Session. sess_options: a dfg.SessionOptions, whose
    settings stand in for those arguments (giving both raises)."""
    session_options = {"enable_profiling": enable_profiling,
                       "profile_file_prefix": profile_file_prefix,
                       "threads": threads}
    if sess_options is not None:
        if not isinstance(sess_options, SessionOptions):
            raise TypeError("sess_options must be a dfg.SessionOptions, not "
                            f"{type(sess_options).__name__}")
        given = sess_options.compile_options()
        both = sorted(set(given) & set(compile_options))
        if both or threads is not None or enable_profiling:
            raise ValueError("give options either in sess_options or as "
                             f"arguments, not both ({both or 'threads'})")
        compile_options.update(given)
        session_options = sess_options.session_options()
    if providers:
        first = providers[0]
        first = first[0] if isinstance(first, tuple) else first
        if first not in _PROVIDERS:
            raise ValueError(f"providers: dfg has no {first!r}; it has "
                             f"{sorted(_PROVIDERS)}")
        if device is not None and device != _PROVIDERS[first]:
            raise ValueError(f"device={device!r} and providers={providers!r} "
                             "disagree")
        device = _PROVIDERS[first]
    device = device or "cpu"
    return compile(model, device=device, **compile_options).session(
        device, **session_options)


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

    def __init__(self, handle, source="", compile_seconds=0.0):
        self._handle = handle
        # The backend it was compiled for, and how to compile its model
        # for another (dfg.compile sets both; a loaded program has none).
        self.device = "cpu"
        self._recompile = None
        self._for_device = {}
        self.source = source
        # Seconds dfg.compile (or dfg.load) took to make this program.
        self.compile_seconds = compile_seconds
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
    def memory(self):
        """The process's peak RSS running this on the CPU, predicted before
        running (docs/memory-prediction.md): peak_bytes and its parts."""
        return self._handle.memory()

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

    def session(self, device="cpu", enable_profiling=False,
                profile_file_prefix="dfg_profile", threads=None):
        """A Session on device ("cpu" or "cuda"; a device that cannot run
        here raises dfg.Error with the reason `dfgc devices` gives);
        sessions share the program's weights, each has its own arena.
        enable_profiling, threads: see Session. A program dfg.compile
        made for another device is compiled again for this one (once; see
        dfg.compile's device), and session.program is that one."""
        program = self
        if str(device) != self.device and self._recompile is not None:
            if device not in self._for_device:
                self._for_device[device] = self._recompile(str(device))
            program = self._for_device[device]
        return Session(program, device, enable_profiling,
                       profile_file_prefix, threads)

    def bench(self, iterations=100, warmup=10, device="cpu", inputs=None,
              seed=1, threads=None):
        """Times runs as `dfgc bench` does; returns its --json figures
        (mean_ms, median_ms, p90_ms, p95_ms, p99_ms, min_ms, max_ms,
        runs_per_second, samples_per_second, compile_ms, session_ms,
        threads, device, warning, ...: docs/bench-json.md). inputs:
        {name: array}, else random ones from seed. threads: as for
        Session."""
        return _bench(self, iterations, warmup, device, inputs, seed,
                      threads)

    def _repr_html_(self):
        """The arena picture for a notebook: its CSS applies to its own
        svg.dfg-plan only; long names are cut, whole on hover."""
        svg = self.to_svg()
        if svg.startswith("<?xml"):
            svg = svg[svg.index("?>") + 2:].lstrip()
        return f'<div style="max-width:100%;overflow:auto">{svg}</div>'


    def __repr__(self):
        return (f"<dfg.Program arena={self.arena_bytes} "
                f"lower_bound={self.lower_bound_bytes} "
                f"weights={self.weights_bytes}>")
