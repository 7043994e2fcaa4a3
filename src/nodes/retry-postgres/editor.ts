/** The retry-postgres dialog: a connection string or host fields (text or an environment variable), credentials, TLS, pool size. */
import { envInput, envLabel, envOr, fail, isEnvReference, showReasons, str, type Translate } from '../../editor/index';
import { numberProperty } from '../shared/editor-properties';
import type { JQStatic, NodeDefinition } from '../../editor/red';
import { hostProperty } from '../../editor/common';
import { redactUrl } from '../../lib/connection/settings';
import { parseConnectionString } from '../../lib/postgres/settings';
import { POSTGRES_NUMBERS } from './properties';

declare const $: JQStatic;

export function retryPostgres(t: Translate): NodeDefinition {
  return {
    category: 'config',
    defaults: {
      name: { value: '' },
      url: {
        value: '',
        label: t('label.url'),
        validate: envOr('url', (value, opt) => {
          const text = str(value);
          return text === '' || isEnvReference(text) || !('problem' in parseConnectionString(text)) || fail(opt, t('errors.url'));
        }),
      },
      urlType: { value: 'str' },
      host: hostProperty(t),
      hostType: { value: 'str' },
      port: numberProperty(POSTGRES_NUMBERS.port, t('label.port')),
      database: { value: '' },
      poolSize: numberProperty(POSTGRES_NUMBERS.poolSize, t('label.poolSize')),
      tls: { value: false },
      tlsConfig: { value: '', type: 'tls-config', required: false, label: t('label.tlsConfig') },
    },
    credentials: { user: { type: 'text' }, password: { type: 'password' } },
    label() {
      if (this.name) return str(this.name);
      if (this.url) return this.urlType === 'env' ? envLabel(this.url, 'env') : redactUrl(str(this.url));
      return `postgres://${envLabel(this.host || '127.0.0.1', this.hostType)}:${str(this.port) || '5432'}/${str(this.database)}`;
    },
    oneditprepare() {
      envInput('url');
      envInput('host');
      const refresh = (): void => {
        $('.retry-postgres-hostfields').css('opacity', str($('#node-config-input-url').val()) !== '' ? 0.6 : 1);
        $('.retry-postgres-tlsconfig').toggle($('#node-config-input-tls').is(':checked'));
      };
      $('#node-config-input-url, #node-config-input-tls').on('change keyup', refresh);
      refresh();
      showReasons(this, 'node-config-input');
    },
    oneditsave() {
      if (!$('#node-config-input-tls').is(':checked')) $('#node-config-input-tlsConfig').val('');
    },
  };
}
