/**
 * The paced replays of one retry configuration, owned by its retry-config node
 * (`RetryConfigNode.replayJobs`): started from the admin API or a park-replay node, looked at and
 * cancelled by id, all stopped (between two messages) when the configuration closes on a redeploy.
 */
import type { PacedReplay, PacedStatus, ReplayDestination } from '../../lib/parking';

/** What a job is about, besides its progress. */
export interface ReplayJobInfo {
  id: string;
  queue: string;
  /** Who started it: the admin user, or `flow <node id>`. */
  by: string;
  /** The selection in a person's words (a group, a filter, every message). */
  selection: string;
  redirect?: ReplayDestination;
}

export type ReplayJobStatus = ReplayJobInfo & PacedStatus;

/** Finished jobs kept to be looked at, newest first; older ones are forgotten. */
const KEEP_FINISHED = 20;

export class ReplayJobs {
  private readonly jobs = new Map<string, { info: ReplayJobInfo; run: PacedReplay }>();

  add(info: ReplayJobInfo, run: PacedReplay): void {
    this.jobs.set(info.id, { info, run });
    this.forgetOld();
  }

  get(id: string): ReplayJobStatus | undefined {
    const job = this.jobs.get(id);
    return job && { ...job.info, ...job.run.status() };
  }

  /** Every job known, running ones first, newest first. */
  list(): ReplayJobStatus[] {
    const all = [...this.jobs.values()].map((job) => ({ ...job.info, ...job.run.status() }));
    return all.reverse().sort((a, b) => Number(a.finishedAt !== null) - Number(b.finishedAt !== null));
  }

  /** Whether a job runs now (one paced replay at a time per configuration). */
  running(): ReplayJobStatus | undefined {
    return this.list().find((job) => job.finishedAt === null);
  }

  /** Cancels a job between two messages; resolves with its status once it stopped (undefined: no such job). */
  async cancel(id: string): Promise<ReplayJobStatus | undefined> {
    const job = this.jobs.get(id);
    if (!job) return undefined;
    await job.run.cancel();
    return this.get(id);
  }

  /** Stops every running job (a redeploy): each between two messages, nothing lost. */
  async stopAll(why?: string): Promise<void> {
    await Promise.all([...this.jobs.values()].map((job) => job.run.cancel(why)));
  }

  private forgetOld(): void {
    const finished = [...this.jobs.values()].filter((job) => job.run.done);
    for (const job of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) this.jobs.delete(job.info.id);
  }
}
