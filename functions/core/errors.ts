/**
 * Typed errors of the alert run. Each names what went wrong in the domain's words; adapters wrap
 * SDK and HTTP failures in these with `{ cause }` so the handler can map them to metrics and alarms.
 */

/** Base class: every error this project throws on purpose extends it. */
export class NewsAlertsError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NewsAlertsError';
  }
}

/** A configuration value is missing or invalid; the message names the setting and what to fix. */
export class ConfigError extends NewsAlertsError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

/** The provider answered in a way the client cannot use (after retries where retrying helps). */
export class ProviderError extends NewsAlertsError {
  /** HTTP status, when there was a response. */
  readonly status: number | undefined;
  /** Whether a later attempt may succeed (5xx, 429, timeouts) as opposed to a client-side fault. */
  readonly retryable: boolean;
  constructor(message: string, details: { status?: number; retryable: boolean }, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ProviderError';
    this.status = details.status;
    this.retryable = details.retryable;
  }
}

/** 401/403 from the provider: the key is wrong, expired, or the request is outside the media scope. */
export class ProviderAuthError extends ProviderError {
  constructor(message: string, status: number, options?: ErrorOptions) {
    super(message, { status, retryable: false }, options);
    this.name = 'ProviderAuthError';
  }
}

/** How providers refuse a page number past the end of their listing (the interface does not say). */
const refusedPageStatuses: ReadonlySet<number> = new Set([400, 404, 416, 422]);

/**
 * A provider's refusal of a page number, as many refuse a page past the end of their listing: not
 * an authorization failure and not one a retry may fix. Whether it means the end is the caller's
 * to decide, from what it knows of the listing.
 */
export function isRefusedPageNumber(error: unknown): error is ProviderError & { readonly status: number } {
  return (
    error instanceof ProviderError &&
    !(error instanceof ProviderAuthError) &&
    !error.retryable &&
    error.status !== undefined &&
    refusedPageStatuses.has(error.status)
  );
}

/** A 200 response whose body does not fit the response mapping (names the field, shows a trimmed sample). */
export class ProviderResponseError extends ProviderError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, { status: 200, retryable: false }, options);
    this.name = 'ProviderResponseError';
  }
}

/**
 * The provider sends timestamps without a zone or offset and no provider time zone is configured:
 * reading them as UTC would shift every alert (and the window) by the provider's offset, so the
 * run refuses to guess. The message names the setting and the value.
 */
export class ProviderTimeZoneError extends ProviderResponseError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ProviderTimeZoneError';
  }
}

/**
 * The run's time budget ran out while the provider was failing or still dripping a response: the
 * run stops like at any deadline, but it is a provider failure, not a clean checkpoint, so it is
 * counted as an upstream error and the invocation fails.
 */
export class ProviderStalledError extends ProviderError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, { retryable: true }, options);
    this.name = 'ProviderStalledError';
  }
}

/** The window needed more pages than the configured cap: raise the cap or shorten the schedule interval. */
export class PageCapError extends ProviderError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, { retryable: false }, options);
    this.name = 'PageCapError';
  }
}

/** Another run holds the run lease; this run must not touch the watermark. */
export class LeaseHeldError extends NewsAlertsError {
  readonly holder: string;
  readonly expiresAt: number;
  constructor(holder: string, expiresAt: number, options?: ErrorOptions) {
    super(`another run (${holder}) holds the run lease until ${new Date(expiresAt).toISOString()}`, options);
    this.name = 'LeaseHeldError';
    this.holder = holder;
    this.expiresAt = expiresAt;
  }
}

/** This run's lease expired or was taken over; it must stop without writing the watermark. */
export class LeaseLostError extends NewsAlertsError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LeaseLostError';
  }
}

/** The watermark changed since this run read it (optimistic lock lost). */
export class WatermarkConflictError extends NewsAlertsError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WatermarkConflictError';
  }
}

/**
 * Some notifications could not be published after retries. Everything else was checkpointed; the
 * watermark stayed before the undelivered articles so the next run delivers them.
 */
export class DeliveryIncompleteError extends NewsAlertsError {
  readonly undelivered: number;
  constructor(undelivered: number, options?: ErrorOptions) {
    super(`${undelivered} notification(s) were not published; the next run retries them`, options);
    this.name = 'DeliveryIncompleteError';
    this.undelivered = undelivered;
  }
}

/** Another dispatch (sharded publishing) is still open; a run settles it before it opens its own. */
export class DispatchOpenError extends NewsAlertsError {
  readonly openDispatchId: string;
  constructor(openDispatchId: string, options?: ErrorOptions) {
    super(`dispatch ${openDispatchId} is still open; settle it before opening another`, options);
    this.name = 'DispatchOpenError';
    this.openDispatchId = openDispatchId;
  }
}

/**
 * A work item a publisher cannot read (not JSON, wrong shape, unknown version, a compressed body
 * that does not inflate or fails its checksum): it can never succeed, so it fails until SQS moves
 * it to the dead-letter queue (alarm), where `news-alerts replay --parked` takes what can be read
 * of it.
 */
export class PoisonWorkItemError extends NewsAlertsError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PoisonWorkItemError';
  }
}

/** Some messages of a work item were not published for now; SQS delivers the item again. */
export class WorkItemRetryError extends NewsAlertsError {
  readonly unpublished: number;
  constructor(unpublished: number, codes: readonly string[], options?: ErrorOptions) {
    super(
      `${unpublished} message(s) of the work item were not published (${codes.join(', ')}); SQS retries it`,
      options,
    );
    this.name = 'WorkItemRetryError';
    this.unpublished = unpublished;
  }
}

/**
 * Another delivery of the same work item holds its claim (SQS delivered it twice at once): this
 * delivery publishes nothing and comes back later, when it finds the item done or the claim
 * lapsed (DispatchStore.claimItems).
 */
export class WorkItemBusyError extends NewsAlertsError {
  constructor(options?: ErrorOptions) {
    super('another delivery of the work item is publishing it; this one comes back later', options);
    this.name = 'WorkItemBusyError';
  }
}

/** An error as one log field: its name and message (the stack and cause chain stay out). */
export const describeError = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);
