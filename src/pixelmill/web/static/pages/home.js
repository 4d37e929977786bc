// Overview (credits, plan, usage), the API key, the processing history and webhooks.

import { account, api, createTestKey, creditPacks, pricing, regenerateKey, session } from "../api.js";
import {
  h,
  badge,
  busy,
  clear,
  copyText,
  credits,
  field,
  money,
  notice,
  pageHead,
  plural,
  signed,
  time,
  title,
  toast,
} from "../ui.js";
import { fresh, keyNeeded } from "./auth.js";

function stat(label, value, foot, extra = {}) {
  return h(
    "section.card.stat",
    { "aria-label": label, ...extra },
    h("p.stat-label", label),
    h("p.stat-value", value),
    foot ? h("p.stat-foot", foot) : null,
  );
}

function freshKeyCard() {
  const shown = fresh.take();
  if (!shown) return null;
  const key = shown.key;
  return h(
    "section.card.fresh-key",
    { "aria-labelledby": "fresh-key-h", dataset: { reason: shown.reason } },
    h("h2", { id: "fresh-key-h" }, shown.reason === "signup" ? "Your API key" : "Your new API key"),
    h(
      "p",
      "Copy it now: the server shows a key only once. This browser keeps it so the dashboard can " +
        "call the API for you.",
    ),
    h(
      "div.key-box",
      h("code", { id: "api-key-value", "data-testid": "api-key" }, key),
      h(
        "button.btn.small",
        { type: "button", onclick: () => copyText(key, "API key copied") },
        "Copy",
      ),
    ),
  );
}

// ---- overview -------------------------------------------------------------------------------

function usageChart(items) {
  const days = [];
  const today = new Date();
  for (let i = 13; i >= 0; i -= 1) {
    const d = new Date(today);
    d.setDate(today.getDate() - i);
    days.push({ key: d.toISOString().slice(0, 10), date: d, used: 0 });
  }
  const byKey = Object.fromEntries(days.map((d) => [d.key, d]));
  for (const it of items) {
    const k = new Date(it.created_at).toISOString().slice(0, 10);
    if (byKey[k]) byKey[k].used += it.credits_used;
  }
  const max = Math.max(1, ...days.map((d) => d.used));
  const total = days.reduce((a, d) => a + d.used, 0);
  return h(
    "figure.chart",
    h(
      "div.bars",
      { role: "img", "aria-label": `Credits used per day, last 14 days: ${total} in all` },
      days.map((d) =>
        h(
          "div.bar",
          {
            style: `--v:${d.used / max}`,
            title: `${d.date.toLocaleDateString()}: ${credits(d.used)}`,
          },
          h("span.visually-hidden", `${d.key}: ${d.used}`),
        ),
      ),
    ),
    h("figcaption.muted", `Credits used per day, last 14 days — ${credits(total)}`),
  );
}

/** Where credit packs come from: Stripe Checkout when this server sells them, else the
 * operator. */
function packsNote() {
  const note = h("p.muted.small", "Packs are granted by your operator (pixelmill admin grant-credits EMAIL N --purchase).");
  creditPacks()
    .then((packs) => {
      if (packs) clear(note, h("a", { href: "#/buy" }, "Buy credits →"));
    })
    .catch(() => {});
  return note;
}

