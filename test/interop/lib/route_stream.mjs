// A seeded canal-json stream of sharded tables that a route merges into one lake table
// (route.NAME.*, w2l-config(5)), with the model of what the lake must hold after each run.
//
// Source tables: userinfo000 .. userinfo007 in each of app0, app1, app2 (24 shards of one
// table: id int auto-increment key, name, age int, score decimal(10,2), email), two
// ordinary tables (app0.orders keyed by a bigint; app1.audit keyed by (k, n)), and tables
// the filters leave out: app2.tmp_log and app1.userinfo999 (exclude; the latter matches
// the route), other.userinfo000 and other.noise (not in include). routeConfig routes the 24
// shards to app_all.userinfo ($1_all.$2).
// DML: inserts, updates of one to three non-key columns, key updates, deletes; with
// uniqueIds, ids are unique across the shards (one counter) and rows also move from one
// shard to another (a DELETE on one, then an INSERT of the same id on another: the order
// of the two must hold in the target, whose key is then the id alone); without, each
// shard counts its own ids from 1 (auto-increment: ids collide across shards).
// Shard DDL (share of the stream; SHARD_DDL), each as canal sends it (its own message;
// the shard's rows carry its columns from then on):
//   ADD COLUMN level on app0.userinfo003, then (later, spread out) on the 23 others: the
//     target gains level once (optional; the other shards' rows have NULL until theirs);
//   MODIFY age int -> bigint on app1.userinfo005, then ages beyond 2^31 from it: the
//     target's age widens to long; MODIFY age int(11) (an equal type) on another: nothing;
//   MODIFY score decimal(10,2) -> decimal(14,2) on app2.userinfo002 and 12-digit scores
//     from it: the target widens; MODIFY score decimal(8,2) (narrower) on another: nothing;
//   DROP COLUMN email on app2.userinfo006: the target keeps email; that shard's rows
//     written after it have NULL there (the rows not written since keep theirs);
//   RENAME COLUMN name TO full_name on app1.userinfo002: the target gains full_name; that
//     shard's later rows have NULL in name;
//   rows of app2.userinfo001 carry a column nick that no DDL announced: the target gains it;
//   TRUNCATE TABLE app0.userinfo005: the target keeps the rows it had from it (its ids go
//     on from where they were; see the route test's todo for ids used again after it);
//   DROP TABLE app2.userinfo007: the target keeps its rows; nothing more comes from it;
//   RENAME TABLE app1.userinfo006 TO userinfo006_old: the target keeps its rows; the rows
//     written to it from then on land in app1.userinfo006_old (the route does not match
//     that name), which starts empty (an UPDATE of a row it lacks adds the row);
//   ALTER ADD COLUMN junk on the excluded app1.userinfo999 and rows with it: the target
//     must not see it.
// Ordinary tables: TRUNCATE of app0.orders (followed: an ordinary table empties).
//
// The model: the target's columns (name, Iceberg type; the union of the shards'), each
// schema the target must go through (history), and its rows: per key (_source_db,
// _source_table, id with key-with-source=true; id with uniqueIds), the raw canal texts of
// the last write, with the shard, the operation (INSERT / UPDATE) and the message time
// (es, ms) for the metadata columns. Rows are turned into lib/lake.mjs's canonical values
// with the target's types at the end of each run (values written as int read as long after
// the widening).
import { rng } from './canal.mjs'
import { decText } from './lake.mjs'
import { micros } from './partition_stream.mjs'

export const DBS = ['app0', 'app1', 'app2']
export const SHARD_NAMES = Array.from({ length: 8 }, (_, i) => `userinfo${String(i).padStart(3, '0')}`)
export const TARGET = { db: 'app_all', table: 'userinfo' }
export const ES0 = 1700000000000 // the canal es (ms) of message 0; message i has ES0 + 37 i

