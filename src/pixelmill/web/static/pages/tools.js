// The processing tools: the list and one page per tool. Tools and their options come from the
// server's OpenAPI document (the v2 processing endpoints and their request schemas), prices
// from the public price list, so the page offers exactly what the server accepts.

import { account, api, openapi, pricing, session } from "../api.js";
import {
  h,
  busy,
  clear,
  copyText,
  credits,
  dropzone,
  field,
  fileToBase64,
  notice,
  title,
  pageHead,
} from "../ui.js";
import { keyNeeded } from "./auth.js";

const TAG = "v2 processing";
// The price list names operations; these endpoints' names differ from their operation's.
const PRICE_KEY = { "remove-background": "background_removal", "remove-text": "text_removal" };
// Shown first; every other option of the tool sits under "More options".
const PRIMARY = {
  "remove-background": ["type", "format", "bg_color", "preset", "crop", "add_shadow"],
  "make-transparent": ["method", "format", "crop"],
  "replace-background": ["prompt", "type", "format"],
  upscale: ["scale", "quality"],
  "style-transfer": ["style", "strength"],
  edit: ["prompt", "strength"],
  "image-to-image": ["prompt", "strength"],
  convert: ["format", "quality"],
};
// Not offered: the dashboard sends the chosen file; output_format is format's older name.
const HIDDEN = new Set(["image_url", "image_base64", "output_format"]);

function resolve(doc, schema) {
  if (schema && schema.$ref) {
    return doc.components.schemas[schema.$ref.split("/").pop()];
  }
  return schema;
}

/** The v2 processing tools, from the OpenAPI document. */
export async function listTools() {
  const [doc, prices] = await Promise.all([openapi(), pricing()]);
  const out = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    const op = item.post;
    if (!op || !(op.tags || []).includes(TAG)) continue;
    const slug = path.split("/").pop();
    const key = PRICE_KEY[slug] || slug.replaceAll("-", "_");
    const schema = resolve(doc, op.requestBody?.content?.["application/json"]?.schema);
    out.push({
      slug,
      path,
      name: op.summary || title(slug),
      description: (op.description || "").split("\n\n")[0],
      price: prices.operations[key] ?? null,
      prices: prices.operations,
      schema,
    });
  }
  return out;
}

/** A short, distinct label per tool for its card's badge: the words' initials ("RB", "IP"),
 * a single word's first two letters ("Up", "Un"); where two would read the same, the next
 * letters of the first word tell them apart ("RpB", "Cn"). */
function iconTexts(slugs) {
  const used = new Set();
  const out = {};
  for (const slug of slugs) {
    const words = slug.split("-").filter((w) => w && w !== "to");
    const first = words[0][0].toUpperCase();
    const tail = words.length > 1 ? words.slice(1).map((w) => w[0].toUpperCase()).join("") : "";
    const options = [...words[0].slice(1)].map((c) => first + c + tail);
    if (words.length > 1) options.unshift(first + tail.slice(0, 1));
    out[slug] = options.find((o) => !used.has(o)) || first + tail;
    used.add(out[slug]);
  }
  return out;
}

function toolIcon(slug, text) {
  let hash = 0;
  for (const c of slug) hash = (hash * 31 + c.charCodeAt(0)) % 360;
  return h("span.tool-icon", { "aria-hidden": "true", style: `--hue:${hash}` }, text);
}

export async function toolsPage() {
  const tools = await listTools();
  const icons = iconTexts(tools.map((t) => t.slug));
  return h(
    "div.page",
    pageHead("Tools", "Drop an image, pick the options, get the result. Each run costs credits."),
    h(
      "ul.tools-grid",
      tools.map((t) =>
        h(
          "li",
          h(
            "a.tool-card",
            { href: `#/tools/${t.slug}` },
            toolIcon(t.slug, icons[t.slug]),
            h("span.tool-name", t.name),
            h("span.tool-desc", firstSentence(t.description)),
            h(
              "span.price",
              t.slug === "upscale" ? "from 1 credit" : t.price !== null ? credits(t.price) : "",
            ),
          ),
        ),
      ),
    ),
  );
}

