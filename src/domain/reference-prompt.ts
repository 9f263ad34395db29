/**
 * The spec's image rule for `brand_id` and `product_ids`: the brand's identity and the products'
 * details are woven into the prompt (the images go along as references). A provider that only
 * reads text learns what the references are and in which order they come.
 */
export interface PromptBrand {
  name: string;
  description: string;
  colorPrimary: string | null;
  colorAccent: string | null;
  /** Which images the brand contributes, in the order they are attached. */
  images: Array<'logo' | 'reference'>;
}

export interface PromptProduct {
  name: string;
  description: string;
  category: string;
}

const clip = (s: string, max: number): string => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

export function weaveImagePrompt(prompt: string, brand: PromptBrand | undefined, products: readonly PromptProduct[], otherImages: number): string {
  const lines: string[] = [prompt.trim()];
  if (brand) {
    const colours = [brand.colorPrimary, brand.colorAccent].filter((c): c is string => !!c);
    const about = brand.description.trim() ? ` (${clip(brand.description, 300)})` : '';
    lines.push(`Brand: ${clip(brand.name, 120)}${about}.${colours.length ? ` Brand colours: ${colours.join(' and ')}.` : ''}`);
  }
  products.forEach((p, i) => {
    const what = [p.category.trim() ? clip(p.category, 60) : '', p.description.trim() ? clip(p.description, 300) : ''].filter(Boolean).join(', ');
    lines.push(`Product ${products.length > 1 ? `${i + 1} ` : ''}: ${clip(p.name, 120)}${what ? ` (${what})` : ''}.`.replace(' :', ':'));
  });
  const order = [
    ...Array.from({ length: otherImages }, () => 'a reference image'),
    ...(brand?.images ?? []).map((k) => (k === 'logo' ? 'the brand logo' : 'the brand reference image')),
    ...products.map((p) => `the product image of ${clip(p.name, 60)}`),
  ];
  if (order.length > 1 && (brand || products.length)) lines.push(`Attached images, in order: ${order.join('; ')}.`);
  return lines.join('\n');
}
