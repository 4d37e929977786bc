// Scene jobs and batches: create, list, and watch one with live progress (polling that slows
// down and respects the plan's request budget).

import { account, api, openapi, poll, session } from "../api.js";
import {
  h,
  badge,
  busy,
  clear,
  credits,
  dropzone,
  field,
  fileToBase64,
  notice,
  plural,
  shortId,
  time,
  title,
  pageHead,
} from "../ui.js";
import { keyNeeded } from "./auth.js";

const FINAL = new Set(["completed", "failed"]);

// The outputs a job did not deliver (nothing charged for them), each with the server's reason.
function failureList(failures) {
  if (!failures?.length) return null;
  return notice(
    "info",
    h("p", `${plural(failures.length, "image")} not delivered (not charged):`),
    h(
      "ul",
      { "data-testid": "job-failures" },
      ...failures.map((f) => h("li", `Image ${f.index + 1}: ${f.reason}`)),
    ),
  );
}

function needKey(heading) {
  return session.apiKey()
    ? null
    : h(
        "div.page",
        pageHead(heading),
        keyNeeded(() => location.reload()),
      );
}

async function categories() {
  const doc = await openapi();
  const desc = doc.components.schemas.JobCreate?.properties?.category?.description || "other";
  return desc
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

function progressBar(done, total, label) {
  const pct = total ? Math.round((100 * done) / total) : 0;
  return h(
    "div.progress-wrap",
    h(
      "div.progress",
      {
        role: "progressbar",
        "aria-valuemin": 0,
        "aria-valuemax": total,
        "aria-valuenow": done,
        "aria-label": label,
      },
      h("div.progress-fill", { style: `width:${pct}%` }),
    ),
    h("span.progress-text", `${done} of ${total}`),
  );
}

function resultsGrid(results, what) {
  return h(
    "ul.results-grid",
    results.map((r, i) =>
      h(
        "li",
        h(
          "figure",
          h(
            "a",
            { href: r.url, target: "_blank", rel: "noopener" },
            h("img", {
              src: r.url,
              alt: `${what} ${i + 1}: ${title(r.scene)} scene`,
              loading: "lazy",
            }),
          ),
          h(
            "figcaption",
            h("span", title(r.scene)),
            h("a", { href: r.url, download: `${r.scene}.png` }, "Download"),
          ),
        ),
      ),
    ),
  );
}

function listTable(columns, rows, empty) {
  if (!rows.length) return h("p.empty", empty);
  return h(
    "div.table-wrap",
    h(
      "table",
      h(
        "thead",
        h(
          "tr",
          columns.map((c) => h("th", { scope: "col" }, c)),
        ),
      ),
      h("tbody", rows),
    ),
  );
}

/** What a watch says while it waits for the plan's request budget. */
function waiter(note) {
  return (seconds) => {
    note.textContent =
      `Your plan's requests for this minute are nearly used: ` + `checking again in ${seconds} s.`;
  };
}

// ---- jobs ---------------------------------------------------------------------------------

export async function jobsPage() {
  const gate = needKey("Scene jobs");
  if (gate) return gate;
  const [cats, listed] = await Promise.all([categories(), api("/api/v2/jobs?limit=100")]);
  // The jobs list holds every kind (avatars, videos, ad packs...); this page is the scene jobs'.
  const jobs = listed.filter((j) => j.type === "scenes").slice(0, 20);
  let file = null;
  const preview = h("div.preview-slot");
  const category = h(
    "select",
    cats.map((c) => h("option", { value: c, selected: c === "other" }, title(c))),
  );
  const count = h("input", { type: "number", min: 1, max: 12, value: 4, required: true });
  const start = h("button.btn.primary", { type: "submit", disabled: true }, "Start scene job");
  const cost = h("span.cost", { "aria-live": "polite" }, `Reserves ${credits(4)}`);
  const msg = h("div.form-msg");
  count.addEventListener("input", () => {
    cost.textContent = `Reserves ${credits(Number(count.value) || 0)}`;
  });
  const form = h(
    "form.stack",
    dropzone({
      label: "Drop a product photo",
      onFiles: ([f]) => {
        file = f;
        clear(
          preview,
          h("img.preview", { src: URL.createObjectURL(f), alt: `Product photo: ${f.name}` }),
        );
        start.disabled = false;
      },
    }),
    preview,
    h(
      "div.fields.two",
      field("Category", category),
      field("Scenes", count, "1 to 12; 1 credit each."),
    ),
    msg,
    h("div.run-row", start, cost),
  );
  form.addEventListener(
    "submit",
    busy(start, async () => {
      msg.replaceChildren();
      try {
        const created = await api("/api/v2/jobs", {
          method: "POST",
          json: {
            product_image: await fileToBase64(file),
            product_filename: file.name,
            category: category.value,
            images_to_generate: Number(count.value),
          },
        });
        account.credits(created.credits_remaining);
        location.hash = `#/jobs/${created.job_id}`;
      } catch (e) {
        msg.append(notice("error", e.detail));
      }
    }),
  );
  const rows = jobs.map((j) =>
    h(
      "tr",
      h("td", h("a", { href: `#/jobs/${j.job_id}` }, h("code", shortId(j.job_id)))),
      h("td", title(j.type)),
      h("td", badge(j.status)),
      h("td", String(j.images_to_generate)),
      h("td", String(j.credits_used)),
      h("td", time(j.created_at)),
    ),
  );
  return h(
    "div.page",
    pageHead("Scene jobs", "Product photography generated in the background: watch it happen."),
    h(
      "div.grid.two.wide-right",
      h(
        "section.card",
        { "aria-labelledby": "new-job-h" },
        h("h2", { id: "new-job-h" }, "New scene job"),
        form,
      ),
      h(
        "section.card",
        { "aria-labelledby": "jobs-h" },
        h(
          "div.card-head",
          h("h2", { id: "jobs-h" }, "Recent jobs"),
          h(
            "button.btn.small",
            {
              type: "button",
              onclick: () => window.dispatchEvent(new HashChangeEvent("hashchange")),
            },
            "Refresh",
          ),
        ),
        listTable(["Job", "Type", "Status", "Images", "Credits", "Created"], rows, "No jobs yet."),
      ),
    ),
  );
}

export async function jobPage({ params: [jobId], signal }) {
  const gate = needKey("Job");
  if (gate) return gate;
  const statusSlot = h("div.job-status", { "aria-live": "polite" });
  const results = h("div");
  const note = h("p.muted.small");
  const onWait = waiter(note);
  const view = h(
    "div.page",
    pageHead("Scene job", h("code", jobId), h("a.btn.small", { href: "#/jobs" }, "← All jobs")),
    h("section.card", statusSlot, note),
    h("section.card", { "aria-labelledby": "res-h" }, h("h2", { id: "res-h" }, "Results"), results),
  );
  function show(job) {
    note.textContent = FINAL.has(job.status) ? "" : "Updating live…";
    const done = job.progress.completed + job.progress.failed;
    clear(
      statusSlot,
      h(
        "div.status-line",
        h("span", { "data-testid": "job-status" }, badge(job.status)),
        h("span.muted", `${title(job.type)} · ${plural(job.images_to_generate, "image")}`),
        h(
          "span.muted",
          FINAL.has(job.status)
            ? `${credits(job.credits_used)} used`
            : `${credits(job.credits_reserved)} reserved`,
        ),
      ),
      progressBar(done, job.progress.total, "Images finished"),
      job.error ? notice("error", job.error) : null,
      failureList(job.failures),
    );
    clear(
      results,
      job.results.length
        ? resultsGrid(job.results, "Scene")
        : h(
            "p.empty",
            FINAL.has(job.status) ? "No images." : "The first images appear here as they finish.",
          ),
    );
  }
  const first = await api(`/api/v2/jobs/${encodeURIComponent(jobId)}`);
  show(first);
  if (!FINAL.has(first.status)) {
    poll(`/api/v2/jobs/${encodeURIComponent(jobId)}`, {
      done: (j) => FINAL.has(j.status),
      onUpdate: show,
      onWait,
      signal,
      fetched: true,
    })
      .then((job) => {
        if (job) account.me(0).catch(() => {});
      })
      .catch((e) => {
        note.textContent = "";
        statusSlot.append(notice("error", e.detail));
      });
  }
  return view;
}

// ---- batches ------------------------------------------------------------------------------

export async function batchesPage() {
  const gate = needKey("Batches");
  if (gate) return gate;
  const batches = await api("/api/v2/batches?limit=20");
  let files = [];
  const chosen = h("ul.file-list", { "aria-label": "Chosen images" });
  const per = h("input", { type: "number", min: 1, max: 12, value: 2, required: true });
  const start = h("button.btn.primary", { type: "submit", disabled: true }, "Start batch");
  const cost = h("span.cost", { "aria-live": "polite" });
  const msg = h("div.form-msg");
  function update() {
    const n = files.length * (Number(per.value) || 0);
    cost.textContent = files.length ? `Reserves ${credits(n)}` : "";
    start.disabled = !files.length;
    clear(
      chosen,
      files.map((f) =>
        h("li", h("img", { src: URL.createObjectURL(f), alt: "" }), h("span", f.name)),
      ),
    );
  }
  per.addEventListener("input", update);
  const form = h(
    "form.stack",
    dropzone({
      label: "Drop product photos",
      hint: "Up to 100 images; each file's name becomes its id",
      multiple: true,
      onFiles: (fs) => {
        files = fs.slice(0, 100);
        update();
      },
    }),
    chosen,
    field("Scenes per product", per, "1 to 12; 1 credit per scene."),
    msg,
    h("div.run-row", start, cost),
  );
  form.addEventListener(
    "submit",
    busy(start, async () => {
      msg.replaceChildren();
      try {
        const images = await Promise.all(
          files.map(async (f) => ({
            id: f.name.replace(/\.[^.]+$/, ""),
            image: await fileToBase64(f),
          })),
        );
        const created = await api("/api/v2/batches", {
          method: "POST",
          json: { images, images_per_product: Number(per.value) },
        });
        account.credits(created.credits_remaining);
        location.hash = `#/batches/${created.batch_id}`;
      } catch (e) {
        msg.append(notice("error", e.detail));
      }
    }),
  );
  const rows = batches.map((b) =>
    h(
      "tr",
      h("td", h("a", { href: `#/batches/${b.batch_id}` }, h("code", shortId(b.batch_id)))),
      h("td", badge(b.cancelled ? "cancelled" : b.status)),
      h(
        "td",
        progressBar(b.progress.completed + b.progress.failed, b.progress.total, "Images finished"),
      ),
      h("td", String(b.credits_used)),
      h("td", time(b.created_at)),
    ),
  );
  return h(
    "div.page",
    pageHead("Batches", "Many products at once, each with its own scenes."),
    h(
      "div.grid.two.wide-right",
      h(
        "section.card",
        { "aria-labelledby": "new-batch-h" },
        h("h2", { id: "new-batch-h" }, "New batch"),
        form,
      ),
      h(
        "section.card",
        { "aria-labelledby": "batches-h" },
        h("h2", { id: "batches-h" }, "Recent batches"),
        listTable(["Batch", "Status", "Progress", "Credits", "Created"], rows, "No batches yet."),
      ),
    ),
  );
}

export async function batchPage({ params: [batchId], signal }) {
  const gate = needKey("Batch");
  if (gate) return gate;
  const path = `/api/v2/batches/${encodeURIComponent(batchId)}`;
  const statusSlot = h("div.job-status", { "aria-live": "polite" });
  const items = h("div");
  const note = h("p.muted.small");
  const onWait = waiter(note);
  const cancel = h(
    "button.btn.danger-ghost.small",
    { type: "button", hidden: true },
    "Cancel batch",
  );
  cancel.addEventListener(
    "click",
    busy(cancel, async () => {
      try {
        show(await api(`${path}/cancel`, { method: "POST" }));
        account.me(0).catch(() => {});
      } catch (e) {
        statusSlot.append(notice("error", e.detail));
      }
    }),
  );
  function show(b) {
    const final = b.status === "completed";
    note.textContent = final ? "" : "Updating live…";
    cancel.hidden = final;
    clear(
      statusSlot,
      h(
        "div.status-line",
        h("span", { "data-testid": "batch-status" }, badge(b.cancelled ? "cancelled" : b.status)),
        h("span.muted", `${plural(b.total_images, "product")} × ${b.images_per_product} scenes`),
        h(
          "span.muted",
          final ? `${credits(b.credits_used)} used` : `${credits(b.credits_reserved)} reserved`,
        ),
      ),
      progressBar(b.progress.completed + b.progress.failed, b.progress.total, "Products finished"),
    );
    clear(
      items,
      b.images.map((img) =>
        h(
          "section.batch-item",
          { "aria-label": img.id || img.job_id },
          h(
            "div.card-head",
            h("h3", img.id || shortId(img.job_id)),
            h(
              "span",
              badge(img.status),
              " ",
              h("a.small", { href: `#/jobs/${img.job_id}` }, "Job"),
            ),
          ),
          img.error ? notice("error", img.error) : null,
          failureList(img.failures),
          img.results.length ? resultsGrid(img.results, img.id || "Scene") : null,
        ),
      ),
    );
  }
  const first = await api(path);
  show(first);
  if (first.status !== "completed") {
    poll(path, {
      done: (b) => b.status === "completed",
      onUpdate: show,
      onWait,
      signal,
      fetched: true,
    })
      .then((b) => {
        if (b) account.me(0).catch(() => {});
      })
      .catch((e) => statusSlot.append(notice("error", e.detail)));
  }
  return h(
    "div.page",
    pageHead(
      "Batch",
      h("code", batchId),
      cancel,
      h("a.btn.small", { href: "#/batches" }, "← All batches"),
    ),
    h("section.card", statusSlot, note),
    h(
      "section.card",
      { "aria-labelledby": "items-h" },
      h("h2", { id: "items-h" }, "Products"),
      items,
    ),
  );
}
