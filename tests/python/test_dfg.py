"""The Python package (python/dfg), run by scripts/test in a fresh virtual
environment after `pip install .`. DFGC names the dfgc binary of the same
build (for the plan-JSON comparison); torch and torchvision (Debian's) for
the from_torch test."""
import json
import os
import subprocess

import numpy as np
import pytest

import dfg
from conftest import run_in_threads

DFGC = os.environ.get("DFGC")


@pytest.fixture(scope="module")
def cnn():
    return dfg.compile("example:cnn")


def random_inputs(program, seed=0):
    rng = np.random.default_rng(seed)
    return {s.name: rng.standard_normal(s.shape).astype(s.numpy_dtype)
            for s in program.inputs}


def test_program_facts(cnn):
    assert cnn.arena_bytes >= cnn.lower_bound_bytes > 0
    assert cnn.no_reuse_bytes >= cnn.arena_bytes
    assert cnn.weights_bytes > 0
    assert cnn.inputs == [dfg.TensorSpec("x", "f32", (32, 1, 8, 8))]
    assert [o.name for o in cnn.outputs] == ["probs"]
    plan = cnn.plan
    assert plan["arena_bytes"] == cnn.arena_bytes
    assert "model" in cnn.summary()
    assert cnn.to_dot().startswith("digraph")
    assert "<svg" in cnn.to_svg() and "<svg" in cnn._repr_html_()
    compare = cnn.compare()
    assert compare["lower_bound_bytes"] == cnn.lower_bound_bytes
    assert compare["caching_allocator"]["reserved_peak_bytes"] >= \
        cnn.lower_bound_bytes
    assert set(compare["planner_arena_bytes"]) >= {"no_reuse", "greedy_size"}
    assert json.loads(cnn.to_trace())


def test_html_file(cnn, tmp_path):
    path = tmp_path / "plan.html"
    cnn.to_html(path)
    assert path.read_text().startswith("<!DOCTYPE html>")


def test_run_softmax_rows(cnn):
    with cnn.session() as session:
        out = session.run(random_inputs(cnn))["probs"]
    assert out.shape == (32, 10) and out.dtype == np.float32
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-5)


def test_save_load_same_outputs(cnn, tmp_path):
    path = str(tmp_path / "cnn.dfgp")
    cnn.save(path)
    loaded = dfg.load(path)
    assert loaded.plan == cnn.plan
    x = random_inputs(cnn, seed=3)
    a = cnn.session().run(x)["probs"]
    b = loaded.session().run(x)["probs"]
    # the loaded program is mapped, so its convs run on oneDNN; the one
    # compiled here keeps its weights on the heap and runs the reference
    # kernels (runtime/cpu/onednn/dnnl_conv.c): the same up to float rounding
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


