/** @tempinbox/client: the API's types, generated from docs/openapi.json. */
export type * from './api-types.js';
