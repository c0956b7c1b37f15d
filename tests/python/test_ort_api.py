"""The API ONNX Runtime users know (python/dfg/session.py): get_inputs,
run(output_names, feed), out=, DLPack with torch, shapes= checked, the
InferenceSession entry point; and sessions shared by threads."""

import numpy as np
import pytest

import dfg
from conftest import cnn_input, run_in_threads, tiny_onnx


def test_get_inputs_and_outputs(cnn):
    session = cnn.session()
    (x,) = session.get_inputs()
    assert (x.name, x.shape, x.type, x.dtype) == \
        ("x", (32, 1, 8, 8), "tensor(float)", "f32")
    (probs,) = session.get_outputs()
    assert (probs.name, probs.shape, probs.type) == \
        ("probs", (32, 10), "tensor(float)")


def test_run_onnx_runtime_form(cnn):
    session = cnn.session()
    x = cnn_input(1)
    expected = session.run({"x": x})["probs"]
    (all_outputs,) = session.run(None, {"x": x})
    np.testing.assert_array_equal(all_outputs, expected)
    (named,) = session.run(["probs"], {"x": x})
    np.testing.assert_array_equal(named, expected)
    np.testing.assert_array_equal(session.run(inputs={"x": x})["probs"],
                                  expected)
    with pytest.raises(ValueError, match=r"no output named \['nope'\].*probs"):
        session.run(["nope"], {"x": x})
    with pytest.raises(TypeError, match="input_feed"):
        session.run(["probs"], [x])
    with pytest.raises(ValueError, match="run_options"):
        session.run(None, {"x": x}, object())


def test_run_into_caller_arrays(cnn):
    session = cnn.session()
    x = cnn_input(2)
    expected = session.run({"x": x})["probs"]
    out = np.empty((32, 10), dtype=np.float32)
    result = session.run({"x": x}, out={"probs": out})["probs"]
    assert result is out
    np.testing.assert_array_equal(out, expected)
    other = np.empty_like(out)
    (result,) = session.run(["probs"], {"x": x}, out=[other])
    assert result is other
    with pytest.raises(ValueError, match=r"out\['probs'\] wants dtype f32 \(float32\), not float64"):
        session.run({"x": x}, out={"probs": np.empty((32, 10))})
    with pytest.raises(ValueError, match=r"out\['probs'\] wants shape \[32, 10\], not \[10, 32\]"):
        session.run({"x": x}, out={"probs": np.empty((10, 32), np.float32)})
    strided = np.empty((32, 20), dtype=np.float32)[:, ::2]
    with pytest.raises(ValueError, match="not C-contiguous"):
        session.run({"x": x}, out={"probs": strided})
    frozen = np.empty((32, 10), dtype=np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        session.run({"x": x}, out={"probs": frozen})
    with pytest.raises(ValueError, match=r"out: no output named \['y'\]"):
        session.run({"x": x}, out={"y": out})
    with pytest.raises(TypeError, match="numpy.ndarray"):
        session.run({"x": x}, out={"probs": [0.0] * 320})


def test_dlpack_with_torch(cnn):
    torch = pytest.importorskip("torch")
    session = cnn.session()
    x = cnn_input(3)
    expected = session.run({"x": x})["probs"]
    # A torch CPU tensor in, read in place (no copy), also one that
    # requires grad.
    tensor = torch.from_numpy(x.copy())
    spec = session.get_inputs()[0]
    from dfg.tensor_spec import input_array
    assert np.shares_memory(input_array(spec, tensor), tensor.numpy())
    np.testing.assert_array_equal(session.run({"x": tensor})["probs"],
                                  expected)
    np.testing.assert_array_equal(
        session.run({"x": tensor.requires_grad_()})["probs"], expected)
    # A result out to torch through DLPack: the same memory.
    result = session.run({"x": x})["probs"]
    shared = torch.from_dlpack(result)
    shared[0, 0] = 42.0
    assert result[0, 0] == 42.0


def test_shapes_naming_nothing_raise():
    model = tiny_onnx()
    program = dfg.compile(model, shapes={"features": (5, 4)})
    assert program.inputs[0].shape == (5, 4)
    assert dfg.compile(model, shapes={"batch": 6}).inputs[0].shape == (6, 4)
    with pytest.raises(ValueError, match="'featurs'.*'features'"):
        dfg.compile(model, shapes={"featurs": (5, 4)})
    with pytest.raises(ValueError, match="'N'.*symbolic dimension"):
        dfg.compile(model, shapes={"N": 5})


def test_inference_session():
    session = dfg.InferenceSession("example:cnn",
                                   providers=["CPUExecutionProvider"],
                                   planner="greedy_breadth")
    assert session.program.stats["planner"] == "greedy_breadth"
    (probs,) = session.run(None, {"x": cnn_input(4)})
    assert probs.shape == (32, 10)
    with pytest.raises(ValueError, match="providers"):
        dfg.InferenceSession("example:cnn", providers=["TensorrtProvider"])


def test_one_session_shared_by_threads():
    """8 threads x 50 runs on one Session, distinct inputs: every result
    equals the single-threaded one, and no call raises."""
    program = dfg.compile("example:cnn")
    session = program.session()
    inputs = [cnn_input(100 + k) for k in range(8)]
    expected = [session.run({"x": x})["probs"] for x in inputs]
    mismatches = []

    def work(k):
        for _ in range(50):
            got = session.run({"x": inputs[k]})["probs"]
            if not np.array_equal(got, expected[k]):
                mismatches.append(k)

    assert not run_in_threads(8, work)
    assert not mismatches
    session.close()
    with pytest.raises(ValueError, match="closed"):
        session.run({"x": inputs[0]})


def test_profiling_writes_the_bench_trace(tmp_path):
    """enable_profiling: runs timed step by step, end_profiling() writes
    the Perfetto trace `dfgc bench --trace` writes, and says where."""
    import json
    prefix = str(tmp_path / "cnn")
    session = dfg.InferenceSession("example:cnn", enable_profiling=True,
                                   profile_file_prefix=prefix)
    x = cnn_input(5)
    plain = dfg.compile("example:cnn").session()
    for _ in range(3):
        (probs,) = session.run(None, {"x": x})
    np.testing.assert_allclose(probs, plain.run({"x": x})["probs"],
                               rtol=1e-5, atol=1e-7)
    path = session.end_profiling()
    assert path.startswith(prefix) and path.endswith(".json")
    events = json.load(open(path))["traceEvents"]
    assert len(events) == session.program.stats["n_steps"]
    assert all(e["ph"] == "X" and e["dur"] >= 0 and e["args"]["runs_on"]
               for e in events)
    assert sum(e["dur"] for e in events) > 0
    with pytest.raises(ValueError, match="no run was profiled"):
        session.end_profiling()
    assert plain.end_profiling() == ""
