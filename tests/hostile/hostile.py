#!/usr/bin/python3
"""The hostile-input suite (issue 16): hostile files of every kind and the commands run on
them, each asserting the documented exit code, no signal, every file in the work folder
byte-identical (and of the same kind) afterwards, no output left behind unless the case
expects it, no raw terminal escape in the output, and bounded CPU time and memory (wall
time is only a backstop against hangs: the machine may be shared by many builds).

  hostile.py --list                          the case names (CTest makes one test of each)
  hostile.py --program memledger --work DIR --case NAME [--no-memory-limit]

Needs Python with onnx and numpy (/usr/bin/python3 here). Each case generates only the
files it names into its own fresh folder.
"""
import argparse
import hashlib
import os
import re
import resource
import shutil
import stat
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# ---- files ---------------------------------------------------------------------------


def save(model, path):
    onnx.save(model, path)


def model_of(nodes, inputs, outputs, initializers=(), opset=17, check=True):
    graph = helper.make_graph(nodes, "hostile", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    if check:
        onnx.checker.check_model(model)
    return model


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def relu_model(path, shape=(2,), name_in="x", name_out="y"):
    save(model_of([helper.make_node("Relu", [name_in], [name_out])], [vi(name_in, TensorProto.FLOAT, list(shape))],
                  [vi(name_out, TensorProto.FLOAT, list(shape))]), path)


def two_output_model(path):
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"])]
    save(model_of(nodes, [vi("x", TensorProto.FLOAT, [2])], [vi("a", TensorProto.FLOAT, [2]),
                                                              vi("b", TensorProto.FLOAT, [2])]), path)


def profile(path, extra=""):
    with open(path, "w") as f:
        f.write('name = "hostile"\ncapacity_bytes = 1048576\nalignment_bytes = 16\n' + extra)


def npy(path, array):
    np.save(path, array)


def npy_descr_last(path):
    data = np.array([1.0, -2.0], dtype="<f4")
    header = "{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}"
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + data.tobytes())


def sparse_npy(path, elements):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % elements
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
        f.truncate(f.tell() + 4 * elements)


def div_model(path, dtype):
    t = TensorProto.INT64 if dtype == np.int64 else TensorProto.INT32
    minus_one = numpy_helper.from_array(np.array([-1], dtype=dtype), "m")
    save(model_of([helper.make_node("Div", ["a", "m"], ["q"])], [vi("a", t, [2])], [vi("q", t, [2])],
                  [minus_one]), path)


def sqrt_model(path):
    save(model_of([helper.make_node("Sqrt", ["x"], ["y"])], [vi("x", TensorProto.FLOAT, [2])],
                  [vi("y", TensorProto.FLOAT, [2])]), path)


def abs_model(path):
    save(model_of([helper.make_node("Abs", ["x"], ["y"])], [vi("x", TensorProto.FLOAT, [2])],
                  [vi("y", TensorProto.FLOAT, [2])]), path)


def slice_model(path, step):
    inits = [numpy_helper.from_array(np.array(v, dtype=np.int64), n)
             for n, v in [("s", [0]), ("e", [INT64_MAX]), ("ax", [0]), ("st", [step])]]
    save(model_of([helper.make_node("Slice", ["x", "s", "e", "ax", "st"], ["y"])], [vi("x", TensorProto.FLOAT, [8])],
                  [vi("y", TensorProto.FLOAT, ["n"])], inits, check=False), path)


def window_model(path, op, strides=None, pads=None, channels_out=2, bias=None, shape=(1, 1, 4, 4)):
    attrs = {"kernel_shape": [1, 1]}
    if strides is not None:
        attrs["strides"] = strides
    if pads is not None:
        attrs["pads"] = pads
    inputs, inits = ["x"], []
    if op == "Conv":
        inits.append(numpy_helper.from_array(np.ones((channels_out, shape[1], 1, 1), np.float32), "w"))
        inputs.append("w")
        if bias is not None:
            inits.append(numpy_helper.from_array(np.ones((bias,), np.float32), "b"))
            inputs.append("b")
    save(model_of([helper.make_node(op, inputs, ["y"], **attrs)], [vi("x", TensorProto.FLOAT, list(shape))],
                  [vi("y", TensorProto.FLOAT, ["n", "c", "h", "w"])], inits, check=False), path)


def transpose_conv_model(path):
    # A fuzz finding: Transpose's perm shorter than its input's rank, then a Conv (libonnx SIGSEGV).
    w = numpy_helper.from_array(np.ones((4, 3, 1, 1), np.float32), "w")
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 1, 2]), helper.make_node("Conv", ["xt", "w"], ["y"])]
    save(model_of(nodes, [vi("x", TensorProto.FLOAT, [1, 5, 6, 3])], [vi("y", TensorProto.FLOAT, ["n", "c", "h", "w"])],
                  [w], check=False), path)


def conv_attr_model(path, op="Conv", **attrs):
    w = numpy_helper.from_array(np.ones((1, 1, 1, 1), np.float32), "w")
    save(model_of([helper.make_node(op, ["x", "w"], ["y"], kernel_shape=[1, 1], **attrs)],
                  [vi("x", TensorProto.FLOAT, [1, 1, 4, 4])], [vi("y", TensorProto.FLOAT, sym(4))], [w], check=False),
         path)


def reshape_dynamic_model(path):
    # The target shape comes from a graph input: not static, refused by name.
    save(model_of([helper.make_node("Reshape", ["x", "s"], ["y"])],
                  [vi("x", TensorProto.FLOAT, [2, 3]), vi("s", TensorProto.INT64, [2])],
                  [vi("y", TensorProto.FLOAT, sym(2))], check=False), path)


def gather_model(path):
    idx = numpy_helper.from_array(np.array([0], np.int64), "i")
    save(model_of([helper.make_node("Gather", ["x", "i"], ["y"], axis=9)], [vi("x", TensorProto.FLOAT, [5, 6])],
                  [vi("y", TensorProto.FLOAT, sym(2))], [idx], check=False), path)


