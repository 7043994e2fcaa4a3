/**
 * A structural check of PromQL, for the alert rules and the Grafana dashboard shipped in docs/: the
 * brackets balance, every function is one Prometheus has, every metric is one the package exports
 * (or Prometheus's own `up`), every label a selector names is one of that metric's, and every value
 * an exact or word-alternation matcher asks for is one the metric has. Not a whole parser: the rules
 * meet promtool too where it is installed.
 */

/** Series by metric name: label name → the values seen (from a rendered exposition). */
export type Exported = Map<string, Map<string, Set<string>>>;

/** Prometheus's functions and aggregation operators (those a rule may plausibly use). */
const FUNCTIONS = new Set([
  'abs', 'absent', 'absent_over_time', 'avg_over_time', 'ceil', 'changes', 'clamp', 'clamp_max', 'clamp_min', 'count_over_time', 'day_of_week', 'delta', 'deriv',
  'exp', 'floor', 'histogram_quantile', 'holt_winters', 'hour', 'idelta', 'increase', 'irate', 'label_join', 'label_replace', 'last_over_time', 'ln', 'log2', 'log10',
  'max_over_time', 'min_over_time', 'minute', 'predict_linear', 'present_over_time', 'quantile_over_time', 'rate', 'resets', 'round', 'scalar', 'sort', 'sort_desc',
  'sqrt', 'stddev_over_time', 'sum_over_time', 'time', 'timestamp', 'vector',
]);
const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile']);
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);
/** Labels whose values the package takes from a closed list (the others name queues, nodes, tables). */
const CLOSED_LABELS = new Set(['outcome', 'kind', 'role', 'state', 'status', 'messaging_system']);
/** Series Prometheus makes itself for every scrape target. */
const PROMETHEUS_OWN: Exported = new Map([['up', new Map([['job', new Set<string>()], ['instance', new Set<string>()]])]]);

type Token = { kind: 'ident' | 'string' | 'number' | 'duration' | 'variable' | 'op' | 'open' | 'close'; text: string };

const TOKEN = /\s+|("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)|(\$\{?\w+\}?)|(\d+(?:\.\d+)?(?:ms|s|m|h|d|w|y)(?:\d+(?:ms|s|m|h|d|w|y))*)|(\d+(?:\.\d+)?(?:e[+-]?\d+)?)|([A-Za-z_:][\w:]*)|(==|!=|<=|>=|=~|!~|[-+*/%^<>=,:])|([([{])|([)\]}])/gy;

export function tokenize(expr: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < expr.length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(expr);
    if (!m) throw new Error(`cannot read ${JSON.stringify(expr.slice(at, at + 20))} at ${at}`);
    const kinds: Array<Token['kind']> = ['string', 'variable', 'duration', 'number', 'ident', 'op', 'open', 'close'];
    const index = m.slice(1).findIndex((g) => g !== undefined);
    if (index >= 0) tokens.push({ kind: kinds[index] ?? 'op', text: m[index + 1] ?? '' });
  }
  return tokens;
}

const PAIRS: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

/** The metric names an expression reads, after checking it; throws saying what is wrong. */
export function checkExpression(expr: string, exported: Exported): string[] {
  const all: Exported = new Map([...exported, ...PROMETHEUS_OWN]);
  const knownLabels = new Set(['le', ...[...all.values()].flatMap((labels) => [...labels.keys()])]);
  const tokens = tokenize(expr);
  const stack: string[] = [];
  const names: string[] = [];
  /** The stack depth at which a by (...) / on (...) label list was opened. */
  let labelList = -1;
  let selector: { metric: string | undefined; depth: number } | undefined;
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i] as Token;
    const next = tokens[i + 1];
    if (token.kind === 'open') {
      stack.push(token.text);
      continue;
    }
    if (token.kind === 'close') {
      const opened = stack.pop();
      if (opened !== PAIRS[token.text]) throw new Error(`'${token.text}' closes ${opened === undefined ? 'nothing' : `'${opened}'`} in ${expr}`);
      if (stack.length === labelList) labelList = -1;
      if (selector && stack.length === selector.depth) selector = undefined;
      continue;
    }
    if (token.kind !== 'ident') continue;
    const name = token.text;
    if (labelList >= 0) {
      if (!knownLabels.has(name)) throw new Error(`label '${name}' (in a label list) is on no exported metric: ${expr}`);
      continue;
    }
    if (selector) {
      // Inside { }: a label name, its matcher, its value.
      const op = next?.text ?? '';
      if (!['=', '!=', '=~', '!~'].includes(op)) throw new Error(`'${name}' in a selector is not followed by a matcher: ${expr}`);
      const value = tokens[i + 2];
      if (selector.metric !== undefined) checkMatcher(selector.metric, name, op, value, all, expr);
      i += 2;
      continue;
    }
    if (LABEL_LISTS.has(name)) {
      if (next?.text !== '(') {
        if (name === 'group_left' || name === 'group_right') continue;
        throw new Error(`'${name}' without its label list: ${expr}`);
      }
      labelList = stack.length;
      stack.push('(');
      i += 1;
      continue;
    }
    if (AGGREGATIONS.has(name) || FUNCTIONS.has(name)) {
      if (next?.text !== '(' && !(AGGREGATIONS.has(name) && (next?.text === 'by' || next?.text === 'without'))) throw new Error(`function '${name}' without its arguments: ${expr}`);
      continue;
    }
    if (next?.text === '(') throw new Error(`unknown function '${name}': ${expr}`);
    if (KEYWORDS.has(name.toLowerCase())) continue;
    if (!all.has(name)) throw new Error(`metric '${name}' is not one the package exports: ${expr}`);
    names.push(name);
    if (next?.text === '{') {
      selector = { metric: name, depth: stack.length };
      stack.push('{');
      i += 1;
    }
  }
  if (stack.length > 0) throw new Error(`'${stack.join('')}' not closed in ${expr}`);
  return names;
}

function checkMatcher(metric: string, label: string, op: string, value: Token | undefined, all: Exported, expr: string): void {
  const labels = all.get(metric);
  const values = labels?.get(label);
  if (!values) throw new Error(`metric '${metric}' has no label '${label}': ${expr}`);
  if (value?.kind !== 'string') throw new Error(`label '${label}' of '${metric}' is matched against ${value?.text ?? 'nothing'}, not a string: ${expr}`);
  const text = value.text.slice(1, -1);
  // Values of labels the package sets from a closed list (outcome, kind, role, state, status): every one asked for must exist.
  if (!CLOSED_LABELS.has(label) || text.includes('$')) return;
  const wanted = op === '=' || op === '!=' ? [text] : /^[\w|]+$/.test(text) ? text.split('|') : [];
  for (const v of wanted) if (!values.has(v)) throw new Error(`metric '${metric}' never has ${label}="${v}" (it has ${[...values].join(', ')}): ${expr}`);
}

/** Metric → label → values, from a Prometheus text exposition (the package's own render). */
export function exportedSeries(exposition: string): Exported {
  const series: Exported = new Map();
  for (const line of exposition.split('\n')) {
    const sample = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? \S+$/.exec(line);
    if (!sample) continue;
    const name = sample[1] ?? '';
    const labels = series.get(name) ?? new Map<string, Set<string>>();
    series.set(name, labels);
    for (const m of (sample[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      const set = labels.get(m[1] ?? '') ?? new Set<string>();
      set.add(m[2] ?? '');
      labels.set(m[1] ?? '', set);
    }
  }
  return series;
}
