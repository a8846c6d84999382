import { describe, expect, it } from 'vitest';
import { staleApiTypes } from '../../scripts/gen-api-types.js';

describe('generated API types', () => {
  it('packages/client/src/generated is what @hey-api/openapi-ts makes from docs/openapi.json now', async () => {
    // Stale after a schema change: npm run docs:openapi, then npm run docs:api-types.
    expect(await staleApiTypes()).toEqual([]);
  }, 60_000);
});
