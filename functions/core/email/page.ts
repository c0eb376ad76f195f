/**
 * The preference page and the endpoint's other pages, as HTML documents: localized (en, ko, ja),
 * usable without JavaScript (there is none: plain forms that POST), and accessible (one `h1`, a
 * `lang` on the document, labels for every control, fieldsets with legends, a live region for
 * what a POST did, visible focus, text contrast above 4.5:1). The page only shows; what a form
 * does is decided by preferences.ts.
 *
 * Every value is escaped (html.ts). Links and form targets are relative, so the pages work under
 * any public URL the deployer maps the endpoint to. Pure.
 */
import type { ShippedLocale } from '../locale.ts';
import { escapeHtml } from './html.ts';
import { allEmailWords, type EmailWords, emailWordsFor } from './messages/catalog.ts';
import { MAX_PAUSE_DAYS, type MembershipState } from './subscriber.ts';

const STYLE = [
  'body{margin:0;overflow-wrap:anywhere;background:#f4f5f7;color:#1b1f24;font:16px/1.5 -apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK KR","Noto Sans JP",sans-serif}',
  'header,main{max-width:640px;margin:0 auto;padding:12px 20px}',
  'main{background:#fff;border-radius:8px;margin-bottom:24px}',
  'h1{font-size:24px;margin:8px 0 16px}h2{font-size:19px;margin:24px 0 8px}',
  'nav ul{list-style:none;padding:0;margin:0;display:flex;gap:16px;flex-wrap:wrap}',
  'a{color:#0b57d0}',
  'fieldset{border:1px solid #c4c9d0;border-radius:6px;margin:12px 0;padding:8px 16px 16px}',
  'legend{font-weight:600;padding:0 4px}',
  'label{display:inline-block;margin:6px 12px 6px 0}',
  'input[type=number]{width:5em;font:inherit;padding:6px;border:1px solid #6b7280;border-radius:4px}',
  'button{font:inherit;padding:8px 16px;margin:4px 8px 4px 0;border-radius:6px;border:1px solid #0b57d0;background:#0b57d0;color:#fff;cursor:pointer}',
  'button.secondary{background:#fff;color:#0b57d0}',
  'button.danger{background:#b3261e;border-color:#b3261e;color:#fff}',
  'button:focus-visible,a:focus-visible,input:focus-visible{outline:3px solid #f2b705;outline-offset:2px}',
  '.notice{padding:10px 14px;border-radius:6px;background:#e7f3ea;border-left:4px solid #1e7d32}',
  '.warning{padding:10px 14px;border-radius:6px;background:#fdecea;border-left:4px solid #b3261e}',
  '.muted{color:#3d4450;font-size:15px}',
  'table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #dde1e6}',
  // Korean breaks between words, as Korean readers expect, not between syllables (Chromium's default).
  ':lang(ko){word-break:keep-all}',
].join('\n');

/** One audience the address is on, as the page lists it. */
export interface MembershipRow {
  readonly audienceId: string;
  readonly label: string;
  readonly state: MembershipState;
  readonly preference: 'immediate' | 'digest';
  /** Formatted pause end, when paused. */
  readonly pausedUntil?: string | undefined;
  readonly current: boolean;
}

/** Everything the preference page shows. */
export interface PreferencePageView {
  readonly language: ShippedLocale;
  readonly maskedAddress: string;
  readonly suppressed: boolean;
  readonly memberships: readonly MembershipRow[];
  /** The audience of the link, when the address is (still) on it. */
  readonly current?:
    | (MembershipRow & { readonly digestTime: { readonly time: string; readonly zone: string } })
    | undefined;
  /** What the last POST did, in words. */
  readonly notice?: string | undefined;
  /** Why the last POST was refused, in words. */
  readonly problem?: string | undefined;
}

