#!/usr/bin/python3
"""Export torchvision classification models to ONNX for memledger's model corpus.

Every model is exported with seeded random weights (no downloads), in eval mode, with a
static batch of 1 and ONNX opset 13, in two variants:

  <name>.onnx     as the exporter writes it: BatchNormalization folded into the Conv before it
  <name>.bn.onnx  BatchNormalization kept as inference BatchNormalization nodes

plus <name>.input.npy (a seeded float32 input) and <name>.output.npy (torch's output for
that input, a reference for both variants). manifest.json in the output folder lists
every file. Files whose manifest entry was made by the same generator version (see
GENERATOR_VERSION), seed, opset and library versions are not exported again; a run with
nothing to do never imports torch.

BatchNorm running statistics are randomised (torch initialises them to mean 0, var 1,
which would make folding a no-op numerically).

Run with /usr/bin/python3 (Debian's python3-torch, python3-torchvision, python3-onnx).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import io
import json
import os
import sys
import time
import zlib
from pathlib import Path

OPSET = 13
# Opset used when the exporter cannot write a model at OPSET (an operator it only has a
# symbolic for at a later opset).
FALLBACK_OPSET = 17
DEFAULT_MODELS = [
    "resnet18",
    "mobilenet_v2",
    "squeezenet1_0",
    "shufflenet_v2_x1_0",
    "efficientnet_b0",
    "mnasnet0_5",
]
# Segmentation models exported besides the classifiers (their "out" head only; no
# auxiliary classifier, no pretrained backbone).
SEGMENTATION_MODELS = ["fcn_resnet50", "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"]
# Input side length where 224 does not fit the architecture's design.
INPUT_SIDE = {"inception_v3": 299}
# Extra builder arguments, only to pin defaults that torchvision warns will change, and to
# keep segmentation models from downloading a pretrained backbone.
BUILDER_KWARGS = {"googlenet": {"init_weights": True}, "inception_v3": {"init_weights": True},
                  **{name: {"weights_backbone": None} for name in SEGMENTATION_MODELS}}
# A single ONNX protobuf cannot exceed 2 GiB: bigger models keep their weights as ONNX
# external data in <name>.onnx.data next to the model.
PROTOBUF_LIMIT = 2**31 - 1
VARIANTS = ("folded", "bn")
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1
# The version of what this script writes: bump it when an edit would change the exported
# graphs or weights of a model it already exports (the cache is keyed on it, so a bump
# re-exports everything; an edit that changes nothing exported, such as a new model or
# option, keeps it). Before it existed the key was the script's own sha256, which made any
# edit discard the whole cache.
GENERATOR_VERSION = 1
# Script hashes of the keys written before GENERATOR_VERSION, whose exports are version 1's
# (bf7197b to 1cb9981: later ones added models, options and a symbolic for a model that did
# not export before, and left every exported graph as it was). load_manifest rewrites them.
VERSION_1_SCRIPT_SHA256 = {
    "3e0e63dae1d4e51bbf7d2ff8658aa9342664484b8204cdb7c873cfad426206e7",
    "8baa9461f0362e1438fa67cd1dfe0833943c5d341d1641844010b952ce36cbfa",
    "2126ad8647ed912471df7de0e8591aa7a4e3546d9dba14be84c76f2f1714ce6b",
    "0e85079d43c5ec5d7dbaf34f3d84d366e2513c412d95623cc0f217d57d6c1bc6",
    "a0207929fc9c5b96ae665380e0df055aea23f26276ebafaa5fb1d5236e376931",
}


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def generator_key(seed: int, input_side: int | None = None) -> dict:
    """Everything that decides the bytes of an exported file, without importing torch."""
    side = {"input_side": input_side} if input_side else {}
    return side | {
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "opset": OPSET,
        "torch": importlib.metadata.version("torch"),
        "torchvision": importlib.metadata.version("torchvision"),
        "onnx": importlib.metadata.version("onnx"),
        "numpy": importlib.metadata.version("numpy"),
    }


def model_seed(seed: int, name: str) -> int:
    """Per-model seed, so a model's weights do not depend on which others are exported."""
    return (seed * 1_000_003 + zlib.crc32(name.encode())) % 2**31


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def migrate_key(key):
    """A generator key of the script-hash days, as the version key it equals (the same dict
    with generator_version 1 for a known hash in the same place); anything else unchanged."""
    if not isinstance(key, dict) or key.get("script_sha256") not in VERSION_1_SCRIPT_SHA256:
        return key
    return {("generator_version" if k == "script_sha256" else k): (1 if k == "script_sha256" else v)
            for k, v in key.items()}


