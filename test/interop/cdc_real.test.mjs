// Real producer output end to end: every file of test/data/cdc/real/ (Debezium, Canal and
// Maxwell messages from the producers' own documentation and from projects that keep
// captures as test data; origins in that directory's README) goes through `w2l run` with
// the file source into a fresh warehouse, and each table is compared with the
// NAME.expected.json written by hand from the messages: schema (names and Iceberg types
// in order), identifier fields and rows, read by avsc + hyparquet and by DuckDB
// (lib/cdc_real.mjs).
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { DuckDBInstance } from '@duckdb/node-api'
import { loadCorpus, runCorpus, checkCorpus } from './lib/cdc_real.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const corpusDir = path.resolve(here, '../data/cdc/real')
const bin = process.env.W2L_TEST_BIN || path.resolve(here, '../../build')
const w2l = path.join(bin, 'w2l')
const top = fs.mkdtempSync(path.join(os.tmpdir(), 'w2l-cdc-real-'))
process.on('exit', () => fs.rmSync(top, { recursive: true, force: true }))

const db = await DuckDBInstance.create(':memory:')
const duck = await db.connect()
after(() => { duck.closeSync?.(); db.closeSync?.() })

const corpus = loadCorpus(corpusDir)

test('the corpus has its files', () => {
  assert.ok(corpus.length >= 10, `${corpus.length} expected files in ${corpusDir}`)
  for (const c of corpus) {
    assert.ok(fs.existsSync(c.jsonl), `${c.name}.jsonl beside ${c.name}.expected.json`)
    assert.ok(Object.keys(c.expected.tables).length > 0, `${c.name}: tables`)
  }
})

for (const c of corpus) {
  test(`${c.name} (${c.expected.format})`, async () => {
    const dir = fs.mkdtempSync(path.join(top, c.name + '-'))
    const { res, wh } = runCorpus(w2l, c, dir)
    const tail = (res.stderr ?? '').trim().split('\n').slice(-6).join('\n')
    assert.equal(res.status, 0, `w2l run exited ${res.status ?? res.signal ?? res.error}:\n${tail}`)
    const problems = await checkCorpus(wh, c.expected, duck)
    assert.deepEqual(problems, [], problems.join('\n'))
  })
}
