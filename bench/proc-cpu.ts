/** CPU time of processes from /proc (Linux), for the benches that split a run's CPU between Node and PostgreSQL. */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** Milliseconds per clock tick of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICK_MS = 10;

export type Cpu = { user: number; system: number };

/**
 * A process's own CPU (ms), its parent, and the CPU of its children it has reaped; null once the process
 * has gone, or where there is no /proc.
 */
export async function cpuOf(pid: number): Promise<(Cpu & { parent: number; reaped: number }) | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The fields after the parenthesised command name: the parent is the 4th, utime and stime the 14th
    // and 15th, and cutime and cstime (children that exited and were waited for) the 16th and 17th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      parent: Number(fields[1]),
      user: Number(fields[11]) * TICK_MS,
      system: Number(fields[12]) * TICK_MS,
      reaped: (Number(fields[13]) + Number(fields[14])) * TICK_MS,
    };
  } catch {
    return null;
  }
}

/**
 * The CPU (ms) of a PostgreSQL server: the postmaster's, its backends' and what it reaped of ended ones (a
 * pool closing an idle connection ends its backend); null when the postmaster is not known or gone.
 */
export async function postgresCpu(postmaster: number | null): Promise<number | null> {
  if (postmaster === null) return null;
  const own = await cpuOf(postmaster);
  if (!own) return null;
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number);
  const children = await Promise.all(pids.map(cpuOf));
  return children.reduce(
    (sum, stat) => sum + (stat?.parent === postmaster ? stat.user + stat.system : 0),
    own.user + own.system + own.reaped,
  );
}

/** The postmaster's pid of the embedded PostgreSQL in `dataDir` (startEmbeddedDatabase's layout). */
export async function postmasterOf(dataDir: string): Promise<number> {
  return Number((await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
}