export async function overviewPage() {
  const [me, prices] = await Promise.all([account.me(30000), pricing()]);
  const keyCard = freshKeyCard();
  // A new account has spent nothing yet: no need to spend two requests of its plan to say so.
  const isNew = keyCard !== null && keyCard.dataset.reason === "signup";
  const plan = prices.plans.find((p) => p.id === me.subscription_tier) || prices.plans[0];
  const daily = plan.requests_per_day
    ? `${plan.requests_per_day.toLocaleString()}/day`
    : "no daily cap";
  const hasKey = Boolean(session.apiKey());
  const usage = h("section.card.usage", { "aria-labelledby": "usage-h" });
  clear(
    usage,
    h("h2", { id: "usage-h" }, "Usage"),
    hasKey ? h("p.muted", "Loading your history…") : keyNeeded(() => location.reload()),
  );
  if (isNew) {
    clear(
      usage,
      h("h2", { id: "usage-h" }, "Usage"),
      usageChart([]),
      h("p.empty", "Nothing processed yet. ", h("a", { href: "#/tools" }, "Try a tool.")),
    );
  } else if (hasKey) {
    // The history lists every change to the balance: calls, jobs, batches, purchases, grants.
    api("/api/v1/history?limit=100")
      .then((hist) => {
        const spent = hist.items.map((it) => ({
          what: it.kind === "sync" || it.kind === it.operation ? title(it.operation)
            : `${title(it.operation)} ${it.kind}`,
          status: it.status,
          credits: it.credits,
          credits_used: it.credits_used,
          created_at: it.created_at,
          href: historyLink(it),
        }));
        const recent = spent.slice(0, 6);
        clear(
          usage,
          h(
            "div.card-head",
            h("h2", { id: "usage-h" }, "Usage"),
            h("a", { href: "#/history" }, "Full history →"),
          ),
          usageChart(spent),
          recent.length
            ? h(
                "ul.activity",
                recent.map((it) =>
                  h(
                    "li",
                    h("a.op", { href: it.href }, it.what),
                    badge(it.status),
                    it.credits > 0
                      ? h("span.credit-in", `${signed(it.credits)} credits`)
                      : h("span.muted", credits(it.credits_used)),
                    time(it.created_at),
                  ),
                ),
              )
            : h("p.empty", "Nothing processed yet. ", h("a", { href: "#/tools" }, "Try a tool.")),
        );
      })
      .catch((e) => clear(usage, h("h2", "Usage"), notice("error", e.detail)));
  }
  const featured = ["remove-background", "upscale", "enhance", "replace-background"];
  return h(
    "div.page",
    pageHead("Overview", `Signed in as ${me.email}`),
    keyCard,
    h(
      "div.grid.stats",
      stat(
        "Credits",
        h("span", { "data-testid": "credits" }, String(me.credits)),
        "Credits never expire",
        { class: "accent" },
      ),
      stat(
        "Plan",
        plan.name,
        `${plan.requests_per_minute} requests/min · ${daily} · ${plan.max_file_size_mb} MB files`,
      ),
      stat(
        "API key",
        hasKey ? "Connected" : "Not in this browser",
        h("a", { href: "#/key" }, hasKey ? "Manage key" : "Connect a key"),
      ),
    ),
    usage,
    h(
      "section.card",
      { "aria-labelledby": "try-h" },
      h(
        "div.card-head",
        h("h2", { id: "try-h" }, "Try a tool"),
        h("a", { href: "#/tools" }, "All tools →"),
      ),
      h(
        "div.quick",
        featured.map((slug) =>
          h("a.quick-tool", { href: `#/tools/${slug}` }, h("span", title(slug)), h("span", "→")),
        ),
      ),
    ),
    h(
      "section.card",
      { "aria-labelledby": "packs-h" },
      h("h2", { id: "packs-h" }, "Credit packs"),
      h(
        "div.packs",
        prices.credit_packs.map((p) =>
          h(
            "div.pack",
            h("p.pack-credits", credits(p.credits)),
            h(
              "p.muted",
              `${money(p.price_cents, p.currency)} · ${money(p.price_cents / p.credits, p.currency, 3)} each`,
            ),
          ),
        ),
      ),
      packsNote(),
    ),
  );
}

// ---- API key --------------------------------------------------------------------------------

