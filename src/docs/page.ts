import {
  atServedAddress,
  exactJsonResponses,
  indentJson,
  ndjsonExamplesAsWritten,
  servedAddressExamples,
  startSwaggerUi,
  underServedFolder,
} from './browser.js';

/**
 * What the browser gets at /docs besides Swagger UI's own files: the page, the script that starts
 * Swagger UI on /openapi.json, and the page's Content-Security-Policy. Every URL here is relative to
 * the page, and none names another origin.
 */

/** Where the page's files are served, relative to the page (/docs → /docs/<file>). */
export const ASSET_DIR = 'docs';

/**
 * Swagger UI's settings (https://swagger.io/docs/open-source-tools/swagger-ui/usage/configuration/):
 * only the options that differ from the defaults, or that must never change for the page to stay on
 * its own origin.
 */
const SWAGGER_UI_OPTIONS = {
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  // The default validator badge would send the document to validator.swagger.io.
  validatorUrl: null,
  // A ?url= or ?configUrl= in the page's address must not point the page at another document.
  queryConfigEnabled: false,
  // Links to each operation (#/default/getPlant).
  deepLinking: true,
  displayRequestDuration: true,
  // The token typed into "Authorize" lives in the page only, never in localStorage.
  persistAuthorization: false,
};

/**
 * The address the OpenAPI document's examples name (its description, openapi/intro.ts: the default HOST and
 * PORT); the page shows its own address instead.
 */
export const EXAMPLE_ADDRESS = 'http://127.0.0.1:8080/';

/** The functions of browser.ts as source text, then the call that starts Swagger UI; strict, and leaving no globals. */
export const START_SCRIPT = `(() => {
'use strict';
${[indentJson, exactJsonResponses, ndjsonExamplesAsWritten, atServedAddress, servedAddressExamples, underServedFolder, startSwaggerUi].map(String).join('\n')}
startSwaggerUi(${JSON.stringify(SWAGGER_UI_OPTIONS)}, ${JSON.stringify(EXAMPLE_ADDRESS)});
})();
`;

export const PAGE_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Plant Store API</title>
    <link rel="icon" type="image/png" href="${ASSET_DIR}/favicon.png">
    <link rel="stylesheet" href="${ASSET_DIR}/swagger-ui.css">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${ASSET_DIR}/swagger-ui-bundle.js"></script>
    <script src="${ASSET_DIR}/start.js"></script>
  </body>
</html>
`;
