// Iceberg partition transforms written from the spec ("Partition Transforms", "Bucket
// Transform Details", "Truncate Transform Details", Appendix B), not from our C code, and
// a checker of a table's files against them: every live data file's and equality-delete
// file's partition tuple must be what the transforms give for each row it holds, every
// position-delete file must point only into data files of its own spec and partition, and
// every manifest's partition summaries must bound its files' partition values.
//
// Values are lib/lake.mjs's canonical forms: int and date numbers (days), long, timestamp
// and timestamptz decimal strings (micros), decimal exact text, string, binary hex.
import path from 'node:path'
import { beToBig, canon, decText, key, readAvro, readParquet } from './lake.mjs'

// ---------------------------------------------------------------- murmur3 and bucket ----
// Murmur3 x86_32, seed 0, of bytes (Uint8Array): the signed 32-bit hash (Appendix B).
export function murmur3 (buf) {
  const c1 = 0xcc9e2d51; const c2 = 0x1b873593
  const n = buf.length; const nb = n >>> 2
  let h = 0
  for (let i = 0; i < nb; i++) {
    let k = buf[4 * i] | (buf[4 * i + 1] << 8) | (buf[4 * i + 2] << 16) | (buf[4 * i + 3] << 24)
    k = Math.imul(k, c1); k = (k << 15) | (k >>> 17); k = Math.imul(k, c2)
    h ^= k; h = (h << 13) | (h >>> 19); h = (Math.imul(h, 5) + 0xe6546b64) | 0
  }
  const t = nb * 4
  let k = 0
  const rest = n & 3
  if (rest >= 3) k ^= buf[t + 2] << 16
  if (rest >= 2) k ^= buf[t + 1] << 8
  if (rest >= 1) {
    k ^= buf[t]
    k = Math.imul(k, c1); k = (k << 15) | (k >>> 17); k = Math.imul(k, c2)
    h ^= k
  }
  h ^= n
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h | 0
}

const le8 = v => { const b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(v)); return b }
const decScale = type => Number(/^decimal\(\d+,\s*(\d+)\)$/.exec(type)[1])
// the unscaled value of decimal text at scale s
function unscaled (text, s) {
  const neg = text.startsWith('-')
  const [i, f = ''] = (neg ? text.slice(1) : text).split('.')
  const v = BigInt(i + f.padEnd(s, '0'))
  return neg ? -v : v
}
// the minimal big-endian two's complement bytes of v (Java's BigInteger.toByteArray)
export function minimalBytes (v) {
  let n = 1
  while (v < -(1n << BigInt(8 * n - 1)) || v >= (1n << BigInt(8 * n - 1))) n++
  const out = Buffer.alloc(n)
  for (let i = 0; i < n; i++) out[i] = Number((v >> BigInt(8 * (n - 1 - i))) & 0xffn)
  return out
}

// The bytes the spec hashes for a value of type (canonical value).
export function bucketBytes (type, v) {
  if (type === 'int' || type === 'date') return le8(v) // as a long
  if (type === 'long' || type === 'time' || type === 'timestamp' || type === 'timestamptz') return le8(v)
  if (type === 'string') return Buffer.from(v, 'utf8')
  if (type === 'binary' || type.startsWith('fixed') || type === 'uuid') return Buffer.from(v, 'hex')
  if (type.startsWith('decimal')) return minimalBytes(unscaled(v, decScale(type)))
  throw new Error('bucket of a type the test does not know: ' + type)
}

// ---------------------------------------------------------------- transforms ----
const floorDiv = (a, b) => { const q = a / b; return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q }
const DAY_US = 86400000000n
const HOUR_US = 3600000000n
const daysOf = (type, v) => type === 'date' ? v : Number(floorDiv(BigInt(v), DAY_US))
function civil (days) { // [year, month 1-12, day]
  const d = new Date(days * 86400000)
  return [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()]
}

// The result type of transform tr over a column of type src.
export function resultType (tr, src) {
  if (tr === 'identity' || tr.startsWith('truncate')) return src
  if (tr === 'day') return 'date'
  return 'int' // bucket, year, month, hour, void (null anyway)
}

