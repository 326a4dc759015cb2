/**
 * One daemon per journal folder. Two processes appending to, compacting and replaying the same
 * segments would deliver each other's results and remove each other's files, so the folder holds
 * a `lock` file with the owner's PID. A lock whose process is gone (a SIGKILL, a crash) is taken
 * over: the daemon always starts after a crash. A PID equal to ours is ours (a container restarted
 * with the same PID). Not a guard against every race (two starts in the same millisecond), but
 * against the real mistake: two daemons, or two test runs, pointed at one folder.
 */
import { open, readFile, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { err, ok, type Result } from '../util/result.js'

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: it exists but belongs to someone else: alive.
    return (e as { code?: unknown }).code === 'EPERM'
  }
}

export interface JournalLock {
  release(): Promise<void>
}

/** Folders locked by this process (its own PID in the file cannot tell two of its journals apart). */
const heldHere = new Set<string>()

export async function lockJournal(dir: string): Promise<Result<JournalLock, string>> {
  const file = join(dir, 'lock')
  if (heldHere.has(file)) return err(`in use by this process (${file}): one journal per folder`)
  const r = await takeLock(file)
  if (!r.ok) return r
  heldHere.add(file)
  return ok({
    release: async () => {
      heldHere.delete(file)
      await r.value.release()
    },
  })
}

async function takeLock(file: string): Promise<Result<JournalLock, string>> {
  for (let tries = 0; tries < 3; tries++) {
    try {
      const fh = await open(file, 'wx', 0o600)
      await fh.writeFile(`${process.pid}\n`)
      await fh.close()
      return ok({ release: () => unlink(file).catch(() => undefined) })
    } catch (e) {
      if ((e as { code?: unknown }).code !== 'EEXIST') return err(`lock ${file}: ${e instanceof Error ? e.message : String(e)}`)
    }
    const owner = Number((await readFile(file, 'utf8').catch(() => '')).trim())
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) {
      return err(`in use by the process ${owner} (${file}): one daemon per journal folder`)
    }
    // Stale (its process is gone) or unreadable: taken over.
    await unlink(file).catch(() => undefined)
  }
  return err(`lock ${file}: could not be taken`)
}
