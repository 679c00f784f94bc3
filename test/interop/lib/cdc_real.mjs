// The corpus of real producer output under test/data/cdc/real/ (see its README): each
// NAME.jsonl has a NAME.expected.json written by hand from the producer's messages
// ({format, conf, notes, tables: {"db.table": {columns: [[name, iceberg type]], key, rows}}}).
// This module runs one corpus file through `w2l run` and compares the warehouse with the
// expectation using two readers we did not write: lib/lake.mjs (avsc + hyparquet, the
// spec's delete rules) and DuckDB (read_parquet of every live data and delete file, columns
// by field id, the same delete rules applied here).
//
// Values are compared in one text form per Iceberg type (the expected files use it):
// int/long/decimal exact decimal text; float/double the shortest text of the value after
// rounding to float32/float64; boolean true/false; date YYYY-MM-DD; timestamp and
// timestamptz (UTC) YYYY-MM-DD HH:MM:SS.ffffff; time HH:MM:SS.ffffff; string as is;
// binary lowercase hex; null.
import fs from 'node:fs'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { readTable } from './lake.mjs'

const pad = (n, w = 2) => String(n).padStart(w, '0')

export function microsText (micros) {
  const us = BigInt(micros)
  const secs = us >= 0n ? us / 1000000n : -((-us + 999999n) / 1000000n)
  const frac = us - secs * 1000000n
  const d = new Date(Number(secs) * 1000)
  const y = d.getUTCFullYear()
  return `${y < 0 ? '-' + pad(-y, 4) : pad(y, 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(frac, 6)}`
}
export function timeText (micros) {
  const us = BigInt(micros)
  const s = us / 1000000n
  return `${pad(s / 3600n)}:${pad((s / 60n) % 60n)}:${pad(s % 60n)}.${pad(us % 1000000n, 6)}`
}
function dateText (days) {
  return microsText(BigInt(days) * 86400000000n).slice(0, 10)
}
const fnum = x => {
  const n = Number(x)
  return Number.isNaN(n) ? 'NaN' : n === Infinity ? 'Infinity' : n === -Infinity ? '-Infinity' : String(n)
}

// A value of Iceberg type t in the comparison form, from the expected file's text form.
export function expectedForm (t, v) {
  if (v === null || v === undefined) return null
  if (t === 'float') return fnum(Math.fround(Number(v)))
  if (t === 'double') return fnum(v)
  if (t === 'boolean') return v
  return String(v)
}

// ... from lib/lake.mjs's canonical values (int/date numbers, micros as decimal text, ...).
export function lakeForm (t, v) {
  if (v === null || v === undefined) return null
  switch (t) {
    case 'int': case 'long': case 'string': case 'binary': return String(v)
    case 'float': return fnum(Math.fround(v))
    case 'double': return fnum(v)
    case 'boolean': return v
    case 'date': return dateText(v)
    case 'timestamp': case 'timestamptz': return microsText(v)
    case 'time': return timeText(v)
  }
  if (t.startsWith('decimal')) return String(v)
  throw new Error('type not compared: ' + t)
}

