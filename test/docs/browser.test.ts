import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { atServedAddress, indentJson, underServedFolder } from '../../src/docs/browser.js';
import { EXAMPLE_ADDRESS } from '../../src/docs/page.js';
import { API_DESCRIPTION } from '../../src/openapi/intro.js';
import { FUZZING } from '../tier.js';

describe("indentJson: the 'Try it out' console's display of a JSON answer", () => {
  it('lays out any JSON text as JSON.stringify(value, null, 2) does, whatever its spacing (property)', FUZZING, () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2, '\t', ' \r\n '), (value, space) => {
        assert.equal(indentJson(JSON.stringify(value, null, space)), JSON.stringify(value, null, 2));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps every digit of a number beyond 2^53, and every string exactly as sent', () => {
    const sent = '[{"id":9223372036854775807,"name":"a\\"}{,:[] \\\\","tag":"\\u00e9"},{ },[]]';
    const shown = [
      '[',
      '  {',
      '    "id": 9223372036854775807,',
      '    "name": "a\\"}{,:[] \\\\",',
      '    "tag": "\\u00e9"',
      '  },',
      '  {},',
      '  []',
      ']',
    ];
    assert.equal(indentJson(sent), shown.join('\n'));
  });
});

describe('atServedAddress: the examples of /docs at the address the page was served from', () => {
  const example = EXAMPLE_ADDRESS;

  it('puts the page’s origin (host and port) for every example address, and changes nothing else', () => {
    const text = `curl -s ${example}plants -H "Authorization: Bearer $TOKEN"\nthen ${example}plants/1, not http://127.0.0.1:80800/`;
    assert.equal(
      atServedAddress(text, example, 'http://10.0.0.5:3000/docs'),
      'curl -s http://10.0.0.5:3000/plants -H "Authorization: Bearer $TOKEN"\nthen http://10.0.0.5:3000/plants/1, not http://127.0.0.1:80800/',
    );
    assert.equal(atServedAddress(`${example}plants`, example, 'https://plants.example/docs#/plants/getPlant'), 'https://plants.example/plants');
    assert.equal(atServedAddress(`${example}plants`, example, 'http://127.0.0.1:8080/docs?x=1'), `${example}plants`);
  });

  it('keeps the prefix a proxy serves the service under', () => {
    assert.equal(atServedAddress(`${example}plants`, example, 'https://example.org/plant-store/docs'), 'https://example.org/plant-store/plants');
  });

  it('is the address the OpenAPI document’s description uses for every example', () => {
    assert.ok(API_DESCRIPTION.includes(`${example}plants`));
    for (const [address] of API_DESCRIPTION.matchAll(/https?:\/\/[^\s"'`)]+/g)) assert.ok(address.startsWith(example), address);
  });
});

describe('underServedFolder: Try it out under the prefix a proxy serves the page under', () => {
  it('sends a request for the origin’s root under the page’s folder', () => {
    const page = 'https://example.org/plant-store/docs#/plants/getPlant';
    assert.equal(underServedFolder('https://example.org/plants/1', page), 'https://example.org/plant-store/plants/1');
    assert.equal(underServedFolder('https://example.org/plants?q=fern&limit=2', page), 'https://example.org/plant-store/plants?q=fern&limit=2');
    assert.equal(underServedFolder('/tokens', page), 'https://example.org/plant-store/tokens');
  });

  it('leaves a request under the folder, one without a prefix, and one to another origin as they are', () => {
    const page = 'https://example.org/plant-store/docs';
    assert.equal(underServedFolder('https://example.org/plant-store/openapi.json', page), 'https://example.org/plant-store/openapi.json');
    assert.equal(underServedFolder('openapi.json', page), 'openapi.json');
    assert.equal(underServedFolder('https://other.example/plants', page), 'https://other.example/plants');
    assert.equal(underServedFolder('http://127.0.0.1:8080/plants/1', 'http://127.0.0.1:8080/docs'), 'http://127.0.0.1:8080/plants/1');
  });
});