export async function keyPage() {
  const key = session.apiKey();
  const confirmBox = h("div.confirm", { hidden: true, role: "group", "aria-label": "Confirm" });
  const regen = h("button.btn.danger", { type: "button" }, "Regenerate key");
  const yes = h("button.btn.danger", { type: "button" }, "Yes, issue a new key");
  const no = h("button.btn", { type: "button" }, "Cancel");
  clear(
    confirmBox,
    h("p", "Your current key stops working at once, in every script and server that uses it."),
    h("div.row", yes, no),
  );
  regen.addEventListener("click", () => {
    confirmBox.hidden = false;
    yes.focus();
  });
  no.addEventListener("click", () => {
    confirmBox.hidden = true;
    regen.focus();
  });
  yes.addEventListener(
    "click",
    busy(yes, async () => {
      try {
        const out = await regenerateKey();
        fresh.set(out.api_key, "regenerated");
        toast("New API key issued; the old one is revoked", "ok");
        window.dispatchEvent(new HashChangeEvent("hashchange"));
      } catch (e) {
        confirmBox.append(notice("error", e.detail));
      }
    }),
  );
  const masked = key ? `${key.slice(0, 12)}${"•".repeat(16)}${key.slice(-4)}` : null;
  const base = location.origin;
  const testOut = h("div", { "aria-live": "polite" });
  const makeTest = h("button.btn", { type: "button" }, "Create test key");
  makeTest.addEventListener(
    "click",
    busy(makeTest, async () => {
      try {
        const out = await createTestKey();
        clear(
          testOut,
          h("p", "Copy it now: it is shown only once. Any earlier test key has stopped working."),
          h(
            "div.key-box",
            h("code", { "data-testid": "test-key" }, out.token),
            h(
              "button.btn.small",
              { type: "button", onclick: () => copyText(out.token, "Test key copied") },
              "Copy",
            ),
          ),
        );
      } catch (e) {
        clear(testOut, notice("error", e.detail));
      }
    }),
  );
  return h(
    "div.page",
    pageHead("API key", "One key per account: send it as a bearer token."),
    freshKeyCard(),
    key
      ? h(
          "section.card",
          { "aria-labelledby": "cur-key-h" },
          h("h2", { id: "cur-key-h" }, "Current key"),
          h("div.key-box.masked", h("code", { "aria-label": "API key, masked" }, masked)),
          h("p.muted", "Kept in this browser only. Signing out forgets it here."),
          h("h3", "Try it"),
          h(
            "pre.code",
            h(
              "code",
              `curl -s ${base}/api/v2/account \\\n  -H "Authorization: Bearer $PIXELMILL_API_KEY"`,
            ),
          ),
        )
      : keyNeeded(() => window.dispatchEvent(new HashChangeEvent("hashchange"))),
    h(
      "section.card",
      { "aria-labelledby": "regen-h" },
      h("h2", { id: "regen-h" }, "Regenerate"),
      h(
        "p.muted",
        "Issue a new key when the old one may have leaked. The new key is shown once, here.",
      ),
      h("div.row", regen),
      confirmBox,
    ),
    h(
      "section.card",
      { "aria-labelledby": "test-key-h" },
      h("h2", { id: "test-key-h" }, "Test key"),
      h(
        "p.muted",
        "Build against the API without spending: calls with a test key (pk_test_…) run the " +
          'real engines but cost nothing, every image they return carries a "TEST" ' +
          "watermark, and they are limited to a few requests a minute. Creating a new one " +
          "replaces the old.",
      ),
      h("div.row", makeTest),
      testOut,
    ),
  );
}

// ---- history --------------------------------------------------------------------------------

/** Where an entry of the history is shown in full: its scene job, its batch, or the history. */
function historyLink(it) {
  if (it.kind === "batch") return `#/batches/${it.processing_id}`;
  if (it.kind === "job" && it.operation === "scenes") return `#/jobs/${it.processing_id}`;
  return "#/history";
}

const PAGE = 25;

