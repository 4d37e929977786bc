// The dashboard's only door to the server: the session (access token + API key kept in this
// browser), fetch with the right credential, errors carrying the server's `detail`, and the
// account's work allowance (its "requests left") read from the X-RateLimit-* headers.

const SESSION_KEY = "pixelmill.session";
const KEY_PREFIX = "pixelmill.key.";
/** Sent with every read (GET): the server answers the work allowance's counts beside the read's
 * own (X-RateLimit-Work-*), so "requests left" always shows the work allowance. */
const CLIENT_HEADER = "X-Pixelmill-Client";

export class ApiError extends Error {
  constructor(status, detail, retryAfter) {
    super(detail);
    this.status = status;
    this.detail = detail;
    this.retryAfter = retryAfter;
  }
}

const listeners = new Set();
export const rate = { limit: null, remaining: null, reset: null };

export function onChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function emit(what) {
  for (const fn of listeners) fn(what);
}

// ---- session --------------------------------------------------------------------------------

export const session = {
  load() {
    try {
      const raw = localStorage.getItem(SESSION_KEY);
      const s = raw ? JSON.parse(raw) : null;
      if (s && s.expiresAt && s.expiresAt < Date.now()) return null;
      return s;
    } catch {
      return null;
    }
  },
  save(s) {
    localStorage.setItem(SESSION_KEY, JSON.stringify(s));
    emit("session");
  },
  /** Sign out: forget the access token and this account's API key in this browser. */
  clear() {
    const s = this.load();
    if (s && s.user) localStorage.removeItem(KEY_PREFIX + s.user.id);
    this.expire();
  },
  /** The access token expired or was refused: sign in again (the API key stays; the same
   * account signing in again finds it). */
  expire() {
    localStorage.removeItem(SESSION_KEY);
    emit("session");
  },
  apiKey() {
    const s = this.load();
    return s && s.user ? localStorage.getItem(KEY_PREFIX + s.user.id) : null;
  },
  setApiKey(key) {
    const s = this.load();
    if (!s || !s.user) return;
    localStorage.setItem(KEY_PREFIX + s.user.id, key);
    emit("key");
  },
  forgetApiKey() {
    const s = this.load();
    if (s && s.user) localStorage.removeItem(KEY_PREFIX + s.user.id);
  },
};

// ---- requests -------------------------------------------------------------------------------

function detailOf(body, fallback) {
  if (!body) return fallback;
  const d = body.detail ?? body.error;
  if (typeof d === "string") return d;
  if (Array.isArray(d)) {
    return d
      .map((e) => {
        const loc = (e.loc || []).filter((p) => p !== "body").join(".");
        return loc ? `${loc}: ${e.msg}` : e.msg;
      })
      .join("; ");
  }
  return fallback;
}

function readRate(res) {
  // A read counts in the read allowance; its work counts come as X-RateLimit-Work-*. Work
  // (a POST, a DELETE) reports its own allowance as X-RateLimit-* with scope "work".
  let prefix = "X-RateLimit-Work-";
  if (res.headers.get("X-RateLimit-Work-Limit") === null) {
    if (res.headers.get("X-RateLimit-Scope") !== "work") return;
    prefix = "X-RateLimit-";
  }
  rate.limit = Number(res.headers.get(`${prefix}Limit`));
  rate.remaining = Number(res.headers.get(`${prefix}Remaining`));
  rate.reset = Number(res.headers.get(`${prefix}Reset`));
  emit("rate");
}

/**
 * Call the server. `auth` is "jwt" (the access token), "key" (the API key) or null.
 * `json` sends a JSON body, `form` a URL-encoded one, `multipart` a FormData. Resolves to the
 * parsed JSON body.
 */
export async function api(path, { method = "GET", auth = "key", json, form, multipart } = {}) {
  const headers = { Accept: "application/json" };
  // Reads count in the read allowance; this header asks for the work allowance's counts too.
  if (method === "GET") headers[CLIENT_HEADER] = "dashboard";
  if (auth === "jwt") {
    const s = session.load();
    if (!s) throw new ApiError(401, "Your session has ended: sign in again.");
    headers.Authorization = `Bearer ${s.token}`;
  } else if (auth === "key") {
    const key = session.apiKey();
    if (!key) throw new ApiError(401, "This browser holds no API key for your account.", null);
    headers.Authorization = `Bearer ${key}`;
  }
  let body;
  if (json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(json);
  } else if (form !== undefined) {
    body = new URLSearchParams(form);
  } else if (multipart !== undefined) {
    body = multipart; // FormData: the browser writes the multipart Content-Type
  }
  let res;
  try {
    res = await fetch(path, { method, headers, body });
  } catch {
    throw new ApiError(0, "The server cannot be reached. Check your connection and try again.");
  }
  readRate(res);
  const text = await res.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!res.ok) {
    const retry = Number(res.headers.get("Retry-After")) || null;
    const err = new ApiError(res.status, detailOf(data, `${res.status} ${res.statusText}`), retry);
    if (res.status === 401 && auth === "jwt") session.expire();
    if (res.status === 401 && auth === "key") emit("key-rejected");
    throw err;
  }
  return data;
}

// ---- cached reads ---------------------------------------------------------------------------

let pricingCache = null;
let openapiCache = null;

