/** What the dialogs of the package's nodes share. */
import { envOr, fail, str, type EditorNode, type Translate, type Validator } from '../index';
import type { JQStatic } from '../red';

declare const $: JQStatic;

export const CATEGORY = 'RabbitMQ retry';
export const COLOR = '#FF9966';

export function italicWhenNamed(this: EditorNode): string {
  return this.name ? 'node_label_italic' : '';
}

const TABLE = /^([A-Za-z_][A-Za-z0-9_$]*\.)?[A-Za-z_][A-Za-z0-9_$]*$/;

/** A PostgreSQL table name (optionally schema.table), as the runtime's parseTableName takes it. */
export function tableName(t: Translate, when: (node: EditorNode) => boolean = () => true): Validator {
  return function (this: EditorNode, value, opt) {
    return !when(this) || TABLE.test(str(value)) || fail(opt, t('errors.table'));
  };
}

/** A URL shown without the password between `//` and `@`. */
export function withoutPassword(url: string): string {
  return url.replace(/\/\/([^:@/]*)(:[^@]*)?@/, '//$1@');
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