// ---- DuckDB: every live file by field id, deletes applied as the spec says
const DUCK_TYPE = {
  int: 'INTEGER', long: 'BIGINT', string: 'VARCHAR', binary: 'BLOB', boolean: 'BOOLEAN', float: 'FLOAT',
  double: 'DOUBLE', date: 'DATE', time: 'TIME', timestamp: 'TIMESTAMP', timestamptz: 'TIMESTAMPTZ'
}
const duckType = t => DUCK_TYPE[t] ?? (t.startsWith('decimal') ? t.toUpperCase() : null)
function duckExpr (t, col) {
  switch (t) {
    case 'boolean': case 'string': return col
    case 'binary': return `lower(hex(${col}))`
    case 'timestamp': case 'timestamptz': return `epoch_us(${col})::VARCHAR`
    default: return `${col}::VARCHAR`
  }
}
function duckForm (t, v) {
  if (v === null || v === undefined) return null
  switch (t) {
    case 'float': return fnum(Math.fround(Number(v)))
    case 'double': return fnum(v)
    case 'timestamp': case 'timestamptz': return microsText(v)
    case 'time': {
      const m = /^(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?$/.exec(v)
      if (!m) throw new Error('DuckDB TIME text ' + v)
      return `${m[1]}:${m[2]}:${m[3]}.${(m[4] ?? '').padEnd(6, '0')}`
    }
    default: return v
  }
}
const sqlStr = s => `'${s.replaceAll("'", "''")}'`
const jsonl = v => JSON.stringify(v, (k, x) => typeof x === 'bigint' ? x.toString() : x)

export async function duckRows (con, tbl) {
  const typeOf = {}
  for (const s of tbl.meta.schemas) for (const f of s.fields) typeOf[f.id] = f.type
  for (const f of tbl.schema.fields) typeOf[f.id] = f.type
  const mapOf = ids => 'MAP {' + ids.map(id => `${id}: {name: 'c${id}', type: '${duckType(typeOf[id])}', default_value: NULL}`).join(', ') + '}'
  const list = files => '[' + files.map(f => sqlStr(f.file_path)).join(', ') + ']'
  const seqOf = new Map([...tbl.dataFiles, ...tbl.deleteFiles].map(f => [f.file_path, f.seq]))
  const posDel = new Map()
  const posFiles = tbl.deleteFiles.filter(d => d.content === 1)
  if (posFiles.length) {
    const rows = (await con.runAndReadAll(`SELECT filename, file_path, pos::VARCHAR AS pos FROM read_parquet(${list(posFiles)}, filename=true)`)).getRowObjects()
    for (const r of rows) {
      if (!posDel.has(r.file_path)) posDel.set(r.file_path, [])
      posDel.get(r.file_path).push({ pos: r.pos, seq: seqOf.get(r.filename) })
    }
  }
  const eqDel = []
  for (const d of tbl.deleteFiles.filter(x => x.content === 2)) {
    const ids = d.equality_ids
    const rows = (await con.runAndReadAll(`SELECT ${ids.map(id => duckExpr(typeOf[id], 'c' + id) + ' AS c' + id).join(', ')} FROM read_parquet(${list([d])}, schema=${mapOf(ids)})`)).getRowObjects()
    eqDel.push({ ids, seq: d.seq, keys: new Set(rows.map(r => jsonl(ids.map(id => r['c' + id])))) })
  }
  const out = []
  if (!tbl.dataFiles.length) return out
  const fields = tbl.schema.fields
  const read = [...fields.map(f => f.id), ...eqDel.flatMap(e => e.ids)].filter((id, i, a) => a.indexOf(id) === i)
  const sel = read.map(id => `${duckExpr(typeOf[id], 'c' + id)} AS c${id}`).join(', ')
  const rows = (await con.runAndReadAll(`SELECT ${sel}, filename, file_row_number::VARCHAR AS frn FROM read_parquet(${list(tbl.dataFiles)}, filename=true, file_row_number=true, schema=${mapOf(read)})`)).getRowObjects()
  for (const r of rows) {
    const seq = seqOf.get(r.filename)
    if ((posDel.get(r.filename) ?? []).some(x => x.pos === r.frn && x.seq >= seq)) continue
    if (eqDel.some(e => e.seq > seq && e.keys.has(jsonl(e.ids.map(id => r['c' + id]))))) continue
    out.push(Object.fromEntries(fields.map(f => [f.name, duckForm(f.type, r['c' + f.id])])))
  }
  return out
}

// ---- running and comparing

export function loadCorpus (dir) {
  return fs.readdirSync(dir).filter(f => f.endsWith('.expected.json')).sort().map(f => {
    const name = f.slice(0, -'.expected.json'.length)
    return { name, jsonl: path.join(dir, name + '.jsonl'), expected: JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) }
  })
}

// Runs `w2l run --until-caught-up` over the corpus file into warehouse wh (conf keys of the
// expected file through --config). Returns the spawnSync result.
export function runCorpus (w2l, entry, dir) {
  const wh = path.join(dir, 'lake')
  const conf = path.join(dir, 'conf.json')
  fs.writeFileSync(conf, JSON.stringify(entry.expected.conf ?? {}))
  const res = spawnSync(w2l, ['run', '--source', `file:${entry.jsonl}?format=${entry.expected.format}`, '--warehouse', wh,
    '--config', conf, '--until-caught-up', '--quiet'], { encoding: 'utf8', timeout: 60000 })
  return { res, wh }
}

