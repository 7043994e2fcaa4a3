/**
 * TLS through Node-RED's core tls-config node, against a TLS listener of a RabbitMQ node this test
 * starts itself (scripts/rabbitmq-node.sh, node tls7: AMQP 5686, TLS 5676) with a CA and certificates
 * it makes with openssl. The listener requires a client certificate (verify_peer, fail_if_no_peer_cert).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as amqp from 'amqplib';
import { waitFor } from '../helpers/broker';
import { configNode, consumerNode, tab, uniqueNames } from '../helpers/flows';
import { helper, loadFlow, logLines, statusCalls, statusTexts } from '../helpers/node-red';
import { script } from '../helpers/private-broker';

const NODE = 'tls7';
const AMQP_PORT = 5686;
const TLS_PORT = 5676;

/** A CA, a server certificate for DNS:localhost and a client certificate signed by it, and a CA that signed nothing. */
function makeCertificates(dir: string): void {
  const openssl = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  };
  for (const ca of ['ca', 'other-ca']) openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${ca}.key`, '-out', `${ca}.pem`, '-days', '2', '-subj', `/CN=${ca}`);
  writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=DNS:localhost\n');
  for (const [name, cn, ext] of [['server', 'localhost', ['-extfile', 'san.ext']], ['client', 'node-red', []]] as const) {
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', ...ext);
  }
}

describe('TLS with a tls-config node (own RabbitMQ node with a TLS listener)', function () {
  this.timeout(120_000);
  let dir: string;
  const file = (name: string): string => path.join(dir, name);

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'retry-tls-'));
    makeCertificates(dir);
    await script('rabbitmq-node.sh', ['reset', NODE]);
    await script('rabbitmq-node.sh', ['start', NODE, String(AMQP_PORT)], {
      RABBITMQ_NODE_EXTRA_CONF: [
        `listeners.ssl.default = 127.0.0.1:${TLS_PORT}`,
        `ssl_options.cacertfile = ${file('ca.pem')}`,
        `ssl_options.certfile = ${file('server.pem')}`,
        `ssl_options.keyfile = ${file('server.key')}`,
        'ssl_options.verify = verify_peer',
        'ssl_options.fail_if_no_peer_cert = true',
      ].join('\n'),
    });
  });

  after(async () => {
    await script('rabbitmq-node.sh', ['reset', NODE]);
    rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    await helper.unload();
  });

  const names = uniqueNames('tls');
  function flow(url: string, tls: Record<string, unknown>): Array<Record<string, unknown>> {
    return [
      tab(),
      { id: 'broker', type: 'retry-broker', name: 'tls broker', url, heartbeat: '30', tlsConfig: 'tls' },
      { id: 'tls', type: 'tls-config', cert: '', key: '', ca: '', verifyservercert: true, servername: '', ...tls },
      configNode(names),
      consumerNode([[]]),
    ];
  }
  const withClientCert = { ca: '', cert: '', key: '' };
  const lastStatus = (): string => statusTexts('consumer').at(-1) ?? '';

  async function consumerCount(): Promise<number> {
    const model = await amqp.connect(`amqp://guest:guest@127.0.0.1:${AMQP_PORT}`);
    try {
      const ch = await model.createChannel();
      return (await ch.checkQueue(names.mainQueue)).consumerCount;
    } finally {
      await model.close();
    }
  }

  it('connects and consumes with the right CA and a client certificate', async () => {
    await loadFlow(flow(`amqps://guest:guest@localhost:${TLS_PORT}`, { ...withClientCert, ca: file('ca.pem'), cert: file('client.pem'), key: file('client.key') }));
    await waitFor(() => /in flight/.test(lastStatus()), `the consumer consuming over TLS (status: ${lastStatus()})`);
    assert.equal(await consumerCount(), 1);
  });

  it('takes the certificates uploaded into the tls-config node (credentials), and host fields mean TLS', async () => {
    const { readFileSync } = await import('node:fs');
    const f = flow('', {});
    f[1] = { ...f[1], host: 'localhost', port: String(TLS_PORT) };
    await loadFlow(f, undefined, { tls: { cadata: readFileSync(file('ca.pem'), 'utf8'), certdata: readFileSync(file('client.pem'), 'utf8'), keydata: readFileSync(file('client.key'), 'utf8') } });
    await waitFor(() => /in flight/.test(lastStatus()), `the consumer consuming over TLS (status: ${lastStatus()})`);
  });

  it('names a certificate signed by another CA as not trusted', async () => {
    await loadFlow(flow(`amqps://guest:guest@localhost:${TLS_PORT}`, { ca: file('other-ca.pem'), cert: file('client.pem'), key: file('client.key') }));
    await waitFor(() => lastStatus().includes('retry in'), 'the TLS error');
    assert.match(lastStatus(), /^TLS: the broker's certificate is not trusted \(self-signed certificate in certificate chain\): set the CA certificate that signed it in the TLS configuration/);
  });

  it('names a host the certificate is not for, and connects with the server name set', async () => {
    const tls = { ca: file('ca.pem'), cert: file('client.pem'), key: file('client.key') };
    await loadFlow(flow(`amqps://guest:guest@127.0.0.1:${TLS_PORT}`, tls));
    await waitFor(() => lastStatus().includes('retry in'), 'the TLS error');
    assert.match(lastStatus(), /^TLS: the broker's certificate is not valid for '127\.0\.0\.1' \(IP: 127\.0\.0\.1 is not in the cert's list\): .*set the server name/);
    await helper.unload();
    await loadFlow(flow(`amqps://guest:guest@127.0.0.1:${TLS_PORT}`, { ...tls, servername: 'localhost' }));
    await waitFor(() => /in flight/.test(lastStatus()), `the consumer consuming with the server name (status: ${lastStatus()})`);
  });

  it('says the broker requires a client certificate when none is given', async () => {
    await loadFlow(flow(`amqps://guest:guest@localhost:${TLS_PORT}`, { ca: file('ca.pem') }));
    await waitFor(() => lastStatus().includes('retry in'), 'the TLS error');
    assert.match(lastStatus(), /^TLS: the broker requires a client certificate: set certificate and key in the TLS configuration/);
  });

  it('refuses a TLS configuration with a plain amqp:// URL instead of sending the password unencrypted', async () => {
    await loadFlow(flow(`amqp://guest:guest@127.0.0.1:${AMQP_PORT}`, { ca: file('ca.pem') }));
    const expected = `a TLS configuration is selected but amqp://guest@127.0.0.1:${AMQP_PORT} is not TLS: use amqps://`;
    await waitFor(() => lastStatus() === expected, `the refusal (status: ${lastStatus()})`);
    assert.ok(!statusCalls().some((c) => /connecting|connected/.test(c.status.text ?? '')), 'nothing may connect');
    assert.ok(logLines().some((l) => l.includes(expected)));
  });
});
