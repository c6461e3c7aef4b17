#!/usr/bin/python3
"""Quantize the float torchvision corpus to int8 QDQ ONNX models (memledger's int8 corpus).

A static post-training quantizer in the layout onnxruntime's quantize_static writes with
QuantFormat.QDQ, per_channel=True, activation and weight type QInt8, MinMax calibration:

  weights      per-channel symmetric int8 (zero point 0, scale absmax/127, values in
               [-127, 127]); Conv along axis 0, Gemm along its output features (axis 0 with
               transB=1, else 1), MatMul along the last axis
  biases       int32, scale s_input * s_weight[c], zero point 0
  activations  per-tensor asymmetric int8: the calibrated [min, max] widened to include 0,
               scale (max - min)/255, zero point round(-128 - min/scale)
  layout       QuantizeLinear -> DequantizeLinear after every quantized activation (after the
               graph input too; a graph output is the final DequantizeLinear's output, float),
               DequantizeLinear on the int8 / int32 initializers, around Conv, Gemm, MatMul,
               Add, Mul, AveragePool, GlobalAveragePool, ReduceMean, Concat, Sigmoid,
               HardSigmoid, HardSwish (their own output ranges); MaxPool, Resize, Split, Slice
               and the shape-only Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Identity
               keep their input's parameters. A Relu, or a Clip with min 0, that is the only
               consumer of a quantized op's output is removed and that op takes its output
               range, as onnxruntime's quantizer does (QDQRemovableActivation). Other float ops
               stay float between a DequantizeLinear and a QuantizeLinear; int64 shape
               arithmetic is left alone.

Calibration runs onnxruntime-node (tests/ort/calibrate.mjs) on a copy of the float model with
every intermediate tensor added as a graph output, over N seeded N(0,1) inputs (--calibration).
onnxruntime rather than torch: its tensor names are the ONNX graph's own (torch's modules do not
map one to one onto the exported graph after BatchNorm folding and the exporter's rewrites), and
it computes the graph the quantized model is made of.

Each model is then checked with onnx.checker (full check) and run in onnxruntime-node on
--eval further seeded inputs against its float model: top-1 agreement and cosine similarity
of the outputs go into manifest.json, and onnxruntime's fused integer kernels (graph
optimisations on) against the QDQ semantics, in output LSBs. Per model the output folder gets

  <name>.int8.onnx     the QDQ model (<name> is the torchvision name, with _<side> when the
                       input is not 224 x 224: mobilenet_v2_96)
  <name>.input.npy     the float corpus's seeded input for that model (float32)
  <name>.int8.ort.npy  onnxruntime's output of the QDQ model for it (tests/ort/run_model.mjs,
                       graph optimisations off: the QDQ operators as the ONNX spec defines them)

The float models come from export_torchvision.py (run by this script, folded variant) into
--float-dir/float<side>. A model is made again only when its cache key changes: this script's
QUANTIZER_VERSION, the seed, the calibration and evaluation counts, the float model's sha256,
the onnx, numpy and onnxruntime-node versions. Run with /usr/bin/python3 (Debian's onnx, numpy).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
EXPORTER = HERE / "export_torchvision.py"
# Bump when an edit changes the bytes of a model this script already writes.
QUANTIZER_VERSION = 1
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1
# What the test command builds (cmake's corpus-int8 target); --all adds the rest.
CI_MODELS = ["mobilenet_v2", "mobilenet_v2@96", "mobilenet_v3_small", "resnet18", "efficientnet_b0",
             "squeezenet1_1"]
ALL_MODELS = ["mobilenet_v2", "mobilenet_v2@96", "mobilenet_v2@160", "mnasnet1_0", "mobilenet_v3_small",
              "mobilenet_v3_large", "efficientnet_b0", "squeezenet1_1", "shufflenet_v2_x1_0", "resnet18",
              "googlenet"]

# Ops quantized with their own calibrated output range.
# ReduceMean is not in onnxruntime's quantizer's list: mnasnet and shufflenet end in a mean over
# H and W (GlobalAveragePool + Flatten), which would otherwise leave a float activation buffer.
OWN_RANGE_OPS = {"Conv", "Gemm", "MatMul", "Add", "Mul", "AveragePool", "GlobalAveragePool", "ReduceMean", "Concat",
                 "Sigmoid", "HardSigmoid", "HardSwish"}
# Ops whose outputs keep their (first) input's parameters; only their first input is data.
# Slice: shufflenet's channel split (x.chunk) exports as Slice.
SHARED_OPS = {"MaxPool", "Resize", "Split", "Slice", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze",
              "Identity"}
# Relu / Clip(min 0) directly after one of these are absorbed into its output range.
ABSORBING_OPS = OWN_RANGE_OPS
QMIN, QMAX = -128, 127


class QuantizeError(Exception):
    """A model this quantizer cannot write, with the reason (names the node and field)."""


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def npy_bytes(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def parse_spec(spec: str) -> tuple[str, int]:
    """'mobilenet_v2' or 'mobilenet_v2@96' -> (torchvision name, input side)."""
    name, _, side = spec.partition("@")
    if not name or (side and not side.isdigit()):
        raise ValueError(f"model '{spec}': expected NAME or NAME@SIDE")
    side_n = int(side) if side else 224
    if not 16 <= side_n <= 4096:
        raise ValueError(f"model '{spec}': input side {side_n}, expected 16 to 4096")
    return name, side_n


def corpus_name(name: str, side: int) -> str:
    return name if side == 224 else f"{name}_{side}"


def seeded_input(seed: int, stream: str, index: int, shape: list[int]) -> np.ndarray:
    """Seeded N(0,1) float32 input, one stream per purpose and model, like the float corpus's."""
    return np.random.default_rng([seed, zlib.crc32(stream.encode()), index]).standard_normal(shape, dtype=np.float32)


