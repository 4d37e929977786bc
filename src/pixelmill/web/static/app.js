// The dashboard: the shell (sidebar, top bar), the hash router, and the sign-in gate.

import { account, creditPacks, onChange, rate, session } from "./api.js";
import { h, clear, credits, icon, spinner, toast } from "./ui.js";
import * as auth from "./pages/auth.js";
import * as billing from "./pages/billing.js";
import * as home from "./pages/home.js";
import * as studio from "./pages/studio.js";
import * as tools from "./pages/tools.js";
import * as work from "./pages/work.js";

const NAV = [
  { href: "#/", label: "Overview", icon: "home", match: /^\/$/ },
  { href: "#/tools", label: "Tools", icon: "tools", match: /^\/tools/ },
  { href: "#/jobs", label: "Scene jobs", icon: "jobs", match: /^\/jobs/ },
  { href: "#/batches", label: "Batches", icon: "batches", match: /^\/batches/ },
  { href: "#/avatars", label: "Avatar studio", icon: "person", match: /^\/avatars/ },
  { href: "#/tryon", label: "Try-on", icon: "shirt", match: /^\/tryon/ },
  { href: "#/history", label: "History", icon: "history", match: /^\/history/ },
  // Shown only when the server sells credits (GET /api/v2/billing/packs answers).
  { href: "#/buy", label: "Buy credits", icon: "card", match: /^\/buy/, billing: true },
  { href: "#/webhooks", label: "Webhooks", icon: "webhooks", match: /^\/webhooks/ },
  { href: "#/key", label: "API key", icon: "key", match: /^\/key/ },
];

const ROUTES = [
  [/^\/signin$/, auth.signInPage, { open: true }],
  [/^\/signup$/, auth.signUpPage, { open: true }],
  [/^\/$/, home.overviewPage],
  [/^\/tools$/, tools.toolsPage],
  [/^\/tools\/([\w-]+)$/, tools.toolPage],
  [/^\/jobs$/, work.jobsPage],
  [/^\/jobs\/([\w-]+)$/, work.jobPage],
  [/^\/batches$/, work.batchesPage],
  [/^\/batches\/([\w-]+)$/, work.batchPage],
  [/^\/avatars$/, studio.avatarsPage],
  [/^\/tryon$/, studio.tryonPage],
  [/^\/history$/, home.historyPage],
  [/^\/buy(?:\/(paid|cancelled))?$/, billing.buyPage],
  [/^\/webhooks$/, home.webhooksPage],
  [/^\/key$/, home.keyPage],
];

const root = document.getElementById("root");
let current = null; // the route's AbortController: stops its polling when the page changes

