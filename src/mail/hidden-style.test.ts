import { describe, expect, it } from 'vitest';
import { elementEffect, readInlineStyle } from './hidden-style.js';

const effectOf = (style: string, attributes: Record<string, string> = {}): ReturnType<typeof elementEffect> =>
  elementEffect('div', { style, ...attributes });

describe('readInlineStyle', () => {
  it('reads the declarations that decide what is seen, lower-cased, the last of a property winning, without !important', () => {
    expect(readInlineStyle(' Display : BLOCK ; display:none !important;;bad; COLOR:#FFF; Margin: 0 Auto')).toEqual({ display: 'none', color: '#fff' });
  });
});

describe('elementEffect', () => {
  it.each([
    ['display:none'],
    ['opacity:0'],
    ['opacity:0.0'],
    ['opacity:0%'],
    ['width:0'],
    ['height:0em'],
    ['max-height:0;overflow:hidden'],
    ['max-width:0px;overflow-x:clip'],
  ])('removes the element: %s', (style) => {
    expect(effectOf(style).removes).toBe(true);
  });

  it.each([['opacity:0.01'], ['width:1px'], ['max-height:0'], ['max-height:0;overflow:visible'], ['display:block']])('keeps the element: %s', (style) => {
    expect(effectOf(style).removes).toBe(false);
  });

  it('takes the hidden attribute for display:none unless the style shows the element', () => {
    expect(effectOf('', { hidden: '' }).removes).toBe(true);
    expect(effectOf('display:flex', { hidden: '' }).removes).toBe(false);
    expect(elementEffect('template', {}).removes).toBe(true);
  });

  it.each([
    ['font-size:0', true],
    ['font-size:0px', true],
    ['font:0/0 a', true],
    ['font:bold 700 0/0 Arial', true],
    ['font:italic 12px/1.5 "Font 0"', false],
    ['font-size:14px', false],
    ['font-size:small', false],
    ['font-size:1.2em', undefined],
    ['font-size:120%', undefined],
    ['color:red', undefined],
  ] as const)('reads the font size in %s as zero: %s', (style, zeroFont) => {
    expect(effectOf(style).zeroFont).toBe(zeroFont);
  });

  it.each([
    ['color:transparent', true],
    ['color:rgba(0, 0, 0, 0)', true],
    ['color:rgb(0 0 0 / 0%)', true],
    ['color:hsla(0,0%,0%,0)', true],
    ['color:#0000', true],
    ['color:#ffffff00', true],
    ['color:rgba(0,0,0,0.5)', false],
    ['color:#000', false],
    ['color:#000000', false],
    ['color:inherit', undefined],
    ['font-size:12px', undefined],
  ] as const)('reads %s as transparent: %s', (style, transparent) => {
    expect(effectOf(style).transparent).toBe(transparent);
  });

  it('reads visibility as hidden, shown again, or inherited', () => {
    expect(effectOf('visibility:hidden').invisible).toBe(true);
    expect(effectOf('visibility:collapse').invisible).toBe(true);
    expect(effectOf('visibility:visible').invisible).toBe(false);
    expect(effectOf('color:red').invisible).toBeUndefined();
  });
});
