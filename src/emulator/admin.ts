// /_emulator/* paths: the programmatic controls over HTTP, for a CLI-run emulator.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmulatorContext } from './context.js';
import { isRecord, readJsonBody, sendJson } from './http.js';
import { pickRuntime } from './options.js';
import type { Fault } from './types.js';

const bad = (res: ServerResponse, message: string) =>
  sendJson(res, 400, { error: { code: 'INVALID_REQUEST', message } });

export async function handleAdmin(ctx: EmulatorContext, req: IncomingMessage, res: ServerResponse, url: URL) {
  const admin = ctx.admin;
  const what = `${req.method} ${url.pathname.replace(/\/$/, '')}`;
  if (what === 'GET /_emulator/requests') return sendJson(res, 200, { requests: ctx.requests });
  if (what === 'GET /_emulator/options') return sendJson(res, 200, { options: ctx.opts });
  if (what === 'DELETE /_emulator/faults') {
    admin.clearFaults();
    return sendJson(res, 200, { ok: true });
  }
  if (what === 'GET /_emulator/conversations') {
    const id = url.searchParams.get('id') ?? '';
    const conv = ctx.store.snapshot(id);
    return conv
      ? sendJson(res, 200, { conversation: conv })
      : sendJson(res, 404, { error: { code: 'NOT_FOUND', message: id } });
  }
  if (req.method !== 'POST') return sendJson(res, 404, { error: { code: 'NOT_FOUND', message: 'No such admin path' } });
  const body = await readJsonBody(req);
  if (!body.ok) return bad(res, body.reason);
  const value = body.value ?? {};
  try {
    switch (url.pathname.replace(/\/$/, '')) {
      case '/_emulator/faults': {
        const faults = Array.isArray(value) ? value : [value];
        for (const f of faults) {
          if (!isRecord(f)) return bad(res, 'a fault must be a JSON object');
          admin.injectFault(f as Fault);
        }
        return sendJson(res, 200, { ok: true, queued: faults.length });
      }
      case '/_emulator/reset':
        admin.reset();
        return sendJson(res, 200, { ok: true });
      case '/_emulator/options':
        if (!isRecord(value)) return bad(res, 'options must be a JSON object');
        admin.setOptions(pickRuntime(value));
        return sendJson(res, 200, { options: ctx.opts });
      case '/_emulator/expire': {
        if (!isRecord(value) || typeof value.id !== 'string') return bad(res, 'expire needs {"id": "..."}');
        return sendJson(res, 200, { expired: admin.expire(value.id) });
      }
      default:
        return sendJson(res, 404, { error: { code: 'NOT_FOUND', message: 'No such admin path' } });
    }
  } catch (err) {
    return bad(res, err instanceof Error ? err.message : String(err));
  }
}
