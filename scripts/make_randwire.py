#!/usr/bin/python3
"""Randomly wired networks (Xie et al., "Exploring Randomly Wired Neural Networks", 2019) as
ONNX models: the irregular graphs on which memory-aware ordering papers (Serenity, HMCOS)
measure their gains. Used by bench/fit/schedule_bench.cpp and the schedule tests.

Each stage is a random undirected graph (Watts-Strogatz WS(n, k, p) or Erdos-Renyi ER(n, p))
made a DAG by pointing every edge from the lower to the higher node index. A node adds its
inputs (Add) or concatenates them (Concat), then applies ReLU and a 3x3 Conv back to the
stage's channels; nodes without inputs read the stage input (with stride 2 from the second
stage on), and the nodes without outputs are joined into the stage output the same way.
A stem Conv precedes the stages; GlobalAveragePool, Flatten and Gemm follow them.

    make_randwire.py --out DIR [--graph ws|er] [--nodes 32] [--k 4] [--p 0.75]
                     [--stages 2] [--channels 16] [--size 64] [--concat 0.5] [--seeds 1,2,3]

writes DIR/randwire_<graph>_n<nodes>_s<seed>.onnx per seed and prints each path.
"""
import argparse
import os
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def watts_strogatz(n, k, p, rng):
    """Ring lattice of n nodes, each joined to its k nearest neighbours, each edge rewired
    with probability p (as networkx.watts_strogatz_graph)."""
    edges = set()
    for i in range(n):
        for j in range(1, k // 2 + 1):
            edges.add((i, (i + j) % n))
    result = set()
    for (a, b) in sorted(edges):
        if rng.random() < p:
            choices = [c for c in range(n) if c != a and (a, c) not in result and (c, a) not in result]
            if choices:
                b = rng.choice(choices)
        result.add((a, b))
    return {(min(a, b), max(a, b)) for (a, b) in result if a != b}


def erdos_renyi(n, p, rng):
    return {(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < p}


class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.inits = [], []
        self.count = 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def conv(self, x, cin, cout, kernel=3, stride=1):
        w = self.name("w")
        scale = 1.0 / np.sqrt(cin * kernel * kernel)
        self.inits.append(numpy_helper.from_array(
            (np.random.default_rng(self.count).standard_normal((cout, cin, kernel, kernel)) * scale).astype(np.float32),
            w))
        y = self.name("conv")
        self.nodes.append(helper.make_node("Conv", [x, w], [y], name=y, kernel_shape=[kernel, kernel],
                                           pads=[kernel // 2] * 4, strides=[stride, stride]))
        return y

    def op(self, op, inputs, **attrs):
        y = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [y], name=y, **attrs))
        return y

    def join(self, inputs, channels, concat):
        """Adds the inputs or concatenates them; returns the value and its channels."""
        if len(inputs) == 1:
            return inputs[0], channels
        if concat:
            return self.op("Concat", inputs, axis=1), channels * len(inputs)
        x = inputs[0]
        for other in inputs[1:]:
            x = self.op("Add", [x, other])
        return x, channels


def stage(b, x, cin, channels, edges, n, stride, concat_share):
    preds = {i: sorted(a for (a, c) in edges if c == i) for i in range(n)}
    succs = {i: sorted(c for (a, c) in edges if a == i) for i in range(n)}
    out = {}
    for i in range(n):
        if preds[i]:
            joined, c = b.join([out[j] for j in preds[i]], channels, b.rng.random() < concat_share)
            out[i] = b.conv(b.op("Relu", [joined]), c, channels)
        else:
            out[i] = b.conv(b.op("Relu", [x]), cin, channels, stride=stride)
    sinks = [out[i] for i in range(n) if not succs[i]]
    joined, c = b.join(sinks, channels, b.rng.random() < concat_share)
    if c != channels:
        joined = b.conv(joined, c, channels, kernel=1)
    return joined


def make_model(graph, nodes, k, p, stages, channels, size, concat_share, seed):
    rng = random.Random(seed)
    b = Builder(rng)
    x = b.conv("input", 3, channels, stride=2)
    cin = channels
    for s in range(stages):
        edges = watts_strogatz(nodes, k, p, rng) if graph == "ws" else erdos_renyi(nodes, p, rng)
        c = channels * (2 ** s)
        x = stage(b, x, cin, c, edges, nodes, 1 if s == 0 else 2, concat_share)
        cin = c
    pooled = b.op("GlobalAveragePool", [x])
    flat = b.op("Flatten", [pooled], axis=1)
    w = b.name("fc_w")
    b.inits.append(numpy_helper.from_array(
        (np.random.default_rng(seed).standard_normal((10, cin)) * 0.1).astype(np.float32), w))
    b.nodes.append(helper.make_node("Gemm", [flat, w], ["output"], name="fc", transB=1))
    g = helper.make_graph(b.nodes, f"randwire_{graph}_n{nodes}_s{seed}",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, size, size])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 10])], b.inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_randwire.py")
    onnx.checker.check_model(model)
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--graph", choices=["ws", "er"], default="ws")
    ap.add_argument("--nodes", type=int, default=32)
    ap.add_argument("--k", type=int, default=4, help="WS: neighbours on the ring")
    ap.add_argument("--p", type=float, default=0.75, help="WS: rewiring probability; ER: edge probability")
    ap.add_argument("--stages", type=int, default=2)
    ap.add_argument("--channels", type=int, default=16)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--concat", type=float, default=0.5, help="share of joins that concatenate")
    ap.add_argument("--seeds", default="1")
    a = ap.parse_args()
    if a.nodes < 2 or a.channels < 1 or a.size < 4 or not 0 <= a.p <= 1:
        sys.exit("make_randwire.py: --nodes >= 2, --channels >= 1, --size >= 4, 0 <= --p <= 1")
    os.makedirs(a.out, exist_ok=True)
    for seed in [int(s) for s in a.seeds.split(",")]:
        model = make_model(a.graph, a.nodes, a.k, a.p, a.stages, a.channels, a.size, a.concat, seed)
        path = os.path.join(a.out, f"randwire_{a.graph}_n{a.nodes}_s{seed}.onnx")
        onnx.save(model, path)
        print(path)


if __name__ == "__main__":
    main()
