// A private MariaDB for the interop tests: scripts/test-mariadb in a directory of the test's
// own, on 127.0.0.1 and a free port, stopped by the pid file that script keeps.
import { spawnSync } from 'node:child_process'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../scripts/test-mariadb')

export function freePort () {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.on('error', reject)
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)) })
  })
}

// The server of dir: start() (on a free port, then .port), stop(), and sql(text) which runs
// SQL as root through the mariadb client and returns the rows (tab-separated, --raw).
export function privateMariadb (dir) {
  const db = {
    port: 0,
    started: false,
    run (verb) {
      const r = spawnSync('sh', [script, verb], { env: { ...process.env, DIR: dir, PORT: String(db.port) }, encoding: 'utf8', timeout: 60000 })
      if (r.status !== 0) throw new Error(`test-mariadb ${verb}: ${r.stdout}${r.stderr}`)
    },
    async start () {
      db.port = await freePort()
      db.run('start')
      db.started = true
    },
    stop () { if (db.started) db.run('stop'); db.started = false },
    sql (text, timeout = 120000) {
      const r = spawnSync('mariadb', ['--no-defaults', `--socket=${path.join(dir, 'run/mariadb.sock')}`, '-uroot',
        '--batch', '--raw', '--skip-column-names', '--default-character-set=utf8mb4'],
      { input: "SET time_zone = '+00:00';\n" + text, encoding: 'utf8', timeout, maxBuffer: 64 << 20 })
      if (r.status !== 0) throw new Error(`mariadb: ${r.stderr}`)
      return r.stdout.split('\n').filter(l => l !== '').map(l => l.split('\t'))
    }
  }
  return db
}