def load_manifest(out: Path) -> dict:
    try:
        manifest = json.loads((out / MANIFEST).read_text())
        if manifest.get("format") == MANIFEST_FORMAT:
            for group in ("models", "skipped"):
                for entry in manifest.get(group, {}).values():
                    if isinstance(entry, dict) and "generator" in entry:
                        entry["generator"] = migrate_key(entry["generator"])
            if "generator" in manifest:
                manifest["generator"] = migrate_key(manifest["generator"])
            return manifest
    except (OSError, ValueError):
        pass
    return {"format": MANIFEST_FORMAT, "models": {}}


def save_manifest(out: Path, manifest: dict) -> None:
    manifest["models"] = dict(sorted(manifest["models"].items()))
    write_atomic(out / MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode())


def is_cached(out: Path, entry: dict | None, key: dict, variants=VARIANTS) -> bool:
    """Same generator key, the asked variants made, and every listed file present with its
    recorded size.

    Sizes, not hashes, keep a no-op run fast; check_bn_variants.py re-hashes."""
    if not entry or entry.get("generator") != key:
        return False
    if not set(variants) <= {v["variant"] for v in entry["variants"]}:
        return False
    files = [v for v in entry["variants"]] + [entry["input"], entry["reference_output"]]
    files += [v["external_data"] for v in entry["variants"] if "external_data" in v]
    return all((out / f["file"]).is_file() and (out / f["file"]).stat().st_size == f["bytes"] for f in files)


def all_classification_models() -> list[str]:
    import torchvision.models

    return sorted(torchvision.models.list_models(module=torchvision.models)) + SEGMENTATION_MODELS


def randomise_batchnorm(model, generator) -> list:
    """Gives every BatchNorm seeded non-trivial statistics and affine parameters."""
    import torch

    batchnorms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        for module in batchnorms:
            n = module.num_features
            module.running_mean.copy_(torch.randn(n, generator=generator) * 0.1)
            module.running_var.copy_(torch.rand(n, generator=generator) + 0.5)
            if module.affine:
                module.weight.copy_(torch.rand(n, generator=generator) + 0.5)
                module.bias.copy_(torch.randn(n, generator=generator) * 0.1)
    return batchnorms


def reinit_zero_weights(model) -> None:
    """Gives all-zero weights PyTorch's default initialisation: vit zero-initialises its
    head, which would make every output 0 and the reference output worthless."""
    import torch

    with torch.no_grad():
        for module in model.modules():
            weight = getattr(module, "weight", None)
            if (isinstance(module, (torch.nn.Linear, torch.nn.modules.conv._ConvNd))
                    and weight is not None and not weight.any()):
                module.reset_parameters()


def run_counting_calls(model, modules, x):
    """Runs model on x and counts the calls of `modules`: the BatchNorms an export holds
    (inception_v3's and googlenet's auxiliary classifiers are not run in eval mode)."""
    import torch

    calls = [0]
    hooks = [m.register_forward_hook(lambda *_: calls.__setitem__(0, calls[0] + 1)) for m in modules]
    try:
        with torch.no_grad():
            return model(x), calls[0]
    finally:
        for h in hooks:
            h.remove()


