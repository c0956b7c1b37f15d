"""Session: a program bound to a device, with its one arena, run from any
number of threads; both dfg's run(inputs) and ONNX Runtime's
run(output_names, input_feed)."""
import numpy as np

from . import _dfg
from .errors import python_words
from .profiling import StepProfile
from .tensor_spec import input_array, output_array


class Session:
    """A program bound to a device, with its one arena.

    Threads: any number of threads may call run() on one Session at once;
    no call fails for being concurrent. Runs are serialized on the
    session's lock, which is taken with the GIL released (the GIL also
    stays released while dfg computes), so a session costs one arena
    (program.arena_bytes) however many threads share it, and its runs do
    not overlap in time. To run in parallel, make a session per thread:
    each costs its own arena, and all share the program's weights.

    threads (ONNX Runtime's intra_op_num_threads): the CPU threads each
    run uses, whichever thread calls run(); None: OpenMP's default
    (OMP_NUM_THREADS, else one per core), whatever the calling thread's
    own OpenMP setting (PyTorch sets its main thread's when imported).
    The threads property says how many a run uses.

    enable_profiling (ONNX Runtime's option): every run is timed step by
    step (a little slower), and end_profiling() writes the steps' mean
    times as a Perfetto trace, PREFIX_DATE.json with PREFIX
    profile_file_prefix, the trace `dfgc bench --trace` writes.
    """

    def __init__(self, program, device="cpu", enable_profiling=False,
                 profile_file_prefix="dfg_profile", threads=None):
        from . import Program  # the package imports this module first
        if not isinstance(program, Program):
            raise TypeError("program must be a dfg.Program")
        if threads is not None and (isinstance(threads, bool) or
                                    not isinstance(threads, int) or
                                    threads < 1):
            raise ValueError(f"threads must be an int of at least 1 (or "
                             f"None), not {threads!r}")
        self.program = program
        with python_words():
            self._handle = _dfg.session(program._handle, str(device),
                                        threads or 0)
        self.device = str(device)
        self._profile = (StepProfile(profile_file_prefix)
                         if enable_profiling else None)

    @property
    def threads(self):
        """The CPU threads a run uses (OpenMP's team)."""
        return self._handle.threads

    def end_profiling(self):
        """Writes the profile of the runs since profiling began (or since
        the last call) and returns its path; "" when profiling is off."""
        return self._profile.write(self._handle) if self._profile else ""

    def close(self):
        """Frees the session's memory (after a run in progress ends)."""
        self._handle.close()

    @property
    def closed(self):
        return self._handle.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def get_inputs(self):
        """The inputs as ONNX Runtime lists them: each with .name, .shape,
        .type ("tensor(float)") and .dtype ("f32")."""
        return list(self.program.inputs)

    def get_outputs(self):
        """The outputs, as get_inputs() lists the inputs."""
        return list(self.program.outputs)

    def run(self, output_names=None, input_feed=None, run_options=None, *,
            out=None, inputs=None):
        """Runs the program.

        dfg's form: run({name: array}) or run(inputs={...}) returns
        {name: numpy.ndarray} for every output.

        ONNX Runtime's form: run(output_names, {name: array}) returns a
        list of arrays, one per name in output_names (None: every output,
        in the program's order).

        Inputs may be NumPy arrays, torch CPU tensors or any DLPack or
        array-like host data; one of the right dtype and shape, laid out
        C-contiguous, is read in place (no copy). out: {name: array} (or,
        in ONNX Runtime's form, a list parallel to output_names) of
        caller-allocated arrays that the outputs are written into, without
        a copy: the result holds those very arrays. Results are NumPy
        arrays: torch.from_dlpack(result) shares their memory.
        run_options: ONNX Runtime's RunOptions, which dfg has none of; must
        be None."""
        if run_options is not None:
            raise ValueError("run_options: dfg has no run options; pass "
                             "None")
        if isinstance(output_names, dict) and input_feed is None:
            feed, names, as_dict = output_names, None, True
        elif inputs is not None:
            if output_names is not None or input_feed is not None:
                raise TypeError("inputs= goes alone, without output_names "
                                "or input_feed")
            feed, names, as_dict = inputs, None, True
        else:
            feed, names, as_dict = input_feed, output_names, False
        if not isinstance(feed, dict):
            raise TypeError("input_feed must be a dict of input name to "
                            f"array, not {type(feed).__name__}")
        names = self._output_names(names)
        outputs = self._run(feed, self._out_arrays(names, out))
        if as_dict:
            return {name: outputs[name] for name in names}
        return [outputs[name] for name in names]

    def _output_names(self, names):
        everything = [s.name for s in self.program.outputs]
        if names is None:
            return everything
        if isinstance(names, str):
            raise TypeError("output_names must be a list of names (or "
                            f"None), not the string {names!r}")
        names = list(names)
        unknown = [n for n in names if n not in everything]
        if unknown:
            raise ValueError(f"output_names: no output named {unknown}; the "
                             f"program's outputs are {everything}")
        return names

    def _out_arrays(self, names, out):
        """{name: checked caller array} from out (a dict, or a list
        parallel to names)."""
        if out is None:
            return {}
        if not isinstance(out, dict):
            out = list(out)
            if len(out) != len(names):
                raise ValueError(f"out: {len(out)} arrays for "
                                 f"{len(names)} outputs {names}")
            out = dict(zip(names, out))
        specs = {s.name: s for s in self.program.outputs}
        unknown = sorted(set(out) - set(specs))
        if unknown:
            raise ValueError(f"out: no output named {unknown}; the "
                             f"program's outputs are {sorted(specs)}")
        return {name: output_array(specs[name], a) for name, a in out.items()}

    def _run(self, feed, out):
        """Runs on feed's inputs; every output as {name: array}, the ones
        in out written into the caller's arrays."""
        arrays, outputs = self._buffers(feed, out)
        with python_words():
            if self._profile is None:
                self._handle.run(arrays, outputs)
            else:
                self._profile.add(self._handle.run_profiled(arrays, outputs))
        return {s.name: a for s, a in zip(self.program.outputs, outputs)}

    def _buffers(self, feed, out):
        """The input and output arrays of a run on feed, in the program's
        order, after checking every name, dtype and shape."""
        if self.closed:
            raise ValueError("the session is closed")
        specs = {s.name: s for s in self.program.inputs}
        unknown = sorted(set(feed) - set(specs))
        if unknown:
            raise ValueError(f"unknown input(s) {unknown}; the program's "
                             f"inputs are {sorted(specs)}")
        missing = sorted(set(specs) - set(feed))
        if missing:
            raise ValueError(f"missing input(s) {missing}")
        arrays = [input_array(s, feed[s.name]) for s in self.program.inputs]
        outputs = [out[s.name] if s.name in out else
                   np.empty(s.shape, dtype=s.numpy_dtype)
                   for s in self.program.outputs]
        return arrays, outputs