function firstSentence(text) {
  const m = text.match(/^(.+?[.;])(\s|$)/s);
  return (m ? m[1] : text).replace(/;$/, ".").replace(/\s+/g, " ").replace(/`/g, "");
}

// ---- the options form ---------------------------------------------------------------------

function unwrap(prop) {
  if (prop.anyOf) {
    const inner = prop.anyOf.find((a) => !a.nullable || a.type) || {};
    return { ...prop, ...inner, nullable: true, anyOf: undefined };
  }
  return prop;
}

/** One control per request field; returns [node, read()] where read() gives the value to send
 * (undefined: leave the field out so the server's default, or a preset, applies). */
function control(name, raw, required) {
  const prop = unwrap(raw);
  const label = title(name); // not the schema's title: "Bg Color" reads "Background color"
  const help = prop.description ? prop.description.replace(/`/g, "") : null;
  if (name.endsWith("_base64")) {
    const input = h("input", { type: "file", accept: "image/png,image/jpeg,image/webp" });
    const node = field(`${label.replace(/ Base64$/i, "")} (image)`, input, help);
    return [node, async () => (input.files[0] ? fileToBase64(input.files[0]) : undefined)];
  }
  if (prop.enum) {
    const select = h(
      "select",
      { name, required },
      prop.default === undefined || prop.default === null
        ? h("option", { value: "" }, required ? "Choose…" : "Default")
        : null,
      prop.enum.map((v) =>
        h("option", { value: String(v), selected: v === prop.default }, title(String(v))),
      ),
    );
    const node = field(label, select, help);
    return [
      node,
      async () => {
        if (select.value === "" || select.value === String(prop.default)) return undefined;
        return prop.type === "integer" ? Number(select.value) : select.value;
      },
    ];
  }
  if (prop.type === "boolean") {
    const box = h("input", { type: "checkbox", name, checked: prop.default === true });
    return [
      field(label, box, help),
      async () => (box.checked === Boolean(prop.default) ? undefined : box.checked),
    ];
  }
  if (prop.type === "integer" || prop.type === "number") {
    const input = h("input", {
      type: "number",
      name,
      required,
      min: prop.minimum,
      max: prop.maximum,
      step: prop.type === "integer" ? 1 : "any",
      value: prop.default ?? "",
      inputmode: "decimal",
    });
    return [
      field(label, input, help),
      async () => {
        if (input.value === "" || Number(input.value) === prop.default) return undefined;
        return Number(input.value);
      },
    ];
  }
  if (prop.type === "array") {
    const input = h("input", { type: "text", name, placeholder: "comma-separated values" });
    return [
      field(label, input, help),
      async () =>
        input.value.trim()
          ? input.value
              .split(",")
              .map((s) => s.trim())
              .filter(Boolean)
          : undefined,
    ];
  }
  const input = h("input", {
    type: "text",
    name,
    required,
    placeholder: prop.example ?? (prop.default !== undefined ? String(prop.default) : ""),
  });
  if (name === "prompt") input.setAttribute("autocomplete", "off");
  return [
    field(label, input, help),
    async () => {
      const v = input.value.trim();
      if (v === "" || v === prop.default) return undefined;
      return v;
    },
  ];
}

function optionsForm(tool) {
  const props = tool.schema?.properties || {};
  const required = new Set(tool.schema?.required || []);
  const names = Object.keys(props).filter((n) => !HIDDEN.has(n) && !n.endsWith("_url"));
  const primary = PRIMARY[tool.slug] || names.slice(0, 4);
  const first = names.filter((n) => primary.includes(n) || required.has(n));
  const rest = names.filter((n) => !first.includes(n));
  const readers = {};
  const make = (n) => {
    const [node, read] = control(n, props[n], required.has(n));
    readers[n] = read;
    return node;
  };
  // Checkboxes after the other fields, each on a full row.
  const order = (list) =>
    [...list].sort(
      (a, b) => (unwrap(props[a]).type === "boolean") - (unwrap(props[b]).type === "boolean"),
    );
  const node = h(
    "div.options",
    first.length ? h("div.fields", order(first).map(make)) : null,
    rest.length
      ? h(
          "details.more",
          h("summary", `More options (${rest.length})`),
          h("div.fields", order(rest).map(make)),
        )
      : null,
    !names.length ? h("p.muted", "This tool has no options.") : null,
  );
  async function read() {
    const out = {};
    for (const [n, r] of Object.entries(readers)) {
      const v = await r();
      if (v !== undefined) out[n] = v;
    }
    return out;
  }
  return { node, read };
}

function priceOf(tool, params) {
  if (tool.slug === "upscale") return tool.prices[`upscale_${params.scale || 2}x`] ?? null;
  return tool.price;
}

// ---- results ------------------------------------------------------------------------------

function imagePanel(label, src, alt, extra) {
  return h(
    "figure.pane",
    h("figcaption", h("span", label), extra || null),
    h("div.checker", src ? h("img", { src, alt }) : h("p.muted.placeholder", alt)),
  );
}