def finish_export(onnx_bytes: bytes, output_shape: list[int]) -> tuple[bytes, int, bool]:
    """Returns the file's bytes, its BatchNormalization count and whether the output shape
    had to be declared: for some models (swin) the exporter's shape inference loses the
    static batch dimension of the output, which torch's own output shape gives back."""
    import onnx

    model = onnx.load_from_string(onnx_bytes)
    batchnorms = sum(1 for node in model.graph.node if node.op_type == "BatchNormalization")
    (output,) = model.graph.output
    dims = output.type.tensor_type.shape.dim
    if [d.dim_value if d.HasField("dim_value") else None for d in dims] == output_shape:
        return onnx_bytes, batchnorms, False
    del dims[:]
    for size in output_shape:
        dims.add().dim_value = size
    return model.SerializeToString(), batchnorms, True


class SegmentationOut:
    """Wraps a torchvision segmentation model so it returns its "out" tensor alone."""

    @staticmethod
    def wrap(model):
        import torch

        class Wrapped(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, x):
                return self.inner(x)["out"]

        return Wrapped(model)


def export_onnx(model, x, training, opset: int, external: bool, out: Path, filename: str):
    """torch.onnx.export into bytes; with external=True the weights go to <filename>.data
    (one file) and the bytes hold the graph only. Returns (bytes, external data file or None)."""
    import tempfile

    import onnx
    import torch

    kwargs = dict(opset_version=opset, training=training, do_constant_folding=True, input_names=["input"],
                  output_names=[getattr(model, "output_name", "logits")])
    if not external:
        buf = io.BytesIO()
        torch.onnx.export(model, x, buf, **kwargs)
        return buf.getvalue(), None
    # Over 2 GiB the exporter writes one file per tensor next to the model; gather them
    # into one data file beside the final model.
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        path = Path(tmp) / filename
        torch.onnx.export(model, x, str(path), **kwargs)
        proto = onnx.load(str(path), load_external_data=True)
    data_name = filename + ".data"
    (out / data_name).unlink(missing_ok=True)
    onnx.save_model(proto, str(out / filename), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data_name, size_threshold=1024)
    data = (out / filename).read_bytes()
    return data, data_name