@pytest.mark.skipif(not DFGC, reason="DFGC (the dfgc binary) not given")
def test_plan_equals_dfgc_json(cnn, tmp_path):
    out = tmp_path / "plan.json"
    subprocess.run([DFGC, "plan", "example:cnn", "--json", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    assert json.loads(out.read_text()) == cnn.plan


def test_threads_agree(cnn):
    x = random_inputs(cnn, seed=7)
    expected = cnn.session().run(x)["probs"]
    results = [None] * 4

    def work(k):
        with cnn.session() as session:
            for _ in range(20):
                results[k] = session.run(x)["probs"]

    assert not run_in_threads(4, work)
    for r in results:
        np.testing.assert_array_equal(r, expected)


def test_bad_inputs_raise(cnn):
    session = cnn.session()
    x = random_inputs(cnn)["x"]
    with pytest.raises(ValueError, match="input 'x' wants shape"):
        session.run({"x": x[:3]})
    with pytest.raises(ValueError, match="input 'x' wants dtype f32"):
        session.run({"x": x.astype(np.float64)})
    with pytest.raises(ValueError, match="unknown input"):
        session.run({"x": x, "y": x})
    with pytest.raises(ValueError, match="missing input"):
        session.run({})
    with pytest.raises(TypeError):
        session.run([x])
    # A non-contiguous array is copied, and gives the same answer.
    wide = np.zeros((32, 1, 8, 16), dtype=np.float32)
    wide[..., ::2] = x
    np.testing.assert_array_equal(session.run({"x": wide[..., ::2]})["probs"],
                                  session.run({"x": x})["probs"])
    # The extension itself refuses wrong or non-contiguous buffers.
    probs = np.empty((32, 10), dtype=np.float32)
    with pytest.raises(ValueError, match="needs 8192 bytes"):
        session._handle.run([x[:3]], [probs])
    with pytest.raises((ValueError, BufferError)):
        session._handle.run([wide[..., ::2]], [probs])
    with pytest.raises((ValueError, BufferError, TypeError)):
        session._handle.run([x], [probs.data.toreadonly()])
    with pytest.raises(ValueError):
        session._handle.run([x], [])
    session.close()
    assert session.closed
    with pytest.raises(ValueError, match="closed"):
        session.run({"x": x})
    with pytest.raises(ValueError, match="closed"):
        session._handle.run([x], [probs])


def test_bad_models_raise(tmp_path):
    with pytest.raises(dfg.Error):
        dfg.compile("example:no_such_model")
    with pytest.raises(dfg.Error):
        dfg.compile(b"\x08\x07\x12\x00garbage")
    with pytest.raises(dfg.Error):
        dfg.compile(str(tmp_path / "missing.onnx"))
    corrupt = tmp_path / "corrupt.dfgp"
    corrupt.write_bytes(b"DFGP" + bytes(range(256)) * 4)
    with pytest.raises(dfg.Error):
        dfg.load(str(corrupt))
    with pytest.raises(ValueError, match="unknown planner"):
        dfg.compile("example:cnn", planner="no_such_planner")
    with pytest.raises(ValueError):
        dfg.compile("example:cnn", alignment=3)
    with pytest.raises(TypeError):
        dfg.compile(42)
    with pytest.raises(ValueError, match="training"):
        dfg.compile("example:cnn", memory_budget="50%")
    with pytest.raises(ValueError, match="precision 'f8'"):
        dfg.compile("example:cnn", precision="f8")
    with pytest.raises(dfg.Error, match="precision f16 is not supported on "
                                        "the cpu backend"):
        dfg.compile("example:cnn", precision="f16")
    with pytest.raises(dfg.Error, match="precision tf32"):
        dfg.compile("example:cnn", precision="tf32")
    with pytest.raises(dfg.Error):
        dfg.compile("example:cnn").session(device="no_such_device")


def test_bf16_precision():
    """bf16 storage: the training step's activations and gradients are
    bf16 and its arena smaller; the inference program still takes and
    returns f32, and agrees with the f32 one to bf16's precision."""
    f32 = dfg.compile("example:cnn", training=True)
    bf16 = dfg.compile("example:cnn", training=True, precision="bf16")
    assert bf16.arena_bytes < 0.8 * f32.arena_bytes
    dtypes = {t["kind"]: t["dtype"] for t in bf16.plan["tensors"]
              if t["kind"] in ("gradient", "saved_activation")
              and t["dtype"] == "bf16"}
    assert dtypes == {"gradient": "bf16", "saved_activation": "bf16"}
    x = np.random.default_rng(3).standard_normal((32, 1, 8, 8),
                                                 dtype=np.float32)
    outputs = []
    for precision in ("f32", "bf16"):
        program = dfg.compile("example:cnn", precision=precision)
        assert [i.dtype for i in program.inputs] == ["f32"]
        outputs.append(program.session().run({"x": x})["probs"])
    assert outputs[1].dtype == np.float32
    assert np.abs(outputs[1] - outputs[0]).max() < 0.05


def test_training_program():
    program = dfg.compile("example:mlp", training=True)
    kinds = program.plan["bytes_by_kind"]
    assert kinds.get("gradient", 0) > 0


@pytest.mark.skipif(not DFGC, reason="DFGC (the dfgc binary) not given")
def test_resnet18_plan_equals_dfgc_json(tmp_path):
    torch = pytest.importorskip("torch")
    torchvision = pytest.importorskip("torchvision")
    model = torchvision.models.resnet18(weights=None).eval()
    path = tmp_path / "resnet18.onnx"
    torch.onnx.export(model, torch.randn(1, 3, 224, 224), str(path),
                      opset_version=13, input_names=["input"],
                      output_names=["output"])
    out = tmp_path / "plan.json"
    subprocess.run([DFGC, "plan", str(path), "--json", str(out)],
                   check=True, stdout=subprocess.DEVNULL)
    assert json.loads(out.read_text()) == dfg.compile(str(path)).plan


def test_from_torch_resnet18_matches_pytorch():
    torch = pytest.importorskip("torch")
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        expected = model(x).numpy()
    program = dfg.from_torch(model, x)
    assert program.inputs[0].shape == (1, 3, 224, 224)
    out = program.session().run({"input": x.numpy()})["output"]
    error = np.linalg.norm(out - expected) / np.linalg.norm(expected)
    assert error < 1e-4
