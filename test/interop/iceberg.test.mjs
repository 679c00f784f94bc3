// Iceberg tables written by the library (build/test/gen/ice_gen: append, row delta with
// equality and position deletes, schema evolution, truncate, partitioned), read with readers
// we did not write:
//   avsc      decodes every manifest list and manifest of every snapshot; the test checks
//             the Avro field names and Iceberg field ids, the header keys, and that the
//             list's counts equal the manifest's entries
//   DuckDB    reads every live data and delete file: row count = record_count
//   hyparquet reads the same files: row count, field ids present
//   icebird   reads each table through its metadata; the live ids and names must be the
//             ones the generator expects after its deletes
// icebird gaps (0.3.1) hit here: it applies equality deletes across partitions (the parted
// table's deletes are chosen so a global application gives the same answer; the oracle's
// partition-aware reader is the check for that rule) and maps renamed columns only through
// the iceberg.schema footer key (every file the library writes carries it; evolve renames
// qty -> quantity). Timestamps (ms) and decimals (float) are not compared through icebird.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import avro from 'avsc'
import { DuckDBInstance } from '@duckdb/node-api'
import { parquetMetadataAsync, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import { icebergRead } from 'icebird'

const bin = process.env.W2L_TEST_BIN || path.resolve('build')
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-ice-interop-'))
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
const out = JSON.parse(execFileSync(path.join(bin, 'test/gen/ice_gen'), [dir],
  { maxBuffer: 1 << 26 }).toString())

const db = await DuckDBInstance.create(':memory:')
const con = await db.connect()
const sqlStr = s => `'${s.replaceAll("'", "''")}'`

// ---- local files for icebird: a fetch that answers from disk (GET, HEAD, Range -> 206, 404) ----
function localPath (u) {
  const s = typeof u === 'string' ? u : u.url ?? String(u)
  return s.startsWith('file://') ? decodeURIComponent(s.slice(7)) : s
}
async function localFetch (u, init = {}) {
  const p = localPath(u)
  if (!p.startsWith('/') || !fs.existsSync(p)) return new Response('not found', { status: 404 })
  const data = fs.readFileSync(p)
  const headers = new Headers(init.headers ?? (typeof u === 'object' && u.headers ? u.headers : {}))
  if ((init.method ?? 'GET') === 'HEAD') {
    return new Response(null, { status: 200, headers: { 'content-length': String(data.length) } })
  }
  const range = headers.get('range')
  const m = range && /^bytes=(\d+)-(\d*)$/.exec(range)
  if (m) {
    const start = Number(m[1]); const end = m[2] === '' ? data.length - 1 : Number(m[2])
    const body = data.subarray(start, end + 1)
    return new Response(body, {
      status: 206,
      headers: { 'content-length': String(body.length), 'content-range': `bytes ${start}-${end}/${data.length}` }
    })
  }
  return new Response(data, { status: 200, headers: { 'content-length': String(data.length) } })
}
async function withLocalFetch (fn) {
  const saved = globalThis.fetch
  globalThis.fetch = localFetch
  try { return await fn() } finally { globalThis.fetch = saved }
}

// ---- Avro: longs exact, as BigInt (snapshot ids need all 63 bits) ----
const LONG = avro.types.LongType.__with({
  fromBuffer: b => b.readBigInt64LE(),
  toBuffer: n => { const b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(n)); return b },
  fromJSON: BigInt,
  toJSON: Number,
  isValid: n => typeof n === 'bigint',
  compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0)
})
function readAvro (file) {
  const buf = fs.readFileSync(file)
  return new Promise((resolve, reject) => {
    const records = []
    let header
    const dec = new avro.streams.BlockDecoder({ parseHook: s => avro.Type.forSchema(s, { wrapUnions: false, registry: { long: LONG } }) })
    dec.on('metadata', (type, codec, meta) => { header = { type, codec, meta } })
    dec.on('data', r => records.push(r))
    dec.on('end', () => resolve({ ...header, records }))
    dec.on('error', reject)
    dec.end(buf)
  })
}
const schemaOf = file => {
  // the writer schema exactly as stored (with field-id attributes)
  const buf = fs.readFileSync(file)
  let pos = 4; const meta = {}
  const long = () => { let n = 0n; let s = 0n; let b; do { b = buf[pos++]; n |= BigInt(b & 0x7f) << s; s += 7n } while (b & 0x80); return Number((n >> 1n) ^ -(n & 1n)) }
  for (let c = long(); c !== 0; c = long()) {
    for (let i = 0; i < Math.abs(c); i++) {
      const kl = long(); const k = buf.subarray(pos, pos + kl).toString(); pos += kl
      const vl = long(); meta[k] = buf.subarray(pos, pos + vl).toString(); pos += vl
    }
  }
  return { meta, schema: JSON.parse(meta['avro.schema']) }
}
const fieldIds = (fields) => Object.fromEntries(fields.map(f => [f.name, f['field-id']]))
const nonNull = t => Array.isArray(t) ? t.find(x => x !== 'null') : t

