import { useRef, useState } from 'preact/hooks';
import { EVENT_TYPES, explain, unreachable, type Client, type Endpoint, type EventType } from '../api.js';
import { SecretShown } from '../secret.js';
import { Submissions } from '../submissions.js';
import { ConfirmOrCancel, Dialog, Field, Message } from '../ui.js';
import { useUnsaved } from '../unsaved.js';

type Int64 = 'number' | 'string';
const INT64_CHOICES: ReadonlyArray<readonly [Int64, string]> = [
  ['number', 'Numbers (the default)'],
  ['string', 'Strings, for JavaScript receivers'],
];

/** The webhook view's dialogs: a new endpoint, a secret shown once, and a question before a change that cannot be undone. */

export function AddEndpoint({
  client,
  onClose,
  onAdded,
}: {
  client: Client;
  onClose: () => void;
  onAdded: (endpoint: Endpoint, secret: string) => void;
}) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<ReadonlySet<EventType>>(new Set(EVENT_TYPES));
  const [description, setDescription] = useState('');
  const [int64, setInt64] = useState<Int64>('number');
  const [problem, setProblem] = useState('');
  const [busy, setBusy] = useState(false);
  // Each submission's Idempotency-Key, the same for a retry of one whose answer was lost: sent again without
  // it, a POST that had made the endpoint made a second, and each delivery went to the receiver twice.
  const submissions = useRef(new Submissions());
  // Anything chosen or typed other than the form's defaults is lost if the page goes: asked first.
  useUnsaved(url !== '' || description !== '' || events.size !== EVENT_TYPES.length || int64 !== 'number');

  const add = async () => {
    if (events.size === 0) return setProblem('Choose at least one event type.');
    setBusy(true);
    setProblem('');
    try {
      // int64 is sent only when it differs from the service's default (number).
      const body = {
        url: url.trim(),
        events: EVENT_TYPES.filter((type) => events.has(type)),
        ...(description.trim() !== '' && { description }),
        ...(int64 === 'string' && { int64 }),
      };
      const key = submissions.current.keyFor(JSON.stringify(body));
      const { data, error, response } = await client.POST('/webhooks', { body, params: { header: { 'idempotency-key': key } } });
      submissions.current.ended({ answered: true, status: response.status, code: error?.code });
      if (error !== undefined) return setProblem(explain(error));
      const { secret, ...endpoint } = data;
      onAdded(endpoint, secret);
    } catch (error) {
      submissions.current.ended({ answered: false });
      setProblem(
        `${unreachable(error)} The endpoint may have been added all the same: Save again to find out (the same request, sent again, never adds a second).`,
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title="Add a webhook endpoint" onClose={onClose}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void add();
        }}
      >
        <Field label="URL" type="url" inputMode="url" value={url} onInput={setUrl} required hint="Where deliveries are POSTed: http(s)://…" />
        <fieldset class="types">
          <legend>Events</legend>
          {EVENT_TYPES.map((type) => (
            <label key={type}>
              <input
                type="checkbox"
                checked={events.has(type)}
                onChange={(e) => {
                  const next = new Set(events);
                  if (e.currentTarget.checked) next.add(type);
                  else next.delete(type);
                  setEvents(next);
                }}
              />{' '}
              {type}
            </label>
          ))}
        </fieldset>
        <Field label="Description" value={description} onInput={setDescription} hint="Optional, for people." />
        <fieldset class="types" role="radiogroup" aria-describedby="endpoint-int64-hint">
          <legend>Ids in deliveries</legend>
          <p id="endpoint-int64-hint" class="hint">
            How deliveries write the plant's id. Strings keep ids beyond 2^53 exact for JavaScript's JSON.parse.
          </p>
          {INT64_CHOICES.map(([value, words]) => (
            <label key={value}>
              <input type="radio" name="int64" value={value} checked={int64 === value} onChange={() => setInt64(value)} /> {words}
            </label>
          ))}
        </fieldset>
        <Message text={problem} error />
        <ConfirmOrCancel busy={busy} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

/** A signing secret, shown this once: the service never shows it again. */
export function SigningSecret({ url, secret, onClose }: { url: string; secret: string; onClose: () => void }) {
  return (
    <SecretShown title="Signing secret" secret={secret} onClose={onClose}>
      <p>
        The secret of {url}. <strong>It is shown only now</strong>: copy it into the receiver's configuration before you close this.
      </p>
    </SecretShown>
  );
}

export function Confirm(props: { title: string; text: string; action: string; onClose: () => void; onConfirm: () => void }) {
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <p>{props.text}</p>
      <ConfirmOrCancel action={props.action} onConfirm={props.onConfirm} onCancel={props.onClose} />
    </Dialog>
  );
}

/** Before switching how an endpoint's deliveries write ids: its receiver must read the new form. */
export function Int64Confirm({ endpoint, onClose, onConfirm }: { endpoint: Endpoint; onClose: () => void; onConfirm: (int64: Int64) => void }) {
  const next: Int64 = endpoint.int64 === 'string' ? 'number' : 'string';
  const example = next === 'string' ? '"id":"42"' : '"id":42';
  return (
    <Confirm
      title={`Send ids as ${next}s?`}
      text={`Deliveries to ${endpoint.url} will write the plant's id as a JSON ${next} (${example}) from the next attempt on, retries and replays included: its receiver must read them so.`}
      action="Change"
      onClose={onClose}
      onConfirm={() => onConfirm(next)}
    />
  );
}
