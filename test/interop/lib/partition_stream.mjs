// A seeded canal-json stream over tables of database `shop`, each partitioned its own way
// (the partition-by of each run: tableDefs), and its model (lib/canal.mjs Stream):
// inserts; updates of non-partition columns; updates that move a row to another partition
// (a new value of a partition source column, or a new key where the key is the source);
// key updates; deletes; bursts of updates of one key (a few in a row, then maybe its
// delete); deletes of a key and its re-insert into another partition; ALTER TABLE ADD
// COLUMN on partitioned tables and MODIFY COLUMN int -> bigint of partition source columns
// (tableDefs: alters, modify: at which share of the stream).
// Values reach the partition edges: datetimes and dates before 1970 (1969-12-31
// 23:59:59.999999, 1900-01-01, 1000-01-01), multi-byte UTF-8 (2-, 3- and 4-byte code
// points) for truncate and identity, negative and zero decimals, NULL in partition columns.
import { Stream, rng } from './canal.mjs'
import { decText } from './lake.mjs'

const pad = (n, w = 2) => String(n).padStart(w, '0')
// canal text "YYYY-MM-DD[ HH:MM:SS[.ffffff]]" -> micros since epoch (UTC) as text
export function micros (text) {
  const m = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?$/.exec(text)
  if (!m) throw new Error('not a datetime: ' + text)
  const ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])
  return (BigInt(ms) * 1000n + BigInt((m[7] || '').padEnd(6, '0'))).toString()
}
export const days = text => Date.UTC(+text.slice(0, 4), +text.slice(5, 7) - 1, +text.slice(8, 10)) / 86400000

// MySQL type -> [Iceberg type, canal text -> canonical value]
export const TYPES = {
  'int(11)': ['int', v => Number(v)],
  'bigint(20)': ['long', v => BigInt(v).toString()],
  'decimal(10,2)': ['decimal(10,2)', v => v],
  'decimal(12,3)': ['decimal(12,3)', v => v],
  'datetime(6)': ['timestamp', micros],
  'timestamp(6)': ['timestamptz', micros], // source.timezone UTC (the default)
  timestamp: ['timestamptz', micros],
  date: ['date', days]
}
export const icebergType = mysql => TYPES[mysql]?.[0] ?? (mysql.startsWith('varchar(') ? 'string' : null)
export const column = (name, mysql, gen) => ({ name, mysql, gen, canon: TYPES[mysql]?.[1] ?? (v => v) })