export async function historyPage({ signal }) {
  if (!session.apiKey()) {
    return h(
      "div.page",
      pageHead("History"),
      keyNeeded(() => location.reload()),
    );
  }
  const body = h("div");
  let offset = 0;
  async function load() {
    const hist = await api(`/api/v1/history?limit=${PAGE}&offset=${offset}`);
    if (signal.aborted) return;
    const pager = h(
      "div.pager",
      h(
        "button.btn.small",
        {
          type: "button",
          disabled: offset === 0,
          onclick: () => {
            offset = Math.max(0, offset - PAGE);
            load();
          },
        },
        "← Newer",
      ),
      h(
        "span.muted",
        hist.total
          ? `${offset + 1}–${Math.min(offset + PAGE, hist.total)} of ${hist.total}`
          : "No records",
      ),
      h(
        "button.btn.small",
        {
          type: "button",
          disabled: offset + PAGE >= hist.total,
          onclick: () => {
            offset += PAGE;
            load();
          },
        },
        "Older →",
      ),
    );
    clear(
      body,
      hist.items.length
        ? h(
            "div.table-wrap",
            h(
              "table",
              h(
                "thead",
                h(
                  "tr",
                  ["Result", "What", "Status", "Credits", "Time", "Input", "When"].map((c) =>
                    h("th", { scope: "col" }, c),
                  ),
                ),
              ),
              h(
                "tbody",
                hist.items.map((it) =>
                  h(
                    "tr",
                    { dataset: { kind: it.kind } },
                    h(
                      "td",
                      it.result_url
                        ? h(
                            "a.thumb-link",
                            { href: it.result_url, target: "_blank", rel: "noopener" },
                            h("img.thumb", {
                              src: it.result_url,
                              alt: `${title(it.operation)} result`,
                              loading: "lazy",
                            }),
                          )
                        : h("span.muted", "—"),
                    ),
                    h(
                      "td",
                      historyLink(it) === "#/history"
                        ? title(it.operation)
                        : h("a", { href: historyLink(it) }, title(it.operation)),
                      h("span.muted.small.block", it.description || it.surface),
                    ),
                    h("td", badge(it.status), it.error ? h("p.small.muted", it.error) : null),
                    h(
                      "td",
                      h(it.credits > 0 ? "span.credit-in" : "span", signed(it.credits)),
                      it.credits_refunded
                        ? h("span.muted.small.block", `${it.credits_refunded} returned`)
                        : null,
                    ),
                    h("td", it.processing_time ? `${it.processing_time.toFixed(2)} s` : "—"),
                    h("td", it.original_size[0] ? it.original_size.join(" × ") : "—"),
                    h("td", time(it.created_at)),
                  ),
                ),
              ),
            ),
          )
        : h("p.empty", "Nothing processed yet. ", h("a", { href: "#/tools" }, "Try a tool.")),
      pager,
    );
  }
  await load();
  return h(
    "div.page",
    pageHead(
      "History",
      "Every change to your balance, newest first: calls, jobs, batches, purchases and grants.",
    ),
    h("section.card", body),
  );
}

// ---- webhooks -------------------------------------------------------------------------------

export async function webhooksPage() {
  if (!session.apiKey()) {
    return h(
      "div.page",
      pageHead("Webhooks"),
      keyNeeded(() => location.reload()),
    );
  }
  const list = h("div");
  const created = h("div");
  async function load() {
    const hooks = await api("/api/v2/webhooks");
    clear(
      list,
      hooks.length
        ? h(
            "ul.hooks",
            hooks.map((w) => {
              const del = h(
                "button.btn.small.danger-ghost",
                { type: "button", "aria-label": `Delete webhook ${w.url}` },
                "Delete",
              );
              del.addEventListener(
                "click",
                busy(del, async () => {
                  try {
                    await api(`/api/v2/webhooks/${w.id}`, { method: "DELETE" });
                    toast("Webhook deleted", "ok");
                    await load();
                  } catch (e) {
                    toast(e.detail, "error");
                  }
                }),
              );
              return h(
                "li",
                h("div", h("code.url", w.url), h("p.muted.small", "Added ", time(w.created_at))),
                del,
              );
            }),
          )
        : h("p.empty", "No webhooks yet."),
    );
  }
  const url = h("input", {
    type: "url",
    required: true,
    placeholder: "https://example.com/hooks/pixelmill",
  });
  const secret = h("input", { type: "text", minlength: 8, autocomplete: "off" });
  const add = h("button.btn.primary", { type: "submit" }, "Add webhook");
  const msg = h("div.form-msg");
  const form = h(
    "form.stack",
    field("Endpoint URL", url),
    field("Signing secret (optional)", secret, "Leave empty and the server generates one."),
    msg,
    h("div.row", add),
  );
  form.addEventListener(
    "submit",
    busy(add, async () => {
      msg.replaceChildren();
      try {
        const json = { url: url.value.trim() };
        if (secret.value.trim()) json.secret = secret.value.trim();
        const w = await api("/api/v2/webhooks", { method: "POST", json });
        form.reset();
        clear(
          created,
          notice(
            "ok",
            h("p", "Webhook added. Its signing secret is shown only now:"),
            h(
              "div.key-box",
              h("code", w.secret),
              h(
                "button.btn.small",
                { type: "button", onclick: () => copyText(w.secret, "Secret copied") },
                "Copy",
              ),
            ),
          ),
        );
        await load();
      } catch (e) {
        msg.append(notice("error", e.detail));
      }
    }),
  );
  await load();
  const log = await deliveryLog();
  return h(
    "div.page",
    pageHead(
      "Webhooks",
      "batch.completed, job.completed and job.failed are POSTed to these URLs, signed " +
        "(Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature).",
    ),
    h(
      "div.grid.two",
      h(
        "section.card",
        { "aria-labelledby": "hooks-h" },
        h("h2", { id: "hooks-h" }, "Endpoints"),
        list,
      ),
      h(
        "section.card",
        { "aria-labelledby": "add-hook-h" },
        h("h2", { id: "add-hook-h" }, "Add an endpoint"),
        form,
        created,
      ),
    ),
    log,
  );
}

