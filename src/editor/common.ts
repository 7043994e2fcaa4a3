/** What the dialogs of the package's nodes share. */
import { parseTableName } from '../lib/postgres/identifiers';
import { envOr, fail, str, type EditorNode, type Translate, type Validator } from './index';
import type { JQStatic } from './red';

declare const $: JQStatic;

export const CATEGORY = 'RabbitMQ retry';
export const COLOR = '#FF9966';

export function italicWhenNamed(this: EditorNode): string {
  return this.name ? 'node_label_italic' : '';
}

/** A PostgreSQL table name (optionally schema.table), checked by the runtime's parseTableName; empty takes the default. */
export function tableName(t: Translate, when: (node: EditorNode) => boolean = () => true): Validator {
  return function (this: EditorNode, value, opt) {
    const text = str(value);
    return !when(this) || text === '' || !('problem' in parseTableName(text)) || fail(opt, t('errors.table'));
  };
}

/** A config node's host field (text or an environment variable): required unless a URL is set. */
export function hostProperty(t: Translate): { value: string; label: string; validate: Validator } {
  return {
    value: '127.0.0.1',
    label: t('label.host'),
    validate: envOr('host', function (this: EditorNode, value, opt) {
      const input = $('#node-config-input-url');
      const url = input.length > 0 ? input.val() : this.url;
      return str(value) !== '' || str(url) !== '' || fail(opt, t('errors.host'));
    }),
  };
}
