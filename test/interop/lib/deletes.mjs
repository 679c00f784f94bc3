// The delete files of a table's current snapshot, read with avsc from the manifest list and
// manifests of the local hadoop layout (WAREHOUSE/NAMESPACE/TABLE/metadata), independently
// of the library and of lib/lake.mjs's row reader: a delete file is live when its manifest
// entry is not DELETED (status 2); its content is 1 (position deletes) or 2 (equality
// deletes); deletion vectors (v3, Puffin) are position deletes too (content 1).
//
// assertNoEqualityDeletes(dir) checks what issue 35 asks of every table that has upserts:
// no live equality-delete file (an update or delete of a row an earlier checkpoint wrote
// is a position delete against that row's file and position), unless the run chose
// write.delete-mode=equality (then the caller does not assert; see deleteModeOf).
import fs from 'node:fs'
import path from 'node:path'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { currentMetadata, readAvro } from './lake.mjs'

export const POSITION = 1
export const EQUALITY = 2

const isTable = dir => fs.existsSync(path.join(dir, 'metadata', 'version-hint.text'))

// The table directories under a warehouse, a namespace's directory or the one table dir
// given, sorted, each as { name: 'ns.table' (nested namespaces joined with '.'), dir }.
// Directories whose name starts with '_' or '.' are the job's own (_w2l) or temporary,
// never tables. A directory without _w2l is taken for a namespace (its name the prefix).
export function tableDirs (dirOrWarehouse) {
  if (isTable(dirOrWarehouse)) return [{ name: path.basename(path.dirname(dirOrWarehouse)) + '.' + path.basename(dirOrWarehouse), dir: dirOrWarehouse }]
  const top = fs.existsSync(path.join(dirOrWarehouse, '_w2l')) ? [] : [path.basename(dirOrWarehouse)]
  const out = []
  const walk = (d, ns) => {
    let ents
    try { ents = fs.readdirSync(d, { withFileTypes: true }) } catch (e) { if (e.code === 'ENOENT') return; throw e }
    for (const e of ents) {
      if (!e.isDirectory() || e.name.startsWith('_') || e.name.startsWith('.')) continue
      const sub = path.join(d, e.name)
      if (isTable(sub)) out.push({ name: [...ns, e.name].join('.'), dir: sub })
      else walk(sub, [...ns, e.name])
    }
  }
  walk(dirOrWarehouse, top)
  return out.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
}

// The live delete files of the table's current snapshot: [{ path, content (1 position,
// 2 equality), records, specId, seq, equalityIds, manifest, format }], none for a table
// without a snapshot.
export async function liveDeleteFiles (tableDir) {
  const meta = currentMetadata(tableDir)
  const snap = (meta.snapshots || []).find(s => s['snapshot-id'] === meta['current-snapshot-id'])
  if (!snap) return []
  const out = []
  const list = await readAvro(snap['manifest-list'])
  for (const mf of list.records) {
    // content 1 of a manifest: it lists delete files (a data manifest holds none)
    const m = await readAvro(mf.manifest_path)
    for (const e of m.records) {
      if (e.status === 2) continue
      const d = e.data_file
      if (!d.content) continue
      if (d.content !== POSITION && d.content !== EQUALITY) throw new Error(`${mf.manifest_path}: a file of content ${d.content}: ${d.file_path}`)
      if ((mf.content ?? 0) !== 1) throw new Error(`${mf.manifest_path}: a delete file (${d.file_path}) in a data manifest`)
      out.push({
        path: d.file_path,
        content: d.content,
        records: Number(d.record_count),
        specId: mf.partition_spec_id,
        seq: BigInt(e.sequence_number ?? mf.sequence_number),
        equalityIds: d.equality_ids ?? null,
        manifest: mf.manifest_path,
        format: d.file_format
      })
    }
  }
  return out
}

// Per table of dirOrWarehouse: { name, dir, position: files, equality: files }.
export async function deleteCensus (dirOrWarehouse) {
  const out = []
  for (const t of tableDirs(dirOrWarehouse)) {
    const files = await liveDeleteFiles(t.dir)
    out.push({ ...t, position: files.filter(f => f.content === POSITION), equality: files.filter(f => f.content === EQUALITY) })
  }
  return out
}

// The live equality-delete files of every table of dirOrWarehouse (a warehouse or one
// table's directory): [{ table, path, records, equalityIds }].
export async function equalityDeletes (dirOrWarehouse) {
  const out = []
  for (const t of await deleteCensus(dirOrWarehouse)) {
    for (const f of t.equality) out.push({ table: t.name, path: f.path, records: f.records, equalityIds: f.equalityIds })
  }
  return out
}

// Fails when a table of dirOrWarehouse (a warehouse, or a table's directory) holds a live
// equality-delete file in its current snapshot, naming each table, its count, and the
// first files. what: the test's words for the moment (e.g. 'after 3 SIGKILLs').
// opts.tables: only these table names ('ns.table'), for a warehouse where some tables
// purposely use write.delete-mode=equality.
export async function assertNoEqualityDeletes (dirOrWarehouse, what = '', opts = {}) {
  let eq = await equalityDeletes(dirOrWarehouse)
  if (opts.tables) eq = eq.filter(f => opts.tables.includes(f.table))
  if (!eq.length) return
  const byTable = new Map()
  for (const f of eq) {
    if (!byTable.has(f.table)) byTable.set(f.table, [])
    byTable.get(f.table).push(f)
  }
  const MAX = 3
  const lines = [...byTable].map(([t, fs2]) => `  ${t}: ${fs2.length} equality-delete file(s) (content 2), e.g. ` +
    fs2.slice(0, MAX).map(f => `${f.path} (${f.records} rows, equality ids ${JSON.stringify(f.equalityIds)})`).join(', '))
  assert.fail(`${what ? what + ': ' : ''}${byTable.size} table(s) hold live equality deletes, every update and delete must be a position delete (write.delete-mode=position):\n` + lines.join('\n'))
}

// The delete mode a run was given: the value of write.delete-mode in its --config JSON
// (a path or the object) or its command-line flag, 'position' when none (the default).
// table: 'db.table' for a per-table key (table.DB.TABLE.write.delete-mode).
export function deleteModeOf ({ args = [], config = null, table = null } = {}) {
  let conf = config
  if (typeof conf === 'string') conf = JSON.parse(fs.readFileSync(conf, 'utf8'))
  const i = args.indexOf('--config')
  if (!conf && i >= 0) conf = JSON.parse(fs.readFileSync(args[i + 1], 'utf8'))
  let mode = conf?.['write.delete-mode'] ?? 'position'
  if (table && conf?.[`table.${table}.write.delete-mode`]) mode = conf[`table.${table}.write.delete-mode`]
  const f = args.indexOf('--write.delete-mode')
  if (f >= 0) mode = args[f + 1]
  const eq = args.find(a => a.startsWith('--write.delete-mode='))
  if (eq) mode = eq.slice(eq.indexOf('=') + 1)
  return mode
}

// Whether the binary at w2l knows configuration key k (`w2l help config` lists it), for a
// test that sets write.delete-mode only where the key exists.
const known = new Map()
export function knowsConfigKey (w2l, k) {
  if (!known.has(w2l)) {
    const r = spawnSync(w2l, ['help', 'config'], { encoding: 'utf8', timeout: 20000 })
    known.set(w2l, r.stdout ?? '')
  }
  return new RegExp(`^ {2}${k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'm').test(known.get(w2l))
}
