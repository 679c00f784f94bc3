// A seeded canal-json stream that makes a table need maintenance, and its reference model
// (lib/canal.mjs Stream): a few tables of one database, each with a primary key over a
// small key space (a few hundred keys), taking mostly UPDATEs of non-key values (every
// checkpoint then writes equality deletes), some DELETEs and INSERTs (keys come back after
// they were deleted: the same key lives in several data files of different sequence
// numbers), some UPDATEs that move a row to another key, and a TRUNCATE TABLE now and
// then. No column DDL (lib/ddl_stream.mjs covers it): a compaction's rewrite, the
// equality deletes committed after its base and the truncates are what this stream tests.
//
// Returns the shape lib/ddl_stream.mjs checkLake reads: { stream (Stream: lines, tables =
// the model, expected(name)), alive: [table names], dropped: [] (nothing is dropped),
// droppedAt: {}, fate(name, key): what removed the row of that key (values as text, JSON)
// last, or null, stats: {statements by kind} }.
//
// Also walkTable: every snapshot of a table walked down to its files (what exists, what
// is live, what the metadata reaches), for the maintenance checks.
import fs from 'node:fs'
import path from 'node:path'
import { Stream, rng, datetimeText } from './canal.mjs'
import { column, icebergType } from './ddl_stream.mjs'
import { decText, readAvro } from './lake.mjs'

const q = n => '`' + n + '`'

// The tables: a key of each kind the pipeline handles (int, bigint, composite int+varchar)
// and values of several types.
const TABLES = {
  accounts: { cols: [['id', 'int(11)'], ['owner', 'varchar(24)'], ['balance', 'decimal(10,2)'], ['visits', 'int(11)'], ['seen_at', 'datetime(6)']], pk: ['id'] },
  stock: { cols: [['shop', 'int(11)'], ['sku', 'varchar(12)'], ['qty', 'int(11)'], ['price', 'decimal(10,2)'], ['note', 'varchar(40)']], pk: ['shop', 'sku'] },
  sessions: { cols: [['id', 'bigint(20)'], ['hits', 'bigint(20)'], ['agent', 'varchar(20)'], ['started', 'datetime(6)']], pk: ['id'] }
}

