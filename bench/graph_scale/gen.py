#!/usr/bin/python3
"""bench/graph_scale/gen.py KIND NODES OUT.onnx

Writes a synthetic ONNX model of about NODES nodes on a [1, 64] float
input, to time dfg's passes on huge graphs (issue 34):

  chain  NODES nodes in a line, alternately Relu(h) and Add(h, bias)
         (one shared bias): every value dies at the next step.
  fan    the input feeds NODES/2 Relu nodes, whose outputs a balanced
         tree of Add nodes sums (NODES/2 - 1 of them): a graph NODES/2
         wide, where the order chosen decides how many branches are live.
  fusing NODES nodes in a line, alternately x * sigmoid(x) (2 nodes) and
         the erf GELU (5 nodes), each of which the fusion passes make one
         step: NODES / 3.5 fusions, for the passes' cost per fusion.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

SHAPE = [1, 64]


def chain(n):
    nodes, h = [], "x"
    for i in range(n):
        out = f"h{i}"
        if i % 2 == 0:
            nodes.append(helper.make_node("Relu", [h], [out], name=f"n{i}"))
        else:
            nodes.append(helper.make_node("Add", [h, "bias"], [out],
                                          name=f"n{i}"))
        h = out
    bias = helper.make_tensor("bias", TensorProto.FLOAT, SHAPE,
                              np.full(SHAPE, 0.01, np.float32).ravel())
    return nodes, h, [bias]


def fan(n):
    width = max(2, n // 2)
    nodes = [helper.make_node("Relu", ["x"], [f"b{i}"], name=f"b{i}")
             for i in range(width)]
    level, k = [f"b{i}" for i in range(width)], 0
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level) - 1, 2):
            out = f"s{k}"
            nodes.append(helper.make_node("Add", [level[i], level[i + 1]],
                                          [out], name=out))
            nxt.append(out)
            k += 1
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return nodes, level[0], []


def fusing(n):
    nodes = []

    def node(op, inputs):
        out = f"v{len(nodes)}"
        nodes.append(helper.make_node(op, inputs, [out], name=f"n{len(nodes)}"))
        return out

    h, k = "x", 0
    while len(nodes) < n:
        if k % 2 == 0:
            h = node("Mul", [h, node("Sigmoid", [h])])
        else:
            erf = node("Erf", [node("Div", [h, "sqrt2"])])
            h = node("Mul", [node("Mul", [h, node("Add", [erf, "one"])]),
                             "half"])
        k += 1
    scalars = [helper.make_tensor(name, TensorProto.FLOAT, [], [value])
               for name, value in (("sqrt2", 2.0 ** 0.5), ("one", 1.0),
                                   ("half", 0.5))]
    return nodes, h, scalars


KINDS = {"chain": chain, "fan": fan, "fusing": fusing}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in KINDS:
        sys.exit(__doc__)
    kind, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    nodes, last, inits = KINDS[kind](n)
    graph = helper.make_graph(
        nodes, f"{kind}{n}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info(last, TensorProto.FLOAT, SHAPE)],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)


if __name__ == "__main__":
    main()
