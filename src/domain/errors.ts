export const errorStatus = {
  validation_error: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  internal_error: 500,
  external_service_error: 502,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/** The one error type every layer throws; transports map `code` to their own shape. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.headers = headers;
  }

  get status(): number {
    return errorStatus[this.code];
  }

  toBody(): { error: { code: ErrorCode; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