def ort_version(ort_dir: Path) -> str:
    package = ort_dir / "node_modules" / "onnxruntime-node" / "package.json"
    try:
        return json.loads(package.read_text())["version"]
    except (OSError, ValueError, KeyError) as e:
        raise SystemExit(f"quantize_qdq.py: no onnxruntime-node in {package.parent} ({e}); "
                         f"run 'cd {ort_dir} && npm ci --ignore-scripts --no-audit --no-fund'") from e


# --- the float models ---------------------------------------------------------------------

def export_float(float_dir: Path, names: list[str], side: int, seed: int) -> dict:
    """Runs export_torchvision.py (folded variant; it caches) and returns its manifest."""
    out = float_dir / f"float{side}"
    cmd = [sys.executable, str(EXPORTER), "--out", str(out), "--models", ",".join(names), "--seed", str(seed),
           "--variants", "folded"]
    if side != 224:
        cmd += ["--input-side", str(side)]
    subprocess.run(cmd, check=True)
    manifest = json.loads((out / "manifest.json").read_text())
    missing = [n for n in names if n not in manifest["models"]]
    if missing:
        raise SystemExit(f"quantize_qdq.py: export_torchvision.py did not export {','.join(missing)} into {out}")
    return manifest


# --- calibration --------------------------------------------------------------------------