// A partition-by clause as [{col, transform}] (Iceberg transform names), parsed here the
// way w2l-config(5) describes it: col, bucket(N, col), truncate(W, col), year/month/day/
// hour(col) and the plurals; names bare or in backquotes.
export function parseBy (text) {
  if (!text || !text.trim()) return []
  return text.split(/,(?![^(]*\))/).map(e => e.trim()).map(e => {
    const m = /^(\w+)\s*\(\s*([^)]*)\)$/.exec(e)
    const unq = x => x.trim().replace(/^[`"](.*)[`"]$/, '$1')
    if (!m) return { col: unq(e), transform: 'identity' }
    const fn = m[1].toLowerCase().replace(/s$/, '')
    const args = m[2].split(',').map(unq)
    if (fn === 'bucket' || fn === 'truncate') {
      const n = args.find(a => /^\d+$/.test(a)); const col = args.find(a => !/^\d+$/.test(a))
      return { col, transform: `${fn}[${n}]` }
    }
    return { col: args[0], transform: fn }
  })
}

// ---- value generators (r: the stream's rng) ----
const pick = (r, a) => a[Math.floor(r() * a.length)]
const int = (r, a, b) => a + Math.floor(r() * (b - a + 1))
const maybeNull = (r, p, f) => () => r() < p ? null : f()
// days of datetimes: before 1970, the epoch, a leap day, far past
const DT_DAYS = ['1969-12-31', '1970-01-01', '2024-02-29', '2024-03-01', '1900-01-01', '1969-07-20']
const HOURS = [0, 1, 13, 23]
function datetime (r, dayList = DT_DAYS) {
  const x = r()
  if (x < 0.04) return '1969-12-31 23:59:59.999999' // micros -1: day -1, hour -1
  if (x < 0.07) return '1970-01-01 00:00:00.000000'
  return `${pick(r, dayList)} ${pad(pick(r, HOURS))}:${pad(int(r, 0, 59))}:${pad(int(r, 0, 59))}.${pad(int(r, 0, 999999), 6)}`
}
// TIMESTAMP holds 1970-01-01 00:00:01 .. 2038-01-19 03:14:07 UTC
const TS_DAYS = ['1970-01-02', '2001-09-09', '2024-02-29', '2038-01-18']
const timestamp = (r, frac = true) => `${pick(r, TS_DAYS)} ${pad(pick(r, HOURS))}:${pad(int(r, 0, 59))}:${pad(int(r, 0, 59))}` + (frac ? `.${pad(int(r, 0, 999999), 6)}` : '')
const D_DAYS = ['1900-01-01', '1969-12-31', '1969-01-01', '1970-01-01', '1968-02-29', '2024-02-29', '1000-01-01', '2024-12-31']
const date = r => pick(r, D_DAYS)
const amount = r => r() < 0.1 ? '0.00' : decText(BigInt(int(r, -999, 999)), 2) // small: truncate/bucket partitions
const bigAmount = r => decText(BigInt(int(r, -99999999, 99999999)) * 10n + BigInt(int(r, 0, 9)), 3)
// strings whose first code points repeat: truncate(3) puts them in a handful of partitions
const PREFIXES = ['abc', 'ab', 'a', '', 'üñï', 'ü', '東京都', '東京', '😀😀😀', '😀a', 'a😀b', 'zzz', 'ab😀', 'é']
const name = r => pick(r, PREFIXES) + (r() < 0.7 ? pick(r, ['', 'x', 'déf', '界', '😀', '-' + int(r, 0, 999)]) : '')
const note = r => (r() < 0.1 ? 'ü✓-' : 'n-') + int(r, 0, 1e9).toString(36)
const REGIONS = ['eu', 'us', 'ap', 'ü-süd', '東京', 'a/b c%']

// ---- the tables: columns (key first), key, the partition-by of each run (by[k]: run k+1;
// undefined: the key is not in that run's config, the table keeps its spec; ''
// unpartitioned), the ALTER TABLEs (share of the stream: ADD COLUMN at alters, MODIFY
// int -> bigint of a column at modify) ----
// Spec changes: hour_dt hour -> day -> hour again (spec 0 is the default again); plain
// unpartitioned (no key) -> bucket(4, id) -> '' (spec 0 again); year_d years(d) -> ''
// (unpartitioned: its deletes are global); day_dt day -> day + bucket(2, id) in run 3
// (the day field keeps its id); bkt keeps its spec while its key is unset in run 2.
// MODIFY int -> bigint of a partition source: ident_int.shard (identity) in run 1,
// multi.qty (truncate(1000)) in run 2.
export function tableDefs (r) {
  const c = (n, m, g) => column(n, m, g)
  const same = by => [by, by, by]
  return [
    { name: 'ident_str', pk: ['id'], by: same('region'), cols: [c('id', 'int(11)'), c('region', 'varchar(16)', maybeNull(r, 0.08, () => pick(r, REGIONS))), c('qty', 'int(11)', () => String(int(r, -1000, 1000))), c('amount', 'decimal(10,2)', () => amount(r)), c('created', 'datetime(6)', () => datetime(r))] },
    { name: 'ident_int', pk: ['id'], by: same('`shard`'), modify: [[0.3, 'shard']], cols: [c('id', 'bigint(20)'), c('shard', 'int(11)', maybeNull(r, 0.08, () => String(pick(r, [-7, -1, 0, 1, 2, 2147483647, -2147483648])))), c('note', 'varchar(40)', () => note(r)), c('ts', 'timestamp(6)', () => timestamp(r))] },
    { name: 'bkt', pk: ['id'], by: ['bucket(8, id)', undefined, 'BUCKET(8, `id`)'], bigKeys: true, cols: [c('id', 'bigint(20)'), c('note', 'varchar(40)', () => note(r)), c('amount', 'decimal(10,2)', () => amount(r))] },
    { name: 'day_dt', pk: ['id'], by: ['day(created)', 'day(created)', 'day(created), bucket(2, id)'], cols: [c('id', 'int(11)'), c('created', 'datetime(6)', maybeNull(r, 0.06, () => datetime(r))), c('qty', 'int(11)', () => String(int(r, 0, 99))), c('note', 'varchar(40)', () => note(r))] },
    { name: 'day_ts', pk: ['id'], by: same('days(ts)'), cols: [c('id', 'int(11)'), c('ts', 'timestamp(6)', () => timestamp(r)), c('ts0', 'timestamp', () => timestamp(r, false)), c('note', 'varchar(40)', () => note(r))] },
    { name: 'trunc', pk: ['id'], by: same('truncate(3, name)'), alters: [0.6], cols: [c('id', 'int(11)'), c('name', 'varchar(20)', maybeNull(r, 0.06, () => name(r))), c('qty', 'int(11)', () => String(int(r, 0, 99)))] },
    { name: 'hour_dt', pk: ['id'], by: ['hour(created)', 'day(created)', 'hours(created)'], alters: [0.7], cols: [c('id', 'int(11)'), c('created', 'datetime(6)', maybeNull(r, 0.05, () => datetime(r, DT_DAYS.slice(0, 3)))), c('note', 'varchar(40)', () => note(r))] },
    { name: 'month_d', pk: ['id'], by: same('month(d)'), cols: [c('id', 'int(11)'), c('d', 'date', maybeNull(r, 0.06, () => date(r))), c('qty', 'int(11)', () => String(int(r, 0, 99)))] },
    { name: 'year_d', pk: ['id'], by: ['years(d)', '', ''], cols: [c('id', 'int(11)'), c('d', 'date', () => date(r)), c('amount', 'decimal(10,2)', () => amount(r))] },
    { name: 'two', pk: ['id'], by: same('day(created), bucket(4, id)'), alters: [0.3], cols: [c('id', 'int(11)'), c('created', 'datetime(6)', () => datetime(r)), c('note', 'varchar(40)', () => note(r)), c('qty', 'int(11)', () => String(int(r, 0, 99)))] },
    { name: 'multi', pk: ['id'], by: same('bucket(3, code), bucket(3, amount), truncate(1000, qty), bucket(2, d), bucket(2, at)'), modify: [[0.6, 'qty']], cols: [c('id', 'int(11)'), c('code', 'varchar(20)', () => name(r)), c('amount', 'decimal(12,3)', () => bigAmount(r)), c('qty', 'int(11)', () => String(int(r, -2500, 2500))), c('d', 'date', () => date(r)), c('at', 'datetime(6)', () => datetime(r)), c('note', 'varchar(40)', () => note(r))] },
    { name: 'multi_ts', pk: ['id'], by: same('bucket(2, ts), truncate(500, amount), month(ts)'), cols: [c('id', 'bigint(20)'), c('ts', 'timestamp(6)', () => timestamp(r)), c('amount', 'decimal(10,2)', () => amount(r)), c('note', 'varchar(40)', () => note(r))] },
    { name: 'plain', pk: ['id'], by: [undefined, 'bucket(4, id)', ''], cols: [c('id', 'int(11)'), c('qty', 'int(11)', () => String(int(r, 0, 99))), c('note', 'varchar(40)', () => note(r))] },
    { name: 'glob_a', pk: ['id'], global: true, by: [undefined, undefined, undefined], cols: [c('id', 'int(11)'), c('qty', 'int(11)', () => String(int(r, 0, 99))), c('note', 'varchar(40)', () => note(r))] }
  ]
}
// the global partition-by and the tables it applies to (glob_a; plain's name does not match)
export const GLOBAL = { 'partition-by': 'bucket(2, id)', 'partition-by.tables': 'shop\\.glob_.*' }
// The config keys of run k (1-based).
export function config (defs, run) {
  const conf = { ...GLOBAL }
  for (const t of defs) {
    const by = t.by[run - 1]
    if (by !== undefined) conf[`table.shop.${t.name}.partition-by`] = by
  }
  return conf
}
// The specs a table must have after run k: { specs: [[{col, transform}]] (by spec id),
// defaultId }. A changed partition-by adds a spec unless an equal one exists (reused).
export function expectedSpecs (t, run) {
  const specs = []; let cur = -1
  for (let k = 0; k < run; k++) {
    const by = t.global ? GLOBAL['partition-by'] : t.by[k]
    if (by === undefined && k > 0) continue // unset: the table keeps its spec
    const want = parseBy(by ?? '')
    const text = JSON.stringify(want)
    let i = specs.findIndex(x => JSON.stringify(x) === text)
    if (i < 0) { specs.push(want); i = specs.length - 1 }
    cur = i
  }
  return { specs, defaultId: cur }
}

// The stream: { stream (Stream: lines, tables = the model at the end, expected(name)),
// defs, parts: [{ lines (the messages of runs 1..k), tables: name -> {cols: [{name, type}],
// rows} (the model after them), fate(name, key) }] for each cut (shares of events: the
// ends of the runs but the last, at step boundaries) and the end, stats, ddl: [{table, sql,
// at}] }. fate(name, key): what removed the row of key (JSON of the key values as text)
// last, for failure messages.
export function makePartitionStream ({ seed = 1, events = 4000, limit = 70, cuts = [0.5] } = {}) {
  const r = rng(seed)
  const defs = tableDefs(r)
  const s = new Stream('shop')
  const raw = new Map() // name -> Map(key text -> raw row)
  const gone = new Map() // name -> [raw rows deleted], for re-inserts of their keys
  const fates = new Map() // name -> Map(key JSON -> what removed it)
  const stats = { insert: 0, update: 0, move: 0, keyUpdate: 0, delete: 0, reinsert: 0, burst: 0, addColumn: 0, modifyColumn: 0 }
  const ddl = []
  let colSeq = 0
  for (const t of defs) {
    s.table(t.name, t.cols, t.pk)
    raw.set(t.name, new Map())
    gone.set(t.name, [])
    fates.set(t.name, new Map())
  }
  const keyText = (t, row) => t.pk.map(k => row[k]).join('|')
  const fateKey = (t, row) => JSON.stringify(t.pk.map(k => String(row[k])))
  const setFate = (t, row, what) => fates.get(t.name).set(fateKey(t, row), `${what} (message ${s.seq - 1})`)
  const partCols = t => {
    const by = [...t.by, t.global ? GLOBAL['partition-by'] : undefined].filter(Boolean).join(',')
    return s.tables[t.name].cols.filter(c => !t.pk.includes(c.name) && new RegExp(`\\b${c.name}\\b`).test(by))
  }
  const freshKey = (t, rows) => {
    for (;;) {
      const id = t.bigKeys ? String(BigInt(int(r, -5e6, 5e6)) * 1000003n) : String(int(r, 1, 5000))
      if (!rows.has(id)) return id
    }
  }
  const valueOf = c => c.gen ? c.gen() : null
  const sCols = name => s.tables[name].cols

  function insert (t, row) {
    const rows = raw.get(t.name)
    if (!row) {
      row = {}
      for (const c of sCols(t.name)) row[c.name] = t.pk.includes(c.name) ? freshKey(t, rows) : valueOf(c)
    }
    s.insert(t.name, row)
    rows.set(keyText(t, row), row)
    fates.get(t.name).delete(fateKey(t, row))
    stats.insert++
  }
  function anyRow (t) {
    const rows = raw.get(t.name)
    let i = Math.floor(r() * rows.size)
    for (const row of rows.values()) if (i-- === 0) return row
  }
  // kind: 'value' (non-partition columns), 'move' (a partition column), 'key'
  function update (t, b, kind) {
    const rows = raw.get(t.name)
    const a = { ...b }
    const cols = sCols(t.name)
    const pcols = partCols(t)
    const others = cols.filter(c => !t.pk.includes(c.name) && !pcols.includes(c))
    if (kind === 'move' && !pcols.length) kind = 'key' // the key is the partition source
    if (kind === 'key') a[t.pk[0]] = freshKey(t, rows)
    else {
      const cand = kind === 'move' ? pcols : others
      const n = Math.min(cand.length, r() < 0.7 ? 1 : 2)
      const chosen = new Set()
      while (chosen.size < n) chosen.add(pick(r, cand))
      for (const c of chosen) {
        let v; let tries = 0
        do v = valueOf(c); while (v === b[c.name] && ++tries < 20)
        a[c.name] = v
      }
      if (cols.every(c => a[c.name] === b[c.name])) a[others[0].name] = note(r) + 'u' // a change after all
    }
    s.update(t.name, b, a)
    if (kind === 'key') setFate(t, b, 'moved to another key by an update')
    fates.get(t.name).delete(fateKey(t, a))
    rows.delete(keyText(t, b))
    rows.set(keyText(t, a), a)
    stats.update++
    if (kind === 'move') stats.move++
    if (kind === 'key') stats.keyUpdate++
    return a
  }
  function del (t, b) {
    s.delete(t.name, b)
    setFate(t, b, 'deleted')
    raw.get(t.name).delete(keyText(t, b))
    gone.get(t.name).push(b)
    stats.delete++
  }
  function addColumn (t) {
    const cname = `extra_${++colSeq}`
    const mysql = pick(r, ['int(11)', 'varchar(20)', 'date'])
    const gen = mysql === 'int(11)' ? () => String(int(r, -50, 50)) : mysql === 'date' ? () => date(r) : () => note(r).slice(0, 20)
    const sql = `ALTER TABLE \`${t.name}\` ADD COLUMN \`${cname}\` ${mysql} DEFAULT NULL`
    s.ddl(t.name, 'ALTER', sql)
    const st = s.tables[t.name]
    st.cols = [...st.cols, column(cname, mysql, gen)]
    for (const row of st.rows.values()) row[cname] = null
    for (const row of raw.get(t.name).values()) row[cname] = null
    ddl.push({ table: t.name, sql, at: s.lines.length })
    stats.addColumn++
  }
  function modifyColumn (t, cname) { // int -> bigint: the model's values become long text
    const sql = `ALTER TABLE \`${t.name}\` MODIFY COLUMN \`${cname}\` bigint(20) DEFAULT NULL`
    s.ddl(t.name, 'ALTER', sql)
    const st = s.tables[t.name]
    st.cols = st.cols.map(c => c.name === cname ? column(cname, 'bigint(20)', c.gen) : c)
    for (const row of st.rows.values()) if (row[cname] !== null) row[cname] = BigInt(row[cname]).toString()
    ddl.push({ table: t.name, sql, at: s.lines.length })
    stats.modifyColumn++
  }

  // the model at each cut (at the first step boundary from it on) and at the end
  const parts = []
  const snapshot = () => {
    const tables = {}
    for (const t of defs) {
      const st = s.tables[t.name]
      tables[t.name] = { cols: st.cols.map(c => ({ name: c.name, type: icebergType(c.mysql) })), rows: s.expected(t.name).map(x => ({ ...x })) }
    }
    const f = new Map([...fates].map(([n, m]) => [n, new Map(m)]))
    parts.push({ lines: s.lines.length, tables, fate: (name, key) => f.get(name)?.get(key) ?? null })
  }
  const cutAt = cuts.map(x => Math.floor(x * events))
  const pending = defs.flatMap(t => [
    ...(t.alters ?? []).map(at => ({ at: Math.floor(at * events), run: () => addColumn(t) })),
    ...(t.modify ?? []).map(([at, cname]) => ({ at: Math.floor(at * events), run: () => modifyColumn(t, cname) }))
  ]).sort((a, b) => a.at - b.at)
  while (s.lines.length < events) {
    if (parts.length < cutAt.length && s.lines.length >= cutAt[parts.length]) snapshot()
    if (pending.length && s.lines.length >= pending[0].at) { pending.shift().run(); continue }
    const t = pick(r, defs)
    const rows = raw.get(t.name)
    const x = r()
    if (rows.size < 12 || (x < 0.3 && rows.size < limit)) { insert(t); continue }
    if (x < 0.5) update(t, anyRow(t), 'value')
    else if (x < 0.7) update(t, anyRow(t), 'move')
    else if (x < 0.76) update(t, anyRow(t), 'key')
    else if (x < 0.86) del(t, anyRow(t))
    else if (x < 0.93) { // a burst: one key updated a few times in a row, maybe deleted
      let b = anyRow(t)
      for (let k = int(r, 2, 4); k > 0; k--) b = update(t, b, pick(r, ['value', 'move', 'move', 'key']))
      if (r() < 0.3) del(t, b)
      stats.burst++
    } else { // a deleted key comes back (new values: another partition, mostly)
      const g = gone.get(t.name).filter(b => !rows.has(keyText(t, b)))
      if (!g.length) continue
      const b = g[Math.floor(r() * g.length)]
      const row = {}
      for (const c of sCols(t.name)) row[c.name] = t.pk.includes(c.name) ? b[c.name] : valueOf(c)
      insert(t, row)
      stats.reinsert++
    }
  }
  snapshot()
  return { stream: s, defs, parts, stats, ddl }
}
