// An independent reader of Iceberg v2 tables for the interop tests, built only on readers
// we did not write: avsc decodes manifest lists and manifests, hyparquet decodes data and
// delete files. The read semantics follow the Iceberg spec, not our C code:
//   current snapshot -> manifest list -> manifests (DELETED entries skipped; null sequence
//   numbers of ADDED entries inherited from the manifest list) -> live files;
//   position deletes apply to the data file whose path matches when delete seq >= data seq;
//   equality deletes apply when delete seq > data seq (unpartitioned tables; partitioned
//   ones only within the same partition), comparing the equality columns, null = null.
// Columns are matched by Parquet field id, never by name, so renamed columns read right.
// Values come back canonical: int/date numbers, long/time/timestamp(tz) decimal strings of
// the physical value (micros), decimal exact text, string, binary hex, float/double
// numbers ('NaN', 'Infinity', '-Infinity'), boolean, null.
import fs from 'node:fs'
import path from 'node:path'
import avro from 'avsc'
import { parquetMetadataAsync, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

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
function beToBig (u8) {
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
async function readParquet (file) {
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

const key = vals => JSON.stringify(vals, (k, v) => typeof v === 'bigint' ? v.toString() : v)

// Reads the table's current snapshot: { schema, rows: [{name: value}], files: {...} }.
export async function readTable (tableDir) {
  const meta = currentMetadata(tableDir)
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
      const df = { ...e.data_file, seq: BigInt(seq) }
      if (df.content === 0) out.dataFiles.push(df)
      else out.deleteFiles.push(df)
    }
  }
  const posDel = new Map() // data path -> [{pos, seq}]
  const eqDel = [] // {ids, keys: Set, seq}
  for (const d of out.deleteFiles) {
    const rows = await readParquet(d.file_path)
    if (BigInt(rows.length) !== BigInt(d.record_count)) throw new Error(`${d.file_path}: record_count ${d.record_count}, ${rows.length} rows`)
    if (d.content === 1) {
      for (const r of rows) {
        const p = new TextDecoder().decode(r[2147483546])
        if (!posDel.has(p)) posDel.set(p, [])
        posDel.get(p).push({ pos: BigInt(r[2147483545]), seq: d.seq })
      }
    } else {
      const ids = d.equality_ids
      eqDel.push({ ids, seq: d.seq, keys: new Set(rows.map(r => key(ids.map(id => canon(typeOf[id], r[id]))))) })
    }
  }
  for (const df of out.dataFiles) {
    const rows = await readParquet(df.file_path)
    if (BigInt(rows.length) !== BigInt(df.record_count)) throw new Error(`${df.file_path}: record_count ${df.record_count}, ${rows.length} rows`)
    const dels = new Set((posDel.get(df.file_path) || []).filter(x => x.seq >= df.seq).map(x => x.pos))
    const eqs = eqDel.filter(x => x.seq > df.seq)
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
