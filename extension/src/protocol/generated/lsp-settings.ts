/* Generated from shared-schema/lsp-settings.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * Read from initializationOptions ({"settings": {...}} or the object itself), workspace/didChangeConfiguration ({"denpex": {...}}), or pulled with workspace/configuration (section "denpex"). Nested ({"checkpoints": {"watch": []}}) and dotted ({"checkpoints.watch": []}) keys are both accepted. Unknown keys and wrongly typed values are reported with window/logMessage and ignored. Relative paths resolve against the first workspace folder.
 */
export interface LspSettings {
  logs?: {
    /**
     * Documents diagnosed as logs (besides language id `log`).
     */
    globs?: string[];
    /**
     * Larger log documents are not diagnosed in the editor (a message suggests `denpex diagnose FILE`).
     */
    maxSizeMB?: number;
  };
  diagnostics?: {
    /**
     * Pause after an edit before a full rescan. Appends to a log are diagnosed at once, incrementally.
     */
    debounceMs?: number;
  };
  checkpoints?: {
    /**
     * Checkpoint directories to watch.
     */
    watch?: string[];
    /**
     * Reference run directory; empty (or null): none, and the watched directories are checked in replica mode.
     */
    reference?: string | null;
    /**
     * A second healthy run that calibrates the noise floor; empty (or null): none.
     */
    noiseReference?: string | null;
  };
  drift?: {
    device?: "auto" | "cpu" | "cuda";
  };
  /**
   * Client side (VS Code extension).
   */
  python?: {
    /**
     * Python that runs `denpex serve`; empty: the Python extension's interpreter, else python3 on PATH.
     */
    interpreter?: string;
  };
  terminal?: {
    /**
     * Send denpex/finding once per failure that appears in terminal output. Output is buffered either way, for denpex/diagnoseTerminal; the terminal named "Denpex verify" is never announced.
     */
    watch?: boolean;
  };
  /**
   * Client side (VS Code extension).
   */
  privacy?: {
    /**
     * Copy Diagnosis as Markdown asks the server for the redacted export (denpex/diagnosisMarkdown redact).
     */
    redactExports?: boolean;
  };
  /**
   * Client side (VS Code extension).
   */
  trace?: {
    /**
     * Trace the JSON-RPC traffic in the client's output channel.
     */
    server?: "off" | "messages" | "verbose";
  };
}