// opts: seed; events (messages, about); keys (the key space of each table); truncates (how
// many TRUNCATE TABLE statements, spread over the stream).
export function makeMaintainStream ({ seed = 1, events = 15000, keys = 300, truncates = 2 } = {}) {
  const r = rng(seed)
  const int = (a, b) => a + Math.floor(r() * (b - a + 1)) // a..b
  const pick = a => a[Math.floor(r() * a.length)]
  const s = new Stream('maint')
  const raw = new Map() // name -> Map(key -> raw row)
  const fates = new Map() // name -> Map(key as text -> what removed it last)
  const stats = { insert: 0, update: 0, keyUpdate: 0, delete: 0, truncate: 0, reinsert: 0 }
  const names = Object.keys(TABLES)

  function value (mysql) {
    switch (icebergType(mysql)) {
      case 'int': return String(int(-2000000, 2000000))
      case 'long': return (BigInt(int(-4000000, 4000000)) * 1000003n + BigInt(int(0, 999))).toString()
      case 'decimal(10,2)': return decText(BigInt(int(-9999999, 99999999)), 2)
      case 'timestamp': return datetimeText(1600000000000000n + BigInt(int(0, 1e9)) * 1000n + BigInt(int(0, 999)))
      default: {
        const n = Number(/\((\d+)\)/.exec(mysql)[1])
        return ((r() < 0.1 ? 'ü✓-' : 'v-') + int(0, 1e9).toString(36)).slice(0, n)
      }
    }
  }

  // The key space of a table: `keys` keys, as raw texts by key column.
  const space = new Map() // name -> [{col: text}]
  for (const name of names) {
    const { pk } = TABLES[name]
    const ks = []
    for (let i = 0; i < keys; i++) {
      if (pk.length === 1) ks.push({ [pk[0]]: name === 'sessions' ? String(9000000000n + BigInt(i) * 7919n) : String(i + 1) })
      else ks.push({ shop: String(1 + (i % 7)), sku: 'sku-' + Math.floor(i / 7) })
    }
    space.set(name, ks)
  }
  const keyOf = (t, row) => JSON.stringify(t.pk.map(c => row[c]))
  const setFate = (name, row, what) => {
    if (!fates.has(name)) fates.set(name, new Map())
    fates.get(name).set(keyOf(s.tables[name], row), `${what} (message ${s.seq - 1})`)
  }
  const everDeleted = new Map(names.map(n => [n, new Set()]))

  // A key of the space with no row now (null when the space is full).
  function freeKey (name) {
    const t = s.tables[name]
    const rows = raw.get(name)
    const ks = space.get(name)
    for (let tries = 0; tries < 50; tries++) {
      const k = pick(ks)
      if (!rows.has(keyOf(t, k))) return { ...k }
    }
    return null
  }
  function anyRow (name) {
    const rows = raw.get(name)
    let i = Math.floor(r() * rows.size)
    for (const row of rows.values()) if (i-- === 0) return row
  }

  function insert (name) {
    const t = s.tables[name]
    const k = freeKey(name)
    if (!k) return false
    const row = {}
    for (const c of t.cols) row[c.name] = t.pk.includes(c.name) ? k[c.name] : (r() < 0.1 ? null : value(c.mysql))
    s.insert(name, row)
    raw.get(name).set(keyOf(t, row), row)
    if (everDeleted.get(name).has(keyOf(t, row))) stats.reinsert++
    fates.get(name)?.delete(keyOf(t, row))
    stats.insert++
    return true
  }
  function update (name) {
    const t = s.tables[name]
    const rows = raw.get(name)
    const b = anyRow(name)
    const a = { ...b }
    if (r() < 0.04) { // the row moves to a key without a row
      const k = freeKey(name)
      if (!k) return false
      Object.assign(a, k)
      stats.keyUpdate++
    } else {
      const nonKey = t.cols.filter(c => !t.pk.includes(c.name))
      const n = Math.min(nonKey.length, r() < 0.7 ? 1 : 2)
      const chosen = new Set()
      while (chosen.size < n) chosen.add(pick(nonKey))
      for (const c of chosen) {
        let v
        do v = r() < 0.1 && b[c.name] !== null ? null : value(c.mysql); while (v === b[c.name])
        a[c.name] = v
      }
    }
    s.update(name, b, a)
    if (keyOf(t, a) !== keyOf(t, b)) {
      setFate(name, b, 'moved to another key by an update')
      everDeleted.get(name).add(keyOf(t, b))
    }
    fates.get(name)?.delete(keyOf(t, a))
    rows.delete(keyOf(t, b))
    rows.set(keyOf(t, a), a)
    stats.update++
    return true
  }
  function del (name) {
    const t = s.tables[name]
    const b = anyRow(name)
    s.delete(name, b)
    setFate(name, b, 'deleted')
    everDeleted.get(name).add(keyOf(t, b))
    raw.get(name).delete(keyOf(t, b))
    stats.delete++
  }
  function truncate (name) {
    s.ddl(name, 'TRUNCATE', pick([`TRUNCATE TABLE ${q(name)}`, `TRUNCATE ${q(name)}`]))
    for (const row of raw.get(name).values()) {
      setFate(name, row, 'truncated')
      everDeleted.get(name).add(keyOf(s.tables[name], row))
    }
    raw.get(name).clear()
    s.tables[name].rows = new Map()
    stats.truncate++
  }

  // the tables: the first announced by CREATE TABLE, the others come with their rows
  names.forEach((name, i) => {
    const def = TABLES[name]
    const cols = def.cols.map(([n, m]) => column(n, m))
    if (i === 0) {
      const defs = cols.map(c => `  ${q(c.name)} ${c.mysql} ${def.pk.includes(c.name) ? 'NOT NULL' : 'DEFAULT NULL'}`)
      defs.push(`  PRIMARY KEY (${def.pk.map(q).join(',')})`)
      s.ddl(name, 'CREATE', `CREATE TABLE ${q(name)} (\n${defs.join(',\n')}\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`)
    }
    s.table(name, cols, def.pk)
    raw.set(name, new Map())
  })
  // the truncates: at even shares of the stream, each on a table picked by the seed
  const truncAt = Array.from({ length: truncates }, (_, i) => Math.floor(events * (i + 1) / (truncates + 1)))
  while (s.lines.length < events) {
    if (truncAt.length && s.lines.length >= truncAt[0]) { truncAt.shift(); truncate(pick(names)); continue }
    const name = pick(names)
    const size = raw.get(name).size
    // inserts fill the key space to about two thirds; updates dominate
    const pIns = 0.25 * (1 - size / keys) + 0.02
    const y = r()
    if (size < 3 || y < pIns) { if (!insert(name)) update(name) } else if (y < pIns + 0.10) del(name)
    else if (!update(name)) del(name)
  }
  const fate = (name, key) => fates.get(name)?.get(key) ?? null
  return { stream: s, alive: [...names].sort(), dropped: [], droppedAt: {}, fate, stats }
}

