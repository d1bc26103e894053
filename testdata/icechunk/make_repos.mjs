// make_repos.mjs STATES OUT -- commit the plain Zarr hierarchies make_states.py wrote (STATES/s1,
// s2, ...) into Icechunk repositories of spec version 1 and 2 with the official core
// (@earthmover/icechunk, wasm), and record what the core reports about them (branches, tags,
// ancestry, manifest files) in OUT/expected.json. Run from the directory holding
// fsstorage.mjs and node_modules (make_fixtures.sh copies it there).
import { Repository, Storage } from '@earthmover/icechunk';
import { fsStorage } from './fsstorage.mjs';
import fs from 'node:fs';
import path from 'node:path';

const [states, out] = process.argv.slice(2);

function files(dir) {
  const m = new Map();
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const f = path.join(d, e.name);
      if (e.isDirectory()) walk(f);
      else m.set(path.relative(dir, f).split(path.sep).join('/'), fs.readFileSync(f));
    }
  };
  walk(dir);
  return m;
}

// commit makes the session's store hold exactly the keys of state (relative to prev).
async function commit(repo, branch, prev, state, message) {
  const s = await repo.writableSession(branch);
  const before = prev ? files(path.join(states, prev)) : new Map();
  const after = files(path.join(states, state));
  // metadata first, parents before children: a chunk needs its array to exist
  const keys = [...after.keys()].sort((a, b) => (b.endsWith('zarr.json') - a.endsWith('zarr.json')) || a.split('/').length - b.split('/').length || (a < b ? -1 : 1));
  for (const k of keys) {
    const v = after.get(k);
    if (!before.has(k) || !before.get(k).equals(v)) await s.store.set(k, v);
  }
  const gone = new Set();
  for (const k of before.keys()) {
    if (after.has(k)) continue;
    const node = k.replace(/\/?(zarr\.json|c\/.*)$/, '');
    if (k.endsWith('zarr.json') && !after.has(k)) gone.add(node);
    else if (![...gone].some((g) => k.startsWith(g + '/'))) await s.store.delete(k);
  }
  for (const g of gone) await s.store.deleteDir(g);
  return s.commit(message);
}

const config = {
  inlineChunkThresholdBytes: 64,
  manifest: { splitting: { split_sizes: [[{ path_matches: { regex: '.*' } }, [{ condition: 'Any', num_chunks: 2 }]]] } },
};
const expected = { repos: {} };
for (const spec of [1, 2]) {
  const name = `spec${spec}`;
  const dir = path.join(out, name);
  fs.rmSync(dir, { recursive: true, force: true });
  const repo = await Repository.create(fsStorage(Storage, dir), config, spec);
  const snaps = {};
  const s1 = await commit(repo, 'main', null, 's1', 'create arrays');
  snaps[s1] = 's1';
  await repo.createTag('v1', s1);
  const s2 = await commit(repo, 'main', 's1', 's2', 'rewrite a chunk, drop a chunk');
  snaps[s2] = 's2';
  await repo.createTag('gone', s2);
  await repo.deleteTag('gone');
  const s3 = await commit(repo, 'main', 's2', 's3', 'delete small, add u8');
  snaps[s3] = 's3';
  await repo.createTag('v3', s3);
  await repo.createBranch('dev', s1);
  const d1 = await commit(repo, 'dev', 's1', 'd1', 'dev: add dev_only');
  snaps[d1] = 'd1';
  await repo.createBranch('scratch', s2);
  await repo.deleteBranch('scratch');
  const r = { spec_version: repo.specVersion, branches: {}, tags: {}, ancestry: {}, states: snaps, manifests: {} };
  for (const b of (await repo.listBranches()).sort()) {
    r.branches[b] = await repo.lookupBranch(b);
    r.ancestry[b] = await repo.ancestry({ branch: b });
  }
  for (const t of (await repo.listTags()).sort()) r.tags[t] = await repo.lookupTag(t);
  for (const id of Object.keys(snaps)) r.manifests[id] = await repo.lookupManifestFiles(id);
  expected.repos[name] = r;
}
fs.writeFileSync(path.join(out, 'expected.json'), JSON.stringify(expected, null, 1) + '\n');
console.log('repositories written to', out);
