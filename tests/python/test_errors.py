"""Errors in a Python caller's words (python/dfg/errors.py): Python
arguments, not dfgc flags or C function names."""
import pytest

import dfg
from conftest import tiny_onnx
from dfg.errors import in_python_words


def test_unbound_dimension_names_the_shapes_argument():
    with pytest.raises(dfg.Error) as caught:
        dfg.compile(tiny_onnx())
    message = str(caught.value)
    assert "shapes={'batch': N}" in message
    assert "shapes={'features': (DIMS, ...)}" in message
    assert "--" not in message


def test_flags_become_arguments():
    assert in_python_words("alignment 8 is below the 16 bytes it runs "
                           "(--align 16 or more)") == \
        "alignment 8 is below the 16 bytes it runs (alignment=16 or more)"
    const = in_python_words("must be computable at import time. A graph "
                            "input can be made a constant (dfgc --const "
                            "shape=FILE, dfg_onnx_options.frozen_inputs)")
    assert "not in this version of the Python API" in const
    assert "dfg_onnx_options" not in const
    assert in_python_words("saving the program: dfg_program_save: cannot "
                           "write") == "saving the program: cannot write"