function path() {
  const p = location.hash.replace(/^#/, "") || "/";
  return p.startsWith("/") ? p : `/${p}`;
}

function creditsPill() {
  const n = account.data?.credits;
  return h(
    "a.credits-pill",
    { href: "#/", "aria-label": n === undefined ? "Credits" : `${credits(n)} left` },
    h("span.dot", { "aria-hidden": "true" }),
    n === undefined ? "…" : credits(n),
  );
}

function rateLine() {
  if (rate.limit === null) return h("p.rate", { id: "rate-line" }, "");
  return h(
    "p.rate",
    { id: "rate-line", title: "Your plan's work allowance (reading pages has its own)" },
    `${rate.remaining} of ${rate.limit} requests left`,
  );
}

function shell(pathNow) {
  const s = session.load();
  const nav = h(
    "nav.nav",
    { "aria-label": "Main" },
    h(
      "ul",
      NAV.map((n) =>
        h(
          "li",
          { hidden: n.billing ? true : null, dataset: n.billing ? { billing: "" } : {} },
          h(
            "a",
            { href: n.href, "aria-current": n.match.test(pathNow) ? "page" : null },
            icon(n.icon),
            n.label,
          ),
        ),
      ),
    ),
  );
  const sidebar = h(
    "aside.sidebar",
    { id: "sidebar" },
    h("a.brand", { href: "#/" }, h("span.logo", { "aria-hidden": "true" }), "pixelmill"),
    nav,
    h(
      "div.sidebar-foot",
      h("p.who", { title: s?.user?.email }, s?.user?.email || ""),
      h("p.plan", account.data?.subscription_tier ? `${account.data.subscription_tier} plan` : ""),
      rateLine(),
      h(
        "button.btn.ghost.small",
        {
          type: "button",
          onclick: () => {
            session.clear();
            account.reset();
            location.hash = "#/signin";
          },
        },
        "Sign out",
      ),
    ),
  );
  const menu = h(
    "button.menu-btn",
    {
      type: "button",
      "aria-controls": "sidebar",
      "aria-expanded": "false",
      "aria-label": "Menu",
      onclick: () => {
        const open = document.body.classList.toggle("nav-open");
        menu.setAttribute("aria-expanded", String(open));
      },
    },
    h("span", { "aria-hidden": "true" }, "☰"),
  );
  const main = h("main.main", { id: "main", tabindex: "-1" });
  const top = h(
    "header.topbar",
    menu,
    h("p.crumbs", NAV.find((n) => n.match.test(pathNow))?.label || ""),
    h("div.top-right", { id: "top-right" }, creditsPill()),
  );
  return { node: h("div.shell", sidebar, h("div.content", top, main)), main };
}

async function render() {
  current?.abort();
  current = new AbortController();
  const signal = current.signal;
  document.body.classList.remove("nav-open");
  const p = path();
  const hit = ROUTES.map(([re, page, opts]) => [p.match(re), page, opts]).find(([m]) => m);
  const s = session.load();
  if (!hit) {
    location.replace("#/");
    return;
  }
  const [match, page, opts] = hit;
  if (!opts?.open && !s) {
    location.replace("#/signin");
    return;
  }
  if (opts?.open && s) {
    location.replace("#/");
    return;
  }
  let target;
  if (opts?.open) {
    clear(root);
    target = root;
  } else {
    const { node, main } = shell(p);
    clear(root, node);
    target = main;
    account.me().catch(() => {});
    creditPacks()
      .then((packs) => {
        if (!packs) return;
        for (const li of node.querySelectorAll("li[data-billing]")) li.hidden = false;
      })
      .catch(() => {});
  }
  // Pages load their data before they show; a spinner holds the place meanwhile.
  if (!opts?.open) {
    clear(target, h("div.page-loading", spinner("Loading the page"), h("span", "Loading…")));
  }
  try {
    const content = await page({ params: match.slice(1), signal });
    if (signal.aborted) return;
    clear(target, content);
  } catch (e) {
    if (signal.aborted) return;
    clear(target, auth.errorPanel(e));
  }
  const heading = target.querySelector("h1");
  document.title = heading ? `${heading.textContent} · pixelmill` : "pixelmill";
  if (opts?.open) {
    target.querySelector("input")?.focus();
  } else if (heading && document.activeElement === document.body) {
    // Move focus to the new page's heading, as a page load would, for keyboard and screen readers.
    heading.setAttribute("tabindex", "-1");
    heading.focus({ preventScroll: true });
  }
}

onChange((what) => {
  if (what === "account") {
    const slot = document.getElementById("top-right");
    if (slot) clear(slot, creditsPill());
    const plan = document.querySelector(".sidebar-foot .plan");
    if (plan && account.data?.subscription_tier) {
      plan.textContent = `${account.data.subscription_tier} plan`;
    }
  } else if (what === "rate") {
    const line = document.getElementById("rate-line");
    if (line) line.replaceWith(rateLine());
  } else if (what === "session" && !session.load() && !/^\/sign/.test(path())) {
    location.hash = "#/signin";
  } else if (what === "key-rejected" && session.load()) {
    // The key was regenerated elsewhere (or revoked): forget it and ask for the current one.
    session.forgetApiKey();
    toast("Your API key was not accepted: it may have been regenerated elsewhere.", "error");
    render();
  }
});

window.addEventListener("hashchange", render);
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && document.body.classList.contains("nav-open")) {
    document.body.classList.remove("nav-open");
  }
});
document.querySelector(".skip-link")?.addEventListener("click", (e) => {
  e.preventDefault();
  document.getElementById("main")?.focus();
});
render();
