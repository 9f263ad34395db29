import { AppError } from '../../../domain/errors.ts';

/** Another team's object reads as absent (null), the GraphQL form of REST's 404. */
export async function notFoundAsNull<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (e) {
    if (e instanceof AppError && e.code === 'not_found') return null;
    throw e;
  }
}
