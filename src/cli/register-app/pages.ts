import type { AppManifest } from './app-manifest.js';

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** The page that posts the manifest to GitHub: a form that submits itself, with a fallback button. */
export function renderSetupPage(
  manifest: AppManifest,
  formAction: string,
  scriptNonce: string,
): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Register ${escapeHtml(manifest.name)} on GitHub</title>
</head>
<body>
<h1>Register the GitHub App “${escapeHtml(manifest.name)}”</h1>
<p>Sending the manifest to GitHub. Confirm the App’s name there; GitHub then sends you back here
and the credentials are written to your env file.</p>
<form id="register" method="post" action="${escapeHtml(formAction)}">
<input type="hidden" name="manifest" value="${escapeHtml(JSON.stringify(manifest))}">
<button type="submit">Continue on GitHub</button>
</form>
<script nonce="${scriptNonce}">document.getElementById('register').submit();</script>
</body>
</html>
`;
}

/** A page with one heading and one paragraph: the outcome of a request. */
export const resultPage = (title: string, text: string) => `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body>
</html>
`;
