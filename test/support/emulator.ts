// Helpers for the emulator's own tests (src/emulator/*.test.ts): real loopback HTTP through undici.
// Kept under test/ so the build never ships it.
import { request } from 'undici';

export const KEY = 'test-key';
export const auth = { authorization: `Bearer ${KEY}` };

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read response bodies loosely and assert on them
  json: () => any;
}

export async function call(
  base: string,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  headers: Record<string, string> = auth,
): Promise<Answer> {
  const res = await request(`${base}${path}`, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) };
}

export const post = (base: string, path: string, body: unknown, headers?: Record<string, string>) =>
  call(base, 'POST', path, body, headers);
export const get = (base: string, path: string, headers?: Record<string, string>) =>
  call(base, 'GET', path, undefined, headers);
