#!/usr/bin/python3
"""Checks an int8 corpus folder made by quantize_qdq.py against what the quantizer promises.

Per model of manifest.json: the file's sha256; onnx.checker (full check); the graph input and
output are float, the input read by a QuantizeLinear only and the output made by a
DequantizeLinear; every QuantizeLinear's output is read by one DequantizeLinear with the same
scale and zero point; every scale is a finite float32 > 0 and every zero point an int8 (the
activations' per tensor); every Conv / Gemm / MatMul weight is a DequantizeLinear of an int8
initializer, per channel along the quantizer's axis, zero points 0, values in [-127, 127]; every
bias a DequantizeLinear of an int32 initializer with zero point 0 and scale exactly
s_input * s_weight[c] in float32; every float data input of a quantized operator is a
DequantizeLinear's output (int64 shape arithmetic is left alone); no Relu or Clip reads an
operator that absorbs them; the input and onnxruntime's output .npy match their manifest
records. Prints one line per model and exits 1
on the first model that fails a check (naming the node and field), 2 on a missing folder.

  /usr/bin/python3 scripts/corpus/check_int8.py DIR [--models a,b]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quantize_qdq import ABSORBING_OPS, OWN_RANGE_OPS, SHARED_OPS  # noqa: E402


class CheckError(Exception):
    pass


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckError(message)


def check_model(path: Path) -> dict:
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    graph = model.graph
    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {vi.name: vi.type.tensor_type.elem_type for vi in
             list(inferred.graph.value_info) + list(inferred.graph.output) + list(inferred.graph.input)}
    types.update({name: onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype] for name, a in inits.items()})
    uses = {}
    for node in graph.node:
        for name in node.input:
            uses.setdefault(name, []).append(node)

    (graph_in,) = graph.input
    expect(graph_in.type.tensor_type.elem_type == TensorProto.FLOAT, f"graph input '{graph_in.name}' is not float")
    expect(all(n.op_type == "QuantizeLinear" for n in uses.get(graph_in.name, [])),
           f"graph input '{graph_in.name}' is read by something other than QuantizeLinear")
    for out in graph.output:
        expect(out.type.tensor_type.elem_type == TensorProto.FLOAT, f"graph output '{out.name}' is not float")
        expect(producer[out.name].op_type == "DequantizeLinear",
               f"graph output '{out.name}' is made by {producer[out.name].op_type}, not DequantizeLinear")

    def params(node: onnx.NodeProto) -> tuple[np.ndarray, np.ndarray]:
        expect(len(node.input) == 3 and all(i in inits for i in node.input[1:]),
               f"node '{node.name}' ({node.op_type}): scale / zero point are not initializers")
        scale, zero_point = inits[node.input[1]], inits[node.input[2]]
        expect(scale.dtype == np.float32 and np.isfinite(scale).all() and (scale > 0).all(),
               f"node '{node.name}' ({node.op_type}): field scale not finite float32 > 0")
        expect(scale.shape == zero_point.shape,
               f"node '{node.name}' ({node.op_type}): scale and zero point shapes differ")
        return scale, zero_point

    counts = {"pairs": 0, "weights": 0, "biases": 0}
    for node in graph.node:
        if node.op_type == "QuantizeLinear":
            scale, zero_point = params(node)
            expect(zero_point.dtype == np.int8 and scale.ndim == 0,
                   f"node '{node.name}' (QuantizeLinear): field zero_point not a per-tensor int8")
            readers = uses.get(node.output[0], [])
            expect(len(readers) == 1 and readers[0].op_type == "DequantizeLinear",
                   f"node '{node.name}' (QuantizeLinear): output not read by exactly one DequantizeLinear")
            dq_scale, dq_zero = params(readers[0])
            expect(dq_scale == scale and dq_zero == zero_point,
                   f"node '{readers[0].name}' (DequantizeLinear): scale / zero point differ from its QuantizeLinear")
            counts["pairs"] += 1
        elif node.op_type == "DequantizeLinear":
            params(node)
        elif node.op_type in ("Relu", "Clip"):
            src = producer.get(node.input[0])
            expect(src is None or src.op_type not in ABSORBING_OPS,
                   f"node '{node.name}' ({node.op_type}) reads {src.op_type if src else ''} directly: not absorbed")

    def dq_of(node: onnx.NodeProto, index: int, field: str) -> onnx.NodeProto:
        name = node.input[index]
        dq = producer.get(name)
        expect(dq is not None and dq.op_type == "DequantizeLinear",
               f"node '{node.name}' ({node.op_type}): field {field} ('{name}') is not a DequantizeLinear output")
        return dq

    for node in graph.node:
        op = node.op_type
        if op in ("Conv", "Gemm") or (op == "MatMul" and producer.get(node.input[1]) is not None
                                      and producer[node.input[1]].input[0] in inits):
            data_dq = dq_of(node, 0, "X")
            s_in = inits[data_dq.input[1]]
            w_dq = dq_of(node, 1, "W")
            w = inits.get(w_dq.input[0])
            expect(w is not None and w.dtype == np.int8, f"node '{node.name}' ({op}): field W not an int8 initializer")
            expect(np.abs(w.astype(np.int32)).max(initial=0) <= 127, f"node '{node.name}' ({op}): field W holds -128")
            axis = next((a.i for a in w_dq.attribute if a.name == "axis"), 1)
            if op == "Conv":
                want = 0
            elif op == "Gemm":
                want = 0 if next((a.i for a in node.attribute if a.name == "transB"), 0) else 1
            else:
                want = w.ndim - 1
            s_w, z_w = inits[w_dq.input[1]], inits[w_dq.input[2]]
            expect(axis == want and s_w.shape == (w.shape[want],),
                   f"node '{node.name}' ({op}): field W not per channel along axis {want}")
            expect(z_w.dtype == np.int8 and not z_w.any(), f"node '{node.name}' ({op}): field W zero points not int8 0")
            counts["weights"] += 1
            if len(node.input) > 2 and node.input[2]:
                b_dq = dq_of(node, 2, "B")
                b = inits.get(b_dq.input[0])
                expect(b is not None and b.dtype == np.int32,
                       f"node '{node.name}' ({op}): field B not an int32 initializer")
                s_b, z_b = inits[b_dq.input[1]], inits[b_dq.input[2]]
                expect(z_b.dtype == np.int32 and not z_b.any(), f"node '{node.name}' ({op}): field B zero points not 0")
                expect(np.array_equal(s_b, (np.float32(s_in) * s_w).astype(np.float32)),
                       f"node '{node.name}' ({op}): field B scale is not s_input * s_weight")
                counts["biases"] += 1
        elif (op in OWN_RANGE_OPS or op in SHARED_OPS) and all(
                types.get(name) == TensorProto.FLOAT for name in [node.input[0], *node.output]):
            data = node.input[:1] if op in SHARED_OPS else [i for i in node.input if i]
            for i, name in enumerate(data):
                src = producer.get(name)
                if op in SHARED_OPS and (src is None or src.op_type != "DequantizeLinear"):
                    continue  # a shared op over a float input stays float
                dq_of(node, i, f"input {i}")
    return counts


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--models", help="comma-separated corpus names (default: all in the manifest)")
    args = parser.parse_args(argv)
    try:
        manifest = json.loads((args.dir / "manifest.json").read_text())
    except (OSError, ValueError) as e:
        print(f"check_int8.py: {args.dir / 'manifest.json'}: {e}", file=sys.stderr)
        return 2
    names = args.models.split(",") if args.models else list(manifest["models"])
    for name in names:
        entry = manifest["models"].get(name)
        try:
            expect(entry is not None, "not in manifest.json")
            for record in (entry["file"], entry["input"], entry["ort_output"]):
                expect(sha256_of(args.dir / record["file"]) == record["sha256"], f"{record['file']}: sha256 differs")
            x, y = np.load(args.dir / entry["input"]["file"]), np.load(args.dir / entry["ort_output"]["file"])
            expect(x.dtype == np.float32 and list(x.shape) == entry["input_shape"], "input .npy shape / dtype")
            expect(y.dtype == np.float32 and list(y.shape) == entry["output_shape"], "ort output .npy shape / dtype")
            counts = check_model(args.dir / entry["file"]["file"])
        except (CheckError, onnx.checker.ValidationError, OSError) as e:
            print(f"{name}: FAILED: {e}", file=sys.stderr)
            return 1
        print(f"{name}: ok ({counts['pairs']} Q/DQ pairs, {counts['weights']} int8 weights, "
              f"{counts['biases']} int32 biases)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
