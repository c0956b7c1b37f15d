"""Helpers the Python tests share."""
import io
import threading

import numpy as np
import pytest

import dfg


def tiny_onnx():
    """The ONNX bytes of a Linear(4, 2) whose input 'features' has the
    symbolic batch dimension 'batch' (skips the test without torch)."""
    torch = pytest.importorskip("torch")
    buffer = io.BytesIO()
    torch.onnx.export(torch.nn.Linear(4, 2), torch.randn(3, 4), buffer,
                      input_names=["features"], output_names=["y"],
                      dynamic_axes={"features": {0: "batch"}})
    return buffer.getvalue()


def run_in_threads(n, work):
    """Runs work(k) for k in range(n), each on its own thread, and returns
    the exceptions they raised (none expected), to be checked by the
    caller in the main thread."""
    errors = []

    def guarded(k):
        try:
            work(k)
        except Exception as error:  # reported to the caller
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


@pytest.fixture(scope="module")
def cnn():
    """The bundled CNN, compiled (input x: 32x1x8x8, output probs)."""
    return dfg.compile("example:cnn")


def cnn_input(seed):
    """A distinct input of the bundled CNN for each seed."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((32, 1, 8, 8)).astype(np.float32)
