// An independent reader of Iceberg v2 and v3 tables for the interop tests, built only on
// readers we did not write: avsc decodes manifest lists and manifests, hyparquet decodes
// data and delete files, the npm package roaring each deletion vector's bitmaps (v3: a
// delete file of format PUFFIN, read by lib/puffin.mjs from the spec; it deletes positions
// of its referenced_data_file, like a position delete file). The read semantics follow the
// Iceberg spec, not our C code:
//   current snapshot -> manifest list -> manifests (DELETED entries skipped; null sequence
//   numbers of ADDED entries inherited from the manifest list) -> live files;
//   position deletes apply to the data file whose path matches when delete seq >= data seq
//   and both files are in the same partition; equality deletes apply when delete seq > data
//   seq and both files are in the same partition, comparing the equality columns, null =
//   null. "The same partition": the same partition spec id (the manifest list entry's
//   partition_spec_id, the spec of every file of that manifest) and equal partition values
//   (data_file.partition); an equality-delete file of an unpartitioned spec (no fields, or
//   only void ones) applies to every partition of every spec (a global delete).
// Columns are matched by Parquet field id, never by name, so renamed columns read right.
// Values come back canonical: int/date numbers, long/time/timestamp(tz) decimal strings of
// the physical value (micros), decimal exact text, string, binary hex, float/double
// numbers ('NaN', 'Infinity', '-Infinity'), boolean, null.
import fs from 'node:fs'
import path from 'node:path'
import avro from 'avsc'
import { parquetMetadataAsync, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { readDeletionVector } from './puffin.mjs'

const LONG = avro.types.LongType.__with({
  fromBuffer: b => b.readBigInt64LE(),
  toBuffer: n => { const b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(n)); return b },
  fromJSON: BigInt,
  toJSON: Number,
  isValid: n => typeof n === 'bigint',
  compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0)
})

export function readAvro (file) {
  const buf = fs.readFileSync(file)
  return new Promise((resolve, reject) => {
    const records = []
    let header
    const dec = new avro.streams.BlockDecoder({
      parseHook: s => avro.Type.forSchema(s, { wrapUnions: false, registry: { long: LONG } })
    })
    dec.on('metadata', (type, codec, meta) => { header = { type, codec, meta } })
    dec.on('data', r => records.push(r))
    dec.on('end', () => resolve({ ...header, records }))
    dec.on('error', reject)
    dec.end(buf)
  })
}

export function currentMetadata (tableDir) {
  const v = fs.readFileSync(path.join(tableDir, 'metadata/version-hint.text'), 'utf8').trim()
  return JSON.parse(fs.readFileSync(path.join(tableDir, `metadata/v${v}.metadata.json`), 'utf8'))
}

const hex = u8 => Buffer.from(u8).toString('hex')
const fnum = n => Number.isNaN(n) ? 'NaN' : n === Infinity ? 'Infinity' : n === -Infinity ? '-Infinity' : n
export function beToBig (u8) {
  let v = 0n
  for (const b of u8) v = (v << 8n) | BigInt(b)
  if (u8.length && (u8[0] & 0x80)) v -= 1n << BigInt(8 * u8.length)
  return v
}
export function decText (v, scale) {
  const neg = v < 0n
  let s = (neg ? -v : v).toString()
  if (scale > 0) {
    s = s.padStart(scale + 1, '0')
    s = s.slice(0, -scale) + '.' + s.slice(-scale)
  }
  return (neg ? '-' : '') + s
}

// A physical Parquet value as the canonical value of Iceberg type t.
export function canon (t, v) {
  if (v === null || v === undefined) return null
  const dm = /^decimal\((\d+),\s*(\d+)\)$/.exec(t)
  if (dm) return decText(v instanceof Uint8Array ? beToBig(v) : BigInt(v), Number(dm[2]))
  switch (t) {
    case 'boolean': return v
    case 'int': case 'date': return Number(v)
    case 'long': case 'time': case 'timestamp': case 'timestamptz': return BigInt(v).toString()
    case 'float': case 'double': return fnum(v)
    case 'string': return new TextDecoder().decode(v)
    case 'binary': case 'uuid': return hex(v)
  }
  if (t.startsWith('fixed')) return hex(v)
  throw new Error('type not supported by the test reader: ' + t)
}

