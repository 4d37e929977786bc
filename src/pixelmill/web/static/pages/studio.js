// People in the picture, on the JWT app surface: the avatar studio (avatars from a prompt or
// from a photo) and virtual try-on (a garment on a public model).

import { account, api, session } from "../api.js";
import { h, busy, clear, credits, dropzone, field, fileToBase64, notice, pageHead } from "../ui.js";
import { keyNeeded } from "./auth.js";

function imageGrid(urls, what) {
  return h(
    "ul.results-grid.portrait",
    urls.map((url, i) =>
      h(
        "li",
        h(
          "figure",
          h(
            "a",
            { href: url, target: "_blank", rel: "noopener" },
            h("img", { src: url, alt: `${what} ${i + 1}` }),
          ),
          h(
            "figcaption",
            h("span", `${what} ${i + 1}`),
            h(
              "a",
              { href: url, download: `${what.toLowerCase().replace(/\s+/g, "-")}-${i + 1}.png` },
              "Download",
            ),
          ),
        ),
      ),
    ),
  );
}

function spent(out) {
  account.credits(out.credits_remaining);
  return h(
    "p.muted",
    { "data-testid": "studio-cost" },
    `${credits(out.credits_used)} used · ${credits(out.credits_remaining ?? 0)} left`,
  );
}

function countInput(max, value) {
  return h("input", { type: "number", min: 1, max, value, required: true });
}

// ---- avatar studio --------------------------------------------------------------------------

export async function avatarsPage() {
  const results = h("div", { "aria-live": "polite" });

  // From a prompt.
  const prompt = h("input", {
    type: "text",
    required: true,
    maxlength: 2000,
    placeholder: "a smiling woman with curly red hair in a green jacket",
  });
  const count = countInput(8, 3);
  const go = h("button.btn.primary", { type: "submit" }, "Draw avatars");
  const guided = h(
    "form.stack",
    field("Describe the person", prompt, "Hair, skin, clothes, glasses, expression…"),
    field("How many", count, "1 to 8; 1 credit each."),
    h("div.row", go),
  );
  guided.addEventListener(
    "submit",
    busy(go, async () => {
      clear(results, h("p.muted", "Drawing…"));
      try {
        const out = await api("/api/avatars/generate-guided", {
          method: "POST",
          auth: "jwt",
          json: { prompt: prompt.value.trim(), count: Number(count.value) },
        });
        const unknown = out.details?.unrecognised;
        clear(
          results,
          spent(out),
          Array.isArray(unknown) && unknown.length
            ? notice("info", `Not drawn (no way to show it): ${unknown.join(", ")}`)
            : null,
          imageGrid(out.images, "Avatar"),
        );
      } catch (e) {
        clear(results, notice("error", e.detail));
      }
    }),
  );

  // From a photo.
  let photo = null;
  const refCount = countInput(8, 2);
  const looks = h("input", { type: "text", maxlength: 2000, placeholder: "watercolour" });
  const make = h("button.btn.primary", { type: "submit", disabled: true }, "Make avatars");
  const fromPhoto = h(
    "form.stack",
    dropzone({
      label: "Drop a photo of a person",
      onFiles: ([f]) => {
        photo = f;
        make.disabled = false;
        make.textContent = `Make avatars from ${f.name}`;
      },
    }),
    h(
      "div.fields.two",
      field("How many", refCount, "1 to 8; 1 credit each."),
      field("Look (optional)", looks, "cartoon, sketch, watercolour…"),
    ),
    h("div.row", make),
  );
  fromPhoto.addEventListener(
    "submit",
    busy(make, async () => {
      clear(results, h("p.muted", "Working…"));
      try {
        const json = { reference_image: await fileToBase64(photo), count: Number(refCount.value) };
        if (looks.value.trim()) json.additional_details = looks.value.trim();
        const out = await api("/api/avatars/generate-from-reference", {
          method: "POST",
          auth: "jwt",
          json,
        });
        clear(results, spent(out), imageGrid(out.images, "Avatar"));
      } catch (e) {
        clear(results, notice("error", e.detail));
      }
    }),
  );

  return h(
    "div.page",
    pageHead("Avatar studio", "People for your product photos, drawn from words or a photo."),
    h(
      "div.grid.two",
      h(
        "section.card",
        { "aria-labelledby": "guided-h" },
        h("h2", { id: "guided-h" }, "From a description"),
        guided,
      ),
      h(
        "section.card",
        { "aria-labelledby": "ref-h" },
        h("h2", { id: "ref-h" }, "From a photo"),
        fromPhoto,
      ),
    ),
    h(
      "section.card",
      { "aria-labelledby": "avatars-h" },
      h("h2", { id: "avatars-h" }, "Results"),
      results,
    ),
  );
}

// ---- try-on ---------------------------------------------------------------------------------

export async function tryonPage() {
  const head = pageHead("Virtual try-on", "A garment, photographed flat, worn by a model.");
  if (!session.apiKey()) {
    return h(
      "div.page",
      head,
      keyNeeded(() => location.reload()),
    );
  }
  const models = await api("/api/v2/avatars/public");
  let garment = null;
  let chosen = models[0]?.id || null;
  const picker = h(
    "div.models",
    { role: "radiogroup", "aria-label": "Model" },
    models.map((m, i) => {
      const input = h("input.visually-hidden", {
        type: "radio",
        name: "model",
        id: `model-${m.id}`,
        value: m.id,
        checked: i === 0,
        onchange: () => {
          chosen = m.id;
        },
      });
      return h(
        "div.model",
        input,
        h(
          "label",
          { for: input.id },
          h("img", { src: m.image_url, alt: `${m.name} (${m.gender})`, loading: "lazy" }),
          h("span", m.name),
        ),
      );
    }),
  );
  const outputs = countInput(4, 1);
  const prompt = h("input", {
    type: "text",
    maxlength: 2000,
    placeholder: "beach, office, studio…",
  });
  const run = h("button.btn.primary", { type: "submit", disabled: true }, "Choose a garment first");
  const results = h("div", { "aria-live": "polite" });
  const form = h(
    "form.stack",
    dropzone({
      label: "Drop a garment photo",
      hint: "A top, dress or jacket, photographed flat",
      onFiles: ([f]) => {
        garment = f;
        run.disabled = false;
        run.textContent = "Try it on";
      },
    }),
    h("fieldset.plain", h("legend", "Model"), picker),
    h(
      "div.fields.two",
      field("Variants", outputs, "1 to 4; 1 credit each."),
      field("Scene (optional)", prompt),
    ),
    h("div.row", run),
  );
  form.addEventListener(
    "submit",
    busy(run, async () => {
      clear(results, h("p.muted", "Fitting…"));
      const data = new FormData();
      data.append("product_image", garment, garment.name);
      data.append("model_id", chosen);
      data.append("model_type", "public");
      data.append("num_outputs", outputs.value);
      if (prompt.value.trim()) data.append("prompt", prompt.value.trim());
      try {
        const out = await api("/api/tryon/generate", {
          method: "POST",
          auth: "jwt",
          multipart: data,
        });
        clear(results, spent(out), imageGrid(out.result_urls, "Try-on"));
      } catch (e) {
        clear(results, notice("error", e.detail));
      }
    }),
  );
  return h(
    "div.page",
    head,
    h(
      "div.grid.two.wide-right",
      h("section.card", { "aria-label": "Garment and model" }, form),
      h(
        "section.card",
        { "aria-labelledby": "tryon-h" },
        h("h2", { id: "tryon-h" }, "Results"),
        results,
      ),
    ),
  );
}