// The partition value of canonical value v of type src under transform tr (canonical value
// of the result type), or null.
export function applyTransform (tr, src, v) {
  if (v === null || v === undefined || tr === 'void') return null
  if (tr === 'identity') return v
  let m
  if ((m = /^bucket\[(\d+)\]$/.exec(tr))) return (murmur3(bucketBytes(src, v)) & 0x7fffffff) % Number(m[1])
  if ((m = /^truncate\[(\d+)\]$/.exec(tr))) {
    const w = Number(m[1])
    if (src === 'int') return v - (((v % w) + w) % w)
    if (src === 'long') { const x = BigInt(v); const W = BigInt(w); return (x - (((x % W) + W) % W)).toString() }
    if (src.startsWith('decimal')) {
      const s = decScale(src); const x = unscaled(v, s); const W = BigInt(w)
      return decText(x - (((x % W) + W) % W), s)
    }
    if (src === 'string') return Array.from(v).slice(0, w).join('') // code points
    if (src === 'binary') return v.slice(0, 2 * w)
    throw new Error(`truncate of ${src}`)
  }
  if (tr === 'year') return civil(daysOf(src, v))[0] - 1970
  if (tr === 'month') { const [y, mo] = civil(daysOf(src, v)); return (y - 1970) * 12 + (mo - 1) }
  if (tr === 'day') return daysOf(src, v)
  if (tr === 'hour') return Number(floorDiv(BigInt(v), HOUR_US))
  throw new Error('a transform the test does not know: ' + tr)
}

// A manifest's partition value (as avsc decodes it: int numbers, long BigInt, string,
// decimal/fixed/binary bytes) as the canonical value of the result type.
export function partitionCanon (type, v) {
  if (v === null || v === undefined) return null
  if (type === 'int' || type === 'date') return Number(v)
  if (type === 'long' || type === 'time' || type === 'timestamp' || type === 'timestamptz') return BigInt(v).toString()
  if (type === 'string') return typeof v === 'string' ? v : Buffer.from(v).toString('utf8')
  if (type.startsWith('decimal')) return decText(beToBig(v), decScale(type))
  if (type === 'binary' || type.startsWith('fixed') || type === 'uuid') return Buffer.from(v).toString('hex')
  return v
}

