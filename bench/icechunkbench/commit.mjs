// commit.mjs DIR N SIZE SPEC -- the official Icechunk core (wasm, fsstorage.mjs) creates a
// repository of spec version SPEC at DIR, sets an array's zarr.json and N chunks of SIZE bytes
// each (deterministic bytes) in one session and commits them; prints the milliseconds the sets
// and the commit took as JSON. Run from the directory holding fsstorage.mjs and node_modules
// (icechunkbench copies it there). gozarr's side of the same work is in icechunkbench's commit.go.
import { Repository, Storage } from '@earthmover/icechunk';
import { fsStorage } from './fsstorage.mjs';

const [dir, nArg, sizeArg, specArg] = process.argv.slice(2);
const n = Number(nArg), size = Number(sizeArg);
const repo = await Repository.create(fsStorage(Storage, dir), null, Number(specArg));
const s = await repo.writableSession('main');
const meta = {
  zarr_format: 3, node_type: 'array', shape: [n, size], data_type: 'uint8',
  chunk_grid: { name: 'regular', configuration: { chunk_shape: [1, size] } },
  chunk_key_encoding: { name: 'default', configuration: { separator: '/' } },
  fill_value: 0, codecs: [{ name: 'bytes' }], attributes: {},
};
await s.store.set('zarr.json', Buffer.from(JSON.stringify({ zarr_format: 3, node_type: 'group', attributes: {} })));
await s.store.set('a/zarr.json', Buffer.from(JSON.stringify(meta)));
const t0 = performance.now();
for (let i = 0; i < n; i++) {
  const b = Buffer.alloc(size);
  for (let j = 0; j < size; j++) b[j] = (i * 31 + j * 7) & 255;
  await s.store.set(`a/c/${i}/0`, b);
}
const t1 = performance.now();
const id = await s.commit(`${n} chunks`);
const t2 = performance.now();
console.log(JSON.stringify({ set_ms: t1 - t0, commit_ms: t2 - t1, snapshot: id }));
