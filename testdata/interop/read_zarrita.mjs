// read_zarrita.mjs: reads a Zarr array with zarrita.js and compares every
// value with an expected file.
//
// Usage:
//   node read_zarrita.mjs <array dir> <expected .npy or raw little-endian file> [node_modules dir]
//
// The node_modules directory holding zarrita (and @zarrita/storage) comes
// from the third argument, else from the first entry of NODE_PATH. (ES
// modules ignore NODE_PATH, so the script resolves the packages itself.)
// The expected file holds the array's full contents in C order,
// little-endian: a NumPy .npy file (v1/v2 header skipped) or raw bytes.
// Floating-point NaNs compare equal to any NaN; everything else must match
// bit for bit. Prints one "ok" line, or the first mismatches, and exits 0
// on success, 1 on a mismatch, 2 on a usage or setup error.

import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

function fail(code, msg) {
	console.error(`read_zarrita: ${msg}`);
	process.exit(code);
}

const [arrayDir, expectedPath, nmArg] = process.argv.slice(2);
if (!arrayDir || !expectedPath) {
	fail(2, "usage: node read_zarrita.mjs <array dir> <expected file> [node_modules dir]");
}
const nodeModules = nmArg ?? (process.env.NODE_PATH ?? "").split(":").filter(Boolean)[0];
if (!nodeModules) {
	fail(2, "no node_modules directory: pass it as the third argument or set NODE_PATH");
}

// importExport imports the ES module a package exports under subpath.
async function importExport(pkg, subpath) {
	const dir = join(resolve(nodeModules), pkg);
	let manifest;
	try {
		manifest = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
	} catch (e) {
		fail(2, `cannot read ${pkg}/package.json under ${nodeModules}: ${e.message}`);
	}
	let entry = manifest.exports?.[subpath];
	if (typeof entry === "object") entry = entry.import ?? entry.default;
	if (!entry && subpath === ".") entry = manifest.module ?? manifest.main;
	if (!entry) fail(2, `${pkg} exports no ${subpath}`);
	return import(pathToFileURL(join(dir, entry)).href);
}

const zarr = await importExport("zarrita", ".");
const { default: FileSystemStore } = await importExport("@zarrita/storage", "./fs");

// Expected bytes: skip a .npy header if there is one.
let expected = await readFile(expectedPath);
if (expected.length >= 10 && expected.subarray(0, 6).toString("latin1") === "\x93NUMPY") {
	const major = expected[6];
	const headerLen = major === 1 ? expected.readUInt16LE(8) : expected.readUInt32LE(8);
	const start = (major === 1 ? 10 : 12) + headerLen;
	expected = expected.subarray(start);
}

const store = new FileSystemStore(resolve(arrayDir));
let arr;
try {
	arr = await zarr.open.v3(store, { kind: "array" });
} catch (e) {
	fail(1, `${arrayDir}: zarrita cannot open the array: ${e.message}`);
}
let chunk;
try {
	chunk = await zarr.get(arr);
} catch (e) {
	fail(1, `${arrayDir}: zarrita cannot read the array: ${e.stack ?? e.message}`);
}

const data = chunk.data;
const got = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
const itemSize = data.BYTES_PER_ELEMENT ?? 1;
const isFloat = data instanceof Float32Array || data instanceof Float64Array;
if (got.length !== expected.length) {
	fail(1, `${arrayDir}: zarrita read ${got.length} bytes (shape ${chunk.shape}, ${arr.dtype}), expected ${expected.length}`);
}
let mismatches = 0;
const n = got.length / itemSize;
const view = isFloat ? new (data.constructor)(expected.buffer.slice(expected.byteOffset, expected.byteOffset + expected.length)) : null;
for (let i = 0; i < n; i++) {
	const a = got.subarray(i * itemSize, (i + 1) * itemSize);
	const b = expected.subarray(i * itemSize, (i + 1) * itemSize);
	if (a.equals(b)) continue;
	if (isFloat && Number.isNaN(data[i]) && Number.isNaN(view[i])) continue;
	if (mismatches < 5) {
		console.error(`${arrayDir}: element ${i} (C order, shape ${chunk.shape}): zarrita ${isFloat ? data[i] : a.toString("hex")}, expected ${isFloat ? view[i] : b.toString("hex")}`);
	}
	mismatches++;
}
if (mismatches > 0) {
	fail(1, `${arrayDir}: ${mismatches} of ${n} elements differ`);
}
console.log(`ok ${arrayDir}: ${n} elements of ${arr.dtype}, shape [${chunk.shape}], equal`);