const LIST_IDS = { manifest_path: 500, manifest_length: 501, partition_spec_id: 502, content: 517,
  sequence_number: 515, min_sequence_number: 516, added_snapshot_id: 503, added_files_count: 504,
  existing_files_count: 505, deleted_files_count: 506, added_rows_count: 512,
  existing_rows_count: 513, deleted_rows_count: 514, partitions: 507, key_metadata: 519 }
const ENTRY_IDS = { status: 0, snapshot_id: 1, sequence_number: 3, file_sequence_number: 4, data_file: 2 }
const FILE_IDS = { content: 134, file_path: 100, file_format: 101, partition: 102, record_count: 103,
  file_size_in_bytes: 104, column_sizes: 108, value_counts: 109, null_value_counts: 110,
  nan_value_counts: 137, lower_bounds: 125, upper_bounds: 128, key_metadata: 131,
  split_offsets: 132, equality_ids: 135, sort_order_id: 140, referenced_data_file: 143 }
const MAP_IDS = { column_sizes: [117, 118], value_counts: [119, 120], null_value_counts: [121, 122],
  nan_value_counts: [138, 139], lower_bounds: [126, 127], upper_bounds: [129, 130] }

const currentMetadata = tdir => {
  const v = fs.readFileSync(path.join(tdir, 'metadata/version-hint.text'), 'utf8').trim()
  return JSON.parse(fs.readFileSync(path.join(tdir, `metadata/v${v}.metadata.json`), 'utf8')
    .replace(/("(?:snapshot-id|parent-snapshot-id|current-snapshot-id)"\s*:\s*)(\d+)/g, '$1"$2"'))
}

