// An Iceberg REST catalog for tests, written from the REST catalog specification (the
// OpenAPI description's paths, requests, TableRequirement and TableUpdate objects), bound to
// 127.0.0.1 on a free port. It keeps namespaces and table pointers in DIR/catalog.json and
// writes each table's metadata files itself from the updates of a commit (under the table's
// location, NNNNN-UUID.metadata.json), refusing a commit whose requirements do not hold with
// 409 CommitFailedException. Paged lists (pageSize, default 2, so clients must follow
// next-page-token), a path prefix announced in /v1/config's overrides, the endpoints it
// serves, and OAuth2 client credentials (POST /v1/oauth/tokens) when a credential is given.
//
// Fault injection, one queued fault per matching request:
//   fault('commit', '503')   answer 503 before applying
//   fault('commit', 'lost')  apply, then close the connection without an answer
//   fault('commit', '409')   answer 409 without applying
//   fault('commit', 'expire') revoke every token, answer 401 (the one presented is revoked)
//   expireTokens()           every token issued so far is refused with 401 from now on
//   fault('txn', '503' | 'lost' | '409')  the same on POST /v1/{prefix}/transactions/commit
// Multi-table transactions (POST /v1/{prefix}/transactions/commit, CommitTransactionRequest)
// when started with transactions: true (listed among the endpoints; every table's
// requirements are checked before any table is changed, then all are applied: 204) or
// 'refuse' (listed, but answered 501, as a server without them).
// Storage: metadata files go to the local file system, or, for s3:// table locations when
// started with s3: { endpoint, bucket }, to that S3 server with its built-in key pair (the
// server keeps what it wrote for its own reads; requests are then served one at a time).
// Vended credentials (vended: true): a table load that sends X-Iceberg-Access-Delegation:
// vended-credentials gets in its config s3.access-key-id and s3.secret-access-key (that key
// pair), a fresh s3.session-token and s3.session-token-expires-at-ms vendedTtlMs ahead;
// stats.vended counts those loads by table ("ns.name").
// Counters: stats.commits (tables applied), stats.txns (transactions applied), stats.faults
// (fired), stats.unauthorized (401s sent), stats.tokens (issued), stats.requests (by
// "METHOD /path-shape"). onChange(): called after each request that changed a table
// pointer (a commit, a transaction, a drop, a rename), when the catalog is at rest;
// onTxn(): after each transaction applied (before its answer; faults queued then hit the
// next request).
import http from 'node:http'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { ACCESS_KEY, SECRET_KEY, putObject } from './s3.mjs'

const SEP = '\x1f'

class HttpError extends Error {
  constructor (status, type, message) { super(message); this.status = status; this.type = type }
}
const notFound = (type, msg) => new HttpError(404, type, msg)
const conflict = (type, msg) => new HttpError(409, type, msg)
const bad = msg => new HttpError(400, 'BadRequestException', msg)

function emptyTable () {
  return {
    'format-version': 1,
    'table-uuid': null,
    location: null,
    'last-sequence-number': 0,
    'last-updated-ms': Date.now(),
    'last-column-id': 0,
    schemas: [],
    'current-schema-id': -1,
    'partition-specs': [],
    'default-spec-id': -1,
    'last-partition-id': 999,
    'sort-orders': [],
    'default-sort-order-id': -1,
    properties: {},
    'current-snapshot-id': -1,
    snapshots: [],
    'snapshot-log': [],
    'metadata-log': [],
    refs: {}
  }
}

const maxFieldId = fields => {
  let m = 0
  for (const f of fields || []) {
    m = Math.max(m, f.id ?? f['field-id'] ?? 0)
    if (f.type && typeof f.type === 'object') {
      m = Math.max(m, maxFieldId(f.type.fields), f.type['element-id'] ?? 0, f.type['key-id'] ?? 0, f.type['value-id'] ?? 0)
    }
  }
  return m
}

