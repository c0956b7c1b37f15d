"""Session options (threads, SessionOptions), the CUDA device from
Python, and one Session of a real CNN shared by 8 threads."""
import os

import numpy as np
import pytest

import dfg
from conftest import cnn_input, run_in_threads


def test_threads(cnn):
    x = cnn_input(1)
    expected = cnn.session().run({"x": x})["probs"]
    one = cnn.session(threads=1)
    assert one.threads == 1
    np.testing.assert_allclose(one.run({"x": x})["probs"], expected,
                               rtol=1e-5, atol=1e-6)
    assert cnn.bench(iterations=2, warmup=0, threads=1)["threads"] == 1
    assert cnn.bench(iterations=2, warmup=0, threads=2)["threads"] == 2
    for wrong in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="threads must be"):
            cnn.session(threads=wrong)


def test_default_threads_whatever_the_callers(cnn, monkeypatch):
    """threads=None is OpenMP's default (OMP_NUM_THREADS here, else one
    per core) from every calling thread: PyTorch sets its main thread's
    OpenMP team when imported (to 1 on some machines), and sessions
    followed it (runs from the main thread on 1 thread, from others on
    every core). The caller's own setting is left as it was."""
    import ctypes
    import ctypes.util
    gomp = ctypes.CDLL(ctypes.util.find_library("gomp") or "libgomp.so.1")
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    x = cnn_input(1)
    had = gomp.omp_get_max_threads()
    gomp.omp_set_num_threads(1)  # what importing PyTorch may do
    try:
        session = cnn.session()
        assert session.threads == 3
        here = session.run({"x": x})["probs"]
        assert gomp.omp_get_max_threads() == 1
        there = []
        assert not run_in_threads(
            1, lambda k: there.append(session.run({"x": x})["probs"]))
        np.testing.assert_array_equal(there[0], here)
        assert cnn.bench(iterations=1, warmup=0)["threads"] == 3
    finally:
        gomp.omp_set_num_threads(had)


def test_prefer_memory(cnn):
    """prefer="memory" (dfgc --prefer memory): the arena planned at the
    bound without library scratch that the default plan reports, and
    below it with tiling; the same results."""
    small = dfg.compile("example:cnn", prefer="memory", tiling=False)
    bound = cnn.plan["scratch_free_lower_bound_bytes"]
    assert bound <= cnn.arena_bytes
    assert small.arena_bytes == \
        small.plan["scratch_free_lower_bound_bytes"] == bound
    assert cnn.plan["tiling"] is None and small.plan["tiling"] is None
    # Memory first with tiling (the default) never above the untiled
    # program (the cnn's 8x8 images stay whole: bands' steps would cost
    # more than the 10% it trades); the smallest arena whatever kernels
    # run it, the first layers band by band: below the op-by-op bound,
    # which is the untiled program's. Unfused (fuse=False, dfgc
    # --no-fuse): with its batch norms folded into the convs the cnn's
    # peak leaves the first layers, and no band lowers it.
    memory = dfg.compile("example:cnn", prefer="memory")
    assert memory.arena_bytes <= small.arena_bytes
    apart = dfg.compile("example:cnn", prefer="memory", tiling=False,
                        fuse=False)
    tiled = dfg.compile("example:cnn", prefer="smallest", fuse=False)
    assert tiled.plan["tiling"]["tiles"] >= 2
    assert tiled.arena_bytes < apart.arena_bytes == \
        tiled.plan["op_by_op_lower_bound_bytes"]
    assert len(apart.plan["steps"]) > len(small.plan["steps"])
    x = cnn_input(4)
    for program in (small, memory, apart, tiled):
        np.testing.assert_allclose(program.session().run({"x": x})["probs"],
                                   cnn.session().run({"x": x})["probs"],
                                   rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="prefer must be"):
        dfg.compile("example:cnn", prefer="fast")


def test_session_options():
    options = dfg.SessionOptions()
    options.intra_op_num_threads = 1
    options.planner = "greedy_breadth"
    options.prefer = "memory"
    session = dfg.InferenceSession("example:cnn", options,
                                   providers=["CPUExecutionProvider"])
    assert session.threads == 1
    assert session.program.stats["planner"] == "greedy_breadth"
    plan = session.program.plan
    # Memory first plans no library scratch: the program's own bound is
    # the scratch-free one (a greedy planner may place above a bound).
    assert (session.program.lower_bound_bytes ==
            plan["scratch_free_lower_bound_bytes"])
    assert plan["arena_bytes"] >= plan["scratch_free_lower_bound_bytes"]
    assert session.run(None, {"x": cnn_input(2)})[0].shape == (32, 10)
    with pytest.raises(AttributeError):
        options.graph_optimisation_level = 99  # no such option: not ignored
    with pytest.raises(ValueError, match="not both"):
        dfg.InferenceSession("example:cnn", options, planner="no_reuse")
    with pytest.raises(TypeError, match="sess_options"):
        dfg.InferenceSession("example:cnn", {"threads": 1})