for (const t of out.tables) {
  test(`iceberg ${t.name}: metadata has every required v2 field`, () => {
    const m = currentMetadata(t.dir)
    for (const k of ['format-version', 'table-uuid', 'location', 'last-sequence-number',
      'last-updated-ms', 'last-column-id', 'schemas', 'current-schema-id', 'partition-specs',
      'default-spec-id', 'last-partition-id', 'sort-orders', 'default-sort-order-id',
      'properties', 'current-snapshot-id', 'snapshots', 'snapshot-log', 'metadata-log', 'refs']) {
      assert.ok(k in m, `metadata lacks ${k}`)
    }
    assert.equal(m['format-version'], 2)
    assert.equal(m.snapshots.length, t.snapshots)
    assert.equal(m.refs.main['snapshot-id'], m['current-snapshot-id'])
    const cur = m.schemas.find(s => s['schema-id'] === m['current-schema-id'])
    assert.deepEqual(cur['identifier-field-ids'], [1])
    for (const s of m.snapshots) {
      assert.equal(s.summary['w2l.job-id'], 'job-1')
      assert.ok(s.summary['w2l.checkpoint-id'])
      assert.ok('total-records' in s.summary && 'total-data-files' in s.summary)
    }
  })

  test(`iceberg ${t.name}: avsc decodes every manifest list and manifest`, async () => {
    const m = currentMetadata(t.dir)
    let liveRecords = 0
    for (const s of m.snapshots) {
      const { meta, schema } = schemaOf(s['manifest-list'])
      assert.equal(meta['format-version'], '2')
      assert.equal(meta['snapshot-id'], String(s['snapshot-id']))
      assert.deepEqual(fieldIds(schema.fields), LIST_IDS)
      const summary = nonNull(schema.fields.find(f => f.name === 'partitions').type)
      assert.equal(summary['element-id'], 508)
      assert.deepEqual(fieldIds(summary.items.fields),
        { contains_null: 509, contains_nan: 518, lower_bound: 510, upper_bound: 511 })
      const list = await readAvro(s['manifest-list'])
      assert.ok(['null', 'deflate'].includes(list.codec))
      for (const mf of list.records) {
        assert.ok(path.isAbsolute(mf.manifest_path))
        assert.equal(fs.statSync(mf.manifest_path).size, Number(mf.manifest_length))
        const h = schemaOf(mf.manifest_path)
        assert.equal(h.meta['format-version'], '2')
        assert.equal(h.meta.content, mf.content === 1 ? 'deletes' : 'data')
        assert.equal(h.meta['partition-spec-id'], String(mf.partition_spec_id))
        assert.ok(h.meta.schema && h.meta['partition-spec'])
        assert.deepEqual(fieldIds(h.schema.fields), ENTRY_IDS)
        const df = h.schema.fields.find(f => f.name === 'data_file').type
        assert.deepEqual(fieldIds(df.fields), FILE_IDS)
        for (const [name, [k, v]] of Object.entries(MAP_IDS)) {
          const arr = nonNull(df.fields.find(f => f.name === name).type)
          assert.equal(arr.type, 'array'); assert.equal(arr.logicalType, 'map')
          assert.deepEqual(fieldIds(arr.items.fields), { key: k, value: v })
        }
        const spec = m['partition-specs'].find(p => p['spec-id'] === mf.partition_spec_id)
        const pfields = df.fields.find(f => f.name === 'partition').type.fields
        assert.deepEqual(pfields.map(f => f['field-id']), spec.fields.map(f => f['field-id']))
        const man = await readAvro(mf.manifest_path)
        const count = st => man.records.filter(e => e.status === st)
        assert.equal(count(1).length, mf.added_files_count)
        assert.equal(count(0).length, mf.existing_files_count)
        assert.equal(count(2).length, mf.deleted_files_count)
        const rows = st => count(st).reduce((a, e) => a + Number(e.data_file.record_count), 0)
        assert.equal(rows(1), Number(mf.added_rows_count))
        assert.equal(rows(2), Number(mf.deleted_rows_count))
        assert.equal(mf.partitions.length, spec.fields.length)
        for (const e of man.records) {
          assert.equal(e.data_file.content === 0 ? 0 : 1, mf.content)
          assert.equal(e.data_file.file_format, 'PARQUET')
          assert.ok(path.isAbsolute(e.data_file.file_path))
          if (e.status !== 1) assert.ok(e.sequence_number !== null && e.file_sequence_number !== null)
          assert.equal(e.data_file.content === 2, e.data_file.equality_ids !== null)
          if (s['snapshot-id'] === m['current-snapshot-id'] && e.status !== 2 && e.data_file.content === 0) {
            liveRecords += Number(e.data_file.record_count)
          }
        }
      }
    }
    const cur = m.snapshots.find(s => s['snapshot-id'] === m['current-snapshot-id'])
    assert.equal(Number(cur.summary['total-records']), liveRecords)
  })

  test(`iceberg ${t.name}: DuckDB and hyparquet read every live data and delete file`, async () => {
    const m = currentMetadata(t.dir)
    const cur = m.snapshots.find(s => s['snapshot-id'] === m['current-snapshot-id'])
    const list = await readAvro(cur['manifest-list'])
    let files = 0
    for (const mf of list.records) {
      for (const e of (await readAvro(mf.manifest_path)).records) {
        if (e.status === 2) continue
        const f = e.data_file
        files++
        assert.equal(fs.statSync(f.file_path).size, Number(f.file_size_in_bytes))
        const r = await con.runAndReadAll(`SELECT count(*) AS n FROM read_parquet(${sqlStr(f.file_path)})`)
        assert.equal(Number(r.getRowObjects()[0].n), Number(f.record_count))
        const buf = fs.readFileSync(f.file_path)
        const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
        const meta = await parquetMetadataAsync(file)
        for (const el of meta.schema.slice(1)) assert.ok(el.field_id !== undefined, `${el.name} has no field_id`)
        const kv = Object.fromEntries((meta.key_value_metadata ?? []).map(x => [x.key, x.value]))
        const rows = await parquetReadObjects({ file, compressors })
        assert.equal(rows.length, Number(f.record_count))
        if (f.content === 0) assert.ok(kv['iceberg.schema'], 'iceberg.schema footer key')
        if (f.content === 1) {
          assert.deepEqual(meta.schema.slice(1).map(x => x.field_id), [2147483546, 2147483545])
          for (const row of rows) assert.ok(fs.existsSync(row.file_path))
        }
        if (f.content === 2) {
          assert.deepEqual(meta.schema.slice(1).map(x => x.field_id), f.equality_ids)
        }
      }
    }
    assert.ok(files > 0)
  })

  test(`iceberg ${t.name}: icebird reads the table${t.gaps.length ? ' (gaps: ' + t.gaps.join('; ') + ')' : ''}`, async () => {
    const rows = await withLocalFetch(() => icebergRead({ tableUrl: t.dir }))
    const got = rows.map(r => [Number(r.id), r.name]).sort((a, b) => a[0] - b[0])
    const want = t.ids.map(id => [id, t.names[String(id)]])
    assert.deepEqual(got, want)
    if (t.name === 'evolve') {
      // renamed and widened column, read through the footer's field ids
      for (const r of rows) {
        const id = Number(r.id)
        assert.equal(r.quantity === null ? null : Number(r.quantity), id % 7 === 3 ? null : id * 10)
        assert.ok(!('price' in r) || r.price === undefined)
        assert.equal(r.note ?? null, id >= 5 ? `name-${id}` : null)
      }
    }
  })
}
