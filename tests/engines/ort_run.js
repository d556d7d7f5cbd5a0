// Runs an ONNX model with onnxruntime-node (ONNX Runtime's own CPU kernels,
// the library scripts/setup-engines.sh installs) on inputs read from NPY
// files, and writes every output as NPY. The test harness of pe's ONNX
// Runtime checks: tests/clients/test_ort_engine.py builds the graphs
// (com.microsoft.RotaryEmbedding, opset-23 RotaryEmbedding,
// com.microsoft.GroupQueryAttention) and turns the outputs into probes.
//
//   node tests/engines/ort_run.js ORT_PACKAGE_DIR MODEL.onnx IN_DIR OUT_DIR
//
// IN_DIR/NAME.npy is fed as the input NAME (float32, float16 as raw
// uint16, int64 or int32, C order, little-endian); each output NAME is
// written to OUT_DIR/NAME.npy with the dtype ONNX Runtime gave it. Exit 1
// with ONNX Runtime's message when the session refuses the model or its
// inputs (what a planted fault may want to observe), 2 for bad arguments.
'use strict';
const fs = require('fs');
const path = require('path');

const DTYPES = {  // npy descr -> [ort type, typed array]
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array], '<f2': ['float16', Uint16Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not an NPY file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shape || /'fortran_order':\s*True/.test(header)) throw new Error(`${file}: unsupported NPY header ${header}`);
  const t = DTYPES[descr[1]];
  if (!t) throw new Error(`${file}: unsupported dtype ${descr[1]}`);
  const dims = shape[1].split(',').map(s => s.trim()).filter(s => s.length).map(Number);
  const data = buf.subarray(start + hlen);
  const copy = new Uint8Array(data.length);
  copy.set(data);
  return { type: t[0], dims, data: new t[1](copy.buffer, 0, data.length / t[1].BYTES_PER_ELEMENT) };
}

function writeNpy(file, tensor) {
  const descr = Object.keys(DTYPES).find(k => DTYPES[k][0] === tensor.type);
  if (!descr) throw new Error(`output of type ${tensor.type} cannot be written`);
  const dims = tensor.dims.map(Number);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const body = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

async function main() {
  const [pkg, model, inDir, outDir] = process.argv.slice(2);
  if (!outDir) {
    process.stderr.write('usage: node ort_run.js ORT_PACKAGE_DIR MODEL.onnx IN_DIR OUT_DIR\n');
    process.exit(2);
  }
  const ort = require(path.resolve(pkg));
  const feeds = {};
  for (const f of fs.readdirSync(inDir).filter(f => f.endsWith('.npy')).sort()) {
    const t = readNpy(path.join(inDir, f));
    feeds[f.slice(0, -4)] = new ort.Tensor(t.type, t.data, t.dims);
  }
  let session, outputs;
  try {
    session = await ort.InferenceSession.create(model, { executionProviders: ['cpu'], graphOptimizationLevel: 'disabled' });
    outputs = await session.run(feeds);
  } catch (e) {
    process.stderr.write(`onnxruntime: ${e.message}\n`);
    process.exit(1);
  }
  fs.mkdirSync(outDir, { recursive: true });
  for (const [name, t] of Object.entries(outputs)) writeNpy(path.join(outDir, `${name}.npy`), t);
  process.stdout.write(JSON.stringify({ onnxruntime: ort.env.versions.common, outputs: Object.keys(outputs) }) + '\n');
}

main().catch(e => { process.stderr.write(`ort_run: ${e.stack || e}\n`); process.exit(2); });
