// A Kafka cluster for the interop tests: the librdkafka mock cluster hosted by
// build/test/gen/kafka_mock (test/gen/kafka_mock.c; brokers on 127.0.0.1), driven through
// its stdin, and the partitioners of the CDC producers that write into Kafka, so that a
// test lays a stream out over partitions as canal, Debezium and Maxwell do:
//   canal    (flat messages) DDL to partition 0; rows by the hash of their primary key
//            values (canal.mq.partitionHash ":$pk$", the database name mixed in as with
//            canal.mq.database.hash) or by table; null key
//   Debezium one topic per table, PREFIX.DB.TABLE, key = the primary key as JSON, partition
//            = Kafka's default partitioner (murmur2 of the key bytes); DDL on the PREFIX topic
//   Maxwell  by database (producer_partition_by=database), key {"database","table","pk.*"}
// The hashes are Java's String.hashCode (canal, Maxwell) and Kafka's murmur2, written out
// below. Also the envelopes: a canal-json stream (lib/canal.mjs Stream lines) re-written as
// debezium-json and maxwell-json messages carrying the same changes and DDL.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'

export const mockBin = bin => path.join(bin, 'test/gen/kafka_mock')

// Starts a mock cluster of nBrokers brokers. Resolves with { bootstrap, cmd(text): the
// answer line ("ok ..." or "error: ..."), ok(text): the answer, rejecting on an error,
// produce(records): count produced (records: [{ topic, partition, key, value }], key and
// value text or null; null value = tombstone), stop(): ends the process and waits }.
export function startKafka (nBrokers = 3, { bin = process.env.W2L_TEST_BIN || path.resolve('build') } = {}) {
  const exe = mockBin(bin)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-kafka-mock-'))
  const child = spawn(exe, [String(nBrokers)], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', d => { stderr = (stderr + d).slice(-8000) })
  const exited = new Promise(resolve => child.on('exit', (code, sig) => resolve(sig ?? code)))
  const waiting = [] // resolvers of the answers asked for, in order
  let first
  const started = new Promise((resolve, reject) => { first = { resolve, reject } })
  const lines = readline.createInterface({ input: child.stdout })
  lines.on('line', line => {
    if (first) {
      const m = /^bootstrap (\S+)$/.exec(line)
      if (m) first.resolve(m[1]); else first.reject(new Error(`kafka_mock: unexpected first line "${line}"`))
      first = null
      return
    }
    const w = waiting.shift()
    if (w) w.resolve(line)
  })
  exited.then(code => {
    const e = new Error(`kafka_mock exited (${code}); stderr:\n${stderr}`)
    if (first) first.reject(e)
    for (const w of waiting.splice(0)) w.reject(e)
  })
  child.on('error', e => { if (first) first.reject(e) })
  let n = 0
  const cmd = text => new Promise((resolve, reject) => {
    waiting.push({ resolve, reject })
    child.stdin.write(text + '\n')
  })
  const ok = async text => {
    const a = await cmd(text)
    if (!a.startsWith('ok')) throw new Error(`kafka_mock: ${text}: ${a}`)
    return a
  }
  const produce = async records => {
    const f = path.join(dir, `produce-${++n}.tsv`)
    const field = (v, what, r) => {
      if (v === null || v === undefined) return '-'
      if (/[\n\r]/.test(v) || (what === 'key' && v.includes('\t'))) throw new Error(`kafka.mjs: a ${what} with a line break or tab: ${JSON.stringify(r)}`)
      if (v === '-') throw new Error(`kafka.mjs: the ${what} "-" means null in the mock's produce file`)
      return v
    }
    fs.writeFileSync(f, records.map(r => `${r.topic}\t${r.partition ?? -1}\t${field(r.key, 'key', r)}\t${field(r.value, 'value', r)}\n`).join(''))
    const a = await ok(`produce ${f}`)
    fs.rmSync(f)
    return Number(a.split(' ')[1])
  }
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin.end()
      process.kill(child.pid, 'SIGTERM')
    }
    await exited
    fs.rmSync(dir, { recursive: true, force: true })
  }
  return started.then(bootstrap => ({ bootstrap, cmd, ok, produce, stop, pid: child.pid }),
    async e => { await stop().catch(() => {}); throw e })
}