def export_model(name: str, out: Path, key: dict, variants=VARIANTS) -> dict:
    """Exports one model's files and returns its manifest entry."""
    import numpy as np
    import torch
    import torchvision.models

    started = time.monotonic()
    seed = model_seed(key["seed"], name)
    torch.manual_seed(seed)
    model = torchvision.models.get_model(name, weights=None, **BUILDER_KWARGS.get(name, {}))
    segmentation = name in SEGMENTATION_MODELS
    if segmentation:
        model = SegmentationOut.wrap(model)
        model.output_name = "out"
    model.eval()
    param_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    param_bytes += sum(b.numel() * b.element_size() for b in model.buffers())
    external = param_bytes > PROTOBUF_LIMIT * 0.9
    batchnorm_modules = randomise_batchnorm(model, torch.Generator().manual_seed(seed))
    reinit_zero_weights(model)

    side = key.get("input_side") or INPUT_SIDE.get(name, 224)
    shape = [1, 3, side, side]
    x = np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)
    y, batchnorms = run_counting_calls(model, batchnorm_modules, torch.from_numpy(x))
    if not isinstance(y, torch.Tensor):
        raise RuntimeError(f"model returned {type(y).__name__}, expected one tensor")
    y = y.numpy()
    if not np.isfinite(y).all():
        raise RuntimeError("reference output is not finite")

    entry = {
        "generator": key,
        "input_name": "input",
        "input_shape": shape,
        "output_name": "out" if segmentation else "logits",
        "output_shape": list(y.shape),
        "opset": OPSET,
        "batchnorm_modules": batchnorms,  # those the forward pass runs
        "parameter_bytes": param_bytes,
        "variants": [],
    }
    for variant, filename, training in (
        ("folded", f"{name}.onnx", torch.onnx.TrainingMode.EVAL),
        # PRESERVE keeps the model's own mode (eval) but skips the exporter's eval-only
        # peephole pass, which is what fuses Conv+BatchNormalization. The BN symbolic
        # still emits inference BatchNormalization because the model is in eval mode.
        ("bn", f"{name}.bn.onnx", torch.onnx.TrainingMode.PRESERVE),
    ):
        if variant not in variants:
            continue
        try:
            raw, data_file = export_onnx(model, torch.from_numpy(x), training, entry["opset"], external, out, filename)
        except Exception:  # noqa: BLE001 - the exporter raises many kinds; retry at the later opset
            if entry["opset"] == FALLBACK_OPSET:
                raise
            entry["opset"] = FALLBACK_OPSET
            raw, data_file = export_onnx(model, torch.from_numpy(x), training, entry["opset"], external, out, filename)
        data, batchnorm_nodes, declared = finish_export(raw, entry["output_shape"])
        write_atomic(out / filename, data)
        record = {
            "variant": variant,
            "file": filename,
            "sha256": sha256_of(data),
            "bytes": len(data),
            "batchnorm_nodes": batchnorm_nodes,
            "output_shape_declared": declared,
        }
        if data_file:
            record["external_data"] = {"file": data_file, "bytes": (out / data_file).stat().st_size}
        entry["variants"].append(record)
    for field, filename, array in (("input", f"{name}.input.npy", x), ("reference_output", f"{name}.output.npy", y)):
        buf = io.BytesIO()
        np.save(buf, array)
        data = buf.getvalue()
        write_atomic(out / filename, data)
        entry[field] = {"file": filename, "sha256": sha256_of(data), "bytes": len(data)}
    entry["export_seconds"] = round(time.monotonic() - started, 2)
    return entry


class SkipModel(Exception):
    """A model the corpus cannot hold, with the reason; not an export failure."""


def quiet_exporter() -> None:
    import warnings

    import torch

    # The exporter warns about constant folding for every non-EVAL training mode, even
    # when the model itself is in eval mode as here.
    warnings.filterwarnings("ignore", message="It is recommended that constant folding be turned off")
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    warnings.filterwarnings("ignore", message="torch.meshgrid: in an upcoming release")  # inside maxvit


