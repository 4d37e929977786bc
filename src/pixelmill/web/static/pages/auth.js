// Sign in, sign up, and the panels shown when a page cannot work (no API key, an error).

import { signIn, signUp, useKey, regenerateKey } from "../api.js";
import { h, field, notice, busy } from "../ui.js";

/** The key issued at sign-up or by a regeneration: shown in full on the next page drawn, then
 * never again (the server shows a key once; so does the dashboard). */
export const fresh = {
  key: null,
  reason: null,
  set(key, reason) {
    this.key = key;
    this.reason = reason;
  },
  take() {
    const out = this.key ? { key: this.key, reason: this.reason } : null;
    this.key = null;
    return out;
  },
};

function authCard(kind) {
  const signingUp = kind === "signup";
  const email = h("input", {
    type: "email",
    name: "email",
    required: true,
    autocomplete: "email",
    placeholder: "you@company.com",
  });
  const password = h("input", {
    type: "password",
    name: "password",
    required: true,
    minlength: signingUp ? 6 : null,
    autocomplete: signingUp ? "new-password" : "current-password",
  });
  const msg = h("div.form-msg");
  const submit = h(
    "button.btn.primary.wide",
    { type: "submit" },
    signingUp ? "Create account" : "Sign in",
  );
  const form = h(
    "form.stack",
    { novalidate: false },
    field("Email", email),
    field("Password", password, signingUp ? "At least 6 characters." : null),
    msg,
    submit,
  );
  form.addEventListener(
    "submit",
    busy(submit, async () => {
      msg.replaceChildren();
      try {
        if (signingUp) {
          const created = await signUp(email.value.trim(), password.value);
          fresh.set(created.api_key, "signup");
        } else {
          await signIn(email.value.trim(), password.value);
        }
        location.hash = "#/";
      } catch (e) {
        msg.append(notice("error", e.detail || String(e)));
        (signingUp ? email : password).focus();
      }
    }),
  );
  return h(
    "div.auth",
    h(
      "main.auth-card",
      { id: "main", tabindex: "-1" },
      h("div.brand.center", h("span.logo", { "aria-hidden": "true" }), "pixelmill"),
      h("h1", signingUp ? "Create your account" : "Sign in to your dashboard"),
      h(
        "p.muted",
        signingUp
          ? "10 free credits to try every tool. No card needed."
          : "Credits, tools, jobs and webhooks in one place.",
      ),
      form,
      h(
        "p.switch",
        signingUp ? "Already have an account? " : "New here? ",
        h("a", { href: signingUp ? "#/signin" : "#/signup" }, signingUp ? "Sign in" : "Create one"),
      ),
    ),
    h(
      "aside.auth-side",
      { "aria-label": "What you get" },
      h("h2", "Image work, by API or by hand"),
      h(
        "ul.ticks",
        h("li", "Background removal, upscaling, enhancement and more"),
        h("li", "Product scenes generated as jobs you can watch"),
        h("li", "Batches, webhooks and a full history"),
        h("li", "Pay per image with credits that never expire"),
      ),
    ),
  );
}

export function signInPage() {
  return authCard("signin");
}

export function signUpPage() {
  return authCard("signup");
}

/** Shown where a page needs the API key and this browser holds none for the account. */
export function keyNeeded(afterwards) {
  const input = h("input", {
    type: "password",
    autocomplete: "off",
    placeholder: "pk_live_…",
    spellcheck: "false",
  });
  const msg = h("div.form-msg");
  const use = h("button.btn.primary", { type: "submit" }, "Use this key");
  const issue = h("button.btn", { type: "button" }, "Issue a new key");
  const form = h("form.row.wrap", field("Your API key", input), use);
  form.addEventListener(
    "submit",
    busy(use, async () => {
      msg.replaceChildren();
      try {
        await useKey(input.value.trim());
        afterwards();
      } catch (e) {
        msg.append(notice("error", e.detail));
      }
    }),
  );
  issue.addEventListener(
    "click",
    busy(issue, async () => {
      msg.replaceChildren();
      try {
        const out = await regenerateKey();
        fresh.set(out.api_key, "regenerated");
        location.hash = "#/key";
      } catch (e) {
        msg.append(notice("error", e.detail));
      }
    }),
  );
  return h(
    "section.card.key-needed",
    { "aria-labelledby": "key-needed-h" },
    h("h2", { id: "key-needed-h" }, "Connect your API key"),
    h(
      "p.muted",
      "The tools, jobs, history and webhooks run on your API key, and this browser does not " +
        "hold it. Paste it here, or issue a new one (the old key then stops working everywhere).",
    ),
    form,
    h("div.row", issue),
    msg,
  );
}

export function errorPanel(e) {
  return h(
    "section.card",
    h("h1", "Something went wrong"),
    notice("error", e?.detail || e?.message || String(e)),
    h("p", h("a", { href: "#/" }, "Back to the overview")),
  );
}