def gemm_bias_model(path):
    inits = [numpy_helper.from_array(np.ones((3, 4), np.float32), "b"),
             numpy_helper.from_array(np.ones((3,), np.float32), "c")]
    save(model_of([helper.make_node("Gemm", ["a", "b", "c"], ["y"])], [vi("a", TensorProto.FLOAT, [2, 3])],
                  [vi("y", TensorProto.FLOAT, ["m", "n"])], inits, check=False), path)


def constant_of_shape_model(path, extent):
    shape = numpy_helper.from_array(np.array([extent], np.int64), "shape")
    save(model_of([helper.make_node("ConstantOfShape", ["shape"], ["y"])], [], [vi("y", TensorProto.FLOAT, ["n"])],
                  [shape], check=False), path)


def sym(rank):
    return [f"d{i}" for i in range(rank)]


def one_node_model(path, op, inputs, constants=None, attrs=None, outputs=1, rank=2):
    """One `op` node over float graph inputs (name, shape) and int64 constants (name → list); outputs of `rank`."""
    constants = constants or {}
    names = [n for n, _ in inputs] + list(constants)
    inits = [numpy_helper.from_array(np.array(v, dtype=np.int64), n) for n, v in constants.items()]
    outs = [f"y{i}" for i in range(outputs)]
    save(model_of([helper.make_node(op, names, outs, **(attrs or {}))],
                  [vi(n, TensorProto.FLOAT, list(shape)) for n, shape in inputs],
                  [vi(o, TensorProto.FLOAT, sym(rank)) for o in outs], inits, check=False), path)


def range_model(path, limit):
    inits = [numpy_helper.from_array(np.array(v, dtype=np.int64), n) for n, v in [("s", 0), ("l", limit), ("d", 1)]]
    save(model_of([helper.make_node("Range", ["s", "l", "d"], ["y"])], [], [vi("y", TensorProto.INT64, sym(1))],
                  inits, check=False), path)


def resize_model(path, scale):
    inits = [numpy_helper.from_array(np.array([], np.float32), "roi"),
             numpy_helper.from_array(np.array([1, 1, scale, scale], np.float32), "scales")]
    save(model_of([helper.make_node("Resize", ["x", "roi", "scales"], ["y"])], [vi("x", TensorProto.FLOAT, [1, 1, 4, 4])],
                  [vi("y", TensorProto.FLOAT, sym(4))], inits, check=False), path)


def qdq_conv_model(path, w_scales=(0.01, 0.01), bias=(0, 0), bias_zp=(0, 0), w=None):
    """Q → DQ → Conv (per-channel int8 weights, int32 bias) → Q → DQ with one edited parameter (issue 35 item 7)."""
    w = np.full((2, 1, 3, 3), 1, np.int8) if w is None else w
    f = lambda a, n: numpy_helper.from_array(np.asarray(a), n)  # noqa: E731
    inits = [f(np.float32(0.02), "xs"), f(np.int8(0), "xz"), f(w, "w"), f(np.array(w_scales, np.float32), "ws"),
             f(np.zeros(len(w_scales), np.int8), "wz"), f(np.array(bias, np.int32), "b"),
             f(np.full(2, 0.0002, np.float32), "bs"), f(np.array(bias_zp, np.int32), "bz"),
             f(np.float32(0.05), "ys"), f(np.int8(0), "yz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="quant"),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"], name="x_dq"),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], name="w_dq", axis=0),
             helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"], name="b_dq", axis=0),
             helper.make_node("Conv", ["xf", "wf", "bf"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["cq"], name="requant"),
             helper.make_node("DequantizeLinear", ["cq", "ys", "yz"], ["y"], name="y_dq")]
    save(model_of(nodes, [vi("x", TensorProto.FLOAT, [1, 1, 4, 4])], [vi("y", TensorProto.FLOAT, [1, 2, 4, 4])], inits,
                  opset=13), path)


def constant_short_data_model(path):
    # The long fuzz run's finding: a Constant declared [43] holding one int64 (4294967295)
    # feeding ConstantOfShape → Expand; libonnx's inference allocated a rank of 4·10^9.
    shape = numpy_helper.from_array(np.array([2**32 - 1], np.int64), "s")
    shape.dims[:] = [43]  # onnx's helper refuses to write it; the file may hold it anyway
    nodes = [helper.make_node("Constant", [], ["c"], value=shape),
             helper.make_node("ConstantOfShape", ["c"], ["k"], value=numpy_helper.from_array(np.array([1], np.int64))),
             helper.make_node("Expand", ["x", "k"], ["y"])]
    save(model_of(nodes, [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, ["n"])], check=False), path)


def named_model(path, name):
    # A value name from the file that is not text: raw bytes go into the protobuf string.
    model = model_of([helper.make_node("Relu", ["x"], ["y"])], [vi("x", TensorProto.FLOAT, [2])],
                     [vi("y", TensorProto.FLOAT, [2])])
    placeholder = "Q" * len(name)  # the same length: protobuf strings are length-prefixed
    model.graph.node[0].output[0] = placeholder
    model.graph.output[0].name = placeholder
    data = model.SerializeToString().replace(placeholder.encode(), name)
    with open(path, "wb") as f:
        f.write(data)


def relu_chain(path, n):
    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"]) for i in range(n)]
    save(model_of(nodes, [vi("v0", TensorProto.FLOAT, [4])], [vi(f"v{n}", TensorProto.FLOAT, [4])], check=False), path)


def identity_chain(path, n):
    # n Identity nodes over a constant, folded away on load one after the other (front first).
    c = numpy_helper.from_array(np.ones(4, np.float32), "c0")
    nodes = [helper.make_node("Identity", [f"c{i}"], [f"c{i + 1}"]) for i in range(n)]
    nodes.append(helper.make_node("Add", ["x", f"c{n}"], ["y"]))
    save(model_of(nodes, [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, [4])], [c], check=False),
         path)


def many_outputs(path, n):
    nodes = [helper.make_node("Relu", ["x"], [f"y{i}"]) for i in range(n)]
    save(model_of(nodes, [vi("x", TensorProto.FLOAT, [4])], [vi(f"y{i}", TensorProto.FLOAT, [4]) for i in range(n)],
                  check=False), path)


