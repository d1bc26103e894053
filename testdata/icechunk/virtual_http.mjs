// virtual_http.mjs DIR PREFIX [KEY BASE64] -- the official Icechunk core (wasm) reads the
// repository at DIR whose virtual chunks are HTTP objects under PREFIX (a URL ending in "/"),
// then, with KEY and BASE64, writes that native chunk on main and commits ("core writes"), so
// that the manifest it writes carries the other virtual refs on. The wasm build reads HTTP(S)
// virtual chunks through a JavaScript fetch callback (Repository.setHttpVirtualChunkFetcher,
// which checks the recorded ETag / last-modified against the answer); it cannot set virtual refs
// (icechunk-js/src/store.rs compiles set_virtual_ref(s) only for non-wasm targets), hence the
// rewrite. The wasm build takes virtual chunk containers only from the repository's own
// configuration (its RepositoryConfig has no virtualChunkContainers field): gozarr recorded PREFIX
// there as an HTTP container named "web"; this script authorizes it. Prints one JSON document: every key's bytes (base64) or the core's
// error, the requests the fetcher saw, and for a commit its id and manifest files.
// Run from the directory holding fsstorage.mjs and node_modules.
import { Repository, Storage } from '@earthmover/icechunk';
import { createHttpVirtualChunkFetcher } from '@earthmover/icechunk/http-virtual-chunks';
import { fsStorage } from './fsstorage.mjs';

const [dir, prefix, key, b64] = process.argv.slice(2);
const auth = { [prefix]: { type: 'HttpAccess' } };
const repo = await Repository.open(fsStorage(Storage, dir), null, auth);
const seen = [];
const fetcher = createHttpVirtualChunkFetcher(fetch);
await repo.setHttpVirtualChunkFetcher(async (err, req) => {
  seen.push({ url: req.url, start: req.rangeStart, end: req.rangeEnd, etag: req.etag ?? null, last_modified: req.lastModified ?? null });
  return fetcher(err, req);
});
const out = { keys: {}, requests: seen };
const session = await repo.readonlySession({ branch: 'main' });
for (const k of (await session.store.list()).sort()) {
  try {
    const v = await session.store.get(k);
    out.keys[k] = v === null ? null : { data: Buffer.from(v).toString('base64') };
  } catch (e) {
    out.keys[k] = { error: String(e?.message ?? e) };
  }
}
if (key) {
  const w = await repo.writableSession('main');
  await w.store.set(key, Buffer.from(b64, 'base64'));
  out.commit = await w.commit('core writes');
  out.manifests = (await repo.lookupManifestFiles(out.commit)).map((m) => m.id);
}
console.log(JSON.stringify(out));
