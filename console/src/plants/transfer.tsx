import { useId, useRef, useState } from 'preact/hooks';
import { explain, unreachable, type Client } from '../api.js';
import { Submissions } from '../submissions.js';
import { Message } from '../ui.js';
import { filterQuery, type Filter } from './filter.js';

/** Plants in bulk: a CSV or NDJSON file imported (POST /plants/import) with its progress, and exports of what the filter selects. */

const MEDIA_TYPES: Record<string, string> = {
  csv: 'text/csv',
  ndjson: 'application/x-ndjson',
  jsonl: 'application/x-ndjson',
  json: 'application/json',
};

function mediaTypeOf(file: File): string | undefined {
  const extension = /\.([a-z]+)$/i.exec(file.name)?.[1]?.toLowerCase();
  return (extension === undefined ? undefined : MEDIA_TYPES[extension]) ?? (Object.values(MEDIA_TYPES).includes(file.type) ? file.type : undefined);
}

/**
 * A fetch for the client's one import call that sends `file` by XMLHttpRequest, whose upload reports
 * progress (a fetch upload does not). The request's method, URL and headers (the token's among them) are
 * the client's; the answer goes back to the client as a Response, to be read as any other.
 */
function uploadWithProgress(file: File, onProgress: (sent: number, total: number) => void) {
  return (request: Request) =>
    new Promise<Response>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(request.method, request.url);
      request.headers.forEach((value, name) => xhr.setRequestHeader(name, value));
      xhr.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : file.size);
      xhr.onload = () => {
        const headers = new Headers();
        for (const line of xhr.getAllResponseHeaders().trim().split(/\r?\n/)) {
          const colon = line.indexOf(':');
          if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
        }
        resolve(new Response(xhr.status === 204 ? null : xhr.responseText, { status: xhr.status, statusText: xhr.statusText, headers }));
      };
      xhr.onerror = () => reject(new TypeError('the connection failed'));
      xhr.onabort = () => reject(new DOMException('aborted', 'AbortError'));
      xhr.send(file);
    });
}

export function Import({ client, onImported }: { client: Client; onImported: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [mode, setMode] = useState<'replace' | 'create-only'>('replace');
  const [progress, setProgress] = useState<{ sent: number; total: number } | null>(null);
  const [result, setResult] = useState('');
  const [problem, setProblem] = useState('');
  const fileId = useId();
  const modeId = useId();
  // The import's Idempotency-Key, the same for a retry of it after a lost answer: sent again without it, an
  // import that had been done was refused as "Nothing imported" (create-only: its plants existed, made by
  // itself), or replaced again what others had changed since.
  const submissions = useRef(new Submissions());

  const start = async () => {
    setResult('');
    setProblem('');
    if (file === null) return setProblem('Choose a file first.');
    const type = mediaTypeOf(file);
    if (type === undefined) return setProblem(`${file.name}: choose a .csv, .ndjson or .json file.`);
    setProgress({ sent: 0, total: file.size });
    try {
      const key = submissions.current.keyFor(JSON.stringify({ name: file.name, size: file.size, lastModified: file.lastModified, type, mode }));
      const { data, error, response } = await client.POST('/plants/import', {
        params: { query: { mode }, header: { 'idempotency-key': key } },
        // The file itself, sent as it is by uploadWithProgress (never read into memory here).
        body: file as unknown as string,
        headers: { 'content-type': type },
        fetch: uploadWithProgress(file, (sent, total) => setProgress({ sent, total })),
      });
      submissions.current.ended({ answered: true, status: response.status, code: error?.code });
      if (error !== undefined) setProblem(`Nothing imported. ${explain(error)}`);
      else {
        setResult(`Imported ${file.name}: ${data.created} created, ${data.replaced} replaced.`);
        onImported();
      }
    } catch (error) {
      submissions.current.ended({ answered: false });
      setProblem(`${unreachable(error)} It may have been imported all the same: Import again to find out (sent again, it is done once).`);
    } finally {
      setProgress(null);
    }
  };

  return (
    <section class="card" aria-labelledby="import-title">
      <h2 id="import-title">Import</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void start();
        }}
      >
        <div class="field">
          <label for={fileId}>File (CSV or NDJSON)</label>
          <input
            id={fileId}
            type="file"
            accept=".csv,.ndjson,.jsonl,.json,text/csv,application/x-ndjson,application/json"
            onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
          />
        </div>
        <div class="field">
          <label for={modeId}>Plants that exist already</label>
          <select id={modeId} value={mode} onChange={(e) => setMode(e.currentTarget.value as typeof mode)}>
            <option value="replace">Replace them</option>
            <option value="create-only">Refuse the whole import</option>
          </select>
        </div>
        <button type="submit" disabled={progress !== null}>
          Import
        </button>
      </form>
      {progress !== null && (
        <p>
          <label>
            {progress.sent < progress.total ? 'Sending' : 'Sent; the service is storing the plants'}{' '}
            <progress max={progress.total || 1} value={progress.sent} />
          </label>
        </p>
      )}
      <Message text={result} />
      <Message text={problem} error />
    </section>
  );
}

/** "Export CSV" and "Export NDJSON": every plant the filter selects, in its order, as a file to save. */
export function Export({ client, filter }: { client: Client; filter: Filter }) {
  const [problem, setProblem] = useState('');
  const save = async (format: 'csv' | 'ndjson') => {
    setProblem('');
    try {
      const { data, error } = await client.GET('/plants', { params: { query: { ...filterQuery(filter), format } }, parseAs: 'blob' });
      if (error !== undefined) return setProblem(explain(error));
      const link = document.createElement('a');
      link.href = URL.createObjectURL(data);
      link.download = `plants.${format}`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    } catch (error) {
      setProblem(unreachable(error));
    }
  };
  return (
    <>
      <button type="button" class="quiet" onClick={() => void save('csv')}>
        Export CSV
      </button>
      <button type="button" class="quiet" onClick={() => void save('ndjson')}>
        Export NDJSON
      </button>
      <Message text={problem} error />
    </>
  );
}
