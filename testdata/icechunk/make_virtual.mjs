// make_virtual.mjs OUT -- a spec 2 repository (OUT/virtual) whose array "virt" (int32, 12 values
// in chunks of 4) has only virtual chunk refs, written by the official core's native build (the
// wasm build cannot write virtual refs; run with ../../../shared/tools/icechunk/node-native),
// and the objects they point to (OUT/virtual-data: blob.bin holds int32 0..7, other.bin 4 junk
// bytes then int32 100..103). The refs name s3://gozarr-virtual/blob.bin (0, 16) and (16, 16,
// ETag "etag-1") and s3://gozarr-virtual/other.bin (4, 16, last modified 1700000000 s); tests map
// that prefix onto OUT/virtual-data.
import { Repository, Storage } from '@earthmover/icechunk';
import { fsStorage } from './fsstorage.mjs';
import fs from 'node:fs';
import path from 'node:path';

const out = process.argv[2];
const dir = path.join(out, 'virtual');
const data = path.join(out, 'virtual-data');
fs.rmSync(dir, { recursive: true, force: true });
fs.mkdirSync(data, { recursive: true });
const i32 = (vals) => Buffer.from(new Int32Array(vals).buffer);
fs.writeFileSync(path.join(data, 'blob.bin'), i32([0, 1, 2, 3, 4, 5, 6, 7]));
fs.writeFileSync(path.join(data, 'other.bin'), Buffer.concat([Buffer.from([9, 9, 9, 9]), i32([100, 101, 102, 103])]));
const repo = await Repository.create(fsStorage(Storage, dir), {
  virtualChunkContainers: { 's3://gozarr-virtual/': { urlPrefix: 's3://gozarr-virtual/', store: { type: 'S3', field0: { region: 'us-east-1' } } } },
}, 2);
const s = await repo.writableSession('main');
await s.store.set('zarr.json', Buffer.from(JSON.stringify({ zarr_format: 3, node_type: 'group', attributes: {} })));
await s.store.set('virt/zarr.json', Buffer.from(JSON.stringify({
  zarr_format: 3, node_type: 'array', shape: [12], data_type: 'int32',
  chunk_grid: { name: 'regular', configuration: { chunk_shape: [4] } },
  chunk_key_encoding: { name: 'default', configuration: { separator: '/' } },
  fill_value: -1, codecs: [{ name: 'bytes', configuration: { endian: 'little' } }],
})));
await s.store.setVirtualRef('virt/c/0', 's3://gozarr-virtual/blob.bin', 0, 16, null, null, false);
await s.store.setVirtualRef('virt/c/1', 's3://gozarr-virtual/blob.bin', 16, 16, 'etag-1', null, false);
await s.store.setVirtualRef('virt/c/2', 's3://gozarr-virtual/other.bin', 4, 16, null, new Date(1700000000000), false);
console.log('virtual repository', await s.commit('virtual refs'), 'in', dir);