/** The public price list (open; cached for the page's life). */
export async function pricing() {
  pricingCache ??= api("/api/credits/pricing", { auth: null }).catch((e) => {
    pricingCache = null;
    throw e;
  });
  return pricingCache;
}

let packsCache = null;

/** The credit packs on sale, or null when this server sells none (its billing endpoints
 * answer 404 without Stripe settings): asked once per page load. */
export async function creditPacks() {
  packsCache ??= api("/api/v2/billing/packs", { auth: null }).then(
    (body) => body.packs,
    (e) => {
      if (e.status === 404) return null;
      packsCache = null;
      throw e;
    },
  );
  return packsCache;
}

/** The server's OpenAPI document: the tools and their options come from it. */
export async function openapi() {
  openapiCache ??= api("/.well-known/openapi.json", { auth: null }).catch((e) => {
    openapiCache = null;
    throw e;
  });
  return openapiCache;
}

// ---- account state --------------------------------------------------------------------------

export const account = {
  data: null,
  set(data) {
    this.data = { ...(this.data || {}), ...data };
    emit("account");
  },
  credits(n) {
    if (n === null || n === undefined) return;
    this.set({ credits: n });
  },
  mePromise: null,
  meAt: 0,
  /** Who is signed in, with credits and plan (access token), fetched again when older than
   * `maxAge` ms: one request per page view at most. A cached answer carries what was learnt
   * since (the balance after a spend, from `credits(n)`), never the balance of its fetch. */
  me(maxAge = Infinity) {
    if (!this.mePromise || Date.now() - this.meAt > maxAge) {
      this.meAt = Date.now();
      this.mePromise = api("/api/auth/me", { auth: "jwt" }).then(
        (me) => {
          this.set(me);
          return this.data;
        },
        (e) => {
          this.mePromise = null;
          throw e;
        },
      );
    }
    return this.mePromise.then(() => this.data);
  },
  reset() {
    this.data = null;
    this.mePromise = null;
    this.meAt = 0;
  },
};

/** Sign in: exchange email and password for an access token, then read who that is. */
export async function signIn(email, password) {
  const token = await api("/api/auth/login", {
    method: "POST",
    auth: null,
    form: { username: email, password },
  });
  const expiresAt = Date.now() + (token.expires_in - 30) * 1000;
  session.save({ token: token.access_token, expiresAt, user: null });
  const me = await api("/api/auth/me", { auth: "jwt" });
  session.save({ token: token.access_token, expiresAt, user: { id: me.id, email: me.email } });
  account.reset();
  account.set(me);
  account.mePromise = Promise.resolve(account.data);
  account.meAt = Date.now();
  return me;
}

/** Sign up, keep the first API key in this browser, and sign in. */
export async function signUp(email, password) {
  const created = await api("/api/auth/register", {
    method: "POST",
    auth: null,
    json: { email, password },
  });
  await signIn(email, password);
  session.setApiKey(created.api_key);
  return created;
}

/** Issue a new API key (JWT): every earlier key stops working. */
export async function regenerateKey() {
  const out = await api("/api/auth/regenerate-token", { method: "POST", auth: "jwt" });
  session.setApiKey(out.api_key);
  return out;
}

/** Issue the account's test key (JWT): shown once, never kept in this browser; the earlier
 * test key stops working. */
export async function createTestKey() {
  return api("/api/v2/account/test-key", { method: "POST", auth: "jwt" });
}

/** Check a pasted key against the server and keep it when it is this account's. */
export async function useKey(key) {
  const s = session.load();
  const res = await fetch("/api/v2/account", {
    headers: {
      Authorization: `Bearer ${key}`,
      Accept: "application/json",
      [CLIENT_HEADER]: "dashboard",
    },
  });
  readRate(res);
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, detailOf(data, "That key was not accepted."));
  if (!s || !s.user || data.id !== s.user.id) {
    throw new ApiError(400, "That key belongs to another account.");
  }
  session.setApiKey(key);
  account.set(data);
  return data;
}

/** Wait `ms`, or until `signal` aborts. */
export function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });
}

/**
 * Poll `path` until `done(body)`; calls `onUpdate(body)` each time. Polls every 2 s at first
 * and slows to 8 s. The plan's per-minute budget is shared with everything else the person
 * does, so when one request of the minute is left it waits for the reset (`onWait(seconds)`
 * says so), and a 429 waits its Retry-After. `fetched`: the caller has just read `path` itself
 * (to draw the page), so the first poll waits a round instead of asking again at once.
 */
export async function poll(path, { done, onUpdate, onWait = () => {}, signal, fetched = false }) {
  let delay = 2000;
  if (fetched) await sleep(delay, signal);
  for (;;) {
    if (signal?.aborted) return null;
    try {
      const body = await api(path);
      onUpdate(body);
      if (done(body)) return body;
    } catch (e) {
      if (e.status === 429) {
        const wait = e.retryAfter || 10;
        onWait(wait);
        await sleep(wait * 1000, signal);
        continue;
      }
      throw e;
    }
    let wait = delay;
    if (rate.remaining !== null && rate.remaining <= 1 && rate.reset) {
      // The reset of the fullest bucket; a daily one could be hours away: check again in a minute.
      wait = Math.min(Math.max(wait, rate.reset * 1000 - Date.now() + 250), 61000);
      if (wait > delay) onWait(Math.ceil(wait / 1000));
    }
    await sleep(wait, signal);
    delay = Math.min(8000, delay * 1.5);
  }
}