// Iceberg type of a MySQL column type, and a canal text as the canonical value of a type
export function icebergType (mysql) {
  if (mysql === 'int(11)') return 'int'
  if (mysql === 'bigint(20)') return 'long'
  if (mysql === 'datetime(6)') return 'timestamp'
  if (mysql.startsWith('varchar(')) return 'string'
  const d = /^decimal\((\d+),(\d+)\)$/.exec(mysql)
  if (d) return `decimal(${d[1]},${d[2]})`
  throw new Error('no mapping for ' + mysql)
}
export function canon (type, v) {
  if (v === null || v === undefined) return null
  if (type === 'int') return Number(v)
  if (type === 'long') return BigInt(v).toString()
  if (type === 'timestamp') return micros(v)
  return v // string, decimal text (always written with its scale)
}
// a type the merge widens from -> to (Iceberg's promotions that occur here)
function promotes (from, to) {
  if (from === 'int' && to === 'long') return true
  const a = /^decimal\((\d+),(\d+)\)$/.exec(from); const b = /^decimal\((\d+),(\d+)\)$/.exec(to)
  return !!(a && b && a[2] === b[2] && +b[1] > +a[1])
}

// The metadata columns (metadata-columns: op_ts, source_db, source_table, op), in the
// order w2l adds them, and their values for a row written by message es, op, from db.table.
export const META = [
  ['op_ts', '_op_ts', 'timestamptz'],
  ['source_db', '_source_db', 'string'],
  ['source_table', '_source_table', 'string'],
  ['op', '_op', 'string']
]
const metaValue = (col, w) => col === '_op_ts' ? (BigInt(w.es) * 1000n).toString()
  : col === '_source_db' ? w.db : col === '_source_table' ? w.table : w.op

// The shard DDL: [share of the stream, db, shard, kind, arg]
const SHARD_DDL = [
  [0.12, 'app0', 'userinfo003', 'add', 'level'],
  [0.22, 'app1', 'userinfo005', 'modify', ['age', 'bigint(20)']],
  [0.27, 'app2', 'userinfo006', 'drop', 'email'],
  [0.31, 'app0', 'userinfo005', 'truncate'],
  [0.34, 'app1', 'userinfo999', 'add', 'junk'], // excluded: must not reach the target
  [0.46, 'app2', 'userinfo002', 'modify', ['score', 'decimal(14,2)']],
  [0.50, 'app1', 'userinfo001', 'modify', ['age', 'int(11)']], // equal to the shard's type
  [0.53, 'app0', 'userinfo001', 'modify', ['score', 'decimal(8,2)']], // narrower
  [0.58, 'app1', 'userinfo002', 'rename', ['name', 'full_name']],
  [0.66, 'app2', 'userinfo001', 'carry', 'nick'], // rows carry it, no DDL
  [0.82, 'app2', 'userinfo007', 'droptable'],
  [0.88, 'app1', 'userinfo006', 'renametable', 'userinfo006_old'] // its rows go on there: not routed
]
const ADD_OTHERS = [0.38, 0.62] // the other shards' ADD COLUMN level, spread over this range
const NEW_COL = { level: 'int(11)', junk: 'varchar(10)', nick: 'varchar(20)' }

// The route config (and filters) of the file source; the shadowed route z_never comes
// first in the object but after `shards` by name. keyWithSource: 'true', 'false' or
// undefined (unset).
export function routeConfig (keyWithSource) {
  return {
    include: 'app[0-9]\\..*',
    exclude: 'app2\\.tmp_.*|app[0-9]\\.userinfo999',
    route: {
      z_never: { source: '[a-z]+[0-9]*\\.userinfo[0-9]*', target: 'nowhere.never' },
      shards: { source: '(app)[0-9]\\.(userinfo)[0-9]{3}', target: '$1_all.$2', ...(keyWithSource === undefined ? {} : { 'key-with-source': keyWithSource }) }
    }
  }
}
// The metadata columns of the runs: the target all four; orders none (its own empty
// key); audit none in run 1 ('' of its own), then the global op_ts, op (added then).
export function metaConfig (run) {
  return {
    'metadata-columns': 'op_ts,op',
    'table.app_all.userinfo.metadata-columns': 'op_ts,source_db,source_table,op',
    'table.app0.orders.metadata-columns': '',
    ...(run === 1 ? { 'table.app1.audit.metadata-columns': '' } : {})
  }
}
const META_OF = {
  [`${TARGET.db}.${TARGET.table}`]: () => ['_op_ts', '_source_db', '_source_table', '_op'],
  'app0.orders': () => [],
  'app1.audit': run => run === 1 ? [] : ['_op_ts', '_op'],
  'app1.userinfo006_old': () => ['_op_ts', '_op'] // the global ones (it is created after run 1)
}

