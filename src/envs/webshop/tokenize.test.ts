import { describe, expect, it } from 'vitest';
import { stem, tokenize } from './tokenize.js';

describe('webshop tokenize', () => {
  it('lower-cases, splits on anything but letters and digits, and drops stop words and the instruction scaffolding', () => {
    expect(tokenize('Natural Looking Clip-In Hair Extensions')).toEqual(['natural', 'looking', 'clip', 'hair', 'extension']);
    expect(tokenize('i need a t-shirt, and price lower than 40.00 dollars')).toEqual(['t', 'shirt', '40', '00']);
    expect(tokenize('100% Cotton / 2.4GHz')).toEqual(['100', 'cotton', '2', '4ghz']);
    expect(tokenize('   ')).toEqual([]);
  });

  it('keeps repeats (BM25 counts them) and stems plurals lightly', () => {
    expect(tokenize('red red shoes')).toEqual(['red', 'red', 'shoe']);
    expect(['batteries', 'jeans', 'glass', 'cactus', 'bus', 'chassis', 'dogs', 'bbq'].map(stem)).toEqual(['battery', 'jean', 'glass', 'cactus', 'bus', 'chassis', 'dog', 'bbq']);
  });
});
