/**
 * Code that runs in the browser, not in Node: page.ts sends these functions' source text as the
 * page's start script. Each must therefore be self-contained: no imports, nothing from this module but
 * the other functions here, and nothing of Node's.
 */

/** What Swagger UI's bundle defines (https://github.com/swagger-api/swagger-ui/blob/master/docs/customization/plugin-api.md). */
declare const SwaggerUIBundle: (options: object) => unknown;
/** The page's address (the browser's window.location). */
declare const location: { readonly href: string };

/** The part of an Immutable.js Map (Swagger UI's state) used here. */
interface StateMap {
  update(key: string, updater: (value: unknown) => unknown): StateMap;
}

interface SwaggerUiSystem {
  React: { createElement(this: void, type: unknown, props: object | null, ...children: unknown[]): unknown };
  getComponent(name: string, container?: boolean): unknown;
}

interface ResponseBodyProps {
  content?: unknown;
  contentType?: string;
}

/**
 * JSON text indented by two spaces, exactly as `JSON.stringify(JSON.parse(text), null, 2)` lays it
 * out, but without parsing it: every number keeps every digit (ids beyond 2^53 included) and every
 * string stays as sent. The text must be valid JSON.
 */
export function indentJson(text: string): string {
  let out = '';
  let depth = 0;
  const newline = () => '\n' + '  '.repeat(depth);
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (c === '"') {
      // Copy the whole string, escapes included: its end is the first quote not escaped.
      let end = i + 1;
      while (end < text.length && text.charAt(end) !== '"') end += text.charAt(end) === '\\' ? 2 : 1;
      out += text.slice(i, end + 1);
      i = end;
    } else if (c === '{' || c === '[') {
      const rest = text.slice(i + 1).trimStart();
      const close = c === '{' ? '}' : ']';
      if (rest.startsWith(close)) {
        out += c + close;
        i = text.indexOf(close, i + 1);
      } else {
        depth++;
        out += c + newline();
      }
    } else if (c === '}' || c === ']') {
      depth--;
      out += newline() + c;
    } else if (c === ',') {
      out += ',' + newline();
    } else if (c === ':') {
      out += ': ';
    } else if (c.trim() !== '') {
      out += c;
    }
  }
  return out;
}

/**
 * A Swagger UI plugin: the "Try it out" console shows a JSON answer as the server sent it, indented
 * (indentJson), where Swagger UI would pass it through JSON.parse and round every id beyond 2^53.
 * Anything else, and text that is not JSON, Swagger UI shows itself. The markup is Swagger UI's own.
 */
export function exactJsonResponses() {
  return {
    wrapComponents: {
      responseBody: (Original: unknown, system: SwaggerUiSystem) => (props: ResponseBodyProps) => {
        const h = system.React.createElement;
        const text = props.content;
        if (typeof text !== 'string' || !/json/i.test(props.contentType ?? '')) return h(Original, props);
        try {
          JSON.parse(text);
        } catch {
          return h(Original, props);
        }
        const HighlightCode = system.getComponent('HighlightCode', true);
        const code = h(HighlightCode, { language: 'json', downloadable: true, fileName: 'response.json', canCopy: true }, indentJson(text));
        return h('div', null, h('h5', null, 'Response body'), code);
      },
    },
  };
}

/** Swagger UI's maker of a request body's first text: (schema, media type, options, the document's example). */
type SampleOf = (schema: unknown, contentType?: string, config?: object, example?: unknown) => unknown;

/**
 * A Swagger UI plugin: a request body in NDJSON starts from the document's example as it is written (its
 * lines), where Swagger UI takes every media type whose name holds "json" for JSON and put the example in
 * the box as one JSON string, quotes escaped: Execute sent that, and the import refused its first "row".
 * Swagger UI's own 3.1 support puts its sample maker in place the same way, after loading (`this.fn`).
 */
export function ndjsonExamplesAsWritten() {
  return {
    afterLoad(this: { fn: { getSampleSchema: SampleOf } }) {
      const original = this.fn.getSampleSchema;
      const sample: SampleOf = (schema, contentType, config, example) =>
        typeof example === 'string' && /^application\/x-ndjson\b/i.test(contentType ?? '') ? example : original(schema, contentType, config, example);
      Object.assign(this.fn, { getSampleSchema: sample });
    },
  };
}

/**
 * Text of the document with its example address (`http://127.0.0.1:8080/`, openapi/intro.ts) replaced by
 * the address the page was served from: the folder of `pageUrl`, so a proxy's prefix is kept too.
 */
export function atServedAddress(text: string, example: string, pageUrl: string): string {
  return text.replaceAll(example, new URL('.', pageUrl).href);
}

/**
 * A Swagger UI plugin: the document's description, the first thing the page shows, gives its examples
 * (`curl http://…/plants`) at the address the page was served from (atServedAddress), whatever the host
 * and port, so that they work as pasted. It wraps the `info` selector, keeping one answer per document.
 */
export function servedAddressExamples(example: string) {
  let last: { info: StateMap; shown: StateMap } | undefined;
  const shown = (info: StateMap) =>
    info.update('description', (text) => (typeof text === 'string' ? atServedAddress(text, example, location.href) : text));
  return {
    statePlugins: {
      spec: {
        wrapSelectors: {
          info:
            (original: (...args: unknown[]) => StateMap | undefined) =>
            (...args: unknown[]): StateMap | undefined => {
              const info = original(...args);
              if (info === undefined) return undefined;
              if (last?.info !== info) last = { info, shown: shown(info) };
              return last.shown;
            },
        },
      },
    },
  };
}

/**
 * A request of the page sent under the folder the page was served from: the document names no server, so
 * Swagger UI sends Try it out to the origin's root (`http://host/plants/1`), out of a proxy's prefix the
 * page is served under (`http://host/plant-store/docs`), to whatever else the host serves there, the
 * token typed into Authorize with it. Without a prefix, or for a request already under it, `url` as it is.
 */
export function underServedFolder(url: string, pageUrl: string): string {
  const folder = new URL('.', pageUrl);
  const target = new URL(url, pageUrl);
  if (target.origin !== folder.origin || target.pathname.startsWith(folder.pathname)) return url;
  return new URL(`${target.pathname.slice(1)}${target.search}${target.hash}`, folder).href;
}

/** Starts Swagger UI with these options and the plugins above; `example` is the address the document's examples use. */
export function startSwaggerUi(options: object, example: string): void {
  const requestInterceptor = (request: { url: string }) => ((request.url = underServedFolder(request.url, location.href)), request);
  SwaggerUIBundle({ ...options, requestInterceptor, plugins: [exactJsonResponses, ndjsonExamplesAsWritten, () => servedAddressExamples(example)] });
}