def register_missing_symbolics() -> None:
    """Symbolics torch 1.13's exporter lacks for ops torchvision's forward passes use.

    swin_v2's attention zeroes the key third of a clone of its qkv bias
    (`qkv_bias[length:2*length].zero_()`), which the exporter turns into the out-of-place
    `aten::zero` and then refuses at every opset. Its value is zeros of the input's shape;
    the exporter's constant folding folds the whole bias computation into an initializer.
    Registering it changes nothing for models without the op."""
    import torch
    from torch.onnx import symbolic_opset9

    for opset in (OPSET, FALLBACK_OPSET):
        torch.onnx.register_custom_op_symbolic("aten::zero", lambda g, self: symbolic_opset9.zeros_like(g, self),
                                               opset)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--models", help="comma-separated model names (default: %s)" % ",".join(DEFAULT_MODELS))
    which.add_argument("--all", action="store_true", help="every classification model in torchvision.models")
    parser.add_argument("--out", type=Path, default=Path("corpus"), help="output folder (default: ./corpus)")
    parser.add_argument("--seed", type=int, default=0, help="base seed for weights and inputs (default: 0)")
    parser.add_argument("--input-side", type=int, metavar="N",
                        help="input images of N x N for every model (default: 224; inception_v3 299)")
    parser.add_argument("--list", action="store_true", help="print the model names that would be exported and exit")
    parser.add_argument("--force", action="store_true", help="export even when the cached files are current")
    parser.add_argument("--verify", action="store_true", help="run check_bn_variants.py on the output afterwards")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="variants to export, of folded,bn (default: both)")
    args = parser.parse_args(argv)

    if args.all:
        names = all_classification_models()
    elif args.models:
        names = [n.strip() for n in args.models.split(",") if n.strip()]
    else:
        names = list(DEFAULT_MODELS)
    variants = tuple(v.strip() for v in args.variants.split(",") if v.strip())
    if not variants or not set(variants) <= set(VARIANTS):
        parser.error(f"--variants takes a comma-separated subset of {','.join(VARIANTS)}")
    if args.list:
        print("\n".join(names))
        return 0

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    if args.input_side is not None and not 16 <= args.input_side <= 4096:
        parser.error(f"--input-side {args.input_side}: expected 16 to 4096")
    key = generator_key(args.seed, args.input_side)
    manifest = load_manifest(out)
    # Entries made by another script version, seed or library version are stale: drop
    # them and their files so the folder never mixes corpora.
    for name, entry in list(manifest.get("skipped", {}).items()):
        if entry.get("generator") != key:
            del manifest["skipped"][name]
    for name, entry in list(manifest["models"].items()):
        if entry.get("generator") != key:
            for f in (entry.get("variants", []) + [entry.get("input", {}), entry.get("reference_output", {})] +
                      [v["external_data"] for v in entry.get("variants", []) if "external_data" in v]):
                if "file" in f:
                    (out / f["file"]).unlink(missing_ok=True)
            del manifest["models"][name]
    manifest["generator"] = key
    manifest.setdefault("skipped", {})

    # A model skipped as too big under the same key stays skipped without a retry.
    todo = [n for n in names if args.force or not (is_cached(out, manifest["models"].get(n), key, variants)
                                                   or manifest["skipped"].get(n, {}).get("generator") == key)]
    print(f"corpus: {len(names)} models, {len(names) - len(todo)} cached, {len(todo)} to export into {out}")
    if todo:
        import torchvision.models

        quiet_exporter()
        register_missing_symbolics()
        known = set(torchvision.models.list_models(module=torchvision.models)) | set(SEGMENTATION_MODELS)
    failed, skipped = {}, {}
    started = time.monotonic()
    for i, name in enumerate(todo, 1):
        prefix = f"[{i}/{len(todo)}] {name}"
        if name not in known:
            failed[name] = "not a torchvision classification model"
            print(f"{prefix}: FAILED: {failed[name]}", flush=True)
            continue
        try:
            entry = export_model(name, out, key, variants)
        except SkipModel as e:
            skipped[name] = str(e)
            manifest["skipped"][name] = {"reason": str(e), "generator": key}
            save_manifest(out, manifest)
            print(f"{prefix}: SKIPPED: {e}", flush=True)
            continue
        except Exception as e:  # noqa: BLE001 - one model's failure must not stop the others
            failed[name] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            print(f"{prefix}: FAILED: {failed[name]}", flush=True)
            continue
        manifest["models"][name] = entry
        manifest["skipped"].pop(name, None)
        save_manifest(out, manifest)
        sizes = "+".join(f"{v['bytes'] / 2**20:.1f}" for v in entry["variants"])
        bns = "/".join(str(v["batchnorm_nodes"]) for v in entry["variants"])
        print(f"{prefix}: {entry['export_seconds']:.1f}s, {sizes} MiB, BatchNormalization nodes "
              f"folded/kept {bns}", flush=True)
    save_manifest(out, manifest)
    if todo:
        print(f"corpus: exported {len(todo) - len(failed) - len(skipped)} in {time.monotonic() - started:.1f}s, "
              f"{len(skipped)} skipped, {len(failed)} failed")
    for name, reason in failed.items():
        print(f"  failed  {name}: {reason}")
    for name in names:
        if name in manifest["skipped"]:
            print(f"  skipped {name}: {manifest['skipped'][name]['reason']}")

    status = 1 if failed else 0
    if args.verify:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import check_bn_variants

        status |= check_bn_variants.main([str(out)])
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
