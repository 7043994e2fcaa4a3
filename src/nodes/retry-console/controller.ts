/**
 * A running retry console node: answers each msg by its topic (topics.ts) and, every `every` seconds,
 * sends what a `refresh` msg gives. A failure of the timed refresh shows on the status and is logged
 * once until it changes (not every few seconds). `close()` stops its timers.
 */
import type { Translate } from '../shared/i18n';
import type { DoneFunction, Node, NodeMessage, SendFunction } from '../shared/node-red';
import { TOPICS, type ConsoleTopics } from './topics';

export class ConsoleController {
  private lastProblem = '';
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly first: NodeJS.Timeout | undefined;

  constructor(
    private readonly node: Node,
    private readonly topics: ConsoleTopics,
    private readonly t: Translate,
    everySeconds: number,
  ) {
    node.on('input', (msg, send, done) => this.input(msg, send, done));
    this.timer = everySeconds > 0 ? setInterval(() => this.tick(), everySeconds * 1000) : undefined;
    this.first = everySeconds > 0 ? setTimeout(() => this.tick(), 1000) : undefined;
    node.on('close', (_removed, done) => {
      this.close();
      done();
    });
  }

  private input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    // Back from a question: what it asked, whatever the topic became on the way (a widget may set its own).
    const topic = TOPICS.find((name) => name === (msg.asked === 'replay' || msg.asked === 'purge' ? msg.asked : msg.topic));
    if (!topic) {
      done(new Error(this.t('retry-console.errors.topic', { topic: JSON.stringify(msg.topic ?? null) })));
      return;
    }
    this.topics.run(topic, msg).then(
      (all) => {
        for (const outputs of all) send(outputs);
        done();
      },
      (err: unknown) => {
        this.node.status({ fill: 'red', shape: 'ring', text: this.t('retry-console.status.failed', { topic }) });
        done(err instanceof Error ? err : new Error(String(err)));
      },
    );
  }

  private tick(): void {
    this.topics.run('refresh', {}).then(
      (all) => {
        this.lastProblem = '';
        for (const outputs of all) this.node.send(outputs);
      },
      (err: unknown) => {
        const problem = err instanceof Error ? err.message : String(err);
        this.node.status({ fill: 'red', shape: 'ring', text: this.t('retry-console.status.failed', { topic: 'refresh' }) });
        if (problem !== this.lastProblem) this.node.warn(problem);
        this.lastProblem = problem;
      },
    );
  }

  private close(): void {
    clearInterval(this.timer);
    clearTimeout(this.first);
  }
}