// ------------------------------------------------------------------ hashes ----
// Java's String.hashCode (UTF-16 code units), as a signed 32-bit int.
export function javaHash (s) {
  let h = 0
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0
  return h
}

// Kafka's Utils.murmur2 (seed 0x9747b28c) of bytes, as a signed 32-bit int.
export function murmur2 (bytes) {
  const m = 0x5bd1e995
  const len = bytes.length
  let h = (0x9747b28c ^ len) | 0
  const n4 = len >> 2
  for (let i = 0; i < n4; i++) {
    const j = i * 4
    let k = bytes[j] | (bytes[j + 1] << 8) | (bytes[j + 2] << 16) | (bytes[j + 3] << 24)
    k = Math.imul(k, m)
    k ^= k >>> 24
    k = Math.imul(k, m)
    h = Math.imul(h, m) ^ k
  }
  const t = n4 * 4
  switch (len % 4) {
    case 3: h ^= bytes[t + 2] << 16 // falls through
    case 2: h ^= bytes[t + 1] << 8 // falls through
    case 1: h ^= bytes[t]; h = Math.imul(h, m)
  }
  h ^= h >>> 13
  h = Math.imul(h, m)
  h ^= h >>> 15
  return h | 0
}

// Kafka's default partitioner for a keyed record: toPositive(murmur2(key)) % n.
export const kafkaPartition = (key, n) => (murmur2(Buffer.from(key, 'utf8')) & 0x7fffffff) % n
// Java's Math.abs(h % n) (canal and Maxwell take the absolute value of the remainder).
const absMod = (h, n) => Math.abs(h % n)

// ------------------------------------------------------------ partitioners ----
// canal: partition of a flat message (object), n partitions. by: 'pk' (default) or
// 'table'. DDL goes to partition 0; a message of a table without a key hashes the
// database only (canal's pk hash over no values).
export function canalPartition (m, n, { by = 'pk', databaseHash = true } = {}) {
  if (m.isDdl) return 0
  let h = databaseHash ? javaHash(m.database) : 0
  if (by === 'table') h ^= javaHash(m.table)
  else for (const c of m.pkNames ?? []) { const v = m.data[0][c]; if (v !== null) h ^= javaHash(String(v)) }
  return absMod(h, n)
}

// canal-json stream lines (JSON texts) as records of topic, n partitions.
export function canalRecords (lines, topic, n, opts) {
  return lines.map(v => ({ topic, partition: canalPartition(JSON.parse(v), n, opts), key: null, value: v }))
}

// Maxwell producer_partition_by=database.
export const maxwellPartition = (db, n) => absMod(javaHash(db), n)

// ------------------------------------------------------------------ envelopes ----
// The columns of a canal CREATE TABLE text as lib/ddl_stream.mjs writes it, and the effect
// of its ALTER TABLE ADD COLUMN / MODIFY COLUMN clauses.
function parseCreate (sql) {
  const cols = []; let pk = []
  for (const line of sql.split('\n')) {
    let m = /^\s*`([^`]+)` (\S+) (?:NOT NULL|DEFAULT NULL),?$/.exec(line)
    if (m) cols.push({ name: m[1], mysql: m[2] })
    m = /^\s*PRIMARY KEY \((.*)\)/.exec(line)
    if (m) pk = m[1].split(',').map(x => x.replace(/`/g, ''))
  }
  return { cols, pk }
}
function applyAlter (t, sql) {
  const cols = t.cols.map(c => ({ ...c }))
  for (const m of sql.matchAll(/(ADD|MODIFY) COLUMN `([^`]+)` (\S+)/g)) {
    if (m[1] === 'ADD') cols.push({ name: m[2], mysql: m[3] })
    else {
      const c = cols.find(x => x.name === m[2])
      if (!c) throw new Error(`kafka.mjs: MODIFY of unknown column ${m[2]}: ${sql}`)
      c.mysql = m[3]
    }
  }
  if (/\b(DROP|RENAME|CHANGE)\b/.test(sql.replace(/^ALTER TABLE `[^`]+`/, ''))) throw new Error(`kafka.mjs: only ADD / MODIFY COLUMN are re-written: ${sql}`)
  return { cols, pk: t.pk }
}
const createSql = (name, { cols, pk }) => `CREATE TABLE \`${name}\` (` +
  [...cols.map(c => `\`${c.name}\` ${c.mysql} ${pk.includes(c.name) ? 'NOT NULL' : 'DEFAULT NULL'}`),
    ...(pk.length ? [`PRIMARY KEY (${pk.map(c => '`' + c + '`').join(',')})`] : [])].join(', ') + ') ENGINE=InnoDB DEFAULT CHARSET=utf8mb4'

