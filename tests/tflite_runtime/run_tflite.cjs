// Runs a .tflite model in TensorFlow Lite's own interpreter (the TFLite web API that
// @tensorflow/tfjs-tflite ships as WebAssembly, single-threaded build) on seeded random inputs
// and writes the inputs, every output (inputN.npy, outputN.npy, in their own dtypes) and
// manifest.json (names, dtypes, shapes, files) into OUT_DIR: the outside reference for the
// TFLite models Arm NN 20.08 cannot run (keyword_scrambled's SVDF).
//   node run_tflite.cjs MODEL.tflite OUT_DIR [--seed N]
// The interpreter hands int8 convolutions and fully connected layers to its XNNPACK delegate,
// whose requantization rounds in float: there it differs from TFLite's reference kernels (and
// TFLite Micro's, and memledger's) by a unit now and then. The web API's loader wants a browser
// or a worker; here it sees a worker's globals served from files. Exit status 2 on bad
// arguments, 3 when the interpreter refuses the model or fails to run it.
const fs = require('fs'), path = require('path'), vm = require('vm');

const args = process.argv.slice(2);
if (args.length < 2) { console.error('usage: run_tflite.cjs MODEL.tflite OUT_DIR [--seed N]'); process.exit(2); }
const [modelPath, outDir] = args;
const seedAt = args.indexOf('--seed');
let seed = seedAt >= 0 ? Number(args[seedAt + 1]) : 1;

// The web API's loader expects a browser or a worker: a worker's globals, served from files.
const wasmDir = path.join(path.dirname(require.resolve('@tensorflow/tfjs-tflite/package.json')), 'wasm') + '/';
globalThis.self = globalThis;
globalThis.location = {origin: 'file://', href: 'file://' + wasmDir + 'index.html'};
delete globalThis.SharedArrayBuffer;  // the single-threaded build (no workers)
globalThis.importScripts = (url) => {
  const file = String(url).replace(/^file:\/\//, '');
  vm.runInThisContext(fs.readFileSync(file, 'utf8'), {filename: file});
};
const realFetch = globalThis.fetch;
globalThis.fetch = async (url, options) => {
  const s = String(url);
  if (!s.startsWith('file://')) return realFetch(url, options);
  return new Response(fs.readFileSync(s.slice(7)), {headers: {'Content-Type': 'application/wasm'}});
};
const tflite = require('@tensorflow/tfjs-tflite');
tflite.setWasmPath(wasmDir);

const NPY = {int8: ['|i1', Int8Array], uint8: ['|u1', Uint8Array], int16: ['<i2', Int16Array],
             int32: ['<i4', Int32Array], float32: ['<f4', Float32Array]};

function npy(dtype, shape, data) {
  const [descr] = NPY[dtype];
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1; head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  return Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]);
}

// xorshift32: the same inputs for the same seed on every machine.
function next() { seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0; return seed; }

(async () => {
  const bytes = fs.readFileSync(modelPath);
  let model;
  try {
    model = await tflite.loadTFLiteModel(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
                                         {numThreads: 1});
  } catch (e) {
    fs.mkdirSync(outDir, {recursive: true});
    fs.writeFileSync(path.join(outDir, 'manifest.json'), JSON.stringify({refused: String(e.message || e)}));
    console.error(`${modelPath}: refused: ${e.message || e}`);
    process.exit(3);
  }
  fs.mkdirSync(outDir, {recursive: true});
  const runner = model.modelRunner;
  const manifest = {runtime: 'TensorFlow Lite web API (@tensorflow/tfjs-tflite ' +
                    require('@tensorflow/tfjs-tflite/package.json').version + '), 1 thread', inputs: [], outputs: []};
  runner.getInputs().forEach((info, i) => {
    if (!NPY[info.dataType]) throw new Error(`input ${i}: type ${info.dataType}`);
    const shape = info.shape.split(',').map(Number);
    const data = info.data();
    for (let j = 0; j < data.length; ++j) data[j] = info.dataType === 'float32' ? (next() / 4294967296) * 2 - 1 : next();
    const file = path.join(outDir, `input${i}.npy`);
    fs.writeFileSync(file, npy(info.dataType, shape, data));
    manifest.inputs.push({name: info.name, file, dtype: info.dataType, shape});
  });
  if (!runner.infer()) {
    console.error(`${modelPath}: inference failed`);
    process.exit(3);
  }
  runner.getOutputs().forEach((info, i) => {
    if (!NPY[info.dataType]) throw new Error(`output ${i}: type ${info.dataType}`);
    const shape = info.shape.split(',').map(Number);
    const [, Type] = NPY[info.dataType];
    const data = Type.from(info.data());
    const file = path.join(outDir, `output${i}.npy`);
    fs.writeFileSync(file, npy(info.dataType, shape, data));
    manifest.outputs.push({name: info.name, file, dtype: info.dataType, shape});
  });
  fs.writeFileSync(path.join(outDir, 'manifest.json'), JSON.stringify(manifest, null, 1));
})().catch((e) => { console.error(`${modelPath}: ${e.stack || e}`); process.exit(1); });
