// Buy credits: the packs this server sells through Stripe Checkout. Choosing one opens a
// checkout (POST /api/v2/billing/checkout) and sends the browser to Stripe's payment page;
// Stripe sends it back to #/buy/paid or #/buy/cancelled. The credits arrive when Stripe tells
// the server the payment went through (its webhook), not when the browser comes back.

import { account, api, creditPacks } from "../api.js";
import { h, busy, credits, money, notice, pageHead, toast } from "../ui.js";

async function buy(pack) {
  const back = `${location.origin}${location.pathname}#/buy`;
  const out = await api("/api/v2/billing/checkout", {
    method: "POST",
    auth: "jwt",
    json: { pack_id: pack.id, success_url: `${back}/paid`, cancel_url: `${back}/cancelled` },
  });
  location.assign(out.checkout_url);
}

function packCard(pack) {
  const label = `Buy ${credits(pack.credits)}`;
  const button = h("button.btn.primary", { type: "button" }, label);
  button.addEventListener(
    "click",
    busy(button, () => buy(pack).catch((e) => toast(e.detail || String(e), "error"))),
  );
  return h(
    "section.pack.buy-pack",
    { "aria-label": `${credits(pack.credits)} for ${money(pack.price_cents, pack.currency)}` },
    h("p.pack-credits", credits(pack.credits)),
    h("p.pack-price", money(pack.price_cents, pack.currency)),
    h("p.muted", `${money(pack.price_cents / pack.credits, pack.currency, 3)} per credit`),
    button,
  );
}

export async function buyPage({ params }) {
  const [outcome] = params;
  const packs = await creditPacks();
  if (!packs) {
    return h(
      "div.page",
      pageHead("Buy credits"),
      notice("info", "This server does not sell credits: ask its operator for more."),
    );
  }
  let banner = null;
  if (outcome === "paid") {
    // Stripe has taken the payment; the webhook grants the credits, usually within seconds.
    account.me(0).catch(() => {});
    banner = notice(
      "ok",
      "Thank you: your payment went through. The credits are added as soon as Stripe confirms " +
        "it, usually within a few seconds; they show in your balance and your history.",
    );
  } else if (outcome === "cancelled") {
    banner = notice("info", "The checkout was cancelled: nothing was charged.");
  }
  return h(
    "div.page",
    pageHead("Buy credits", "Credits never expire. Payment by card through Stripe Checkout."),
    banner,
    h(
      "section.card",
      { "aria-labelledby": "buy-h" },
      h("h2", { id: "buy-h" }, "Credit packs"),
      h("div.packs", packs.map(packCard)),
      h(
        "p.muted.small",
        "You pay on Stripe's page; this dashboard never sees your card. Every purchase and " +
          "refund is listed in your history.",
      ),
    ),
  );
}
