// Parquet files written by the library's own encoder, read by two readers we did not
// write: DuckDB (@duckdb/node-api, C++) and hyparquet (pure JS, + hyparquet-compressors for
// zstd). build/test/gen/pq_gen writes the cases of test/gen/pq_cases.h and prints a
// manifest of every value and of the Iceberg statistics it returned; this test compares
// EVERY value with both readers, the footer (field ids, types, codec, encodings, row
// groups) and DuckDB's parquet_metadata() statistics (null count, min/max per row group)
// with the data, and the Iceberg statistics (counts, bounds, sizes) with the data.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { parquetMetadataAsync, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

const bin = process.env.W2L_TEST_BIN || path.resolve('build')
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-pq-interop-'))
const manifest = JSON.parse(execFileSync(path.join(bin, 'test/gen/pq_gen'), [dir],
  { maxBuffer: 1 << 28 }).toString())
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }))

const db = await DuckDBInstance.create(':memory:')
const con = await db.connect()
await con.run("SET TimeZone = 'UTC'")
const sqlStr = s => `'${s.replaceAll("'", "''")}'`
const q = async sql => (await con.runAndReadAll(sql)).getRowObjects()

// ---- canonical values (as pq_gen prints them) ----
const hex = u8 => Buffer.from(u8).toString('hex')
const num = n => Number.isNaN(n) ? 'NaN' : n === Infinity ? 'Infinity' : n === -Infinity
  ? '-Infinity' : Object.is(n, -0) ? '-0' : n
const scaleOf = t => Number(/decimal\(\d+,(\d+)\)/.exec(t)?.[1] ?? 0)
function decText (v, scale) {
  const neg = v < 0n
  let s = (neg ? -v : v).toString()
  if (scale > 0) {
    s = s.padStart(scale + 1, '0')
    s = s.slice(0, -scale) + '.' + s.slice(-scale)
  }
  return (neg ? '-' : '') + s
}
function beToBig (u8) {
  let v = 0n
  for (const b of u8) v = (v << 8n) | BigInt(b)
  if (u8.length && (u8[0] & 0x80)) v -= 1n << BigInt(8 * u8.length)
  return v
}
const parseNum = s => /^-inf/i.test(s) ? -Infinity : /^\+?inf/i.test(s) ? Infinity : Number(s)
const base = t => t.startsWith('decimal') ? 'decimal' : t

// hyparquet with the annotations stripped: physical values only
function canonPhysical (t, v) {
  if (v === null || v === undefined) return null
  switch (base(t)) {
    case 'boolean': return v
    case 'int': case 'date': return Number(v)
    case 'long': case 'time': case 'timestamp': case 'timestamptz': return BigInt(v).toString()
    case 'float': case 'double': return num(v)
    case 'decimal': return decText(v instanceof Uint8Array ? beToBig(v) : BigInt(v), scaleOf(t))
    case 'string': return new TextDecoder().decode(v)
    case 'binary': return hex(v)
  }
  throw new Error('type ' + t)
}

function canonDuck (t, v) {
  if (v === null || v === undefined) return null
  switch (base(t)) {
    case 'boolean': case 'int': case 'string': return v
    case 'long': return v.toString()
    case 'float': case 'double': return num(v)
    case 'decimal': return decText(v.value, v.scale)
    case 'date': return v.days
    case 'time': case 'timestamp': case 'timestamptz': return v.micros.toString()
    case 'binary': return hex(v.bytes)
  }
  throw new Error('type ' + t)
}

function compareRows (label, f, got) {
  assert.equal(got.length, f.rows.length, `${label}: row count`)
  let bad = 0
  for (let r = 0; r < f.rows.length; r++) {
    for (let c = 0; c < f.columns.length; c++) {
      const want = f.rows[r][c]
      const have = got[r][c]
      if (want !== have && bad++ < 5) {
        assert.fail(`${label} ${f.name} row ${r} column ${f.columns[c].name}: ` +
          `want ${JSON.stringify(want)} got ${JSON.stringify(have)}`)
      }
    }
  }
}