def package_file(name):
    return os.path.join(os.path.dirname(dfg.__file__), name)


def test_cuda_module_carried_when_built_with_cuda():
    """A package built where the CUDA toolkit was found carries the CUDA
    backend's module beside its extension; one built without, none."""
    assert os.path.exists(package_file("libdfg-cuda.so")) == \
        dfg._dfg.CUDA_MODULE


def gpu_available():
    return (dfg._dfg.CUDA_MODULE and
            os.system("nvidia-smi -L >/dev/null 2>&1") == 0)


def test_half_precision_for_cuda():
    """precision="f16" or "bf16" with device="cuda" compiles 16-bit
    inference without a GPU: every weight 16-bit, the weights halved; the
    inputs and outputs keep f32 (docs/precision.md)."""
    if not dfg._dfg.CUDA_MODULE:
        pytest.skip("the package was built without the CUDA toolkit")
    f32 = dfg.compile("example:cnn", device="cuda")
    for precision in ("f16", "bf16"):
        half = dfg.compile("example:cnn", device="cuda", precision=precision)
        assert half.weights_bytes * 10 < f32.weights_bytes * 6
        assert {t["dtype"] for t in half.plan["tensors"]
                if t["kind"] == "weight"} == {precision}
        assert [i.dtype for i in half.inputs] == ["f32"]


def test_cuda_session(cnn):
    """device="cuda": on a GPU the results match the CPU's; without a
    driver or a device, dfg.Error with the reason `dfgc devices` gives."""
    if not dfg._dfg.CUDA_MODULE:
        with pytest.raises(dfg.Error, match="cuda backend not installed"):
            cnn.session(device="cuda")
        pytest.skip("the package was built without the CUDA toolkit")
    x = cnn_input(3)
    if gpu_available():
        expected = cnn.session().run({"x": x})["probs"]
        session = cnn.session(device="cuda")
        assert session.program.device == "cuda"
        np.testing.assert_allclose(session.run({"x": x})["probs"], expected,
                                   rtol=1e-3, atol=1e-5)
        (probs,) = dfg.InferenceSession(
            "example:cnn", providers=["CUDAExecutionProvider"]).run(
                None, {"x": x})
        np.testing.assert_allclose(probs, expected, rtol=1e-3, atol=1e-5)
        return
    with pytest.raises(dfg.Error, match=r"device unavailable: cuda") as e:
        cnn.session(device="cuda")
    dfgc = os.environ.get("DFGC")
    if dfgc and os.path.exists(dfgc):
        import subprocess
        lines = subprocess.run([dfgc, "devices"], capture_output=True,
                               text=True, check=True).stdout.splitlines()
        (cuda,) = [line for line in lines if line.startswith("cuda ")]
        if "unavailable: " in cuda:  # dfgc built with the CUDA module
            assert cuda.split("unavailable: ", 1)[1] in str(e.value)
    with pytest.raises(dfg.Error, match=r"device unavailable: cuda"):
        dfg.InferenceSession("example:cnn",
                             providers=["CUDAExecutionProvider"])


def test_one_session_of_a_resnet_shared_by_threads():
    """8 threads x 50 runs on one Session of torchvision's ResNet-18
    (random weights, 1x3x64x64), each thread its own input: every result
    equals the single-threaded one, and no call raises."""
    torch = pytest.importorskip("torch")
    models = pytest.importorskip("torchvision.models")
    torch.manual_seed(0)
    program = dfg.from_torch(models.resnet18(num_classes=10),
                             torch.randn(1, 3, 64, 64))
    session = program.session()
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal((1, 3, 64, 64)).astype(np.float32)
              for _ in range(8)]
    expected = [session.run({"input": x})["output"] for x in inputs]
    assert not any(np.array_equal(expected[0], e) for e in expected[1:])
    mismatches = []

    def work(k):
        for _ in range(50):
            got = session.run(None, {"input": inputs[k]})[0]
            if not np.array_equal(got, expected[k]):
                mismatches.append(k)

    assert not run_in_threads(8, work)
    assert not mismatches
