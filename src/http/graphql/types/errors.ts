import { AppError, errorStatus, type ErrorCode } from '../../../domain/errors.ts';
import { builder } from '../builder.ts';

export const ErrorCodeEnum = builder.enumType('ErrorCode', {
  description: 'The REST error codes, the same in GraphQL',
  values: Object.keys(errorStatus) as ErrorCode[],
});

/** Expected failures of mutations come back as this type in the result union. */
builder.objectType(AppError, {
  name: 'AppError',
  fields: (t) => ({
    code: t.field({ type: ErrorCodeEnum, resolve: (e) => e.code }),
    message: t.exposeString('message'),
  }),
});

export const errorTypes = { types: [AppError] };
