// Runs every corpus model in onnxruntime and compares both variants' outputs with the
// reference output torch computed at export time (<name>.output.npy).
//
//   node scripts/corpus/check_outputs.mjs CORPUS_DIR [model,...]
//
// Needs the npm package onnxruntime-node (npm install --ignore-scripts onnxruntime-node,
// then NODE_PATH=<that folder>/node_modules). Exit status 1 when any output differs.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const require = createRequire(import.meta.url);
const ort = require("onnxruntime-node");

// Reads a little-endian float32 .npy file (the only kind the corpus writes).
function readNpy(file) {
  const buf = fs.readFileSync(file);
  const headerLen = buf.readUInt16LE(8);
  const header = buf.toString("latin1", 10, 10 + headerLen);
  if (!header.includes("'descr': '<f4'") || header.includes("'fortran_order': True"))
    throw new Error(`${file}: not a C-order float32 array: ${header}`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(",").filter((s) => s.trim()).map(Number);
  const start = 10 + headerLen;
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length));
  return { shape, data };
}

const [dir, only] = process.argv.slice(2);
if (!dir) {
  console.error("usage: check_outputs.mjs CORPUS_DIR [model,...]");
  process.exit(2);
}
const manifest = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
const names = only ? only.split(",") : Object.keys(manifest.models);
// Random weights and randomised BatchNorm statistics give logits of order 1..100; the
// tolerance allows float32 reassociation (folding, other kernels) but not a wrong graph.
const RTOL = 1e-3, ATOL = 1e-4;
let failures = 0;
for (const name of names) {
  const entry = manifest.models[name];
  const x = readNpy(path.join(dir, entry.input.file));
  const ref = readNpy(path.join(dir, entry.reference_output.file));
  const scale = ref.data.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const parts = [];
  let bad = false;
  for (const variant of entry.variants) {
    const session = await ort.InferenceSession.create(path.join(dir, variant.file),
                                                      { graphOptimizationLevel: "disabled" });
    const out = await session.run({ [entry.input_name]: new ort.Tensor("float32", x.data, x.shape) });
    const y = out[entry.output_name].data;
    let maxErr = 0;
    for (let i = 0; i < y.length; ++i) maxErr = Math.max(maxErr, Math.abs(y[i] - ref.data[i]));
    const ok = y.length === ref.data.length && maxErr <= ATOL + RTOL * scale;
    bad ||= !ok;
    parts.push(`${variant.variant} max|err| ${maxErr.toExponential(2)}${ok ? "" : " TOO BIG"}`);
  }
  failures += bad;
  console.log(`${bad ? "FAIL" : "ok  "} ${name}: max|ref| ${scale.toFixed(2)}, ${parts.join(", ")}`);
}
console.log(`check_outputs: ${names.length - failures} ok, ${failures} failed`);
process.exit(failures ? 1 : 0);
