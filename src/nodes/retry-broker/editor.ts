/** The retry-broker dialog: URL or host fields (text or an environment variable), credentials, TLS, limits, management API. */
import { envFields, envInput, envLabel, envOr, showReasons, str, tabs, validators as v, type Translate } from '../../editor/index';
import { migrate, numberProperty, withVersion } from '../shared/editor-properties';
import { redactUrl } from '../../lib/connection/settings';
import type { JQStatic, NodeDefinition } from '../../editor/red';
import { hostProperty } from '../../editor/common';
import { BROKER_NUMBERS, BROKER_VERSIONS } from '../shared/broker-properties';

declare const $: JQStatic;

/** A URL from the environment may be amqps://: its TLS configuration is kept. */
function usesTls(): boolean {
  return $('#node-config-input-tls').is(':checked') || $('#node-config-input-urlType').val() === 'env' || /^\s*amqps:/.test(str($('#node-config-input-url').val()));
}

export function retryBroker(t: Translate): NodeDefinition {
  return {
    category: 'config',
    defaults: withVersion(BROKER_VERSIONS, {
      name: { value: '' },
      url: { value: '', label: t('label.url'), validate: envOr('url', v.brokerUrl) },
      urlType: { value: 'str' },
      host: hostProperty(t),
      hostType: { value: 'str' },
      port: numberProperty(BROKER_NUMBERS.port, t('label.port')),
      vhost: { value: '/' },
      tls: { value: false },
      tlsConfig: { value: '', type: 'tls-config', required: false, label: t('label.tlsConfig') },
      heartbeat: numberProperty(BROKER_NUMBERS.heartbeat, t('label.heartbeat')),
      reconnectMax: numberProperty(BROKER_NUMBERS.reconnectMax, t('label.reconnectMax')),
      bufferMessages: numberProperty(BROKER_NUMBERS.bufferMessages, t('label.bufferMessages')),
      bufferMiB: numberProperty(BROKER_NUMBERS.bufferMiB, t('label.bufferMiB')),
      managementUrl: { value: '', label: t('label.managementUrl'), validate: envOr('managementUrl', v.managementUrl) },
      managementUrlType: { value: 'str' },
    }),
    credentials: { user: { type: 'text' }, password: { type: 'password' } },
    label() {
      if (this.name) return str(this.name);
      if (this.url) return this.urlType === 'env' ? envLabel(this.url, 'env') : redactUrl(str(this.url));
      const host = envLabel(this.host || '127.0.0.1', this.hostType);
      // A list of hosts (a cluster) carries its own ports.
      if (/[,\s]/.test(host.trim())) return host.trim();
      const tls = Boolean(this.tls || this.tlsConfig);
      return `${tls ? 'amqps://' : 'amqp://'}${host}:${str(this.port) || (tls ? '5671' : '5672')}`;
    },
    oneditprepare() {
      tabs(
        'retry-broker-tabs',
        ['connection', 'security', 'advanced'].map((id) => ({ id: `retry-broker-tab-${id}`, label: t(`tabs.${id}`) })),
      );
      migrate(this, BROKER_VERSIONS, BROKER_NUMBERS, 'node-config-input');
      // Like the core nodes: text, or the name of an environment variable (flow, group or process env).
      for (const field of envFields) envInput(field);
      const refresh = (): void => {
        $('.retry-broker-hostfields').css('opacity', str($('#node-config-input-url').val()) !== '' ? 0.6 : 1);
        $('.retry-broker-tlsconfig').toggle(usesTls());
      };
      $('#node-config-input-url, #node-config-input-tls').on('change keyup', refresh);
      refresh();
      showReasons(this, 'node-config-input');
    },
    oneditsave() {
      // Without TLS a selected TLS configuration would be refused at deploy: drop it.
      if (!usesTls()) $('#node-config-input-tlsConfig').val('');
    },
  };
}