function tablesIn (wh) {
  const out = []
  if (!fs.existsSync(wh)) return out
  for (const ns of fs.readdirSync(wh)) {
    const d = path.join(wh, ns)
    if (!fs.statSync(d).isDirectory()) continue
    for (const t of fs.readdirSync(d)) if (fs.existsSync(path.join(d, t, 'metadata', 'version-hint.text'))) out.push(`${ns}.${t}`)
  }
  return out.sort()
}

const SHOW = 4
function diffRows (names, got, want) {
  const line = r => JSON.stringify(names.map(n => r[n] ?? null))
  const count = xs => { const m = new Map(); for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1); return m }
  const g = count(got.map(line)); const w = count(want.map(line))
  const missing = [...w].filter(([x, n]) => (g.get(x) ?? 0) < n).map(([x]) => x)
  const extra = [...g].filter(([x, n]) => (w.get(x) ?? 0) < n).map(([x]) => x)
  if (!missing.length && !extra.length) return null
  const out = [`${got.length} rows, expected ${want.length}; columns ${JSON.stringify(names)}`]
  if (missing.length) out.push(`  expected, not in the lake (${missing.length}):`, ...missing.slice(0, SHOW).map(x => '    ' + x))
  if (extra.length) out.push(`  in the lake, not expected (${extra.length}):`, ...extra.slice(0, SHOW).map(x => '    ' + x))
  return out.join('\n')
}

// Compares warehouse wh with the expectation; returns a list of problems (empty: equal).
export async function checkCorpus (wh, expected, duck) {
  const problems = []
  for (const [qname, t] of Object.entries(expected.tables)) {
    const i = qname.indexOf('.')
    const dir = path.join(wh, qname.slice(0, i), qname.slice(i + 1))
    if (!fs.existsSync(path.join(dir, 'metadata', 'version-hint.text'))) {
      problems.push(`${qname}: not in the lake (tables there: ${JSON.stringify(tablesIn(wh))})`)
      continue
    }
    let tbl
    try { tbl = await readTable(dir) } catch (e) { problems.push(`${qname}: the avsc + hyparquet reader fails: ${e.message}`); continue }
    const gotCols = tbl.schema.fields.map(f => [f.name, f.type])
    if (JSON.stringify(gotCols) !== JSON.stringify(t.columns)) {
      const show = cs => cs.map(([n, ty]) => `${n}:${ty}`).join(', ')
      const diff = []
      const max = Math.max(gotCols.length, t.columns.length)
      for (let k = 0; k < max; k++) {
        const a = gotCols[k]; const b = t.columns[k]
        if (JSON.stringify(a) !== JSON.stringify(b)) diff.push(`#${k + 1} lake ${a ? a.join(':') : '(none)'} expected ${b ? b.join(':') : '(none)'}`)
      }
      problems.push(`${qname}: schema differs: ${diff.slice(0, 8).join('; ')}${diff.length > 8 ? `; ... ${diff.length - 8} more` : ''}\n    lake:     ${show(gotCols)}\n    expected: ${show(t.columns)}`)
    }
    const ids = tbl.schema['identifier-field-ids'] ?? []
    const key = ids.map(id => tbl.schema.fields.find(f => f.id === id)?.name)
    if (JSON.stringify(key) !== JSON.stringify(t.key)) problems.push(`${qname}: identifier fields ${JSON.stringify(key)}, expected ${JSON.stringify(t.key)}`)
    // rows compare on the expected columns that the lake has, in the expected type
    const typeOf = Object.fromEntries(tbl.schema.fields.map(f => [f.name, f.type]))
    const names = t.columns.map(c => c[0]).filter(n => n in typeOf)
    const want = t.rows.map(r => Object.fromEntries(t.columns.map(([n, ty], k) => [n, expectedForm(ty, r[k])])))
    let got
    try {
      got = tbl.rows.map(r => Object.fromEntries(names.map(n => [n, lakeForm(typeOf[n], r[n])])))
    } catch (e) { problems.push(`${qname}: ${e.message}`); continue }
    const d = diffRows(names, got, want)
    if (d) problems.push(`${qname} (avsc + hyparquet): ${d}`)
    if (duck) {
      try {
        const dr = await duckRows(duck, tbl)
        const dd = diffRows(names, dr, want)
        if (dd) problems.push(`${qname} (DuckDB): ${dd}`)
      } catch (e) { problems.push(`${qname}: DuckDB fails: ${e.message}`) }
    }
  }
  return problems
}
