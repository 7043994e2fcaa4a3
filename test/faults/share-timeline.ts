/**
 * The partitioned row's share timeline (issue 53): how many partitions each Node-RED process holds, read
 * from its consumer's status (`active on N of 8 partitions`, logged by the flow's status node) every
 * half second, a line whenever it changes; and each change's verdict, SETTLE_MS after the change:
 * every live process within ±1 of its fair share (partitions / live processes).
 */
import { pause } from './fault-broker';
import { latestStatuses } from './fault-flow';

const PROCESSES = 3;
const SETTLE_MS = 10_000;

interface Verdict {
  change: string;
  shares: Array<number | undefined>;
  ok: boolean;
}

export class ShareTimeline {
  private readonly started = Date.now();
  private readonly lines: string[] = [];
  private readonly verdictList: Verdict[] = [];
  private last = '';
  private readonly timer: NodeJS.Timeout;

  /** @param linesOf the output lines of process `i`, undefined while it is not running */
  constructor(
    private readonly partitions: number,
    private readonly linesOf: (i: number) => string[] | undefined,
  ) {
    this.timer = setInterval(() => this.sample(), 500);
    this.sample();
  }

  /** On how many partitions process `i` says it is active (undefined: not running, or no such status). */
  share(i: number): number | undefined {
    const lines = this.linesOf(i);
    const text = lines && latestStatuses(lines).get('p-consumer')?.text;
    const m = text ? /active on (\d+) of \d+ partitions/.exec(text) : null;
    return m ? Number(m[1]) : undefined;
  }

  /** The processes `live` hold ⌊P / live⌋ or ⌈P / live⌉ each. */
  even(live: number[]): boolean {
    const fair = this.partitions / live.length;
    return live.every((i) => {
      const s = this.share(i);
      return s === Math.floor(fair) || s === Math.ceil(fair);
    });
  }

  /** Runs `act`, then SETTLE_MS after it ended looks at the shares of `live`: each within ±1 of its fair share. */
  async change(name: string, live: number[], act: () => Promise<void>): Promise<void> {
    await act();
    this.note(`— ${name}`);
    await pause(SETTLE_MS);
    const fair = this.partitions / live.length;
    const shares = live.map((i) => this.share(i));
    const ok = shares.every((s) => s !== undefined && Math.abs(s - fair) <= 1);
    this.verdictList.push({ change: name, shares, ok });
    this.note(`  ${SETTLE_MS / 1000} s later: ${shares.map((s) => s ?? '?').join('/')} (fair ${fair.toFixed(2)} ±1) ${ok ? 'ok' : 'MISSED'}`);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The changes whose share missed. */
  misses(): string[] {
    return this.verdictList.filter((v) => !v.ok).map((v) => `${v.change}: ${v.shares.map((s) => s ?? '?').join('/')}`);
  }

  /** One cell for the row: each change's shares, ok or MISSED. */
  verdicts(): string {
    return this.verdictList.map((v) => `${v.shares.map((s) => s ?? '?').join('/')} ${v.ok ? 'ok' : 'MISSED'}`).join(', ');
  }

  text(): string {
    return this.lines.join('\n');
  }

  private sample(): void {
    const now = Array.from({ length: PROCESSES }, (_, i) => `NR${i + 1} ${this.share(i) ?? '–'}`).join(' · ');
    if (now === this.last) return;
    this.last = now;
    this.note(now);
  }

  private note(line: string): void {
    this.lines.push(`+${((Date.now() - this.started) / 1000).toFixed(1).padStart(5)} s  ${line}`);
  }
}