// Rows of a Parquet file as objects keyed by field id, values physical.
export async function readParquet (file) {
  const buf = fs.readFileSync(file)
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
  const metadata = await parquetMetadataAsync(ab)
  const idOf = {}
  for (const el of metadata.schema) {
    if (el.field_id !== undefined) idOf[el.name] = el.field_id
    delete el.converted_type
    delete el.logical_type
  }
  const objs = await parquetReadObjects({ file: ab, metadata, compressors, utf8: false })
  return objs.map(o => {
    const r = {}
    for (const [k, v] of Object.entries(o)) if (idOf[k] !== undefined) r[idOf[k]] = v
    return r
  })
}

export const key = vals => JSON.stringify(vals, (k, v) => typeof v === 'bigint' ? v.toString() : v)

// A partition spec of the table unpartitioned: no fields, or only void ones.
export const unpartitioned = spec => !spec || spec.fields.every(f => f.transform === 'void')

// A partition value as a manifest holds it (avsc: int numbers, long BigInt, decimal and
// fixed bytes) as a canonical value of the field's result type under the current schema
// (source type for identity and truncate, date for day, int for the others). A manifest
// written before a type promotion of the source (int -> long, decimal precision) holds the
// old type's value (an int, a shorter fixed), which equals the promoted one, as readers
// resolve the old Avro schema to the new type.
function partitionValue (transform, srcType, v) {
  if (v === null || v === undefined) return null
  const t = transform === 'identity' || transform.startsWith('truncate') ? srcType : transform === 'day' ? 'date' : 'int'
  if (t === 'int' || t === 'date') return Number(v)
  if (t === 'long' || t === 'time' || t === 'timestamp' || t === 'timestamptz') return BigInt(v).toString()
  if (t.startsWith('decimal')) return beToBig(v).toString()
  if (v instanceof Uint8Array) return hex(v)
  return v
}

// The partition of a live file (readTable's file objects: specId, partition): JSON of the
// spec id and the partition values (partitionValue) in the spec's field order, or null
// when its spec is unpartitioned (its deletes are global).
export function partitionKey (meta, f) {
  const spec = meta['partition-specs'].find(s => s['spec-id'] === f.specId)
  if (!spec) throw new Error(`${f.file_path}: partition spec ${f.specId} is not in the metadata`)
  if (unpartitioned(spec)) return null
  const cur = meta.schemas.find(s => s['schema-id'] === meta['current-schema-id'])
  const typeOf = id => (cur.fields.find(x => x.id === id) ?? meta.schemas.flatMap(s => s.fields).find(x => x.id === id))?.type ?? ''
  return key([f.specId, spec.fields.map(pf => {
    if (!f.partition || !(pf.name in f.partition)) throw new Error(`${f.file_path}: no value of partition field ${pf.name} (spec ${f.specId})`)
    return partitionValue(pf.transform, typeOf(pf['source-id']), f.partition[pf.name])
  })])
}
// Whether delete file d (readTable's file objects) may apply to data file df by partition:
// the same spec and partition values; an equality delete also when d's spec is
// unpartitioned (the spec's global deletes; the spec has no such rule for position deletes).
export const samePartition = (d, df) => (d.content === 2 && d.pkey === null) ||
  (d.specId === df.specId && d.pkey === df.pkey)