def with_all_outputs(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of the model whose graph outputs are every float tensor a node makes."""
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {vi.name: vi.type.tensor_type.elem_type for vi in
             list(inferred.graph.value_info) + list(inferred.graph.output) + list(inferred.graph.input)}
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    present = {o.name for o in copy.graph.output}
    for node in copy.graph.node:
        if node.op_type == "Constant":
            continue
        for name in node.output:
            if name and name not in present and types.get(name) == TensorProto.FLOAT:
                copy.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
                present.add(name)
    return copy


def node_run(script: str, args: list[str], ort_dir: Path, node: str) -> None:
    env = dict(os.environ, NODE_PATH=str(ort_dir / "node_modules"))
    result = subprocess.run([node, str(ort_dir / script), *args], env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{script} failed ({result.returncode}): {result.stderr.strip()[-2000:]}")


def calibrate(model: onnx.ModelProto, inputs: list[np.ndarray], tmp: Path, ort_dir: Path, node: str) -> dict:
    """Per tensor [min, max] over the inputs (graph input included)."""
    instrumented = tmp / "calibrate.onnx"
    instrumented.write_bytes(with_all_outputs(model).SerializeToString())
    files = []
    for i, x in enumerate(inputs):
        files.append(tmp / f"calibrate.{i}.npy")
        np.save(files[-1], x)
    node_run("calibrate.mjs", [str(instrumented), str(tmp / "ranges.json"), *map(str, files)], ort_dir, node)
    ranges = json.loads((tmp / "ranges.json").read_text())["ranges"]
    (input_name,) = [i.name for i in model.graph.input]
    ranges[input_name] = [float(min(x.min() for x in inputs)), float(max(x.max() for x in inputs))]
    return ranges


# --- quantization parameters --------------------------------------------------------------

def activation_params(lo: float, hi: float) -> tuple[np.float32, int]:
    """onnxruntime's asymmetric int8 parameters for a calibrated range (widened to hold 0)."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi == lo:
        return np.float32(1.0), 0
    scale = np.float32((hi - lo) / (QMAX - QMIN))
    zero_point = int(np.clip(np.round(QMIN - lo / float(scale)), QMIN, QMAX))
    return scale, zero_point


def weight_per_channel(w: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per channel along axis: scale absmax/127 (1 for an all-zero channel)."""
    moved = np.moveaxis(w.astype(np.float32), axis, 0).reshape(w.shape[axis], -1)
    absmax = np.abs(moved).max(axis=1) if moved.shape[1] else np.zeros(w.shape[axis], np.float32)
    scale = (absmax / np.float32(127)).astype(np.float32)
    scale[scale == 0] = 1.0
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w.astype(np.float32) / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale


def weight_per_tensor(w: np.ndarray) -> tuple[np.ndarray, np.float32]:
    absmax = float(np.abs(w).max()) if w.size else 0.0
    scale = np.float32(absmax / 127 if absmax else 1.0)
    return np.clip(np.round(w.astype(np.float32) / scale), -127, 127).astype(np.int8), scale


# --- the QDQ rewrite ----------------------------------------------------------------------

class QdqWriter:
    """Rewrites a float model into QDQ form (see the module docstring for the layout)."""

    def __init__(self, model: onnx.ModelProto, ranges: dict):
        self.model = model
        self.graph = model.graph
        self.ranges = ranges
        self.consts = {t.name: numpy_helper.to_array(t) for t in self.graph.initializer}
        # Constant nodes, and the Identity nodes the exporter writes where it merged identical
        # initializers (a bias of one layer is an Identity of another's): constants too.
        self.const_nodes = set()
        for node in self.graph.node:
            if node.op_type == "Constant":
                attr = {a.name: a for a in node.attribute}
                if "value" in attr:
                    self.consts[node.output[0]] = numpy_helper.to_array(attr["value"].t)
                    self.const_nodes.add(node.output[0])
            elif node.op_type == "Identity" and node.input[0] in self.consts:
                self.consts[node.output[0]] = self.consts[node.input[0]]
                self.const_nodes.add(node.output[0])
        self.graph_outputs = {o.name for o in self.graph.output}
        inferred = onnx.shape_inference.infer_shapes(model)
        self.types = {vi.name: vi.type.tensor_type.elem_type for vi in list(inferred.graph.value_info) +
                      list(inferred.graph.output) + list(inferred.graph.input)}
        self.types.update({name: onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype] for name, a in self.consts.items()})
        self.new_inits: list[TensorProto] = []
        self.names: set[str] = set(self.consts) | {o for n in self.graph.node for o in n.output}
        self.stats = {"absorbed": {}, "weights": [], "biases": 0, "activations": {}, "float_ops": {},
                      "quantized_ops": {}, "shape_ops": {}, "shared": 0}

    def unique(self, name: str) -> str:
        candidate, i = name, 1
        while candidate in self.names:
            candidate, i = f"{name}_{i}", i + 1
        self.names.add(candidate)
        return candidate

    def initializer(self, name: str, array: np.ndarray) -> str:
        name = self.unique(name)
        self.new_inits.append(numpy_helper.from_array(array, name))
        return name

    def consumers(self) -> dict:
        uses = {}
        for node in self.graph.node:
            for name in node.input:
                uses.setdefault(name, []).append(node)
        return uses

    def range_of(self, tensor: str, node: onnx.NodeProto) -> tuple[float, float]:
        if tensor not in self.ranges:
            raise QuantizeError(f"node '{node.name}' ({node.op_type}): no calibrated range for tensor '{tensor}'")
        lo, hi = self.ranges[tensor]
        return float(lo), float(hi)

    def absorb_activations(self) -> None:
        """Removes a Relu / Clip(min 0) that is the only consumer of an absorbing op's output."""
        producers = {o: n for n in self.graph.node for o in n.output}
        uses = self.consumers()
        keep = []
        for node in self.graph.node:
            if node.op_type in ("Relu", "Clip"):
                src = node.input[0]
                producer = producers.get(src)
                clip_min = 0.0
                if node.op_type == "Clip":
                    clip_min = None
                    if len(node.input) > 1 and node.input[1]:
                        value = self.consts.get(node.input[1])
                        clip_min = float(value) if value is not None and value.size == 1 else None
                    else:
                        clip_min = float("-inf")
                if (clip_min == 0.0 and producer is not None and producer.op_type in ABSORBING_OPS
                        and len(uses.get(src, [])) == 1 and src not in self.graph_outputs):
                    producer.output[list(producer.output).index(src)] = node.output[0]
                    producers[node.output[0]] = producer
                    self.stats["absorbed"][node.op_type] = self.stats["absorbed"].get(node.op_type, 0) + 1
                    continue
            keep.append(node)
        del self.graph.node[:]
        self.graph.node.extend(keep)

    def weight_axis(self, node: onnx.NodeProto, w: np.ndarray) -> int:
        if node.op_type == "Conv":
            return 0
        if node.op_type == "Gemm":
            trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
            return 0 if trans_b else 1
        return w.ndim - 1  # MatMul: [.., K, N], per output feature N

    def dequantized_weight(self, node: onnx.NodeProto, name: str) -> tuple[str, np.ndarray]:
        w = self.consts[name]
        if w.dtype != np.float32:
            raise QuantizeError(f"node '{node.name}' ({node.op_type}): weight '{name}' is {w.dtype}, not float32")
        axis = self.weight_axis(node, w)
        q, scale = weight_per_channel(w, axis)
        q_name = self.initializer(f"{name}_quantized", q)
        s_name = self.initializer(f"{name}_scale", scale)
        z_name = self.initializer(f"{name}_zero_point", np.zeros(scale.shape, np.int8))
        out = self.unique(f"{name}_DequantizeLinear_Output")
        self.dq_nodes.append(helper.make_node("DequantizeLinear", [q_name, s_name, z_name], [out],
                                              name=self.unique(f"{name}_DequantizeLinear"), axis=axis))
        self.stats["weights"].append(scale)
        return out, scale

    def dequantized_bias(self, node: onnx.NodeProto, name: str, s_in: np.float32, s_w: np.ndarray) -> str:
        b = self.consts[name].astype(np.float32)
        if b.ndim != 1 or b.shape[0] != s_w.shape[0]:
            raise QuantizeError(f"node '{node.name}' ({node.op_type}): bias '{name}' has shape {list(b.shape)}, "
                                f"expected [{s_w.shape[0]}]")
        scale = (np.float32(s_in) * s_w).astype(np.float32)
        q = np.round(b / scale)
        if np.abs(q).max(initial=0) > 2**31 - 1:
            raise QuantizeError(f"node '{node.name}' ({node.op_type}): bias '{name}' overflows int32 at scale "
                                f"s_input * s_weight (max |q| {np.abs(q).max():.3g})")
        q_name = self.initializer(f"{name}_quantized", q.astype(np.int32))
        s_name = self.initializer(f"{name}_quantized_scale", scale)
        z_name = self.initializer(f"{name}_quantized_zero_point", np.zeros(scale.shape, np.int32))
        out = self.unique(f"{name}_quantized_DequantizeLinear_Output")
        self.dq_nodes.append(helper.make_node("DequantizeLinear", [q_name, s_name, z_name], [out],
                                              name=self.unique(f"{name}_quantized_DequantizeLinear"), axis=0))
        self.stats["biases"] += 1
        return out

    def dequantized_constant(self, node: onnx.NodeProto, name: str) -> str:
        """A constant operand of Add / Mul / Concat: per-tensor symmetric int8."""
        q, scale = weight_per_tensor(self.consts[name])
        q_name = self.initializer(f"{name}_quantized", q)
        s_name = self.initializer(f"{name}_scale", scale)
        z_name = self.initializer(f"{name}_zero_point", np.int8(0))
        out = self.unique(f"{name}_DequantizeLinear_Output")
        self.dq_nodes.append(helper.make_node("DequantizeLinear", [q_name, s_name, z_name], [out],
                                              name=self.unique(f"{name}_DequantizeLinear")))
        return out

    def is_float(self, node: onnx.NodeProto) -> bool:
        """Whether the node's data input and its outputs are float tensors."""
        names = [node.input[0]] if node.input else []
        names += [o for o in node.output if o]
        return all(self.types.get(name) == TensorProto.FLOAT for name in names)

    def own_params(self, tensor: str, node: onnx.NodeProto) -> tuple:
        return (*activation_params(*self.range_of(tensor, node)), tensor)

    def run(self) -> onnx.ModelProto:
        self.absorb_activations()
        # Activation tensor -> (scale, zero point, the tensor whose scale / zero-point initializers
        # it uses: its own, or for a shared op's output its input's).
        params: dict[str, tuple] = {}
        self.dq_nodes: list[onnx.NodeProto] = []
        quantized_nodes = set()
        # One pass in topological order (the exporter's order): a shared op follows its input's
        # parameters only when that input is already quantized, as onnxruntime's quantizer does.
        for index, node in enumerate(self.graph.node):
            op = node.op_type
            if not self.is_float(node):
                continue  # shape arithmetic (shufflenet's split sizes: Shape, Gather, Add on int64)
            if op in OWN_RANGE_OPS:
                weighted = op in ("Conv", "Gemm") or (op == "MatMul" and node.input[1] in self.consts)
                if weighted:
                    data, weight = node.input[0], node.input[1]
                    if data in self.consts or weight not in self.consts:
                        raise QuantizeError(f"node '{node.name}' ({op}): expected an activation input and a "
                                            f"constant weight, got '{data}' and '{weight}'")
                    if op == "Gemm":
                        attrs = {a.name: a.f for a in node.attribute if a.name in ("alpha", "beta")}
                        if attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0:
                            raise QuantizeError(f"node '{node.name}' (Gemm): alpha/beta other than 1")
                        if next((a.i for a in node.attribute if a.name == "transA"), 0):
                            raise QuantizeError(f"node '{node.name}' (Gemm): transA=1")
                    params.setdefault(data, self.own_params(data, node))
                    w_out, s_w = self.dequantized_weight(node, weight)
                    node.input[1] = w_out
                    if len(node.input) > 2 and node.input[2]:
                        if node.input[2] not in self.consts:
                            raise QuantizeError(f"node '{node.name}' ({op}): bias '{node.input[2]}' is not a constant")
                        node.input[2] = self.dequantized_bias(node, node.input[2], params[data][0], s_w)
                else:
                    for i, name in enumerate(node.input):
                        if name in self.consts:
                            node.input[i] = self.dequantized_constant(node, name)
                        elif name:
                            params.setdefault(name, self.own_params(name, node))
                for out in node.output:
                    params[out] = self.own_params(out, node)
                quantized_nodes.add(index)
            elif op in SHARED_OPS and node.input[0] in params and node.output[0] not in self.const_nodes:
                for out in node.output:
                    params[out] = params[node.input[0]]
                quantized_nodes.add(index)
        for index, node in enumerate(self.graph.node):
            if node.output[0] in self.const_nodes:
                continue
            bucket = ("quantized_ops" if index in quantized_nodes else
                      "float_ops" if self.is_float(node) else "shape_ops")
            self.stats[bucket][node.op_type] = self.stats[bucket].get(node.op_type, 0) + 1
        return self.insert_pairs(params)

    def insert_pairs(self, params: dict) -> onnx.ModelProto:
        """QuantizeLinear -> DequantizeLinear after every quantized activation; every consumer
        reads the DequantizeLinear's output, a graph output is it."""
        graph = self.graph
        (graph_input,) = [i.name for i in graph.input]
        pairs_after: dict[int, list] = {}  # node index -> pairs after it (-1: graph input)
        producer_index = {o: i for i, n in enumerate(graph.node) for o in n.output}
        renamed = {}
        param_names = {}  # owner tensor -> its scale and zero-point initializers
        for tensor, (scale, zero_point, owner) in params.items():
            if owner not in param_names:
                param_names[owner] = (self.initializer(f"{owner}_scale", np.float32(scale)),
                                      self.initializer(f"{owner}_zero_point", np.int8(zero_point)))
            s_name, z_name = param_names[owner]
            q_in = tensor
            if tensor in self.graph_outputs:
                q_in = self.unique(f"{tensor}_QuantizeLinear_Input")
                producer = graph.node[producer_index[tensor]]
                producer.output[list(producer.output).index(tensor)] = q_in
            q_out = self.unique(f"{tensor}_QuantizeLinear_Output")
            dq_out = tensor if tensor in self.graph_outputs else self.unique(f"{tensor}_DequantizeLinear_Output")
            pair = [helper.make_node("QuantizeLinear", [q_in, s_name, z_name], [q_out],
                                     name=self.unique(f"{tensor}_QuantizeLinear")),
                    helper.make_node("DequantizeLinear", [q_out, s_name, z_name], [dq_out],
                                     name=self.unique(f"{tensor}_DequantizeLinear"))]
            where = -1 if tensor == graph_input else producer_index[tensor]
            pairs_after.setdefault(where, []).extend(pair)
            if tensor not in self.graph_outputs:
                renamed[tensor] = dq_out
            self.stats["activations"][tensor] = {"scale": float(scale), "zero_point": int(zero_point)}
            self.stats["shared"] += owner != tensor
        nodes = list(self.dq_nodes) + pairs_after.get(-1, [])
        for i, node in enumerate(graph.node):
            nodes.append(node)
            nodes.extend(pairs_after.get(i, []))
        for node in nodes:
            if node.op_type == "QuantizeLinear":
                continue
            for j, name in enumerate(node.input):
                if name in renamed:
                    node.input[j] = renamed[name]
        # Drop what nothing reads any more: the float weights, the absorbed Clips' bounds and the
        # Identity nodes of weights (backwards, so an Identity's source goes when it does).
        used = set(self.graph_outputs)
        kept = []
        for n in reversed(nodes):
            if n.output[0] in self.const_nodes and n.output[0] not in used:
                continue
            kept.append(n)
            used.update(n.input)
        nodes = kept[::-1]
        del graph.node[:]
        graph.node.extend(nodes)
        inits = [t for t in graph.initializer if t.name in used] + [t for t in self.new_inits if t.name in used]
        del graph.initializer[:]
        graph.initializer.extend(inits)
        del graph.value_info[:]
        self.model.producer_name = "memledger quantize_qdq.py"
        self.model.producer_version = str(QUANTIZER_VERSION)
        return self.model


# --- evaluation ---------------------------------------------------------------------------

def run_outputs(model_path: Path, inputs: list[np.ndarray], tmp: Path, ort_dir: Path, node: str,
                tag: str) -> list[np.ndarray]:
    """The model's first output in onnxruntime for each input (calibrate.mjs --save)."""
    files = []
    for i, x in enumerate(inputs):
        files.append(tmp / f"{tag}.in.{i}.npy")
        np.save(files[-1], x)
    save = tmp / f"{tag}.out"
    node_run("calibrate.mjs", [str(model_path), str(tmp / f"{tag}.json"), *map(str, files), "--save", str(save)],
             ort_dir, node)
    output = onnx.load(str(model_path), load_external_data=False).graph.output[0].name
    return [np.load(save / f"{i}.{safe(output)}.npy") for i in range(len(inputs))]


def safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def compare(floats: list[np.ndarray], ints: list[np.ndarray]) -> dict:
    cosines, agree, max_abs, margins, ties = [], 0, 0.0, [], 0
    for f, q in zip(floats, ints):
        f64, q64 = f.astype(np.float64).ravel(), q.astype(np.float64).ravel()
        top2 = np.sort(f64)[-2:] if f64.size > 1 else np.zeros(2)
        margins.append(float(top2[1] - top2[0]))
        ties = max(ties, int((q64 == q64.max()).sum()))
        denom = np.linalg.norm(f64) * np.linalg.norm(q64)
        cosines.append(float(f64 @ q64 / denom) if denom else 0.0)
        agree += int(np.argmax(f64) == np.argmax(q64))
        max_abs = max(max_abs, float(np.abs(f64 - q64).max()))
    return {"inputs": len(floats), "top1_agreement": agree, "top1_agreement_rate": round(agree / len(floats), 4),
            "cosine_mean": round(float(np.mean(cosines)), 6), "cosine_min": round(float(np.min(cosines)), 6),
            "max_abs_difference": max_abs,
            # The float output's gap between its two largest values, smallest over the inputs:
            # a top-1 disagreement where it is below max_abs_difference is noise, not a failure.
            "float_top1_margin_min": min(margins),
            # The most outputs sharing the int8 model's largest value (argmax takes the first).
            "int8_top1_ties_max": ties,
            "max_abs_float_output": max(float(np.abs(f).max()) for f in floats)}


# --- one model ----------------------------------------------------------------------------

def quantize_model(spec: str, float_dir: Path, float_entry: dict, out: Path, key: dict, args) -> dict:
    name, side = parse_spec(spec)
    cname = corpus_name(name, side)
    started = time.monotonic()
    float_path = float_dir / f"float{side}" / f"{name}.onnx"
    model = onnx.load(str(float_path))
    shape = float_entry["input_shape"]
    seed = key["seed"]
    calibration = [seeded_input(seed, f"calibrate/{cname}", i, shape) for i in range(args.calibration)]
    evaluation = [seeded_input(seed, f"evaluate/{cname}", i, shape) for i in range(args.eval)]
    with tempfile.TemporaryDirectory(prefix=f"qdq-{cname}-") as tmp_name:
        tmp = Path(tmp_name)
        ranges = calibrate(model, calibration, tmp, args.ort_dir, args.node)
        calibrated = time.monotonic()
        writer = QdqWriter(model, ranges)
        qmodel = writer.run()
        onnx.checker.check_model(qmodel, full_check=True)
        data = qmodel.SerializeToString()
        # Everything is made and run in the temporary folder; the output folder gets the three
        # files only once all of it succeeded (no partial output).
        q_path = tmp / f"{cname}.int8.onnx"
        q_path.write_bytes(data)
        float_outputs = run_outputs(float_path, evaluation, tmp, args.ort_dir, args.node, "float")
        int8_outputs = run_outputs(q_path, evaluation, tmp, args.ort_dir, args.node, "int8")
        accuracy = compare(float_outputs, int8_outputs)
        # The corpus input and onnxruntime's output of the int8 model for it (run_model.mjs).
        x_path = tmp / f"{cname}.input.npy"
        x_path.write_bytes(npy_bytes(np.load(float_dir / f"float{side}" / float_entry["input"]["file"])))
        feed = f"{float_entry['input_name']}={x_path}"
        node_run("run_model.mjs", [str(q_path), str(tmp / "ref"), feed], args.ort_dir, args.node)
        y = np.load(tmp / "ref" / f"{safe(float_entry['output_name'])}.npy")
        y_float = np.load(float_dir / f"float{side}" / float_entry["reference_output"]["file"])
        on_input = compare([y_float], [y])
        # onnxruntime with its graph optimisations fuses DQ -> op -> Q into QLinearConv and the
        # like: how far its integer kernels are from the QDQ semantics, in output LSBs.
        node_run("run_model.mjs", [str(q_path), str(tmp / "opt"), feed, "--optimize", "--optimized-model",
                                   str(tmp / "optimized.onnx")], args.ort_dir, args.node)
        y_opt = np.load(tmp / "opt" / f"{safe(float_entry['output_name'])}.npy")
        fused = {}
        for n in onnx.load(str(tmp / "optimized.onnx"), load_external_data=False).graph.node:
            fused[n.op_type] = fused.get(n.op_type, 0) + 1
        write_atomic(out / f"{cname}.input.npy", x_path.read_bytes())
        write_atomic(out / f"{cname}.int8.ort.npy", npy_bytes(y))
        write_atomic(out / q_path.name, data)
        q_path = out / q_path.name
    counts = {}
    for node in qmodel.graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    w_scales = np.concatenate(writer.stats["weights"]) if writer.stats["weights"] else np.zeros(0)
    acts = writer.stats["activations"]
    a_scales = np.array([a["scale"] for a in acts.values()])
    out_name = float_entry["output_name"]
    lsb = np.abs(y_opt.astype(np.float64) - y.astype(np.float64)) / acts[out_name]["scale"]
    entry = {
        "key": key | {"float_sha256": float_entry["variants"][0]["sha256"], "input_side": side},
        "torchvision_name": name,
        "float_model": os.path.relpath(float_path, out),
        "input_name": float_entry["input_name"],
        "input_shape": shape,
        "output_name": out_name,
        "output_shape": float_entry["output_shape"],
        "file": {"file": q_path.name, "sha256": sha256_of(data), "bytes": len(data)},
        "input": file_record(out / f"{cname}.input.npy"),
        "ort_output": file_record(out / f"{cname}.int8.ort.npy"),
        "nodes": dict(sorted(counts.items())),
        "quantized_ops": dict(sorted(writer.stats["quantized_ops"].items())),
        "float_ops": dict(sorted(writer.stats["float_ops"].items())),
        "shape_ops": dict(sorted(writer.stats["shape_ops"].items())),
        "absorbed": writer.stats["absorbed"],
        "scales": {
            "activations": len(acts),
            "activations_sharing_their_inputs_parameters": writer.stats["shared"],
            "activation_scale_min": float(a_scales.min()), "activation_scale_max": float(a_scales.max()),
            "weights": len(writer.stats["weights"]), "weight_channels": int(w_scales.size),
            "weight_scale_min": float(w_scales.min()) if w_scales.size else None,
            "weight_scale_max": float(w_scales.max()) if w_scales.size else None,
            "int32_biases": writer.stats["biases"],
            "input": acts.get(float_entry["input_name"]),
            "output": acts.get(out_name),
        },
        # Float model against its int8 model in onnxruntime, over --eval seeded inputs (not the
        # calibration ones), and on the corpus input against torch's float output.
        "accuracy": accuracy,
        "accuracy_on_corpus_input": on_input,
        "ort_optimized_against_qdq": {"max_lsb": round(float(lsb.max()), 3),
                                      "within_1_lsb": round(float((lsb <= 1.001).mean()), 6),
                                      "equal": round(float((lsb < 0.001).mean()), 6),
                                      # The graph it ran: which groups became integer operators
                                      # (QLinearConv, QGemm, ...) and which stayed DQ -> float op -> Q.
                                      "nodes": dict(sorted(fused.items()))},
        "seconds": {"calibration": round(calibrated - started, 2), "total": round(time.monotonic() - started, 2)},
    }
    return entry


def file_record(path: Path) -> dict:
    data = path.read_bytes()
    return {"file": path.name, "sha256": sha256_of(data), "bytes": len(data)}


def is_cached(out: Path, entry: dict | None, key: dict) -> bool:
    if not entry or entry.get("key") != key:
        return False
    return all((out / f["file"]).is_file() and (out / f["file"]).stat().st_size == f["bytes"]
               for f in (entry["file"], entry["input"], entry["ort_output"]))


def load_manifest(out: Path) -> dict:
    try:
        manifest = json.loads((out / MANIFEST).read_text())
        if manifest.get("format") == MANIFEST_FORMAT:
            return manifest
    except (OSError, ValueError):
        pass
    return {"format": MANIFEST_FORMAT, "models": {}}


def save_manifest(out: Path, manifest: dict) -> None:
    manifest["models"] = dict(sorted(manifest["models"].items()))
    write_atomic(out / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--models", help="comma-separated NAME or NAME@SIDE (default: %s)" % ",".join(CI_MODELS))
    which.add_argument("--all", action="store_true", help="every model of the int8 corpus: %s" % ",".join(ALL_MODELS))
    parser.add_argument("--out", type=Path, default=Path("corpus-int8"), help="output folder (default: ./corpus-int8)")
    parser.add_argument("--float-dir", type=Path, help="folder for the float exports, float<side>/ in it "
                        "(default: <out>/float)")
    parser.add_argument("--seed", type=int, default=0, help="base seed (the float corpus's --seed; default: 0)")
    parser.add_argument("--calibration", type=int, default=8, metavar="N", help="calibration inputs (default: 8)")
    parser.add_argument("--eval", type=int, default=8, metavar="N", help="evaluation inputs (default: 8)")
    parser.add_argument("--ort-dir", type=Path, default=ROOT / "tests" / "ort",
                        help="folder with calibrate.mjs, run_model.mjs and node_modules/onnxruntime-node")
    parser.add_argument("--node", default="node", help="the Node.js executable (default: node)")
    parser.add_argument("--force", action="store_true", help="quantize even when the cached files are current")
    parser.add_argument("--list", action="store_true", help="print the models that would be made and exit")
    args = parser.parse_args(argv)
    listed = (args.models or ",".join(CI_MODELS)).split(",")
    specs = ALL_MODELS if args.all else [s.strip() for s in listed if s.strip()]
    try:
        parsed = [parse_spec(s) for s in specs]
    except ValueError as e:
        parser.error(str(e))
    if args.calibration < 1 or args.eval < 1:
        parser.error("--calibration and --eval take a count of at least 1")
    if args.list:
        print("\n".join(corpus_name(n, s) for n, s in parsed))
        return 0
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    float_dir = args.float_dir or out / "float"
    key = {"quantizer_version": QUANTIZER_VERSION, "seed": args.seed, "calibration_inputs": args.calibration,
           "eval_inputs": args.eval, "onnx": importlib.metadata.version("onnx"),
           "numpy": importlib.metadata.version("numpy"), "onnxruntime_node": ort_version(args.ort_dir)}
    manifest = load_manifest(out)
    # Entries made under another quantizer version, seed, count or library version are stale:
    # drop them and their files so the folder never mixes corpora.
    for cname, entry in list(manifest["models"].items()):
        if {k: entry.get("key", {}).get(k) for k in key} != key:
            for record in (entry.get("file"), entry.get("input"), entry.get("ort_output")):
                if isinstance(record, dict) and "file" in record:
                    (out / record["file"]).unlink(missing_ok=True)
            del manifest["models"][cname]
    float_manifests = {}
    for side in sorted({s for _, s in parsed}):
        float_manifests[side] = export_float(float_dir, [n for n, s in parsed if s == side], side, args.seed)
    todo = []
    for spec, (name, side) in zip(specs, parsed):
        fentry = float_manifests[side]["models"][name]
        mkey = key | {"float_sha256": fentry["variants"][0]["sha256"], "input_side": side}
        if args.force or not is_cached(out, manifest["models"].get(corpus_name(name, side)), mkey):
            todo.append((spec, fentry))
    print(f"corpus-int8: {len(specs)} models, {len(specs) - len(todo)} cached, {len(todo)} to quantize into {out}")
    failed = {}
    for i, (spec, fentry) in enumerate(todo, 1):
        name, side = parse_spec(spec)
        cname = corpus_name(name, side)
        try:
            entry = quantize_model(spec, float_dir, fentry, out, key, args)
        except (QuantizeError, onnx.checker.ValidationError) as e:
            failed[cname] = 2
            print(f"[{i}/{len(todo)}] {cname}: FAILED: {e}", flush=True)
            continue
        except RuntimeError as e:
            failed[cname] = 1
            print(f"[{i}/{len(todo)}] {cname}: FAILED: {e}", flush=True)
            continue
        manifest["models"][cname] = entry
        save_manifest(out, manifest)
        acc = entry["accuracy"]
        print(f"[{i}/{len(todo)}] {cname}: {entry['seconds']['total']:.1f}s, {entry['file']['bytes'] / 2**20:.1f} MiB, "
              f"top-1 {acc['top1_agreement']}/{acc['inputs']}, cosine mean {acc['cosine_mean']:.4f} "
              f"min {acc['cosine_min']:.4f}", flush=True)
    save_manifest(out, manifest)
    if failed:
        print(f"corpus-int8: {len(failed)} failed: {', '.join(failed)}", file=sys.stderr)
        # 2: a model this quantizer cannot write (the message names node and field); 1: a tool failed.
        return max(failed.values())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
