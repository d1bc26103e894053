// zarrita_bench.mjs: times zarrita.js reading a Zarr v3 array, for the
// gozarr benchmark suite (go run ./bench -peers).
//
// Usage:
//   node zarrita_bench.mjs <node_modules dir> <array dir> <workload> <params JSON>
//
// workload: read-all | chunks | random | strided. params: {"reps": n,
// "regions": [[r0, c0, h, w], ...] (chunks, random), "stride": [sr, sc]
// (strided)}; "@file" reads the JSON from a file. The array is read through a minimal store over node:fs (get
// and getRange, as zarrita's FileSystemStore does), one warm-up run, then
// reps timed runs. Prints one JSON line: {"seconds": [...], "samples":
// [[row, col, value], ...]} where the samples let the caller check the data.

import { open, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, arrayDir, workload, paramsJSON] = process.argv.slice(2);
if (!nodeModules || !arrayDir || !workload) {
	console.error("usage: node zarrita_bench.mjs <node_modules dir> <array dir> <workload> <params JSON>");
	process.exit(2);
}
const params = JSON.parse(
	paramsJSON?.startsWith("@") ? await readFile(paramsJSON.slice(1), "utf8") : (paramsJSON ?? "{}"),
);

// importPackage imports a package's ES module entry from nodeModules (ES
// modules ignore NODE_PATH).
async function importPackage(pkg) {
	const dir = join(resolve(nodeModules), pkg);
	const manifest = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
	let entry = manifest.exports?.["."];
	if (typeof entry === "object") entry = entry.import ?? entry.default;
	entry ??= manifest.module ?? manifest.main;
	return import(pathToFileURL(join(dir, entry)).href);
}
const zarr = await importPackage("zarrita");

// FSStore is a read-only store over a directory: keys are "/"-rooted paths.
class FSStore {
	constructor(root) {
		this.root = resolve(root);
	}
	path(key) {
		return join(this.root, key.replace(/^\/+/, ""));
	}
	async get(key) {
		try {
			const b = await readFile(this.path(key));
			return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
		} catch (e) {
			if (e.code === "ENOENT") return undefined;
			throw e;
		}
	}
	async getRange(key, range) {
		let fh;
		try {
			fh = await open(this.path(key), "r");
			let offset, length;
			if ("suffixLength" in range) {
				const { size } = await fh.stat();
				length = Math.min(range.suffixLength, size);
				offset = size - length;
			} else {
				({ offset, length } = range);
			}
			const buf = new Uint8Array(length);
			const { bytesRead } = await fh.read(buf, 0, length, offset);
			return buf.subarray(0, bytesRead);
		} catch (e) {
			if (e.code === "ENOENT") return undefined;
			throw e;
		} finally {
			await fh?.close();
		}
	}
}

const arr = await zarr.open.v3(new FSStore(arrayDir), { kind: "array" });
const [nRows, nCols] = arr.shape;
let last; // [row0, col0, rowStep, colStep, chunk]

async function runOnce() {
	switch (workload) {
		case "read-all":
			last = [0, 0, 1, 1, await zarr.get(arr)];
			break;
		case "chunks":
		case "random":
			for (const [r0, c0, h, w] of params.regions) {
				last = [r0, c0, 1, 1, await zarr.get(arr, [zarr.slice(r0, r0 + h), zarr.slice(c0, c0 + w)])];
			}
			break;
		case "strided": {
			const [sr, sc] = params.stride;
			last = [0, 0, sr, sc, await zarr.get(arr, [zarr.slice(null, null, sr), zarr.slice(null, null, sc)])];
			break;
		}
		default:
			throw new Error(`unknown workload ${workload}`);
	}
}

await runOnce();
const seconds = [];
for (let i = 0; i < (params.reps ?? 1); i++) {
	const t0 = process.hrtime.bigint();
	await runOnce();
	seconds.push(Number(process.hrtime.bigint() - t0) / 1e9);
}
const [r0, c0, sr, sc, chunk] = last;
const [h, w] = chunk.shape;
const samples = [];
for (const [i, j] of [[0, 0], [h - 1, w - 1], [h >> 1, w >> 1], [h - 1, 0]]) {
	samples.push([r0 + i * sr, c0 + j * sc, chunk.data[i * w + j]]);
}
console.log(JSON.stringify({ seconds, samples, shape: [nRows, nCols] }));
