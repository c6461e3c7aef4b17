// Runs an ONNX model in onnxruntime (CPU, one thread or --threads N, graph optimisations as asked) on
// inputs from .npy or TensorProto .pb files and writes every output as OUT_DIR/<name>.npy:
// the independent reference memledger's outputs are compared with.
//
//   node tests/ort/run_model.mjs MODEL.onnx OUT_DIR [NAME=FILE ...] [--repeat N] [--optimize]
//                                [--optimized-model FILE] [--threads N]
//
// --optimized-model FILE writes the graph onnxruntime runs after its optimisations (with
// --optimize: a QDQ model's DQ -> op -> Q groups fused into QLinearConv, QGemm, ...).
// With --repeat N the model runs N more times after one warm-up and the medians of
// session.run's wall time and of the process's CPU time are printed as "latency_ms <ms>"
// and "cpu_ms <ms>". Exit status 2 on bad arguments.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const require = createRequire(import.meta.url);
const ort = require("onnxruntime-node");

const NPY_TYPES = {
  "<f4": ["float32", Float32Array], "<f8": ["float64", Float64Array], "|i1": ["int8", Int8Array],
  "|u1": ["uint8", Uint8Array], "<i4": ["int32", Int32Array], "<i8": ["int64", BigInt64Array],
  "|b1": ["bool", Uint8Array], "<i2": ["int16", Int16Array], "<u2": ["uint16", Uint16Array],
};
const ONNX_TYPES = { 1: "<f4", 2: "|u1", 3: "|i1", 4: "<u2", 5: "<i2", 6: "<i4", 7: "<i8", 9: "|b1", 11: "<f8" };

function tensorFrom(descr, shape, bytes) {
  const [type, Array] = NPY_TYPES[descr] ?? [];
  if (!type) throw new Error(`unsupported dtype ${descr}`);
  const copy = new Uint8Array(bytes); // aligned copy
  const data = new Array(copy.buffer, 0, copy.length / Array.BYTES_PER_ELEMENT);
  return new ort.Tensor(type, type === "bool" ? Uint8Array.from(data) : data, shape);
}

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString("latin1", start, start + headerLen);
  if (header.includes("'fortran_order': True")) throw new Error(`${file}: Fortran order`);
  const descr = header.match(/'descr': '([^']*)'/)[1];
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(",").filter((s) => s.trim()).map(Number);
  return tensorFrom(descr, shape, buf.subarray(start + headerLen));
}

// The few TensorProto fields ONNX's test data uses: dims (1), data_type (2), typed data
// (4 float, 5 int32, 7 int64, 10 double) and raw_data (9).
function readPb(file) {
  const buf = fs.readFileSync(file);
  let pos = 0;
  const varint = () => {
    let result = 0n, shift = 0n;
    for (;;) {
      const b = buf[pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
    }
  };
  const dims = [], floats = [], ints = [], doubles = [];
  let type = 0, raw = null;
  while (pos < buf.length) {
    const key = Number(varint()), field = key >> 3, wire = key & 7;
    const packed = wire === 2 ? (() => { const n = Number(varint()); const s = pos; pos += n; return [s, pos]; })() : null;
    const each = (read) => { if (packed) { const end = packed[1]; pos = packed[0]; while (pos < end) read(); } else read(); };
    if (field === 1) each(() => dims.push(Number(BigInt.asIntN(64, varint()))));
    else if (field === 2) type = Number(varint());
    else if (field === 9) raw = buf.subarray(packed[0], packed[1]);
    else if (field === 4) each(() => { floats.push(buf.readFloatLE(pos)); pos += 4; });
    else if (field === 10) each(() => { doubles.push(buf.readDoubleLE(pos)); pos += 8; });
    else if (field === 5 || field === 7) each(() => ints.push(BigInt.asIntN(64, varint())));
    else if (wire === 0) varint();
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (!packed) throw new Error(`${file}: unexpected wire type ${wire}`);
  }
  const descr = ONNX_TYPES[type];
  if (!descr) throw new Error(`${file}: unsupported TensorProto type ${type}`);
  if (raw) return tensorFrom(descr, dims, raw);
  const [, Array] = NPY_TYPES[descr];
  const values = descr === "<f4" ? floats : descr === "<f8" ? doubles : ints;
  const typed = descr === "<i8" ? BigInt64Array.from(values) : Array.from(values.map(Number));
  return tensorFrom(descr, dims, new Uint8Array(typed.buffer));
}

function writeNpy(file, tensor) {
  const entry = Object.entries(NPY_TYPES).find(([, [t]]) => t === tensor.type);
  if (!entry) throw new Error(`cannot write ${tensor.type} as .npy`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(", ")})`;
  let header = `{'descr': '${entry[0]}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += " ".repeat((64 - ((10 + header.length + 1) % 64)) % 64) + "\n";
  const pre = Buffer.alloc(10);
  Buffer.from("\x93NUMPY", "latin1").copy(pre);
  pre[6] = 1; pre[7] = 0; pre.writeUInt16LE(header.length, 8);
  const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  fs.writeFileSync(file + ".tmp", Buffer.concat([pre, Buffer.from(header, "latin1"), data]));
  fs.renameSync(file + ".tmp", file);
}

const args = process.argv.slice(2);
const positional = [], named = {};
let repeat = 0, optimize = false, optimizedModel = null, threads = 1;
for (let i = 0; i < args.length; ++i) {
  if (args[i] === "--repeat") repeat = Number(args[++i]);
  else if (args[i] === "--optimize") optimize = true;
  else if (args[i] === "--threads") threads = Number(args[++i]);
  else if (args[i] === "--optimized-model") optimizedModel = args[++i];
  else if (args[i].includes("=") && positional.length >= 2) {
    const eq = args[i].indexOf("=");
    named[args[i].slice(0, eq)] = args[i].slice(eq + 1);
  } else positional.push(args[i]);
}
if (positional.length !== 2) {
  console.error("usage: run_model.mjs MODEL.onnx OUT_DIR [NAME=FILE ...] [--repeat N] [--optimize] " +
                "[--optimized-model FILE] [--threads N]");
  process.exit(2);
}
const [model, outDir] = positional;
const session = await ort.InferenceSession.create(model, {
  intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: "sequential",
  graphOptimizationLevel: optimize ? "all" : "disabled",
  ...(optimizedModel ? { optimizedModelFilePath: optimizedModel } : {}),
});
const feeds = {};
for (const name of session.inputNames) {
  const file = named[name];
  if (!file) { console.error(`run_model.mjs: input '${name}' has no NAME=FILE`); process.exit(2); }
  feeds[name] = file.endsWith(".pb") ? readPb(file) : readNpy(file);
}
const outputs = await session.run(feeds);
if (repeat > 0) {
  const times = [], cpu = [];
  for (let i = 0; i < repeat; ++i) {
    const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
    await session.run(feeds);
    const c = process.cpuUsage(c0);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    cpu.push((c.user + c.system) / 1e3);
  }
  const median = (v) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)].toFixed(3);
  // Wall time, and the process's CPU time (what a shared, loaded machine distorts less).
  console.log(`latency_ms ${median(times)}`);
  console.log(`cpu_ms ${median(cpu)}`);
}
fs.mkdirSync(outDir, { recursive: true });
for (const name of session.outputNames)
  writeNpy(path.join(outDir, name.replace(/[^A-Za-z0-9._-]/g, "_") + ".npy"), outputs[name]);
