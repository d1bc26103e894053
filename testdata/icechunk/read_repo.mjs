// read_repo.mjs DIR REF -- what the official Icechunk core (wasm) sees in the repository at DIR:
// its spec version, branches, tags, the ancestry of REF, and every key of REF's snapshot with
// its bytes (base64), as one JSON document on stdout. Used by store/icechunk's tests to check
// repositories gozarr writes. Run from the directory holding fsstorage.mjs and node_modules.
import { Repository, Storage } from '@earthmover/icechunk';
import { fsStorage } from './fsstorage.mjs';

const [dir, ref] = process.argv.slice(2);
const repo = await Repository.open(fsStorage(Storage, dir));
const out = { spec_version: repo.specVersion, branches: {}, tags: {}, keys: {} };
for (const b of await repo.listBranches()) out.branches[b] = await repo.lookupBranch(b);
for (const t of await repo.listTags()) out.tags[t] = await repo.lookupTag(t);
const isBranch = ref in out.branches, isTag = ref in out.tags;
const opts = isBranch ? { branch: ref } : isTag ? { tag: ref } : { snapshotId: ref };
out.ancestry = await repo.ancestry(opts);
const session = await repo.readonlySession(opts);
for (const k of (await session.store.list()).sort()) {
  const v = await session.store.get(k);
  out.keys[k] = v === null ? null : Buffer.from(v).toString('base64');
}
if (out.ancestry.length > 1) {
  out.diff = await repo.diff({ fromSnapshotId: out.ancestry[1].id, toSnapshotId: out.ancestry[0].id });
}
console.log(JSON.stringify(out));