function detailsView(tool, out) {
  const d = out.details || {};
  if (out.prompts) {
    return h(
      "div.prompts",
      Object.entries(out.prompts).map(([k, v]) => {
        const text =
          typeof v === "string"
            ? v
            : Object.entries(v)
                .map(([a, b]) => `${a}: ${b}`)
                .join("\n");
        return h(
          "div.prompt",
          h(
            "div.card-head",
            h("h3", title(k)),
            h(
              "button.btn.small",
              { type: "button", onclick: () => copyText(text, "Prompt copied") },
              "Copy",
            ),
          ),
          h("p.prompt-text", text),
        );
      }),
    );
  }
  const facts = Object.entries(out.analysis || d).filter(
    ([, v]) => v === null || ["string", "number", "boolean"].includes(typeof v),
  );
  const nested = Object.entries(out.analysis || {}).filter(([, v]) => v && typeof v === "object");
  return h(
    "div",
    h(
      "dl.facts",
      facts.map(([k, v]) => [h("dt", title(k)), h("dd", String(v))]),
    ),
    nested.length
      ? h(
          "details.more",
          h("summary", "Everything the analysis found"),
          h("pre.code", h("code", JSON.stringify(Object.fromEntries(nested), null, 2))),
        )
      : null,
  );
}

export async function toolPage({ params: [slug] }) {
  const tool = (await listTools()).find((t) => t.slug === slug);
  if (!tool) {
    return h("div.page", pageHead("Unknown tool"), notice("error", `There is no tool “${slug}”.`));
  }
  const head = pageHead(tool.name, firstSentence(tool.description));
  if (!session.apiKey()) {
    return h(
      "div.page",
      head,
      keyNeeded(() => location.reload()),
    );
  }
  let file = null;
  let beforeUrl = null;
  const opts = optionsForm(tool);
  const cost = h("span.cost", { "aria-live": "polite" });
  const run = h(
    "button.btn.primary.wide",
    { type: "submit", disabled: true },
    "Choose an image first",
  );
  const before = h("div.pane-slot");
  const after = h("div.pane-slot");
  const outcome = h("div.outcome", { "aria-live": "polite" });
  const compare = h("div.compare", before, after);
  clear(before, imagePanel("Before", null, "Your image appears here"));
  clear(after, imagePanel("After", null, "The result appears here"));

  async function updateCost() {
    const n = priceOf(tool, await opts.read());
    cost.textContent = n === null ? "" : `Costs ${credits(n)}`;
  }
  const drop = dropzone({
    label: "Drop an image here",
    onFiles: ([f]) => {
      file = f;
      if (beforeUrl) URL.revokeObjectURL(beforeUrl);
      beforeUrl = URL.createObjectURL(f);
      clear(
        before,
        imagePanel("Before", beforeUrl, `Original: ${f.name}`, h("span.muted", f.name)),
      );
      run.disabled = false;
      run.textContent = `Run ${tool.name.toLowerCase()}`;
    },
  });
  const form = h(
    "form.tool-form.stack",
    { "aria-label": `${tool.name} options` },
    drop,
    opts.node,
    h("div.run-row", run, cost),
  );
  form.addEventListener("change", updateCost);
  form.addEventListener(
    "submit",
    busy(run, async () => {
      if (!file) return;
      clear(outcome);
      let params;
      try {
        params = await opts.read();
      } catch (e) {
        clear(outcome, notice("error", `The image could not be read: ${e}`));
        return;
      }
      clear(
        after,
        h("div.pane.loading", h("span.spinner", { "aria-hidden": "true" }), "Processing…"),
      );
      try {
        const body = { ...params, image_base64: await fileToBase64(file) };
        const out = await api(tool.path, { method: "POST", json: body });
        account.credits(out.credits_remaining);
        const d = out.details || {};
        const size = d.width
          ? `${d.width} × ${d.height} ${String(d.format || "").toUpperCase()}`
          : "";
        compare.classList.toggle("data", !out.result_url);
        clear(
          after,
          out.result_url
            ? imagePanel("After", out.result_url, `${tool.name} result`, h("span.muted", size))
            : h("div.pane.result-data", detailsView(tool, out)),
        );
        clear(
          outcome,
          h(
            "div.result-meta",
            h(
              "dl.meta",
              h(
                "div",
                h("dt", "Cost"),
                h("dd", { "data-testid": "credits-used" }, credits(out.credits_used)),
              ),
              h(
                "div",
                h("dt", "Balance"),
                h(
                  "dd",
                  { "data-testid": "credits-remaining" },
                  credits(out.credits_remaining ?? 0),
                ),
              ),
              h("div", h("dt", "Time"), h("dd", `${out.processing_time.toFixed(2)} s`)),
            ),
            out.result_url
              ? h(
                  "a.btn.primary",
                  {
                    href: out.result_url,
                    download: `${slug}-${out.processing_id}.${d.format || "png"}`,
                  },
                  "Download result",
                )
              : null,
            d.method ? h("p.method", `Method: ${d.method}`) : null,
          ),
        );
      } catch (e) {
        clear(after, imagePanel("After", null, "No result"));
        clear(outcome, notice("error", e.detail || String(e)));
      }
    }),
  );
  updateCost();
  return h(
    "div.page",
    head,
    h(
      "div.tool-layout",
      h("section.card", { "aria-label": "Image and options" }, form),
      h("section.card.results", { "aria-label": "Before and after" }, compare, outcome),
    ),
  );
}
