// @ts-check
'use strict';
/**
 * The bench probe's hooks into amqplib (probe.cjs): Channel.prototype consume/ack/nack/reject wrapped once per
 * amqplib copy (2.x and 0.x, promise and callback API), so raw amqplib, this package and other packages are timed at
 * the same points; each reports to the run's window (`probe-window.cjs`). Node built-ins only.
 */
const { state, onDelivered, onAcked } = require('./probe-window.cjs');

/** @typedef {import('amqplib').ConsumeMessage} ConsumeMessage */
/** @typedef {(message: ConsumeMessage | null) => void} Callback */

/** Unacked delivery tags per channel: a multiple-ack (`allUpTo`) settles every one up to its tag. */
/** @type {WeakMap<object, Set<number>>} */
const unacked = new WeakMap();

/**
 * @param {object} channel
 * @param {ConsumeMessage} message
 * @param {boolean | undefined} allUpTo
 */
function settled(channel, message, allUpTo) {
  const tags = unacked.get(channel);
  const tag = message.fields.deliveryTag;
  if (!tags) return 1;
  if (!allUpTo) return tags.delete(tag) ? 1 : 0;
  let n = 0;
  for (const t of tags) {
    if (t <= tag) {
      tags.delete(t);
      n += 1;
    }
  }
  return n;
}


/**
 * The methods the probe wraps; the originals are called with the channel as `this`.
 * @typedef {object} ChannelMethods
 * @property {(this: object, queue: string, callback: Callback, ...rest: unknown[]) => unknown} consume
 * @property {(this: object, message: ConsumeMessage, allUpTo?: boolean) => void} ack
 * @property {(this: object, message: ConsumeMessage, allUpTo?: boolean, requeue?: boolean) => void} nack
 * @property {((this: object, message: ConsumeMessage, requeue?: boolean) => void) | undefined} [reject]
 */

/** @type {Set<object>} */
const probed = new Set();

/**
 * The object of `from`'s prototype chain (itself included) that defines `ack`: the Channel class of
 * an amqplib copy (a ConfirmChannel inherits it; 2.x and 0.x both define ack on Channel).
 * @param {object | null} from
 * @returns {ChannelMethods | undefined}
 */
function channelClass(from) {
  let proto = from;
  while (proto && !Object.prototype.hasOwnProperty.call(proto, 'ack')) proto = /** @type {object | null} */ (Object.getPrototypeOf(proto));
  return proto ? /** @type {ChannelMethods} */ (proto) : undefined;
}

/**
 * Wraps consume/ack/nack of one amqplib Channel class, once.
 * @param {ChannelMethods} methods
 */
function wrap(methods) {
  if (probed.has(methods)) return;
  probed.add(methods);
  const { consume, ack, nack, reject } = methods;
  // `...rest`: options, and the completion callback of amqplib's callback API (what amqp-ts uses).
  methods.consume = function probedConsume(queue, callback, ...rest) {
    let tags = unacked.get(this);
    if (!tags) {
      tags = new Set();
      unacked.set(this, tags);
    }
    const channelTags = tags;
    /** @type {Callback} */
    const probedCallback = (message) => {
      if (message) {
        channelTags.add(message.fields.deliveryTag);
        onDelivered(message);
      }
      callback(message);
    };
    return consume.call(this, queue, probedCallback, ...rest);
  };
  methods.ack = function probedAck(message, allUpTo) {
    ack.call(this, message, allUpTo);
    if (state.acks < state.target) state.frames += 1;
    onAcked(settled(this, message, allUpTo));
  };
  methods.nack = function probedNack(message, allUpTo, requeue) {
    nack.call(this, message, allUpTo, requeue);
    if (state.acks < state.target) state.frames += 1;
    state.nacks += settled(this, message, allUpTo);
    if (state.onNack) state.onNack(message);
  };
  // basic.reject (the package's dead-letter since RabbitMQ 4.3 counts only a reject): a nack of one message.
  if (reject) {
    methods.reject = function probedReject(message, requeue) {
      reject.call(this, message, requeue);
      if (state.acks < state.target) state.frames += 1;
      state.nacks += settled(this, message, false);
      if (state.onNack) state.onNack(message);
    };
  }
}

/**
 * Wraps the amqplib copy a channel (or a Channel prototype) belongs to.
 * @param {object} channel
 */
function installProbe(channel) {
  const methods = channelClass(channel);
  if (!methods) throw new Error('amqplib Channel.prototype.ack not found');
  wrap(methods);
}


module.exports = { probed, channelClass, wrap, installProbe };