// ---- the delivery log -----------------------------------------------------------------------

const LOG_PAGE = 20;

function attemptLine(a) {
  const answer =
    a.status_code !== null ? `HTTP ${a.status_code}` : `no answer${a.error ? `: ${a.error}` : ""}`;
  return h(
    "li",
    h("span.attempt-no", `#${a.number}`),
    h(`span.code.${a.status_code !== null && a.status_code < 300 ? "ok" : "bad"}`, answer),
    h("span.muted", `${a.duration_ms} ms`),
    time(a.created_at),
    a.response_body ? h("code.reply", a.response_body.slice(0, 200)) : null,
  );
}

function deliveryItem(d) {
  const last = d.attempt_log[d.attempt_log.length - 1];
  return h(
    "li",
    h(
      "details.delivery",
      h(
        "summary",
        h("span.event", d.event),
        badge(d.status),
        h("code.url", d.url),
        h(
          "span.muted",
          last
            ? `${plural(d.attempts, "attempt")}, last ${last.status_code ?? "no answer"}`
            : "not sent yet",
        ),
        time(d.created_at),
      ),
      h(
        "div.delivery-body",
        d.next_attempt_at ? h("p.muted.small", "Next attempt ", time(d.next_attempt_at)) : null,
        h("h3", "Attempts"),
        d.attempt_log.length
          ? h("ol.attempts", d.attempt_log.map(attemptLine))
          : h("p.muted", "None yet."),
        h("h3", "Payload (the signed body)"),
        h("pre.code", h("code", JSON.stringify(d.payload, null, 2))),
        h("p.muted.small", "webhook-id: ", h("code", d.id)),
      ),
    ),
  );
}

/** The account's webhook messages, newest first, each with its attempts and payload. */
async function deliveryLog() {
  let offset = 0;
  const body = h("div", { "aria-live": "polite" });
  const status = h(
    "select",
    ["", "pending", "delivered", "failed"].map((v) =>
      h("option", { value: v }, v ? title(v) : "All"),
    ),
  );
  async function load() {
    const q = new URLSearchParams({ limit: String(LOG_PAGE), offset: String(offset) });
    if (status.value) q.set("status", status.value);
    let page;
    try {
      page = await api(`/api/v2/webhooks/deliveries?${q}`);
    } catch (e) {
      clear(body, notice("error", e.detail));
      return;
    }
    const items = page.deliveries;
    clear(
      body,
      items.length
        ? h("ul.deliveries", items.map(deliveryItem))
        : h(
            "p.empty",
            status.value
              ? `No ${status.value} deliveries.`
              : "No deliveries yet: they appear when a job or batch finishes.",
          ),
      offset || items.length === LOG_PAGE
        ? h(
            "div.pager",
            h(
              "button.btn.small",
              {
                type: "button",
                disabled: offset === 0,
                onclick: () => {
                  offset = Math.max(0, offset - LOG_PAGE);
                  load();
                },
              },
              "← Newer",
            ),
            h(
              "button.btn.small",
              {
                type: "button",
                disabled: items.length < LOG_PAGE,
                onclick: () => {
                  offset += LOG_PAGE;
                  load();
                },
              },
              "Older →",
            ),
          )
        : null,
    );
  }
  status.addEventListener("change", () => {
    offset = 0;
    load();
  });
  const refresh = h("button.btn.small", { type: "button" }, "Refresh");
  refresh.addEventListener("click", busy(refresh, load));
  await load();
  return h(
    "section.card",
    { "aria-labelledby": "log-h" },
    h(
      "div.card-head",
      h("h2", { id: "log-h" }, "Delivery log"),
      h("div.row.center", field("Status", status), refresh),
    ),
    body,
  );
}