// Does the table (meta, or undefined when it does not exist) meet the requirement?
function check (meta, r) {
  const fail = msg => { throw conflict('CommitFailedException', `Requirement failed: ${msg}`) }
  if (r.type === 'assert-create') { if (meta) fail('table already exists'); return }
  if (!meta) throw notFound('NoSuchTableException', 'Table does not exist')
  switch (r.type) {
    case 'assert-table-uuid': if (meta['table-uuid'] !== r.uuid) fail(`UUID does not match: expected ${meta['table-uuid']} != ${r.uuid}`); break
    case 'assert-ref-snapshot-id': {
      const ref = meta.refs[r.ref]
      const want = r['snapshot-id'] ?? null
      const have = ref ? ref['snapshot-id'] : null
      if (String(have) !== String(want)) fail(`branch ${r.ref} has changed: expected id ${want} != ${have}`)
      break
    }
    case 'assert-current-schema-id': if (meta['current-schema-id'] !== r['current-schema-id']) fail('current schema changed'); break
    case 'assert-last-assigned-field-id': if (meta['last-column-id'] !== r['last-assigned-field-id']) fail('last assigned field id changed'); break
    case 'assert-last-assigned-partition-id': if (meta['last-partition-id'] !== r['last-assigned-partition-id']) fail('last assigned partition id changed'); break
    case 'assert-default-spec-id': if (meta['default-spec-id'] !== r['default-spec-id']) fail('default partition spec changed'); break
    case 'assert-default-sort-order-id': if (meta['default-sort-order-id'] !== r['default-sort-order-id']) fail('default sort order changed'); break
    default: throw bad(`unknown requirement ${r.type}`)
  }
}

// The next metadata: meta (a copy) with the updates applied, in order.
function apply (meta, updates) {
  const m = structuredClone(meta)
  let lastSchema = null; let lastSpec = null; let lastOrder = null
  const nextId = (arr, key) => arr.reduce((x, e) => Math.max(x, e[key] + 1), 0)
  for (const u of updates) {
    switch (u.action) {
      case 'assign-uuid': m['table-uuid'] = u.uuid; break
      case 'upgrade-format-version':
        if (u['format-version'] < m['format-version']) throw bad('cannot downgrade the format version')
        m['format-version'] = u['format-version']
        break
      case 'add-schema': {
        const s = structuredClone(u.schema)
        if (s['schema-id'] === undefined || m.schemas.some(x => x['schema-id'] === s['schema-id'])) s['schema-id'] = nextId(m.schemas, 'schema-id')
        m.schemas.push(s)
        m['last-column-id'] = Math.max(m['last-column-id'], u['last-column-id'] ?? 0, maxFieldId(s.fields))
        lastSchema = s['schema-id']
        break
      }
      case 'set-current-schema': {
        const id = u['schema-id'] === -1 ? lastSchema : u['schema-id']
        if (!m.schemas.some(s => s['schema-id'] === id)) throw bad(`no schema ${u['schema-id']}`)
        m['current-schema-id'] = id
        break
      }
      case 'add-spec': {
        const s = structuredClone(u.spec)
        if (s['spec-id'] === undefined || m['partition-specs'].some(x => x['spec-id'] === s['spec-id'])) s['spec-id'] = nextId(m['partition-specs'], 'spec-id')
        m['partition-specs'].push(s)
        m['last-partition-id'] = Math.max(m['last-partition-id'], ...s.fields.map(f => f['field-id']))
        lastSpec = s['spec-id']
        break
      }
      case 'set-default-spec': {
        const id = u['spec-id'] === -1 ? lastSpec : u['spec-id']
        if (!m['partition-specs'].some(s => s['spec-id'] === id)) throw bad(`no spec ${u['spec-id']}`)
        m['default-spec-id'] = id
        break
      }
      case 'add-sort-order': {
        const o = structuredClone(u['sort-order'])
        if (m['sort-orders'].some(x => x['order-id'] === o['order-id'])) o['order-id'] = nextId(m['sort-orders'], 'order-id')
        m['sort-orders'].push(o)
        lastOrder = o['order-id']
        break
      }
      case 'set-default-sort-order': {
        const id = u['sort-order-id'] === -1 ? lastOrder : u['sort-order-id']
        if (!m['sort-orders'].some(o => o['order-id'] === id)) throw bad(`no sort order ${u['sort-order-id']}`)
        m['default-sort-order-id'] = id
        break
      }
      case 'set-location': m.location = u.location; break
      case 'set-properties': Object.assign(m.properties, u.updates); break
      case 'remove-properties': for (const k of u.removals) delete m.properties[k]; break
      case 'add-snapshot': {
        const s = u.snapshot
        if (m.snapshots.some(x => String(x['snapshot-id']) === String(s['snapshot-id']))) throw bad(`snapshot ${s['snapshot-id']} exists`)
        if (m['format-version'] >= 2 && !(s['sequence-number'] > m['last-sequence-number'])) throw bad(`sequence number ${s['sequence-number']} is not above ${m['last-sequence-number']}`)
        m.snapshots.push(s)
        m['last-sequence-number'] = Math.max(m['last-sequence-number'], s['sequence-number'] ?? 0)
        break
      }
      case 'set-snapshot-ref': {
        const { action, 'ref-name': name, ...ref } = u
        if (!m.snapshots.some(s => String(s['snapshot-id']) === String(ref['snapshot-id']))) throw bad(`no snapshot ${ref['snapshot-id']}`)
        m.refs[name] = ref
        if (name === 'main') {
          m['current-snapshot-id'] = ref['snapshot-id']
          m['snapshot-log'].push({ 'timestamp-ms': Date.now(), 'snapshot-id': ref['snapshot-id'] })
        }
        break
      }
      case 'remove-snapshot-ref': delete m.refs[u['ref-name']]; if (u['ref-name'] === 'main') m['current-snapshot-id'] = -1; break
      case 'remove-snapshots': {
        const gone = new Set(u['snapshot-ids'].map(String))
        m.snapshots = m.snapshots.filter(s => !gone.has(String(s['snapshot-id'])))
        m['snapshot-log'] = m['snapshot-log'].filter(s => !gone.has(String(s['snapshot-id'])))
        break
      }
      default: throw bad(`unknown update ${u.action}`)
    }
  }
  if (!m['table-uuid'] || !m.location || m['current-schema-id'] < 0) throw bad('a table needs a uuid, a location and a schema')
  return m
}

