/**
 * Whole numbers in a typed array that starts narrow and widens when a value needs it: 8-bit until a
 * value passes 255, then 16-bit until one passes 65 535, then 32-bit, then 64-bit floats (exact up to
 * 2^53). Most counts of a minute fit in 8 or 16 bits, so a day of them costs 1 or 2 bytes a minute; a
 * busy consumer pays for what it uses.
 */
type Values = Uint8Array | Uint16Array | Uint32Array | Float64Array;

const U8_MAX = 0xff;
const U16_MAX = 0xffff;
const U32_MAX = 0xffffffff;

export class WideCounts {
  private values: Values;

  constructor(readonly size: number) {
    this.values = new Uint8Array(size);
  }

  get(index: number): number {
    return this.values[index] ?? 0;
  }

  /** Sets a whole number ≥ 0 (a negative one is taken as 0), widening the array first if it must. */
  set(index: number, value: number): void {
    const v = value > 0 ? Math.floor(value) : 0;
    if (v > this.max()) this.widen(v);
    this.values[index] = v;
  }

  add(index: number, n: number): void {
    this.set(index, this.get(index) + n);
  }

  /** Bytes held by the values. */
  get bytes(): number {
    return this.values.byteLength;
  }

  private max(): number {
    if (this.values instanceof Uint8Array) return U8_MAX;
    if (this.values instanceof Uint16Array) return U16_MAX;
    if (this.values instanceof Uint32Array) return U32_MAX;
    return Number.MAX_SAFE_INTEGER;
  }

  private widen(needed: number): void {
    const wider = needed <= U16_MAX ? new Uint16Array(this.size) : needed <= U32_MAX ? new Uint32Array(this.size) : new Float64Array(this.size);
    wider.set(this.values);
    this.values = wider;
  }
}