def external_data_model(path, location="ext.bin"):
    # y = x + w with w's 16 bytes in the file `location` beside the model.
    w = numpy_helper.from_array(np.arange(4, dtype=np.float32), "w")
    model = model_of([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", TensorProto.FLOAT, [4])],
                     [vi("y", TensorProto.FLOAT, [4])], [w])
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location=location,
                    size_threshold=0)


def report(path, ledger=None, timeline=None, buffers=None):
    import json
    body = {"schema_version": 1, "model": "m", "ledger": ledger or {"logical_bytes": 8, "physical_bytes": 8,
                                                                     "peak_live_bytes": 8}}
    if timeline is not None:
        body["timeline"] = timeline
    if buffers is not None:
        body["buffers"] = buffers
    with open(path, "w") as f:
        json.dump(body, f)


def csv(path, text):
    with open(path, "w") as f:
        f.write(text)


# Each file a case may name, built on demand in the case's folder.
# File names that are not UTF-8 (legal on Linux): Python holds the byte 0xFF as the
# surrogate U+DCFF and writes it back as that byte.
NON_UTF8_MODEL = os.fsdecode(b"m\xff.onnx")
NON_UTF8_PROFILE = os.fsdecode(b"d\xff.toml")
ESCAPED_MODEL = b"m\\xff.onnx"  # how every writer shows it (core/text.h: escape_non_utf8) ...
JSON_ESCAPED_MODEL = b"m\\\\xff.onnx"  # ... and that text as a JSON string writes it

FILES = {
    "m.onnx": lambda p: relu_model(p),
    NON_UTF8_MODEL: lambda p: relu_model(p),
    NON_UTF8_PROFILE: lambda p: profile(p),
    "x_in.onnx": lambda p: relu_model(p, name_in="x", name_out="x_in"),
    "two.onnx": two_output_model,
    "big_input.onnx": lambda p: relu_model(p, shape=(805_000_000,)),
    "huge_relu.onnx": lambda p: relu_model(p, shape=(2**40,)),
    "d.toml": profile,
    "dma_huge.toml": lambda p: profile(p, "[dma]\ngranularity_bytes = 4611686018427387904\nexternal_bytes = 1024\n"),
    "dma_sim.toml": lambda p: profile(p, "[dma]\ngranularity_bytes = 64\nexternal_bytes = 1099511627776\n"),
    "x.npy": lambda p: npy(p, np.array([1.0, -2.0], np.float32)),
    "x_in.npy": lambda p: npy(p, np.array([1.0, -2.0], np.float32)),
    "minus.npy": lambda p: npy(p, np.array([-1.0, 1.0], np.float32)),  # only sqrt(-1) differs: NaN vs 1
    "descr_last.npy": npy_descr_last,
    "sparse.npy": lambda p: sparse_npy(p, 800_000_000),
    "i64min.npy": lambda p: npy(p, np.array([INT64_MIN, 7], np.int64)),
    "i32min.npy": lambda p: npy(p, np.array([-(2**31), 7], np.int32)),
    "div64.onnx": lambda p: div_model(p, np.int64),
    "div32.onnx": lambda p: div_model(p, np.int32),
    "sqrt.onnx": sqrt_model,
    "abs.onnx": abs_model,
    "slice_max.onnx": lambda p: slice_model(p, INT64_MAX),
    "slice_min.onnx": lambda p: slice_model(p, INT64_MIN),
    "slice_zero.onnx": lambda p: slice_model(p, 0),
    "conv_stride0.onnx": lambda p: window_model(p, "Conv", strides=[0, 0]),
    "pool_stride0.onnx": lambda p: window_model(p, "AveragePool", strides=[0, 0]),
    "conv_pads.onnx": lambda p: window_model(p, "Conv", pads=[10000] * 4, channels_out=4),
    "conv_bias.onnx": lambda p: window_model(p, "Conv", bias=1),
    "gemm_bias.onnx": gemm_bias_model,
    "transpose_conv.onnx": transpose_conv_model,
    "cos_big.onnx": lambda p: constant_of_shape_model(p, 750_000_000),
    # One hostile attribute or constant operand per family of shape rules (ir/shape_rules.cpp).
    "add_no_broadcast.onnx": lambda p: one_node_model(p, "Add", [("a", [2, 3]), ("b", [4])]),
    "reduce_axis_out.onnx": lambda p: one_node_model(p, "ReduceMax", [("x", [2, 3])], attrs={"axes": [5]}),
    "conv_dilation_zero.onnx": lambda p: conv_attr_model(p, dilations=[0, 1]),
    "conv_group_zero.onnx": lambda p: conv_attr_model(p, group=0),
    "pool_kernel_huge.onnx": lambda p: one_node_model(p, "MaxPool", [("x", [1, 1, 4, 4])],
                                                      attrs={"kernel_shape": [1, 2**40]}, rank=4),
    "conv_transpose_stride_zero.onnx": lambda p: conv_attr_model(p, op="ConvTranspose", strides=[0, 1]),
    "matmul_inner.onnx": lambda p: one_node_model(p, "MatMul", [("a", [2, 3]), ("b", [4, 5])]),
    "reshape_two_minus_one.onnx": lambda p: one_node_model(p, "Reshape", [("x", [2, 3])], {"s": [-1, -1]}),
    "reshape_dynamic.onnx": lambda p: reshape_dynamic_model(p),
    "unsqueeze_twice.onnx": lambda p: one_node_model(p, "Unsqueeze", [("x", [3])], {"a": [0, 0]}, rank=3),
    "concat_axis_out.onnx": lambda p: one_node_model(p, "Concat", [("a", [2, 3]), ("b", [2, 3])], attrs={"axis": 7}),
    "split_parts.onnx": lambda p: one_node_model(p, "Split", [("x", [2, 6])], {"sp": [1, 2]}, {"axis": 1}, outputs=2),
    "gather_axis_out.onnx": lambda p: gather_model(p),
    "topk_k_huge.onnx": lambda p: one_node_model(p, "TopK", [("x", [2, 5])], {"k": [2**62]}, outputs=2),
    "transpose_perm_repeat.onnx": lambda p: one_node_model(p, "Transpose", [("x", [2, 3])], attrs={"perm": [1, 1]}),
    "pad_huge.onnx": lambda p: one_node_model(p, "Pad", [("x", [2, 2])], {"pads": [0, 2**40, 0, 0]}),
    "resize_scale_nan.onnx": lambda p: resize_model(p, float("nan")),
    "quant_scale_zero.onnx": lambda p: qdq_conv_model(p, w_scales=(0.01, 0.0)),
    "quant_scale_nan.onnx": lambda p: qdq_conv_model(p, w_scales=(float("nan"), 0.01)),
    "quant_axis_length.onnx": lambda p: qdq_conv_model(p, w_scales=(0.01, 0.01, 0.01)),
    "quant_bias_zero_point.onnx": lambda p: qdq_conv_model(p, bias_zp=(0, 9)),
    "quant_bias_overflow.onnx": lambda p: qdq_conv_model(p, bias=(2**31 - 100, 0), w=np.full((2, 1, 3, 3), 127, np.int8)),
    "tile_overflow.onnx": lambda p: one_node_model(p, "Tile", [("x", [2, 3])], {"r": [2**62, 2**62]}),
    "expand_negative.onnx": lambda p: one_node_model(p, "Expand", [("x", [3])], {"s": [-2]}, rank=1),
    "range_huge.onnx": lambda p: range_model(p, 2**60),
    "constant_short.onnx": constant_short_data_model,
    "bad_utf8.onnx": lambda p: named_model(p, b"y\xff\xfe"),
    "escape.onnx": lambda p: named_model(p, b"y\x1b[31mred\x1b]0;title\x07"),
    "chain.onnx": lambda p: relu_chain(p, 100_000),
    "outputs.onnx": lambda p: many_outputs(p, 20_000),
    "identity_chain.onnx": lambda p: identity_chain(p, 100_000),
    "ext.onnx": external_data_model,  # writes ext.bin beside it
    "ext_y.onnx": lambda p: external_data_model(p, "y.npy"),  # its weights are what run would write as y
    "ok.json": lambda p: report(p),
    "live_int.json": lambda p: report(p, timeline=[{"step": 0, "live_bytes": 8, "live": [3]}]),
    "peak_int.json": lambda p: report(p, ledger={"logical_bytes": 8, "physical_bytes": 8, "peak_live_bytes": 8,
                                                 "live_at_peak": [3]}),
    "name_int.json": lambda p: report(p, buffers=[{"name": 5, "category": "activation", "logical_bytes": 8,
                                                     "physical_bytes": 8}]),
    "category_int.json": lambda p: report(p, buffers=[{"name": "a", "category": [1], "logical_bytes": 8,
                                                         "physical_bytes": 8}]),
    "min.json": lambda p: report(p, ledger={"logical_bytes": INT64_MIN, "physical_bytes": 0, "peak_live_bytes": 0}),
    "max.json": lambda p: report(p, ledger={"logical_bytes": INT64_MAX, "physical_bytes": 0, "peak_live_bytes": 0}),
    "overlap.csv": lambda p: csv(p, "id,lower,upper,size,offset\na,0,2,100,0\nb,0,2,100,50\n"),
    "p.csv": lambda p: csv(p, "id,lower,upper,size\na,0,2,100\nb,1,3,100\n"),
}

