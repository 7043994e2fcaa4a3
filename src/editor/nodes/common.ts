/** What the dialogs of the package's nodes share. */
import { fail, str, type EditorNode, type Translate, type Validator } from '../index';

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