// Walks canal-json lines keeping each table's columns: calls onDdl(m, before, after) for a
// DDL message (CREATE and ALTER ADD/MODIFY COLUMN only), onRow(m, t, image) per row image
// ({type, before, after} of canal texts) with t = { cols, pk, created }.
function walkCanal (lines, h) {
  const tables = new Map()
  for (const line of lines) {
    const m = JSON.parse(line)
    if (m.isDdl) {
      const before = tables.get(m.table)
      let after
      if (m.type === 'CREATE') after = parseCreate(m.sql)
      else if (m.type === 'ALTER') after = applyAlter(before, m.sql)
      else throw new Error(`kafka.mjs: DDL ${m.type} is not re-written: ${m.sql}`)
      after.created = true
      tables.set(m.table, after)
      h.onDdl(m, before, after)
      continue
    }
    let t = tables.get(m.table)
    if (!t) {
      t = { cols: Object.entries(m.mysqlType).map(([name, mysql]) => ({ name, mysql })), pk: m.pkNames ?? [], created: false }
      tables.set(m.table, t)
    }
    const shape = JSON.stringify(t.cols.map(c => [c.name, c.mysql]))
    if (shape !== JSON.stringify(Object.entries(m.mysqlType))) throw new Error(`kafka.mjs: message ${m.id}: the columns ${shape} re-written from the DDL are not the message's ${JSON.stringify(m.mysqlType)}`)
    m.data.forEach((d, i) => {
      const before = m.type === 'UPDATE' ? { ...d, ...m.old[i] } : m.type === 'DELETE' ? d : null
      h.onRow(m, t, { type: m.type, before, after: m.type === 'DELETE' ? null : d })
    })
  }
}

const micros = text => {
  const x = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?$/.exec(text)
  return BigInt(Date.UTC(+x[1], +x[2] - 1, +x[3], +x[4], +x[5], +x[6])) * 1000n + BigInt((x[7] || '').padEnd(6, '0'))
}
const typeArgs = mysql => (/\(([^)]*)\)/.exec(mysql)?.[1] ?? '').split(',').map(Number)
// Big-endian two's complement bytes of v (BigInt), base64: a Kafka Connect Decimal.
function decimalBase64 (v) {
  const bytes = []
  for (;;) {
    bytes.unshift(Number(v & 0xffn))
    const rest = v >> 8n
    if ((rest === 0n && !(bytes[0] & 0x80)) || (rest === -1n && (bytes[0] & 0x80))) break
    v = rest
  }
  return Buffer.from(bytes).toString('base64')
}
const unscaled = (text, scale) => {
  const [i, f = ''] = text.replace('-', '').split('.')
  const v = BigInt(i + f.padEnd(scale, '0'))
  return text.startsWith('-') ? -v : v
}

