import assert from 'node:assert/strict';
import { barsSvg, fold, lastKnown, lineSvg, total } from '../../../../src/nodes/park-replay/editor-history-chart';

const o = { width: 100, height: 20, color: 'red', title: 'parked <a & b>' };

describe('history charts: folding minutes into buckets', () => {
  it('adds up a count, the newest bucket ending with the last minute (the oldest one may be short)', () => {
    assert.deepEqual(fold([1, 2, 3, 4, 5], 2, 'sum'), [3, 12]);
    assert.deepEqual(fold([1, 2, 3, 4], 2, 'sum'), [3, 7]);
  });
  it("keeps a gauge's last known value of each bucket; a bucket of unknowns stays null", () => {
    assert.deepEqual(fold([5, null, null, null, 7, null], 3, 'last'), [5, null, 7]);
  });
  it('never makes more buckets than values, nor fewer than one', () => {
    assert.deepEqual(fold([1, 2], 60, 'sum'), [1, 2]);
    assert.deepEqual(fold([1, 2, 3], 0, 'sum'), [6]);
  });
  it('totals a count and finds the last known value', () => {
    assert.equal(total([1, null, 4]), 5);
    assert.equal(lastKnown([3, 0, null]), 0);
    assert.equal(lastKnown([null, null]), null);
  });
});

describe('history charts: SVG', () => {
  it('draws one bar per non-zero value, the largest full height, and escapes the title', () => {
    const svg = barsSvg([0, 5, 10, null], o);
    assert.equal((svg.match(/<rect /g) ?? []).length, 2);
    assert.match(svg, /<rect x="50" y="0" width="24" height="19" fill="red"><title>10<\/title>/);
    assert.match(svg, /aria-label="parked &#60;a &#38; b&#62;"/);
    assert.doesNotMatch(svg, /<a &/);
  });
  it('draws no bar when every value is 0', () => {
    assert.doesNotMatch(barsSvg([0, 0], o), /<rect /);
  });
  it('draws a line through known values, broken where one is unknown, a dot for a lone value', () => {
    const svg = lineSvg([0, 10, null, 5], o);
    assert.match(svg, /<polyline points="12.5,19 37.5,1" /);
    assert.match(svg, /<circle cx="87.5" cy="10" r="1.5"/);
  });
  it('draws all-zero depths as a flat line at the bottom', () => {
    assert.match(lineSvg([0, 0], o), /points="25,19 75,19"/);
  });
});
