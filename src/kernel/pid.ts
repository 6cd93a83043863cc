/** Whether a process id belongs to a running process other than this one. */

/**
 * Another process runs with `pid`: it answers signal 0 (EPERM: it runs, as
 * another user). Our own pid is never "another": a record naming it was left
 * by an earlier process that had the same pid (a container's pid 1).
 */
export function otherProcessRuns(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
