#!/usr/bin/python3
"""Writes the tiny ONNX models of tests/data/onnx/ (committed; rerun after a change here).

Run with Debian's interpreter, which sees python3-onnx:  /usr/bin/python3 scripts/make_test_models.py
Every file is a few hundred bytes. Good models exercise import, axis roles, the lint and
export; bad_* models are crafted to be refused with exit code 2 (DESIGN.md §9).
"""
import os
import random

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "onnx")
F = TensorProto.FLOAT


def model(nodes, inputs, outputs, inits=(), opset=13, name="main", value_info=(), check=True, ir_version=8):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits), value_info=list(value_info))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="make_test_models")
    m.ir_version = ir_version
    if check:
        onnx.checker.check_model(m)
    return m


def t(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def save(m, filename):
    path = os.path.join(OUT, filename)
    data = m if isinstance(m, bytes) else m.SerializeToString()
    with open(path, "wb") as f:
        f.write(data)
    return data


def rng():
    return np.random.default_rng(0)


def conv_bn_relu():
    """Conv → BatchNormalization → Relu → GlobalAveragePool → Flatten → Gemm (a tiny CNN)."""
    r = rng()
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "gamma", "beta", "mean", "var"], ["n"], name="bn"),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["y"], name="fc", transB=1),
    ]
    inits = [
        t("w", r.standard_normal((4, 3, 3, 3)).astype(np.float32)),
        t("b", r.standard_normal(4).astype(np.float32)),
        t("gamma", np.ones(4, np.float32)),
        t("beta", np.zeros(4, np.float32)),
        t("mean", np.zeros(4, np.float32)),
        t("var", np.ones(4, np.float32)),
        t("fc_w", r.standard_normal((5, 4)).astype(np.float32)),
        t("fc_b", r.standard_normal(5).astype(np.float32)),
    ]
    return model(nodes, [vi("x", [1, 3, 8, 8])], [vi("y", [1, 5])], inits)


def affine(param_shape, x_shape, name):
    """x → Mul(scale) → Add(bias): the seed's per-channel affine with parameters of `param_shape`,
    behind a Conv so x's axes are stated."""
    r = rng()
    c = x_shape[1]
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[1, 1]),
        helper.make_node("Mul", ["c", "scale"], ["m"], name="scale_mul"),
        helper.make_node("Add", ["m", "bias"], ["y"], name="bias_add"),
    ]
    inits = [
        t("w", r.standard_normal((c, c, 1, 1)).astype(np.float32)),
        t("scale", r.uniform(0.5, 1.5, param_shape).astype(np.float32)),
        t("bias", r.standard_normal(param_shape).astype(np.float32)),
    ]
    return model(nodes, [vi("x", x_shape)], [vi("y", x_shape)], inits, name=name)


def typed_and_constant():
    """Initializers in typed fields (not raw_data), a Constant node, int64 and float16."""
    scale = helper.make_tensor("scale", F, [1, 2, 1, 1], [0.5, 2.0])  # float_data
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [1, -1])  # int64_data
    half = helper.make_tensor("h", TensorProto.FLOAT16, [2], [1.0, 2.0])  # make_tensor stores the bits in int32_data
    nodes = [
        helper.make_node("Constant", [], ["offset"], name="offset_const",
                         value=helper.make_tensor("v", F, [1, 2, 1, 1], [1.0, -1.0])),
        helper.make_node("Mul", ["x", "scale"], ["m"], name="mul"),
        helper.make_node("Add", ["m", "offset"], ["a"], name="add"),
        helper.make_node("Reshape", ["a", "shape"], ["y"], name="reshape"),
        helper.make_node("Cast", ["h"], ["hf"], name="cast", to=F),
    ]
    return model(nodes, [vi("x", [1, 2, 3, 3])], [vi("y", [1, 18]), vi("hf", [2])], [scale, shape, half])


def nhwc_input():
    """A TensorFlow-style model: NHWC input, Transpose to NCHW, Conv."""
    r = rng()
    nodes = [
        helper.make_node("Transpose", ["x"], ["xt"], name="to_nchw", perm=[0, 3, 1, 2]),
        helper.make_node("Conv", ["xt", "w"], ["y"], name="conv", kernel_shape=[1, 1]),
    ]
    return model(nodes, [vi("x", [1, 5, 6, 3])], [vi("y", [1, 4, 5, 6])],
                 [t("w", r.standard_normal((4, 3, 1, 1)).astype(np.float32))])


def dynamic_batch():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    return model(nodes, [vi("x", ["N", 3, 4, 4])], [vi("y", ["N", 3, 4, 4])])