# Things in the folder that are not generated files: (name, how).
SPECIAL = {
    "fifo.json": lambda p: os.mkfifo(p),
    "fifo.onnx": lambda p: os.mkfifo(p),
    "dir.onnx": lambda p: os.mkdir(p),
    "link_model.json": lambda p: os.symlink("m.onnx", p),
    "hard_model.json": lambda p: os.link(os.path.join(os.path.dirname(p), "m.onnx"), p),
    "out.onnx.partial": lambda p: os.symlink("m.onnx", p),
    "q.csv.partial": lambda p: os.symlink("p.csv", p),
    "zero.npy": lambda p: os.symlink("/dev/zero", p),
    "b.npy": lambda p: os.mkdir(p),  # run --output-dir: the second output's path is a folder
}

# ---- cases ---------------------------------------------------------------------------


class Case:
    # pending: why the case does not pass yet (its fix belongs to another part); CTest runs
    # it with WILL_FAIL, so it turns red the day the fix lands and the mark must go.
    # contains: per expected output, bytes it must hold (the escaped name of a non-UTF-8 file).
    def __init__(self, name, args, code, files=(), special=(), message=None, new=(), seconds=30, pending=None,
                 contains=None):
        self.name, self.args, self.code = name, args, code
        self.files, self.special, self.message, self.new, self.seconds = files, special, message, new, seconds
        self.pending, self.contains = pending, contains or {}


