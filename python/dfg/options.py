"""SessionOptions: ONNX Runtime's session options, as far as dfg has
them, for InferenceSession(model, sess_options)."""


class SessionOptions:
    """What InferenceSession(model, sess_options) is given.

    ONNX Runtime's names: intra_op_num_threads (the CPU threads a run
    uses; 0: OpenMP's default), enable_profiling and profile_file_prefix
    (Session's). dfg's own, for dfg.compile: planner ("greedy_size", ...;
    None: every planner, the smallest arena kept), precision ("f32",
    "bf16") and prefer ("speed", "memory", "smallest"). Setting any other attribute raises AttributeError, so that
    an option dfg does not have is never silently ignored.
    """

    __slots__ = ("intra_op_num_threads", "enable_profiling",
                 "profile_file_prefix", "planner", "precision", "prefer")

    def __init__(self):
        self.intra_op_num_threads = 0
        self.enable_profiling = False
        self.profile_file_prefix = "dfg_profile"
        self.planner = None
        self.precision = None
        self.prefer = None

    def compile_options(self):
        """The options dfg.compile takes, those set only."""
        names = ("planner", "precision", "prefer")
        return {name: getattr(self, name) for name in names
                if getattr(self, name) is not None}

    def session_options(self):
        """The keyword arguments of Program.session."""
        return {"threads": self.intra_op_num_threads or None,
                "enable_profiling": bool(self.enable_profiling),
                "profile_file_prefix": self.profile_file_prefix}

    def __repr__(self):
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"dfg.SessionOptions({fields})"
