export interface Generation {
  id: string;
  type: string;
  status: 'processing' | 'completed' | 'failed';
  credits: number;
  error: string | null;
  created_at: string;
  completed_at: string | null;
  result_url: string | null;
  result_urls: string[];
  /** Set when the team's retention period removed the files: the generation stays, its files are gone. */
  files_expired_at?: string | null;
  /** Live progress while processing (0 to 1, null when the engine has not said) and its stage in words. */
  progress?: number | null;
  stage?: string | null;
  details: { __typename: string; prompt?: string | null; model?: string | null; aspect_ratio?: string | null; quantity?: number | null; all?: Record<string, unknown> };
}

import type { GenerationType } from '../../../src/domain/generation-types.ts';

/** Every type the API answers, in words. */
export const TYPE_LABELS: Record<GenerationType, string> = {
  'talking-avatar': 'Talking avatar',
  'ai-video': 'AI video',
  'swap-avatar': 'Avatar swap',
  localize: 'Localized video',
  edit: 'Captions',
  'text-to-image': 'Text to image',
  'product-shots': 'Product shots',
  'image-edit': 'Image edit',
};

export const describe = (g: Generation): string => {
  const d = g.details;
  const text = d.prompt ?? (d.all?.prompt as string | undefined) ?? (d.all?.script as string | undefined) ?? '';
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
};

export const typeLabel = (type: string): string => (TYPE_LABELS as Record<string, string>)[type] ?? type;
