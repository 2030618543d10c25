// Types of elicit-mcp's SDK handler (index.js). They describe MCP's wire shapes, so they need
// no import from @modelcontextprotocol/sdk, and they fit its v1 and v2 handlers.

/** A value a form field takes (MCP's: no null, so the SDK's own ElicitResult type accepts it). */
export type ElicitValue = string | number | boolean | string[];

/** An elicitation's params: a form (message, requestedSchema) or a URL (mode "url"). */
export interface ElicitParams {
  message: string;
  mode?: "form" | "url";
  requestedSchema?: { type: "object"; properties: Record<string, unknown>; required?: string[] };
  url?: string;
  elicitationId?: string;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** What elicit answers: the ElicitResult sent back to the server. */
export interface ElicitResult {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, ElicitValue>;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Each option is one of elicit's flags; one left out leaves the flag's environment variable
 * (read by elicit itself) in charge. */
export interface ElicitOptions {
  /** Scripted answers, each as `-a` takes it: "region=apac", "accept", "decline", a JSON object. */
  answers?: string | string[];
  /** An answer-rules file or a cassette (`--answers`; env ELICIT_ANSWERS). */
  answersFile?: string;
  /** Where a person answers (`--ui`; env ELICIT_UI): the terminal when there is one, else the page. */
  ui?: "auto" | "terminal" | "browser";
  /** Never ask a person (`--no-input`; env ELICIT_NO_INPUT). */
  noInput?: boolean;
  /** Print the page's address on stderr instead of opening a browser (`--no-open`; env ELICIT_NO_OPEN). */
  noOpen?: boolean;
  /** The command that opens the page and URLs (`--browser`; env ELICIT_BROWSER). */
  browser?: string;
  /** The server's name, shown to the person and matched by answer rules' `server`; or a
   * function giving it when asked (`() => client.getServerVersion()?.name`). */
  server?: string | (() => string | undefined);
  /** Milliseconds a person may take (default 10 minutes); past them the answer is cancel. */
  timeout?: number;
  /** The elicit binary (default: ELICIT_BINARY, else this package's platform binary). */
  binary?: string;
  /** Any other arguments for elicit. */
  args?: string[];
  /** Variables added to elicit's environment. */
  env?: Record<string, string | undefined>;
}

/** The SDK's request handler extra (v1) or context (v2): its abort signal ends elicit. */
export interface HandlerExtra {
  signal?: AbortSignal;
  mcpReq?: { signal?: AbortSignal };
  [key: string]: unknown;
}

/** A handler for `client.setRequestHandler(ElicitRequestSchema, …)` (SDK v1) or
 * `client.setRequestHandler("elicitation/create", …)` (SDK v2). */
export type ElicitHandler = (
  request: { method?: string; params: ElicitParams } | ElicitParams,
  extra?: HandlerExtra,
) => Promise<ElicitResult>;

/** elicit's resolvers as an SDK request handler. */
export declare function elicitHandler(options?: ElicitOptions): ElicitHandler;

/** Resolves one elicitation's params with elicit. */
export declare function resolve(
  params: ElicitParams,
  options?: ElicitOptions & { signal?: AbortSignal },
): Promise<ElicitResult>;

/** The elicit binary's path; throws ElicitNotFound when this platform's package is missing. */
export declare function findBinary(): string;

/** elicit failed, printed no result, or took longer than allowed. */
export declare class ElicitError extends Error {
  exitCode: number | null;
  stderr: string;
}

/** No elicit binary: the platform package is not installed, or `binary`/ELICIT_BINARY is wrong. */
export declare class ElicitNotFound extends ElicitError {}

/** How long a person may take unless told (ms). */
export declare const DEFAULT_TIMEOUT_MS: number;