C = Case
WALL_FACTOR = 12  # a case's wall-time backstop, in multiples of its CPU-time bound
CASES = [
    # 1. an input that is not the model can be overwritten
    C("plan_json_over_profile", ["plan", "m.onnx", "--device", "d.toml", "--json", "d.toml"], 2, ["m.onnx", "d.toml"],
      message="--json d.toml: refusing to overwrite the input file"),
    C("plan_csv_over_profile", ["plan", "m.onnx", "--device", "d.toml", "--csv", "d.toml"], 2, ["m.onnx", "d.toml"]),
    C("plan_html_over_profile", ["plan", "m.onnx", "--device", "d.toml", "--html", "d.toml"], 2, ["m.onnx", "d.toml"]),
    C("demo_html_over_profile", ["demo", "--device", "d.toml", "--html", "d.toml"], 2, ["d.toml"]),
    C("optimize_over_profile", ["optimize", "m.onnx", "-o", "d.toml", "--device", "d.toml"], 2, ["m.onnx", "d.toml"]),
    C("run_output_over_input_tensor", ["run", "x_in.onnx", "--input", "x=x_in.npy", "--output-dir", "."], 2,
      ["x_in.onnx", "x_in.npy"], message="refusing to overwrite the input file"),
    C("optimize_over_external_data", ["optimize", "ext.onnx", "-o", "ext.bin"], 2, ["ext.onnx"],
      message="-o ext.bin: refusing to overwrite the input file"),
    C("plan_json_over_external_data", ["plan", "ext.onnx", "--json", "ext.bin"], 2, ["ext.onnx"],
      message="refusing to overwrite the input file"),
    C("run_output_over_compare_external_data", ["run", "m.onnx", "--compare", "ext_y.onnx", "--output-dir", "."], 2,
      ["m.onnx", "ext_y.onnx"], message="y.npy: refusing to overwrite the input file"),
    C("plan_external_data_json", ["plan", "ext.onnx", "--json", "out.json"], 0, ["ext.onnx"], new=["out.json"]),
    C("plan_json_hard_link_to_model", ["plan", "m.onnx", "--json", "hard_model.json"], 2, ["m.onnx"],
      ["hard_model.json"], message="refusing to overwrite the input file"),
    # 2. predictable temporary names, symbolic links and FIFOs as outputs
    C("optimize_partial_symlink", ["optimize", "m.onnx", "-o", "out.onnx"], 0, ["m.onnx"], ["out.onnx.partial"],
      new=["out.onnx"]),
    C("plan_json_symlink_to_model", ["plan", "m.onnx", "--json", "link_model.json"], 2, ["m.onnx"],
      ["link_model.json"], message="is a symbolic link"),
    C("plan_json_fifo", ["plan", "m.onnx", "--json", "fifo.json"], 2, ["m.onnx"], ["fifo.json"], message="is a FIFO"),
    C("plan_json_directory", ["plan", "m.onnx", "--json", "dir.onnx"], 2, ["m.onnx"], ["dir.onnx"],
      message="is a directory"),
    C("plan_json_dev_null", ["plan", "m.onnx", "--json", "/dev/null"], 2, ["m.onnx"], message="character device"),
    # 3. partial outputs
    C("plan_partial_csv", ["plan", "m.onnx", "--json", "ok.json.out", "--csv", "no/such/dir/x.csv"], 2, ["m.onnx"],
      message="--csv no/such/dir/x.csv: the folder no/such/dir does not exist"),
    C("optimize_partial_json", ["optimize", "m.onnx", "-o", "ok.onnx", "--json", "no/dir/x.json"], 2, ["m.onnx"]),
    C("run_output_dir_second_fails", ["run", "two.onnx", "--output-dir", "."], 2, ["two.onnx"], ["b.npy"],
      message="b.npy: is a directory"),
    C("run_output_dir_fresh_folder_removed", ["run", "two.onnx", "--input", "x=zero.npy", "--output-dir", "new/sub"],
      2, ["two.onnx"], ["zero.npy"]),
    # 4. internal checks reachable from input
    C("diff_live_not_string", ["diff", "ok.json", "live_int.json"], 2, ["ok.json", "live_int.json"],
      message="not a buffer name"),
    C("diff_live_at_peak_not_string", ["diff", "ok.json", "peak_int.json"], 2, ["ok.json", "peak_int.json"],
      message="not a buffer name"),
    C("diff_name_not_string", ["diff", "ok.json", "name_int.json"], 2, ["ok.json", "name_int.json"],
      message="'name' is not a string"),
    C("diff_category_not_string", ["diff", "ok.json", "category_int.json"], 2, ["ok.json", "category_int.json"],
      message="'category' is not a string"),
    C("plan_name_not_utf8", ["plan", "bad_utf8.onnx", "--json", "out.json"], 2, ["bad_utf8.onnx"],
      message="not valid UTF-8"),
    C("plan_gemm_bias", ["plan", "gemm_bias.onnx"], 2, ["gemm_bias.onnx"], message="bias C \\[3\\]"),
    C("run_gemm_bias", ["run", "gemm_bias.onnx"], 2, ["gemm_bias.onnx"], message="bias C \\[3\\]"),
    C("plan_sim_conv_bias", ["plan", "conv_bias.onnx", "--sim", "--device", "dma_sim.toml"], 2,
      ["conv_bias.onnx", "dma_sim.toml"], message="bias \\[1\\] for 2 output maps"),
    # 5. arithmetic traps and option ranges
    C("run_div_int64_min", ["run", "div64.onnx", "--input", "a=i64min.npy"], 0, ["div64.onnx", "i64min.npy"]),
    C("run_div_int32_min", ["run", "div32.onnx", "--input", "a=i32min.npy"], 0, ["div32.onnx", "i32min.npy"]),
    C("plan_dma_granularity_huge", ["plan", "m.onnx", "--sim", "--device", "dma_huge.toml"], 2,
      ["m.onnx", "dma_huge.toml"], message="dma.granularity_bytes"),
    C("diff_int64_extremes", ["diff", "min.json", "max.json"], 2, ["min.json", "max.json"],
      message="not a byte count"),
    C("run_seed_negative", ["run", "m.onnx", "--seed", "-1"], 2, ["m.onnx"]),
    C("optimize_seed_negative", ["optimize", "m.onnx", "-o", "o.onnx", "--seed", "-1"], 2, ["m.onnx"]),
    C("plan_time_budget_nan", ["plan", "m.onnx", "--time-budget", "nan"], 2, ["m.onnx"]),
    C("run_tolerance_nan", ["run", "m.onnx", "--compare", "m.onnx", "--tolerance", "nan"], 2, ["m.onnx"]),
    C("optimize_tolerance_nan", ["optimize", "m.onnx", "-o", "o.onnx", "--tolerance", "nan"], 2, ["m.onnx"]),
    C("run_max_memory_zero", ["run", "m.onnx", "--max-memory", "0"], 2, ["m.onnx"]),
    C("run_compare_nan_vs_number", ["run", "sqrt.onnx", "--input", "x=minus.npy", "--compare", "abs.onnx",
                                    "--output-dir", "outs"], 4, ["sqrt.onnx", "abs.onnx", "minus.npy"],
      message="1 beyond tolerance"),
    # 6. libonnx's shape inference on hostile attributes
    C("plan_slice_step_max", ["plan", "slice_max.onnx"], 2, ["slice_max.onnx"], message="steps\\[0\\]"),
    C("plan_slice_step_min", ["plan", "slice_min.onnx"], 2, ["slice_min.onnx"], message="steps\\[0\\]"),
    C("plan_slice_step_zero", ["plan", "slice_zero.onnx"], 2, ["slice_zero.onnx"], message="steps\\[0\\] is 0"),
    C("plan_conv_stride_zero", ["plan", "conv_stride0.onnx"], 2, ["conv_stride0.onnx"], message="strides\\[0\\] is 0"),
    C("plan_pool_stride_zero", ["plan", "pool_stride0.onnx"], 2, ["pool_stride0.onnx"], message="strides\\[0\\] is 0"),
    C("plan_transpose_perm_short", ["plan", "transpose_conv.onnx"], 2, ["transpose_conv.onnx"],
      message="perm has 3 values for an input of rank 4"),
    # 6b. the op table's shape rules on hostile attributes and constant operands, one per family
    C("plan_add_no_broadcast", ["plan", "add_no_broadcast.onnx"], 2, ["add_no_broadcast.onnx"],
      message="node Add #0: operands \\[2,3\\] and \\[4\\] do not broadcast"),
    C("plan_reduce_axis_out", ["plan", "reduce_axis_out.onnx"], 2, ["reduce_axis_out.onnx"],
      message="node ReduceMax #0: axes 5 is out of range for rank 2"),
    C("plan_conv_dilation_zero", ["plan", "conv_dilation_zero.onnx"], 2, ["conv_dilation_zero.onnx"],
      message="node Conv #0: dilations\\[0\\] is 0"),
    C("plan_conv_group_zero", ["plan", "conv_group_zero.onnx"], 2, ["conv_group_zero.onnx"],
      message="node Conv #0: group is 0"),
    C("plan_pool_kernel_huge", ["plan", "pool_kernel_huge.onnx"], 2, ["pool_kernel_huge.onnx"],
      message="node MaxPool #0: kernel_shape\\[1\\] is 1099511627776"),
    C("plan_conv_transpose_stride_zero", ["plan", "conv_transpose_stride_zero.onnx"], 2,
      ["conv_transpose_stride_zero.onnx"], message="node ConvTranspose #0: strides\\[0\\] is 0"),
    C("plan_matmul_inner", ["plan", "matmul_inner.onnx"], 2, ["matmul_inner.onnx"],
      message="node MatMul #0: inner extents differ"),
    C("plan_reshape_two_minus_one", ["plan", "reshape_two_minus_one.onnx"], 2, ["reshape_two_minus_one.onnx"],
      message="node Reshape #0: shape has more than one -1"),
    C("plan_reshape_dynamic", ["plan", "reshape_dynamic.onnx"], 2, ["reshape_dynamic.onnx"],
      message="node Reshape #0: input 'shape' is not a constant"),
    C("plan_unsqueeze_twice", ["plan", "unsqueeze_twice.onnx"], 2, ["unsqueeze_twice.onnx"],
      message="node Unsqueeze #0: axes names axis 0 twice"),
    C("plan_concat_axis_out", ["plan", "concat_axis_out.onnx"], 2, ["concat_axis_out.onnx"],
      message="node Concat #0: axis 7 is out of range"),
    C("plan_split_parts", ["plan", "split_parts.onnx"], 2, ["split_parts.onnx"],
      message="node Split #0: split parts add up to 3"),
    C("plan_gather_axis_out", ["plan", "gather_axis_out.onnx"], 2, ["gather_axis_out.onnx"],
      message="node Gather #0: axis 9 is out of range"),
    C("plan_topk_k_huge", ["plan", "topk_k_huge.onnx"], 2, ["topk_k_huge.onnx"],
      message="node TopK #0: k 4611686018427387904 is out of range"),
    C("plan_transpose_perm_repeat", ["plan", "transpose_perm_repeat.onnx"], 2, ["transpose_perm_repeat.onnx"],
      message="node Transpose #0: perm is not a permutation"),
    C("plan_pad_huge", ["plan", "pad_huge.onnx"], 2, ["pad_huge.onnx"],
      message="node Pad #0: pads value 1099511627776 is out of range"),
    C("plan_resize_scale_nan", ["plan", "resize_scale_nan.onnx"], 2, ["resize_scale_nan.onnx"],
      message="node Resize #0: scales\\[2\\] is nan"),
    C("plan_tile_overflow", ["plan", "tile_overflow.onnx"], 2, ["tile_overflow.onnx"], message="node Tile #0"),
    C("plan_expand_negative", ["plan", "expand_negative.onnx"], 2, ["expand_negative.onnx"],
      message="node Expand #0: shape has a negative extent -2"),
    C("plan_range_huge", ["plan", "range_huge.onnx"], 2, ["range_huge.onnx"],
      message="node Range #0: .*more than the import bound"),
    # quantization parameters (issue 35 item 7): node and field named, no report written
    C("plan_quant_scale_zero", ["plan", "quant_scale_zero.onnx", "--json", "out.json"], 2, ["quant_scale_zero.onnx"],
      message="node DequantizeLinear 'w_dq': value 'w': scale 'ws' \\(input 1\\) \\[1\\] is 0: a scale must be finite"),
    C("plan_quant_scale_nan", ["plan", "quant_scale_nan.onnx", "--json", "out.json"], 2, ["quant_scale_nan.onnx"],
      message="node DequantizeLinear 'w_dq': value 'w': scale 'ws' \\(input 1\\) \\[0\\] is nan"),
    C("plan_quant_axis_length", ["plan", "quant_axis_length.onnx", "--json", "out.json"], 2,
      ["quant_axis_length.onnx"], message="scale 'ws' \\(input 1\\) holds 3 scales but axis 0 has extent 2"),
    C("plan_quant_bias_zero_point", ["plan", "quant_bias_zero_point.onnx", "--json", "out.json"], 2,
      ["quant_bias_zero_point.onnx"], message="node DequantizeLinear 'b_dq': value 'b': zero point 'bz' \\(input 2\\)"
                                              " \\[1\\] is 9: an int32 value's zero point must be 0"),
    C("run_quant_bias_overflow", ["run", "quant_bias_overflow.onnx"], 2, ["quant_bias_overflow.onnx"],
      message="node Conv 'conv': bias 'b', output channel 0: the worst-case accumulation"),
    # 7. unbounded reads and allocations
    C("run_input_dev_zero", ["run", "m.onnx", "--input", "x=zero.npy"], 2, ["m.onnx"], ["zero.npy"],
      message="character device"),
    C("diff_dev_zero", ["diff", "/dev/zero", "/dev/zero"], 2, message="character device"),
    C("run_input_sparse_3gb", ["run", "m.onnx", "--input", "x=sparse.npy"], 2, ["m.onnx", "sparse.npy"],
      message="more than the bound"),
    C("plan_constant_of_shape_huge", ["plan", "cos_big.onnx"], 2, ["cos_big.onnx"], message="ConstantOfShape"),
    C("run_constant_of_shape_huge", ["run", "cos_big.onnx"], 2, ["cos_big.onnx"], message="ConstantOfShape"),
    C("plan_constant_data_short", ["plan", "constant_short.onnx"], 2, ["constant_short.onnx"], message="Constant"),
    C("optimize_constant_of_shape_huge", ["optimize", "cos_big.onnx", "-o", "o.onnx"], 2, ["cos_big.onnx"]),
    C("run_input_805m_elements", ["run", "big_input.onnx"], 2, ["big_input.onnx"], message="--max-memory"),
    C("optimize_input_805m_elements", ["optimize", "big_input.onnx", "-o", "o.onnx"], 2, ["big_input.onnx"],
      message="--max-memory"),
    C("run_conv_pads_10000", ["run", "conv_pads.onnx"], 2, ["conv_pads.onnx"],
      message="--max-memory: .*node Conv.*needs [0-9]+ B"),
    # 8. cost that grows faster than the model
    C("plan_relu_chain_1e5", ["plan", "chain.onnx", "--brief"], 0, ["chain.onnx"], seconds=20),
    C("run_arena_relu_chain_1e5", ["run", "chain.onnx", "--arena"], 0, ["chain.onnx"], seconds=30),
    C("optimize_relu_chain_1e5", ["optimize", "chain.onnx", "-o", "chain_out.onnx"], 0, ["chain.onnx"],
      new=["chain_out.onnx"], seconds=20),
    C("plan_identity_chain_1e5", ["plan", "identity_chain.onnx", "--brief"], 0, ["identity_chain.onnx"], seconds=10),
    C("plan_20000_outputs_brief", ["plan", "outputs.onnx", "--brief"], 0, ["outputs.onnx"], seconds=60),
    C("plan_20000_outputs_json", ["plan", "outputs.onnx", "--brief", "--json", "o.json"], 0, ["outputs.onnx"],
      new=["o.json"], seconds=20),
    C("run_20000_outputs", ["run", "outputs.onnx"], 0, ["outputs.onnx"], seconds=20),
    # Each output written as its own file: 20 000 files created, written, checked and renamed.
    C("run_20000_outputs_output_dir", ["run", "outputs.onnx", "--output-dir", "outs"], 0, ["outputs.onnx"],
      new=["outs"] + [f"outs/y{i}.npy" for i in range(20_000)], seconds=20),
    C("plan_sim_huge_relu", ["plan", "huge_relu.onnx", "--sim", "--device", "dma_sim.toml", "--brief"], 3,
      ["huge_relu.onnx", "dma_sim.toml"], seconds=30),
    # allocate: one output set, its input protected, options range-checked
    C("allocate_partial_symlink", ["allocate", "p.csv", "-o", "q.csv"], 0, ["p.csv"], ["q.csv.partial"],
      new=["q.csv"]),
    C("allocate_output_over_input", ["allocate", "p.csv", "-o", "p.csv"], 2, ["p.csv"]),
    C("allocate_overlapping_fixed_offsets", ["allocate", "overlap.csv"], 2, ["overlap.csv"],
      message="buffers 'a' and 'b' have fixed offsets 0 and 50 that overlap while both are live"),
    C("allocate_capacity_too_large", ["allocate", "p.csv", "--capacity", "99999999999999999999"], 2, ["p.csv"]),
    C("allocate_time_budget_nan", ["allocate", "p.csv", "--time-budget", "nan"], 2, ["p.csv"]),
    # 9. messages
    C("plan_model_directory", ["plan", "dir.onnx"], 2, special=["dir.onnx"], message="dir.onnx: is a directory"),
    C("plan_model_fifo", ["plan", "fifo.onnx"], 2, special=["fifo.onnx"], message="fifo.onnx: is a FIFO"),
    C("run_npy_descr_last", ["run", "m.onnx", "--input", "x=descr_last.npy"], 0, ["m.onnx", "descr_last.npy"]),
    C("run_escape_in_names", ["run", "escape.onnx"], 0, ["escape.onnx"], message="\\\\x1b\\[31mred"),
    C("plan_escape_in_names", ["plan", "escape.onnx"], 0, ["escape.onnx"], message="\\\\x1b\\[31mred"),
    # 9. file names that are not UTF-8: escaped the same way in every writer, never a crash
    C("plan_non_utf8_path", ["plan", NON_UTF8_MODEL, "--json", "p.json", "--html", "p.html", "--emit-c", "p.h",
                             "--csv", "p.csv"], 0,
      [NON_UTF8_MODEL], new=["p.json", "p.html", "p.h", "p.csv"], message="m\\\\xff\\.onnx",
      contains={"p.json": JSON_ESCAPED_MODEL, "p.html": ESCAPED_MODEL, "p.h": ESCAPED_MODEL}),
    C("plan_non_utf8_profile", ["plan", "m.onnx", "--device", NON_UTF8_PROFILE, "--json", "p.json"], 0,
      ["m.onnx", NON_UTF8_PROFILE], new=["p.json"], message="hostile \\(d\\\\xff\\.toml\\)"),
    C("inspect_json_non_utf8_path", ["inspect", NON_UTF8_MODEL, "--format", "json"], 0, [NON_UTF8_MODEL],
      message="m\\\\\\\\xff\\.onnx"),
    C("fit_non_utf8_path", ["fit", NON_UTF8_MODEL, "--device", "mcu", "--json", "f.json", "--html", "f.html"], 0,
      [NON_UTF8_MODEL], new=["f.json", "f.html"], contains={"f.json": JSON_ESCAPED_MODEL, "f.html": ESCAPED_MODEL}),
    C("optimize_non_utf8_path", ["optimize", NON_UTF8_MODEL, "-o", "o.onnx", "--json", "o.json"], 0,
      [NON_UTF8_MODEL], new=["o.onnx", "o.json"], contains={"o.json": JSON_ESCAPED_MODEL}),
    C("plan_sim_non_utf8_path", ["plan", NON_UTF8_MODEL, "--device", "teaching", "--sim", "--json", "s.json"], 0, [NON_UTF8_MODEL],
      new=["s.json"], contains={"s.json": JSON_ESCAPED_MODEL}),
]
BY_NAME = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES), "two cases with one name"

