// A seeded canal-json stream over ~20-40 tables of one database, with table and column DDL
// interleaved with DML, and its reference model (lib/canal.mjs Stream): what the lake must
// hold after the whole stream, table by table.
//
// DDL in the stream: CREATE TABLE (fresh names, and names dropped before with DIFFERENT
// columns), DROP TABLE, RENAME TABLE onto a dropped name, TRUNCATE TABLE, and ALTER TABLE
// ADD COLUMN / DROP COLUMN / MODIFY COLUMN int -> bigint / RENAME COLUMN (sometimes two
// clauses in one statement). DML: inserts, updates of one or two non-key values, updates
// that move a row to a new key, deletes.
//
// The model holds, per table name, the current incarnation only: its columns (in order)
// and its rows. A statement applies from its position on, to the rows the model holds
// at that point:
//   ADD COLUMN      existing rows get null (also when the name was dropped before: the
//                   new column is a new field, the old values must not come back)
//   DROP COLUMN     the value goes
//   MODIFY int->bigint  existing values read as long
//   RENAME COLUMN   the value moves to the new name
//   TRUNCATE        no rows
//   DROP TABLE      the name has no table; CREATE TABLE starts empty with its own columns
//   RENAME a TO b   b is a (columns and rows), a has no table
// Rows are kept as raw canal texts (valid under every type a column had: int text is
// bigint text), and the Stream's canonical rows are rebuilt from them after every DDL
// and at the end, with the columns of the moment.
//
// Keys are never altered (no DDL touches a key column); ADD COLUMN appends (no AFTER /
// FIRST), so a table's column order is MySQL's and Iceberg's alike. Two tables start
// without a primary key (t03, t17; t17 is never dropped or renamed): they only receive
// inserts, besides their DDL (full-row deletes and updates of keyless tables are left
// out: a full-row delete removes every equal row, which makes the model depend on the
// duplicates a DROP COLUMN creates). Tables created later all have a key.
import fs from 'node:fs'
import path from 'node:path'
import { Stream, rng, datetimeText } from './canal.mjs'
import { decText, readTable, samePartition, sortedLines, withLocalFetch } from './lake.mjs'

export const ICEBERG_TYPE = { 'int(11)': 'int', 'bigint(20)': 'long', 'decimal(10,2)': 'decimal(10,2)', 'datetime(6)': 'timestamp' }
export const icebergType = mysql => ICEBERG_TYPE[mysql] ?? (mysql.startsWith('varchar(') ? 'string' : null)

function micros (text) {
  const m = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?$/.exec(text)
  const ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])
  return (BigInt(ms) * 1000n + BigInt((m[7] || '').padEnd(6, '0'))).toString()
}

const CANON = {
  int: v => Number(v),
  long: v => BigInt(v).toString(),
  string: v => v,
  'decimal(10,2)': v => v,
  timestamp: v => micros(v)
}
export function column (name, mysql) {
  return { name, mysql, canon: CANON[icebergType(mysql)] }
}

const q = n => '`' + n + '`'

