/** CPU time of processes from /proc (Linux), for the benches that split a run's CPU between Node and PostgreSQL. */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** Milliseconds per clock tick of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICK_MS = 10;

export type Cpu = { user: number; system: number };

/** A process's own CPU (ms), its parent, and the CPU of its children it has reaped. */
export async function cpuOf(pid: number): Promise<Cpu & { parent: number; reaped: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    parent: Number(fields[1]),
    user: Number(fields[11]) * TICK_MS,
    system: Number(fields[12]) * TICK_MS,
    reaped: (Number(fields[13]) + Number(fields[14])) * TICK_MS,
  };
}

/** The CPU (ms) of a PostgreSQL server: the postmaster's, its backends' and what it reaped of ended ones. */
export async function postgresCpu(postmaster: number): Promise<number> {
  const own = await cpuOf(postmaster);
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number);
  let total = own.user + own.system + own.reaped;
  for (const pid of pids) {
    const stat = await cpuOf(pid).catch(() => null);
    if (stat?.parent === postmaster) total += stat.user + stat.system;
  }
  return total;
}

/** The postmaster's pid of the embedded PostgreSQL in `dataDir` (startEmbeddedDatabase's layout). */
export async function postmasterOf(dataDir: string): Promise<number> {
  return Number((await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
}
