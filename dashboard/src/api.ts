/**
 * The task center's HTTP API, as the dashboard calls it: JSON in and out, the bearer token (kept
 * in session storage, never in a URL) on every request, errors as ApiError with the API's code.
 */
import { useQuery, type UseQueryOptions } from '@tanstack/react-query';

const TOKEN_KEY = 'taskline.token';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let memoryToken: string | null = null;

export function getToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? memoryToken;
  } catch {
    return memoryToken;
  }
}

export function setToken(token: string | null): void {
  try {
    if (token === null) sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // Storage blocked (a browser setting): the token lasts until the page is left.
    memoryToken = token;
  }
}

export function authHeaders(): Record<string, string> {
  const token = getToken();
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** Listeners told when a request comes back 401 (the sign-in page takes over). */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(listener: () => void): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export function reportUnauthorized(): void {
  for (const listener of unauthorizedListeners) listener();
}

export async function request<T>(path: string, options: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...authHeaders() };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: options.signal,
  });
  const text = await res.text();
  let data: unknown = null;
  try {
    data = text === '' ? null : JSON.parse(text);
  } catch {
    data = null;
  }
  if (!res.ok) {
    const error = (data as { error?: { code?: string; message?: string } } | null)?.error;
    if (res.status === 401) reportUnauthorized();
    throw new ApiError(res.status, error?.code ?? `HTTP_${res.status}`, error?.message ?? `${res.status} ${res.statusText}`);
  }
  return data as T;
}

export const post = <T>(path: string, body?: unknown) => request<T>(path, { method: 'POST', body });

/** A GET through TanStack Query, keyed by its path (so a live update refetches what is shown). */
export function useApi<T>(path: string | null, options: Omit<UseQueryOptions<T, ApiError>, 'queryKey' | 'queryFn'> = {}) {
  return useQuery<T, ApiError>({
    queryKey: [path],
    queryFn: ({ signal }) => request<T>(path!, { signal }),
    enabled: path !== null,
    ...options,
  });
}

export const enc = encodeURIComponent;

/**
 * A pause, a resume or a keep bound set elsewhere announces no event: the queue views read
 * again this often (task events refresh them at once).
 */
export const QUEUES_REFRESH_MS = 15_000;
