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
  details: { __typename: string; prompt?: string | null; model?: string | null; aspect_ratio?: string | null; quantity?: number | null; all?: Record<string, unknown> };
}

export const TYPE_LABELS: Record<string, string> = {
  talking_avatar: 'Talking avatar',
  ai_video: 'AI video',
  swap_avatar: 'Avatar swap',
  localize: 'Localized video',
  edit: 'Edit',
  'text-to-image': 'Text to image',
  'product-shots': 'Product shots',
  'image-edit': 'Image edit',
};

export const describe = (g: Generation): string => {
  const d = g.details;
  const text = d.prompt ?? (d.all?.prompt as string | undefined) ?? (d.all?.script as string | undefined) ?? '';
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
};
