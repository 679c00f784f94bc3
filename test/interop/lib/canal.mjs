// A deterministic canal-json change stream with a reference model of what the lake must
// hold afterwards. The model is computed from the same operations, independently of the
// library: it keeps each table's rows by primary key (or as a multiset without one) in the
// canonical value forms of lib/lake.mjs.
export function rng (seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const pad = (n, w = 2) => String(n).padStart(w, '0')
// "YYYY-MM-DD HH:MM:SS.ffffff" of micros since epoch (UTC), and the canonical micros text
export function datetimeText (micros) {
  const ms = Number(micros / 1000n)
  const d = new Date(ms)
  const frac = ((micros % 1000000n) + 1000000n) % 1000000n
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(frac, 6)}`
}

export class Stream {
  constructor (db) {
    this.db = db
    this.lines = []
    this.tables = {} // name -> { cols: [{name, mysql, canon}], pk: [names], rows: Map | Array }
    this.seq = 1
  }

  table (name, cols, pk) {
    this.tables[name] = { cols, pk, rows: pk.length ? new Map() : [] }
  }

  keyOf (t, row) { return JSON.stringify(t.pk.map(c => row[c])) }

  msg (type, name, data, old) {
    const t = this.tables[name]
    const mysqlType = Object.fromEntries(t.cols.map(c => [c.name, c.mysql]))
    const sqlType = Object.fromEntries(t.cols.map(c => [c.name, 12]))
    this.lines.push(JSON.stringify({
      data: data.map(r => Object.fromEntries(t.cols.map(c => [c.name, r[c.name] ?? null]))),
      database: this.db, es: 1700000000000 + this.seq, id: this.seq++, isDdl: false,
      mysqlType, old: old ?? null, pkNames: t.pk.length ? t.pk : null, sql: '', sqlType,
      table: name, ts: 1700000000000 + this.seq, type
    }))
  }

  ddl (name, type, sql) {
    this.lines.push(JSON.stringify({
      data: null, database: this.db, es: 1700000000000 + this.seq, id: this.seq++, isDdl: true,
      mysqlType: null, old: null, pkNames: null, sql, sqlType: null, table: name,
      ts: 1700000000000 + this.seq, type
    }))
  }

  // raw: { col: canal text or null }
  canonRow (t, raw) {
    return Object.fromEntries(t.cols.map(c => [c.name, raw[c.name] === null || raw[c.name] === undefined ? null : c.canon(raw[c.name])]))
  }

  insert (name, raw) {
    const t = this.tables[name]
    this.msg('INSERT', name, [raw])
    const row = this.canonRow(t, raw)
    if (t.pk.length) t.rows.set(this.keyOf(t, row), row)
    else t.rows.push(row)
  }

  update (name, before, after) {
    const t = this.tables[name]
    const old = {}
    for (const c of t.cols) if ((before[c.name] ?? null) !== (after[c.name] ?? null)) old[c.name] = before[c.name] ?? null
    this.msg('UPDATE', name, [after], [old])
    const b = this.canonRow(t, before); const a = this.canonRow(t, after)
    if (t.pk.length) {
      t.rows.delete(this.keyOf(t, b))
      t.rows.set(this.keyOf(t, a), a)
    } else {
      const i = t.rows.findIndex(r => JSON.stringify(r) === JSON.stringify(b))
      if (i >= 0) t.rows.splice(i, 1) // a full-row delete removes every equal row in the lake
      t.rows = t.rows.filter(r => JSON.stringify(r) !== JSON.stringify(b))
      t.rows.push(a)
    }
  }

  delete (name, raw) {
    const t = this.tables[name]
    this.msg('DELETE', name, [raw])
    const row = this.canonRow(t, raw)
    if (t.pk.length) t.rows.delete(this.keyOf(t, row))
    else t.rows = t.rows.filter(r => JSON.stringify(r) !== JSON.stringify(row))
  }

  expected (name) {
    const t = this.tables[name]
    return t.pk.length ? [...t.rows.values()] : [...t.rows]
  }

  text () { return this.lines.join('\n') + '\n' }
}