// A single-value binary serialization (Appendix D) of a manifest list's partition bound
// as the canonical value of type.
export function boundCanon (type, b) {
  if (b === null || b === undefined) return null
  const buf = Buffer.from(b)
  if (type === 'int' || type === 'date') return buf.readInt32LE(0)
  // a long of 4 bytes: written while the column was an int (type promotion; Iceberg Java's
  // Conversions.fromByteBuffer reads it so)
  if (type === 'long' && buf.length === 4) return String(buf.readInt32LE(0))
  if (type === 'long' || type === 'time' || type === 'timestamp' || type === 'timestamptz') return buf.readBigInt64LE(0).toString()
  return partitionCanon(type, buf)
}
// Order of canonical values of type: -1, 0, 1 (strings by UTF-8 bytes = code points).
function compare (type, a, b) {
  if (type === 'int' || type === 'date') return a < b ? -1 : a > b ? 1 : 0
  if (type === 'long' || type === 'time' || type === 'timestamp' || type === 'timestamptz') { const x = BigInt(a); const y = BigInt(b); return x < y ? -1 : x > y ? 1 : 0 }
  if (type.startsWith('decimal')) { const s = decScale(type); const x = unscaled(a, s); const y = unscaled(b, s); return x < y ? -1 : x > y ? 1 : 0 }
  if (type === 'string') return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
  return Buffer.compare(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'))
}

// The human string of a partition value as Iceberg names directories (Transform's
// toHumanString): dates YYYY-MM-DD, months YYYY-MM, years YYYY, hours YYYY-MM-DD-HH.
const pad = (n, w = 2) => String(n).padStart(w, '0')
export function humanString (tr, type, v) {
  if (v === null) return 'null'
  if (tr === 'year') return pad(1970 + v, 4)
  if (tr === 'month') { const y = 1970 + Math.floor(v / 12); return `${pad(y, 4)}-${pad(((v % 12) + 12) % 12 + 1)}` }
  if (tr === 'day' || type === 'date') { const [y, m, d] = civil(v); return `${pad(y, 4)}-${pad(m)}-${pad(d)}` }
  if (tr === 'hour') { const [y, m, d] = civil(Math.floor(v / 24)); return `${pad(y, 4)}-${pad(m)}-${pad(d)}-${pad(((v % 24) + 24) % 24)}` }
  return String(v)
}

// ---------------------------------------------------------------- the checker ----
const jsonl = v => JSON.stringify(v, (k, x) => typeof x === 'bigint' ? x.toString() : x)
const MAX_PER_KIND = 4

// Checks tbl (lib/lake.mjs readTable of the table at dir) file by file; returns problems
// (texts; empty: all fine). Rows are named in messages by the identifier columns.
// opts.cache: readTable's cache of decoded files; opts.placement: check that each
// equality delete reaches a row (see below; only meaningful while no compaction has
// rewritten the table: a compaction drops the rows a delete committed before its start
// had deleted, and the delete may stay).
export async function checkPartitions (dir, tbl, opts = {}) {
  const readRows = async p => {
    if (!opts.cache) return readParquet(p)
    if (!opts.cache.has(p)) opts.cache.set(p, await readParquet(p))
    return opts.cache.get(p)
  }
  const problems = []
  const count = {}
  const report = (kind, text) => {
    count[kind] = (count[kind] ?? 0) + 1
    if (count[kind] <= MAX_PER_KIND) problems.push(text)
    else if (count[kind] === MAX_PER_KIND + 1) problems.push(`  ... (more ${kind} problems left out)`)
  }
  const { meta } = tbl
  const specs = new Map(meta['partition-specs'].map(s => [s['spec-id'], s]))
  const typeOf = {}
  const nameOf = {}
  for (const s of meta.schemas) for (const f of s.fields) { typeOf[f.id] = f.type; nameOf[f.id] = f.name }
  for (const f of tbl.schema.fields) { typeOf[f.id] = f.type; nameOf[f.id] = f.name }
  const idIds = tbl.schema['identifier-field-ids'] ?? []
  const rel = p => path.relative(dir, p)
  const fieldsOf = f => specs.get(f.specId).fields
  // the canonical partition values the manifest gives file f, by partition field
  const manifestValues = f => fieldsOf(f).map(pf => partitionCanon(resultType(pf.transform, typeOf[pf['source-id']]), f.partition?.[pf.name]))
  const tupleText = f => `spec ${f.specId} {${fieldsOf(f).map((pf, i) => `${pf.name}: ${jsonl(manifestValues(f)[i])}`).join(', ')}}`
  const rowKey = r => idIds.map(id => `${nameOf[id]}=${jsonl(canon(typeOf[id], r[id] ?? null))}`).join(',')

  // the partition record names the spec's fields, in order
  for (const f of [...tbl.dataFiles, ...tbl.deleteFiles]) {
    const want = fieldsOf(f).map(pf => pf.name)
    const got = Object.keys(f.partition ?? {})
    if (jsonl(got) !== jsonl(want)) report('record', `${rel(f.file_path)}: partition record fields ${jsonl(got)}, spec ${f.specId} has ${jsonl(want)}`)
  }

  // rows against their file's partition tuple: data files and equality-delete files
  const checkRows = (f, rows, what) => {
    const fields = fieldsOf(f)
    const want = manifestValues(f)
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]
      for (let j = 0; j < fields.length; j++) {
        const pf = fields[j]
        const src = pf['source-id']
        if (!(src in r) && what !== 'data') continue // a delete file without the column
        const v = canon(typeOf[src], r[src] ?? null)
        const got = applyTransform(pf.transform, typeOf[src], v)
        if (jsonl(got) !== jsonl(want[j])) {
          report(what, `${what} file ${rel(f.file_path)} (${tupleText(f)}): row ${i} (${rowKey(r)}) has ${nameOf[src]} = ${jsonl(v)}, ` +
            `${pf.transform} gives ${pf.name} = ${jsonl(got)}, the manifest says ${jsonl(want[j])}`)
          return
        }
      }
    }
  }

  // where each key was written: partition key -> eq key -> lowest data seq (per equality ids)
  const dataRows = new Map() // data path -> rows
  for (const df of tbl.dataFiles) {
    const rows = await readRows(df.file_path)
    dataRows.set(df.file_path, rows)
    checkRows(df, rows, 'data')
    // Hive-style directory of the file: data/<name=value>/... in the spec's field order
    const segs = path.relative(path.join(dir, 'data'), path.dirname(df.file_path)).split(path.sep).filter(s => s && s !== '.')
    const fields = fieldsOf(df)
    const vals = manifestValues(df)
    const want = fields.map((pf, i) => `${pf.name}=${humanString(pf.transform, resultType(pf.transform, typeOf[pf['source-id']]), vals[i])}`)
    let got
    try { got = segs.map(s => decodeURIComponent(s)) } catch { got = segs }
    if (jsonl(got) !== jsonl(want)) report('directory', `data file ${rel(df.file_path)} (${tupleText(df)}): directories ${jsonl(got)}, want ${jsonl(want)}`)
  }
  const index = new Map() // equality ids JSON -> Map(pkey -> Map(eq key -> lowest seq))
  const indexOf = ids => {
    const k = jsonl(ids)
    if (index.has(k)) return index.get(k)
    const m = new Map()
    for (const df of tbl.dataFiles) {
      if (!m.has(df.pkey)) m.set(df.pkey, new Map())
      const byKey = m.get(df.pkey)
      for (const r of dataRows.get(df.file_path)) {
        const ek = key(ids.map(id => canon(typeOf[id], r[id] ?? null)))
        if (!byKey.has(ek) || byKey.get(ek) > df.seq) byKey.set(ek, df.seq)
      }
    }
    index.set(k, m)
    return m
  }
  const dataByPath = new Map(tbl.dataFiles.map(f => [f.file_path, f]))
  // Placement of equality deletes: the deletes of one key committed by one snapshot (one
  // per spec when a writer writes a copy for each spec the table has, so that the rows of
  // files of older specs are reached too) must together reach a row: a data file of one
  // delete's spec and partition values and a lower sequence number holds the key. The
  // row the delete was written for (an update's or delete's before image, committed in an
  // earlier checkpoint) is in such a file, if the delete went to its partition; a delete
  // that reaches no row was written to a partition its row never was in.
  const groups = new Map() // JSON [ids, eq key, seq] -> { reached, where: [] }
  for (const d of tbl.deleteFiles) {
    const rows = await readRows(d.file_path)
    if (d.content === 2) {
      checkRows(d, rows, 'equality-delete')
      if (!opts.placement) continue
      const all = indexOf(d.equality_ids)
      const byKey = d.pkey === null ? null : all.get(d.pkey)
      for (let i = 0; i < rows.length; i++) {
        const ek = key(d.equality_ids.map(id => canon(typeOf[id], rows[i][id] ?? null)))
        const gk = jsonl([d.equality_ids, ek, d.seq])
        if (!groups.has(gk)) groups.set(gk, { reached: false, where: [], d, ek })
        const g = groups.get(gk)
        // a global (unpartitioned) delete reaches every partition
        const reached = d.pkey === null ? [...all.values()].some(m => m.has(ek) && m.get(ek) < d.seq)
          : (byKey?.has(ek) && byKey.get(ek) < d.seq)
        g.reached ||= !!reached
        g.where.push(`${rel(d.file_path)} (${tupleText(d)})`)
      }
    } else {
      for (let i = 0; i < rows.length; i++) {
        const p = new TextDecoder().decode(rows[i][2147483546])
        const df = dataByPath.get(p)
        if (!df) { report('position-delete', `position-delete file ${rel(d.file_path)} (${tupleText(d)}): row ${i} points into ${rel(p)}, not a live data file`); break }
        if (df.specId !== d.specId || df.pkey !== d.pkey) {
          report('position-delete', `position-delete file ${rel(d.file_path)} (${tupleText(d)}): row ${i} points into ${rel(p)} of ${tupleText(df)}`)
          break
        }
      }
    }
  }
  for (const g of groups.values()) {
    if (g.reached) continue
    const older = [...indexOf(g.d.equality_ids).entries()].filter(([, m]) => m.has(g.ek) && m.get(g.ek) < g.d.seq).map(([pk]) => pk)
    report('equality-delete placement', `the equality delete of ${g.d.equality_ids.map(id => nameOf[id]).join(',')} = ${g.ek} committed at seq ${g.d.seq} ` +
      `(in ${g.where.join('; ')}) reaches no row: no data file of its spec and partition with a lower sequence number holds the key` +
      (older.length ? `; older data files of these partitions do: ${older.slice(0, 4).join(' ')}` : '; no older data file holds it at all'))
  }

  // the manifest list's partition summaries bound the partition values of each manifest's
  // files (what readers prune manifests by)
  const snap = meta.snapshots?.find(s => s['snapshot-id'] === meta['current-snapshot-id'])
  if (snap) {
    const list = await readAvro(snap['manifest-list'])
    for (const mf of list.records) {
      const spec = specs.get(mf.partition_spec_id)
      const m = await readAvro(mf.manifest_path)
      const kv = m.meta?.meta ?? {}
      const mSpecId = kv['partition-spec-id'] !== undefined ? Number(String(kv['partition-spec-id'])) : null
      if (mSpecId !== mf.partition_spec_id) report('manifest', `manifest ${rel(mf.manifest_path)}: its partition-spec-id is ${mSpecId}, the manifest list says ${mf.partition_spec_id}`)
      if (kv['partition-spec'] !== undefined && jsonl(JSON.parse(String(kv['partition-spec']))) !== jsonl(spec.fields)) {
        report('manifest', `manifest ${rel(mf.manifest_path)}: its partition-spec ${String(kv['partition-spec'])} is not spec ${mf.partition_spec_id} of the metadata ${jsonl(spec.fields)}`)
      }
      const sums = mf.partitions ?? []
      if (sums.length !== spec.fields.length) { report('summary', `manifest list entry ${rel(mf.manifest_path)}: ${sums.length} partition summaries, spec ${mf.partition_spec_id} has ${spec.fields.length} fields`); continue }
      spec.fields.forEach((pf, j) => {
        const type = resultType(pf.transform, typeOf[pf['source-id']])
        const lo = boundCanon(type, sums[j].lower_bound); const hi = boundCanon(type, sums[j].upper_bound)
        for (const e of m.records) {
          if (e.status === 2) continue
          const v = partitionCanon(type, e.data_file.partition?.[pf.name])
          const bad = v === null ? !sums[j].contains_null
            : (lo === null || hi === null || compare(type, v, lo) < 0 || compare(type, v, hi) > 0)
          if (bad) {
            report('summary', `manifest list entry ${rel(mf.manifest_path)}: partition summary of ${pf.name} (contains_null ${sums[j].contains_null}, ` +
              `lower ${jsonl(lo)}, upper ${jsonl(hi)}) does not cover ${jsonl(v)} of ${rel(e.data_file.file_path)}`)
            break
          }
        }
      })
    }
  }
  return problems
}

// The spec evolution rules a table's metadata must keep: field ids above 999, unique
// within a spec, the same id for the same source and transform across specs and a fresh
// one otherwise, last-partition-id the highest. Returns problems.
export function checkSpecIds (meta) {
  const problems = []
  const byId = new Map()
  let max = 999
  for (const s of meta['partition-specs']) {
    const seen = new Set()
    for (const f of s.fields) {
      if (f['field-id'] < 1000) problems.push(`spec ${s['spec-id']}: field ${f.name} has id ${f['field-id']} (below 1000)`)
      if (seen.has(f['field-id'])) problems.push(`spec ${s['spec-id']}: field id ${f['field-id']} twice`)
      seen.add(f['field-id'])
      const what = `${f['source-id']}/${f.transform}`
      const other = byId.get(f['field-id'])
      if (other && other !== what) problems.push(`field id ${f['field-id']} names ${other} in one spec and ${what} (${f.name}) in spec ${s['spec-id']}`)
      byId.set(f['field-id'], what)
      max = Math.max(max, f['field-id'])
    }
  }
  if ((meta['last-partition-id'] ?? 999) < max) problems.push(`last-partition-id ${meta['last-partition-id']} below field id ${max}`)
  return problems
}
