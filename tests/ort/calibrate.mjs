// Calibration for scripts/corpus/quantize_qdq.py: runs an ONNX model in onnxruntime (CPU, one
// thread, graph optimisations off) on several float32 .npy inputs and writes, for every graph
// output, the smallest and largest value seen over all of them as JSON. The quantizer hands it a
// copy of the float model with every intermediate tensor added as a graph output, so the JSON
// holds the range of each activation (there is no onnxruntime for Debian's Python).
//
//   node tests/ort/calibrate.mjs MODEL.onnx OUT.json INPUT.npy [INPUT.npy ...] [--input NAME] [--save DIR]
//
// OUT.json: {"runs": N, "ranges": {"<tensor>": [min, max], ...}}. The model must have one graph
// input (named by --input when it has more). --save DIR also writes every float output of run i
// as DIR/<i>.<name>.npy (the quantizer's float-against-int8 evaluation, one session for N
// inputs). Exit status 2 on bad arguments or input, 1 when a tensor holds NaN or an infinity.
import { createRequire } from "node:module";
import fs from "node:fs";

const require = createRequire(import.meta.url);
const ort = require("onnxruntime-node");

function fail(message, status = 2) {
  console.error(`calibrate.mjs: ${message}`);
  process.exit(status);
}

// float32 .npy (version 1 or 2, C order), the corpus's input format.
function readFloatNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString("latin1", 0, 6) !== "\x93NUMPY") fail(`${file}: not an .npy file`);
  const major = buf[6];
  const start = major === 1 ? 10 : 12;
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const header = buf.toString("latin1", start, start + headerLen);
  const descr = header.match(/'descr': '([^']*)'/)?.[1];
  if (descr !== "<f4") fail(`${file}: dtype ${descr}, expected float32 ('<f4')`);
  if (header.includes("'fortran_order': True")) fail(`${file}: Fortran order`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(",").filter((s) => s.trim()).map(Number);
  const copy = new Uint8Array(buf.subarray(start + headerLen));
  const count = shape.reduce((a, b) => a * b, 1);
  if (copy.length !== count * 4) fail(`${file}: ${copy.length} data bytes for shape [${shape}]`);
  return new ort.Tensor("float32", new Float32Array(copy.buffer, 0, count), shape);
}

function writeFloatNpy(file, tensor) {
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(", ")})`;
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': ${shape}, }`;
  header += " ".repeat((64 - ((10 + header.length + 1) % 64)) % 64) + "\n";
  const pre = Buffer.alloc(10);
  Buffer.from("\x93NUMPY", "latin1").copy(pre);
  pre[6] = 1; pre[7] = 0; pre.writeUInt16LE(header.length, 8);
  const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, "latin1"), data]));
}

const args = process.argv.slice(2);
const positional = [];
let inputName = null, saveDir = null;
for (let i = 0; i < args.length; ++i) {
  if (args[i] === "--input") inputName = args[++i];
  else if (args[i] === "--save") saveDir = args[++i];
  else positional.push(args[i]);
}
if (saveDir) fs.mkdirSync(saveDir, { recursive: true });
if (positional.length < 3) {
  fail("usage: calibrate.mjs MODEL.onnx OUT.json INPUT.npy [INPUT.npy ...] [--input NAME] [--save DIR]");
}
const [model, outFile, ...inputs] = positional;
let session;
try {
  session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: "sequential", graphOptimizationLevel: "disabled",
  });
} catch (e) {
  fail(`${model}: ${e.message}`);
}
if (!inputName) {
  if (session.inputNames.length !== 1) fail(`${model}: ${session.inputNames.length} inputs; name one with --input`);
  inputName = session.inputNames[0];
} else if (!session.inputNames.includes(inputName)) {
  fail(`${model}: no input '${inputName}'`);
}

const ranges = {};
for (const [run, file] of inputs.entries()) {
  let outputs;
  try {
    outputs = await session.run({ [inputName]: readFloatNpy(file) });
  } catch (e) {
    fail(`${file}: ${e.message}`);
  }
  for (const [name, tensor] of Object.entries(outputs)) {
    if (tensor.type !== "float32") continue; // shapes, indices: nothing to quantize
    if (saveDir) writeFloatNpy(`${saveDir}/${run}.${name.replace(/[^A-Za-z0-9._-]/g, "_")}.npy`, tensor);
    let lo = Infinity, hi = -Infinity;
    for (const v of tensor.data) {
      if (!Number.isFinite(v)) fail(`${model}: tensor '${name}' holds ${v} on input ${file}`, 1);
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    if (tensor.data.length === 0) continue;
    const seen = ranges[name];
    ranges[name] = seen ? [Math.min(seen[0], lo), Math.max(seen[1], hi)] : [lo, hi];
  }
}
fs.writeFileSync(outFile + ".tmp", JSON.stringify({ runs: inputs.length, ranges }, null, 1) + "\n");
fs.renameSync(outFile + ".tmp", outFile);