// Reads the table's current snapshot: { meta, schema, rows: [{name: value}], dataFiles,
// deleteFiles }; each file is its manifest entry's data_file with seq (the data sequence
// number), snapshotId (the snapshot that added it), specId (the manifest's partition spec
// id) and pkey (partitionKey). opts.cache: a Map (file path -> readParquet rows) to share
// the decoded files with a later reader of the same files (Iceberg files never change).
export async function readTable (tableDir, opts = {}) {
  const readParquetOnce = async p => {
    if (!opts.cache) return readParquet(p)
    if (!opts.cache.has(p)) opts.cache.set(p, await readParquet(p))
    return opts.cache.get(p)
  }
  const meta = opts.meta ?? currentMetadata(tableDir) // opts.meta: a catalog's metadata
  const schema = meta.schemas.find(s => s['schema-id'] === meta['current-schema-id'])
  const snap = (meta.snapshots || []).find(s => s['snapshot-id'] === meta['current-snapshot-id'])
  const out = { meta, schema, rows: [], dataFiles: [], deleteFiles: [] }
  if (!snap) return out
  const list = await readAvro(snap['manifest-list'])
  const typeOf = {}
  for (const s of meta.schemas) for (const f of s.fields) typeOf[f.id] = f.type
  for (const f of schema.fields) typeOf[f.id] = f.type
  for (const mf of list.records) {
    const m = await readAvro(mf.manifest_path)
    for (const e of m.records) {
      if (e.status === 2) continue
      let seq = e.sequence_number
      if (seq === null || seq === undefined) {
        if (e.status !== 1) throw new Error(`${mf.manifest_path}: non-ADDED entry without a sequence number`)
        seq = mf.sequence_number
      }
      const df = { ...e.data_file, seq: BigInt(seq), snapshotId: e.snapshot_id ?? mf.added_snapshot_id, specId: mf.partition_spec_id }
      df.pkey = partitionKey(meta, df)
      if (df.content === 0) out.dataFiles.push(df)
      else out.deleteFiles.push(df)
    }
  }
  const posDel = new Map() // data path -> [{pos, seq, d}]
  const eqDel = [] // {ids, keys: Set, seq, d}
  for (const d of out.deleteFiles) {
    if (d.content === 1 && d.file_format === 'PUFFIN') {
      const dv = readDeletionVector(d)
      if (!posDel.has(dv.referenced)) posDel.set(dv.referenced, [])
      for (const pos of dv.positions) posDel.get(dv.referenced).push({ pos, seq: d.seq, d })
      continue
    }
    const rows = await readParquetOnce(d.file_path)
    if (BigInt(rows.length) !== BigInt(d.record_count)) throw new Error(`${d.file_path}: record_count ${d.record_count}, ${rows.length} rows`)
    if (d.content === 1) {
      for (const r of rows) {
        const p = new TextDecoder().decode(r[2147483546])
        if (!posDel.has(p)) posDel.set(p, [])
        posDel.get(p).push({ pos: BigInt(r[2147483545]), seq: d.seq, d })
      }
    } else {
      const ids = d.equality_ids
      eqDel.push({ ids, seq: d.seq, d, keys: new Set(rows.map(r => key(ids.map(id => canon(typeOf[id], r[id]))))) })
    }
  }
  for (const df of out.dataFiles) {
    const rows = await readParquetOnce(df.file_path)
    if (BigInt(rows.length) !== BigInt(df.record_count)) throw new Error(`${df.file_path}: record_count ${df.record_count}, ${rows.length} rows`)
    const dels = new Set((posDel.get(df.file_path) || []).filter(x => x.seq >= df.seq && samePartition(x.d, df)).map(x => x.pos))
    const eqs = eqDel.filter(x => x.seq > df.seq && samePartition(x.d, df))
    rows.forEach((r, i) => {
      if (dels.has(BigInt(i))) return
      for (const e of eqs) if (e.keys.has(key(e.ids.map(id => canon(typeOf[id], r[id]))))) return
      const o = {}
      for (const f of schema.fields) o[f.name] = canon(f.type, r[f.id] ?? null)
      out.rows.push(o)
    })
  }
  return out
}

// Rows as sorted JSON lines with their columns in name order, for comparing multisets
// (column order is not part of a row's identity: Iceberg adds columns at the end).
export const sortedLines = rows => rows.map(r => key(Object.fromEntries(Object.entries(r).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)))).sort()

// icebird needs fetch: answered from local files while fn runs
export async function withLocalFetch (fn) {
  const saved = globalThis.fetch
  const cache = new Map() // the files of this call (Iceberg files do not change)
  globalThis.fetch = async (u, init = {}) => {
    const s = typeof u === 'string' ? u : u.url ?? String(u)
    const p = s.startsWith('file://') ? decodeURIComponent(s.slice(7)) : s
    if (!p.startsWith('/') || !fs.existsSync(p)) return new Response('not found', { status: 404 })
    const data = cache.get(p) ?? fs.readFileSync(p)
    cache.set(p, data)
    if ((init.method ?? 'GET') === 'HEAD') return new Response(null, { status: 200, headers: { 'content-length': String(data.length) } })
    const range = new Headers(init.headers ?? {}).get('range')
    const m = range && /^bytes=(\d+)-(\d*)$/.exec(range)
    if (m) {
      const a = Number(m[1]); const b = m[2] === '' ? data.length - 1 : Number(m[2])
      return new Response(data.subarray(a, b + 1), { status: 206, headers: { 'content-range': `bytes ${a}-${b}/${data.length}` } })
    }
    return new Response(data, { status: 200 })
  }
  try { return await fn() } finally { globalThis.fetch = saved }
}
