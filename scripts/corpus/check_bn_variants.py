#!/usr/bin/python3
"""Check a corpus folder written by export_torchvision.py.

For every model in manifest.json, both variants must:
  - match the sha256 the manifest records,
  - pass onnx.checker.check_model(full_check=True) and strict shape inference,
  - use opset 13 and have the recorded static input and output shapes;
the .bn.onnx variant must hold one BatchNormalization node per BatchNorm module of the
torch model, and the folded .onnx variant only those that have no Conv to fold into
(densenet's pre-activation BatchNorms follow a Concat, for example); apart from
BatchNormalization and Identity both variants must have the same operators. The input and
reference output files must match their recorded hashes too.

Exit status 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

import onnx
import onnx.shape_inference


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def static_shape(value_info) -> list[int | str]:
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
            for d in value_info.type.tensor_type.shape.dim]


def unfoldable_batchnorms(model: onnx.ModelProto) -> int:
    """BatchNormalization nodes the exporter cannot fold: their input does not come from a
    Conv, or that Conv's output has other consumers too (maxvit's pre_norm after the stem)."""
    producer = {out: node.op_type for node in model.graph.node for out in node.output}
    consumers = Counter(name for node in model.graph.node for name in node.input)
    return sum(1 for node in model.graph.node
               if node.op_type == "BatchNormalization"
               and (producer.get(node.input[0]) != "Conv" or consumers[node.input[0]] > 1))


def check_file(path: Path, entry: dict, variant: dict) -> tuple[list[str], onnx.ModelProto | None]:
    problems = []
    if not path.is_file():
        return [f"{path.name}: missing"], None
    if sha256_file(path) != variant["sha256"]:
        problems.append(f"{path.name}: sha256 differs from the manifest")
    model = onnx.load(str(path))
    try:
        onnx.checker.check_model(model, full_check=True)
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except Exception as e:  # noqa: BLE001 - report every model, not only the first bad one
        problems.append(f"{path.name}: {type(e).__name__}: {e}")
    opsets = {o.domain: o.version for o in model.opset_import}
    if opsets.get("", opsets.get("ai.onnx")) != entry["opset"]:
        problems.append(f"{path.name}: opset {opsets}, expected {entry['opset']}")
    inputs = [i for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    if [i.name for i in inputs] != [entry["input_name"]] or static_shape(inputs[0]) != entry["input_shape"]:
        problems.append(f"{path.name}: inputs {[(i.name, static_shape(i)) for i in inputs]}, "
                        f"expected {entry['input_name']} {entry['input_shape']}")
    outputs = [(o.name, static_shape(o)) for o in model.graph.output]
    if outputs != [(entry["output_name"], entry["output_shape"])]:
        problems.append(f"{path.name}: outputs {outputs}, expected {entry['output_name']} {entry['output_shape']}")
    return problems, model


def check_model(out: Path, name: str, entry: dict) -> list[str]:
    problems = []
    variants = {v["variant"]: v for v in entry["variants"]}
    if set(variants) != {"folded", "bn"}:
        return [f"variants {sorted(variants)}, expected folded and bn"]
    models = {}
    for kind, variant in variants.items():
        found, models[kind] = check_file(out / variant["file"], entry, variant)
        problems += found
    for field in ("input", "reference_output"):
        path = out / entry[field]["file"]
        if not path.is_file() or sha256_file(path) != entry[field]["sha256"]:
            problems.append(f"{path.name}: missing or sha256 differs from the manifest")
    if models["bn"] is None or models["folded"] is None:
        return problems

    def count(kind):
        return sum(1 for n in models[kind].graph.node if n.op_type == "BatchNormalization")

    # Identity is left out: the exporter turns identical initializers into one initializer
    # plus Identity nodes, and which are identical differs between the variants (vgg's
    # zero conv biases are only identical before folding).
    def other_ops(kind):
        return Counter(n.op_type for n in models[kind].graph.node
                       if n.op_type not in ("BatchNormalization", "Identity"))

    if other_ops("bn") != other_ops("folded"):
        problems.append(f"variants differ in more than BatchNormalization: folded has "
                        f"{dict(other_ops('folded') - other_ops('bn'))} more, bn has "
                        f"{dict(other_ops('bn') - other_ops('folded'))} more")
    kept, folded = count("bn"), count("folded")
    if kept != entry["batchnorm_modules"]:
        problems.append(f"{variants['bn']['file']}: {kept} BatchNormalization nodes, "
                        f"expected one per BatchNorm module ({entry['batchnorm_modules']})")
    if folded != unfoldable_batchnorms(models["bn"]):
        problems.append(f"{variants['folded']['file']}: {folded} BatchNormalization nodes, expected only the "
                        f"{unfoldable_batchnorms(models['bn'])} without a Conv before them")
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="folder holding manifest.json")
    parser.add_argument("--models", help="comma-separated subset of the manifest's models")
    args = parser.parse_args(argv)

    manifest = json.loads((args.corpus / "manifest.json").read_text())
    names = args.models.split(",") if args.models else list(manifest["models"])
    failures = 0
    for name in names:
        entry = manifest["models"].get(name)
        problems = check_model(args.corpus, name, entry) if entry else ["not in the manifest"]
        if problems:
            failures += 1
            print(f"FAIL {name}")
            for p in problems:
                print(f"     {p}")
        else:
            bn = {v["variant"]: v["batchnorm_nodes"] for v in entry["variants"]}
            print(f"ok   {name}: BatchNormalization kept {bn['bn']}, left after folding {bn['folded']}")
    print(f"check_bn_variants: {len(names) - failures} ok, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