// Builds the stream: the same options, the same stream. opts: seed; events (messages,
// about); tables (at the start); tableDdl, alterDdl (the share of table statements and
// of ALTER TABLE among the stream's steps); without: kinds of statement left out, to
// narrow a failure down (the test leaves out none): dropTable, recreate (DROP + CREATE at
// once), createDropped, renameTable, truncate, createTable, addColumn, dropColumn,
// modifyColumn, renameColumn, multiClause, keyUpdate; minTables, maxTables: tables are
// dropped only while more than minTables live, created only while fewer than maxTables.
// Returns { stream (lib/canal.mjs Stream: lines, tables = the model, expected(name)),
// alive: [names with a table at the end], dropped: [names that had a table during the
// stream and have none at the end], droppedAt: {name: message id of its last DROP or
// RENAME away}, fate(name, key): what removed the row of that key (values as text, JSON)
// from the name's table last, or null, stats: {statements and changes by kind} }.
export function makeDdlStream ({ seed = 1, events = 30000, tables = 26, without = [], tableDdl = 0.003, alterDdl = 0.005, minTables = 22, maxTables = 40 } = {}) {
  const r = rng(seed)
  const off = new Set(without)
  const int = (a, b) => a + Math.floor(r() * (b - a + 1)) // a..b
  const pick = a => a[Math.floor(r() * a.length)]
  const s = new Stream('shop')
  const raw = new Map() // name -> Map(key -> raw row) | Array (keyless)
  const dropped = new Set() // names without a table now, that had one
  // What became of rows that are not in the model, for failure messages: name -> key
  // (values as text) -> what removed it, and the message that did (id = line number)
  const fates = new Map()
  const droppedAt = {} // name -> the message of its last DROP TABLE / RENAME away
  const fateKey = (t, row) => JSON.stringify(t.pk.map(c => String(row[c])))
  const setFate = (name, row, what) => {
    const t = s.tables[name]
    if (!t.pk.length) return
    if (!fates.has(name)) fates.set(name, new Map())
    fates.get(name).set(fateKey(t, row), `${what} (message ${s.seq - 1})`)
  }
  const fateAll = (name, what) => { for (const row of raw.get(name).values()) setFate(name, row, what) }
  const stats = { insert: 0, update: 0, keyUpdate: 0, delete: 0, create: 0, recreate: 0, drop: 0, renameTable: 0, truncate: 0, addColumn: 0, dropColumn: 0, modifyColumn: 0, renameColumn: 0, multiClause: 0 }
  let colSeq = 0
  let nameSeq = 0
  const PREFIX = { 'int(11)': 'qty', 'bigint(20)': 'cnt', 'decimal(10,2)': 'amount', 'datetime(6)': 'at' }
  const randomMysql = () => pick(['int(11)', 'int(11)', 'bigint(20)', `varchar(${pick([12, 20, 40])})`, 'decimal(10,2)', 'datetime(6)'])
  const newColName = mysql => `${PREFIX[mysql] ?? 'note'}_${++colSeq}`

  function value (mysql) {
    switch (icebergType(mysql)) {
      case 'int': return String(int(-2000000, 2000000))
      case 'long': return (BigInt(int(-4000000, 4000000)) * 1000003n + BigInt(int(0, 999))).toString()
      case 'decimal(10,2)': return decText(BigInt(int(-9999999, 99999999)), 2)
      case 'timestamp': return datetimeText(1600000000000000n + BigInt(int(0, 1e9)) * 1000n + BigInt(int(0, 999)))
      default: {
        const n = Number(/\((\d+)\)/.exec(mysql)[1])
        const t = (r() < 0.1 ? 'ü✓-' : 'v-') + int(0, 1e9).toString(36)
        return t.slice(0, n)
      }
    }
  }

  function keyOf (t, row) { return JSON.stringify(t.pk.map(c => row[c])) }

  // A fresh table structure: key kind, then 2-5 non-key columns with new names.
  function structure (keyless) {
    const kind = keyless ? 'none' : pick(['int', 'int', 'bigint', 'composite'])
    const cols = []
    let pk = []
    if (kind === 'int') { cols.push(column('id', 'int(11)')); pk = ['id'] }
    if (kind === 'bigint') { cols.push(column('id', 'bigint(20)')); pk = ['id'] }
    if (kind === 'composite') { cols.push(column('k1', 'int(11)'), column('k2', 'varchar(12)')); pk = ['k1', 'k2'] }
    const n = int(2, 5)
    for (let i = 0; i < n; i++) { const m = randomMysql(); cols.push(column(newColName(m), m)) }
    return { cols, pk }
  }

  function createSql (name, cols, pk) {
    const defs = cols.map(c => `  ${q(c.name)} ${c.mysql} ${pk.includes(c.name) ? 'NOT NULL' : 'DEFAULT NULL'}`)
    if (pk.length) defs.push(`  PRIMARY KEY (${pk.map(q).join(',')})`)
    return `CREATE TABLE ${q(name)} (\n${defs.join(',\n')}\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`
  }

  // The Stream's canonical rows from the raw ones, with the current columns.
  function rebuild (name) {
    const t = s.tables[name]
    const rows = raw.get(name)
    if (t.pk.length) {
      t.rows = new Map()
      for (const row of rows.values()) { const c = s.canonRow(t, row); t.rows.set(keyOf(t, c), c) }
    } else t.rows = rows.map(row => s.canonRow(t, row))
  }

  const ddl = (name, type, sql) => s.ddl(name, type, sql)

  function addTable (name, { keyless = false, withCreate = true } = {}) {
    const { cols, pk } = structure(keyless)
    if (withCreate) ddl(name, 'CREATE', createSql(name, cols, pk))
    s.table(name, cols, pk)
    raw.set(name, pk.length ? new Map() : [])
    dropped.delete(name)
    if (!withCreate) insert(name) // a table the stream does not create comes with a row
  }

  function dropTable (name) {
    ddl(name, 'ERASE', pick([`DROP TABLE ${q(name)}`, `DROP TABLE IF EXISTS ${q(name)}`]))
    fateAll(name, 'a row of the table DROP TABLE removed')
    droppedAt[name] = s.seq - 1
    delete s.tables[name]
    raw.delete(name)
    dropped.add(name)
    stats.drop++
  }

  const alive = () => Object.keys(s.tables)
  const keyed = name => s.tables[name].pk.length > 0

  // ---- DML
  function newRow (t) {
    const row = {}
    for (const c of t.cols) row[c.name] = t.pk.includes(c.name) ? null : (r() < 0.1 ? null : value(c.mysql))
    return row
  }
  function freshKey (t, rows, row) {
    for (let tries = 0; ; tries++) {
      for (const k of t.pk) {
        const c = t.cols.find(x => x.name === k)
        row[k] = icebergType(c.mysql) === 'string' ? 'k' + int(0, tries < 20 ? 60 : 1e6) : String(int(1, tries < 20 ? 5000 : 1e8))
      }
      if (!rows.has(keyOf(t, row))) return row
    }
  }
  function insert (name) {
    const t = s.tables[name]
    const rows = raw.get(name)
    const row = newRow(t)
    if (t.pk.length) freshKey(t, rows, row)
    s.insert(name, row)
    if (t.pk.length) rows.set(keyOf(t, row), row)
    else rows.push(row)
    fates.get(name)?.delete(fateKey(t, row))
    stats.insert++
  }
  function anyRow (name) {
    const rows = raw.get(name)
    let i = Math.floor(r() * rows.size)
    for (const row of rows.values()) if (i-- === 0) return row
  }
  function update (name) {
    const t = s.tables[name]
    const rows = raw.get(name)
    const b = anyRow(name)
    const a = { ...b }
    const nonKey = t.cols.filter(c => !t.pk.includes(c.name))
    if (r() < 0.06 && !off.has('keyUpdate')) { // the row moves to a new key
      freshKey(t, rows, a)
      stats.keyUpdate++
    } else {
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
    if (keyOf(t, a) !== keyOf(t, b)) setFate(name, b, 'moved to another key by an update')
    fates.get(name)?.delete(fateKey(t, a))
    rows.delete(keyOf(t, b))
    rows.set(keyOf(t, a), a)
    stats.update++
  }
  function del (name) {
    const t = s.tables[name]
    const b = anyRow(name)
    s.delete(name, b)
    setFate(name, b, 'deleted')
    raw.get(name).delete(keyOf(t, b))
    stats.delete++
  }

  // ---- column DDL (never on key columns)
  function alter (name) {
    const t = s.tables[name]
    const rows = raw.get(name)
    const nonKey = t.cols.filter(c => !t.pk.includes(c.name))
    const clauses = []
    const apply = [] // model changes, in clause order
    const want = pick(['add', 'add', 'drop', 'modify', 'rename'])
    const kinds = [want]
    if (r() < 0.2 && !off.has('multiClause')) kinds.push(want === 'add' ? pick(['drop', 'modify']) : 'add')
    const touched = new Set()
    for (const k of kinds) {
      if (off.has({ add: 'addColumn', drop: 'dropColumn', modify: 'modifyColumn', rename: 'renameColumn' }[k])) continue
      if (k === 'add') {
        // sometimes a name this table dropped before (a new field all the same)
        const gone = (t.droppedCols ?? []).filter(n => !t.cols.some(c => c.name === n) && !touched.has(n))
        const m = randomMysql()
        const cname = gone.length && r() < 0.3 ? pick(gone) : newColName(m)
        clauses.push(`ADD COLUMN ${q(cname)} ${m} DEFAULT NULL`)
        apply.push(() => { t.cols.push(column(cname, m)); for (const row of rows.values()) row[cname] = null })
        touched.add(cname)
        stats.addColumn++
      } else if (k === 'drop') {
        const cand = nonKey.filter(c => !touched.has(c.name))
        if (cand.length < 2) continue // keep a non-key column
        const c = pick(cand)
        clauses.push(pick([`DROP COLUMN ${q(c.name)}`, `DROP ${q(c.name)}`]))
        apply.push(() => {
          t.cols = t.cols.filter(x => x.name !== c.name)
          for (const row of rows.values()) delete row[c.name]
          ;(t.droppedCols ??= []).push(c.name)
        })
        touched.add(c.name)
        stats.dropColumn++
      } else if (k === 'modify') {
        const cand = nonKey.filter(c => c.mysql === 'int(11)' && !touched.has(c.name))
        if (!cand.length) continue
        const c = pick(cand)
        clauses.push(`MODIFY COLUMN ${q(c.name)} bigint(20) DEFAULT NULL`)
        apply.push(() => { const i = t.cols.findIndex(x => x.name === c.name); t.cols[i] = column(c.name, 'bigint(20)') })
        touched.add(c.name)
        stats.modifyColumn++
      } else {
        const cand = nonKey.filter(c => !touched.has(c.name))
        if (!cand.length) continue
        const c = pick(cand)
        const to = newColName(c.mysql)
        clauses.push(`RENAME COLUMN ${q(c.name)} TO ${q(to)}`)
        apply.push(() => {
          const i = t.cols.findIndex(x => x.name === c.name)
          t.cols[i] = column(to, c.mysql)
          for (const row of rows.values()) { row[to] = row[c.name]; delete row[c.name] }
        })
        touched.add(c.name); touched.add(to)
        stats.renameColumn++
      }
    }
    if (!clauses.length) return false
    if (clauses.length > 1) stats.multiClause++
    ddl(name, 'ALTER', `ALTER TABLE ${q(name)} ${clauses.join(', ')}`)
    for (const f of apply) f()
    // raw rows keep their columns in the table's order (canal lists them so)
    for (const [k, row] of (t.pk.length ? rows.entries() : rows.map((x, i) => [i, x]))) {
      const o = Object.fromEntries(t.cols.map(c => [c.name, row[c.name] ?? null]))
      if (t.pk.length) rows.set(k, o); else rows[k] = o
    }
    rebuild(name)
    return true
  }

  // ---- the stream
  for (let i = 0; i < tables; i++) {
    const name = `t${String(i).padStart(2, '0')}`
    // half the tables are announced by CREATE TABLE, the others come with their rows
    addTable(name, { keyless: i === 3 || i === 17, withCreate: i % 2 === 0 })
    stats.create++
  }
  const LIMIT = 160 // rows per table, about
  const KEEP = 't17' // a table without a key that stays to the end (its DDL: columns, TRUNCATE)
  while (s.lines.length < events) {
    const x = r()
    const names = alive()
    if (x < tableDdl) { // a table DDL
      const y = r()
      const gone = [...dropped]
      const droppable = names.filter(n => n !== KEEP)
      if (y < 0.30 && names.length > minTables) {
        if (!off.has('dropTable')) dropTable(pick(droppable))
      } else if (y < 0.45 && names.length > minTables) {
        if (off.has('recreate')) continue // drop and create at once, new columns
        const name = pick(droppable)
        dropTable(name)
        addTable(name)
        stats.recreate++
        for (let k = int(1, 8); k > 0; k--) insert(name)
      } else if (y < 0.65 && gone.length && names.length < maxTables) { // a dropped name again
        if (off.has('createDropped')) continue
        const name = pick(gone)
        addTable(name)
        stats.recreate++
      } else if (y < 0.85 && gone.length) { // rename onto a dropped name
        if (off.has('renameTable')) continue
        const from = pick(droppable); const to = pick(gone)
        ddl(from, 'RENAME', `RENAME TABLE ${q(from)} TO ${q(to)}`)
        fateAll(from, `renamed to ${to}`)
        droppedAt[from] = s.seq - 1
        s.tables[to] = s.tables[from]; delete s.tables[from]
        raw.set(to, raw.get(from)); raw.delete(from)
        dropped.delete(to); dropped.add(from)
        stats.renameTable++
      } else if (y < 0.93) {
        if (off.has('truncate')) continue
        const name = pick(names)
        ddl(name, 'TRUNCATE', pick([`TRUNCATE TABLE ${q(name)}`, `TRUNCATE ${q(name)}`]))
        fateAll(name, 'truncated')
        raw.set(name, keyed(name) ? new Map() : [])
        rebuild(name)
        stats.truncate++
      } else if (names.length < maxTables) {
        if (off.has('createTable')) continue
        const name = `n${String(++nameSeq).padStart(2, '0')}`
        addTable(name, { withCreate: r() < 0.7 })
        stats.create++
      }
      continue
    }
    if (x < tableDdl + alterDdl) { alter(pick(names)); continue }
    const name = pick(names)
    const size = raw.get(name).length ?? raw.get(name).size
    if (!keyed(name)) { insert(name); continue }
    const y = r()
    if (size === 0 || (y < 0.45 && size < LIMIT) || (y < 0.2)) insert(name)
    else if (y < 0.78 || size < 3) update(name)
    else del(name)
  }
  // the end: rows, then drops of some of those tables, in one checkpoint's worth
  if (!off.has('dropTable')) for (const name of alive().filter(n => n !== KEEP).slice(0, 3)) { for (let k = 0; k < 5; k++) insert(name); dropTable(name) }
  for (const name of alive()) rebuild(name)
  const fate = (name, key) => fates.get(name)?.get(key) ?? null
  return { stream: s, alive: alive().sort(), dropped: [...dropped].sort(), droppedAt, fate, stats }
}

// ---------------------------------------------------------------- the stream as SQL ----
// The stream of g (from makeDdlStream) as SQL statements for a MySQL/MariaDB server, one per
// message, in order (table names unqualified: run them after USE of the stream's
// database): DDL messages are their SQL text; a DML message becomes INSERT, or UPDATE /
// DELETE by key (every column of a keyless table). A table the stream does not create is
// created, from its first message's types and key, just before that message.
// Returns [{ sql, id (the message's id), kind: the canal type (INSERT, ..., CREATE, ERASE,
// RENAME, TRUNCATE, ALTER) }].
export function streamSql (g) {
  const lit = v => v === null || v === undefined ? 'NULL' : `'${String(v).replaceAll('\\', '\\\\').replaceAll("'", "''")}'`
  const exists = new Set()
  const out = []
  for (const line of g.stream.lines) {
    const m = JSON.parse(line)
    const t = m.table
    if (m.isDdl) {
      if (m.type === 'CREATE') exists.add(t)
      else if (m.type === 'ERASE') exists.delete(t)
      else if (m.type === 'RENAME') { exists.delete(t); exists.add(/ TO `([^`]+)`$/.exec(m.sql)[1]) }
      out.push({ sql: m.sql, id: m.id, kind: m.type })
      continue
    }
    const cols = Object.keys(m.mysqlType)
    const pk = m.pkNames ?? []
    if (!exists.has(t)) {
      const defs = cols.map(c => `${q(c)} ${m.mysqlType[c]} ${pk.includes(c) ? 'NOT NULL' : 'DEFAULT NULL'}`)
      if (pk.length) defs.push(`PRIMARY KEY (${pk.map(q).join(',')})`)
      out.push({ sql: `CREATE TABLE ${q(t)} (${defs.join(', ')}) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`, id: m.id, kind: 'CREATE' })
      exists.add(t)
    }
    m.data.forEach((d, i) => {
      const before = m.type === 'UPDATE' ? { ...d, ...m.old[i] } : d
      const where = (pk.length ? pk : cols).map(c => before[c] === null ? `${q(c)} IS NULL` : `${q(c)} = ${lit(before[c])}`).join(' AND ')
      const sql = m.type === 'INSERT' ? `INSERT INTO ${q(t)} (${cols.map(q).join(',')}) VALUES (${cols.map(c => lit(d[c])).join(',')})`
        : m.type === 'UPDATE' ? `UPDATE ${q(t)} SET ${cols.map(c => `${q(c)} = ${lit(d[c])}`).join(', ')} WHERE ${where}`
          : `DELETE FROM ${q(t)} WHERE ${where}`
      out.push({ sql, id: m.id, kind: m.type })
    })
  }
  return out
}

// ---------------------------------------------------------------- checking a lake ----
// Compares warehouse wh with the model of g (from makeDdlStream), table by table, with
// the independent readers: lib/lake.mjs readTable (avsc + hyparquet, the spec's delete
// rules), DuckDB (decodes every live data and delete file by field id; the delete rules
// applied here) when opts.duckdb is a connection, and icebird when opts.icebird (compared
// on its int, long and string columns: it reads timestamps as ms and decimals as floats).
// Returns a list of problems, one text per table (empty: the lake equals the model).

const SHOW = 3
const jsonl = v => JSON.stringify(v, (k, x) => typeof x === 'bigint' ? x.toString() : x)
const sortCols = r => Object.fromEntries(Object.entries(r).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
const schemaText = fields => fields.map(f => `${f.name}:${f.type}`).join(', ')

// The differences of rows got from want (canonical rows), in a few lines. fate(key) (key:
// JSON of the key's values as text) tells what removed a row the model lacks, if known.
export function diffRows (t, got, want, fate = () => null) {
  const a = sortedLines(got); const b = sortedLines(want)
  if (a.length === b.length && a.every((x, i) => x === b[i])) return null
  const out = [`${got.length} rows, the model ${want.length}`]
  if (t.pk.length) {
    const k = row => jsonl(t.pk.map(c => row[c]))
    const byKey = rows => { const m = new Map(); for (const row of rows) { const x = k(row); m.set(x, [...(m.get(x) ?? []), row]) } return m }
    const g = byKey(got); const w = byKey(want)
    const missing = [...w.keys()].filter(x => !g.has(x))
    const extra = [...g.keys()].filter(x => !w.has(x))
    const dup = [...g.entries()].filter(([, v]) => v.length > 1)
    const changed = [...w.keys()].filter(x => g.has(x) && g.get(x).length === 1 && jsonl(sortCols(g.get(x)[0])) !== jsonl(sortCols(w.get(x)[0])))
    if (missing.length) out.push(`  ${missing.length} key(s) missing, e.g. ` + missing.slice(0, SHOW).map(x => jsonl(w.get(x)[0])).join(' '))
    if (extra.length) {
      const fk = x => fate(jsonl(JSON.parse(x).map(String)))
      const kinds = {}
      for (const x of extra) { const f = (fk(x) ?? 'never written to this name').replace(/ \(message \d+\)$/, ''); kinds[f] = (kinds[f] ?? 0) + 1 }
      out.push(`  ${extra.length} key(s) not in the model (${Object.entries(kinds).map(([f, n]) => `${n} ${f}`).join(', ')}), e.g.`)
      for (const x of extra.slice(0, SHOW)) out.push(`    ${jsonl(g.get(x)[0])}: ${fk(x) ?? 'never written to this name'}`)
    }
    if (dup.length) out.push(`  ${dup.length} key(s) more than once, e.g. ` + dup.slice(0, SHOW).map(([x, v]) => `${x} x${v.length}`).join(' '))
    if (changed.length) {
      out.push(`  ${changed.length} row(s) with other values, e.g.`)
      for (const x of changed.slice(0, SHOW)) {
        const gr = g.get(x)[0]; const wr = w.get(x)[0]
        const cols = [...new Set([...Object.keys(wr), ...Object.keys(gr)])].filter(c => jsonl(gr[c]) !== jsonl(wr[c]))
        out.push(`    key ${x}: ` + cols.map(c => `${c}: lake ${c in gr ? jsonl(gr[c]) : '(no column)'}, model ${c in wr ? jsonl(wr[c]) : '(no column)'}`).join('; '))
      }
    }
  } else {
    const count = xs => { const m = new Map(); for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1); return m }
    const ca = count(a); const cb = count(b)
    const missing = [...cb].filter(([x, n]) => (ca.get(x) ?? 0) < n).map(([x]) => x)
    const extra = [...ca].filter(([x, n]) => (cb.get(x) ?? 0) < n).map(([x]) => x)
    if (missing.length) out.push(`  ${missing.length} row(s) missing, e.g. ` + missing.slice(0, SHOW).join(' '))
    if (extra.length) out.push(`  ${extra.length} row(s) not in the model, e.g. ` + extra.slice(0, SHOW).join(' '))
  }
  return out.join('\n')
}

const DUCK_TYPE = { int: 'INTEGER', long: 'BIGINT', string: 'VARCHAR', timestamp: 'TIMESTAMP', timestamptz: 'TIMESTAMPTZ', date: 'DATE' }
const duckType = t => DUCK_TYPE[t] ?? (t.startsWith('decimal') ? t.toUpperCase() : null)
const duckExpr = (f, col) => f.type === 'int' || f.type === 'string' ? col
  : f.type === 'timestamp' || f.type === 'timestamptz' ? `epoch_us(${col})::VARCHAR`
    : f.type === 'date' ? `(${col} - DATE '1970-01-01')::INTEGER` : `${col}::VARCHAR`
const sqlStr = s => `'${s.replaceAll("'", "''")}'`

// The table's rows as DuckDB decodes its live files (file lists from the manifests); the
// spec's delete rules applied here (sequence numbers, and partitions: a delete reaches only
// data files of its own spec and partition values, an unpartitioned equality delete every
// one: lib/lake.mjs samePartition over the files' specId and pkey from readTable).
export async function duckRows (con, tbl) {
  const typeOf = {}
  for (const s of tbl.meta.schemas) for (const f of s.fields) typeOf[f.id] = f.type
  for (const f of tbl.schema.fields) typeOf[f.id] = f.type
  const mapOf = ids => 'MAP {' + ids.map(id => `${id}: {name: 'c${id}', type: '${duckType(typeOf[id])}', default_value: NULL}`).join(', ') + '}'
  const list = files => '[' + files.map(f => sqlStr(f.file_path)).join(', ') + ']'
  const fileOf = new Map([...tbl.dataFiles, ...tbl.deleteFiles].map(f => [f.file_path, f]))
  const posDel = new Map() // data path -> [{pos, d}]
  const posFiles = tbl.deleteFiles.filter(d => d.content === 1)
  if (posFiles.length) {
    const rows = (await con.runAndReadAll(`SELECT filename, file_path, pos::VARCHAR AS pos FROM read_parquet(${list(posFiles)}, filename=true)`)).getRowObjects()
    for (const r of rows) {
      if (!posDel.has(r.file_path)) posDel.set(r.file_path, [])
      posDel.get(r.file_path).push({ pos: r.pos, d: fileOf.get(r.filename) })
    }
  }
  const eqDel = [] // {ids, d, keys}
  const byIds = new Map()
  for (const d of tbl.deleteFiles.filter(d => d.content === 2)) {
    const k = jsonl(d.equality_ids)
    if (!byIds.has(k)) byIds.set(k, [])
    byIds.get(k).push(d)
  }
  for (const files of byIds.values()) {
    const ids = files[0].equality_ids
    const fields = ids.map(id => ({ id, type: typeOf[id] }))
    const rows = (await con.runAndReadAll(`SELECT ${fields.map(f => duckExpr(f, 'c' + f.id) + ' AS c' + f.id).join(', ')}, filename FROM read_parquet(${list(files)}, filename=true, schema=${mapOf(ids)})`)).getRowObjects()
    const perFile = new Map(files.map(f => [f.file_path, { ids, d: f, keys: new Set() }]))
    for (const r of rows) perFile.get(r.filename).keys.add(jsonl(ids.map(id => r['c' + id])))
    eqDel.push(...perFile.values())
  }
  const out = []
  if (!tbl.dataFiles.length) return out
  const fields = tbl.schema.fields
  // the current columns, and the columns equality deletes compare that it dropped since
  const read = [...fields.map(f => f.id), ...new Set(eqDel.flatMap(e => e.ids))].filter((id, i, a) => a.indexOf(id) === i)
  const sel = read.map(id => `${duckExpr({ id, type: typeOf[id] }, 'c' + id)} AS c${id}`).join(', ')
  const rows = (await con.runAndReadAll(`SELECT ${sel}, filename, file_row_number::VARCHAR AS frn FROM read_parquet(${list(tbl.dataFiles)}, filename=true, file_row_number=true, schema=${mapOf(read)})`)).getRowObjects()
  for (const r of rows) {
    const df = fileOf.get(r.filename)
    if ((posDel.get(r.filename) ?? []).some(x => x.pos === r.frn && x.d.seq >= df.seq && samePartition(x.d, df))) continue
    if (eqDel.some(e => e.d.seq > df.seq && samePartition(e.d, df) && e.keys.has(jsonl(e.ids.map(id => r['c' + id]))))) continue
    out.push(Object.fromEntries(fields.map(f => [f.name, r['c' + f.id] ?? null])))
  }
  return out
}


const ICEBIRD = { int: v => Number(v), long: v => String(v), string: v => v }

export async function checkLake (wh, g, opts = {}) {
  const problems = []
  const s = g.stream
  const dir = name => path.join(wh, s.db, name)
  const hint = name => path.join(dir(name), 'metadata', 'version-hint.text')
  for (const name of g.dropped) {
    if (!fs.existsSync(hint(name))) continue
    let what = ''
    try {
      const t = await readTable(dir(name))
      what = ` (schema ${t.meta['current-schema-id']}: ${schemaText(t.schema.fields)}; ${t.rows.length} rows)`
    } catch (e) { what = ` (unreadable: ${e.message})` }
    problems.push(`${name}: dropped (or renamed away) by message ${g.droppedAt[name]}, but the lake still has it${what}`)
  }
  let icebird
  if (opts.icebird) icebird = (await import('icebird')).icebergRead
  for (const name of g.alive) {
    const t = s.tables[name]
    const want = s.expected(name)
    const wantSchema = t.cols.map(c => ({ name: c.name, type: icebergType(c.mysql) }))
    if (!fs.existsSync(hint(name))) {
      problems.push(`${name}: not in the lake (the model: ${schemaText(wantSchema)}; ${want.length} rows)`)
      continue
    }
    let tbl
    try { tbl = await readTable(dir(name)) } catch (e) {
      problems.push(`${name}: the avsc + hyparquet reader fails: ${e.stack}`)
      continue
    }
    const got = schemaText(tbl.schema.fields.map(f => ({ name: f.name, type: f.type })))
    // opts.anyColumnOrder: the same columns and types, in whatever order (members of a
    // consumer group add a table's columns as its rows or its DDL show them first)
    const sorted = text => text.split(', ').sort().join(', ')
    if (opts.anyColumnOrder ? sorted(got) !== sorted(schemaText(wantSchema)) : got !== schemaText(wantSchema)) {
      problems.push(`${name}: schema ${tbl.meta['current-schema-id']} is\n    ${got}\n  the model's\n    ${schemaText(wantSchema)}`)
      continue // the rows cannot compare
    }
    const idNames = (tbl.schema['identifier-field-ids'] ?? []).map(id => tbl.schema.fields.find(f => f.id === id)?.name)
    if (jsonl(idNames) !== jsonl(t.pk)) problems.push(`${name}: identifier fields ${jsonl(idNames)}, the model's key ${jsonl(t.pk)}`)
    const fate = key => g.fate(name, key)
    const d = diffRows(t, tbl.rows, want, fate)
    if (d) { problems.push(`${name} (avsc + hyparquet): ${d}`); continue }
    if (opts.duckdb) {
      try {
        const dd = diffRows(t, await duckRows(opts.duckdb, tbl), want, fate)
        if (dd) problems.push(`${name} (DuckDB): ${dd}`)
      } catch (e) { problems.push(`${name}: DuckDB fails: ${e.message}`) }
    }
    if (icebird && tbl.dataFiles.length) {
      const cols = wantSchema.filter(f => ICEBIRD[f.type])
      const proj = row => Object.fromEntries(cols.map(f => [f.name, row[f.name] === null || row[f.name] === undefined ? null : ICEBIRD[f.type](row[f.name])]))
      try {
        const rows = await withLocalFetch(() => icebird({ tableUrl: dir(name) }))
        const di = diffRows(t, rows.map(proj), want.map(proj), fate)
        if (di) problems.push(`${name} (icebird, columns ${cols.map(f => f.name).join(',')}): ${di}`)
      } catch (e) { problems.push(`${name}: icebird fails: ${e.message}`) }
    }
  }
  return problems
}