// ------------------------------------------------------------- walking a table's files ----
// Every snapshot a table's current metadata still lists, walked with avsc (lib/lake.mjs
// readAvro): the manifest list, its manifests and their entries. Returns
//   { meta, snapshots: [{id, seq, operation, summary, manifests (in its list), dataFiles,
//     deleteFiles (live in it), live: [{path, content, seq (data sequence number), fileSeq
//     (file sequence number: the snapshot that added it)}], added: [{path, content, seq}]
//     (the files it added, as far as its manifests still say)}], current (the entry of
//     the current snapshot, or null),
//     missing: ['what: path' for every manifest list, manifest and live file that does not
//     exist], reached: Set of every path the metadata reaches (metadata files of the log,
//     manifest lists, manifests, and the files of every entry, DELETED ones too) }.
// Paths are local (a file: prefix dropped).
export async function walkTable (tableDir) {
  const v = fs.readFileSync(path.join(tableDir, 'metadata/version-hint.text'), 'utf8').trim()
  const metaFile = path.join(tableDir, `metadata/v${v}.metadata.json`)
  // snapshot ids are 64-bit: read as text, not as (rounded) numbers
  const meta = JSON.parse(fs.readFileSync(metaFile, 'utf8').replace(/("(?:current-|parent-)?snapshot-id"\s*:\s*)(-?\d+)/g, '$1"$2"'))
  const local = p => p.startsWith('file://') ? p.slice(7) : p.startsWith('file:') ? p.slice(5) : p
  const reached = new Set([metaFile])
  for (const e of meta['metadata-log'] ?? []) reached.add(local(e['metadata-file']))
  const missing = []
  const snapshots = []
  const manifests = new Map() // path -> entries (a manifest is read once)
  const added = new Map() // snapshot id -> [{path, content, seq}] (ADDED entries)
  const addedSeen = new Set() // manifests whose ADDED entries are counted
  for (const s of meta.snapshots ?? []) {
    const what = `snapshot ${s['snapshot-id']} (seq ${s['sequence-number']}, ${s.summary?.operation})`
    const listPath = local(s['manifest-list'])
    reached.add(listPath)
    const snap = { id: s['snapshot-id'], seq: s['sequence-number'], operation: s.summary?.operation, summary: s.summary ?? {}, manifests: 0, dataFiles: 0, deleteFiles: 0, live: [], added: [] }
    snapshots.push(snap)
    if (!fs.existsSync(listPath)) { missing.push(`${what}: manifest list ${listPath}`); continue }
    const list = await readAvro(listPath)
    snap.manifests = list.records.length
    for (const mf of list.records) {
      const mp = local(mf.manifest_path)
      reached.add(mp)
      if (!manifests.has(mp)) manifests.set(mp, fs.existsSync(mp) ? (await readAvro(mp)).records : null)
      const entries = manifests.get(mp)
      if (!entries) { missing.push(`${what}: manifest ${mp}`); continue }
      const count = !addedSeen.has(mp)
      addedSeen.add(mp)
      for (const e of entries) {
        if (count && e.status === 1) { // null snapshot id and sequence number: inherited from the list
          const by = String(e.snapshot_id ?? mf.added_snapshot_id)
          if (!added.has(by)) added.set(by, [])
          added.get(by).push({ path: local(e.data_file.file_path), content: e.data_file.content, seq: Number(e.sequence_number ?? mf.sequence_number) })
        }
        const fp = local(e.data_file.file_path)
        reached.add(fp)
        if (e.status === 2) continue // DELETED: not live in this snapshot
        // null sequence numbers of ADDED entries: the manifest's (a v2 reader's inheritance)
        const inherit = x => x === null || x === undefined ? (e.status === 1 ? Number(mf.sequence_number) : NaN) : Number(x)
        snap.live.push({ path: fp, content: e.data_file.content, seq: inherit(e.sequence_number), fileSeq: inherit(e.file_sequence_number) })
        if (e.data_file.content === 0) snap.dataFiles++
        else snap.deleteFiles++
        if (!fs.existsSync(fp)) missing.push(`${what}: live ${e.data_file.content === 0 ? 'data' : 'delete'} file ${fp} (manifest ${path.basename(mp)})`)
      }
    }
  }
  for (const snap of snapshots) snap.added = added.get(String(snap.id)) ?? []
  const current = snapshots.find(s => s.id === meta['current-snapshot-id']) ?? null
  return { meta, snapshots, current, missing, reached }
}

// Every file below dir (recursively), as full paths.
export function filesUnder (dir) {
  if (!fs.existsSync(dir)) return []
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter(d => d.isFile()).map(d => path.join(d.parentPath ?? d.path, d.name))
}