// Big snapshot ids must survive JSON: integers of 16 digits or more (outside strings) are
// read as BigInt and printed back as numbers.
function parseJson (text) {
  let out = ''; let i = 0
  while (i < text.length) { // copy strings whole; mark long integers outside them
    const c = text[i]
    if (c === '"') {
      let j = i + 1
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      out += text.slice(i, j + 1); i = j + 1
    } else if ((c === '-' || (c >= '0' && c <= '9'))) {
      const m = /^-?\d+(\.\d+)?([eE][-+]?\d+)?/.exec(text.slice(i, i + 40))
      out += m[0].length >= 16 && !m[1] && !m[2] ? `"@@${m[0]}@@"` : m[0]; i += m[0].length
    } else { out += c; i++ }
  }
  return JSON.parse(out, (k, v) => typeof v === 'string' && /^@@-?\d+@@$/.test(v) ? BigInt(v.slice(2, -2)) : v)
}
const jsonText = v => JSON.stringify(v, (k, x) => typeof x === 'bigint' ? `@@${x}@@` : x).replace(/"@@(-?\d+)@@"/g, '$1')

export async function startRestCatalog ({ dir, prefix = 'lake', credential = null, pageSize = 2, endpoints = true, transactions = false, s3 = null, vended = false, vendedTtlMs = 3600000 } = {}) {
  fs.mkdirSync(dir, { recursive: true })
  const stateFile = path.join(dir, 'catalog.json')
  const state = fs.existsSync(stateFile) ? JSON.parse(fs.readFileSync(stateFile, 'utf8')) : { namespaces: {}, tables: {} }
  const save = () => { fs.writeFileSync(stateFile + '.tmp', JSON.stringify(state)); fs.renameSync(stateFile + '.tmp', stateFile) }
  const tokens = new Map() // token -> valid
  const faults = []
  const stats = { commits: 0, txns: 0, faults: 0, unauthorized: 0, tokens: 0, requests: {}, vended: {} }
  const api = { onCommit: null, onChange: null, onTxn: null } // onCommit(ns, name): after each applied table commit
  const tkey = (ns, name) => ns.join(SEP) + '/' + name
  const written = new Map() // s3:// location -> the metadata text written there
  const onS3 = loc => loc.startsWith('s3://')
  const readMeta = loc => {
    if (!onS3(loc)) return parseJson(fs.readFileSync(loc, 'utf8'))
    if (!written.has(loc)) throw new Error(`metadata ${loc} was not written by this server`)
    return parseJson(written.get(loc))
  }
  async function writeMeta (loc, text) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(loc) && !onS3(loc)) throw new Error(`metadata ${loc}: neither a local path nor s3://`)
    if (!onS3(loc)) { fs.mkdirSync(path.dirname(loc), { recursive: true }); fs.writeFileSync(loc, text, { flag: 'wx' }); return }
    if (!s3) throw new Error(`no S3 server for ${loc}`)
    const [bucket, ...key] = loc.slice(5).split('/')
    if (bucket !== s3.bucket) throw new Error(`${loc}: not in bucket ${s3.bucket}`)
    await putObject(s3.endpoint, bucket, key.join('/'), text)
    written.set(loc, text)
  }
  let nvended = 0

  const PATHS = [
    'GET /v1/{prefix}/namespaces', 'POST /v1/{prefix}/namespaces',
    'GET /v1/{prefix}/namespaces/{namespace}', 'DELETE /v1/{prefix}/namespaces/{namespace}',
    'GET /v1/{prefix}/namespaces/{namespace}/tables', 'POST /v1/{prefix}/namespaces/{namespace}/tables',
    'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}', 'POST /v1/{prefix}/namespaces/{namespace}/tables/{table}',
    'DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}', 'POST /v1/{prefix}/tables/rename',
    ...(transactions ? ['POST /v1/{prefix}/transactions/commit'] : [])
  ]

  const page = (items, q) => {
    const start = Number(q.get('pageToken') || 0)
    const size = Number(q.get('pageSize') || pageSize)
    const next = start + size < items.length ? String(start + size) : null
    return { items: items.slice(start, start + size), next }
  }

  // A table's next metadata and its file name, from its requirements (checked) and
  // updates; nothing is written.
  function plan (ns, name, body) {
    const key = tkey(ns, name)
    const cur = state.tables[key]
    const meta = cur ? readMeta(cur) : undefined
    for (const r of body.requirements || []) check(meta, r)
    if (!cur && !(body.requirements || []).some(r => r.type === 'assert-create')) throw notFound('NoSuchTableException', `Table does not exist: ${ns.join('.')}.${name}`)
    if (!state.namespaces[ns.join(SEP)]) throw notFound('NoSuchNamespaceException', `Namespace does not exist: ${ns.join('.')}`)
    const next = apply(meta ?? emptyTable(), body.updates || [])
    next['last-updated-ms'] = Date.now()
    if (cur) next['metadata-log'] = [...(meta['metadata-log'] || []), { 'timestamp-ms': meta['last-updated-ms'], 'metadata-file': cur }]
    const version = cur ? Number(path.basename(cur).split('-')[0]) + 1 : 0
    const file = `${String(version).padStart(5, '0')}-${crypto.randomUUID()}.metadata.json`
    const loc = onS3(next.location) ? `${next.location.replace(/\/+$/, '')}/metadata/${file}` : path.join(next.location, 'metadata', file)
    return { ns, name, key, loc, next }
  }

  // Writes planned tables' metadata files, then points every table at its new one at once.
  async function land (plans) {
    for (const p of plans) await writeMeta(p.loc, jsonText(p.next))
    for (const p of plans) state.tables[p.key] = p.loc
    save()
    stats.commits += plans.length
    for (const p of plans) api.onCommit?.(p.ns, p.name)
  }

  async function commit (ns, name, body) {
    const p = plan(ns, name, body)
    await land([p])
    return { 'metadata-location': p.loc, metadata: p.next }
  }

  // CommitTransactionRequest: all requirements of all tables first, then all changes.
  async function transaction (body) {
    const changes = body['table-changes']
    if (!Array.isArray(changes) || !changes.length) throw bad('table-changes missing')
    const seen = new Set()
    const plans = changes.map(c => {
      const id = c.identifier
      if (!id || !Array.isArray(id.namespace) || !id.name) throw bad('a table change without its identifier')
      if (seen.has(tkey(id.namespace, id.name))) throw bad(`table ${id.name} twice in one transaction`)
      seen.add(tkey(id.namespace, id.name))
      if ((c.requirements || []).some(r => r.type === 'assert-create')) throw bad('a transaction cannot create a table')
      return plan(id.namespace, id.name, c)
    })
    await land(plans)
    stats.txns++
  }

  // A table's config: the credentials, when vending and asked for.
  function vend (req, ns, name) {
    if (!vended || !/(^|,)\s*vended-credentials\s*(,|$)/.test(req.headers['x-iceberg-access-delegation'] || '')) return {}
    const t = `${ns.join('.')}.${name}`
    stats.vended[t] = (stats.vended[t] || 0) + 1
    return { 's3.access-key-id': ACCESS_KEY, 's3.secret-access-key': SECRET_KEY, 's3.session-token': `vended-${++nvended}`, 's3.session-token-expires-at-ms': String(Date.now() + vendedTtlMs) }
  }

  async function route (req, res, url, body) {
    const p = url.pathname.split('/').slice(1).map(decodeURIComponent)
    const send = (status, obj) => {
      const text = obj === undefined ? '' : jsonText(obj)
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) })
      res.end(text)
    }
    if (req.method === 'POST' && url.pathname === '/v1/oauth/tokens') {
      const f = new URLSearchParams(body)
      if (!credential || f.get('grant_type') !== 'client_credentials' || f.get('client_id') !== credential.id || f.get('client_secret') !== credential.secret) {
        return send(401, { error: 'invalid_client', error_description: 'unknown client' })
      }
      const token = crypto.randomBytes(16).toString('hex')
      tokens.set(token, true)
      stats.tokens++
      return send(200, { access_token: token, token_type: 'bearer', expires_in: 3600, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' })
    }
    if (credential) {
      const m = /^Bearer (.+)$/.exec(req.headers.authorization || '')
      if (!m || !tokens.get(m[1])) {
        stats.unauthorized++
        throw new HttpError(401, 'NotAuthorizedException', 'Not authorized: the token is missing, unknown or expired')
      }
    }
    if (req.method === 'GET' && url.pathname === '/v1/config') {
      return send(200, { defaults: { 'write.format.default': 'parquet' }, overrides: { prefix }, ...(endpoints ? { endpoints: PATHS } : {}) })
    }
    if (p[0] !== 'v1' || p[1] !== prefix) throw notFound('NotFoundException', `no route ${url.pathname}`)
    const rest = p.slice(2)
    const q = url.searchParams
    const json = () => { try { return parseJson(body) } catch (e) { throw bad(`bad JSON: ${e.message}`) } }
    if (rest[0] === 'namespaces' && rest.length === 1) {
      if (req.method === 'GET') {
        const parent = q.get('parent')
        const all = Object.keys(state.namespaces).map(k => k.split(SEP)).filter(ns => parent ? (ns.length === parent.split(SEP).length + 1 && ns.slice(0, -1).join(SEP) === parent) : ns.length === 1).sort()
        const { items, next } = page(all, q)
        return send(200, { namespaces: items, 'next-page-token': next })
      }
      if (req.method === 'POST') {
        const b = json()
        if (!Array.isArray(b.namespace) || !b.namespace.length) throw bad('namespace missing')
        const k = b.namespace.join(SEP)
        if (state.namespaces[k]) throw conflict('AlreadyExistsException', `Namespace already exists: ${b.namespace.join('.')}`)
        state.namespaces[k] = b.properties || {}
        save()
        return send(200, { namespace: b.namespace, properties: b.properties || {} })
      }
    }
    if (rest[0] === 'transactions' && rest[1] === 'commit' && rest.length === 2 && req.method === 'POST') {
      if (!transactions) throw notFound('NotFoundException', `no route ${url.pathname}`)
      if (transactions === 'refuse') throw new HttpError(501, 'NotImplementedException', 'multi-table transactions are not supported')
      const f = faults.findIndex(x => x.what === 'txn')
      const fault = f >= 0 ? faults.splice(f, 1)[0] : null
      if (fault) stats.faults++
      if (fault?.kind === '503') throw new HttpError(503, 'ServiceUnavailableException', 'injected: try again later')
      if (fault?.kind === '409') throw conflict('CommitFailedException', 'injected: commit failed')
      await transaction(json())
      api.onChange?.()
      api.onTxn?.()
      if (fault?.kind === 'lost') { req.socket.destroy(); return }
      return send(204)
    }
    if (rest[0] === 'tables' && rest[1] === 'rename' && req.method === 'POST') {
      const b = json()
      const from = tkey(b.source.namespace, b.source.name); const to = tkey(b.destination.namespace, b.destination.name)
      if (!state.tables[from]) throw notFound('NoSuchTableException', `Table does not exist: ${b.source.name}`)
      if (!state.namespaces[b.destination.namespace.join(SEP)]) throw notFound('NoSuchNamespaceException', 'Namespace does not exist')
      if (state.tables[to]) throw conflict('AlreadyExistsException', `Table already exists: ${b.destination.name}`)
      state.tables[to] = state.tables[from]
      delete state.tables[from]
      save()
      api.onChange?.()
      return send(204)
    }
    if (rest[0] !== 'namespaces' || rest.length < 2) throw notFound('NotFoundException', `no route ${url.pathname}`)
    const ns = rest[1].split(SEP)
    const nsKey = ns.join(SEP)
    if (!state.namespaces[nsKey]) throw notFound('NoSuchNamespaceException', `Namespace does not exist: ${ns.join('.')}`)
    if (rest.length === 2 && req.method === 'GET') return send(200, { namespace: ns, properties: state.namespaces[nsKey] })
    if (rest.length === 3 && rest[2] === 'tables' && req.method === 'POST') {
      // CreateTableRequest: only staged (stage-create: nothing is created; the create is the
      // first commit, with assert-create), answered with the table's would-be metadata
      const b = json()
      if (!b.name || !b.schema) throw bad('name and schema are required')
      if (b['stage-create'] !== true) throw new HttpError(501, 'NotImplementedException', 'only stage-create is served')
      if (state.tables[tkey(ns, b.name)]) throw conflict('AlreadyExistsException', `Table already exists: ${ns.join('.')}.${b.name}`)
      const meta = { ...emptyTable(), location: b.location, schemas: [b.schema], 'current-schema-id': b.schema['schema-id'] ?? 0, properties: b.properties || {} }
      return send(200, { metadata: meta, config: vend(req, ns, b.name) })
    }
    if (rest.length === 3 && rest[2] === 'tables' && req.method === 'GET') {
      const all = Object.keys(state.tables).filter(k => k.slice(0, k.lastIndexOf('/')) === nsKey).map(k => ({ namespace: ns, name: k.slice(k.lastIndexOf('/') + 1) })).sort((a, b) => a.name < b.name ? -1 : 1)
      const { items, next } = page(all, q)
      return send(200, { identifiers: items, 'next-page-token': next })
    }
    if (rest.length === 4 && rest[2] === 'tables') {
      const name = rest[3]
      const key = tkey(ns, name)
      if (req.method === 'GET') {
        if (!state.tables[key]) throw notFound('NoSuchTableException', `Table does not exist: ${ns.join('.')}.${name}`)
        return send(200, { 'metadata-location': state.tables[key], metadata: readMeta(state.tables[key]), config: vend(req, ns, name) })
      }
      if (req.method === 'DELETE') {
        if (!state.tables[key]) throw notFound('NoSuchTableException', `Table does not exist: ${ns.join('.')}.${name}`)
        delete state.tables[key]
        save()
        api.onChange?.()
        return send(204)
      }
      if (req.method === 'POST') {
        const f = faults.findIndex(x => x.what === 'commit')
        const fault = f >= 0 ? faults.splice(f, 1)[0] : null
        if (fault) stats.faults++
        if (fault?.kind === '503') throw new HttpError(503, 'ServiceUnavailableException', 'injected: try again later')
        if (fault?.kind === '409') throw conflict('CommitFailedException', 'injected: commit failed')
        if (fault?.kind === 'expire') {
          for (const k of tokens.keys()) tokens.set(k, false)
          stats.unauthorized++
          throw new HttpError(401, 'NotAuthorizedException', 'injected: the token expired')
        }
        const out = await commit(ns, name, json())
        api.onChange?.()
        if (fault?.kind === 'lost') { req.socket.destroy(); return }
        return send(200, out)
      }
    }
    throw notFound('NotFoundException', `no route ${req.method} ${url.pathname}`)
  }

  let queue = Promise.resolve() // with s3: one request at a time (a commit awaits its PUT)
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on('data', c => chunks.push(c))
    const serve = async () => {
      const url = new URL(req.url, 'http://127.0.0.1')
      const shape = `${req.method} ${url.pathname.replace(/\/namespaces\/[^/]+/, '/namespaces/{ns}').replace(/\/tables\/(?!rename)[^/]+/, '/tables/{t}')}`
      stats.requests[shape] = (stats.requests[shape] || 0) + 1
      try {
        await route(req, res, url, Buffer.concat(chunks).toString('utf8'))
      } catch (e) {
        const status = e instanceof HttpError ? e.status : 500
        const text = JSON.stringify({ error: { message: e.message, type: e.type || 'ServerError', code: status } })
        if (!res.headersSent) res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) })
        res.end(text)
      }
    }
    req.on('end', () => { if (s3) queue = queue.then(serve); else serve() })
  })
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${server.address().port}`
  Object.assign(api, {
    url,
    stats,
    state,
    fault (what, kind, n = 1) { for (let i = 0; i < n; i++) faults.push({ what, kind }) },
    pendingFaults: () => faults.length,
    expireTokens () { for (const k of tokens.keys()) tokens.set(k, false) },
    metadataLocation: (ns, name) => state.tables[tkey(ns, name)],
    readMetadata: loc => readMeta(loc),
    close: () => new Promise(resolve => { server.closeAllConnections?.(); server.close(resolve) })
  })
  return api
}