// The Kafka Connect field of a column, and its value from canal text (JSON value).
function dbzField (c, pk) {
  const base = c.mysql.replace(/\(.*/, '')
  const f = { optional: !pk.includes(c.name), field: c.name }
  switch (base) {
    case 'int': return { type: 'int32', ...f }
    case 'bigint': return { type: 'int64', ...f }
    case 'varchar': return { type: 'string', ...f }
    case 'decimal': { const [p, s] = typeArgs(c.mysql); return { type: 'bytes', ...f, name: 'org.apache.kafka.connect.data.Decimal', version: 1, parameters: { scale: String(s), 'connect.decimal.precision': String(p) } } }
    case 'datetime': return { type: 'int64', ...f, name: 'io.debezium.time.MicroTimestamp', version: 1 }
    default: throw new Error(`kafka.mjs: no Debezium type for ${c.mysql}`)
  }
}
// JSON text of a value (numbers written exactly as their text).
function dbzValue (c, text) {
  if (text === null || text === undefined) return 'null'
  switch (c.mysql.replace(/\(.*/, '')) {
    case 'int': case 'bigint': return String(BigInt(text))
    case 'decimal': return JSON.stringify(decimalBase64(unscaled(text, typeArgs(c.mysql)[1])))
    case 'datetime': return micros(text).toString()
    default: return JSON.stringify(text)
  }
}
const row = (t, image, conv) => image === null ? 'null' : '{' + t.cols.map(c => `${JSON.stringify(c.name)}:${conv(c, image[c.name] ?? null)}`).join(',') + '}'

// A canal-json stream as Debezium MySQL connector messages (JSON converter with schemas):
// one topic per table, PREFIX.DB.TABLE, keyed by the primary key (null for a table
// without one: spread round-robin), on n partitions; DDL as schema-change events on topic
// PREFIX (one partition) keyed by the database. source.ts_ms is the canal message's es.
export function debeziumRecords (lines, prefix, n) {
  const out = []
  let rr = 0; let pos = 4
  const ddl = (m, sql, ts) => out.push({
    topic: prefix, partition: 0, key: JSON.stringify({ databaseName: m.database }),
    value: JSON.stringify({
      source: { version: '2.5.0.Final', connector: 'mysql', name: prefix, ts_ms: ts, snapshot: 'false', db: m.database, table: m.table, server_id: 1, file: 'mysql-bin.000003', pos: pos += 100, row: 0 },
      databaseName: m.database, schemaName: null, ddl: sql, tableChanges: []
    })
  })
  walkCanal(lines, {
    onDdl (m) { ddl(m, m.sql, m.es) },
    onRow (m, t, img) {
      // a table the stream does not create: its CREATE TABLE first, as the connector's
      // snapshot writes one for every table (the key of the value schema comes from it),
      // one millisecond before the row (the time of a message of another table, or none)
      if (!t.created) { ddl(m, createSql(m.table, t), m.es - 1); t.created = true }
      // a change of the primary key is a delete of the old key and a create of the new one
      const keyText = i => JSON.stringify(t.pk.map(c => i[c] ?? null))
      if (img.type === 'UPDATE' && t.pk.length && keyText(img.before) !== keyText(img.after)) {
        this.onRow(m, t, { type: 'DELETE', before: img.before, after: null })
        this.onRow(m, t, { type: 'INSERT', before: null, after: img.after })
        return
      }
      const op = { INSERT: 'c', UPDATE: 'u', DELETE: 'd' }[img.type]
      const name = `${prefix}.${m.database}.${m.table}`
      const fields = t.cols.map(c => dbzField(c, t.pk))
      const schema = {
        type: 'struct', optional: false, name: `${name}.Envelope`, fields: [
          { type: 'struct', fields, optional: true, name: `${name}.Value`, field: 'before' },
          { type: 'struct', fields, optional: true, name: `${name}.Value`, field: 'after' },
          { type: 'struct', optional: false, name: 'io.debezium.connector.mysql.Source', field: 'source', fields: [{ type: 'int64', optional: false, field: 'ts_ms' }, { type: 'string', optional: false, field: 'db' }, { type: 'string', optional: true, field: 'table' }] },
          { type: 'string', optional: false, field: 'op' },
          { type: 'int64', optional: true, field: 'ts_ms' }]
      }
      const source = { version: '2.5.0.Final', connector: 'mysql', name: prefix, ts_ms: m.es, snapshot: 'false', db: m.database, table: m.table, server_id: 1, file: 'mysql-bin.000003', pos: pos += 100, row: 0 }
      const value = `{"schema":${JSON.stringify(schema)},"payload":{"before":${row(t, img.before, dbzValue)},"after":${row(t, img.after, dbzValue)},` +
        `"source":${JSON.stringify(source)},"op":"${op}","ts_ms":${m.ts}}}`
      const keyOf = i => t.pk.length ? '{' + t.pk.map(c => `${JSON.stringify(c)}:${dbzValue(t.cols.find(x => x.name === c), i[c])}`).join(',') + '}' : null
      const key = keyOf(img.after ?? img.before)
      const part = k => k === null ? rr++ % n : kafkaPartition(k, n)
      out.push({ topic: name, partition: part(key), key, value })
      // a delete is followed by a tombstone of its key (log compaction)
      if (op === 'd' && key !== null) out.push({ topic: name, partition: part(key), key, value: null })
    }
  })
  return out
}

// Maxwell's def of a table (its schema store's shape) and a value as Maxwell writes it.
function maxwellDef (db, name, t) {
  return {
    database: db, charset: 'utf8mb4', table: name, 'primary-key': t.pk,
    columns: t.cols.map(c => {
      const base = c.mysql.replace(/\(.*/, '')
      if (base === 'varchar') return { type: 'varchar', name: c.name, charset: 'utf8mb4' }
      if (base === 'decimal') { const [p, s] = typeArgs(c.mysql); return { type: 'decimal', name: c.name, precision: p, scale: s } }
      if (base === 'datetime') return { type: 'datetime', name: c.name, 'column-length': typeArgs(c.mysql)[0] }
      return { type: base, name: c.name, signed: true }
    })
  }
}
function maxwellValue (c, text) {
  if (text === null || text === undefined) return 'null'
  const base = c.mysql.replace(/\(.*/, '')
  if (base === 'int' || base === 'bigint') return String(BigInt(text))
  if (base === 'decimal') return text // a JSON number of the exact text
  return JSON.stringify(text)
}

// A canal-json stream as Maxwell messages (output_ddl on) on topic, n partitions by
// database: table-create (the table's def and CREATE TABLE) before a table's first row
// when the stream has none, table-alter with the old and new def, rows with "data" and
// "old" (the changed columns' values before), one transaction per message (xid, commit).
// Rows' ts in seconds, DDL's in milliseconds (Maxwell's two maps); key as Maxwell's.
export function maxwellRecords (lines, topic, n) {
  const out = []
  let xid = 1000
  const put = (db, key, value) => out.push({ topic, partition: maxwellPartition(db, n), key: JSON.stringify(key), value })
  const ddl = (m, type, sql, before, after) => put(m.database, { database: m.database, table: m.table },
    JSON.stringify({ type, database: m.database, table: m.table, ...(before ? { old: maxwellDef(m.database, m.table, before) } : {}), def: maxwellDef(m.database, m.table, after), ts: m.es, sql }))
  walkCanal(lines, {
    onDdl (m, before, after) { ddl(m, m.type === 'CREATE' ? 'table-create' : 'table-alter', m.sql, m.type === 'CREATE' ? null : before, after) },
    onRow (m, t, img) {
      if (!t.created) { ddl(m, 'table-create', createSql(m.table, t), null, t); t.created = true }
      const image = img.after ?? img.before
      const old = img.type === 'UPDATE' ? t.cols.filter(c => (img.before[c.name] ?? null) !== (img.after[c.name] ?? null)) : []
      const data = row(t, image, maxwellValue)
      const oldText = old.length ? `,"old":{${old.map(c => `${JSON.stringify(c.name)}:${maxwellValue(c, img.before[c.name])}`).join(',')}}` : ''
      const value = `{"database":${JSON.stringify(m.database)},"table":${JSON.stringify(m.table)},"type":"${img.type.toLowerCase()}",` +
        `"ts":${Math.floor(m.es / 1000)},"xid":${++xid},"commit":true,"data":${data}${oldText}` +
        (t.pk.length ? `,"primary_key_columns":${JSON.stringify(t.pk)}` : '') + '}'
      const key = { database: m.database, table: m.table }
      for (const c of t.pk) key['pk.' + c] = JSON.parse(maxwellValue(t.cols.find(x => x.name === c), image[c]))
      put(m.database, key, value)
    }
  })
  return out
}
