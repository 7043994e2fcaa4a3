/**
 * The part of the Node-RED editor's API (RED) and of jQuery the dialogs use, typed here: the editor
 * runs in the browser, these are its globals. Types only: nothing here runs.
 */
/** A node in the editor: its properties by name. */
export type EditorNode = Record<string, unknown>;
/** What Node-RED passes a validator: the property's label when it wants a message. */
export interface ValidateOptions {
  label?: string;
}
export type Validator = (this: EditorNode, value: unknown, opt?: ValidateOptions) => boolean | string;

/** A jQuery selection, as far as the dialogs use it. */
export interface JQ {
  length: number;
  val(): unknown;
  val(value: unknown): JQ;
  prop(name: string): unknown;
  prop(name: string, value: unknown): JQ;
  is(selector: string): boolean;
  on(events: string, handler: (event: { currentTarget: unknown }) => void): JQ;
  off(events: string): JQ;
  data(key: string): unknown;
  data(key: string, value: unknown): JQ;
  next(selector?: string): JQ;
  closest(selector: string): JQ;
  trigger(event: string): JQ;
  toggle(show: boolean): JQ;
  show(): JQ;
  hide(): JQ;
  css(name: string, value: string | number): JQ;
  css(properties: Record<string, string | number>): JQ;
  attr(name: string, value: string): JQ;
  addClass(names: string): JQ;
  removeClass(names: string): JQ;
  toggleClass(names: string, on: boolean): JQ;
  each(handler: (index: number, element: unknown) => void): JQ;
  /** Node-RED's editable list widget: created with options, then driven by method names. */
  editableList(optionsOrMethod: Record<string, unknown> | 'items' | 'empty'): JQ;
  editableList(method: 'addItem', item: unknown): JQ;
  text(value: string): JQ;
  empty(): JQ;
  append(...content: Array<JQ | string>): JQ;
  appendTo(target: JQ): JQ;
  children(): JQ;
  find(selector: string): JQ;
  map<T>(each: (this: unknown, index: number, element: unknown) => T): { get(): T[] };
  typedInput(options: Record<string, unknown>): JQ;
  /** A typedInput's value or type now. */
  typedInput(method: 'value' | 'type'): string;
  /** The DOM element itself (e.g. to call an anchor's own click, which jQuery's trigger does not). */
  get(index: number): { click(): void } | undefined;
  remove(): JQ;
}

export interface Xhr {
  done(handler: (result: Record<string, unknown>, status: string, xhr: { getResponseHeader(name: string): string | null }) => void): Xhr;
  fail(handler: (xhr: { responseJSON?: { error?: string }; statusText: string }) => void): Xhr;
}

export interface JQStatic {
  (selector: unknown): JQ;
  getJSON(url: string, data?: Record<string, string>): Xhr;
  ajax(options: { url: string; type: string; contentType?: string; data?: string }): Xhr;
}

/** A property of a node type's `defaults`. */
export interface PropertyDefinition {
  value: unknown;
  type?: string;
  required?: boolean;
  label?: string;
  validate?: Validator;
}

/** What `RED.nodes.registerType` takes, as these nodes use it. */
export interface NodeDefinition {
  category: string;
  color?: string;
  defaults: Record<string, PropertyDefinition>;
  credentials?: Record<string, { type: 'text' | 'password' }>;
  inputs?: number;
  outputs?: number;
  icon?: string | ((this: EditorNode) => string);
  align?: 'left' | 'right';
  paletteLabel?: () => string;
  inputLabels?: () => string;
  outputLabels?: (index: number) => string;
  label?: (this: EditorNode) => string;
  labelStyle?: (this: EditorNode) => string;
  oneditprepare?: (this: EditorNode) => void;
  oneditsave?: (this: EditorNode) => void;
}

interface Notification {
  close(): void;
}

/** A tooltip (RED.popover.tooltip): its text can change; `delete` removes it from its target. */
export interface Tooltip {
  setContent(content: string): void;
  delete(): void;
}

/** RED.tray.show's options, as far as used: `open` gets the tray's element (its body is `.red-ui-tray-body`). */
interface TrayOptions {
  title: string;
  width?: number;
  buttons?: Array<{ id?: string; text: string; class?: string; click: () => void }>;
  open?: (tray: JQ) => void;
}

interface NotifyOptions {
  modal?: boolean;
  fixed?: boolean;
  type?: 'warning' | 'success' | 'error' | 'info';
  buttons?: Array<{ text: string; class?: string; id?: string; click: () => void }>;
}

export interface EditorRED {
  _(key: string, args?: Record<string, unknown>): string;
  nodes: {
    registerType(type: string, definition: NodeDefinition): void;
    getType(type: string): { defaults: Record<string, PropertyDefinition> } | undefined;
    node(id: string): EditorNode | null;
    eachConfig(each: (node: EditorNode) => void): void;
  };
  tabs: { create(options: { id: string; onchange: (tab: { id: string }) => void }): { addTab(tab: { id: string; label: string }): void } };
  notify(text: string, options: 'warning' | 'success' | 'error' | NotifyOptions): Notification;
  events: { on(event: string, handler: () => void): void };
  sidebar: { addTab(options: Record<string, unknown>): void; show(id: string): void };
  actions: { add(name: string, handler: () => void): void };
  popover: { tooltip(target: JQ, content: string | (() => string)): Tooltip };
  tray: { show(options: TrayOptions): void; close(): void };
  /** The logged-in user (every permission without adminAuth). */
  user?: { hasPermission(permission: string): boolean };
}