# ---- runner --------------------------------------------------------------------------


def snapshot(root):
    """Every entry under root (not following links): kind, link target, content hash."""
    state = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            path = os.path.join(folder, name)
            st = os.lstat(path)
            rel = os.path.relpath(path, root)
            if stat.S_ISLNK(st.st_mode):
                state[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                with open(path, "rb") as f:
                    while chunk := f.read(1 << 20):
                        h.update(chunk)
                state[rel] = ("file", st.st_size, h.hexdigest(), st.st_ino)
            else:
                state[rel] = ("special", stat.S_IFMT(st.st_mode))
    return state


def run_case(case, program, work, memory_limit, time_scale=1.0):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for name in case.files:
        FILES[name](os.path.join(work, name))
    for name in case.special:
        SPECIAL[name](os.path.join(work, name))
    before = snapshot(work)
    limit_bytes = 4 << 30

    def limits():
        if memory_limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    if case.pending:
        time_scale = 1.0  # it is expected to fail; no need to wait longer for that
    start = time.monotonic()
    with open(os.path.join(work, "..", case.name + ".stdout"), "w+b") as stdout, \
            open(os.path.join(work, "..", case.name + ".stderr"), "w+b") as stderr:
        child = subprocess.Popen([program] + case.args, cwd=work, stdout=stdout, stderr=stderr,
                                 stdin=subprocess.DEVNULL, preexec_fn=limits)
        # wait4 gives this child's own peak memory (RUSAGE_CHILDREN is the maximum over all).
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid != 0:
                break
            # The bound is on CPU time (below); wall time only stops a run that hangs or
            # starves, with room for a machine shared by many builds (wall 5-10x CPU).
            if time.monotonic() - start > WALL_FACTOR * case.seconds * time_scale:
                child.kill()
                os.wait4(child.pid, 0)
                return [f"ran past {WALL_FACTOR * case.seconds * time_scale:g} s of wall time"]
            time.sleep(0.005)
        child.returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        stdout.seek(0)
        stderr.seek(0)
        done = subprocess.CompletedProcess(child.args, child.returncode, stdout.read(), stderr.read())
    seconds = time.monotonic() - start
    cpu_seconds = usage.ru_utime + usage.ru_stime
    rss_mb = usage.ru_maxrss / 1024
    out = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    problems = []
    if done.returncode < 0:
        problems.append(f"ended by signal {-done.returncode}")
    elif done.returncode != case.code:
        problems.append(f"exit code {done.returncode}, expected {case.code}")
    if case.message and not re.search(case.message, out):
        problems.append(f"the output does not match '{case.message}'")
    if b"\x1b" in done.stdout or b"\x1b" in done.stderr:
        problems.append("a raw terminal escape (ESC) in the output")
    if memory_limit and rss_mb > 3072:
        problems.append(f"peak memory {rss_mb:.0f} MB")
    after = snapshot(work)
    for rel, entry in before.items():
        if rel not in after:
            problems.append(f"input {rel} was removed")
        elif after[rel] != entry:
            problems.append(f"input {rel} was changed: {entry[:3]} -> {after[rel][:3]}")
    for rel in sorted(set(after) - set(before)):
        if rel not in case.new:
            problems.append(f"left behind: {rel}")
    for rel in case.new:
        if case.code == 0 and rel not in after:
            problems.append(f"expected output {rel} is missing")
    for rel, wanted in case.contains.items():
        path = os.path.join(work, rel)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                if wanted not in f.read():
                    problems.append(f"{rel} does not hold {wanted!r}")
    if cpu_seconds > case.seconds * time_scale:
        problems.append(f"took {cpu_seconds:.1f} s of CPU time, bound {case.seconds * time_scale:g} s")
    print(f"{case.name}: exit {done.returncode} in {cpu_seconds:.2f} s CPU ({seconds:.2f} s wall), "
          f"peak {rss_mb:.0f} MB")
    if problems:
        print("--- output ---\n" + out[-4000:])
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--list-pending", action="store_true", help="cases whose fix has not landed (WILL_FAIL)")
    parser.add_argument("--program")
    parser.add_argument("--work")
    parser.add_argument("--case", action="append")
    parser.add_argument("--no-memory-limit", action="store_true", help="sanitizer builds reserve huge address space")
    parser.add_argument("--time-scale", type=float, default=1.0, help="multiplies every time bound (sanitizer builds)")
    args = parser.parse_args()
    if args.list:
        print(";".join(c.name for c in CASES if not c.pending), end="")
        return 0
    if args.list_pending:
        print(";".join(c.name for c in CASES if c.pending), end="")
        return 0
    failed = 0
    for name in args.case or [c.name for c in CASES if not c.pending]:
        problems = run_case(BY_NAME[name], os.path.abspath(args.program), os.path.join(args.work, name),
                            not args.no_memory_limit, args.time_scale)
        for p in problems:
            print(f"FAIL {name}: {p}")
        failed += bool(problems)
        if not problems:
            shutil.rmtree(os.path.join(args.work, name), ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
