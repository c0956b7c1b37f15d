"""Training from Python (python/dfg/training.py over include/dfg/trainer.h):
dfg.train on an ONNX model under memory_budget="50%" trains, fits the
budget and saves a model that predicts what the trainer does; a loop of
one's own (dfg.Trainer) resumes bit for bit, reads and writes weights,
and stops on a NaN with the weights kept; dfg.compile(training=True)
takes an ONNX model, a budget and bf16."""
import io

import numpy as np
import pytest

import dfg

BATCH = 32


@pytest.fixture(scope="module")
def mlp_onnx():
    """A 12-layer perceptron over [N, 3, 4, 4] to 4 classes, exported by
    PyTorch: deep enough that recomputing activations halves its arena."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    layers = [torch.nn.Flatten(), torch.nn.Linear(48, 32), torch.nn.ReLU()]
    for _ in range(10):
        layers += [torch.nn.Linear(32, 32), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(32, 4))
    buffer = io.BytesIO()
    torch.onnx.export(model, torch.randn(BATCH, 3, 4, 4), buffer,
                      opset_version=13, input_names=["x"],
                      output_names=["logits"])
    return buffer.getvalue()


def templates_and_noise(rows, seed):
    """Four class templates plus Gaussian noise: learnable."""
    templates = np.random.RandomState(7).randn(4, 3, 4, 4)
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 4, rows).astype(np.int64)
    return (templates[y] + 0.5 * rng.randn(rows, 3, 4, 4)).astype(
        np.float32), y


def test_train_under_half_the_memory_and_save(mlp_onnx, tmp_path):
    x, y = templates_and_noise(512, 1)
    val = templates_and_noise(96, 2)
    free = dfg.Trainer(mlp_onnx)
    saved = tmp_path / "trained.onnx"
    trained = dfg.train(mlp_onnx, x, y, val=val, epochs=4,
                        memory_budget="50%", save=saved, batch=BATCH)
    assert trained.arena_bytes <= free.arena_bytes // 2
    assert trained.history[-1]["val_accuracy"] >= 0.9
    assert trained.history[-1]["loss"] < trained.history[0]["loss"]
    # evaluate: dfg's loss is the cross entropy of the predictions.
    xv, yv = val[0][:BATCH], val[1][:BATCH]
    p = trained.predict(xv).astype(np.float64)
    top = p.max(axis=1)
    want = np.mean(np.log(np.exp(p - top[:, None]).sum(axis=1)) + top -
                   p[np.arange(BATCH), yv])
    loss, accuracy = trained.evaluate(xv, yv)
    assert abs(loss - want) <= 1e-5 * (1 + want)
    assert accuracy == np.mean(p.argmax(axis=1) == yv)
    # The saved model, compiled by dfg, predicts as the trainer does.
    xb = val[0][:BATCH]
    program = dfg.compile(str(saved))
    got = program.session().run({"x": xb})["logits"]
    assert np.abs(got - trained.predict(xb)).max() <= 1e-4
    assert np.abs(trained.program().session().run({"x": xb})["logits"] -
                  got).max() == 0


def test_own_loop_resumes_bit_for_bit(mlp_onnx, tmp_path):
    x, y = templates_and_noise(256, 3)
    straight = dfg.Trainer(mlp_onnx, optimizer="sgd", schedule="step",
                           step_size=5, gamma=0.5, warmup=3)
    straight.fit(x, y, 2, checkpoint=tmp_path / "a")
    first = dfg.Trainer(mlp_onnx, optimizer="sgd", schedule="step",
                        step_size=5, gamma=0.5, warmup=3)
    first.fit(x, y, 1, checkpoint=tmp_path / "b")
    resumed = dfg.Trainer(mlp_onnx, optimizer="sgd", schedule="step",
                          step_size=5, gamma=0.5, warmup=3)
    history = resumed.fit(x, y, 2, resume=tmp_path / "b",
                          checkpoint=tmp_path / "b")
    assert [h["epoch"] for h in history] == [2]
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()
    for name in straight.weight_names:
        assert straight.get_weight(name).tobytes() == \
            resumed.get_weight(name).tobytes()
    assert resumed.steps == straight.steps == 16
    with pytest.raises(dfg.Error, match="seed"):
        dfg.Trainer(mlp_onnx, optimizer="sgd", schedule="step", step_size=5,
                    gamma=0.5, warmup=3, seed=2).load_checkpoint(tmp_path / "a")


def test_weights_read_and_written(mlp_onnx):
    t = dfg.Trainer(mlp_onnx)
    name = t.weight_names[0]
    w = t.get_weight(name)
    assert w.dtype == np.float32 and w.size > 0
    x, _ = templates_and_noise(BATCH, 4)
    before = t.predict(x)
    for n in t.weight_names:
        t.set_weight(n, np.zeros(t.get_weight(n).size, np.float32))
    assert np.all(t.predict(x) == 0) and np.any(before != 0)
    with pytest.raises(dfg.ArgumentError):
        t.get_weight("no such weight")
    with pytest.raises(ValueError):
        t.set_weight(name, np.zeros(w.size + 1, np.float32))


def test_nan_stops_with_the_weights_kept(mlp_onnx):
    t = dfg.Trainer(mlp_onnx)
    x, y = templates_and_noise(BATCH, 5)
    t.step(x, y)
    kept = {n: t.get_weight(n) for n in t.weight_names}
    x[3, 0, 0, 0] = np.nan
    with pytest.raises(dfg.Error, match="step 2"):
        t.step(x, y)
    for n in t.weight_names:
        assert t.get_weight(n).tobytes() == kept[n].tobytes()
    assert t.steps == 1


def test_compile_training_onnx_with_budget_and_bf16(mlp_onnx):
    f32 = dfg.compile(mlp_onnx, training=True)
    half = dfg.compile(mlp_onnx, training=True, memory_budget="50%")
    bf16 = dfg.compile(mlp_onnx, training=True, precision="bf16")
    assert half.arena_bytes <= f32.arena_bytes // 2
    kib = -(-f32.arena_bytes // 1024)
    in_kib = dfg.compile(mlp_onnx, training=True, memory_budget=f"{kib}KiB")
    assert in_kib.arena_bytes <= kib * 1024
    with pytest.raises(dfg.Error, match="smallest arena reached is"):
        dfg.compile(mlp_onnx, training=True, memory_budget="1KiB")
    assert dfg.memory_budget_options("130MiB") == {
        "memory_budget_bytes": 130 << 20}
    assert dfg.memory_budget_options("2GiB") == {
        "memory_budget_bytes": 2 << 30}
    for bad in ("130MB", "MiB", "-1KiB", "1.5MiB", "0KiB"):
        with pytest.raises(ValueError, match="130MiB"):
            dfg.memory_budget_options(bad)
    assert bf16.arena_bytes < f32.arena_bytes
    assert [i.name for i in f32.inputs] == ["x", "labels"]
    trainer = dfg.Trainer(mlp_onnx, precision="bf16")
    assert trainer.arena_bytes == bf16.arena_bytes
    assert np.isfinite(trainer.step(*templates_and_noise(BATCH, 6)))
    with pytest.raises(ValueError, match="percent"):
        dfg.train(mlp_onnx, *templates_and_noise(64, 6), memory_budget="0%")
    with pytest.raises(ValueError, match="batch"):
        dfg.train(mlp_onnx, *templates_and_noise(64, 6), batch=8)
