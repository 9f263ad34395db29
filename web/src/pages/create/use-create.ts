import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import type { z } from 'zod';
import { ApiError, gql, unwrap } from '../../api/client.ts';
import { parseInput } from '../../../../src/domain/validate.ts';

export interface Quote {
  credits: number;
  credits_remaining: number;
  affordable: boolean;
}

/**
 * What every create form shares: the body checked by the API's own zod schema as it is typed,
 * the price asked of the server (the quote equals the charge), and one Idempotency-Key per
 * submission, so a double click or a retry after a lost answer never charges twice.
 */
export function useCreate<S extends z.ZodType>(opts: { schema: S; body: unknown; quote: string; quoteField: string; create: string; createField: string }) {
  const { schema, body, quote, quoteField, create, createField } = opts;
  const [problem, setProblem] = useState<string | null>(null);
  const [price, setPrice] = useState<Quote | null>(null);
  const [quoteError, setQuoteError] = useState<unknown>(null);
  const [submitting, setSubmitting] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const key = useRef(crypto.randomUUID());
  const text = JSON.stringify(body);

  useEffect(() => {
    // The body as typed (the server parses it again): the check only says whether it would pass.
    const input: unknown = JSON.parse(text);
    try {
      parseInput(schema, input);
      setProblem(null);
    } catch (e) {
      setProblem(e instanceof Error ? e.message : 'invalid');
      setPrice(null);
      return;
    }
    const timer = setTimeout(() => {
      gql<Record<string, any>>(quote, { input })
        .then((d) => {
          setPrice(unwrap(d[quoteField]) as Quote);
          setQuoteError(null);
        })
        .catch((e: unknown) => {
          setPrice(null);
          setQuoteError(e);
        });
    }, 250);
    return () => clearTimeout(timer);
  }, [schema, text, quote, quoteField]);

  /** The created object (a CreatedGeneration, or a Voiceover), or null when refused (the error is shown). */
  async function submit(): Promise<Record<string, any> | null> {
    if (submitting || problem) return null;
    setSubmitting(true);
    setError(null);
    try {
      const d = await gql<Record<string, any>>(create, { input: JSON.parse(text), idempotencyKey: key.current });
      const created = unwrap(d[createField]) as Record<string, any>;
      key.current = crypto.randomUUID();
      return created;
    } catch (e) {
      // A refusal is final for this body; a new body gets a new key anyway.
      if (e instanceof ApiError && e.code !== 'error') key.current = crypto.randomUUID();
      setError(e);
      return null;
    } finally {
      setSubmitting(false);
    }
  }

  return { problem, price, quoteError, submitting, error, submit };
}

/** A form's submit handler: create, and once the create is accepted show the gallery, where the new generation appears. */
export function useSubmitToGallery(submit: () => Promise<Record<string, any> | null>) {
  const navigate = useNavigate();
  return async (e: FormEvent) => {
    e.preventDefault();
    const created = await submit();
    if (created) navigate(`/?created=${created.generation_id}`);
  };
}
