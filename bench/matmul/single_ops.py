#!/usr/bin/python3
"""Writes one-node ONNX models of the matrix products the benchmark models
spend their time in, for bench/matmul/run.sh.

usage: single_ops.py OUT_DIR
Prints the names written, one a line. B is a weight (an initializer)
unless the name says "activations"; seeded, so every run writes the same
bytes.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name: (op, A's shape, B's shape, B a weight, gemm transB, gemm C length)
PRODUCTS = {
    "bert_qkv": ("MatMul", [1, 128, 768], [768, 2304], True, 0, 0),
    "bert_out": ("MatMul", [1, 128, 768], [768, 768], True, 0, 0),
    "bert_ffn1": ("MatMul", [1, 128, 768], [768, 3072], True, 0, 0),
    "bert_ffn2": ("MatMul", [1, 128, 3072], [3072, 768], True, 0, 0),
    "bert_qk_activations": ("MatMul", [1, 12, 128, 64], [1, 12, 64, 128],
                            False, 0, 0),
    "vit_pv_activations": ("MatMul", [1, 12, 197, 197], [1, 12, 197, 64],
                           False, 0, 0),
    "vit_out_gemm": ("Gemm", [197, 768], [768, 768], True, 1, 768),
    "resnet50_fc_gemm": ("Gemm", [1, 2048], [1000, 2048], True, 1, 1000),
    "mobilenet_v3_fc_gemm": ("Gemm", [1, 576], [1024, 576], True, 1, 1024),
}


def write(out_dir, name, spec, rng):
    op, a_shape, b_shape, weight, trans_b, c_length = spec
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                            a_shape)]
    initializers = []
    if weight:
        initializers.append(numpy_helper.from_array(
            rng.standard_normal(b_shape).astype(np.float32), "B"))
    else:
        inputs.append(helper.make_tensor_value_info("B", TensorProto.FLOAT,
                                                    b_shape))
    names = ["input", "B"]
    if c_length:
        initializers.append(numpy_helper.from_array(
            rng.standard_normal([c_length]).astype(np.float32), "C"))
        names.append("C")
    attrs = {"transB": trans_b} if op == "Gemm" else {}
    node = helper.make_node(op, names, ["output"], **attrs)
    graph = helper.make_graph(
        [node], name, inputs,
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)],
        initializers)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(out_dir, name + ".onnx"))


def main(argv):
    out_dir = argv[1]
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(11)
    for name, spec in PRODUCTS.items():
        write(out_dir, name, spec, rng)
        print(name)


if __name__ == "__main__":
    main(sys.argv)