// Builds the stream: the same options, the same stream. uniqueIds: ids unique across the
// shards, and rows that move between shards (for key-with-source=false). Returns { lines,
// parts: [{ lines (messages of runs 1..k), target: {cols, history, pk, rows}, tables:
// {'app0.orders': {cols, pk, rows}, 'app1.audit': ...} }] for each cut and the end (rows
// canonical, with the metadata columns of that run), stats, shards: ['db.table'] }.
export function makeRouteStream ({ seed = 1, events = 2400, uniqueIds = false, cuts = [0.4, 0.75] } = {}) {
  const r = rng(seed)
  const int = (a, b) => a + Math.floor(r() * (b - a + 1))
  const pick = a => a[Math.floor(r() * a.length)]
  const lines = []
  const stats = { insert: 0, update: 0, keyUpdate: 0, delete: 0, move: 0, ddl: 0, ordinary: 0, leftOut: 0 }
  const q = n => '`' + n + '`'

  // ---- source tables: {db, table, cols: [{name, mysql}], pk, rows: Map(id text -> raw), next, alive, routed}
  const tables = new Map()
  const def = (db, table, cols, pk, routed) => {
    const t = { db, table, cols: cols.map(([name, mysql]) => ({ name, mysql })), pk, rows: new Map(), next: 1, alive: true, routed }
    tables.set(`${db}.${table}`, t)
    return t
  }
  const SHARD_COLS = [['id', 'int(11)'], ['name', 'varchar(40)'], ['age', 'int(11)'], ['score', 'decimal(10,2)'], ['email', 'varchar(60)']]
  const shards = []
  for (const db of DBS) for (const s of SHARD_NAMES) shards.push(def(db, s, SHARD_COLS, ['id'], true))
  const orders = def('app0', 'orders', [['id', 'bigint(20)'], ['customer', 'varchar(30)'], ['amount', 'decimal(10,2)'], ['placed', 'datetime(6)']], ['id'], false)
  const audit = def('app1', 'audit', [['k', 'varchar(12)'], ['n', 'int(11)'], ['msg', 'varchar(40)']], ['k', 'n'], false)
  const leftOut = [
    def('app1', 'userinfo999', SHARD_COLS, ['id'], false), // matches the route; excluded
    def('app2', 'tmp_log', [['id', 'int(11)'], ['line', 'varchar(40)']], ['id'], false),
    def('other', 'userinfo000', SHARD_COLS, ['id'], false), // matches z_never; not included
    def('other', 'noise', [['id', 'int(11)'], ['line', 'varchar(40)']], ['id'], false)
  ]
  const shardOf = (db, table) => tables.get(`${db}.${table}`)

  // ---- the lake's model
  const tcols = SHARD_COLS.map(([name, mysql]) => ({ name, type: icebergType(mysql) })) // target source columns
  const history = [tcols.map(c => ({ ...c }))]
  const target = new Map() // key JSON -> {vals: {col: raw}, es, op, db, table}
  const plain = new Map([['app0.orders', new Map()], ['app1.audit', new Map()]]) // key -> {vals, es, op, at}
  const renamed = [] // shards renamed away: ordinary tables now
  const tkey = (db, table, id) => JSON.stringify(uniqueIds ? [id] : [db, table, id])
  // the target takes a shard's columns: added, widened (the union)
  const merge = t => {
    let changed = false
    for (const c of t.cols) {
      const type = icebergType(c.mysql)
      const have = tcols.find(x => x.name === c.name)
      if (!have) { tcols.push({ name: c.name, type }); changed = true } else if (promotes(have.type, type)) { have.type = type; changed = true }
    }
    if (changed) history.push(tcols.map(c => ({ ...c })))
  }

  // ---- messages
  const es = () => ES0 + 37 * lines.length
  const mysqlType = t => Object.fromEntries(t.cols.map(c => [c.name, c.mysql]))
  const sqlType = t => Object.fromEntries(t.cols.map(c => [c.name, 12]))
  const full = (t, raw) => Object.fromEntries(t.cols.map(c => [c.name, raw[c.name] ?? null]))
  const msg = (t, type, data, old) => {
    const at = lines.length
    lines.push(JSON.stringify({
      data: data.map(d => full(t, d)), database: t.db, es: es(), id: at + 1, isDdl: false, mysqlType: mysqlType(t),
      old: old ?? null, pkNames: t.pk, sql: '', sqlType: sqlType(t), table: t.table, ts: es() + 5, type
    }))
    return { es: ES0 + 37 * at, at }
  }
  const ddlMsg = (t, type, sql) => {
    lines.push(JSON.stringify({
      data: null, database: t.db, es: es(), id: lines.length + 1, isDdl: true, mysqlType: null, old: null,
      pkNames: null, sql, sqlType: null, table: t.table, ts: es() + 5, type
    }))
    stats.ddl++
  }

  // ---- values
  const word = () => (r() < 0.1 ? 'ü✓' : 'v') + int(0, 1e9).toString(36)
  const BIG_AGE = 2n ** 31n
  const value = (t, c) => {
    const m = c.mysql
    if (c.name === 'age' && m === 'bigint(20)' && r() < 0.6) return (BIG_AGE * BigInt(r() < 0.5 ? 1 : -1) + BigInt(int(0, 1e9)) * 7n).toString()
    if (m === 'int(11)' || m === 'bigint(20)') return r() < 0.05 ? null : String(int(0, 120))
    if (m === 'decimal(14,2)') return decText(BigInt(int(-99999, 99999)) * 1000000000n + BigInt(int(0, 999999999)), 2)
    // app0.userinfo001's scores fit decimal(8,2) all along (it is narrowed to that later)
    if (m === 'decimal(8,2)' || (c.name === 'score' && t.db === 'app0' && t.table === 'userinfo001')) return decText(BigInt(int(-999999, 999999)), 2)
    if (m === 'decimal(10,2)') return decText(BigInt(int(-99999999, 99999999)), 2)
    if (m === 'datetime(6)') return `2024-0${int(1, 9)}-1${int(0, 9)} 0${int(0, 9)}:1${int(0, 9)}:2${int(0, 9)}.${String(int(0, 999999)).padStart(6, '0')}`
    if (c.name === 'email') return r() < 0.1 ? null : `${word()}@x.test`
    const n = Number(/\((\d+)\)/.exec(m)[1])
    return r() < 0.05 ? null : word().slice(0, n)
  }
  const newRow = (t, key) => {
    const row = {}
    for (const c of t.cols) row[c.name] = key[c.name] ?? value(t, c)
    return row
  }

  // ---- writes into the model
  const write = (t, row, op, w) => {
    if (t.routed) {
      const vals = Object.fromEntries(tcols.map(c => [c.name, t.cols.some(x => x.name === c.name) ? row[c.name] ?? null : null]))
      target.set(tkey(t.db, t.table, row.id), { vals, es: w.es, op, db: t.db, table: t.table })
    } else if (plain.has(`${t.db}.${t.table}`)) {
      plain.get(`${t.db}.${t.table}`).set(JSON.stringify(t.pk.map(k => row[k])), { vals: { ...row }, es: w.es, op, at: w.at })
    }
  }
  const unwrite = (t, row) => {
    if (t.routed) target.delete(tkey(t.db, t.table, row.id))
    else if (plain.has(`${t.db}.${t.table}`)) plain.get(`${t.db}.${t.table}`).delete(JSON.stringify(t.pk.map(k => row[k])))
  }
  const rowKey = (t, row) => JSON.stringify(t.pk.map(k => row[k]))

  // ---- DML
  let globalId = 0
  let bigId = 0n
  const freshKey = t => {
    if (t === orders) { bigId += 1000003n; return { id: (bigId * 4099n + 5000000000n).toString() } }
    if (t === audit) return { k: pick(['k', 'ü', 'x']) + int(0, 99), n: String(t.next++) }
    return { id: String(uniqueIds && t.routed ? ++globalId : t.next++) }
  }
  const insert = t => {
    const row = newRow(t, freshKey(t))
    const w = msg(t, 'INSERT', [row])
    t.rows.set(rowKey(t, row), row)
    write(t, row, 'INSERT', w)
    stats.insert++
  }
  const anyRow = t => pick([...t.rows.values()])
  const update = t => {
    const before = anyRow(t)
    const after = { ...before }
    const cols = t.cols.filter(c => !t.pk.includes(c.name))
    for (let i = int(1, 3); i > 0; i--) { const c = pick(cols); after[c.name] = value(t, c) }
    const old = {}
    for (const c of t.cols) if ((before[c.name] ?? null) !== (after[c.name] ?? null)) old[c.name] = before[c.name] ?? null
    const w = msg(t, 'UPDATE', [after], [old])
    t.rows.set(rowKey(t, after), after)
    write(t, after, 'UPDATE', w)
    stats.update++
  }
  const keyUpdate = t => {
    const before = anyRow(t)
    const after = { ...before, ...freshKey(t) }
    if (r() < 0.5) { const c = pick(t.cols.filter(c => !t.pk.includes(c.name))); after[c.name] = value(t, c) }
    const old = {}
    for (const c of t.cols) if ((before[c.name] ?? null) !== (after[c.name] ?? null)) old[c.name] = before[c.name] ?? null
    const w = msg(t, 'UPDATE', [after], [old])
    t.rows.delete(rowKey(t, before))
    unwrite(t, before)
    t.rows.set(rowKey(t, after), after)
    write(t, after, 'UPDATE', w)
    stats.keyUpdate++
  }
  const del = t => {
    const row = anyRow(t)
    msg(t, 'DELETE', [row])
    t.rows.delete(rowKey(t, row))
    unwrite(t, row)
    stats.delete++
  }
  // a row leaves shard a and comes back on shard b with the same id (uniqueIds only)
  const move = (a, b) => {
    const row = anyRow(a)
    msg(a, 'DELETE', [row])
    a.rows.delete(rowKey(a, row))
    unwrite(a, row)
    const again = newRow(b, { id: row.id })
    const w = msg(b, 'INSERT', [again])
    b.rows.set(rowKey(b, again), again)
    write(b, again, 'INSERT', w)
    stats.move++
  }
  const dml = t => {
    const x = r()
    if (t.rows.size < 3 || x < 0.42) insert(t)
    else if (x < 0.72) update(t)
    else if (x < 0.8) keyUpdate(t)
    else if (x < 0.9 || !uniqueIds || !t.routed) del(t)
    else {
      const b = pick(shards.filter(s => s.alive && s !== t))
      move(t, b)
    }
  }

  // ---- DDL
  const shardDdl = ([, db, table, kind, arg]) => {
    const t = shardOf(db, table)
    if (kind === 'add') {
      ddlMsg(t, 'ALTER', `ALTER TABLE ${q(table)} ADD COLUMN ${q(arg)} ${NEW_COL[arg]} DEFAULT NULL`)
      t.cols.push({ name: arg, mysql: NEW_COL[arg] })
      for (const row of t.rows.values()) row[arg] = null
    } else if (kind === 'carry') {
      t.cols.push({ name: arg, mysql: NEW_COL[arg] })
      for (const row of t.rows.values()) row[arg] = null
    } else if (kind === 'modify') {
      const [col, mysql] = arg
      ddlMsg(t, 'ALTER', `ALTER TABLE ${q(table)} MODIFY COLUMN ${q(col)} ${mysql} DEFAULT NULL`)
      t.cols.find(c => c.name === col).mysql = mysql
    } else if (kind === 'drop') {
      ddlMsg(t, 'ALTER', `ALTER TABLE ${q(table)} DROP COLUMN ${q(arg)}`)
      t.cols = t.cols.filter(c => c.name !== arg)
      for (const row of t.rows.values()) delete row[arg]
    } else if (kind === 'rename') {
      const [from, to] = arg
      ddlMsg(t, 'ALTER', `ALTER TABLE ${q(table)} RENAME COLUMN ${q(from)} TO ${q(to)}`)
      t.cols.find(c => c.name === from).name = to
      for (const row of t.rows.values()) { row[to] = row[from]; delete row[from] }
    } else if (kind === 'truncate') {
      ddlMsg(t, 'TRUNCATE', `TRUNCATE TABLE ${q(table)}`)
      t.rows.clear() // a route's target keeps them; an ordinary table empties
      if (!t.routed) plain.get(`${db}.${table}`).clear()
    } else if (kind === 'droptable') {
      ddlMsg(t, 'ERASE', `DROP TABLE ${q(table)}`)
      t.rows.clear()
      t.alive = false
    } else if (kind === 'renametable') {
      // the rows move with it in the source; the lake table of the new name (an ordinary
      // one: the route does not match it) starts empty and gets what is written from here
      ddlMsg(t, 'RENAME', `RENAME TABLE ${q(table)} TO ${q(arg)}`)
      const n = def(db, arg, t.cols.map(c => [c.name, c.mysql]), t.pk, false)
      n.rows = t.rows
      n.next = t.next
      t.rows = new Map()
      t.alive = false
      plain.set(`${db}.${arg}`, new Map())
      renamed.push(n)
      insert(n)
    }
    if (t.routed && t.alive) merge(t)
  }
  const others = shards.filter(s => !(s.db === 'app0' && s.table === 'userinfo003'))
  const addAt = others.map((s, i) => [ADD_OTHERS[0] + (ADD_OTHERS[1] - ADD_OTHERS[0]) * i / (others.length - 1), s.db, s.table, 'add', 'level'])
  const schedule = [...SHARD_DDL, ...addAt, [0.55, 'app0', 'orders', 'truncate']].sort((a, b) => a[0] - b[0])

  // ---- the model of the lake after messages [0, lines.length) with the config of run
  const snapshot = run => {
    const metaCols = name => META_OF[name](run)
    const metaType = Object.fromEntries(META.map(([, c, ty]) => [c, ty]))
    const tname = `${TARGET.db}.${TARGET.table}`
    const cols = [...SHARD_COLS.map(([name]) => ({ ...tcols.find(c => c.name === name) })), ...metaCols(tname).map(c => ({ name: c, type: metaType[c] })),
      ...tcols.slice(SHARD_COLS.length).map(c => ({ ...c }))]
    const rows = [...target.values()].map(w => {
      const o = {}
      for (const c of tcols) o[c.name] = canon(c.type, w.vals[c.name] ?? null)
      for (const c of metaCols(tname)) o[c] = metaValue(c, w)
      return o
    })
    // the target's schemas: source columns, metadata columns, then what the shards added
    const sch = h => [...h.slice(0, SHARD_COLS.length), ...metaCols(tname).map(c => ({ name: c, type: metaType[c] })), ...h.slice(SHARD_COLS.length)]
    const out = {
      lines: lines.length,
      target: { name: tname, cols, history: history.map(sch), pk: uniqueIds ? ['id'] : ['_source_db', '_source_table', 'id'], rows },
      tables: {}
    }
    for (const [name, m] of plain) {
      const t = tables.get(name)
      const mc = metaCols(name)
      const tc = [...t.cols.map(c => ({ name: c.name, type: icebergType(c.mysql) })), ...mc.map(c => ({ name: c, type: metaType[c] }))]
      out.tables[name] = {
        name,
        cols: tc,
        pk: t.pk,
        rows: [...m.values()].map(w => {
          const o = Object.fromEntries(t.cols.map(c => [c.name, canon(icebergType(c.mysql), w.vals[c.name] ?? null)]))
          // audit's metadata columns came in run 2: rows last written in run 1 have NULL
          for (const c of mc) o[c] = name === 'app1.audit' && w.at < parts[0].lines ? null : metaValue(c, w)
          return o
        })
      }
    }
    return out
  }

  const parts = []
  const cutAt = cuts.map(c => Math.floor(c * events))
  let next = 0
  for (let step = 0; step < events; step++) {
    while (next < schedule.length && schedule[next][0] * events <= step) shardDdl(schedule[next++])
    if (cutAt.includes(step)) parts.push(snapshot(parts.length + 1))
    const x = r()
    if (x < 0.04 && renamed.length) dml(pick(renamed))
    else if (x < 0.8) dml(pick(shards.filter(s => s.alive)))
    else if (x < 0.88) { dml(orders); stats.ordinary++ } else if (x < 0.95) { dml(audit); stats.ordinary++ } else {
      const t = pick(leftOut)
      if (t.rows.size && r() < 0.3) update(t)
      else insert(t)
      stats.leftOut++
    }
  }
  parts.push(snapshot(parts.length + 1))
  return { lines, parts, stats, shards: shards.map(s => `${s.db}.${s.table}`) }
}

// canal-json lines of a hand-written stream: [db, table, type, mysqlType, data, old?] for
// rows (key id), [db, table, type, sql] for DDL; message i has es ES0 + 37 i.
export function canalLines (msgs) {
  return msgs.map(([db, table, type, cols, data, old], i) => {
    const es = ES0 + 37 * i
    if (typeof cols === 'string') {
      return JSON.stringify({ data: null, database: db, es, id: i + 1, isDdl: true, mysqlType: null, old: null, pkNames: null, sql: cols, sqlType: null, table, ts: es + 5, type })
    }
    return JSON.stringify({
      data, database: db, es, id: i + 1, isDdl: false, mysqlType: cols, old: old ?? null, pkNames: ['id'], sql: '',
      sqlType: Object.fromEntries(Object.keys(cols).map(c => [c, 12])), table, ts: es + 5, type
    })
  })
}
