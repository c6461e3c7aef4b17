#!/usr/bin/python3
"""Runs a .tflite model with Arm NN (Debian's python3-pyarmnn, Arm NN 20.08, the CpuRef
reference backend from libarmnn-cpuref-backend22) on seeded inputs and writes the inputs
and outputs as .npy, the outside reference for `memledger run MODEL.tflite`.

    armnn_reference.py MODEL.tflite OUT_DIR [--seed N] [--bias-axis-zero] [--repeat N]

OUT_DIR receives inputs/<i>.npy, outputs/<i>.npy (in the subgraph's order) and
manifest.json (tensor names, shapes, dtypes, files). Integer inputs are uniform over their
type's range, float inputs uniform in [-1, 1), from numpy's default_rng(seed).

--repeat N times N more runs of the loaded network on the same inputs after the first and
prints their median wall time in milliseconds ("armnn latency: median X ms over N runs",
also in manifest.json as "median_ms"): the outside timing for bench/tflite/tflite_latency.sh.

--bias-axis-zero runs Arm NN on a copy of the model in which every 1-D tensor's per-axis
quantization names axis 0 (the only axis a 1-D tensor has): TFLite's converter writes
quantized_dimension 3 on person_detect's depthwise biases, which Arm NN 20.08 refuses; the
values are untouched, so the copy computes the same numbers. The manifest lists the
tensors it changed.

Exit 0 when Arm NN ran the model; 3 when Arm NN refuses it (its parser or its CpuRef
workloads): the exact error is printed on stderr and stored in manifest.json as "refused";
2 for bad usage or a missing Arm NN. Arm NN's reference backend computes quantized
operators by dequantizing to float and requantizing, so its int8 outputs may differ from
TFLite's fixed-point arithmetic by one unit.
"""
import argparse
import json
import os
import sys

import numpy as np


def fail_usage(message):
    print(f"armnn_reference.py: {message}", file=sys.stderr)
    sys.exit(2)


def numpy_dtype(ann, data_type):
    table = {
        ann.DataType_QAsymmS8: np.int8,
        ann.DataType_QSymmS8: np.int8,
        ann.DataType_QAsymmU8: np.uint8,
        ann.DataType_QSymmS16: np.int16,
        ann.DataType_Signed32: np.int32,
        ann.DataType_Float32: np.float32,
    }
    if data_type not in table:
        raise RuntimeError(f"Arm NN data type {data_type} has no numpy type here")
    return table[data_type]