def custom_op():
    """An operator of a custom domain: imports (its output shape is declared), cannot run."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("FancyNorm", ["r"], ["y"], name="fancy", domain="com.example")]
    graph = helper.make_graph(nodes, "main", [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
    m.ir_version = 8
    return m


def lrn():
    """An operator the op table knows (channel-first, no workspace) that has no kernel: plans, cannot run."""
    nodes = [helper.make_node("LRN", ["x"], ["y"], name="lrn", size=3)]
    return model(nodes, [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])])


def quantized_per_axis():
    """Per-axis DequantizeLinear on the activation: its `axis` is C."""
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="quant", axis=1),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], name="dequant", axis=1)]
    inits = [t("s", np.array([0.1, 0.2, 0.3], np.float32)), t("z", np.zeros(3, np.uint8))]
    return model(nodes, [vi("x", [2, 3, 5])], [vi("y", [2, 3, 5])], inits)


def bad_window_ranks():
    # Ranks libonnx 1.12's Conv/pool shape inference would index without checking.
    conv = model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
                 [vi("x", [1, 3, 4, 4])], [vi("y", [1, 2, 4, 4])],
                 [t("w", np.zeros([2, 3, 1], np.float32))], check=False)
    pool = model([helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2, 2])],
                 [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 3, 3])], check=False)
    return conv, pool


def bad_models():
    good = conv_bn_relu().SerializeToString()
    save(good[: len(good) // 2], "bad_truncated.onnx")
    garbled = bytearray(good)
    random.seed(3)
    for i in range(0, len(garbled), 7):
        garbled[i] = random.randrange(256)
    save(bytes(garbled), "bad_garbled.onnx")

    save(model([helper.make_node("Conv", ["x", "w_missing"], ["y"], name="conv")],
               [vi("x", [1, 3, 4, 4])], [vi("y", [1, 3, 4, 4])], check=False), "bad_missing_initializer.onnx")
    save(model([helper.make_node("Add", ["x", "b"], ["a"], name="add_a"),
                helper.make_node("Relu", ["a"], ["b"], name="relu_b")],
               [vi("x", [1, 3])], [vi("a", [1, 3])], check=False), "bad_cycle.onnx")
    save(model([helper.make_node("Relu", ["x"], ["r"], name="relu")],
               [vi("x", [1, 3])], [vi("nowhere", [1, 3])], check=False), "bad_dangling_output.onnx")
    save(dynamic_batch(), "bad_dynamic_dims.onnx")
    save(bad_window_ranks()[0], "bad_conv_weight_rank.onnx")
    save(bad_window_ranks()[1], "bad_pool_kernel_shape.onnx")
    big = 1 << 40
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
               [vi("x", [big, big, 16])], [vi("y", [big, big, 16])], check=False), "bad_overflow_shape.onnx")
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
               [vi("x", [1, 3])], [vi("y", [1, 3])], opset=6, check=False), "bad_opset6.onnx")
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
               [vi("x", [1, 3])], [vi("y", [1, 3])], opset=18, check=False), "bad_opset18.onnx")
    # An initializer that declares a million elements and carries 8 bytes.
    lying = TensorProto(name="w", data_type=F, dims=[1000, 1000], raw_data=b"\0" * 8)
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
               [vi("x", [1000, 1000])], [vi("y", [1000, 1000])], [lying], check=False), "bad_initializer_size.onnx")
    # An If node: subgraph attributes are not supported.
    branch = helper.make_graph([helper.make_node("Identity", ["x"], ["o"])], "branch", [], [vi("o", [1])])
    save(model([helper.make_node("If", ["c"], ["y"], name="choose", then_branch=branch, else_branch=branch)],
               [vi("c", [], TensorProto.BOOL), vi("x", [1])], [vi("y", [1])], check=False), "bad_if_subgraph.onnx")
    # External data that points outside the model's folder.
    outside = TensorProto(name="w", data_type=F, dims=[2], data_location=TensorProto.EXTERNAL)
    outside.external_data.add(key="location", value="../../../../etc/hostname")
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
               [vi("x", [2])], [vi("y", [2])], [outside], check=False), "bad_external_escape.onnx")


def external_data():
    """An initializer stored in a file next to the model."""
    w = TensorProto(name="w", data_type=F, dims=[1, 3, 1, 1], data_location=TensorProto.EXTERNAL)
    for k, v in (("location", "external_weights.bin"), ("offset", "4"), ("length", "12")):
        w.external_data.add(key=k, value=v)
    with open(os.path.join(OUT, "external_weights.bin"), "wb") as f:
        f.write(b"\0\0\0\0" + np.array([1.0, 2.0, 3.0], np.float32).tobytes())
    return model([helper.make_node("Mul", ["x", "w"], ["y"], name="mul")],
                 [vi("x", [1, 3, 2, 2])], [vi("y", [1, 3, 2, 2])], [w], check=False)


def main():
    os.makedirs(OUT, exist_ok=True)
    save(conv_bn_relu(), "conv_bn_relu.onnx")
    save(affine([1, 12, 1, 1], [1, 12, 20, 28], "affine_distinct"), "affine_distinct.onnx")
    save(affine([20], [1, 20, 16, 20], "affine_c_eq_w"), "affine_c_eq_w.onnx")
    save(affine([1, 20, 1, 1], [1, 20, 16, 20], "affine_c_eq_w_stated"), "affine_c_eq_w_stated.onnx")
    save(affine([28], [1, 12, 20, 28], "affine_vector_w"), "affine_vector_w.onnx")
    save(affine([16, 1, 1], [1, 16, 16, 28], "affine_c_eq_h"), "affine_c_eq_h.onnx")
    save(typed_and_constant(), "typed_and_constant.onnx")
    save(nhwc_input(), "nhwc_input.onnx")
    save(custom_op(), "custom_op.onnx")
    save(lrn(), "lrn.onnx")
    save(quantized_per_axis(), "quantized_per_axis.onnx")
    save(external_data(), "external_data.onnx")
    bad_models()


if __name__ == "__main__":
    main()
