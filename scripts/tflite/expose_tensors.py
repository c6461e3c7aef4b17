#!/usr/bin/env python3
"""Writes a copy of a .tflite model whose first subgraph lists every tensor an operator writes
as a graph output (after the model's own outputs), so a runtime's intermediate values can be
compared, not only its final ones.

    expose_tensors.py MODEL.tflite OUT.tflite [--bias-axis-zero]

Variables (an SVDF's state) stay as they are: they are no operator's output here. A tensor
without a name is named tensor_<index>, as memledger names it, so both runtimes name every
output alike. --bias-axis-zero also sets each 1-D tensor's per-axis quantization to axis 0
(person_detect's depthwise biases name axis 3, which TFLite's interpreter refuses; the values
are untouched). The model is read and written with the object API that flatc generates from
memledger's own schema (src/tflite/schema.fbs) into a temporary folder, so what the schema
leaves out (metadata memledger does not read) is not copied. Exit status 2 on bad arguments.
"""
import argparse
import os
import subprocess
import sys
import tempfile


def generated_api(schema, folder):
    subprocess.run(["flatc", "--python", "--gen-object-api", "-o", folder, schema], check=True)
    sys.path.insert(0, folder)
    import flatbuffers  # noqa: F401 (the generated code imports it)
    from memledger.tflite.fb import Model
    return Model


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("out")
    parser.add_argument("--bias-axis-zero", action="store_true")
    args = parser.parse_args()
    if not os.path.isfile(args.model):
        print(f"{args.model}: no such file", file=sys.stderr)
        return 2
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import flatbuffers
    with tempfile.TemporaryDirectory() as folder:
        Model = generated_api(os.path.join(root, "src", "tflite", "schema.fbs"), folder)
        with open(args.model, "rb") as f:
            buf = bytearray(f.read())
        model = Model.ModelT.InitFromBuf(buf, flatbuffers.encode.Get(flatbuffers.packer.uoffset, buf, 0))
        graph = model.subgraphs[0]
        outputs = list(graph.outputs)
        for op in graph.operators:
            for t in op.outputs:
                if t >= 0 and t not in outputs and not graph.tensors[t].isVariable:
                    outputs.append(t)
        graph.outputs = outputs
        for i, tensor in enumerate(graph.tensors):
            if not tensor.name:
                tensor.name = f"tensor_{i}".encode()
            q = tensor.quantization
            if args.bias_axis_zero and q is not None and tensor.shape is not None and len(tensor.shape) == 1:
                q.quantizedDimension = 0
        builder = flatbuffers.Builder(0)
        builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    with open(args.out, "wb") as f:
        f.write(builder.Output())
    print(f"{args.out}: {len(outputs)} outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