/** A whole page: document shell, language links and the main content. */
function pageDocument(
  words: EmailWords,
  title: string,
  main: string,
  options: { readonly languageLinks?: boolean } = {},
): string {
  const languages =
    options.languageLinks === false
      ? ''
      : `<nav aria-label="${escapeHtml(words.page.languageLabel)}"><ul>${allEmailWords
          .map((other) =>
            other.language === words.language
              ? `<li><span aria-current="true">${escapeHtml(other.languageName)}</span></li>`
              : `<li><a href="?lang=${other.language}" lang="${other.language}" hreflang="${other.language}">${escapeHtml(other.languageName)}</a></li>`,
          )
          .join('')}</ul></nav>`;
  return [
    '<!DOCTYPE html>',
    `<html lang="${words.language}">`,
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="robots" content="noindex">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>\n${STYLE}\n</style>`,
    '</head>',
    '<body>',
    `<header>${languages}</header>`,
    `<main>\n${main}\n</main>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

const stateText = (words: EmailWords, row: MembershipRow): string => {
  if (row.state === 'pending') return words.page.state.pending;
  if (row.state === 'unsubscribed') return words.page.state.unsubscribed;
  if (row.pausedUntil !== undefined) return words.page.state.paused(row.pausedUntil);
  return row.preference === 'digest' ? words.page.state.digest : words.page.state.confirmed;
};

/** The preference page of one address, opened from a message of one audience. */
export function renderPreferencePage(view: PreferencePageView, formAction: string): string {
  const words = emailWordsFor(view.language);
  const { page } = words;
  const parts: string[] = [`<h1>${escapeHtml(page.title)}</h1>`];
  // A live region: screen readers announce what the POST did after the redirect.
  parts.push(
    `<div role="status">${view.notice === undefined ? '' : `<p class="notice">${escapeHtml(view.notice)}</p>`}${
      view.problem === undefined ? '' : `<p class="warning">${escapeHtml(view.problem)}</p>`
    }</div>`,
  );
  parts.push(`<p class="muted">${escapeHtml(page.addressLine(view.maskedAddress))}</p>`);
  if (view.suppressed) parts.push(`<p class="warning">${escapeHtml(page.suppressed)}</p>`);
  parts.push(`<h2>${escapeHtml(page.listHeading)}</h2>`);
  parts.push(
    `<ul>${view.memberships
      .map(
        (row) =>
          `<li><strong>${escapeHtml(row.label)}</strong>${row.current ? ` (${escapeHtml(page.thisList)})` : ''}: ${escapeHtml(stateText(words, row))}</li>`,
      )
      .join('')}</ul>`,
  );
  const action = escapeHtml(formAction);
  const current = view.current;
  if (current !== undefined && current.state !== 'unsubscribed') {
    parts.push(`<h2>${escapeHtml(page.manageHeading(current.label))}</h2>`);
    if (current.state === 'pending') parts.push(`<p>${escapeHtml(page.pendingNote)}</p>`);
    if (current.state === 'confirmed') {
      const checked = (value: string) => (current.preference === value ? ' checked' : '');
      parts.push(
        `<form method="post" action="${action}"><fieldset><legend>${escapeHtml(page.frequencyLegend)}</legend>` +
          `<label><input type="radio" name="preference" value="immediate"${checked('immediate')}> ${escapeHtml(page.immediate)}</label>` +
          `<label><input type="radio" name="preference" value="digest"${checked('digest')}> ${escapeHtml(page.digest(current.digestTime.time, current.digestTime.zone))}</label>` +
          `<div><button type="submit" name="action" value="preference">${escapeHtml(page.save)}</button></div></fieldset></form>`,
      );
      parts.push(
        `<form method="post" action="${action}"><fieldset><legend>${escapeHtml(page.pauseLegend)}</legend>` +
          `<label for="days">${escapeHtml(page.pauseDays)}</label>` +
          `<input id="days" name="days" type="number" min="1" max="${MAX_PAUSE_DAYS}" step="1" value="7" required>` +
          `<div><button type="submit" name="action" value="pause">${escapeHtml(page.pauseButton)}</button>` +
          (current.pausedUntil === undefined
            ? ''
            : `<button type="submit" name="action" value="resume" class="secondary" formnovalidate>${escapeHtml(page.resumeButton)}</button>`) +
          '</div></fieldset></form>',
      );
    }
  }
  const anyActive = view.memberships.some((row) => row.state !== 'unsubscribed');
  if (anyActive) {
    const buttons: string[] = [];
    if (current !== undefined && current.state !== 'unsubscribed') {
      buttons.push(
        `<button type="submit" name="action" value="unsubscribe" class="danger">${escapeHtml(page.unsubscribeThis(current.label))}</button>`,
      );
    }
    buttons.push(
      `<button type="submit" name="action" value="unsubscribe-all" class="secondary">${escapeHtml(page.unsubscribeAll)}</button>`,
    );
    parts.push(
      `<form method="post" action="${action}"><fieldset><legend>${escapeHtml(page.unsubscribeHeading)}</legend><div>${buttons.join('')}</div></fieldset></form>`,
    );
  }
  return pageDocument(words, page.title, parts.join('\n'));
}

/** The page a one-click link shows on GET: a question and one button (the GET itself changes nothing). */
export function renderOneClickPage(
  language: ShippedLocale,
  audienceLabel: string,
  formAction: string,
  manageHref: string,
): string {
  const { page } = emailWordsFor(language);
  const main = [
    `<h1>${escapeHtml(page.oneClickHeading(audienceLabel))}</h1>`,
    `<p>${escapeHtml(page.oneClickBody)}</p>`,
    `<form method="post" action="${escapeHtml(formAction)}"><div><button type="submit" name="action" value="unsubscribe" class="danger">${escapeHtml(page.oneClickButton)}</button></div></form>`,
    `<p><a href="${escapeHtml(manageHref)}">${escapeHtml(page.manageLink)}</a></p>`,
  ].join('\n');
  return pageDocument(emailWordsFor(language), page.oneClickHeading(audienceLabel), main);
}

/** The page a confirmation link shows on GET: one button that confirms (POST). */
export function renderConfirmPage(language: ShippedLocale, audienceLabel: string, formAction: string): string {
  const { page } = emailWordsFor(language);
  const main = [
    `<h1>${escapeHtml(page.confirmHeading(audienceLabel))}</h1>`,
    `<p>${escapeHtml(page.confirmBody)}</p>`,
    `<form method="post" action="${escapeHtml(formAction)}"><div><button type="submit" name="action" value="confirm">${escapeHtml(page.confirmButton)}</button></div></form>`,
  ].join('\n');
  return pageDocument(emailWordsFor(language), page.confirmHeading(audienceLabel), main);
}

/** The one plain page every link that does not verify gets, whatever the reason. */
export function renderInvalidLinkPage(language: ShippedLocale): string {
  const { page } = emailWordsFor(language);
  return pageDocument(
    emailWordsFor(language),
    page.invalidTitle,
    `<h1>${escapeHtml(page.invalidTitle)}</h1>\n<p>${escapeHtml(page.invalidBody)}</p>`,
  );
}
