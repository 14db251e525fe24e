// Everything shown in a webview comes from logs the user did not write: escape it all.

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? "").replace(/[&<>"'`]/g, (c) => HTML_ESCAPES[c]);
}

/** A CSP nonce: 32 base64 characters from a CSPRNG. */
export function makeNonce(randomBytes: (n: number) => Uint8Array): string {
  return Buffer.from(randomBytes(24)).toString("base64");
}

/**
 * The Content-Security-Policy every Denpex webview uses: nothing by default, no remote
 * origins, inline style and script only with this render's nonce.
 */
export function contentSecurityPolicy(nonce: string, cspSource: string): string {
  return [
    "default-src 'none'",
    `img-src ${cspSource} data:`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    "font-src 'none'",
    "connect-src 'none'",
    "frame-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/** A complete webview document; `body` must already be escaped markup. */
export function webviewDocument(opts: {
  title: string;
  nonce: string;
  cspSource: string;
  css: string;
  body: string;
  script: string;
}): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(opts.nonce, opts.cspSource))}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(opts.title)}</title>
<style nonce="${escapeHtml(opts.nonce)}">${opts.css}</style>
</head>
<body>
${opts.body}
<script nonce="${escapeHtml(opts.nonce)}">${opts.script}</script>
</body>
</html>`;
}
