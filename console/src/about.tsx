import { useCallback, useEffect, useState } from 'preact/hooks';
import { explain, unreachable } from './api.js';
import type { Session } from './session.js';
import { Message } from './ui.js';

/** The service's version and readiness, the token's scopes, and where the API is described. */
export function About({ session }: { session: Session }) {
  const { client, info } = session;
  const [version, setVersion] = useState('…');
  const [ready, setReady] = useState('…');
  const [problem, setProblem] = useState('');

  const check = useCallback(async () => {
    setReady('…');
    try {
      const readiness = await client.GET('/readyz');
      setReady(readiness.error === undefined ? `ready (store: ${readiness.data.store ?? 'unknown'})` : `not ready: ${readiness.error.message}`);
      // The release that answers (GET /healthz), not the API's version (the OpenAPI document's, 1.0.0).
      const health = await client.GET('/healthz');
      if (health.error !== undefined) setProblem(explain(health.error));
      else setVersion(health.data.version);
    } catch (error) {
      setReady('unknown');
      setProblem(unreachable(error));
    }
  }, [client]);
  useEffect(() => void check(), [check]);

  return (
    <section aria-labelledby="about-service">
      <h2 id="about-service">The service</h2>
      <dl class="facts">
        <dt>Version</dt>
        <dd>{version}</dd>
        <dt>Readiness</dt>
        <dd>
          {ready}{' '}
          <button type="button" class="quiet" onClick={() => void check()}>
            Check again
          </button>
        </dd>
        <dt>This token</dt>
        <dd>
          {info.id}, with the scopes {info.scopes.length === 0 ? 'none' : info.scopes.join(', ')}
        </dd>
      </dl>
      <Message text={problem} error />
      <h2>The API</h2>
      <ul>
        <li>
          <a href="docs">API reference (/docs)</a>: every operation, with a console to try them
        </li>
        <li>
          <a href="openapi.json">OpenAPI document (/openapi.json)</a>
        </li>
      </ul>
    </section>
  );
}
