// A `w2l run` that follows a growing canal-json file, for tests of long-running syncs.
import fs from 'node:fs'
import { spawn } from 'node:child_process'

// Starts `w2l args` (which must log at debug level: it watches for the committer's
// "checkpoint N committed" lines) and appends lines[from, to) to file, chunk lines at a time:
// the first chunk at once, then a chunk more each time a checkpoint that began after the
// last append commits; SIGTERM once every line is in and one more checkpoint committed.
// A run that commits nothing for 30 s is killed (SIGKILL). Resolves to { code (exit code
// or signal), stderr, termed (the SIGTERM was sent), commits, have (lines in the file) }.
export async function followFile ({ w2l, args, file, lines, from, to, chunk }) {
  const child = spawn(w2l, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''; let have = from; let appendedAt = -1; let termed = false; let commits = 0
  const append = ckpt => {
    const next = Math.min(to, have + chunk)
    fs.appendFileSync(file, lines.slice(have, next).join('\n') + '\n')
    have = next; appendedAt = ckpt
  }
  append(-1)
  let watchdog = null
  const arm = () => { clearTimeout(watchdog); watchdog = setTimeout(() => child.kill('SIGKILL'), 30000) }
  arm()
  let scanned = 0
  child.stderr.on('data', d => {
    stderr += d
    const re = / debug committer \d+: \S+ checkpoint (\d+) committed \(/g
    re.lastIndex = scanned
    for (let m; (m = re.exec(stderr));) {
      scanned = re.lastIndex
      const ckpt = Number(m[1])
      if (ckpt <= appendedAt || termed) continue
      commits++
      arm()
      if (have < to) append(ckpt)
      else { termed = true; child.kill('SIGTERM') }
    }
  })
  const code = await new Promise(resolve => child.on('close', (c, sig) => resolve(sig ?? c)))
  clearTimeout(watchdog)
  return { code, stderr, termed, commits, have }
}
