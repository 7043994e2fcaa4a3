/** The retry-dedupe dialog: the store's kind (memory, Redis, PostgreSQL) and its fields, key lifetimes. */
import { envInput, envLabel, envOr, fail, fillSelect, isEnvReference, showReasons, str, validators as v, type EditorNode, type Translate } from '../../editor/index';
import { choices, numberProperty } from '../shared/editor-properties';
import type { JQStatic, NodeDefinition } from '../../editor/red';
import { tableName } from '../../editor/common';
import { redactUrl } from '../../lib/connection/settings';
import { redisPrefixProblem, redisUrlProblem } from '../../lib/dedupe/redis-url';
import { NODE_TYPE } from '../shared/node-types';
import { DEDUPE_KINDS, DEDUPE_NUMBERS } from './properties';

declare const $: JQStatic;

export function retryDedupe(t: Translate): NodeDefinition {
  /** The kind chosen in the open dialog, else the saved one. */
  const kind = (node: EditorNode): unknown => {
    const input = $('#node-config-input-kind');
    return input.length > 0 ? input.val() : node.kind;
  };
  return {
    category: 'config',
    defaults: {
      name: { value: '' },
      kind: { value: 'memory', label: t('label.kind'), validate: v.oneOf(DEDUPE_KINDS) },
      retentionHours: numberProperty(DEDUPE_NUMBERS.retentionHours, t('label.retentionHours')),
      leaseSeconds: numberProperty(DEDUPE_NUMBERS.leaseSeconds, t('label.leaseSeconds')),
      maxKeys: numberProperty(DEDUPE_NUMBERS.maxKeys, t('label.maxKeys')),
      url: {
        value: 'redis://127.0.0.1:6379',
        label: t('label.url'),
        validate: envOr('url', function (this: EditorNode, value, opt) {
          if (kind(this) !== 'redis') return true;
          const text = str(value);
          return text === '' || isEnvReference(text) || redisUrlProblem(text) === undefined || fail(opt, t('errors.url'));
        }),
      },
      urlType: { value: 'str' },
      prefix: {
        value: 'rabbitmq-retry:dedupe:',
        label: t('label.prefix'),
        validate(this: EditorNode, value, opt) {
          if (kind(this) !== 'redis') return true;
          const input = $('#node-config-input-url');
          const url = str(input.length > 0 ? input.val() : this.url);
          return redisPrefixProblem(url, str(value)) === undefined || fail(opt, t('errors.prefix'));
        },
      },
      tlsConfig: { value: '', type: 'tls-config', required: false, label: t('label.tlsConfig') },
      postgres: {
        value: '',
        type: NODE_TYPE.retryPostgres,
        required: false,
        label: t('label.postgres'),
        validate(this: EditorNode, value, opt) {
          const id = str(value);
          return kind(this) !== 'postgres' || (id !== '' && id !== '_ADD_') || fail(opt, t('errors.postgres'));
        },
      },
      table: { value: 'rabbitmq_retry_dedupe', label: t('label.table'), validate: tableName(t, (node) => kind(node) === 'postgres') },
      mode: { value: 'declare', validate: v.oneOf(choices.topologyModes) },
    },
    credentials: { user: { type: 'text' }, password: { type: 'password' } },
    label() {
      if (this.name) return str(this.name);
      if (this.kind === 'redis') return redactUrl(envLabel(this.url || 'redis://127.0.0.1:6379', this.urlType));
      if (this.kind === 'postgres') return `postgres ${str(this.table) || 'rabbitmq_retry_dedupe'}`;
      return t('kind.memory');
    },
    oneditprepare() {
      fillSelect('#node-config-input-kind', DEDUPE_KINDS, (k) => t(`kind.${k}`), this.kind || 'memory');
      fillSelect('#node-config-input-mode', choices.topologyModes, (m) => t(`mode.${m}`), this.mode || 'declare');
      envInput('url');
      const refresh = (): void => {
        const k = $('#node-config-input-kind').val();
        $('.retry-dedupe-memory').toggle(k === 'memory');
        $('.retry-dedupe-redis').toggle(k === 'redis');
        $('.retry-dedupe-postgres').toggle(k === 'postgres');
      };
      $('#node-config-input-kind').on('change', refresh);
      refresh();
      showReasons(this, 'node-config-input');
    },
    oneditsave() {
      const k = $('#node-config-input-kind').val();
      if (k !== 'redis') $('#node-config-input-tlsConfig').val('');
      if (k !== 'postgres') $('#node-config-input-postgres').val('');
    },
  };
}
