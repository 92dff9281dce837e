import type { ReceivedSpan, Value } from './collector.js';

/**
 * A decoder of OTLP's ExportTraceServiceRequest in protobuf (opentelemetry-proto, trace/v1 and common/v1),
 * written from the .proto files and the protobuf wire format, for the fields the service's spans use: no
 * code of the exporter is shared, so a test that decodes its bytes checks them independently.
 */

type Field = { number: number; wire: number; value: bigint | Uint8Array };

/** Reads a message's fields in order (varint, 64-bit, length-delimited, 32-bit). */
function fields(bytes: Uint8Array): Field[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = bytes[at++];
      if (byte === undefined) throw new Error('truncated varint');
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
    }
  };
  while (at < bytes.length) {
    const key = Number(varint());
    const number = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ number, wire, value: varint() });
    else if (wire === 1) {
      out.push({ number, wire, value: view.getBigUint64(at, true) });
      at += 8;
    } else if (wire === 2) {
      const length = Number(varint());
      if (at + length > bytes.length) throw new Error('truncated field');
      out.push({ number, wire, value: bytes.subarray(at, at + length) });
      at += length;
    } else if (wire === 5) {
      out.push({ number, wire, value: BigInt(view.getUint32(at, true)) });
      at += 4;
    } else throw new Error(`wire type ${wire} is not used by OTLP`);
  }
  return out;
}

const text = (value: Field['value']) => Buffer.from(value as Uint8Array).toString('utf8');
const hex = (value: Field['value']) => Buffer.from(value as Uint8Array).toString('hex');
const all = (list: Field[], number: number) => list.filter((f) => f.number === number);
const one = (list: Field[], number: number) => list.find((f) => f.number === number);

/** AnyValue: string 1, bool 2, int64 3, double 4. */
function anyValue(bytes: Uint8Array): Value {
  const [field] = fields(bytes);
  if (!field) return '';
  switch (field.number) {
    case 1:
      return text(field.value);
    case 2:
      return field.value === 1n;
    case 3:
      return Number(BigInt.asIntN(64, field.value as bigint));
    case 4: {
      const buffer = new DataView(new ArrayBuffer(8));
      buffer.setBigUint64(0, field.value as bigint, true);
      return buffer.getFloat64(0, true);
    }
    default:
      throw new Error(`an attribute value of a kind the service does not make (field ${field.number})`);
  }
}

/** repeated KeyValue (key 1, value 2). */
function attributes(list: Field[], number: number): Record<string, Value> {
  return Object.fromEntries(
    all(list, number).map((f) => {
      const kv = fields(f.value as Uint8Array);
      const value = one(kv, 2);
      return [text(one(kv, 1)!.value), value ? anyValue(value.value as Uint8Array) : ''];
    }),
  );
}

/** Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6, attributes 9, events 11, links 13, status 15. */
function span(bytes: Uint8Array, resource: Record<string, Value>): ReceivedSpan {
  const f = fields(bytes);
  const status = one(f, 15);
  const statusFields = status ? fields(status.value as Uint8Array) : [];
  const parent = one(f, 4);
  return {
    traceId: hex(one(f, 1)!.value),
    spanId: hex(one(f, 2)!.value),
    parentSpanId: parent ? hex(parent.value) : '',
    name: text(one(f, 5)!.value),
    kind: Number(one(f, 6)?.value ?? 0n),
    attributes: attributes(f, 9),
    // Event: name 2. Link: trace_id 1, span_id 2.
    events: all(f, 11).map((e) => text(one(fields(e.value as Uint8Array), 2)!.value)),
    links: all(f, 13).map((l) => {
      const link = fields(l.value as Uint8Array);
      return { traceId: hex(one(link, 1)!.value), spanId: hex(one(link, 2)!.value) };
    }),
    // Status: message 2, code 3.
    status: { code: Number(one(statusFields, 3)?.value ?? 0n), message: one(statusFields, 2) ? text(one(statusFields, 2)!.value) : '' },
    resource,
  };
}

/** ExportTraceServiceRequest: resource_spans 1 { resource 1 { attributes 1 }, scope_spans 2 { spans 2 } }. */
export function decodeTraces(body: Uint8Array): ReceivedSpan[] {
  return all(fields(body), 1).flatMap((rs) => {
    const resourceSpans = fields(rs.value as Uint8Array);
    const resourceField = one(resourceSpans, 1);
    const resource = resourceField ? attributes(fields(resourceField.value as Uint8Array), 1) : {};
    return all(resourceSpans, 2).flatMap((ss) => all(fields(ss.value as Uint8Array), 2).map((s) => span(s.value as Uint8Array, resource)));
  });
}
