#!/usr/bin/python3
"""Writes the small quantized ONNX models of tests/data/onnx/ (committed; rerun after a change here).

Run with Debian's interpreter, which sees python3-onnx:  /usr/bin/python3 scripts/make_quantized_models.py
The QDQ models are in the layout onnxruntime's quantizer writes (quantize_static, QDQ format):
per-channel symmetric int8 weights stored as int8 initializers behind a DequantizeLinear (axis 0),
int32 biases of scale s_x·s_w behind a DequantizeLinear, and a QuantizeLinear → DequantizeLinear
pair on every activation; the float input is quantized once and the last activation dequantized.
The qlinear_* models use the operators that carry their parameters as inputs (QLinearConv,
QLinearMatMul, ConvInteger, MatMulInteger). bad_quant_* models are refused with exit code 2.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "onnx")
F = TensorProto.FLOAT


def t(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits, opset=13, check=True):
    graph = helper.make_graph(nodes, "main", inputs, outputs, initializer=list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="make_quantized_models")
    m.ir_version = 8
    if check:
        onnx.checker.check_model(m)
    return m


class QdqBuilder:
    """Builds a QDQ graph: activations as (name, scale, zero point) of int8 values."""

    def __init__(self, seed=0):
        self.r = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0
        self.dequantized = {}  # one DequantizeLinear per activation, shared by its readers (as onnxruntime writes)

    def name(self, base):
        self.n += 1
        return f"{base}{self.n}"

    def const(self, base, array):
        name = self.name(base)
        self.inits.append(t(name, array))
        return name

    def quantize(self, x_float, scale, zp=0):
        q = self.name("q")
        self.nodes.append(helper.make_node("QuantizeLinear", [x_float, self.const("s", np.float32(scale)),
                                                              self.const("z", np.int8(zp))], [q], name=q + "_quant"))
        return (q, scale, zp)

    def dequantize(self, act):
        q, scale, zp = act
        if q in self.dequantized:
            return self.dequantized[q]
        f = self.name("f")
        self.nodes.append(helper.make_node("DequantizeLinear", [q, self.const("s", np.float32(scale)),
                                                                self.const("z", np.int8(zp))], [f], name=f + "_dq"))
        self.dequantized[q] = f
        return f

    def requantize(self, f, scale, zp=0):
        return self.quantize(f, scale, zp)

    def weights(self, shape, axis=0):
        w = self.r.integers(-127, 128, size=shape).astype(np.int8)
        scales = (self.r.random(shape[axis]) * 0.02 + 0.005).astype(np.float32)
        wq = self.const("w", w)
        f = self.name("wf")
        self.nodes.append(helper.make_node("DequantizeLinear", [wq, self.const("ws", scales),
                                                                self.const("wz", np.zeros(shape[axis], np.int8))],
                                           [f], name=f + "_dq", axis=axis))
        return f, scales

    def bias(self, x_scale, w_scales, values=None):
        b = values if values is not None else self.r.integers(-2000, 2000, size=len(w_scales)).astype(np.int32)
        bq = self.const("b", np.asarray(b, np.int32))
        f = self.name("bf")
        self.nodes.append(helper.make_node("DequantizeLinear", [bq, self.const("bs", (x_scale * w_scales).astype(np.float32)),
                                                                self.const("bz", np.zeros(len(w_scales), np.int32))],
                                           [f], name=f + "_dq", axis=0))
        return f

    def conv(self, act, cin, cout, k=3, group=1, stride=1, out_scale=0.05, out_zp=0, bias=None, name=None):
        x = self.dequantize(act)
        w, ws = self.weights((cout, cin // group, k, k))
        b = self.bias(act[1], ws, bias)
        y = self.name("c")
        self.nodes.append(helper.make_node("Conv", [x, w, b], [y], name=name or y, group=group, strides=[stride, stride],
                                           pads=[k // 2] * 4))
        return self.requantize(y, out_scale, out_zp)

    def op(self, op, acts, out_scale, out_zp=0, extra=(), **attrs):
        xs = [self.dequantize(a) for a in acts]
        y = self.name(op.lower())
        self.nodes.append(helper.make_node(op, xs + list(extra), [y], name=y, **attrs))
        return self.requantize(y, out_scale, out_zp)


def qdq_block():
    """mobilenet_v2's operators in QDQ: Conv, depthwise Conv, pointwise Conv, a residual Add,
    Clip (ReLU6 kept as a node), GlobalAveragePool, Flatten (same parameters), Gemm."""
    b = QdqBuilder()
    a0 = b.quantize("x", 0.02, 3)
    a1 = b.conv(a0, 3, 8, stride=2, out_scale=0.04, out_zp=-5, name="conv1")
    a2 = b.conv(a1, 8, 8, group=8, out_scale=0.03, out_zp=2, name="dw")
    a3 = b.op("Clip", [a2], 0.03, 2, extra=[b.const("lo", np.float32(0)), b.const("hi", np.float32(6))])
    a4 = b.conv(a3, 8, 8, k=1, out_scale=0.05, out_zp=-1, name="pw")
    a5 = b.op("Add", [a4, a1], 0.06, 1)
    a6 = b.op("GlobalAveragePool", [a5], 0.02, -3)
    a7 = b.op("Flatten", [a6], 0.02, -3)
    x = b.dequantize(a7)
    w, ws = b.weights((5, 8))
    bias = b.bias(a7[1], ws)
    y = b.name("g")
    b.nodes.append(helper.make_node("Gemm", [x, w, bias], [y], name="fc", transB=1))
    a8 = b.requantize(y, 0.1, 0)
    out = b.dequantize(a8)
    b.nodes.append(helper.make_node("Identity", [out], ["y"], name="out"))
    return model(b.nodes, [vi("x", [1, 3, 8, 8])], [vi("y", [1, 5])], b.inits)


def qdq_single_conv(**bad):
    """Q → DQ → Conv → Q → DQ with per-channel weights; `bad` edits one parameter."""
    b = QdqBuilder(1)
    a0 = b.quantize("x", bad.get("x_scale", 0.02), 0)
    x = b.dequantize(a0)
    w_shape = (4, 3, 3, 3)
    w = b.r.integers(-127, 128, size=w_shape).astype(np.int8) if "w" not in bad else bad["w"]
    ws = bad.get("w_scales", np.full(4, 0.01, np.float32))
    wq = b.const("w", w)
    wf = "wf"
    b.nodes.append(helper.make_node("DequantizeLinear", [wq, b.const("ws", ws), b.const("wz", np.zeros(len(ws), np.int8))],
                                    [wf], name="w_dq", axis=0))
    bias = bad.get("bias", np.zeros(4, np.int32))
    bq = b.const("b", bias)
    bf = "bf"
    b.nodes.append(helper.make_node("DequantizeLinear", [bq, b.const("bs", np.full(4, 0.02 * 0.01, np.float32)),
                                                         b.const("bz", bad.get("bias_zp", np.zeros(4, np.int32)))],
                                    [bf], name="bias_dq", axis=0))
    b.nodes.append(helper.make_node("Conv", [x, wf, bf], ["c"], name="conv", pads=[1, 1, 1, 1]))
    out = b.dequantize(b.requantize("c", 0.05, 0))
    b.nodes.append(helper.make_node("Identity", [out], ["y"], name="out"))
    return model(b.nodes, [vi("x", [1, 3, 6, 6])], [vi("y", [1, 4, 6, 6])], b.inits)


def qlinear_ops():
    """QLinearConv → QLinearMatMul (after a Reshape), quantize / dequantize at the ends."""
    r = np.random.default_rng(2)
    inits = [
        t("xs", np.float32(0.02)), t("xz", np.uint8(128)),
        t("w", r.integers(-127, 128, size=(4, 3, 3, 3)).astype(np.int8)),
        t("ws", (r.random(4) * 0.01 + 0.005).astype(np.float32)), t("wz", np.zeros(4, np.int8)),
        t("ys", np.float32(0.05)), t("yz", np.uint8(120)),
        t("b", r.integers(-500, 500, size=4).astype(np.int32)),
        t("shape", np.array([1, 64], np.int64)),
        t("m", r.integers(0, 256, size=(64, 6)).astype(np.uint8)), t("ms", np.float32(0.01)), t("mz", np.uint8(128)),
        t("zs", np.float32(0.2)), t("zz", np.uint8(128)),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="quant"),
        helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["yq"], name="qconv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Reshape", ["yq", "shape"], ["rq"], name="flat"),
        helper.make_node("QLinearMatMul", ["rq", "ys", "yz", "m", "ms", "mz", "zs", "zz"], ["zq"], name="qmatmul"),
        helper.make_node("DequantizeLinear", ["zq", "zs", "zz"], ["y"], name="dequant"),
    ]
    return model(nodes, [vi("x", [1, 3, 4, 4])], [vi("y", [1, 6])], inits)


def integer_ops():
    """ConvInteger and MatMulInteger: int32 outputs (no requantization), cast to float."""
    r = np.random.default_rng(3)
    inits = [
        t("w", r.integers(0, 256, size=(2, 3, 1, 1)).astype(np.uint8)), t("xz", np.uint8(100)), t("wz", np.uint8(128)),
        t("m", r.integers(-127, 128, size=(4, 5)).astype(np.int8)), t("az", np.int8(0)), t("mz", np.int8(1)),
    ]
    nodes = [
        helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["c"], name="convint"),
        helper.make_node("Cast", ["c"], ["cf"], name="cast", to=F),
        helper.make_node("MatMulInteger", ["a", "m", "az", "mz"], ["p"], name="matmulint"),
        helper.make_node("Cast", ["p"], ["pf"], name="cast_p", to=F),
    ]
    return model(nodes, [vi("x", [1, 3, 2, 2], TensorProto.UINT8), vi("a", [2, 4], TensorProto.INT8)],
                 [vi("cf", [1, 2, 2, 2]), vi("pf", [2, 5])], inits)


def save(m, filename):
    with open(os.path.join(OUT, filename), "wb") as f:
        f.write(m.SerializeToString())


def main():
    save(qdq_block(), "qdq_block.onnx")
    save(qdq_single_conv(), "qdq_conv.onnx")
    save(qlinear_ops(), "qlinear_ops.onnx")
    save(integer_ops(), "integer_ops.onnx")
    # Bad parameters: each names the node and the field.
    save(qdq_single_conv(w_scales=np.array([0.01, -0.5, 0.01, 0.01], np.float32)), "bad_quant_scale_negative.onnx")
    save(qdq_single_conv(x_scale=np.float32("nan")), "bad_quant_scale_nan.onnx")
    save(qdq_single_conv(w_scales=np.array([0.01, np.inf, 0.01, 0.01], np.float32)), "bad_quant_scale_inf.onnx")
    save(qdq_single_conv(w_scales=np.full(3, 0.01, np.float32)), "bad_quant_axis_length.onnx")
    save(qdq_single_conv(bias_zp=np.array([0, 0, 7, 0], np.int32)), "bad_quant_zero_point.onnx")
    save(qdq_single_conv(w=np.full((4, 3, 3, 3), 127, np.int8), bias=np.array([0, 2**31 - 1000, 0, 0], np.int32)),
         "bad_quant_bias_overflow.onnx")


if __name__ == "__main__":
    main()