def seeded_input(rng, dtype, shape):
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=np.int64).astype(dtype)
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def bias_axis_zero(model_bytes):
    """A copy of the flatbuffer with each 1-D tensor's quantized_dimension set to 0 in place
    (the field is an int32 the file already holds), and the names of the tensors changed."""
    import flatbuffers
    from flatbuffers import number_types as N
    from flatbuffers.table import Table

    buf = bytearray(model_bytes)

    def root():
        return Table(buf, flatbuffers.encode.Get(N.UOffsetTFlags.packer_type, buf, 0))

    def tables(t, slot):
        o = t.Offset(4 + 2 * slot)
        if not o:
            return []
        start = t.Vector(o)
        return [Table(buf, t.Indirect(start + 4 * i)) for i in range(t.VectorLen(o))]

    def vector_len(t, slot):
        o = t.Offset(4 + 2 * slot)
        return t.VectorLen(o) if o else 0

    changed = []
    for subgraph in tables(root(), 2):           # Model.subgraphs
        for tensor in tables(subgraph, 0):       # SubGraph.tensors
            if vector_len(tensor, 0) != 1:       # Tensor.shape: 1-D only
                continue
            q = tensor.Offset(4 + 2 * 4)         # Tensor.quantization
            if not q:
                continue
            quant = Table(buf, tensor.Indirect(q + tensor.Pos))
            dim = quant.Offset(4 + 2 * 6)        # QuantizationParameters.quantized_dimension
            if dim and quant.Get(N.Int32Flags, dim + quant.Pos) != 0:
                flatbuffers.encode.Write(N.Int32Flags.packer_type, buf, dim + quant.Pos, 0)
                name_off = tensor.Offset(4 + 2 * 3)
                changed.append(tensor.String(name_off + tensor.Pos).decode() if name_off else "?")
    return bytes(buf), changed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("out_dir")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bias-axis-zero", action="store_true")
    parser.add_argument("--repeat", type=int, default=0)
    args = parser.parse_args()
    if not os.path.isfile(args.model):
        fail_usage(f"{args.model}: no such file")
    try:
        import pyarmnn as ann  # noqa: E402 (prints notes about parsers it lacks)
    except ImportError as e:
        fail_usage(f"pyarmnn is not installed (Debian: python3-pyarmnn): {e}")

    os.makedirs(os.path.join(args.out_dir, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(args.out_dir, "outputs"), exist_ok=True)
    manifest = {"model": os.path.abspath(args.model), "armnn": ann.ARMNN_VERSION, "backend": "CpuRef",
                "seed": args.seed, "inputs": [], "outputs": []}

    def write_manifest():
        with open(os.path.join(args.out_dir, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1)

    model_file = args.model
    if args.bias_axis_zero:
        with open(args.model, "rb") as f:
            patched, changed = bias_axis_zero(f.read())
        model_file = os.path.join(args.out_dir, "bias_axis_zero.tflite")
        with open(model_file, "wb") as f:
            f.write(patched)
        manifest["bias_axis_zero"] = changed
    try:
        tfl = ann.ITfLiteParser()
        network = tfl.CreateNetworkFromBinaryFile(model_file)
        runtime = ann.IRuntime(ann.CreationOptions())
        backends = [ann.BackendId("CpuRef")]
        optimized, _ = ann.Optimize(network, backends, runtime.GetDeviceSpec(), ann.OptimizerOptions())
        net_id, _ = runtime.LoadNetwork(optimized)
    except Exception as e:  # Arm NN reports refusals as RuntimeError with its message
        manifest["refused"] = str(e).strip()
        write_manifest()
        print(f"Arm NN refuses {args.model}: {manifest['refused']}", file=sys.stderr)
        if "None of the preferred backends" in str(e):
            print("(is libarmnn-cpuref-backend22 installed?)", file=sys.stderr)
        sys.exit(3)

    rng = np.random.default_rng(args.seed)
    bindings, arrays = [], []
    for i, name in enumerate(tfl.GetSubgraphInputTensorNames(0)):
        binding = tfl.GetNetworkInputBindingInfo(0, name)
        info = binding[1]
        dtype = numpy_dtype(ann, info.GetDataType())
        shape = tuple(info.GetShape()[d] for d in range(info.GetNumDimensions()))
        data = seeded_input(rng, dtype, shape)
        path = os.path.join(args.out_dir, "inputs", f"{i}.npy")
        np.save(path, data)
        manifest["inputs"].append({"name": name, "file": path, "shape": list(shape), "dtype": str(data.dtype)})
        bindings.append(binding)
        arrays.append(data)
    out_bindings = [tfl.GetNetworkOutputBindingInfo(0, n) for n in tfl.GetSubgraphOutputTensorNames(0)]
    try:
        inputs = ann.make_input_tensors(bindings, arrays)
        outputs = ann.make_output_tensors(out_bindings)
        runtime.EnqueueWorkload(net_id, inputs, outputs)
        results = ann.workload_tensors_to_ndarray(outputs)
        if args.repeat > 0:
            import time  # noqa: E402
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                runtime.EnqueueWorkload(net_id, inputs, outputs)
                times.append((time.perf_counter() - start) * 1000.0)
            manifest["median_ms"] = float(np.median(times))
            print(f"armnn latency: median {manifest['median_ms']:.3f} ms over {args.repeat} runs")
    except Exception as e:
        manifest["refused"] = str(e).strip()
        write_manifest()
        print(f"Arm NN fails to run {args.model}: {manifest['refused']}", file=sys.stderr)
        sys.exit(3)
    for i, (name, result) in enumerate(zip(tfl.GetSubgraphOutputTensorNames(0), results)):
        info = out_bindings[i][1]
        dtype = numpy_dtype(ann, info.GetDataType())
        shape = tuple(info.GetShape()[d] for d in range(info.GetNumDimensions()))
        data = np.asarray(result).astype(dtype).reshape(shape)
        path = os.path.join(args.out_dir, "outputs", f"{i}.npy")
        np.save(path, data)
        manifest["outputs"].append({"name": name, "file": path, "shape": list(shape), "dtype": str(data.dtype)})
    write_manifest()


if __name__ == "__main__":
    main()
