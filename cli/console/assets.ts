/**
 * The console's stylesheet and its one small script, served from /assets (the Content-Security-
 * Policy allows scripts and styles from this server only). The pages work without the script;
 * with it, the rule form is validated as you type.
 */

export const stylesheet = `
:root { --fg: #1b1f24; --muted: #4a5361; --line: #c9ced6; --bg: #ffffff; --accent: #0b5cad; --ok: #17663a; --bad: #a4161a; --warn: #7a4d00; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK KR", sans-serif; color: var(--fg); background: var(--bg); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: #fff; padding: 4px 8px; }
header { background: #10233b; color: #fff; padding: 8px 24px; display: flex; flex-wrap: wrap; align-items: center; gap: 16px; }
.brand { margin: 0; font-weight: 600; } .target { font-weight: 400; color: #c8d6e8; margin-left: 8px; font-size: 13px; }
nav ul { list-style: none; display: flex; gap: 4px; margin: 0; padding: 0; flex-wrap: wrap; }
nav a { color: #fff; text-decoration: none; padding: 6px 10px; border-radius: 4px; display: inline-block; }
nav a[aria-current="page"], nav a:hover, nav a:focus { background: #2c4a70; }
main { padding: 16px 24px 32px; max-width: 1280px; overflow-wrap: anywhere; }
h1 { font-size: 24px; margin: 8px 0 16px; } h2 { font-size: 18px; margin: 24px 0 8px; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 16px; font-size: 14px; }
caption { text-align: left; color: var(--muted); padding: 4px 0; }
th, td { border-bottom: 1px solid var(--line); padding: 6px 8px; text-align: left; vertical-align: top; }
th { background: #f2f4f7; overflow-wrap: normal; } /* a header word never splits */
a { color: var(--accent); }
.flash { background: #e7f4ec; border-left: 4px solid var(--ok); padding: 8px 12px; }
.problem { background: #fbeaea; border-left: 4px solid var(--bad); padding: 8px 12px; }
.pass { color: var(--ok); font-weight: 600; } .fail { color: var(--bad); font-weight: 600; } .unset { color: var(--muted); }
.verdict-match { color: var(--ok); font-weight: 600; } .verdict-nomatch { color: var(--bad); font-weight: 600; }
form.inline { display: inline; }
form.filters, form.stack { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-end; margin: 8px 0 16px; }
form.stack { flex-direction: column; align-items: stretch; max-width: 760px; }
label { display: flex; flex-direction: column; font-weight: 600; font-size: 14px; gap: 2px; }
label.check { flex-direction: row; align-items: center; gap: 6px; font-weight: 400; }
input[type=text], input[type=search], select, textarea { font: inherit; padding: 5px 8px; border: 1px solid #8a94a3; border-radius: 4px; min-width: 200px; }
textarea { min-height: 60px; }
.hint { font-weight: 400; color: var(--muted); font-size: 13px; }
button { font: inherit; padding: 6px 14px; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
.diff del { background: #fbeaea; color: var(--bad); text-decoration: line-through; } .diff ins { background: #e7f4ec; color: var(--ok); text-decoration: none; }
#validation { min-height: 1.5em; } #validation.ok { color: var(--ok); } #validation.bad { color: var(--bad); }
.empty { color: var(--muted); }
dl.fields { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; } dl.fields dt { font-weight: 600; } dl.fields dd { margin: 0; }
footer { color: var(--muted); font-size: 13px; padding: 8px 24px 24px; border-top: 1px solid var(--line); }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: 13px; }
pre { background: #f2f4f7; padding: 8px; overflow-x: auto; }
`;

export const script = `
(() => {
  const form = document.querySelector('form[data-validate]');
  if (!form) return;
  const out = document.getElementById('validation');
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  let timer;
  const check = async () => {
    const body = new URLSearchParams(new FormData(form));
    body.delete('_csrf');
    const response = await fetch(form.dataset.validate, { method: 'POST', headers: { 'x-csrf-token': csrf, 'content-type': 'application/x-www-form-urlencoded' }, body });
    if (!response.ok) { out.textContent = 'could not validate (' + response.status + ')'; out.className = 'bad'; return; }
    const result = await response.json();
    out.className = result.ok ? 'ok' : 'bad';
    const notes = (result.notes || []).join(' · ');
    out.textContent = result.ok ? 'Valid: the run would accept this rule.' + (notes ? ' Note: ' + notes : '') : result.problems.join(' · ');
  };
  form.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(check, 250); });
})();
`;
