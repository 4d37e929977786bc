// Small DOM helpers: an element builder, formatting, notices, a file drop zone.

/** h("div.card", {attrs}, ...children): an element; a class list may follow the tag. */
export function h(spec, attrs, ...children) {
  const [tag, ...classes] = spec.split(".");
  const el = document.createElement(tag || "div");
  if (classes.length) el.className = classes.join(" ");
  if (attrs && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className += (el.className ? " " : "") + v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "style") setStyle(el, v);
    else if (k === "value" && "value" in el) el.value = v;
    else if (k === "checked" || k === "disabled" || k === "selected") el[k] = Boolean(v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

// Through the CSSOM: the page's Content-Security-Policy refuses inline style attributes.
function setStyle(el, css) {
  for (const decl of String(css).split(";")) {
    const at = decl.indexOf(":");
    if (at > 0) el.style.setProperty(decl.slice(0, at).trim(), decl.slice(at + 1).trim());
  }
}

const ICONS = {
  home: "M3 10.5 12 3l9 7.5V20a1 1 0 0 1-1 1h-5v-6H9v6H4a1 1 0 0 1-1-1z",
  tools:
    "M12 3v3m0 12v3M3 12h3m12 0h3M5.6 5.6l2.1 2.1m8.6 8.6 2.1 2.1M5.6 18.4l2.1-2.1m8.6-8.6 2.1-2.1",
  jobs: "M4 5h16v14H4zM4 15l4-4 3 3 4-5 5 6",
  batches: "M4 7h16M4 12h16M4 17h16M7 4v16",
  history: "M3 12a9 9 0 1 0 3-6.7M3 4v5h5M12 7v5l3 2",
  webhooks: "M10 14a4 4 0 0 1-6-3.5 4 4 0 0 1 6-3.4M14 10a4 4 0 0 1 6 3.5 4 4 0 0 1-6 3.4M8 12h8",
  key: "M14 10a4 4 0 1 0-3.9 4L9 15v2H7v2H4v-3l6-6M16 8h.01",
  upload: "M12 16V4m0 0-4 4m4-4 4 4M4 16v3a1 1 0 0 0 1 1h14a1 1 0 0 0 1-1v-3",
  person: "M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4 21a8 8 0 0 1 16 0",
  shirt: "M8 3 3 6l2 5 3-1v11h8V10l3 1 2-5-5-3a4 4 0 0 1-8 0z",
  card: "M3 6h18v12H3zM3 10h18M7 15h3",
};

/** A small line icon (decorative: hidden from assistive technology). */
export function icon(name) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  for (const [k, v] of Object.entries({
    viewBox: "0 0 24 24",
    width: "18",
    height: "18",
    fill: "none",
    stroke: "currentColor",
    "stroke-width": "1.8",
    "stroke-linecap": "round",
    "stroke-linejoin": "round",
    "aria-hidden": "true",
    focusable: "false",
    class: "icon",
  })) {
    svg.setAttribute(k, v);
  }
  const path = document.createElementNS(ns, "path");
  path.setAttribute("d", ICONS[name] || "");
  svg.append(path);
  return svg;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let uid = 0;
export function id(prefix = "f") {
  uid += 1;
  return `${prefix}-${uid}`;
}

// ---- formatting -----------------------------------------------------------------------------

export function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

// How many decimals Stripe's amounts have (https://docs.stripe.com/currencies): none for its
// zero-decimal currencies (a JPY price_cents of 1200 is ¥1,200), three for its three-decimal
// ones, two for every other currency (ISK, HUF and TWD included: Stripe keeps them in
// hundredths even where the currency itself is written without decimals).
const ZERO_DECIMAL = new Set(
  "BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF".split(" "),
);
const THREE_DECIMAL = new Set("BHD JOD KWD OMR TND".split(" "));

/** How many of a price's smallest units (``price_cents``) make one unit of ``currency``. */
export function minorUnits(currency) {
  const code = currency.toUpperCase();
  if (ZERO_DECIMAL.has(code)) return 1;
  return THREE_DECIMAL.has(code) ? 1000 : 100;
}

/** A price in the currency's smallest unit (Stripe's ``unit_amount``: cents, or yen for JPY),
 * as the reader's locale writes it, with the currency's own decimals (none for JPY, KRW, ...);
 * up to ``digits`` decimals when given (a price per credit). */
export function money(amount, currency, digits) {
  const style = { style: "currency", currency: currency.toUpperCase() };
  if (digits !== undefined) style.maximumFractionDigits = digits;
  return new Intl.NumberFormat(undefined, style).format(amount / minorUnits(currency));
}

export function credits(n) {
  return plural(n, "credit");
}

/** A change to the balance with its sign: "+100", "−2", "0". */
export function signed(n) {
  if (n > 0) return `+${n}`;
  if (n < 0) return `\u2212${-n}`;
  return "0";
}

export function when(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const s = (Date.now() - d.getTime()) / 1000;
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return d.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
}

export function time(iso) {
  const el = h("time", { datetime: iso || "", title: iso ? new Date(iso).toLocaleString() : "" });
  el.textContent = when(iso);
  return el;
}

// Words a field or value name abbreviates, as a person writes them.
const WORDS = {
  bg: "background",
  png: "PNG",
  jpg: "JPEG",
  jpeg: "JPEG",
  webp: "WebP",
  url: "URL",
  id: "ID",
  ocr: "OCR",
};

export function title(s) {
  return s
    .replace(/[_-]+/g, " ")
    .replace(/[A-Za-z]+/g, (w) => WORDS[w.toLowerCase()] || w)
    .replace(/^\w/, (c) => c.toUpperCase());
}

export function shortId(s) {
  return s && s.length > 12 ? `${s.slice(0, 8)}…` : s;
}

export function badge(status) {
  const tone =
    {
      completed: "ok",
      delivered: "ok",
      success: "ok",
      failed: "bad",
      cancelled: "bad",
      processing: "busy",
      queued: "wait",
      pending: "wait",
    }[status] || "wait";
  return h(`span.badge.${tone}`, status);
}

/** A page's heading, its one-line description and actions on the right. */
export function pageHead(heading, sub, ...actions) {
  return h(
    "div.page-head",
    h("div", h("h1", heading), sub ? h("p.muted", sub) : null),
    actions.length ? h("div.actions", ...actions) : null,
  );
}

// ---- notices --------------------------------------------------------------------------------

/** A message region; `role=alert` for errors so screen readers announce them. */
export function notice(kind, ...children) {
  return h(`div.notice.${kind}`, { role: kind === "error" ? "alert" : "status" }, ...children);
}

let toastHost = null;
export function toast(message, kind = "info") {
  toastHost ??= document.body.appendChild(
    h("div.toasts", { "aria-live": "polite", "aria-atomic": "false" }),
  );
  const t = h(`div.toast.${kind}`, message);
  toastHost.append(t);
  setTimeout(() => t.classList.add("leaving"), 3500);
  setTimeout(() => t.remove(), 4000);
}

export function spinner(label = "Loading") {
  return h("span.spinner", { role: "status", "aria-label": label });
}

/** A button that shows a spinner and is disabled while `action` runs. */
export function busy(button, action) {
  return async (ev) => {
    ev?.preventDefault?.();
    if (button.disabled) return;
    const label = button.innerHTML;
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
    button.prepend(h("span.spinner.small", { "aria-hidden": "true" }));
    try {
      await action(ev);
    } finally {
      button.disabled = false;
      button.removeAttribute("aria-busy");
      button.innerHTML = label;
    }
  };
}

export async function copyText(text, what = "Copied") {
  try {
    await navigator.clipboard.writeText(text);
    toast(`${what} to the clipboard`, "ok");
  } catch {
    toast("Copy failed: select the text and copy it", "error");
  }
}

// ---- files ----------------------------------------------------------------------------------

export function fileToBase64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(",", 2)[1] || "");
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

const IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp"];

/**
 * A drop zone: drop an image on it or choose a file (the real <input type=file> is the
 * keyboard's way in). Calls onFiles(File[]) with the accepted images.
 */
export function dropzone({ label, hint, multiple = false, onFiles, inputId = id("file") }) {
  const input = h("input.visually-hidden", {
    type: "file",
    id: inputId,
    accept: IMAGE_TYPES.join(","),
    multiple,
    onchange: () => take([...input.files]),
  });
  const iconSlot = h("span.dz-icon", icon("upload"));
  const labelEl = h("span.dz-label", label);
  const hintEl = h("span.dz-hint", hint || "PNG, JPEG or WebP — drop here or click to choose");
  const zone = h("label.dropzone", { for: inputId }, iconSlot, labelEl, hintEl);
  const error = h("p.field-error", { "aria-live": "polite" });
  let preview = null;
  // Once chosen, the zone shows what was chosen (a thumbnail of a single image) and how to
  // replace it, instead of still asking for a drop.
  function chosen(files) {
    if (preview) URL.revokeObjectURL(preview);
    preview = null;
    if (files.length === 1) {
      preview = URL.createObjectURL(files[0]);
      clear(iconSlot, h("img.dz-thumb", { src: preview, alt: `Chosen: ${files[0].name}` }));
      labelEl.textContent = files[0].name;
    } else {
      clear(iconSlot, icon("upload"));
      labelEl.textContent = `${files.length} images chosen`;
    }
    hintEl.textContent = "Drop or click to choose another";
    zone.classList.add("has-file");
  }
  function take(files) {
    const ok = files.filter((f) => IMAGE_TYPES.includes(f.type));
    error.textContent =
      ok.length < files.length ? "Only PNG, JPEG and WebP images can be processed." : "";
    if (!ok.length) return;
    const taken = multiple ? ok : ok.slice(0, 1);
    chosen(taken);
    onFiles(taken);
  }
  zone.addEventListener("dragover", (e) => {
    e.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("over");
    take([...(e.dataTransfer?.files || [])]);
  });
  return h("div.dropzone-wrap", input, zone, error);
}

/** A labelled form field around `control` (which gets the id). */
export function field(labelText, control, help) {
  const fid = control.id || id("f");
  control.id = fid;
  // Long help is clamped on screen (all of it in the tooltip); screen readers read all of it.
  const helpEl = help ? h("p.help", { id: `${fid}-help`, title: help }, help) : null;
  if (helpEl) control.setAttribute("aria-describedby", helpEl.id);
  if (control.type === "checkbox") {
    return h("div.field.check", control, h("label", { for: fid }, labelText), helpEl);
  }
  return h("div.field", h("label", { for: fid }, labelText), control, helpEl);
}