async function hyFile (p) {
  const buf = fs.readFileSync(p)
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
}

for (const f of manifest.files) {
  test(`${f.name}: DuckDB reads every value`, async () => {
    const rows = (await con.runAndReadAll(`SELECT * FROM read_parquet(${sqlStr(f.path)})`)).getRows()
    compareRows('duckdb', f, rows.map(r => r.map((v, c) => canonDuck(f.columns[c].type, v))))
  })

  test(`${f.name}: hyparquet reads every physical value`, async () => {
    const file = await hyFile(f.path)
    const metadata = await parquetMetadataAsync(file)
    for (const el of metadata.schema) { delete el.converted_type; delete el.logical_type }
    const objs = await parquetReadObjects({ file, metadata, compressors, utf8: false })
    compareRows('hyparquet', f, objs.map(o => f.columns.map(c => canonPhysical(c.type, o[c.parquet_name]))))
  })

  test(`${f.name}: hyparquet applies the annotations`, async () => {
    const file = await hyFile(f.path)
    const objs = await parquetReadObjects({ file, compressors })
    f.columns.forEach((c, ci) => {
      f.rows.forEach((row, r) => {
        const want = row[ci]
        const have = objs[r][c.parquet_name]
        const where = `${f.name} row ${r} ${c.name}`
        if (want === null) return assert.equal(have ?? null, null, where)
        switch (base(c.type)) {
          case 'string': assert.equal(have, want, where); break
          case 'date': assert.equal(have.getTime(), want * 86400000, where); break
          case 'timestamptz': case 'timestamp':
            assert.equal(have.getTime(), Number(BigInt(want) / 1000n), where); break
          case 'decimal': {
            const w = Number(want)
            assert.ok(Math.abs(have - w) <= Math.abs(w) * 1e-12, `${where}: ${have} vs ${want}`)
            break
          }
        }
      })
    })
  })

  test(`${f.name}: footer schema, codec, row groups`, async () => {
    const schema = await q(`SELECT * FROM parquet_schema(${sqlStr(f.path)})`)
    const leaves = schema.filter(s => s.num_children === null)
    assert.equal(leaves.length, f.columns.length)
    f.columns.forEach((c, i) => {
      const s = leaves[i]
      assert.equal(s.name, c.parquet_name)
      assert.equal(Number(s.field_id), c.id, `field id of ${c.name}`)
      assert.equal(s.repetition_type, c.required ? 'REQUIRED' : 'OPTIONAL')
      const conv = { string: 'UTF8', date: 'DATE', time: 'TIME_MICROS', timestamptz: 'TIMESTAMP_MICROS', decimal: 'DECIMAL' }[base(c.type)] ?? null
      assert.equal(s.converted_type, conv, `converted type of ${c.name}`)
    })
    const kv = await q(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata(${sqlStr(f.path)})`)
    const ice = kv.find(e => e.k === 'iceberg.schema')
    assert.ok(ice, 'iceberg.schema key')
    const js = JSON.parse(ice.v)
    assert.deepEqual(js.fields.map(x => x.id), f.columns.map(c => c.id))
    const meta = await q(`SELECT * FROM parquet_metadata(${sqlStr(f.path)})`)
    const rgs = new Set(meta.map(m => Number(m.row_group_id)))
    assert.ok(rgs.size >= f.min_row_groups, `${rgs.size} row groups, want >= ${f.min_row_groups}`)
    assert.equal(f.stats.split_offsets.length, f.rows.length ? rgs.size : 0)
    for (const m of meta) assert.equal(m.compression, f.codec)
    if (f.name === 'pages_row_groups_zstd') {
      const enc = p => meta.filter(m => m.path_in_schema === p).map(m => m.encodings)
      assert.ok(enc('status').every(e => e.includes('RLE_DICTIONARY')), 'status: dictionary')
      assert.ok(enc('uniq').every(e => e.includes('PLAIN')), 'uniq: falls back to PLAIN')
      assert.ok(enc('score').every(e => !e.includes('RLE_DICTIONARY')), 'score: PLAIN')
    }
    if (!f.dict) for (const m of meta) assert.ok(!m.encodings.includes('DICTIONARY'), m.encodings)
  })

  test(`${f.name}: DuckDB parquet_metadata() statistics match the data`, async () => {
    const meta = await q(`SELECT * FROM parquet_metadata(${sqlStr(f.path)}) ORDER BY row_group_id, column_id`)
    if (!meta.length) return
    const hyMeta = await parquetMetadataAsync(await hyFile(f.path))
    // row group boundaries from the footer
    const bounds = []
    let start = 0n
    for (const m of meta.filter(m => Number(m.column_id) === 0)) {
      bounds.push([start, start + BigInt(m.row_group_num_rows)])
      start += BigInt(m.row_group_num_rows)
    }
    const rgCase = 'CASE ' + bounds.map(([a, b], i) => `WHEN file_row_number < ${b} THEN ${i}`).join(' ') + ' END'
    for (const [ci, c] of f.columns.entries()) {
      const col = `"${c.parquet_name}"`
      const isFloat = c.type === 'float' || c.type === 'double'
      const filt = isFloat ? ` FILTER (WHERE NOT isnan(${col}))` : ''
      const agg = await q(`SELECT ${rgCase} AS rg, count(*) - count(${col}) AS nulls,
          min(${col})${filt}::VARCHAR AS mn, max(${col})${filt}::VARCHAR AS mx
          FROM read_parquet(${sqlStr(f.path)}, file_row_number = true) GROUP BY rg ORDER BY rg`)
      for (const a of agg) {
        const m = meta.find(x => Number(x.row_group_id) === Number(a.rg) && Number(x.column_id) === ci)
        const where = `${f.name} rg ${a.rg} ${c.name}`
        assert.equal(Number(m.stats_null_count), Number(a.nulls), `${where}: null count`)
        if (a.mn === null) {
          assert.equal(m.stats_min_value, null, `${where}: no min for all NULL/NaN`)
          continue
        }
        if (isFloat) {
          // zeros compare equal: the format writes a zero min as -0.0 and a zero max as +0.0;
          // DuckDB shows an infinite min or max as NULL, so those come from hyparquet's footer
          const hs = hyMeta.row_groups[Number(a.rg)].columns[ci].meta_data.statistics
          const mn = m.stats_min_value ?? (parseNum(a.mn) === -Infinity ? String(hs.min_value) : null)
          const mx = m.stats_max_value ?? (parseNum(a.mx) === Infinity ? String(hs.max_value) : null)
          assert.ok(parseNum(mn) === parseNum(a.mn), `${where}: min ${mn} vs ${a.mn}`)
          assert.ok(parseNum(mx) === parseNum(a.mx), `${where}: max ${mx} vs ${a.mx}`)
        } else {
          assert.equal(m.stats_min_value, a.mn, `${where}: min`)
          assert.equal(m.stats_max_value, a.mx, `${where}: max`)
        }
      }
    }
  })

  test(`${f.name}: Iceberg statistics match the data`, async () => {
    const st = f.stats
    assert.equal(st.record_count, f.rows.length)
    assert.equal(st.file_size, fs.statSync(f.path).size, 'exact file size')
    const meta = await q(`SELECT path_in_schema, total_compressed_size FROM parquet_metadata(${sqlStr(f.path)})`)
    f.columns.forEach((c, ci) => {
      const s = st.cols[ci]
      const where = `${f.name} ${c.name}`
      assert.equal(s.field_id, c.id)
      const vals = f.rows.map(r => r[ci])
      assert.equal(s.value_count, vals.length, `${where}: value count`)
      assert.equal(s.null_count, vals.filter(v => v === null).length, `${where}: null count`)
      const isFloat = c.type === 'float' || c.type === 'double'
      assert.equal(s.nan_count, isFloat ? vals.filter(v => v === 'NaN').length : null, `${where}: NaN count`)
      const size = meta.filter(m => m.path_in_schema === c.parquet_name)
        .reduce((a, m) => a + Number(m.total_compressed_size), 0)
      assert.equal(s.column_size, size, `${where}: column size`)
      const live = vals.filter(v => v !== null && v !== 'NaN')
      if (!live.length) {
        assert.equal(s.lower, null, `${where}: no bounds`)
        return
      }
      checkBounds(where, c.type, live, s.lower, s.upper)
    })
  })
}

// Iceberg single-value serialization -> comparable keys
function keyOf (t, v) { // from a canonical value
  switch (base(t)) {
    case 'boolean': return v ? 1n : 0n
    case 'int': case 'date': return BigInt(v)
    case 'long': case 'time': case 'timestamp': case 'timestamptz': return BigInt(v)
    case 'float': case 'double': return v === '-0' ? -0 : v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : v
    case 'decimal': return BigInt(v.replace('.', ''))
    case 'string': return Buffer.from(v, 'utf8')
    case 'binary': return Buffer.from(v, 'hex')
  }
}
function decodeBound (t, h) {
  const b = Buffer.from(h, 'hex')
  switch (base(t)) {
    case 'boolean': assert.equal(b.length, 1); return BigInt(b[0])
    case 'int': case 'date': assert.equal(b.length, 4); return BigInt(b.readInt32LE(0))
    case 'long': case 'time': case 'timestamp': case 'timestamptz': assert.equal(b.length, 8); return b.readBigInt64LE(0)
    case 'float': assert.equal(b.length, 4); return b.readFloatLE(0)
    case 'double': assert.equal(b.length, 8); return b.readDoubleLE(0)
    case 'decimal': return beToBig(b)
    case 'string': new TextDecoder('utf-8', { fatal: true }).decode(b); return b
    case 'binary': return b
  }
}
function cmp (t, a, b) {
  if (Buffer.isBuffer(a)) return Buffer.compare(a, b)
  if (typeof a === 'number') {
    if (a !== b) return a < b ? -1 : 1
    return Object.is(a, -0) && Object.is(b, 0) ? -1 : Object.is(a, 0) && Object.is(b, -0) ? 1 : 0
  }
  return a < b ? -1 : a > b ? 1 : 0
}
function checkBounds (where, t, live, lowerHex, upperHex) {
  assert.ok(lowerHex !== null && upperHex !== null, `${where}: bounds present`)
  const keys = live.map(v => keyOf(t, v)).sort((a, b) => cmp(t, a, b))
  const min = keys[0]
  const max = keys[keys.length - 1]
  const lo = decodeBound(t, lowerHex)
  const hi = decodeBound(t, upperHex)
  assert.ok(cmp(t, lo, min) <= 0, `${where}: lower bound above the minimum`)
  assert.ok(cmp(t, hi, max) >= 0, `${where}: upper bound below the maximum`)
  if (t === 'string' || t === 'binary') {
    // truncated to 16 code points / bytes: a prefix of the minimum
    assert.ok(min.subarray(0, lo.length).equals(lo), `${where}: lower is a prefix of the min`)
    if ([...min.toString(t === 'string' ? 'utf8' : 'latin1')].length <= 16) assert.ok(lo.equals(min))
    if ([...max.toString(t === 'string' ? 'utf8' : 'latin1')].length <= 16) assert.ok(hi.equals(max))
  } else {
    assert.equal(cmp(t, lo, min), 0, `${where}: lower bound is the minimum`)
    assert.equal(cmp(t, hi, max), 0, `${where}: upper bound is the maximum`)
  }
}
