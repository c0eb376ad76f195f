/**
 * The page frame of the console: title, navigation between the six views, a skip link, the CSRF
 * token for the page's script, and the content. Templates use hono/html's `html`, which escapes
 * every interpolated value: text from items, articles or errors can never become markup.
 */
import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

/** A rendered piece of HTML. */
export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

const sections = [
  ['rules', 'Rules'],
  ['audiences', 'Audiences'],
  ['holds', 'Holds'],
  ['runs', 'Runs'],
  ['articles', 'Articles'],
  ['deliveries', 'Deliveries'],
] as const;

export type Section = (typeof sections)[number][0];

/** What every page gets. */
export interface PageFrame {
  readonly title: string;
  readonly section: Section;
  readonly csrf: string;
  readonly target: string;
  /** A message after a change (`updated quakes: version 3`), shown once. */
  readonly flash?: string | undefined;
}

export function page(frame: PageFrame, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${frame.csrf}">
<title>${frame.title} · news-alerts console</title>
<link rel="stylesheet" href="/assets/console.css">
<script src="/assets/console.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
  <p class="brand">news-alerts console <span class="target">${frame.target}</span></p>
  <nav aria-label="Sections"><ul>
    ${sections.map(
      ([id, label]) =>
        html`<li><a href="/${id}"${frame.section === id ? html` aria-current="page"` : ''}>${label}</a></li>`,
    )}
  </ul></nav>
</header>
<main id="main">
<h1>${frame.title}</h1>
${frame.flash === undefined ? '' : html`<p class="flash" role="status">${frame.flash}</p>`}
${body}
</main>
<footer><p>Every page's address can be shared with people on this machine: they open the console's token URL once, then any page link. Writes show what changes and ask first.</p></footer>
</body>
</html>`;
}

/** A hidden CSRF field for a form that changes something. */
export const csrfField = (csrf: string): Html => html`<input type="hidden" name="_csrf" value="${csrf}">`;

/** A table with a caption; `rows` empty shows `empty`. */
export function table(
  caption: string,
  head: readonly (string | Html)[],
  rows: readonly (readonly unknown[])[],
  empty: string,
): Html {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<table>
<caption>${caption}</caption>
<thead><tr>${head.map((cell) => html`<th scope="col">${cell}</th>`)}</tr></thead>
<tbody>${rows.map((row) => html`<tr>${row.map((cell) => html`<td>${cell as string}</td>`)}</tr>`)}</tbody>
</table>`;
}

/** An error shown in a page (what went wrong and how to fix it). */
export const problem = (message: string): Html => html`<div class="problem" role="alert"><p>${message}</p></div>`;

/** `2026-11-28 20:04 UTC` */
export const when = (at: number | undefined): string =>
  at === undefined ? '' : `${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
