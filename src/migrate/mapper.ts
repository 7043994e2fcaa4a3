/** What a package's mapper offers the converter. Pure. */
import type { Conversion } from './core';
import type { FlowNode } from './types';

export interface Mapper {
  /** The npm package whose nodes it converts. */
  package: string;
  /** Its node types (several packages share type names: `matches` tells them apart). */
  types: readonly string[];
  /** Whether the flow's nodes of these types are this package's. */
  matches(nodes: readonly FlowNode[]): boolean;
  /** Converts one node of its types (or keeps it, with a comment and the reason). */
  convert(ctx: Conversion, node: FlowNode): void;
}
